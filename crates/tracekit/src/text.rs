//! Babeltrace 2 compatible text output (the `text.pretty` sink's default format).

use std::io::{self, Write};

use ctf::field::{FieldValue, FieldView};
use ctf::ir::{DisplayBase, EnumMapping, EnvValue};
use ctf::stream::Event;

use crate::timefmt::TimeFormatter;

/// Formats events and loss messages like `babeltrace2` does by default.
pub struct TextPrinter {
    times: TimeFormatter,
    last_ns: Option<i64>,
    buf: Vec<u8>,
    /// Per trace: the `hostname:procname:(vpid) ` prefix.
    labels: Vec<Option<Vec<u8>>>,
}

/// Babeltrace's per-trace prefix: the `hostname`, `procname` and `vpid` environment entries.
fn trace_label(t: &ctf::Trace) -> Vec<u8> {
    let mut parts = Vec::new();
    if let Some(h) = t.class.env_str("hostname") {
        parts.push(h.to_string());
    }
    if let Some(p) = t.class.env_str("procname") {
        parts.push(p.to_string());
    }
    match t.class.env("vpid") {
        Some(EnvValue::Int(v)) => parts.push(format!("({v})")),
        Some(EnvValue::Str(v)) => parts.push(format!("({v})")),
        None => {}
    }
    if parts.is_empty() {
        Vec::new()
    } else {
        format!("{} ", parts.join(":")).into_bytes()
    }
}

impl TextPrinter {
    pub fn new(times: TimeFormatter) -> Self {
        TextPrinter {
            times,
            last_ns: None,
            buf: Vec::with_capacity(512),
            labels: Vec::new(),
        }
    }

    /// Writes one event line. `time_ns` is the timestamp on the merged time line.
    pub fn event<W: Write>(
        &mut self,
        out: &mut W,
        ev: &Event<'_>,
        time_ns: Option<i64>,
    ) -> io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        if let Some(ns) = time_ns {
            b.push(b'[');
            self.times.write_time(b, ns);
            b.extend_from_slice(b"] (");
            match self.last_ns {
                Some(last) => {
                    let d = ns - last;
                    b.push(if d < 0 { b'-' } else { b'+' });
                    let d = d.unsigned_abs();
                    write!(b, "{}.{:09}", d / 1_000_000_000, d % 1_000_000_000)?;
                }
                None => b.extend_from_slice(b"+?.?????????"),
            }
            b.extend_from_slice(b") ");
            self.last_ns = Some(ns);
        }
        let ti = ev.trace().index;
        if self.labels.len() <= ti {
            self.labels.resize(ti + 1, None);
        }
        let label = self.labels[ti].get_or_insert_with(|| trace_label(ev.trace()));
        b.extend_from_slice(label);
        b.extend_from_slice(ev.name().as_bytes());
        // Babeltrace writes the space even when no field scope follows.
        b.extend_from_slice(b": ");
        let mut first = true;
        let scopes = [
            ev.packet_context(),
            ev.common_context(),
            ev.specific_context(),
            ev.payload(),
        ];
        for (i, scope) in scopes.into_iter().enumerate() {
            let Some(v) = scope else { continue };
            // The packet context shows only what is not bookkeeping (cpu_id and the like).
            let skip_roles = i == 0;
            if skip_roles && !has_visible_member(&v) {
                continue;
            }
            if !first {
                b.extend_from_slice(b", ");
            }
            first = false;
            write_struct(b, &v, skip_roles);
        }
        b.push(b'\n');
        out.write_all(b)
    }

    /// Writes Babeltrace's warning for events or packets the tracer lost.
    pub fn discarded<W: Write>(&mut self, out: &mut W, loss: &Loss<'_>) -> io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        write!(
            b,
            "WARNING: Tracer discarded {} {}{} ",
            loss.count,
            loss.what,
            if loss.count == 1 { "" } else { "s" }
        )?;
        if let (Some(bg), Some(en)) = (loss.begin_ns, loss.end_ns) {
            b.extend_from_slice(b"between [");
            self.times.write_time(b, bg);
            b.extend_from_slice(b"] and [");
            self.times.write_time(b, en);
            b.extend_from_slice(b"]");
        } else {
            b.extend_from_slice(b"(unknown time range)");
        }
        let t = loss.reader.trace();
        let files = &t.streams[loss.reader.stream_index()];
        let uuid = t
            .class
            .uuid
            .map(|u| format!("UUID: {}", format_uuid(&u)))
            .unwrap_or_else(|| "no UUID".into());
        let path = files
            .files
            .first()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        writeln!(
            b,
            " in trace \"{}\" ({uuid}) within stream \"{path}\" (stream class ID: {}, stream ID: {}).",
            t.hostname().unwrap_or(""),
            files.stream_class_id.unwrap_or(0),
            files.stream_id.unwrap_or(loss.reader.stream_index() as u64),
        )?;
        out.write_all(b)
    }
}

/// A loss to report: what was lost, how many, when, and in which stream.
pub struct Loss<'a> {
    pub what: &'static str,
    pub count: u64,
    pub begin_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub reader: &'a ctf::StreamReader,
}

/// Formats a UUID the canonical way.
pub fn format_uuid(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

fn has_visible_member(v: &FieldView<'_>) -> bool {
    match v.value() {
        FieldValue::Struct(m) => m.into_iter().any(|(_, f)| f.role().is_none()),
        _ => true,
    }
}

fn write_struct(b: &mut Vec<u8>, v: &FieldView<'_>, skip_roles: bool) {
    let FieldValue::Struct(members) = v.value() else {
        write_value(b, v);
        return;
    };
    b.push(b'{');
    let mut first = true;
    for (name, f) in members {
        if skip_roles && f.role().is_some() {
            continue;
        }
        b.extend_from_slice(if first { b" " } else { b", " });
        first = false;
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(b" = ");
        write_value(b, &f);
    }
    b.extend_from_slice(b" }");
}

fn write_int(b: &mut Vec<u8>, v: i128, unsigned_bits: u64, base: DisplayBase, signed: bool) {
    use std::io::Write as _;
    let _ = match base {
        DisplayBase::Decimal => {
            if signed {
                write!(b, "{v}")
            } else {
                write!(b, "{unsigned_bits}")
            }
        }
        DisplayBase::Hexadecimal => write!(b, "0x{unsigned_bits:X}"),
        DisplayBase::Octal => write!(b, "0{unsigned_bits:o}"),
        DisplayBase::Binary => write!(b, "0b{unsigned_bits:b}"),
    };
}

fn write_enum(b: &mut Vec<u8>, v: i128, mappings: &[EnumMapping]) {
    let labels: Vec<&str> = mappings
        .iter()
        .filter(|m| m.ranges.iter().any(|r| r.contains(v)))
        .map(|m| m.label.as_str())
        .collect();
    b.extend_from_slice(b"( ");
    match labels.len() {
        0 => b.extend_from_slice(b"<unknown>"),
        1 => {
            b.push(b'"');
            b.extend_from_slice(labels[0].as_bytes());
            b.push(b'"');
        }
        _ => {
            b.extend_from_slice(b"{ ");
            for (i, l) in labels.iter().enumerate() {
                if i > 0 {
                    b.extend_from_slice(b", ");
                }
                b.push(b'"');
                b.extend_from_slice(l.as_bytes());
                b.push(b'"');
            }
            b.extend_from_slice(b" }");
        }
    }
    b.extend_from_slice(b" : container = ");
}

fn write_value(b: &mut Vec<u8>, v: &FieldView<'_>) {
    use std::io::Write as _;
    match v.value() {
        FieldValue::UInt {
            value,
            base,
            mappings,
        } => {
            if let Some(m) = mappings {
                write_enum(b, value as i128, m);
                write_int(b, value as i128, value, base, false);
                b.extend_from_slice(b" )");
            } else {
                write_int(b, value as i128, value, base, false);
            }
        }
        FieldValue::SInt {
            value,
            base,
            mappings,
        } => {
            let bits = if base == DisplayBase::Decimal {
                value as u64
            } else {
                value as u64 & v.int_mask()
            };
            if let Some(m) = mappings {
                write_enum(b, value as i128, m);
                write_int(b, value as i128, bits, base, true);
                b.extend_from_slice(b" )");
            } else {
                write_int(b, value as i128, bits, base, true);
            }
        }
        FieldValue::Bool(x) => b.extend_from_slice(if x { b"true" } else { b"false" }),
        FieldValue::Bits(x) => {
            let _ = write!(b, "0x{x:X}");
        }
        FieldValue::Float(f) => write_float(b, f),
        FieldValue::Str(s) => {
            b.push(b'"');
            let s = s.split(|&c| c == 0).next().unwrap_or(s);
            write_escaped(b, s);
            b.push(b'"');
        }
        FieldValue::Blob(bytes) => {
            for x in bytes {
                let _ = write!(b, "{x:02x}");
            }
        }
        FieldValue::Struct(_) => write_struct(b, v, false),
        FieldValue::Array(elems) => {
            b.push(b'[');
            let mut first = true;
            for (i, e) in elems.enumerate() {
                b.extend_from_slice(if first { b" " } else { b", " });
                first = false;
                let _ = write!(b, "[{i}] = ");
                write_value(b, &e);
            }
            b.extend_from_slice(b" ]");
        }
        FieldValue::Variant(_, inner) => {
            b.extend_from_slice(b"{ ");
            write_value(b, &inner);
            b.extend_from_slice(b" }");
        }
        FieldValue::Optional(o) => match o {
            Some(inner) => write_value(b, &inner),
            None => b.extend_from_slice(b"<none>"),
        },
    }
}

/// Writes a string's bytes, escaping control characters as Babeltrace does.
fn write_escaped(b: &mut Vec<u8>, s: &[u8]) {
    for &c in s {
        match c {
            b'\n' => b.extend_from_slice(b"\\n"),
            b'\t' => b.extend_from_slice(b"\\t"),
            b'\r' => b.extend_from_slice(b"\\r"),
            b'\\' => b.extend_from_slice(b"\\\\"),
            b'"' => b.extend_from_slice(b"\\\""),
            b'\'' => b.extend_from_slice(b"\\'"),
            b'?' => b.extend_from_slice(b"\\?"),
            0x07 => b.extend_from_slice(b"\\a"),
            0x08 => b.extend_from_slice(b"\\b"),
            0x0b => b.extend_from_slice(b"\\v"),
            0x0c => b.extend_from_slice(b"\\f"),
            c if c < 0x20 => {
                use std::io::Write as _;
                let _ = write!(b, "\\x{c:02x}");
            }
            c => b.push(c),
        }
    }
}

/// C's `%g` with 6 significant digits, which Babeltrace uses for floats.
fn write_float(b: &mut Vec<u8>, f: f64) {
    b.extend_from_slice(format_g(f, 6).as_bytes());
}

/// Formats like C's `printf("%.{prec}g")`.
pub fn format_g(f: f64, prec: usize) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    let p = prec.max(1);
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{:.*e}", p - 1, f);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = trim_zeros(mant);
        format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{f:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn g_format_matches_c() {
        assert_eq!(format_g(1.234567891, 6), "1.23457");
        assert_eq!(format_g(100000.0, 6), "100000");
        assert_eq!(format_g(1000000.0, 6), "1e+06");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001234, 6), "1.234e-05");
        assert_eq!(format_g(-2.5, 6), "-2.5");
        assert_eq!(format_g(0.0, 6), "0");
    }
}
