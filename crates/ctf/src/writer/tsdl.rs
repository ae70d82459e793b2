//! Serialization of a [`TraceClass`] to CTF 1.8 TSDL text, plain or packetized as LTTng does.

use crate::ir::{
    ByteOrder, DisplayBase, Encoding, EnumType, EnvValue, FieldPath, FieldType, IntRange, IntType,
    Length, Scope, StructType, TraceClass,
};
use crate::metadata::METADATA_PACKET_MAGIC;
use std::fmt::Write;

/// A trace class that TSDL cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsdlError(pub String);

impl std::fmt::Display for TsdlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TsdlError {}

/// Formats a UUID as TSDL wants it (`"xxxxxxxx-xxxx-…"`).
pub fn uuid_string(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c => o.push(c),
        }
    }
    o
}

fn bo_str(bo: ByteOrder) -> &'static str {
    match bo {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    }
}

fn scope_prefix(s: Scope) -> &'static str {
    match s {
        Scope::PacketHeader => "trace.packet.header",
        Scope::PacketContext => "stream.packet.context",
        Scope::EventHeader => "stream.event.header",
        Scope::EventCommonContext => "stream.event.context",
        Scope::EventSpecificContext => "event.context",
        Scope::EventPayload => "event.fields",
    }
}

/// Whether names in this scope are written with LTTng's leading underscore. The packet header,
/// packet context and event header keep their well-known names as they are.
fn prefixed(s: Scope) -> bool {
    matches!(
        s,
        Scope::EventCommonContext | Scope::EventSpecificContext | Scope::EventPayload
    )
}

struct Ser<'a> {
    tc: &'a TraceClass,
    out: String,
    scope: Scope,
    /// Roots of the scopes of the event being written, to resolve field paths to names.
    roots: Vec<(Scope, &'a StructType)>,
    /// Member indices from the scope root to the field being written.
    path: Vec<usize>,
}

impl<'a> Ser<'a> {
    fn name(&self, n: &str) -> String {
        if prefixed(self.scope) {
            format!("_{n}")
        } else {
            n.to_string()
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push('\t');
        }
    }

    fn int(&self, i: &IntType) -> String {
        let mut s = format!(
            "integer {{ size = {}; align = {}; signed = {}; encoding = {}; base = {};",
            i.size,
            i.align,
            i.signed as u8,
            match i.encoding {
                Encoding::None => "none",
                Encoding::Utf8 => "UTF8",
            },
            match i.base {
                DisplayBase::Binary => 2,
                DisplayBase::Octal => 8,
                DisplayBase::Decimal => 10,
                DisplayBase::Hexadecimal => 16,
            }
        );
        if i.byte_order != self.tc.byte_order {
            let _ = write!(s, " byte_order = {};", bo_str(i.byte_order));
        }
        if let Some(c) = &i.mapped_clock {
            let _ = write!(s, " map = clock.{c}.value;");
        }
        s.push_str(" }");
        s
    }

    fn enumeration(&self, e: &EnumType) -> String {
        let mut s = format!("enum : {} {{ ", self.int(&e.int));
        let mut first = true;
        for m in &e.mappings {
            for r in &m.ranges {
                if !first {
                    s.push_str(", ");
                }
                first = false;
                let label = if is_ident(&m.label) {
                    m.label.clone()
                } else {
                    format!("\"{}\"", escape(&m.label))
                };
                if r.lower == r.upper {
                    let _ = write!(s, "{label} = {}", r.lower);
                } else {
                    let _ = write!(s, "{label} = {} ... {}", r.lower, r.upper);
                }
            }
        }
        s.push_str(" }");
        s
    }

    /// Name of a field path: relative (the bare name) when the target is a member of a
    /// structure enclosing the current field, absolute otherwise.
    fn path_name(&self, p: &FieldPath) -> Result<String, TsdlError> {
        let root = self
            .roots
            .iter()
            .find(|(s, _)| *s == p.scope)
            .map(|(_, r)| *r)
            .ok_or_else(|| TsdlError(format!("field path into missing scope {:?}", p.scope)))?;
        let mut names = Vec::new();
        let mut cur = FieldType::Struct(root.clone());
        for &i in &p.indices {
            let mut t = &cur;
            loop {
                match t {
                    FieldType::Array(a) => t = &a.elem,
                    FieldType::Sequence(s) => t = &s.elem,
                    _ => break,
                }
            }
            let (n, next) = match t {
                FieldType::Struct(s) => s
                    .fields
                    .get(i)
                    .map(|f| (f.name.to_string(), f.ty.clone()))
                    .ok_or_else(|| TsdlError(format!("bad field path {p:?}")))?,
                FieldType::Variant(v) => {
                    v.options
                        .get(i)
                        .map(|o| (o.name.clone(), o.ty.clone()))
                        .ok_or_else(|| TsdlError(format!("bad field path {p:?}")))?
                }
                _ => return Err(TsdlError(format!("bad field path {p:?}"))),
            };
            names.push(if prefixed(p.scope) {
                format!("_{n}")
            } else {
                n
            });
            cur = next;
        }
        let relative = p.scope == self.scope
            && !p.indices.is_empty()
            && p.indices.len() <= self.path.len()
            && p.indices[..p.indices.len() - 1] == self.path[..p.indices.len() - 1];
        if relative {
            Ok(names.pop().unwrap())
        } else {
            Ok(format!("{}.{}", scope_prefix(p.scope), names.join(".")))
        }
    }

    /// Writes a type specifier and returns the declarator suffix (array/sequence brackets).
    fn ty(&mut self, t: &FieldType, depth: usize) -> Result<String, TsdlError> {
        let mut suffix = String::new();
        let mut t = t;
        loop {
            match t {
                FieldType::Array(a) => {
                    let _ = write!(suffix, "[{}]", a.len);
                    t = &a.elem;
                }
                FieldType::Sequence(s) => {
                    let _ = write!(suffix, "[ {} ]", self.path_name(&s.length)?);
                    t = &s.elem;
                }
                FieldType::Blob(b) => {
                    match &b.length {
                        Length::Static(n) => {
                            let _ = write!(suffix, "[{n}]");
                        }
                        Length::Dynamic(p) => {
                            let _ = write!(suffix, "[ {} ]", self.path_name(p)?);
                        }
                    }
                    self.out.push_str(
                        "integer { size = 8; align = 8; signed = 0; encoding = none; base = 16; }",
                    );
                    return Ok(suffix);
                }
                _ => break,
            }
        }
        match t {
            FieldType::Int(i) => {
                let s = self.int(i);
                self.out.push_str(&s);
            }
            FieldType::BitArray(b) => {
                let s = self.int(&b.int);
                self.out.push_str(&s);
            }
            FieldType::Enum(e) => {
                let s = self.enumeration(e);
                self.out.push_str(&s);
            }
            FieldType::Float(f) => {
                let mut s = format!(
                    "floating_point {{ exp_dig = {}; mant_dig = {}; align = {};",
                    f.exp_dig, f.mant_dig, f.align
                );
                if f.byte_order != self.tc.byte_order {
                    let _ = write!(s, " byte_order = {};", bo_str(f.byte_order));
                }
                s.push_str(" }");
                self.out.push_str(&s);
            }
            FieldType::String(s) => self.out.push_str(match s.encoding {
                Encoding::Utf8 => "string",
                Encoding::None => "string { encoding = ASCII; }",
            }),
            FieldType::Struct(s) => self.struct_body(s, depth)?,
            FieldType::Variant(v) => {
                let tag = self.path_name(&v.tag)?;
                let _ = writeln!(self.out, "variant <{tag}> {{");
                for (i, o) in v.options.iter().enumerate() {
                    self.indent(depth + 1);
                    self.path.push(i);
                    let suf = self.ty(&o.ty, depth + 1)?;
                    self.path.pop();
                    let n = self.name(&o.name);
                    let _ = writeln!(self.out, " {n}{suf};");
                }
                self.indent(depth);
                self.out.push('}');
            }
            FieldType::VarInt(_) | FieldType::SizedString(_) | FieldType::Optional(_) => {
                return Err(TsdlError(format!(
                    "CTF 1.8 cannot express this CTF 2 field type: {t:?}"
                )))
            }
            FieldType::Array(_) | FieldType::Sequence(_) | FieldType::Blob(_) => unreachable!(),
        }
        Ok(suffix)
    }

    fn struct_body(&mut self, s: &StructType, depth: usize) -> Result<(), TsdlError> {
        self.out.push_str("struct {\n");
        for (i, f) in s.fields.iter().enumerate() {
            self.indent(depth + 1);
            self.path.push(i);
            let suf = self.ty(&f.ty, depth + 1)?;
            self.path.pop();
            let n = self.name(&f.name);
            let _ = writeln!(self.out, " {n}{suf};");
        }
        self.indent(depth);
        self.out.push('}');
        if s.min_align > 1 {
            let _ = write!(self.out, " align({})", s.min_align);
        }
        Ok(())
    }

    fn scope_struct(
        &mut self,
        label: &str,
        scope: Scope,
        s: &'a StructType,
    ) -> Result<(), TsdlError> {
        self.scope = scope;
        self.roots.retain(|(sc, _)| *sc != scope);
        self.roots.push((scope, s));
        self.path.clear();
        let _ = write!(self.out, "\t{label} := ");
        self.struct_body(s, 1)?;
        self.out.push_str(";\n");
        Ok(())
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch == '_' || ch.is_ascii_alphabetic())
        && c.all(|ch| ch == '_' || ch.is_ascii_alphanumeric())
}

#[allow(dead_code)]
fn range_str(r: &IntRange) -> String {
    format!("{} ... {}", r.lower, r.upper)
}

/// Serializes a trace class to TSDL text (starting with the `/* CTF 1.8 */` signature).
pub fn to_tsdl(tc: &TraceClass) -> Result<String, TsdlError> {
    let mut s = Ser {
        tc,
        out: String::with_capacity(64 * 1024),
        scope: Scope::PacketHeader,
        roots: Vec::new(),
        path: Vec::new(),
    };
    s.out.push_str("/* CTF 1.8 */\n\n");
    s.out.push_str("trace {\n\tmajor = 1;\n\tminor = 8;\n");
    if let Some(u) = &tc.uuid {
        let _ = writeln!(s.out, "\tuuid = \"{}\";", uuid_string(u));
    }
    let _ = writeln!(s.out, "\tbyte_order = {};", bo_str(tc.byte_order));
    if let Some(h) = &tc.packet_header {
        s.scope_struct("packet.header", Scope::PacketHeader, h)?;
    }
    s.out.push_str("};\n\n");

    if !tc.env.is_empty() {
        s.out.push_str("env {\n");
        for (k, v) in &tc.env {
            match v {
                EnvValue::Int(i) => {
                    let _ = writeln!(s.out, "\t{k} = {i};");
                }
                EnvValue::Str(t) => {
                    let _ = writeln!(s.out, "\t{k} = \"{}\";", escape(t));
                }
            }
        }
        s.out.push_str("};\n\n");
    }

    for c in &tc.clocks {
        s.out.push_str("clock {\n");
        let _ = writeln!(s.out, "\tname = \"{}\";", escape(&c.name));
        if let Some(u) = &c.uuid {
            let _ = writeln!(s.out, "\tuuid = \"{}\";", uuid_string(u));
        }
        if let Some(d) = &c.description {
            let _ = writeln!(s.out, "\tdescription = \"{}\";", escape(d));
        }
        let _ = writeln!(s.out, "\tfreq = {};", c.freq);
        let _ = writeln!(s.out, "\tprecision = {};", c.precision);
        let _ = writeln!(s.out, "\toffset_s = {};", c.offset_s);
        let _ = writeln!(s.out, "\toffset = {};", c.offset_cycles);
        let _ = writeln!(
            s.out,
            "\tabsolute = {};",
            if c.absolute { "true" } else { "false" }
        );
        s.out.push_str("};\n\n");
    }

    for sc in tc.streams.values() {
        s.out.push_str("stream {\n");
        let _ = writeln!(s.out, "\tid = {};", sc.id);
        s.roots.retain(|(k, _)| *k == Scope::PacketHeader);
        if let Some(h) = &sc.event_header {
            s.scope_struct("event.header", Scope::EventHeader, h)?;
        }
        if let Some(h) = &sc.packet_context {
            s.scope_struct("packet.context", Scope::PacketContext, h)?;
        }
        if let Some(h) = &sc.event_common_context {
            s.scope_struct("event.context", Scope::EventCommonContext, h)?;
        }
        s.out.push_str("};\n\n");
        for ev in sc.events.values() {
            s.roots
                .retain(|(k, _)| !matches!(k, Scope::EventSpecificContext | Scope::EventPayload));
            s.out.push_str("event {\n");
            let _ = writeln!(s.out, "\tname = \"{}\";", escape(&ev.name));
            let _ = writeln!(s.out, "\tid = {};", ev.id);
            let _ = writeln!(s.out, "\tstream_id = {};", sc.id);
            if let Some(l) = ev.loglevel {
                let _ = writeln!(s.out, "\tloglevel = {l};");
            }
            if let Some(u) = &ev.model_emf_uri {
                let _ = writeln!(s.out, "\tmodel.emf.uri = \"{}\";", escape(u));
            }
            if let Some(c) = &ev.context {
                s.scope_struct("context", Scope::EventSpecificContext, c)?;
            }
            if let Some(p) = &ev.payload {
                s.scope_struct("fields", Scope::EventPayload, p)?;
            }
            s.out.push_str("};\n\n");
        }
    }
    Ok(s.out)
}

/// Size of one metadata packet header in bytes.
pub const METADATA_PACKET_HEADER_LEN: usize = 37;

/// Wraps TSDL text into metadata packets of `packet_size` bytes (header included), as LTTng
/// does: each packet is padded with zeros to its size, `content_size` counts header and text.
pub fn packetize(text: &str, uuid: &[u8; 16], bo: ByteOrder, packet_size: usize) -> Vec<u8> {
    assert!(packet_size > METADATA_PACKET_HEADER_LEN);
    let room = packet_size - METADATA_PACKET_HEADER_LEN;
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / room * 64 + packet_size);
    let u32b = |v: u32| match bo {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    for chunk in bytes.chunks(room) {
        out.extend_from_slice(&u32b(METADATA_PACKET_MAGIC));
        out.extend_from_slice(uuid);
        out.extend_from_slice(&u32b(0)); // checksum
        out.extend_from_slice(&u32b(
            ((METADATA_PACKET_HEADER_LEN + chunk.len()) * 8) as u32,
        ));
        out.extend_from_slice(&u32b((packet_size * 8) as u32));
        out.extend_from_slice(&[0, 0, 0, 1, 8]); // compression, encryption, checksum scheme, 1.8
        out.extend_from_slice(chunk);
        out.resize(out.len() + room - chunk.len(), 0);
    }
    out
}
