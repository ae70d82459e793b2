//! CTF 2 field classes: JSON → unresolved tree ([`Fc`]) → resolved [`ir::FieldType`].
//!
//! Field locations can only be resolved once the whole scope structure (and the previous scopes)
//! are known, so conversion happens in two phases. Phase 1 ([`Builder`]) reads the JSON, expands
//! field-class aliases and checks every property; phase 2 ([`Resolver`]) turns field locations
//! into absolute [`FieldPath`]s, adjusts roles to their scope and attaches the default clock.

use std::cell::Cell;
use std::collections::HashMap;

use super::json::Json;
use crate::ir::{
    ArrayType, BitArrayKind, BitArrayType, BlobType, ByteOrder, DisplayBase, Encoding, EnumMapping,
    EnumType, Field, FieldPath, FieldType, FloatType, IntRange, IntType, Length, OptionalType,
    Role, Scope, SequenceType, SizedStringType, StringType, StructType, VarIntType, VariantOption,
    VariantType,
};

/// Maximum nesting depth of field classes (after alias expansion).
pub(crate) const MAX_FC_DEPTH: usize = 64;
/// Maximum number of field-class nodes a metadata stream may create (after alias expansion).
pub(crate) const MAX_FC_NODES: usize = 500_000;

/// A raw field location, as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawLoc {
    /// `None`: relative to the structure holding the field having the location.
    pub origin: Option<Scope>,
    /// Member names; `None` goes up one structure level (relative locations only).
    pub path: Vec<Option<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawLen {
    Static(u64),
    Dynamic(RawLoc),
}

/// An unresolved field class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fc {
    Int {
        int: IntType,
        mappings: Vec<EnumMapping>,
    },
    VarInt(VarIntType),
    Float(FloatType),
    BitArray(BitArrayType),
    Str(StringType),
    SizedStr {
        len: RawLen,
        encoding: Encoding,
    },
    Blob {
        len: RawLen,
        media_type: String,
        role: Option<Role>,
    },
    Struct {
        min_align: u32,
        members: Vec<(String, Fc)>,
    },
    Array {
        elem: Box<Fc>,
        len: u64,
        min_align: u32,
        role: Option<Role>,
    },
    DynArray {
        elem: Box<Fc>,
        loc: RawLoc,
        min_align: u32,
    },
    Optional {
        elem: Box<Fc>,
        loc: RawLoc,
        ranges: Vec<IntRange>,
    },
    Variant {
        loc: RawLoc,
        options: Vec<(String, Fc, Vec<IntRange>)>,
    },
}

impl Fc {
    /// Number of nodes and height of the tree.
    fn size(&self) -> (usize, usize) {
        let children: Vec<&Fc> = match self {
            Fc::Struct { members, .. } => members.iter().map(|(_, f)| f).collect(),
            Fc::Array { elem, .. } | Fc::DynArray { elem, .. } | Fc::Optional { elem, .. } => {
                vec![elem]
            }
            Fc::Variant { options, .. } => options.iter().map(|(_, f, _)| f).collect(),
            _ => Vec::new(),
        };
        let (mut nodes, mut height) = (1usize, 0usize);
        for c in children {
            let (n, h) = c.size();
            nodes = nodes.saturating_add(n);
            height = height.max(h);
        }
        (nodes, height + 1)
    }
}

/// A named field class defined by a `field-class-alias` fragment.
#[derive(Debug, Clone)]
pub(crate) struct Alias {
    fc: Fc,
    nodes: usize,
    height: usize,
}

/// Phase 1: JSON field classes to [`Fc`] trees.
pub(crate) struct Builder<'a> {
    pub aliases: &'a HashMap<String, Alias>,
    /// Nodes still allowed.
    pub budget: &'a mut usize,
}

type R<T> = Result<T, String>;

fn obj_prop<'a>(j: &'a Json, key: &str) -> R<&'a Json> {
    j.get(key)
        .ok_or_else(|| format!("missing required property `{key}`"))
}

pub(crate) fn to_u64(v: &Json, what: &str) -> R<u64> {
    v.as_int()
        .and_then(|i| u64::try_from(i).ok())
        .ok_or_else(|| {
            format!(
                "`{what}` must be an unsigned 64-bit integer, found {}",
                v.kind()
            )
        })
}

fn u64_prop(j: &Json, key: &str) -> R<u64> {
    to_u64(obj_prop(j, key)?, key)
}

fn align_prop(j: &Json, key: &str) -> R<u32> {
    match j.get(key) {
        None => Ok(1),
        Some(v) => {
            let a = to_u64(v, key)?;
            if a == 0 || !a.is_power_of_two() || a > 1 << 31 {
                Err(format!("`{key}` must be a power of two, found {a}"))
            } else {
                Ok(a as u32)
            }
        }
    }
}

fn byte_order(j: &Json) -> R<ByteOrder> {
    match j.get("byte-order") {
        // CTF2-SPEC-2.0 requires it; the trace class has no default byte order any more, so be
        // lenient with producers that omit it and use little-endian.
        None => Ok(ByteOrder::Little),
        Some(v) => match v.as_str() {
            Some("little-endian" | "le" | "little") => Ok(ByteOrder::Little),
            Some("big-endian" | "be" | "big" | "network") => Ok(ByteOrder::Big),
            _ => Err(format!("invalid `byte-order` {}", show(v))),
        },
    }
}

fn check_bit_order(j: &Json, bo: ByteOrder) -> R<()> {
    let Some(v) = j.get("bit-order") else {
        return Ok(());
    };
    let natural = match bo {
        ByteOrder::Little => "first-to-last",
        ByteOrder::Big => "last-to-first",
    };
    match v.as_str() {
        Some(s) if s == natural => Ok(()),
        Some(s @ ("first-to-last" | "last-to-first")) => Err(format!(
            "`bit-order` `{s}` with byte order {bo:?} is not supported (only `{natural}`)"
        )),
        _ => Err(format!("invalid `bit-order` {}", show(v))),
    }
}

fn display_base(j: &Json) -> R<DisplayBase> {
    match j.get("preferred-display-base") {
        None => Ok(DisplayBase::Decimal),
        Some(v) => match v.as_int() {
            Some(2) => Ok(DisplayBase::Binary),
            Some(8) => Ok(DisplayBase::Octal),
            Some(10) => Ok(DisplayBase::Decimal),
            Some(16) => Ok(DisplayBase::Hexadecimal),
            _ => Err(format!("invalid `preferred-display-base` {}", show(v))),
        },
    }
}

/// A short rendering of a JSON value for messages.
pub(crate) fn show(v: &Json) -> String {
    match v {
        Json::Str(s) => format!("`{}`", truncate(s)),
        Json::Int(i) => i.to_string(),
        other => other.kind().to_string(),
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 60 {
        let t: String = s.chars().take(60).collect();
        format!("{t}…")
    } else {
        s.to_string()
    }
}

/// An integer range set: `[[lower, upper], …]` (a bare integer `n` is accepted as `[n, n]`).
pub(crate) fn range_set(v: &Json, what: &str) -> R<Vec<IntRange>> {
    let items = v
        .as_arr()
        .ok_or_else(|| format!("`{what}` must be an array of ranges, found {}", v.kind()))?;
    let bound = |b: &Json| -> R<i128> {
        b.as_int()
            .filter(|i| (i64::MIN as i128..=u64::MAX as i128).contains(i))
            .ok_or_else(|| {
                format!(
                    "`{what}`: range bound must be a 64-bit integer, found {}",
                    show(b)
                )
            })
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let (lower, upper) = match it {
            Json::Arr(pair) if pair.len() == 2 => (bound(&pair[0])?, bound(&pair[1])?),
            Json::Int(_) => {
                let b = bound(it)?;
                (b, b)
            }
            _ => {
                return Err(format!(
                    "`{what}`: each range must be a `[lower, upper]` array"
                ))
            }
        };
        if lower > upper {
            return Err(format!(
                "`{what}`: range [{lower}, {upper}] has lower > upper"
            ));
        }
        out.push(IntRange { lower, upper });
    }
    Ok(out)
}

fn mappings(j: &Json, key: &str) -> R<Vec<EnumMapping>> {
    let Some(v) = j.get(key) else {
        return Ok(Vec::new());
    };
    let o = v
        .as_obj()
        .ok_or_else(|| format!("`{key}` must be an object, found {}", v.kind()))?;
    o.iter()
        .map(|(label, r)| {
            Ok(EnumMapping {
                label: label.clone(),
                ranges: range_set(r, &format!("{key}.{}", truncate(label)))?,
            })
        })
        .collect()
}

/// First recognized role of the `roles` array (unknown roles are ignored).
fn role(j: &Json) -> R<Option<Role>> {
    let Some(v) = j.get("roles") else {
        return Ok(None);
    };
    let a = v
        .as_arr()
        .ok_or_else(|| format!("`roles` must be an array, found {}", v.kind()))?;
    for r in a {
        let s = r
            .as_str()
            .ok_or_else(|| format!("`roles` items must be strings, found {}", r.kind()))?;
        let role = match s {
            "packet-magic-number" => Role::PacketMagicNumber,
            "metadata-stream-uuid" => Role::MetadataStreamUuid,
            "data-stream-class-id" => Role::DataStreamClassId,
            "data-stream-id" => Role::DataStreamId,
            "packet-total-length" => Role::PacketTotalLength,
            "packet-content-length" => Role::PacketContentLength,
            "default-clock-timestamp" => Role::DefaultClockTimestamp,
            "packet-beginning-default-clock-timestamp" => {
                Role::PacketBeginningDefaultClockTimestamp
            }
            "packet-end-default-clock-timestamp" => Role::PacketEndDefaultClockTimestamp,
            "discarded-event-record-counter-snapshot" => Role::DiscardedEventRecordCounterSnapshot,
            "packet-sequence-number" => Role::PacketSequenceNumber,
            "event-record-class-id" => Role::EventRecordClassId,
            _ => continue,
        };
        return Ok(Some(role));
    }
    Ok(None)
}

fn scope_of(s: &str) -> Option<Scope> {
    Some(match s {
        "packet-header" => Scope::PacketHeader,
        "packet-context" => Scope::PacketContext,
        "event-record-header" => Scope::EventHeader,
        "event-record-common-context" => Scope::EventCommonContext,
        "event-record-specific-context" => Scope::EventSpecificContext,
        "event-record-payload" => Scope::EventPayload,
        _ => return None,
    })
}

/// A field location: `{"origin": …, "path": […]}` (final spec) or `[origin, name, …]` (draft).
fn location(j: &Json, key: &str) -> R<RawLoc> {
    let v = obj_prop(j, key)?;
    let (origin, items): (Option<Scope>, &[Json]) = match v {
        Json::Obj(_) => {
            let origin = match v.get("origin") {
                None | Some(Json::Null) => None,
                Some(o) => Some(
                    o.as_str()
                        .and_then(scope_of)
                        .ok_or_else(|| format!("`{key}`: invalid `origin` {}", show(o)))?,
                ),
            };
            let p = obj_prop(v, "path").map_err(|e| format!("`{key}`: {e}"))?;
            let items = p
                .as_arr()
                .ok_or_else(|| format!("`{key}.path` must be an array, found {}", p.kind()))?;
            (origin, items)
        }
        Json::Arr(a) => match a.first().and_then(Json::as_str).and_then(scope_of) {
            Some(s) => (Some(s), &a[1..]),
            None => (None, &a[..]),
        },
        _ => return Err(format!("`{key}` must be an object, found {}", v.kind())),
    };
    let mut path = Vec::with_capacity(items.len());
    for it in items {
        match it {
            Json::Str(s) => path.push(Some(s.clone())),
            Json::Null if origin.is_none() => path.push(None),
            _ => return Err(format!("`{key}`: invalid path element {}", show(it))),
        }
    }
    if path.iter().all(Option::is_none) {
        return Err(format!("`{key}`: the path names no member"));
    }
    Ok(RawLoc { origin, path })
}

fn encoding(j: &Json) -> R<Encoding> {
    match j.get("encoding") {
        None => Ok(Encoding::Utf8),
        Some(v) => match v.as_str() {
            Some("utf-8" | "UTF-8" | "utf8") => Ok(Encoding::Utf8),
            Some(s @ ("utf-16be" | "utf-16le" | "utf-32be" | "utf-32le")) => Err(format!(
                "string `encoding` `{s}` is not supported (only utf-8)"
            )),
            _ => Err(format!("invalid `encoding` {}", show(v))),
        },
    }
}

impl Builder<'_> {
    fn take(&mut self, n: usize) -> R<()> {
        if *self.budget < n {
            return Err(format!(
                "too many field classes (more than {MAX_FC_NODES} after alias expansion)"
            ));
        }
        *self.budget -= n;
        Ok(())
    }

    /// Builds a field class at nesting depth `depth` (0 for a scope root).
    pub(crate) fn build(&mut self, j: &Json, depth: usize) -> R<Fc> {
        if depth >= MAX_FC_DEPTH {
            return Err(format!(
                "field classes nested deeper than {MAX_FC_DEPTH} levels"
            ));
        }
        if let Json::Str(name) = j {
            let a = self
                .aliases
                .get(name)
                .ok_or_else(|| format!("unknown field-class alias `{}`", truncate(name)))?;
            if depth + a.height > MAX_FC_DEPTH {
                return Err(format!(
                    "alias `{}` nests field classes deeper than {MAX_FC_DEPTH} levels",
                    truncate(name)
                ));
            }
            self.take(a.nodes)?;
            return Ok(a.fc.clone());
        }
        if !matches!(j, Json::Obj(_)) {
            return Err(format!(
                "a field class must be an object or an alias name, found {}",
                j.kind()
            ));
        }
        self.take(1)?;
        let ty_v = obj_prop(j, "type")?;
        let ty = ty_v
            .as_str()
            .ok_or_else(|| format!("`type` must be a string, found {}", ty_v.kind()))?;
        let fc = match ty {
            "fixed-length-unsigned-integer"
            | "fixed-length-signed-integer"
            | "fixed-length-unsigned-enumeration"
            | "fixed-length-signed-enumeration" => {
                let signed = ty.starts_with("fixed-length-signed");
                let mut int = self.fixed(j, 64)?;
                int.signed = signed;
                int.base = display_base(j)?;
                int.role = role(j)?;
                Fc::Int {
                    int,
                    mappings: mappings(j, "mappings")?,
                }
            }
            "fixed-length-bit-array" | "fixed-length-bit-map" | "fixed-length-boolean" => {
                let mut int = self.fixed(j, 64)?;
                let kind = match ty {
                    "fixed-length-bit-array" => BitArrayKind::BitArray,
                    "fixed-length-bit-map" => BitArrayKind::BitMap,
                    _ => BitArrayKind::Boolean,
                };
                if kind != BitArrayKind::Boolean {
                    int.base = DisplayBase::Hexadecimal;
                }
                let flags = if kind == BitArrayKind::BitMap {
                    mappings(j, "flags")?
                } else {
                    Vec::new()
                };
                if let Some(f) = flags
                    .iter()
                    .flat_map(|m| &m.ranges)
                    .find(|r| r.lower < 0 || r.upper >= int.size as i128)
                {
                    return Err(format!(
                        "`flags`: bit range [{}, {}] is outside the {}-bit map",
                        f.lower, f.upper, int.size
                    ));
                }
                Fc::BitArray(BitArrayType { int, kind, flags })
            }
            "fixed-length-floating-point-number" | "fixed-length-floating-point" => {
                let int = self.fixed(j, 128)?;
                let (exp_dig, mant_dig) = match int.size {
                    16 => (5, 11),
                    32 => (8, 24),
                    64 => (11, 53),
                    128 => (15, 113),
                    n => {
                        return Err(format!(
                            "floating-point `length` must be 16, 32, 64 or 128, found {n}"
                        ))
                    }
                };
                Fc::Float(FloatType {
                    exp_dig,
                    mant_dig,
                    byte_order: int.byte_order,
                    align: int.align,
                })
            }
            "variable-length-unsigned-integer"
            | "variable-length-signed-integer"
            | "variable-length-unsigned-enumeration"
            | "variable-length-signed-enumeration" => Fc::VarInt(VarIntType {
                signed: ty.starts_with("variable-length-signed"),
                base: display_base(j)?,
                role: role(j)?,
                mappings: mappings(j, "mappings")?,
            }),
            "null-terminated-string" | "string" => Fc::Str(StringType {
                encoding: encoding(j)?,
            }),
            "static-length-string" => Fc::SizedStr {
                len: RawLen::Static(u64_prop(j, "length")?),
                encoding: encoding(j)?,
            },
            "dynamic-length-string" => Fc::SizedStr {
                len: RawLen::Dynamic(location(j, "length-field-location")?),
                encoding: encoding(j)?,
            },
            "static-length-blob" | "dynamic-length-blob" => {
                let len = if ty == "static-length-blob" {
                    RawLen::Static(u64_prop(j, "length")?)
                } else {
                    RawLen::Dynamic(location(j, "length-field-location")?)
                };
                let media_type = match j.get("media-type") {
                    None => "application/octet-stream".to_string(),
                    Some(Json::Str(s)) => s.clone(),
                    Some(v) => {
                        return Err(format!("`media-type` must be a string, found {}", v.kind()))
                    }
                };
                Fc::Blob {
                    len,
                    media_type,
                    role: role(j)?,
                }
            }
            "structure" | "struct" => {
                let min_align = align_prop(j, "minimum-alignment")?;
                let mut members: Vec<(String, Fc)> = Vec::new();
                if let Some((key, v)) = j.get_any(&["member-classes", "members"]) {
                    let a = v
                        .as_arr()
                        .ok_or_else(|| format!("`{key}` must be an array, found {}", v.kind()))?;
                    for (i, m) in a.iter().enumerate() {
                        let name = match m.get("name") {
                            Some(Json::Str(s)) => s.clone(),
                            Some(v) => {
                                return Err(format!(
                                    "member #{i}: `name` must be a string, found {}",
                                    v.kind()
                                ))
                            }
                            None => {
                                return Err(format!(
                                    "member #{i}: missing required property `name`"
                                ))
                            }
                        };
                        if members.iter().any(|(n, _)| *n == name) {
                            return Err(format!("duplicate member name `{}`", truncate(&name)));
                        }
                        let fcj = obj_prop(m, "field-class")
                            .map_err(|e| format!("member `{}`: {e}", truncate(&name)))?;
                        let fc = self
                            .build(fcj, depth + 1)
                            .map_err(|e| format!("member `{}`: {e}", truncate(&name)))?;
                        members.push((name, fc));
                    }
                }
                Fc::Struct { min_align, members }
            }
            "static-length-array" | "dynamic-length-array" => {
                let min_align = align_prop(j, "minimum-alignment")?;
                let ej = obj_prop(j, "element-field-class")?;
                let elem = Box::new(
                    self.build(ej, depth + 1)
                        .map_err(|e| format!("element-field-class: {e}"))?,
                );
                if ty == "static-length-array" {
                    Fc::Array {
                        elem,
                        len: u64_prop(j, "length")?,
                        min_align,
                        role: role(j)?,
                    }
                } else {
                    Fc::DynArray {
                        elem,
                        loc: location(j, "length-field-location")?,
                        min_align,
                    }
                }
            }
            "optional" => {
                let ej = obj_prop(j, "field-class")?;
                let elem = Box::new(
                    self.build(ej, depth + 1)
                        .map_err(|e| format!("field-class: {e}"))?,
                );
                let ranges = match j.get("selector-field-ranges") {
                    None => Vec::new(),
                    Some(v) => range_set(v, "selector-field-ranges")?,
                };
                Fc::Optional {
                    elem,
                    loc: location(j, "selector-field-location")?,
                    ranges,
                }
            }
            "variant" => {
                let loc = location(j, "selector-field-location")?;
                let ov = obj_prop(j, "options")?;
                let a = ov
                    .as_arr()
                    .ok_or_else(|| format!("`options` must be an array, found {}", ov.kind()))?;
                if a.is_empty() {
                    return Err("`options` must not be empty".to_string());
                }
                let mut options = Vec::with_capacity(a.len());
                for (i, o) in a.iter().enumerate() {
                    let name = match o.get("name") {
                        Some(Json::Str(s)) => s.clone(),
                        None | Some(Json::Null) => String::new(),
                        Some(v) => {
                            return Err(format!(
                                "option #{i}: `name` must be a string, found {}",
                                v.kind()
                            ))
                        }
                    };
                    let ctx = |e: String| format!("option #{i} `{}`: {e}", truncate(&name));
                    let fcj = obj_prop(o, "field-class").map_err(ctx)?;
                    let fc = self.build(fcj, depth + 1).map_err(ctx)?;
                    let rv = obj_prop(o, "selector-field-ranges").map_err(ctx)?;
                    let ranges = range_set(rv, "selector-field-ranges").map_err(ctx)?;
                    options.push((name, fc, ranges));
                }
                Fc::Variant { loc, options }
            }
            other => return Err(format!("unknown field class type `{}`", truncate(other))),
        };
        Ok(fc)
    }

    /// Common properties of fixed-length bit arrays (`length` limited to `max_len`).
    fn fixed(&self, j: &Json, max_len: u64) -> R<IntType> {
        let len = u64_prop(j, "length")?;
        if len == 0 || len > max_len {
            return Err(format!("`length` must be in 1..={max_len}, found {len}"));
        }
        let bo = byte_order(j)?;
        check_bit_order(j, bo)?;
        let mut int = IntType::unsigned(len as u32, bo);
        int.align = align_prop(j, "alignment")?;
        Ok(int)
    }

    /// Builds the field class of an alias definition.
    pub(crate) fn alias(&mut self, j: &Json) -> R<Alias> {
        let fc = self.build(j, 0)?;
        let (nodes, height) = fc.size();
        Ok(Alias { fc, nodes, height })
    }
}

/// What a field location must designate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// An unsigned integer (length of a dynamic-length array/string/BLOB).
    Length,
    /// An integer (variant selector).
    IntSelector,
    /// A boolean or an integer (optional selector).
    OptSelector,
}

/// Phase 2: resolves [`Fc`] trees of the scopes of one data stream / event record class.
pub(crate) struct Resolver<'a> {
    /// Unresolved roots of the scopes available so far, indexed by [`scope_index`].
    pub roots: [Option<&'a Fc>; 6],
    /// Name of the data stream class's default clock class.
    pub clock: Option<&'a str>,
    /// Remaining node visits for field-location resolution (shared by the whole stream).
    pub steps: &'a Cell<usize>,
}

fn scope_index(s: Scope) -> usize {
    match s {
        Scope::PacketHeader => 0,
        Scope::PacketContext => 1,
        Scope::EventHeader => 2,
        Scope::EventCommonContext => 3,
        Scope::EventSpecificContext => 4,
        Scope::EventPayload => 5,
    }
}

pub(crate) fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::PacketHeader => "packet-header",
        Scope::PacketContext => "packet-context",
        Scope::EventHeader => "event-record-header",
        Scope::EventCommonContext => "event-record-common-context",
        Scope::EventSpecificContext => "event-record-specific-context",
        Scope::EventPayload => "event-record-payload",
    }
}

/// The node at `indices` from `root`, traversing arrays and optionals transparently.
fn node_at<'f>(root: &'f Fc, indices: &[usize]) -> Option<&'f Fc> {
    let mut node = root;
    for &i in indices {
        loop {
            match node {
                Fc::Array { elem, .. } | Fc::DynArray { elem, .. } | Fc::Optional { elem, .. } => {
                    node = elem
                }
                Fc::Struct { members, .. } => {
                    node = &members.get(i)?.1;
                    break;
                }
                Fc::Variant { options, .. } => {
                    node = &options.get(i)?.1;
                    break;
                }
                _ => return None,
            }
        }
    }
    Some(node)
}

/// Maximum number of field-class nodes visited, over a whole metadata stream, while resolving
/// field locations (bounds the work of paths through nested variants).
pub(crate) const MAX_WALK_STEPS: usize = 10_000_000;

/// Finds member `name` below `node` (through arrays, optionals and variant options), visiting
/// at most `steps` nodes.
fn walk<'f>(node: &'f Fc, name: &str, out: &mut Vec<usize>, steps: &mut usize) -> Option<&'f Fc> {
    *steps = steps.checked_sub(1)?;
    match node {
        Fc::Array { elem, .. } | Fc::DynArray { elem, .. } | Fc::Optional { elem, .. } => {
            walk(elem, name, out, steps)
        }
        Fc::Struct { members, .. } => {
            let i = members.iter().position(|(n, _)| n == name)?;
            out.push(i);
            Some(&members[i].1)
        }
        Fc::Variant { options, .. } => options.iter().enumerate().find_map(|(i, (_, fc, _))| {
            let mark = out.len();
            out.push(i);
            let r = walk(fc, name, out, steps);
            if r.is_none() {
                out.truncate(mark);
            }
            r
        }),
        _ => None,
    }
}

fn describe(loc: &RawLoc) -> String {
    let p: Vec<String> = loc
        .path
        .iter()
        .map(|e| match e {
            Some(s) => truncate(s),
            None => "..".to_string(),
        })
        .collect();
    match loc.origin {
        Some(o) => format!("{}:/{}", scope_name(o), p.join("/")),
        None => format!("(relative) {}", p.join("/")),
    }
}

impl Resolver<'_> {
    /// Resolves a whole scope (its root must be a structure).
    pub(crate) fn scope(&self, fc: &Fc, scope: Scope) -> R<StructType> {
        if !matches!(fc, Fc::Struct { .. }) {
            return Err("a scope field class must be a structure".to_string());
        }
        let mut path = Vec::new();
        let mut structs = Vec::new();
        match self.conv(fc, scope, &mut path, &mut structs)? {
            FieldType::Struct(s) => Ok(s),
            _ => Err("a scope field class must be a structure".to_string()),
        }
    }

    fn locate(
        &self,
        loc: &RawLoc,
        scope: Scope,
        path: &[usize],
        structs: &[usize],
        want: Want,
    ) -> R<FieldPath> {
        let ctx = |m: String| format!("field location {}: {m}", describe(loc));
        let (tscope, mut indices, mut node, names): (Scope, Vec<usize>, &Fc, &[Option<String>]) =
            match loc.origin {
                Some(o) => {
                    if o > scope {
                        return Err(ctx(format!(
                            "origin `{}` is decoded after the current scope `{}`",
                            scope_name(o),
                            scope_name(scope)
                        )));
                    }
                    let root = self.roots[scope_index(o)].ok_or_else(|| {
                        ctx(format!("scope `{}` has no field class", scope_name(o)))
                    })?;
                    (o, Vec::new(), root, &loc.path[..])
                }
                None => {
                    let mut level = structs.len();
                    let mut names = &loc.path[..];
                    while let Some(None) = names.first() {
                        if level <= 1 {
                            return Err(ctx("goes above the scope's root structure".to_string()));
                        }
                        level -= 1;
                        names = &names[1..];
                    }
                    let prefix_len = *structs
                        .get(level.wrapping_sub(1))
                        .ok_or_else(|| ctx("no enclosing structure".to_string()))?;
                    let prefix = path.get(..prefix_len).unwrap_or(path);
                    let root = self.roots[scope_index(scope)]
                        .ok_or_else(|| ctx("no current scope".to_string()))?;
                    let node = node_at(root, prefix)
                        .ok_or_else(|| ctx("enclosing structure not found".to_string()))?;
                    (scope, prefix.to_vec(), node, names)
                }
            };
        for name in names {
            let Some(name) = name else {
                return Err(ctx(
                    "`null` (parent) is only allowed at the start of the path".to_string(),
                ));
            };
            let mut steps = self.steps.get();
            let found = walk(node, name, &mut indices, &mut steps);
            if steps == 0 {
                return Err(ctx(format!(
                    "field location resolution exceeded {MAX_WALK_STEPS} steps"
                )));
            }
            self.steps.set(steps);
            node = found.ok_or_else(|| ctx(format!("no member named `{}`", truncate(name))))?;
        }
        let ok = match (want, node) {
            (Want::Length, Fc::Int { int, .. }) => !int.signed,
            (Want::Length, Fc::VarInt(v)) => !v.signed,
            (Want::IntSelector | Want::OptSelector, Fc::Int { .. } | Fc::VarInt(_)) => true,
            (Want::OptSelector, Fc::BitArray(b)) => b.kind == BitArrayKind::Boolean,
            _ => false,
        };
        if !ok {
            let what = match want {
                Want::Length => "an unsigned integer",
                Want::IntSelector => "an integer",
                Want::OptSelector => "a boolean or an integer",
            };
            return Err(ctx(format!("the designated field is not {what}")));
        }
        if tscope == scope && indices.as_slice() >= path {
            return Err(ctx(
                "the designated field does not precede the field using it".to_string(),
            ));
        }
        Ok(FieldPath {
            scope: tscope,
            indices,
        })
    }

    fn length(&self, len: &RawLen, scope: Scope, path: &[usize], structs: &[usize]) -> R<Length> {
        Ok(match len {
            RawLen::Static(n) => Length::Static(*n),
            RawLen::Dynamic(loc) => {
                Length::Dynamic(self.locate(loc, scope, path, structs, Want::Length)?)
            }
        })
    }

    fn role(&self, role: Option<Role>, scope: Scope) -> R<(Option<Role>, Option<String>)> {
        let role = match role {
            // In a packet context, `default-clock-timestamp` is the packet's beginning time.
            Some(Role::DefaultClockTimestamp) if scope == Scope::PacketContext => {
                Some(Role::PacketBeginningDefaultClockTimestamp)
            }
            r => r,
        };
        let clock = match role {
            Some(
                r @ (Role::DefaultClockTimestamp
                | Role::PacketBeginningDefaultClockTimestamp
                | Role::PacketEndDefaultClockTimestamp),
            ) => Some(
                self.clock
                    .ok_or_else(|| {
                        format!("role {r:?} needs a default clock class (data stream class `default-clock-class-id`)")
                    })?
                    .to_string(),
            ),
            _ => None,
        };
        Ok((role, clock))
    }

    fn conv(
        &self,
        fc: &Fc,
        scope: Scope,
        path: &mut Vec<usize>,
        structs: &mut Vec<usize>,
    ) -> R<FieldType> {
        Ok(match fc {
            Fc::Int { int, mappings } => {
                let mut int = int.clone();
                let (role, clock) = self.role(int.role, scope)?;
                int.role = role;
                int.mapped_clock = clock;
                if mappings.is_empty() {
                    FieldType::Int(int)
                } else {
                    FieldType::Enum(EnumType {
                        int,
                        mappings: mappings.clone(),
                    })
                }
            }
            Fc::VarInt(v) => {
                let mut v = v.clone();
                v.role = self.role(v.role, scope)?.0;
                FieldType::VarInt(v)
            }
            Fc::Float(f) => FieldType::Float(f.clone()),
            Fc::BitArray(b) => FieldType::BitArray(b.clone()),
            Fc::Str(s) => FieldType::String(s.clone()),
            Fc::SizedStr { len, encoding } => FieldType::SizedString(SizedStringType {
                length: self.length(len, scope, path, structs)?,
                encoding: *encoding,
            }),
            Fc::Blob {
                len,
                media_type,
                role,
            } => FieldType::Blob(BlobType {
                length: self.length(len, scope, path, structs)?,
                media_type: media_type.clone(),
                role: *role,
            }),
            Fc::Struct { min_align, members } => {
                structs.push(path.len());
                let mut fields = Vec::with_capacity(members.len());
                for (i, (name, m)) in members.iter().enumerate() {
                    path.push(i);
                    let r = self.conv(m, scope, path, structs);
                    path.pop();
                    let ty = r.map_err(|e| format!("member `{}`: {e}", truncate(name)))?;
                    fields.push(Field {
                        name: name.as_str().into(),
                        ty,
                    });
                }
                structs.pop();
                FieldType::Struct(StructType {
                    min_align: *min_align,
                    fields,
                })
            }
            Fc::Array {
                elem,
                len,
                min_align,
                role,
            } => FieldType::Array(ArrayType {
                elem: Box::new(self.conv(elem, scope, path, structs)?),
                len: *len,
                min_align: *min_align,
                role: *role,
            }),
            Fc::DynArray {
                elem,
                loc,
                min_align,
            } => {
                let length = self.locate(loc, scope, path, structs, Want::Length)?;
                FieldType::Sequence(SequenceType {
                    elem: Box::new(self.conv(elem, scope, path, structs)?),
                    length,
                    min_align: *min_align,
                })
            }
            Fc::Optional { elem, loc, ranges } => {
                let selector = self.locate(loc, scope, path, structs, Want::OptSelector)?;
                let int_sel = matches!(
                    self.roots[scope_index(selector.scope)]
                        .and_then(|r| node_at(r, &selector.indices)),
                    Some(Fc::Int { .. } | Fc::VarInt(_))
                );
                if int_sel && ranges.is_empty() {
                    return Err(
                        "optional with an integer selector needs `selector-field-ranges`"
                            .to_string(),
                    );
                }
                FieldType::Optional(OptionalType {
                    selector,
                    ranges: if int_sel { ranges.clone() } else { Vec::new() },
                    ty: Box::new(self.conv(elem, scope, path, structs)?),
                })
            }
            Fc::Variant { loc, options } => {
                let tag = self.locate(loc, scope, path, structs, Want::IntSelector)?;
                let mut out = Vec::with_capacity(options.len());
                for (i, (name, o, ranges)) in options.iter().enumerate() {
                    path.push(i);
                    let r = self.conv(o, scope, path, structs);
                    path.pop();
                    let ty = r.map_err(|e| format!("option `{}`: {e}", truncate(name)))?;
                    out.push(VariantOption {
                        name: name.clone(),
                        ty,
                        ranges: ranges.clone(),
                    });
                }
                FieldType::Variant(VariantType { tag, options: out })
            }
        })
    }
}
