//! Babeltrace 2 compatible text output (the `text.pretty` sink's default format).

use std::io::{self, Write};

use ctf::field::{Compound, FieldValue, FieldVisitor};
use ctf::ir::{DisplayBase, EnumMapping, EnvValue, Role};
use ctf::stream::Event;

use crate::plan::{put_hex, put_i64, put_u64, put_value, ClassPlan};
use crate::timefmt::{TimeFormatter, STAMP_LEN};

/// Text being gathered for output: a buffer kept at its full length, so that its bytes are
/// always initialized, of which the first `used` hold text. An event line is written straight
/// into the free part with indexes (one room check per line) instead of `Vec` pushes, each of
/// which checks the capacity and stores the length again.
pub struct TextBuf {
    bytes: Vec<u8>,
    used: usize,
}

impl TextBuf {
    pub fn with_capacity(n: usize) -> TextBuf {
        TextBuf {
            bytes: vec![0; n],
            used: 0,
        }
    }

    /// The free part, at least `n` bytes long.
    #[inline]
    pub fn room(&mut self, n: usize) -> &mut [u8] {
        if self.bytes.len() - self.used < n {
            self.grow(n);
        }
        &mut self.bytes[self.used..]
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let len = (self.used + n).max(self.bytes.len() * 2);
        self.bytes.resize(len, 0);
    }

    /// Marks `n` more bytes of the free part as text.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.used += n;
    }

    pub fn extend(&mut self, s: &[u8]) {
        self.room(s.len())[..s.len()].copy_from_slice(s);
        self.used += s.len();
    }

    pub fn len(&self) -> usize {
        self.used
    }

    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// The text, writable (the merging thread fills in each line's delta in place).
    pub fn text_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[..self.used]
    }

    /// Bytes allocated (zero for a placeholder).
    pub fn capacity(&self) -> usize {
        self.bytes.len()
    }
}

impl Default for TextBuf {
    fn default() -> TextBuf {
        TextBuf::with_capacity(0)
    }
}

impl Write for TextBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.extend(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Formats events and loss messages like `babeltrace2` does by default.
pub struct TextPrinter {
    times: TimeFormatter,
    buf: Vec<u8>,
    /// An event line written the general way, before it is copied to the output.
    line: Vec<u8>,
    /// A value a direct plan writes through [`ctf::field::FieldValue`].
    scratch: Vec<u8>,
    /// Per trace: the `hostname:procname:(vpid) ` prefix.
    labels: Vec<Option<Vec<u8>>>,
    /// Per trace and stream: the current packet and its rendered context (None: nothing shown).
    packet_text: Vec<Vec<Option<PacketText>>>,
    stack: Vec<(usize, Frame)>,
    /// Per trace, stream class and event class: the class's print plan, once built.
    plans: Vec<Vec<Vec<PlanState>>>,
}

/// Whether an event class has a print plan.
enum PlanState {
    Unknown,
    None,
    Some(Box<ClassPlan>),
}

/// A packet (by [`ctf::Event::packet_key`]) and its rendered context, if anything shows.
type PacketText = (u64, Option<Vec<u8>>);

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

/// The rendered packet context of `ev`'s packet, cached per trace and stream.
fn packet_text<'c>(
    cache: &'c mut Vec<Vec<Option<PacketText>>>,
    stack: &mut Vec<(usize, Frame)>,
    ev: &Event<'_>,
) -> Option<&'c [u8]> {
    let (ti, si) = (ev.trace().index, ev.stream_index());
    if cache.len() <= ti {
        cache.resize(ti + 1, Vec::new());
    }
    let per_stream = &mut cache[ti];
    if per_stream.len() <= si {
        per_stream.resize(si + 1, None);
    }
    let key = ev.packet_key();
    if !matches!(&per_stream[si], Some((k, _)) if *k == key) {
        let text = ev.packet_context().and_then(|v| {
            let mut t = Vec::new();
            let mut w = TextWriter {
                b: &mut t,
                stack,
                skip_roles: true,
                visible: 0,
            };
            v.walk(&mut w);
            (w.visible > 0).then_some(t)
        });
        per_stream[si] = Some((key, text));
    }
    per_stream[si].as_ref().and_then(|(_, t)| t.as_deref())
}

impl TextPrinter {
    pub fn new(times: TimeFormatter) -> Self {
        TextPrinter {
            times,
            buf: Vec::with_capacity(512),
            line: Vec::with_capacity(512),
            scratch: Vec::new(),
            labels: Vec::new(),
            packet_text: Vec::new(),
            stack: Vec::new(),
            plans: Vec::new(),
        }
    }

    /// The plan state of `ev`'s class, made on its first event.
    fn plan_state(&mut self, ev: &Event<'_>) -> &mut PlanState {
        let ti = ev.trace().index;
        let (sc, ec) = ev.class_index();
        if self.plans.len() <= ti {
            self.plans.resize_with(ti + 1, Vec::new);
        }
        let per_class = &mut self.plans[ti];
        if per_class.len() <= sc {
            per_class.resize_with(sc + 1, Vec::new);
        }
        let per_class = &mut per_class[sc];
        if per_class.len() <= ec {
            per_class.resize_with(ec + 1, || PlanState::Unknown);
        }
        let state = &mut per_class[ec];
        if let PlanState::Unknown = state {
            if self.labels.len() <= ti {
                self.labels.resize(ti + 1, None);
            }
            let label = self.labels[ti].get_or_insert_with(|| trace_label(ev.trace()));
            *state = match ClassPlan::build(ev, label) {
                Some(p) => PlanState::Some(Box::new(p)),
                None => PlanState::None,
            };
        }
        state
    }

    /// Appends the line of `ev`: when `time` is not `i64::MIN`, its stamp (the time, and the
    /// placeholder of the delta that the merging thread fills in, see
    /// [`TimeFormatter::stamp`]); then the trace label, event name, field scopes and newline.
    #[inline]
    pub fn event(&mut self, out: &mut TextBuf, ev: &Event<'_>, time: i64) {
        let stamp = if time == i64::MIN { 0 } else { STAMP_LEN };
        let ti = ev.trace().index;
        let (sc, ec) = ev.class_index();
        let ready = matches!(
            self.plans
                .get(ti)
                .and_then(|p| p.get(sc))
                .and_then(|p| p.get(ec)),
            Some(PlanState::Some(_) | PlanState::None)
        );
        if !ready {
            self.plan_state(ev);
        }
        let plan = match &mut self.plans[ti][sc][ec] {
            PlanState::Some(p) => Some(p),
            _ => None,
        };
        if let Some(p) = plan.filter(|p| p.is_direct()) {
            let (cache, stack) = (&mut self.packet_text, &mut self.stack);
            let need = stamp
                + p.direct_room((ev.stream_index(), ev.packet_key()), || {
                    packet_text(cache, stack, ev).map(<[u8]>::to_vec)
                });
            let b = out.room(need);
            if stamp > 0 {
                b[..STAMP_LEN].copy_from_slice(&self.times.stamp(time));
            }
            if let Some(end) = p.write_direct(b, stamp, ev, &mut self.scratch) {
                out.commit(end);
                return;
            }
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        if stamp > 0 {
            line.extend_from_slice(&self.times.stamp(time));
        }
        self.event_tail(&mut line, ev);
        out.extend(&line);
        self.line = line;
    }

    /// Appends what follows the stamp, the general way: trace label, event name and field
    /// scopes (through the class's plan, walked, when it has one), and a newline.
    fn event_tail(&mut self, b: &mut Vec<u8>, ev: &Event<'_>) {
        let ti = ev.trace().index;
        // Makes the label and the plan if this is the first event of the class.
        self.plan_state(ev);
        let (sc, ec) = ev.class_index();
        let label = self.labels[ti].as_deref().unwrap_or_default();
        let plan = match &self.plans[ti][sc][ec] {
            PlanState::Some(p) => Some(&**p),
            _ => None,
        };
        let start = b.len();
        match plan {
            Some(p) => p.head.put(b),
            None => {
                b.extend_from_slice(label);
                b.extend_from_slice(ev.name().as_bytes());
                // Babeltrace writes the space even when no field scope follows.
                b.extend_from_slice(b": ");
            }
        }
        // The packet context is the same for every event of a packet: rendered once.
        let cached = packet_text(&mut self.packet_text, &mut self.stack, ev);
        let mut first = true;
        if let Some(t) = cached {
            b.extend_from_slice(t);
            first = false;
        }
        if let Some(p) = plan {
            if p.write_scopes(b, ev, !first) {
                return;
            }
            // Not the planned shape: write this event the general way.
            b.truncate(start);
            b.extend_from_slice(label);
            b.extend_from_slice(ev.name().as_bytes());
            b.extend_from_slice(b": ");
            if let Some(t) = cached {
                b.extend_from_slice(t);
            }
        }
        for v in [ev.common_context(), ev.specific_context(), ev.payload()]
            .into_iter()
            .flatten()
        {
            if !first {
                b.extend_from_slice(b", ");
            }
            first = false;
            let mut w = TextWriter {
                b,
                stack: &mut self.stack,
                skip_roles: false,
                visible: 0,
            };
            v.walk(&mut w);
        }
        b.push(b'\n');
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

/// Renders a field walk in Babeltrace's syntax: `{ a = 1, b = [ [0] = 2 ], c = { "x" } }`.
struct TextWriter<'b> {
    b: &'b mut Vec<u8>,
    /// Per open compound: items written so far, and its kind.
    stack: &'b mut Vec<(usize, Frame)>,
    /// At the top level of the scope, leave out fields that have a role.
    skip_roles: bool,
    /// Top-level items written.
    visible: usize,
}

/// An open compound in a [`TextWriter`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Braces,
    Array,
    /// An optional's value is written bare.
    Optional,
}

impl TextWriter<'_> {
    #[inline]
    fn prefix(&mut self, name: Option<&str>) {
        let depth = self.stack.len();
        let Some((count, frame)) = self.stack.last_mut() else {
            return;
        };
        if *frame == Frame::Optional {
            *count += 1;
            return;
        }
        if *count > 0 {
            self.b.push(b',');
        }
        self.b.push(b' ');
        if *frame == Frame::Array {
            self.b.push(b'[');
            put_u64(self.b, *count as u64);
            self.b.extend_from_slice(b"] = ");
        } else if let Some(n) = name {
            self.b.extend_from_slice(n.as_bytes());
            self.b.extend_from_slice(b" = ");
        }
        *count += 1;
        if depth == 1 {
            self.visible += 1;
        }
    }
}

impl FieldVisitor for TextWriter<'_> {
    fn value(&mut self, name: Option<&str>, role: Option<Role>, value: &FieldValue<'_>) {
        if self.skip_roles && role.is_some() && self.stack.len() == 1 {
            return;
        }
        self.prefix(name);
        put_value(self.b, value);
    }

    fn enter(&mut self, name: Option<&str>, kind: Compound<'_>) {
        self.prefix(name);
        let frame = match kind {
            Compound::Array(_) => {
                self.b.push(b'[');
                Frame::Array
            }
            Compound::Optional(_) => Frame::Optional,
            _ => {
                self.b.push(b'{');
                Frame::Braces
            }
        };
        self.stack.push((0, frame));
    }

    fn leave(&mut self) {
        match self.stack.pop() {
            Some((_, Frame::Array)) => self.b.extend_from_slice(b" ]"),
            Some((_, Frame::Braces)) => self.b.extend_from_slice(b" }"),
            Some((0, Frame::Optional)) => self.b.extend_from_slice(b"<none>"),
            _ => {}
        }
    }
}

fn write_int(b: &mut Vec<u8>, signed_value: Option<i64>, bits: u64, base: DisplayBase) {
    use std::io::Write as _;
    match base {
        DisplayBase::Decimal => match signed_value {
            Some(v) => put_i64(b, v),
            None => put_u64(b, bits),
        },
        DisplayBase::Hexadecimal => put_hex(b, bits),
        DisplayBase::Octal => {
            let _ = write!(b, "0{bits:o}");
        }
        DisplayBase::Binary => {
            let _ = write!(b, "0b{bits:b}");
        }
    }
}

fn write_enum_open(b: &mut Vec<u8>, v: i128, mappings: &[EnumMapping]) {
    let mut labels = mappings
        .iter()
        .filter(|m| m.ranges.iter().any(|r| r.contains(v)))
        .map(|m| m.label.as_str());
    b.extend_from_slice(b"( ");
    match (labels.next(), labels.next()) {
        (None, _) => b.extend_from_slice(b"<unknown>"),
        (Some(l), None) => {
            b.push(b'"');
            b.extend_from_slice(l.as_bytes());
            b.push(b'"');
        }
        (Some(a), Some(c)) => {
            b.extend_from_slice(b"{ ");
            for (i, l) in [a, c].into_iter().chain(labels).enumerate() {
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

pub(crate) fn write_scalar(b: &mut Vec<u8>, value: &FieldValue<'_>) {
    use std::io::Write as _;
    match *value {
        FieldValue::UInt {
            value,
            base,
            mappings,
        } => {
            if let Some(m) = mappings {
                write_enum_open(b, value as i128, m);
            }
            write_int(b, None, value, base);
            if mappings.is_some() {
                b.extend_from_slice(b" )");
            }
        }
        FieldValue::SInt {
            value,
            size,
            base,
            mappings,
        } => {
            if let Some(m) = mappings {
                write_enum_open(b, value as i128, m);
            }
            let bits = if size >= 64 {
                value as u64
            } else {
                value as u64 & ((1u64 << size) - 1)
            };
            write_int(b, Some(value), bits, base);
            if mappings.is_some() {
                b.extend_from_slice(b" )");
            }
        }
        FieldValue::Bool(x) => b.extend_from_slice(if x { b"true" } else { b"false" }),
        FieldValue::Bits(x) => {
            let _ = write!(b, "0x{x:X}");
        }
        FieldValue::Float(f) => b.extend_from_slice(format_g(f, 6).as_bytes()),
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
        // Compounds come through `enter`/`leave`.
        _ => {}
    }
}

/// Writes a string's bytes, escaping control characters as Babeltrace does.
pub(crate) fn write_escaped(b: &mut Vec<u8>, s: &[u8]) {
    let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
    if s.iter().all(|&c| plain(c)) {
        b.extend_from_slice(s);
        return;
    }
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
