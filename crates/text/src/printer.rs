//! Babeltrace 2 compatible text output (the `text.pretty` sink's default format).

use std::io::{self, Write};

use ctf::ir::EnvValue;
use ctf::stream::Event;

use crate::plan::{ClassPlan, DirectBufs};
use crate::style::{self, FieldWriter, Styled};
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
    /// An empty buffer of `n` bytes.
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

    /// Writes text with `f`, given the whole buffer (kept at its full length; `f` may grow it)
    /// and where the text ends, with room for `n` bytes there. `f` returns where its text
    /// ends, or None to leave the text as it was.
    #[inline]
    pub fn write_with(
        &mut self,
        n: usize,
        f: impl FnOnce(&mut Vec<u8>, usize) -> Option<usize>,
    ) -> bool {
        self.room(n);
        match f(&mut self.bytes, self.used) {
            Some(end) => {
                self.used = end;
                true
            }
            None => false,
        }
    }

    /// Marks `n` more bytes of the free part as text.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.used += n;
    }

    /// Appends `s`.
    pub fn extend(&mut self, s: &[u8]) {
        self.room(s.len())[..s.len()].copy_from_slice(s);
        self.used += s.len();
    }

    /// Bytes of text.
    pub fn len(&self) -> usize {
        self.used
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Empties the text, keeping the memory.
    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// The text.
    pub fn text(&self) -> &[u8] {
        &self.bytes[..self.used]
    }

    /// The text, writable.
    pub fn text_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[..self.used]
    }

    /// The buffer's first byte, for pointers into the text that the merging thread writes out
    /// later. Made without a reference to the bytes (`Vec::as_mut_ptr`), so that pointers
    /// made before stay valid; they are, as long as the buffer is not changed but through
    /// [`Self::patch`].
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    /// Overwrites the text at `at` with `bytes` (the merging thread fills in each line's
    /// delta in place), through [`Self::as_mut_ptr`]: pointers into the rest of the text stay
    /// valid. Nothing is written beyond the text.
    #[inline(always)]
    pub fn patch(&mut self, at: usize, bytes: &[u8]) {
        if at
            .checked_add(bytes.len())
            .is_some_and(|end| end <= self.used)
        {
            // SAFETY: `at..at + bytes.len()` is within the text, hence within the buffer;
            // `bytes` is not part of it (it is borrowed while `self` is borrowed mutably).
            unsafe {
                self.as_mut_ptr()
                    .add(at)
                    .copy_from_nonoverlapping(bytes.as_ptr(), bytes.len())
            }
        }
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
    /// What direct plans keep between events.
    direct: DirectBufs,
    /// Per trace: the `hostname:procname:(vpid) ` prefix.
    labels: Vec<Option<Vec<u8>>>,
    /// Per trace and stream: the current packet and its rendered context (None: nothing shown).
    packet_text: Vec<Vec<Option<PacketText>>>,
    /// The last version given to a packet text.
    text_versions: u64,
    stack: Vec<(usize, style::Frame)>,
    /// Per trace, stream class and event class: the class's print plan, once built. The row of
    /// the last event's trace and stream class is `row` instead (its place here left empty):
    /// a printer mostly sees one stream, whose plans are then one index away.
    plans: Vec<Vec<Vec<PlanState>>>,
    /// The trace and stream class of [`Self::row`].
    row_key: (usize, usize),
    /// Per event class of trace and stream class [`Self::row_key`]: its plan state.
    row: Vec<PlanState>,
    /// A non-default style's setup and caches ([`Self::event_styled`]).
    styled: Option<Box<StyledState>>,
}

/// What a printer of a non-default style keeps.
struct StyledState {
    s: std::sync::Arc<Styled>,
    /// Per (trace, stream class, event class): what precedes the scopes.
    heads: std::collections::HashMap<(usize, usize, usize), Vec<u8>>,
    /// Per trace and stream: the current packet and its context in the style.
    packets: Vec<Vec<Option<StyledPacket>>>,
    stack: Vec<(usize, style::Frame)>,
    /// Per trace, stream class and event class: the class's plan in the style.
    plans: Vec<Vec<Vec<PlanState>>>,
}

/// What a class plan starts with.
#[derive(Clone, Copy)]
enum PlanHead<'s> {
    /// The default style's label, name and `: `.
    Default,
    /// Style `.0`'s head, for an event with a stamp or not (`.1`).
    Styled(&'s Styled, bool),
    /// No plan: a styled printer's default-style states.
    Off,
}

/// Whether an event class has a print plan.
enum PlanState {
    Unknown,
    None,
    Some(Box<ClassPlan>),
}

/// A packet (by [`ctf::Event::packet_key`]), the version of its rendered context (the same as
/// the previous packet's of the stream when the text is the same) and the text, if anything
/// shows.
type PacketText = (u64, u64, Option<Vec<u8>>);

/// A stream's current packet (its key) and its context rendered in a printer's style.
type StyledPacket = (u64, Option<Vec<u8>>);

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

/// The plan state of `ev`'s class in `row` (its trace's and stream class's row), made on its
/// first event (`labels`: the per-trace prefixes, made as needed), starting with `head`; in
/// a non-default style there is none when the plans cannot write the style's scopes.
#[cold]
fn plan_state<'p>(
    row: &'p mut Vec<PlanState>,
    labels: &mut Vec<Option<Vec<u8>>>,
    ev: &Event<'_>,
    head: PlanHead<'_>,
) -> &'p mut PlanState {
    let ti = ev.trace().index;
    let (_, ec) = ev.class_index();
    if row.len() <= ec {
        row.resize_with(ec + 1, || PlanState::Unknown);
    }
    let state = &mut row[ec];
    if let PlanState::Unknown = state {
        if labels.len() <= ti {
            labels.resize(ti + 1, None);
        }
        let label = labels[ti].get_or_insert_with(|| trace_label(ev.trace()));
        let head = match head {
            PlanHead::Default => Some([label, ev.name().as_bytes(), b": "].concat()),
            PlanHead::Styled(s, stamped) => {
                s.style.plans_write_scopes().then(|| s.head(ev, stamped))
            }
            PlanHead::Off => None,
        };
        *state = match head.and_then(|h| ClassPlan::build(ev, &h)) {
            Some(p) => PlanState::Some(Box::new(p)),
            None => PlanState::None,
        };
    }
    state
}

/// Puts `row` back in its place `key` of `plans` and takes out the row of `to` instead.
#[cold]
fn switch_row(
    plans: &mut Vec<Vec<Vec<PlanState>>>,
    row: &mut Vec<PlanState>,
    key: &mut (usize, usize),
    to: (usize, usize),
) {
    *place(plans, *key) = std::mem::take(row);
    *row = std::mem::take(place(plans, to));
    *key = to;
}

/// The row of trace and stream class `(ti, sc)` in `plans`, made as needed.
fn place(plans: &mut Vec<Vec<Vec<PlanState>>>, (ti, sc): (usize, usize)) -> &mut Vec<PlanState> {
    if plans.len() <= ti {
        plans.resize_with(ti + 1, Vec::new);
    }
    if plans[ti].len() <= sc {
        plans[ti].resize_with(sc + 1, Vec::new);
    }
    &mut plans[ti][sc]
}

/// The entry of `ev`'s trace and stream in a per-trace, per-stream cache, made if new.
fn stream_slot<'c, T: Clone>(
    cache: &'c mut Vec<Vec<Option<T>>>,
    ev: &Event<'_>,
) -> &'c mut Option<T> {
    let (ti, si) = (ev.trace().index, ev.stream_index());
    if cache.len() <= ti {
        cache.resize(ti + 1, Vec::new());
    }
    let per_stream = &mut cache[ti];
    if per_stream.len() <= si {
        per_stream.resize(si + 1, None);
    }
    &mut per_stream[si]
}

/// The packet context of `ev`'s packet rendered in style `s`, cached per trace and stream.
fn styled_packet<'c>(
    cache: &'c mut Vec<Vec<Option<StyledPacket>>>,
    stack: &mut Vec<(usize, style::Frame)>,
    s: &Styled,
    ev: &Event<'_>,
) -> Option<&'c [u8]> {
    let slot = stream_slot(cache, ev);
    let key = ev.packet_key();
    if !matches!(slot, Some((k, _)) if *k == key) {
        *slot = Some((key, s.packet(ev, stack)));
    }
    slot.as_ref().and_then(|(_, t)| t.as_deref())
}

/// The rendered packet context of `ev`'s packet, cached per trace and stream, and its version:
/// a new one (from `versions`) only when the text differs from the stream's previous
/// packet's, so that what was made from the text can be kept.
fn packet_text<'c>(
    cache: &'c mut Vec<Vec<Option<PacketText>>>,
    stack: &mut Vec<(usize, style::Frame)>,
    versions: &mut u64,
    ev: &Event<'_>,
) -> (u64, Option<&'c [u8]>) {
    let slot = stream_slot(cache, ev);
    let key = ev.packet_key();
    if !matches!(slot, Some((k, _, _)) if *k == key) {
        let text = ev.packet_context().and_then(|v| {
            let mut t = Vec::new();
            let mut w = FieldWriter::plain(&mut t, stack, true);
            v.walk(&mut w);
            (w.visible > 0).then_some(t)
        });
        match &mut *slot {
            Some((k, _, old)) if *old == text => *k = key,
            slot => {
                *versions += 1;
                *slot = Some((key, *versions, text));
            }
        }
    }
    match slot {
        Some((_, v, t)) => (*v, t.as_deref()),
        None => (0, None),
    }
}

impl TextPrinter {
    /// A printer writing time stamps with `times`.
    pub fn new(times: TimeFormatter) -> Self {
        TextPrinter {
            times,
            buf: Vec::with_capacity(512),
            line: Vec::with_capacity(512),
            scratch: Vec::new(),
            direct: DirectBufs::default(),
            labels: Vec::new(),
            packet_text: Vec::new(),
            text_versions: 0,
            stack: Vec::new(),
            plans: Vec::new(),
            row_key: (0, 0),
            row: Vec::new(),
            styled: None,
        }
    }

    /// A printer of a non-default style `s`, whose lines [`Self::event_styled`] writes.
    pub fn styled(times: TimeFormatter, s: std::sync::Arc<Styled>) -> Self {
        let mut p = TextPrinter::new(times);
        p.set_style(s);
        p
    }

    /// Makes the printer write style `s` ([`Self::styled`]), before its first line.
    pub fn set_style(&mut self, s: std::sync::Arc<Styled>) {
        self.styled = Some(Box::new(StyledState {
            s,
            heads: Default::default(),
            packets: Vec::new(),
            stack: Vec::new(),
            plans: Vec::new(),
        }));
    }

    /// Whether the printer writes a non-default style ([`Self::styled`]).
    pub fn is_styled(&self) -> bool {
        self.styled.is_some()
    }

    /// The plan state of `ev`'s class, made on its first event.
    #[cfg(test)]
    fn plan_state(&mut self, ev: &Event<'_>) -> &mut PlanState {
        let key = (ev.trace().index, ev.class_index().0);
        if key != self.row_key {
            switch_row(&mut self.plans, &mut self.row, &mut self.row_key, key);
        }
        plan_state(&mut self.row, &mut self.labels, ev, PlanHead::Default)
    }

    /// Appends the line of `ev`: when `time` is not `i64::MIN`, its stamp (the time, and the
    /// placeholder of the delta that the merging thread fills in, see
    /// [`TimeFormatter::stamp`]); then the trace label, event name, field scopes and newline.
    #[inline]
    pub fn event(&mut self, out: &mut TextBuf, ev: &Event<'_>, time: i64) {
        let stamp = if time == i64::MIN { 0 } else { STAMP_LEN };
        let ti = ev.trace().index;
        let (sc, ec) = ev.class_index();
        if (ti, sc) != self.row_key {
            switch_row(&mut self.plans, &mut self.row, &mut self.row_key, (ti, sc));
        }
        // One look-up per event; the class's first event makes the plan, then looks again.
        let state = match self.row.get_mut(ec) {
            Some(s) if !matches!(s, PlanState::Unknown) => s,
            _ => {
                let head = if self.styled.is_some() {
                    PlanHead::Off
                } else {
                    PlanHead::Default
                };
                plan_state(&mut self.row, &mut self.labels, ev, head)
            }
        };
        let plan = match state {
            PlanState::Some(p) => Some(p),
            _ => None,
        };
        if let Some(p) = plan {
            let (cache, stack, versions) = (
                &mut self.packet_text,
                &mut self.stack,
                &mut self.text_versions,
            );
            let lead = p.lead_room((ev.stream_index(), ev.packet_key()), || {
                packet_text(cache, stack, versions, ev)
            });
            if p.is_direct() {
                let b = out.room(stamp + lead);
                if stamp > 0 {
                    b[..STAMP_LEN].copy_from_slice(self.times.stamp(time));
                }
                if let Some(end) = p.write_direct(b, stamp, ev, &mut self.scratch, &mut self.direct)
                {
                    out.commit(end);
                    return;
                }
            } else {
                let (times, scratch) = (&mut self.times, &mut self.scratch);
                let written = out.write_with(stamp + lead, |b, at| {
                    if stamp > 0 {
                        b[at..at + STAMP_LEN].copy_from_slice(times.stamp(time));
                    }
                    p.write_tree(b, at + stamp, ev, scratch)
                });
                if written {
                    return;
                }
            }
        }
        // A printer of another style has no plans: all its lines come here.
        if self.styled.is_some() {
            return self.event_styled(out, ev, time);
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        if stamp > 0 {
            line.extend_from_slice(self.times.stamp(time));
        }
        self.event_tail(&mut line, ev);
        out.extend(&line);
        self.line = line;
    }

    /// Appends the line of `ev` in the printer's non-default style (see [`Self::styled`]),
    /// what [`Self::event`] does for such a printer: its stamp when `time` is not
    /// `i64::MIN`, with the delta's placeholder unless `--no-delta`, then the style's head and
    /// the scopes, through the class's plan when it can write them.
    #[inline(never)]
    fn event_styled(&mut self, out: &mut TextBuf, ev: &Event<'_>, time: i64) {
        let Some(st) = self.styled.as_deref_mut() else {
            return;
        };
        let s = &*st.s;
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let stamped = time != i64::MIN;
        if stamped {
            s.stamp(&mut line, &mut self.times, time, ev.cycles());
        }
        let stamp = line.len();
        let ti = ev.trace().index;
        let (sc, ec) = ev.class_index();
        if s.style.plans_write_scopes() {
            let row = place(&mut st.plans, (ti, sc));
            let state = match row.get_mut(ec) {
                Some(st) if !matches!(st, PlanState::Unknown) => st,
                _ => plan_state(row, &mut self.labels, ev, PlanHead::Styled(s, stamped)),
            };
            if let PlanState::Some(p) = state {
                let (cache, stack, versions) = (
                    &mut self.packet_text,
                    &mut self.stack,
                    &mut self.text_versions,
                );
                let lead = p.lead_room((ev.stream_index(), ev.packet_key()), || {
                    packet_text(cache, stack, versions, ev)
                });
                let written = if p.is_direct() {
                    let b = out.room(stamp + lead);
                    b[..stamp].copy_from_slice(&line);
                    match p.write_direct(b, stamp, ev, &mut self.scratch, &mut self.direct) {
                        Some(end) => {
                            out.commit(end);
                            true
                        }
                        None => false,
                    }
                } else {
                    let scratch = &mut self.scratch;
                    out.write_with(stamp + lead, |b, at| {
                        b[at..at + stamp].copy_from_slice(&line);
                        p.write_tree(b, at + stamp, ev, scratch)
                    })
                };
                if written {
                    self.line = line;
                    return;
                }
            }
        }
        let head = st
            .heads
            .entry((ti, sc, ec))
            .or_insert_with(|| s.head(ev, stamped));
        line.extend_from_slice(head);
        let packet = if s.style.plans_write_scopes() {
            packet_text(
                &mut self.packet_text,
                &mut self.stack,
                &mut self.text_versions,
                ev,
            )
            .1
            .map(<[u8]>::to_vec)
        } else {
            styled_packet(&mut st.packets, &mut st.stack, s, ev).map(<[u8]>::to_vec)
        };
        s.scopes(&mut line, ev, packet.as_deref(), &mut st.stack);
        out.extend(&line);
        self.line = line;
    }

    /// Appends what follows the stamp, the general way: trace label, event name, field scopes
    /// and a newline.
    fn event_tail(&mut self, b: &mut Vec<u8>, ev: &Event<'_>) {
        let ti = ev.trace().index;
        if self.labels.len() <= ti {
            self.labels.resize(ti + 1, None);
        }
        let label = self.labels[ti].get_or_insert_with(|| trace_label(ev.trace()));
        b.extend_from_slice(label);
        b.extend_from_slice(ev.name().as_bytes());
        // Babeltrace writes the space even when no field scope follows.
        b.extend_from_slice(b": ");
        // The packet context is the same for every event of a packet: rendered once.
        let (_, cached) = packet_text(
            &mut self.packet_text,
            &mut self.stack,
            &mut self.text_versions,
            ev,
        );
        let mut first = true;
        if let Some(t) = cached {
            b.extend_from_slice(t);
            first = false;
        }
        for v in [ev.common_context(), ev.specific_context(), ev.payload()]
            .into_iter()
            .flatten()
        {
            if !first {
                b.extend_from_slice(b", ");
            }
            first = false;
            let mut w = FieldWriter::plain(b, &mut self.stack, false);
            v.walk(&mut w);
        }
        b.push(b'\n');
    }

    /// Writes Babeltrace's warning for events or packets the tracer lost.
    pub fn discarded<W: Write>(&mut self, out: &mut W, loss: &Loss<'_>) -> io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        let styled = self.styled.as_deref().map(|st| &*st.s);
        // babeltrace2 colours these whenever the terminal takes colours, whatever `--color`.
        let colors = styled.is_some_and(|s| s.warning_colors);
        let (yellow, bold, reset) = if colors {
            ("\x1b[33m", "\x1b[1m", "\x1b[0m")
        } else {
            ("", "", "")
        };
        write!(
            b,
            "{yellow}{bold}WARNING{reset}{yellow}: Tracer discarded {} {}{} ",
            loss.count,
            loss.what,
            if loss.count == 1 { "" } else { "s" }
        )?;
        if let (Some(bg), Some(en)) = (loss.begin_ns, loss.end_ns) {
            b.extend_from_slice(b"between [");
            match styled {
                Some(s) => s.wall(b, &mut self.times, bg),
                None => self.times.write_time(b, bg),
            }
            b.extend_from_slice(b"] and [");
            match styled {
                Some(s) => s.wall(b, &mut self.times, en),
                None => self.times.write_time(b, en),
            }
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
        writeln!(
            b,
            " in trace \"{}\" ({uuid}) within stream \"{}\" (stream class ID: {}, stream ID: {}).{reset}",
            t.name,
            files.name().display(),
            files.stream_class_id.unwrap_or(0),
            files.stream_id.unwrap_or(loss.reader.stream_index() as u64),
        )?;
        out.write_all(b)
    }
}

/// A loss to report: what was lost, how many, when, and in which stream.
pub struct Loss<'a> {
    /// `event` or `packet`.
    pub what: &'static str,
    /// How many were lost.
    pub count: u64,
    /// The start of the range in which they were lost (ns).
    pub begin_ns: Option<i64>,
    /// The end of that range (ns).
    pub end_ns: Option<i64>,
    /// The stream that lost them.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::MAX_DEPTH;
    use crate::value::format_g;
    use ctf::value::Value;
    use ctf::writer::{to_tsdl, EventHeaderKind, TraceWriter, WriterOptions};
    use ctf::Message;
    use kernel::lttng::{trace_class, HostInfo, NetLayout};
    use std::path::Path;

    /// How many events of `dir`'s traces went each way: (direct plan, tree plan, general).
    #[derive(Default, Debug)]
    struct Ways {
        direct: usize,
        tree: usize,
        general: usize,
    }

    /// Writes every event of the traces under `dir` through the class plans and the general
    /// writer, and checks that both give the same text.
    fn plans_agree_with_the_general_writer(dir: &Path) -> Ways {
        let traces = ctf::open_all(&[dir.to_path_buf()]).expect("traces open");
        let mut ways = Ways::default();
        for t in &traces {
            for mut r in t.readers() {
                let mut planned = TextPrinter::new(TimeFormatter::new(true));
                let mut general = TextPrinter::new(TimeFormatter::new(true));
                let mut out = TextBuf::with_capacity(16);
                while let Some(m) = r.next() {
                    if !matches!(m, Ok(Message::Event)) {
                        continue;
                    }
                    let ev = r.event();
                    out.clear();
                    // No time: the line starts at the trace label.
                    planned.event(&mut out, &ev, i64::MIN);
                    let mut want = Vec::new();
                    general.event_tail(&mut want, &ev);
                    assert_eq!(
                        String::from_utf8_lossy(out.text_mut()),
                        String::from_utf8_lossy(&want),
                        "{}: event {}",
                        dir.display(),
                        ev.name()
                    );
                    match planned.plan_state(&ev) {
                        PlanState::Some(p) if p.is_direct() => ways.direct += 1,
                        PlanState::Some(_) => ways.tree += 1,
                        _ => ways.general += 1,
                    }
                }
            }
        }
        ways
    }

    /// `n` structures nested in each other around one integer.
    fn nested_structs(n: usize) -> String {
        let int = "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _x;";
        (0..n).fold(int.to_string(), |inner, i| {
            format!("struct {{ {inner} }} _s{i};")
        })
    }

    /// A trace with event classes of every shape the tree plans follow (and some they leave
    /// to the general writer), in both byte orders.
    fn write_shapes_trace(dir: &Path) {
        let host = HostInfo {
            hostname: "shapes".into(),
            trace_uuid: [7; 16],
            clock_uuid: [8; 16],
            clock_offset_ns: 1_700_000_000_000_000_000,
            creation: "20240305T101500+0000".into(),
            trace_name: "shapes".into(),
            kernel_release: "6.1.0".into(),
        };
        let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Large);
        let u = |size: u32, base: u32| {
            format!("integer {{ size = {size}; align = 8; signed = 0; encoding = none; base = {base}; }}")
        };
        let s = |size: u32| {
            format!(
                "integer {{ size = {size}; align = 8; signed = 1; encoding = none; base = 10; }}"
            )
        };
        let shapes = format!(
            r#"
event {{
	name = "t_variants";
	id = 900;
	stream_id = 0;
	fields := struct {{
		enum : {u8} {{ _zero = 0, _one = 1, _two = 2 }} _sel;
		variant <_sel> {{
			struct {{ }} _zero;
			{s16} _one;
			struct {{
				{h32} _h;
				string _s;
				{u8} _many[12];
				enum : {u8} {{ "_a" = 0, "_b" = 1 ... 3, "_c" = 3 }} _multi;
			}} _two;
		}} _v;
		enum : {s8} {{ neg = -3 ... -1, nil = 0, big = 100 }} _senum;
		enum : {h32} {{ low = 0, high = 1000 }} _wide;
		enum : {u8be} {{ be_one = 1 }} _be_enum;
		{u32} _n;
		struct {{
			{o8} _oct;
			floating_point {{ exp_dig = 11; mant_dig = 53; align = 8; }} _f;
			{h64} _hex;
			string _a_member_name_longer_than_thirty_two_bytes;
		}} _seq[_n];
		struct {{ }} _empty;
	}};
}};

event {{
	name = "t_deep";
	id = 901;
	stream_id = 0;
	fields := struct {{ {deep} }};
}};

event {{
	name = "t_strings";
	id = 902;
	stream_id = 0;
	fields := struct {{
		string _plain;
		integer {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _comm[16];
		{s64} _neg;
	}};
}};

event {{
	name = "t_fixed";
	id = 903;
	stream_id = 0;
	fields := struct {{
		{u8be} _be;
		{s8} _s8;
		{s16} _s16;
		{b3} _b3;
		{b5s} _b5s;
		{b3} _b3b;
		{b64} _b64;
		{b5s} _pad;
		{h64} _h64;
		{s64} _s64;
		integer {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _comm[16];
		{u64} _u64;
		{u8} _last;
	}};
}};
"#,
            b3 = "integer { size = 3; align = 1; signed = 0; encoding = none; base = 10; }",
            b5s = "integer { size = 5; align = 1; signed = 1; encoding = none; base = 10; }",
            b64 = "integer { size = 64; align = 1; signed = 0; encoding = none; base = 10; }",
            u64 = u(64, 10),
            u8 = u(8, 10),
            u8be = u(8, 10).replace("base = 10;", "base = 10; byte_order = be;"),
            u32 = u(32, 10),
            h32 = u(32, 16),
            h64 = u(64, 16),
            o8 = u(8, 8),
            s8 = s(8),
            s16 = s(16),
            s64 = s(64),
            deep = nested_structs(MAX_DEPTH + 2),
        );
        let text = to_tsdl(&tc).expect("TSDL") + &shapes;
        let tc = ctf::tsdl::parse(&text).expect("the shapes' TSDL parses");
        let mut w = TraceWriter::create(dir, &tc, 2, &WriterOptions::default()).unwrap();
        let text = Value::str;
        let many = |k: u64| Value::Array((0..12).map(|i| Value::U64(i * k)).collect());
        let item = |i: u64, name: &str| {
            Value::Struct(vec![
                Value::U64(i),
                Value::Float(i as f64 / 3.0),
                Value::U64(u64::MAX >> i),
                text(name),
            ])
        };
        let variants = |sel: u64, v: Value, senum: i64, wide: u64, n: u64| {
            vec![
                Value::U64(sel),
                Value::Variant(sel as usize, Box::new(v)),
                Value::I64(senum),
                Value::U64(wide),
                Value::U64(1),
                Value::U64(n),
                Value::Array((0..n).map(|i| item(i, "x")).collect()),
                Value::Struct(vec![]),
            ]
        };
        let two = |h: u64, s: &str, multi: u64| {
            Value::Struct(vec![Value::U64(h), text(s), many(h), Value::U64(multi)])
        };
        let mut deep = Value::U64(42);
        for _ in 0..MAX_DEPTH + 2 {
            deep = Value::Struct(vec![deep]);
        }
        let events = [
            (900, variants(0, Value::Struct(vec![]), -2, 0, 0)),
            (900, variants(1, Value::I64(-300), 0, 1000, 1)),
            (
                900,
                variants(2, two(0xBEEF, "quote\"d\n\x01?", 3), 100, 500, 11),
            ),
            (900, variants(2, two(7, "", 0), 50, 7, 3)),
            (
                900,
                variants(2, two(0, "a string longer than sixteen bytes", 9), -3, 1, 2),
            ),
            (901, vec![deep]),
            (
                902,
                vec![
                    text("tab\there"),
                    text("sixteen-bytes!!!"),
                    Value::I64(i64::MIN),
                ],
            ),
            (902, vec![text(""), text("short"), Value::I64(-1)]),
            // Longer than the room a string is planned for: with and without escapes.
            (
                902,
                vec![
                    Value::Str("long ".repeat(40).into_bytes()),
                    text("s"),
                    Value::I64(7),
                ],
            ),
            (
                902,
                vec![
                    Value::Str("\"?\x02".repeat(300).into_bytes()),
                    text("s"),
                    Value::I64(7),
                ],
            ),
        ];
        // Fixed-layout events, read by the direct plan: a big-endian member, bit fields (one
        // of them 64 bits at an odd bit, more than one word load reads), signed members of
        // both signs, and the class's last event ends the trace's data.
        let fixed = |k: u64, neg: bool| {
            let sign = if neg { -1 } else { 1 };
            vec![
                Value::U64(200 + k),
                Value::I64(-100 * sign),
                Value::I64(-30_000 * sign),
                Value::U64(5),
                Value::I64(-16 * sign + (neg as i64) * 31),
                Value::U64(k),
                Value::U64(u64::MAX - k),
                Value::I64(-1),
                Value::U64(0xDEAD_BEEF_0000 + k),
                Value::I64(if neg {
                    i64::MIN + k as i64
                } else {
                    i64::MAX - k as i64
                }),
                text("kworker/0:1H"),
                Value::U64(10u64.pow(19) + k),
                Value::U64(9),
            ]
        };
        let events: Vec<(u64, Vec<Value>)> = events
            .into_iter()
            .chain((0..4).map(|k| (903, fixed(k, k % 2 == 1))))
            .collect();
        for (k, (id, payload)) in events.iter().enumerate() {
            w.write_event((k % 2) as u32, *id, 1000 * k as u64, payload)
                .unwrap_or_else(|e| panic!("event {k}: {e}"));
        }
        w.finish().unwrap();
    }

    #[test]
    fn plans_write_every_shape_as_the_general_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shapes");
        write_shapes_trace(&dir);
        let ways = plans_agree_with_the_general_writer(&dir);
        // The variant class takes the tree; the too deep one the general way; the string
        // and fixed-layout ones the direct plan (from member slots and word reads).
        assert_eq!(ways.tree, 5, "{ways:?}");
        assert_eq!(ways.general, 1, "{ways:?}");
        assert_eq!(ways.direct, 8, "{ways:?}");
    }

    /// In a style whose scopes the plans write (header names, every field, no delta), the
    /// plans give the styled general writer's lines, on every shape and on a generated
    /// kernel trace; in one they cannot (no names), no plan is made.
    #[test]
    fn styled_plans_agree_with_the_styled_general_writer() {
        use crate::style::{Fields, Names, Style};
        let tmp = tempfile::tempdir().unwrap();
        let (shapes, km) = (tmp.path().join("shapes"), tmp.path().join("km"));
        write_shapes_trace(&shapes);
        testkit::kernel_mix(&km, 3_000, 2, 5);
        let styles = [
            Style {
                names: Names {
                    header: true,
                    ..Names::default()
                },
                fields: Fields::parse("all").unwrap(),
                delta: false,
                ..Style::default()
            },
            Style {
                names: Names::parse("none").unwrap(),
                ..Style::default()
            },
        ];
        for (k, style) in styles.into_iter().enumerate() {
            let s = std::sync::Arc::new(Styled::new(style, vec!["name".into()], false));
            let mut planned_events = 0;
            for dir in [&shapes, &km] {
                let traces = ctf::open_all(&[dir.to_path_buf()]).expect("traces open");
                for t in &traces {
                    for mut r in t.readers() {
                        let mut p = TextPrinter::styled(TimeFormatter::new(true), s.clone());
                        let mut out = TextBuf::with_capacity(16);
                        let mut stack = Vec::new();
                        while let Some(m) = r.next() {
                            if !matches!(m, Ok(Message::Event)) {
                                continue;
                            }
                            let ev = r.event();
                            out.clear();
                            p.event(&mut out, &ev, i64::MIN);
                            let mut want = s.head(&ev, false);
                            let packet = s.packet(&ev, &mut stack);
                            s.scopes(&mut want, &ev, packet.as_deref(), &mut stack);
                            assert_eq!(
                                String::from_utf8_lossy(out.text_mut()),
                                String::from_utf8_lossy(&want),
                                "style {k}: {}",
                                ev.name()
                            );
                            let key = (ev.trace().index, ev.class_index().0);
                            let st = p.styled.as_deref_mut().expect("a styled printer");
                            let row = place(&mut st.plans, key);
                            if matches!(row.get(ev.class_index().1), Some(PlanState::Some(_))) {
                                planned_events += 1;
                            }
                        }
                    }
                }
            }
            if k == 0 {
                assert!(planned_events > 2_000, "{planned_events}");
            } else {
                assert_eq!(planned_events, 0);
            }
        }
    }

    #[test]
    fn shapes_print_as_babeltrace2_does() {
        let bt = std::process::Command::new("babeltrace2")
            .arg("--help")
            .output();
        if !bt.is_ok_and(|o| o.status.success()) {
            testkit::loud("SKIPPED: babeltrace2 is not installed: shapes not compared with it");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shapes");
        write_shapes_trace(&dir);
        let out = std::process::Command::new("babeltrace2")
            .arg(&dir)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Its lines without their stamps, against ours in time order.
        let want: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l[STAMP_LEN..].to_string())
            .collect();
        let traces = ctf::open_all(&[dir]).unwrap();
        let mut got = Vec::new();
        for mut r in traces[0].readers() {
            let mut p = TextPrinter::new(TimeFormatter::new(true));
            while let Some(m) = r.next() {
                if matches!(m, Ok(Message::Event)) {
                    let mut out = TextBuf::with_capacity(16);
                    p.event(&mut out, &r.event(), i64::MIN);
                    let line = String::from_utf8_lossy(out.text_mut())
                        .trim_end()
                        .to_string();
                    got.push((r.event().time_ns(), line));
                }
            }
        }
        got.sort();
        let got: Vec<String> = got.into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn plans_write_generated_kernel_traces_as_the_general_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("km");
        testkit::kernel_mix(&dir, 20_000, 2, 1);
        let ways = plans_agree_with_the_general_writer(&dir);
        assert!(ways.direct > 10_000 && ways.tree > 500, "{ways:?}");
    }

    /// A printer's plans keep a line's lead (label, name, packet context) from one packet to
    /// the next while the context shows the same text, and make it again when it does not:
    /// one printer given the events of two streams of small packets, alternately (each
    /// stream shows its own `cpu_id`), writes what the general writer writes.
    #[test]
    fn plans_follow_packet_contexts_across_small_packets_and_streams() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("km");
        let p = scenario::kernel_mix::KernelMixParams {
            events: 6_000,
            cpus: 2,
            seed: 3,
            packet_size: 4096,
            ..Default::default()
        };
        scenario::kernel_mix::generate(&dir, &p).expect("kernel-mix trace written");
        let traces = ctf::open_all(std::slice::from_ref(&dir)).expect("trace opens");
        let mut readers = traces[0].readers();
        assert_eq!(readers.len(), 2);
        let mut planned = TextPrinter::new(TimeFormatter::new(true));
        let mut general = TextPrinter::new(TimeFormatter::new(true));
        let mut out = TextBuf::with_capacity(16);
        let (mut events, mut packets, mut last) = (0, 0, None);
        let mut done = [false; 2];
        // Runs of a few events from each stream in turn: the class's lead meets packets of
        // the other stream between two of its own.
        while !done.iter().all(|d| *d) {
            for (k, r) in readers.iter_mut().enumerate() {
                for _ in 0..1 + events % 7 {
                    let Some(m) = r.next() else {
                        done[k] = true;
                        break;
                    };
                    if !matches!(m, Ok(Message::Event)) {
                        continue;
                    }
                    let ev = r.event();
                    let packet = (k, ev.packet_key());
                    if last != Some(packet) {
                        packets += 1;
                        last = Some(packet);
                    }
                    out.clear();
                    planned.event(&mut out, &ev, i64::MIN);
                    let mut want = Vec::new();
                    general.event_tail(&mut want, &ev);
                    assert_eq!(
                        String::from_utf8_lossy(out.text_mut()),
                        String::from_utf8_lossy(&want),
                        "event {events}"
                    );
                    events += 1;
                }
            }
        }
        assert!(events >= 6_000, "{events} events");
        // Many packets per stream, and the streams' events taken in runs across them.
        assert!(packets > 100, "{packets} packet changes");
    }

    #[test]
    fn plans_write_shared_traces_as_the_general_writer() {
        let Some(shared) = testkit::shared_or_skip("plans against the general writer") else {
            return;
        };
        let dirs = testkit::trace_dirs(&shared.join("traces"));
        let mut all = Ways::default();
        for d in &dirs {
            let w = plans_agree_with_the_general_writer(d);
            all.direct += w.direct;
            all.tree += w.tree;
            all.general += w.general;
        }
        assert!(all.tree > 0 && all.direct > 0, "{all:?}");
    }

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
