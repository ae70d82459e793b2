//! Semantic pass: top-level blocks to the resolved [`TraceClass`].

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};

use rustc_hash::FxBuildHasher;

use super::parser::{bool_val, byte_order, uint_val, Block, Entry, StructT, Val, T};
use crate::error::MetadataError;
use crate::ir::*;

type R<X> = Result<X, MetadataError>;

fn err(line: usize, msg: impl Into<String>) -> MetadataError {
    MetadataError::new(Some(line), msg)
}

/// The display name of a TSDL member: one leading underscore removed.
pub(crate) fn display_name(s: &str) -> &str {
    s.strip_prefix('_').unwrap_or(s)
}

/// Index of the member called `name`: exact match first, then allowing one leading
/// underscore on either side.
fn find_member(fields: &[(&str, T<'_>)], name: &str) -> Option<usize> {
    fields.iter().position(|(n, _)| *n == name).or_else(|| {
        let dn = display_name(name);
        fields
            .iter()
            .position(|(n, _)| display_name(n) == name || *n == dn || display_name(n) == dn)
    })
}

const SCOPES: [Scope; 6] = [
    Scope::PacketHeader,
    Scope::PacketContext,
    Scope::EventHeader,
    Scope::EventCommonContext,
    Scope::EventSpecificContext,
    Scope::EventPayload,
];

fn scope_index(s: Scope) -> usize {
    SCOPES.iter().position(|x| *x == s).unwrap_or(0)
}

struct StreamDecl<'a> {
    id: Option<u64>,
    line: usize,
    packet_context: Option<(StructT<'a>, usize)>,
    event_header: Option<(StructT<'a>, usize)>,
    event_context: Option<(StructT<'a>, usize)>,
}

struct EventDecl<'a> {
    id: Option<u64>,
    name: Cow<'a, str>,
    stream_id: Option<u64>,
    loglevel: Option<i64>,
    emf: Option<String>,
    context: Option<(StructT<'a>, usize)>,
    fields: Option<(StructT<'a>, usize)>,
    line: usize,
}

fn as_struct<'a>(t: T<'a>, what: &str, line: usize) -> R<(StructT<'a>, usize)> {
    match t {
        T::Struct(s) => Ok((s, line)),
        _ => Err(err(line, format!("`{what}` must be a structure"))),
    }
}

fn text_val(v: &Val<'_>) -> String {
    text_cow(v).into_owned()
}

/// A value as text, borrowing the metadata when it can.
fn text_cow<'t>(v: &Val<'t>) -> Cow<'t, str> {
    match v {
        Val::Int(i) => Cow::Owned(i.to_string()),
        Val::Str(s) | Val::Path(s) => s.clone(),
    }
}

fn int_i64(v: &Val<'_>, line: usize, what: &str) -> R<i64> {
    match v {
        Val::Int(i) => i64::try_from(*i).map_err(|_| err(line, format!("`{what}` out of range"))),
        _ => Err(err(
            line,
            format!("invalid value `{}` for `{what}`", v.describe()),
        )),
    }
}

fn parse_uuid(v: &Val<'_>, line: usize) -> R<[u8; 16]> {
    let s = match v {
        Val::Str(s) => s,
        _ => return Err(err(line, "UUID must be a string")),
    };
    let hex: Vec<u32> = s
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()
        .ok_or_else(|| err(line, format!("invalid UUID \"{}\"", s.escape_default())))?;
    if hex.len() != 32 {
        return Err(err(
            line,
            format!("invalid UUID \"{}\"", s.escape_default()),
        ));
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = (hex[2 * i] * 16 + hex[2 * i + 1]) as u8;
    }
    Ok(out)
}

/// Context of the conversion of one scope.
struct Conv<'a, 't> {
    bo: ByteOrder,
    clocks: &'a [ClockClass],
    roots: [Option<&'a StructT<'t>>; 6],
    current: Scope,
    /// The path and enclosing-structure buffers, kept from one root to the next (a large
    /// metadata has thousands of roots).
    bufs: Cell<(Vec<usize>, Stack<'a, 't>)>,
}

type Stack<'a, 't> = Vec<(&'a StructT<'t>, usize)>;

impl<'a, 't> Conv<'a, 't> {
    fn root(&self, scope: Scope) -> Option<&'a StructT<'t>> {
        self.roots[scope_index(scope)]
    }

    fn convert_root(&self, s: &'a StructT<'t>) -> R<StructType> {
        let (mut path, mut stack) = self.bufs.take();
        let r = self.conv_struct(s, &mut path, &mut stack);
        path.clear();
        stack.clear();
        self.bufs.set((path, stack));
        r
    }

    fn conv_struct(
        &self,
        s: &'a StructT<'t>,
        path: &mut Vec<usize>,
        stack: &mut Stack<'a, 't>,
    ) -> R<StructType> {
        stack.push((s, path.len()));
        let mut fields = Vec::with_capacity(s.fields.len());
        for (i, (name, t)) in s.fields.iter().enumerate() {
            path.push(i);
            let ty = self.conv(t, path, stack);
            path.pop();
            fields.push(Field {
                name: display_name(name).into(),
                ty: ty?,
            });
        }
        stack.pop();
        Ok(StructType {
            min_align: s.min_align,
            fields,
        })
    }

    fn conv_int(&self, i: &super::parser::IntT) -> R<IntType> {
        if let Some((clock, line)) = &i.map {
            if !self.clocks.iter().any(|c| &c.name == clock) {
                return Err(err(
                    *line,
                    format!("integer mapped to unknown clock `{clock}`"),
                ));
            }
        }
        Ok(IntType {
            size: i.size,
            align: i.align,
            signed: i.signed,
            byte_order: i.byte_order.unwrap_or(self.bo),
            base: i.base,
            encoding: i.encoding,
            mapped_clock: i.map.as_ref().map(|m| m.0.clone()),
            role: None,
        })
    }

    fn conv(&self, t: &'a T<'t>, path: &mut Vec<usize>, stack: &mut Stack<'a, 't>) -> R<FieldType> {
        Ok(match t {
            T::Int(i) => FieldType::Int(self.conv_int(i)?),
            T::Float {
                exp_dig,
                mant_dig,
                byte_order,
                align,
            } => FieldType::Float(FloatType {
                exp_dig: *exp_dig,
                mant_dig: *mant_dig,
                byte_order: byte_order.unwrap_or(self.bo),
                align: *align,
            }),
            T::Enum(i, m) => FieldType::Enum(EnumType {
                int: self.conv_int(i)?,
                mappings: m.clone(),
            }),
            T::String(e) => FieldType::String(StringType { encoding: *e }),
            T::Struct(s) => FieldType::Struct(self.conv_struct(s, path, stack)?),
            T::Array(e, n) => FieldType::Array(ArrayType {
                elem: Box::new(self.conv(e, path, stack)?),
                len: *n,
                min_align: 1,
                role: None,
            }),
            T::Sequence(e, len, line) => {
                let (fp, target) = self.resolve(len, *line, path, stack)?;
                if !matches!(target, T::Int(_) | T::Enum(..)) {
                    return Err(err(
                        *line,
                        format!("sequence length `{len}` is not an integer"),
                    ));
                }
                FieldType::Sequence(SequenceType {
                    elem: Box::new(self.conv(e, path, stack)?),
                    length: fp,
                    min_align: 1,
                })
            }
            T::Variant(v) => {
                let tag = v
                    .tag
                    .as_ref()
                    .ok_or_else(|| err(v.line, "variant without a tag"))?;
                let (fp, target) = self.resolve(tag, v.line, path, stack)?;
                let mappings = match target {
                    T::Enum(_, m) => m,
                    _ => {
                        return Err(err(
                            v.line,
                            format!("variant tag `{tag}` is not an enumeration"),
                        ))
                    }
                };
                let mut options = Vec::with_capacity(v.options.len());
                for (k, (name, ot)) in v.options.iter().enumerate() {
                    path.push(k);
                    let ty = self.conv(ot, path, stack);
                    path.pop();
                    options.push(VariantOption {
                        name: display_name(name).into(),
                        ty: ty?,
                        ranges: option_ranges(mappings, name),
                    });
                }
                FieldType::Variant(VariantType { tag: fp, options })
            }
        })
    }

    /// Resolves a sequence length or variant tag reference.
    fn resolve(
        &self,
        text: &str,
        line: usize,
        path: &[usize],
        stack: &[(&'a StructT<'t>, usize)],
    ) -> R<(FieldPath, &'a T<'t>)> {
        let parts: Vec<&str> = text.split('.').collect();
        let not_found = || err(line, format!("cannot find field `{text}`"));
        let absolute: &[(&[&str], Scope)] = &[
            (&["trace", "packet", "header"], Scope::PacketHeader),
            (&["stream", "packet", "context"], Scope::PacketContext),
            (&["stream", "event", "header"], Scope::EventHeader),
            (&["stream", "event", "context"], Scope::EventCommonContext),
            (&["event", "context"], Scope::EventSpecificContext),
            (&["event", "fields"], Scope::EventPayload),
        ];
        for (prefix, scope) in absolute {
            if parts.len() > prefix.len() && parts[..prefix.len()] == **prefix {
                if *scope > self.current {
                    return Err(err(line, format!("`{text}` refers to a later scope")));
                }
                let root = self.root(*scope).ok_or_else(not_found)?;
                let rest = &parts[prefix.len()..];
                let i = find_member(&root.fields, rest[0]).ok_or_else(not_found)?;
                let mut indices = vec![i];
                let t =
                    descend(&root.fields[i].1, &rest[1..], &mut indices).ok_or_else(not_found)?;
                return Ok((
                    FieldPath {
                        scope: *scope,
                        indices,
                    },
                    t,
                ));
            }
        }
        // Relative: enclosing structures, innermost first.
        for (s, plen) in stack.iter().rev() {
            if let Some(i) = find_member(&s.fields, parts[0]) {
                let mut indices = path[..(*plen).min(path.len())].to_vec();
                indices.push(i);
                if let Some(t) = descend(&s.fields[i].1, &parts[1..], &mut indices) {
                    return Ok((
                        FieldPath {
                            scope: self.current,
                            indices,
                        },
                        t,
                    ));
                }
            }
        }
        // Then the enclosing scopes.
        let cur = scope_index(self.current);
        for scope in SCOPES[..cur].iter().rev() {
            if let Some(root) = self.root(*scope) {
                if let Some(i) = find_member(&root.fields, parts[0]) {
                    let mut indices = vec![i];
                    if let Some(t) = descend(&root.fields[i].1, &parts[1..], &mut indices) {
                        return Ok((
                            FieldPath {
                                scope: *scope,
                                indices,
                            },
                            t,
                        ));
                    }
                }
            }
        }
        Err(not_found())
    }
}

fn descend<'a, 't>(
    mut t: &'a T<'t>,
    parts: &[&str],
    indices: &mut Vec<usize>,
) -> Option<&'a T<'t>> {
    for part in parts {
        while let T::Array(e, _) | T::Sequence(e, _, _) = t {
            t = e;
        }
        let (i, next) = match t {
            T::Struct(s) => {
                let i = find_member(&s.fields, part)?;
                (i, &s.fields[i].1)
            }
            T::Variant(v) => {
                let i = find_member(&v.options, part)?;
                (i, &v.options[i].1)
            }
            _ => return None,
        };
        indices.push(i);
        t = next;
    }
    Some(t)
}

/// Ranges of the enumeration mappings naming a variant option (exact label first, then
/// allowing one leading underscore on either side).
fn option_ranges(mappings: &[EnumMapping], name: &str) -> Vec<IntRange> {
    let collect = |pred: &dyn Fn(&str) -> bool| -> Vec<IntRange> {
        mappings
            .iter()
            .filter(|m| pred(&m.label))
            .flat_map(|m| m.ranges.iter().copied())
            .collect()
    };
    let exact = collect(&|l| l == name);
    if !exact.is_empty() {
        return exact;
    }
    let dn = display_name(name);
    collect(&|l| display_name(l) == name || l == dn || display_name(l) == dn)
}

fn int_mut(t: &mut FieldType) -> Option<&mut IntType> {
    match t {
        FieldType::Int(i) => Some(i),
        FieldType::Enum(e) => Some(&mut e.int),
        _ => None,
    }
}

/// Visits every integer (and enumeration container) reachable through structures and variant
/// options, with its member name.
fn walk_ints(fields: &mut [Field], f: &mut dyn FnMut(&str, &mut IntType)) {
    for fld in fields.iter_mut() {
        walk_type(&fld.name, &mut fld.ty, f);
    }
}

fn walk_type(name: &str, t: &mut FieldType, f: &mut dyn FnMut(&str, &mut IntType)) {
    match t {
        FieldType::Int(i) => f(name, i),
        FieldType::Enum(e) => f(name, &mut e.int),
        FieldType::Struct(s) => walk_ints(&mut s.fields, f),
        FieldType::Variant(v) => {
            for o in v.options.iter_mut() {
                walk_type(&o.name, &mut o.ty, f);
            }
        }
        _ => {}
    }
}

/// Builds the trace class from the parsed blocks.
pub(crate) fn build(blocks: Vec<Block<'_>>) -> R<TraceClass> {
    let mut trace_bo: Option<ByteOrder> = None;
    let mut uuid = None;
    let mut packet_header: Option<(StructT, usize)> = None;
    let mut env: Vec<(String, EnvValue)> = Vec::new();
    let mut env_index: HashMap<String, usize> = HashMap::new();
    let mut clocks: Vec<ClockClass> = Vec::new();
    // Per clock: `absolute` was not given.
    let mut implicit_absolute: Vec<bool> = Vec::new();
    let mut streams: Vec<StreamDecl> = Vec::new();
    // Most blocks of a large metadata are events: one allocation, no regrowth copies.
    let mut events: Vec<EventDecl> =
        Vec::with_capacity(blocks.iter().filter(|b| b.kind == "event").count());

    for b in blocks {
        match b.kind {
            "trace" => {
                for e in b.entries {
                    match e {
                        Entry::Attr(k, v, line) => match &*k {
                            "byte_order" => {
                                trace_bo =
                                    Some(byte_order(&v, line)?.unwrap_or(ByteOrder::native()))
                            }
                            "uuid" => uuid = Some(parse_uuid(&v, line)?),
                            "major" if uint_val(&v, line, "major")? != 1 => {
                                return Err(err(
                                    line,
                                    format!("unsupported CTF major version {}", v.describe()),
                                ));
                            }
                            _ => {}
                        },
                        Entry::Type(k, t, line) => {
                            if k == "packet.header" {
                                packet_header = Some(as_struct(t, &k, line)?);
                            }
                        }
                    }
                }
            }
            "env" => {
                for e in b.entries {
                    if let Entry::Attr(k, v, _) = e {
                        let val = match &v {
                            Val::Int(i) => match i64::try_from(*i) {
                                Ok(i) => EnvValue::Int(i),
                                Err(_) => EnvValue::Str(i.to_string()),
                            },
                            _ => EnvValue::Str(text_val(&v)),
                        };
                        match env_index.get(&*k).and_then(|&i| env.get_mut(i)) {
                            Some(slot) => slot.1 = val,
                            None => {
                                let k = k.into_owned();
                                env_index.insert(k.clone(), env.len());
                                env.push((k, val));
                            }
                        }
                    }
                }
            }
            "clock" => {
                let mut c = ClockClass {
                    name: String::new(),
                    freq: 1_000_000_000,
                    offset_s: 0,
                    offset_cycles: 0,
                    precision: 0,
                    uuid: None,
                    absolute: false,
                    description: None,
                };
                let mut named = false;
                let mut explicit_absolute = false;
                for e in b.entries {
                    if let Entry::Attr(k, v, line) = e {
                        match &*k {
                            "name" => {
                                c.name = text_val(&v);
                                named = true;
                            }
                            "uuid" => c.uuid = Some(parse_uuid(&v, line)?),
                            "description" => c.description = Some(text_val(&v)),
                            "freq" => {
                                c.freq = uint_val(&v, line, "freq")?;
                                if c.freq == 0 {
                                    return Err(err(line, "clock frequency is zero"));
                                }
                            }
                            "precision" => c.precision = uint_val(&v, line, "precision")?,
                            "offset_s" => c.offset_s = int_i64(&v, line, "offset_s")?,
                            "offset" => c.offset_cycles = int_i64(&v, line, "offset")?,
                            "absolute" => {
                                c.absolute = bool_val(&v, line)?;
                                explicit_absolute = true;
                            }
                            _ => {}
                        }
                    }
                }
                if !named {
                    return Err(err(b.line, "clock without a name"));
                }
                if clocks.iter().any(|x| x.name == c.name) {
                    return Err(err(b.line, format!("duplicate clock `{}`", c.name)));
                }
                implicit_absolute.push(!explicit_absolute);
                clocks.push(c);
            }
            "stream" => {
                let mut s = StreamDecl {
                    id: None,
                    line: b.line,
                    packet_context: None,
                    event_header: None,
                    event_context: None,
                };
                for e in b.entries {
                    match e {
                        Entry::Attr(k, v, line) => {
                            if k == "id" {
                                s.id = Some(uint_val(&v, line, "id")?);
                            }
                        }
                        Entry::Type(k, t, line) => match &*k {
                            "packet.context" => s.packet_context = Some(as_struct(t, &k, line)?),
                            "event.header" => s.event_header = Some(as_struct(t, &k, line)?),
                            "event.context" => s.event_context = Some(as_struct(t, &k, line)?),
                            _ => {}
                        },
                    }
                }
                streams.push(s);
            }
            "event" => {
                let mut ev = EventDecl {
                    id: None,
                    name: Cow::Borrowed(""),
                    stream_id: None,
                    loglevel: None,
                    emf: None,
                    context: None,
                    fields: None,
                    line: b.line,
                };
                for e in b.entries {
                    match e {
                        Entry::Attr(k, v, line) => match &*k {
                            "id" => ev.id = Some(uint_val(&v, line, "id")?),
                            "name" => ev.name = text_cow(&v),
                            "stream_id" => ev.stream_id = Some(uint_val(&v, line, "stream_id")?),
                            "loglevel" => ev.loglevel = Some(int_i64(&v, line, "loglevel")?),
                            "model.emf.uri" => ev.emf = Some(text_val(&v)),
                            _ => {}
                        },
                        Entry::Type(k, t, line) => match &*k {
                            "context" => ev.context = Some(as_struct(t, &k, line)?),
                            "fields" => ev.fields = Some(as_struct(t, &k, line)?),
                            _ => {}
                        },
                    }
                }
                events.push(ev);
            }
            _ => {}
        }
    }

    // Like Babeltrace 2: LTTng's clocks count from the Unix epoch even without `absolute`.
    let lttng = env.iter().any(|(k, v)| {
        k == "tracer_name" && matches!(v, EnvValue::Str(s) if s.starts_with("lttng"))
    });
    if lttng {
        for (c, implicit) in clocks.iter_mut().zip(&implicit_absolute) {
            if *implicit {
                c.absolute = true;
            }
        }
    }

    let bo = trace_bo.unwrap_or(ByteOrder::Little);
    let ph_root = packet_header.as_ref().map(|p| &p.0);
    let mut conv = Conv {
        bo,
        clocks: &clocks,
        roots: [ph_root, None, None, None, None, None],
        current: Scope::PacketHeader,
        bufs: Cell::default(),
    };
    let mut ph = match ph_root {
        Some(r) => Some(conv.convert_root(r)?),
        None => None,
    };

    // Stream classes (still with unresolved clocks).
    let implicit_stream = streams.is_empty();
    if implicit_stream {
        streams.push(StreamDecl {
            id: Some(0),
            line: 1,
            packet_context: None,
            event_header: None,
            event_context: None,
        });
    }
    let mut out_streams: BTreeMap<u64, StreamClass> = BTreeMap::new();
    for s in &streams {
        let id = s.id.unwrap_or(0);
        if out_streams.contains_key(&id) {
            return Err(err(s.line, format!("duplicate stream class id {id}")));
        }
        let pc_root = s.packet_context.as_ref().map(|p| &p.0);
        let eh_root = s.event_header.as_ref().map(|p| &p.0);
        let ec_root = s.event_context.as_ref().map(|p| &p.0);
        conv.roots = [ph_root, pc_root, eh_root, ec_root, None, None];
        let mut sc = StreamClass {
            id,
            ..Default::default()
        };
        conv.current = Scope::PacketContext;
        if let Some(r) = pc_root {
            sc.packet_context = Some(conv.convert_root(r)?);
        }
        conv.current = Scope::EventHeader;
        if let Some(r) = eh_root {
            sc.event_header = Some(conv.convert_root(r)?);
        }
        conv.current = Scope::EventCommonContext;
        if let Some(r) = ec_root {
            sc.event_common_context = Some(conv.convert_root(r)?);
        }
        out_streams.insert(id, sc);
    }

    // Event classes with their stream class's position, in text order: each stream's map is
    // then built at once from its sorted list (inserting thousands of large classes one by one
    // moves them around).
    let mut converted: Vec<(usize, u64, EventClass)> = Vec::with_capacity(events.len());
    let stream_pos: HashMap<u64, usize, FxBuildHasher> = out_streams
        .keys()
        .enumerate()
        .map(|(i, id)| (*id, i))
        .collect();
    let mut event_ids: HashSet<(u64, u64), FxBuildHasher> =
        HashSet::with_capacity_and_hasher(events.len(), FxBuildHasher);
    for ev in &events {
        let sid = match ev.stream_id {
            Some(sid) => sid,
            None if streams.len() == 1 => streams[0].id.unwrap_or(0),
            None => {
                return Err(err(
                    ev.line,
                    "event without `stream_id` in a trace with several streams",
                ))
            }
        };
        let Some(sdecl) = streams.iter().find(|s| s.id.unwrap_or(0) == sid) else {
            return Err(err(
                ev.line,
                format!("event refers to unknown stream class {sid}"),
            ));
        };
        let id = ev.id.unwrap_or(0);
        let ctx_root = ev.context.as_ref().map(|p| &p.0);
        let fields_root = ev.fields.as_ref().map(|p| &p.0);
        conv.roots = [
            ph_root,
            sdecl.packet_context.as_ref().map(|p| &p.0),
            sdecl.event_header.as_ref().map(|p| &p.0),
            sdecl.event_context.as_ref().map(|p| &p.0),
            ctx_root,
            fields_root,
        ];
        conv.current = Scope::EventSpecificContext;
        let context = match ctx_root {
            Some(r) => Some(conv.convert_root(r)?),
            None => None,
        };
        conv.current = Scope::EventPayload;
        let payload = match fields_root {
            Some(r) => Some(conv.convert_root(r)?),
            None => None,
        };
        let Some(&si) = stream_pos.get(&sid) else {
            return Err(err(
                ev.line,
                format!("event refers to unknown stream class {sid}"),
            ));
        };
        if !event_ids.insert((sid, id)) {
            return Err(err(
                ev.line,
                format!("duplicate event class id {id} in stream class {sid}"),
            ));
        }
        converted.push((
            si,
            id,
            EventClass {
                id,
                name: ev.name.to_string(),
                loglevel: ev.loglevel,
                model_emf_uri: ev.emf.clone(),
                context,
                payload,
            },
        ));
    }
    converted.sort_by_key(|e| e.0);
    let mut converted = converted.into_iter().peekable();
    for (si, sc) in out_streams.values_mut().enumerate() {
        sc.events = std::iter::from_fn(|| converted.next_if(|e| e.0 == si))
            .map(|(_, id, ec)| (id, ec))
            .collect();
    }

    // Roles.
    if let Some(ph) = ph.as_mut() {
        for f in ph.fields.iter_mut() {
            let role = match f.name.as_str() {
                "magic" => Role::PacketMagicNumber,
                "stream_id" => Role::DataStreamClassId,
                "stream_instance_id" => Role::DataStreamId,
                "uuid" => {
                    if let FieldType::Array(a) = &mut f.ty {
                        if a.len == 16 && matches!(&*a.elem, FieldType::Int(i) if i.size == 8) {
                            a.role = Some(Role::MetadataStreamUuid);
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            if let Some(i) = int_mut(&mut f.ty) {
                i.role = Some(role);
            }
        }
    }
    let mut need_default_clock = false;
    for sc in out_streams.values_mut() {
        if let Some(pc) = sc.packet_context.as_mut() {
            for f in pc.fields.iter_mut() {
                let role = match f.name.as_str() {
                    "timestamp_begin" => Role::PacketBeginningDefaultClockTimestamp,
                    "timestamp_end" => Role::PacketEndDefaultClockTimestamp,
                    "content_size" => Role::PacketContentLength,
                    "packet_size" => Role::PacketTotalLength,
                    "events_discarded" => Role::DiscardedEventRecordCounterSnapshot,
                    "packet_seq_num" => Role::PacketSequenceNumber,
                    _ => continue,
                };
                if let Some(i) = int_mut(&mut f.ty) {
                    i.role = Some(role);
                    if i.mapped_clock.is_none()
                        && matches!(
                            role,
                            Role::PacketBeginningDefaultClockTimestamp
                                | Role::PacketEndDefaultClockTimestamp
                        )
                    {
                        need_default_clock = true;
                    }
                }
            }
        }
        if let Some(eh) = sc.event_header.as_mut() {
            walk_ints(&mut eh.fields, &mut |name, i| {
                if name == "id" {
                    i.role = Some(Role::EventRecordClassId);
                } else if name == "timestamp" || i.mapped_clock.is_some() {
                    i.role = Some(Role::DefaultClockTimestamp);
                    if i.mapped_clock.is_none() {
                        need_default_clock = true;
                    }
                }
            });
        }
    }
    // Unmapped timestamps: the only clock, or a default one.
    if need_default_clock && clocks.len() <= 1 {
        if clocks.is_empty() {
            clocks.push(ClockClass {
                name: "default".into(),
                freq: 1_000_000_000,
                offset_s: 0,
                offset_cycles: 0,
                precision: 0,
                uuid: None,
                absolute: false,
                description: None,
            });
        }
        let name = clocks[0].name.clone();
        for sc in out_streams.values_mut() {
            let mut set = |_: &str, i: &mut IntType| {
                if i.mapped_clock.is_none()
                    && matches!(
                        i.role,
                        Some(Role::DefaultClockTimestamp)
                            | Some(Role::PacketBeginningDefaultClockTimestamp)
                            | Some(Role::PacketEndDefaultClockTimestamp)
                    )
                {
                    i.mapped_clock = Some(name.clone());
                }
            };
            if let Some(pc) = sc.packet_context.as_mut() {
                walk_ints(&mut pc.fields, &mut set);
            }
            if let Some(eh) = sc.event_header.as_mut() {
                walk_ints(&mut eh.fields, &mut set);
            }
        }
    }
    // Context timestamps and default clocks.
    for sc in out_streams.values_mut() {
        let mut mark = |_: &str, i: &mut IntType| {
            if i.mapped_clock.is_some() && i.role.is_none() {
                i.role = Some(Role::DefaultClockTimestamp);
            }
        };
        if let Some(c) = sc.event_common_context.as_mut() {
            walk_ints(&mut c.fields, &mut mark);
        }
        for ev in sc.events.values_mut() {
            if let Some(c) = ev.context.as_mut() {
                walk_ints(&mut c.fields, &mut mark);
            }
        }
        let mut clock: Option<String> = None;
        let mut find = |_: &str, i: &mut IntType| {
            if clock.is_none()
                && matches!(
                    i.role,
                    Some(Role::DefaultClockTimestamp)
                        | Some(Role::PacketBeginningDefaultClockTimestamp)
                        | Some(Role::PacketEndDefaultClockTimestamp)
                )
            {
                clock.clone_from(&i.mapped_clock);
            }
        };
        if let Some(eh) = sc.event_header.as_mut() {
            walk_ints(&mut eh.fields, &mut find);
        }
        if let Some(pc) = sc.packet_context.as_mut() {
            walk_ints(&mut pc.fields, &mut find);
        }
        sc.default_clock = clock.and_then(|n| clocks.iter().position(|c| c.name == n));
    }

    Ok(TraceClass {
        version: (1, 8),
        uuid,
        byte_order: bo,
        packet_header: ph,
        env,
        clocks,
        streams: out_streams,
    })
}
