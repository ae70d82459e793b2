//! Printing traces in parallel: each stream's events are decoded and formatted a chunk at a
//! time, time stamp included, on whichever core is free ([`pipeline::parallel`]); the merge
//! (on the calling thread, which also fills chunks while it waits) fills in what depends on the
//! merged order, the delta from the previous line, in place, and writes the lines out from
//! the chunks themselves (`Writer`).
//!
//! The order is the one [`ctf::Merger`] gives (time, then stream position), so the output is
//! byte-identical to a sequential printer's.

use std::io::{self, IoSlice, Write};
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Message, StreamReader, Trace};
use jiff::tz::TimeZone;
use pipeline::parallel::{self, Batch, Filled, StreamTime, StreamWork, Threads};
use pipeline::time::{has_date, parse_time, TimeError};
use pipeline::{Flow, Progress, ReadOptions};

use crate::printer::{Loss, TextBuf, TextPrinter};
use crate::style::{Style, Styled};
use crate::timefmt::{short_delta, time_zone, write_delta, TimeFormatter, DELTA_AT, DELTA_LEN};

/// Errors of [`print`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `--begin` or `--end` could not be read.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// Writing the output failed (other than the reader going away).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// How to print.
#[derive(Clone, Default)]
pub struct PrintOptions {
    /// Times in UTC instead of the local time zone.
    pub gmt: bool,
    /// Only what comes at or after this time, in babeltrace2's syntax
    /// ([`pipeline::time::parse_time`]; a time of day is on the first message's date).
    pub begin: Option<String>,
    /// Only what comes at or before this time (same syntax).
    pub end: Option<String>,
    /// Puts each trace's times on one time line (`--sync`).
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Told how far printing has gone.
    pub progress: Option<Arc<dyn Progress>>,
    /// How lines look (babeltrace2's `text.pretty` options; its defaults by default).
    pub style: Style,
    /// Colour codes in the loss warnings (the terminal takes colours).
    pub warning_colors: bool,
}

/// What the output held.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// Event lines printed.
    pub events: u64,
    /// Decoding errors reported.
    pub errors: u64,
}

/// What a formatted entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An event line (stdout), stamped when its time is not `i64::MIN`; the main thread
    /// fills in its delta (and writes the first stamped before the epoch in seconds,
    /// [`Writer::other_event`]).
    Event,
    /// An event line in a non-default style ([`crate::style`]): the main thread fills in its
    /// delta where the style put it.
    StyledEvent,
    /// A loss warning (stderr), complete.
    Loss,
    /// A decoding error (stderr), complete.
    Error,
    /// A warning about the stream (stderr), complete.
    Warning,
}

struct Entry {
    /// Time on the merged time line; `i64::MIN` when the stream has no clock.
    time: i64,
    kind: Kind,
    /// End of this entry's text in the chunk.
    end: u32,
}

/// A batch of formatted entries from one stream.
struct Chunk {
    entries: Vec<Entry>,
    text: TextBuf,
}

/// A chunk's size: each stream has up to six chunks at a time (filled, waiting, merged), and
/// each is memory faulted in and zeroed once: chunks of a few hundred kilobytes keep a
/// stream well ahead of the merge at a fraction of the memory of larger ones.
const CHUNK_ENTRIES: usize = 2048;
const CHUNK_BYTES: usize = 384 << 10;

impl Batch for Chunk {
    fn new() -> Chunk {
        Chunk {
            entries: Vec::with_capacity(CHUNK_ENTRIES + 64),
            text: TextBuf::with_capacity(CHUNK_BYTES + (64 << 10)),
        }
    }

    fn placeholder() -> Chunk {
        Chunk {
            entries: Vec::new(),
            text: TextBuf::default(),
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline(always)]
    fn time(&self, i: usize) -> i64 {
        self.entries[i].time
    }

    /// A decoding error is reported wherever it falls.
    #[inline(always)]
    fn ranged(&self, i: usize) -> bool {
        self.entries[i].kind != Kind::Error
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.entries.len() >= CHUNK_ENTRIES || self.text.len() >= CHUNK_BYTES
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.text.clear();
    }
}

/// Bytes of output gathered before they are written.
const OUT_BYTES: usize = 1 << 19;

/// One stream's decoding and formatting into chunks, in the default style or `styled`, a
/// chunk at a time. One read loop for every style (a second copy of it costs the default one
/// the inlining of the reader's functions): the printer's style decides inside its general
/// path, and its lines' kind is chosen once.
struct StreamPrinter {
    r: StreamReader,
    printer: TextPrinter,
    event_kind: Kind,
    warnings_sent: usize,
    time: StreamTime,
}

impl StreamPrinter {
    fn new(
        r: StreamReader,
        times: TimeFormatter,
        styled: Option<&Arc<Styled>>,
        time: StreamTime,
    ) -> StreamPrinter {
        let mut printer = TextPrinter::new(times);
        let event_kind = match styled {
            Some(s) => {
                printer.set_style(s.clone());
                Kind::StyledEvent
            }
            None => Kind::Event,
        };
        StreamPrinter {
            r,
            printer,
            event_kind,
            warnings_sent: 0,
            time,
        }
    }
}

impl StreamWork<Chunk> for StreamPrinter {
    type Output = ();

    /// The reader and the printer are locals here (the work moved in whole), whose parts
    /// stay in registers.
    fn fill(self, chunk: &mut Chunk) -> Filled<StreamPrinter, ()> {
        let StreamPrinter {
            mut r,
            mut printer,
            event_kind,
            mut warnings_sent,
            time: stream_time,
        } = self;
        while let Some(m) = r.next() {
            let (time, kind) = match m {
                Ok(Message::Event) => {
                    let ev = r.event();
                    let t = stream_time.of(ev.time_ns());
                    printer.event(&mut chunk.text, &ev, t);
                    (t, event_kind)
                }
                Ok(msg @ (Message::DiscardedEvents { .. } | Message::DiscardedPackets { .. })) => {
                    let (what, count, begin_ns, end_ns) = match msg {
                        Message::DiscardedEvents {
                            count,
                            begin_ns,
                            end_ns,
                        } => ("event", count, begin_ns, end_ns),
                        Message::DiscardedPackets {
                            count,
                            begin_ns,
                            end_ns,
                        } => ("packet", count, begin_ns, end_ns),
                        Message::Event => unreachable!(),
                    };
                    let loss = Loss {
                        what,
                        count,
                        begin_ns,
                        end_ns,
                        reader: &r,
                    };
                    let _ = printer.discarded(&mut chunk.text, &loss);
                    (stream_time.of(begin_ns), Kind::Loss)
                }
                Err(e) => {
                    let _ = writeln!(chunk.text, "tracekit: error: {e}");
                    // Errors keep their place just after the previous entry of the stream.
                    let t = chunk.entries.last().map_or(i64::MIN, |e| e.time);
                    (t, Kind::Error)
                }
            };
            chunk.entries.push(Entry {
                time,
                kind,
                end: chunk.text.len() as u32,
            });
            if r.warnings.len() > warnings_sent {
                for w in &r.warnings[warnings_sent..] {
                    let _ = writeln!(chunk.text, "tracekit: warning: {w}");
                    chunk.entries.push(Entry {
                        time,
                        kind: Kind::Warning,
                        end: chunk.text.len() as u32,
                    });
                }
                warnings_sent = r.warnings.len();
            }
            if chunk.is_full() {
                return Filled::More(StreamPrinter {
                    r,
                    printer,
                    event_kind,
                    warnings_sent,
                    time: stream_time,
                });
            }
        }
        Filled::Done(())
    }

    fn stop(self) {}
}

/// Prints every stream of `traces` merged by time as `babeltrace2` does: event lines to
/// `out`, loss warnings, warnings and decoding errors to `err`, in the order babeltrace2
/// gives them. A closed output (`EPIPE`) ends printing without an error.
pub fn print<W: Write, E: Write>(
    traces: &[Arc<Trace>],
    options: &PrintOptions,
    out: &mut W,
    err: &mut E,
) -> Result<Outcome, Error> {
    let tz = time_zone(options.gmt);
    let (begin, end) = parse_bounds(
        traces,
        options.begin.as_deref(),
        options.end.as_deref(),
        &tz,
        options.time_map.as_ref(),
    )?;
    let read = ReadOptions {
        begin,
        end,
        no_intersection: true,
        time_map: options.time_map.clone(),
        progress: options.progress.clone(),
    };
    let styled = (!options.style.is_default() || options.warning_colors).then(|| {
        let names = if options.style.fields.trace {
            traces.iter().map(|t| t.name.clone()).collect()
        } else {
            Vec::new()
        };
        Arc::new(Styled::new(options.style, names, options.warning_colors))
    });
    let work = |r: StreamReader, time: StreamTime| {
        StreamPrinter::new(r, TimeFormatter::with_tz(tz.clone()), styled.as_ref(), time)
    };
    let writer = Writer::new(out, err, styled.clone(), false);
    let (_, _, w) = parallel::run(Threads::Cores, traces, &read, work, writer);
    w.finish()
}

/// The merge's end: writes the merged entries out, event lines with their deltas. A line is
/// not copied: its delta is patched in place in its chunk and the writer keeps where the
/// line is ([`Piece`]), runs of a chunk's consecutive lines as one piece, then writes the
/// pieces with vectored writes when they add up to [`OUT_BYTES`], and before the merge hands
/// a chunk back to its stream ([`parallel::Consumer::release`]).
struct Writer<'o, W, E> {
    out: &'o mut W,
    err: &'o mut E,
    /// Text the merge made rather than took from a chunk (styled lines, long deltas) and, when
    /// [`Self::copies`], every line. Its capacity stays as made while pieces point into it:
    /// text that would not fit is preceded by a write of the pieces ([`Self::own`]).
    own: Vec<u8>,
    /// The output not yet written, in order: parts of chunks the merge holds (unchanged until
    /// they are released) and of [`Self::own`].
    pieces: Vec<Piece>,
    /// Bytes the pieces hold.
    pending: usize,
    /// Some piece points into a chunk (which must then be written before it is released).
    in_chunks: bool,
    /// Lines are copied into [`Self::own`] instead of pointed at: for [`TextSink`], which
    /// writes its next line into the same chunk at once.
    copies: bool,
    /// The time of the last event line.
    last_ns: Option<i64>,
    outcome: Outcome,
    /// Writing failed (and printing stopped).
    failed: Option<io::Error>,
    /// The style of [`Kind::StyledEvent`] lines; the last line's time is then in its
    /// clock's cycles with `--clock-cycles`.
    styled: Option<Arc<Styled>>,
    /// A time before the epoch was written (the first is written in seconds, with a warning).
    pre_epoch_seen: bool,
}

/// Bytes of output to write: a part of a chunk's text or of [`Writer::own`]. Laid out as
/// a `struct iovec`, as `IoSlice` is on Unix, so that the pieces are written as they are.
#[derive(Clone, Copy)]
#[repr(C)]
struct Piece {
    ptr: *const u8,
    len: usize,
}

/// `pieces` as the `IoSlice`s they are laid out as.
///
/// # Safety
/// Each piece must point to `len` bytes that stay valid and unchanged while the result is
/// used.
#[cfg(unix)]
unsafe fn io_slices(pieces: &mut [Piece]) -> &mut [IoSlice<'_>] {
    // SAFETY: `IoSlice` is ABI compatible with `struct iovec` on Unix (its documentation
    // says so), which `Piece` is laid out as; the bytes are valid as the caller says.
    unsafe { &mut *(pieces as *mut [Piece] as *mut [IoSlice<'_>]) }
}

/// Pieces gathered before they are written: Linux's `IOV_MAX`, the most one `writev` takes.
const MAX_PIECES: usize = 1024;

impl<'o, W: Write, E: Write> Writer<'o, W, E> {
    fn new(out: &'o mut W, err: &'o mut E, styled: Option<Arc<Styled>>, copies: bool) -> Self {
        Writer {
            out,
            err,
            own: Vec::with_capacity(OUT_BYTES + (64 << 10)),
            pieces: Vec::with_capacity(MAX_PIECES),
            pending: 0,
            in_chunks: false,
            copies,
            last_ns: None,
            outcome: Outcome::default(),
            failed: None,
            styled,
            pre_epoch_seen: false,
        }
    }

    /// Writes what is left and tells what was printed.
    fn finish(mut self) -> Result<Outcome, Error> {
        self.write_out();
        match self.failed {
            Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(self.outcome),
        }
    }

    /// Adds `len` bytes at `ptr` to the output, to the last piece when they follow it.
    #[inline(always)]
    fn push(&mut self, ptr: *const u8, len: usize) {
        self.pending += len;
        if let Some(last) = self.pieces.last_mut() {
            if last.ptr.wrapping_add(last.len) == ptr {
                last.len += len;
                return;
            }
        }
        self.pieces.push(Piece { ptr, len });
    }

    /// Adds bytes `from..to` of `c`'s text to the output: pointed at, or copied when
    /// [`Self::copies`]. False when a write failed.
    #[inline(always)]
    fn take(&mut self, c: &mut Chunk, from: usize, to: usize) -> bool {
        if self.copies {
            return self.own(&c.text.text()[from..to]);
        }
        self.in_chunks = true;
        // The pointer is made without a reference to the text (see `TextBuf::as_mut_ptr`), so
        // that the pieces taken before it stay valid; `to` is within the text.
        let base = c.text.as_mut_ptr().cast_const();
        self.push(base.wrapping_add(from), to - from);
        true
    }

    /// Adds a copy of `bytes` to the output, after writing the pieces out when
    /// [`Self::own`] has not the room (which it never grows while pieces point into it).
    /// False when a write failed.
    fn own(&mut self, bytes: &[u8]) -> bool {
        let mut ok = true;
        if self.own.len() + bytes.len() > self.own.capacity() {
            ok = self.write_out();
            self.own.reserve(bytes.len());
        }
        let at = self.own.len();
        self.own.extend_from_slice(bytes);
        let ptr = self.own.as_ptr().wrapping_add(at);
        self.push(ptr, bytes.len());
        ok
    }

    /// Writes the pieces out when they hold [`OUT_BYTES`] or [`MAX_PIECES`]; false when a
    /// write failed.
    #[inline(always)]
    fn write_if_full(&mut self) -> bool {
        if self.pending < OUT_BYTES && self.pieces.len() < MAX_PIECES {
            return true;
        }
        self.write_out()
    }

    /// Writes the pieces out (unless a write failed before) and empties them and
    /// [`Self::own`]; false when a write failed.
    #[cold]
    #[inline(never)]
    fn write_out(&mut self) -> bool {
        if self.failed.is_none() && !self.pieces.is_empty() {
            // SAFETY (both forms): a piece points into a chunk's text that the merge still
            // holds (chunks are written out before they are released) and has not changed
            // since, or into `own`, which was neither cleared nor reallocated since.
            #[cfg(unix)]
            let slices = unsafe { io_slices(&mut self.pieces) };
            #[cfg(not(unix))]
            let mut made: Vec<IoSlice<'_>> = self
                .pieces
                .iter()
                .map(|p| IoSlice::new(unsafe { std::slice::from_raw_parts(p.ptr, p.len) }))
                .collect();
            #[cfg(not(unix))]
            let slices = &mut made[..];
            if let Err(e) = write_all_vectored(self.out, slices) {
                self.failed = Some(e);
            }
        }
        self.pieces.clear();
        self.own.clear();
        self.pending = 0;
        self.in_chunks = false;
        self.failed.is_none()
    }

    /// Writes the pieces out and flushes the output, so that what goes to `err` next comes
    /// after them; false when a write failed.
    fn write_and_flush(&mut self) -> bool {
        if !self.write_out() {
            return false;
        }
        if let Err(e) = self.out.flush() {
            self.failed = Some(e);
            return false;
        }
        true
    }

    /// Event line `c`'s text `start..end` whose delta `d` does not fit the placeholder: the
    /// line around it from the chunk, the delta made here.
    #[cold]
    #[inline(never)]
    fn long_delta(&mut self, c: &mut Chunk, start: usize, end: usize, d: i64) -> bool {
        let mut delta = Vec::new();
        write_delta(&mut delta, d);
        self.take(c, start, start + DELTA_AT)
            && self.own(&delta)
            && self.take(c, start + DELTA_AT + DELTA_LEN, end)
    }

    /// Adds event line `i` of `c` at `time`, styled ([`Kind::StyledEvent`]) or stamped
    /// before the epoch: its text from [`finish_line`], the writer's state only touched here,
    /// inlined, so that the merge loop keeps it in registers.
    #[inline(always)]
    fn other_event(&mut self, c: &mut Chunk, i: usize, time: i64) -> Flow {
        let start = if i == 0 {
            0
        } else {
            c.entries[i - 1].end as usize
        };
        let text = &c.text.text()[start..c.entries[i].end as usize];
        let done = finish_line(
            self.styled.as_deref(),
            text,
            time,
            self.last_ns,
            self.pre_epoch_seen,
        );
        self.last_ns = done.last;
        let mut written = true;
        if done.fallback {
            self.pre_epoch_seen = true;
            // babeltrace2 warns while it formats the line, before it prints it.
            written = self.write_and_flush();
            if written {
                if let Err(e) = self.err.write_all(PRE_EPOCH_WARNING) {
                    self.failed = Some(e);
                    written = false;
                }
            }
        }
        written = written && self.own(&done.line);
        self.outcome.events += 1;
        if written && self.write_if_full() {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
}

/// Writes all of `bufs` to `out`, as many vectored writes as it takes.
fn write_all_vectored<W: Write>(out: &mut W, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !bufs.is_empty() {
        match out.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What babeltrace2 2.0.4 writes before the first line stamped before the epoch.
const PRE_EPOCH_WARNING: &[u8] =
    b"[warning] Fallback to [sec.ns] to print negative time value. Use --clock-seconds.\n";

/// A line as [`finish_line`] completes it.
struct Finished {
    line: Vec<u8>,
    /// The time the next line's delta is from.
    last: Option<i64>,
    /// The line is the first stamped before the epoch, written in seconds: the warning goes
    /// before it.
    fallback: bool,
}

/// Completes event line `text` at `time`, of style `styled` (None: the default style,
/// stamped before the epoch), the previous line at `last`: its delta, where the style put its
/// placeholder (the line's first `+`: nothing before the delta holds one), in ns or in
/// cycles. babeltrace2 writes the first time before the epoch in seconds (unless it writes
/// seconds or cycles anyway), the others as the time of day of their distance to the epoch
/// (as the streams' printers wrote them): `pre_epoch_seen` tells whether one came already.
#[cold]
#[inline(never)]
fn finish_line(
    styled: Option<&Styled>,
    text: &[u8],
    time: i64,
    last: Option<i64>,
    pre_epoch_seen: bool,
) -> Finished {
    let mut line = text.to_vec();
    let before_epoch = time < 0 && time != i64::MIN;
    let wall = styled.is_none_or(|s| !s.style.cycles && !s.style.seconds);
    let fallback = before_epoch && wall && !pre_epoch_seen;
    if fallback {
        // The time of day (and date), after the stamp's opening, becomes seconds.
        let (at, len) = match styled {
            None => (1, 18),
            Some(s) => (s.cycles_at, if s.style.date { 29 } else { 18 }),
        };
        let abs = time.unsigned_abs();
        let secs = format!("-{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000);
        if line.len() >= at + len {
            line.splice(at..at + len, secs.bytes());
        }
    }
    let delta = styled.is_none_or(|s| s.style.delta);
    if time == i64::MIN || !delta {
        return Finished {
            line,
            last,
            fallback,
        };
    }
    let now = match styled {
        Some(s) if s.style.cycles => {
            let digits = line.get(s.cycles_at..s.cycles_at + 20).unwrap_or_default();
            std::str::from_utf8(digits)
                .ok()
                .and_then(|d| d.parse::<u64>().ok())
                .unwrap_or(0) as i64
        }
        _ => time,
    };
    let placeholder = styled.map_or(&b"+?.?????????) "[..], |s| s.placeholder());
    let mut out = line;
    if let (Some(last), Some(p)) = (last, out.iter().position(|&b| b == b'+')) {
        if out[p..].starts_with(placeholder) {
            let mut d = Vec::new();
            match styled {
                Some(s) => s.delta(&mut d, now, last),
                None => write_delta(&mut d, now.wrapping_sub(last)),
            }
            out.splice(p..p + placeholder.len(), d);
        }
    }
    Finished {
        line: out,
        last: Some(now),
        fallback,
    }
}

impl<W: Write, E: Write> parallel::Consumer<Chunk> for Writer<'_, W, E> {
    #[inline(always)]
    fn item(&mut self, c: &mut Chunk, i: usize, time: i64) -> Flow {
        let start = if i == 0 {
            0
        } else {
            c.entries[i - 1].end as usize
        };
        let e = &c.entries[i];
        let (kind, end) = (e.kind, e.end as usize);
        let written = match kind {
            Kind::Event => {
                let mut taken = false;
                if time < 0 {
                    if time != i64::MIN {
                        return self.other_event(c, i, time);
                    }
                } else {
                    // The stamp holds the first event's delta: the others' goes in.
                    if let Some(d) = self.last_ns.map(|l| time.wrapping_sub(l)) {
                        match short_delta(d) {
                            Some(x) => c.text.patch(start + DELTA_AT, &x),
                            None => {
                                if !self.long_delta(c, start, end, d) {
                                    return Flow::Stop;
                                }
                                taken = true;
                            }
                        }
                    }
                    self.last_ns = Some(time);
                }
                self.outcome.events += 1;
                (taken || self.take(c, start, end)) && self.write_if_full()
            }
            // Not an arm of its own: the default style's lines stay one test away.
            Kind::Loss | Kind::Error | Kind::Warning | Kind::StyledEvent => {
                if kind == Kind::StyledEvent {
                    return self.other_event(c, i, time);
                }
                if kind == Kind::Error {
                    self.outcome.errors += 1;
                }
                // Keep stdout and stderr in the order babeltrace2 gives them.
                self.write_and_flush() && {
                    let w = self.err.write_all(&c.text.text()[start..end]);
                    w.map_err(|e| self.failed = Some(e)).is_ok()
                }
            }
        };
        if written {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }

    /// Writes out the lines of chunks before one goes back to its stream.
    #[inline(always)]
    fn release(&mut self, _c: &mut Chunk) {
        if self.in_chunks {
            self.write_out();
        }
    }
}

/// babeltrace2's `--begin` and `--end` of `traces` in ns on the time line of `time_map`: a
/// time without a date takes the date of the first message, in time zone `tz` (see
/// [`pipeline::time::parse_time`] and [`time_zone`]).
pub fn parse_bounds(
    traces: &[Arc<Trace>],
    begin: Option<&str>,
    end: Option<&str>,
    tz: &TimeZone,
    time_map: Option<&Arc<dyn TimeMap>>,
) -> Result<(Option<i64>, Option<i64>), TimeError> {
    let dateless = |s: Option<&str>| s.is_some_and(|s| !has_date(s));
    let reference = if dateless(begin) || dateless(end) {
        first_message_time(traces, time_map)
    } else {
        None
    };
    let parse = |s: Option<&str>| s.map(|s| parse_time(s, tz, reference)).transpose();
    Ok((parse(begin)?, parse(end)?))
}

/// The time printing takes as the first of `traces` when it reads every packet: the smallest
/// time of the streams' first messages (an event's, a loss report's beginning) on the time
/// line of `time_map`, None when one of them has none (an error, no clock) or no stream has a
/// message.
fn first_message_time(traces: &[Arc<Trace>], time_map: Option<&Arc<dyn TimeMap>>) -> Option<i64> {
    let mut first = i64::MAX;
    for mut r in traces.iter().flat_map(|t| t.readers()) {
        let time = match r.next() {
            Some(Ok(Message::Event)) => r.event().time_ns(),
            Some(Ok(m)) => m.time_ns(),
            Some(Err(_)) => None,
            None => continue,
        };
        let time = match (time, time_map) {
            (Some(t), Some(m)) => Some(m.map(r.trace().index, t)),
            (t, _) => t,
        };
        first = first.min(time.unwrap_or(i64::MIN));
    }
    (first != i64::MAX && first != i64::MIN).then_some(first)
}

/// The printer as a [`pipeline::Sink`], one event at a time in the order a source gives
/// them, lines byte-identical to [`print`]'s: for a source whose events come as they happen
/// (a live relay), where nothing can be formatted ahead per stream. Output is written when a
/// buffer fills and whenever the source waits for more ([`pipeline::Sink::caught_up`]), so a
/// line shows as soon as its event is released. Loss warnings are not printed (a notice does
/// not carry the stream's packet context they quote); decoding errors are, at the end.
pub struct TextSink<'o, W: Write, E: Write> {
    printer: TextPrinter,
    chunk: Chunk,
    kind: Kind,
    writer: Writer<'o, W, E>,
}

impl<'o, W: Write, E: Write> TextSink<'o, W, E> {
    /// A sink printing to `out` (event lines) and `err` (errors), in `options`' style and
    /// time zone; `traces` name the traces for the `trace` field. Its range and time map are
    /// the source's business.
    pub fn new(
        traces: &[Arc<Trace>],
        options: &PrintOptions,
        out: &'o mut W,
        err: &'o mut E,
    ) -> Self {
        let times = TimeFormatter::with_tz(time_zone(options.gmt));
        let styled = (!options.style.is_default() || options.warning_colors).then(|| {
            let names = if options.style.fields.trace {
                traces.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            };
            Arc::new(Styled::new(options.style, names, options.warning_colors))
        });
        let mut printer = TextPrinter::new(times);
        let kind = match &styled {
            Some(s) => {
                printer.set_style(s.clone());
                Kind::StyledEvent
            }
            None => Kind::Event,
        };
        TextSink {
            printer,
            chunk: Chunk {
                entries: Vec::with_capacity(1),
                text: TextBuf::with_capacity(4096),
            },
            kind,
            writer: Writer::new(out, err, styled, true),
        }
    }

    /// Writes what is gathered and tells what was printed (a closed output is no error).
    pub fn finish(self) -> Result<Outcome, Error> {
        self.writer.finish()
    }

    fn flush(&mut self) -> Flow {
        if self.writer.write_and_flush() {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
}

impl<W: Write, E: Write> pipeline::Sink for TextSink<'_, W, E> {
    fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> Flow {
        let time = if ev.time_ns().is_some() { ts } else { i64::MIN };
        self.chunk.clear();
        self.printer.event(&mut self.chunk.text, ev, time);
        self.chunk.entries.push(Entry {
            time,
            kind: self.kind,
            end: self.chunk.text.len() as u32,
        });
        parallel::Consumer::item(&mut self.writer, &mut self.chunk, 0, time)
    }

    fn diagnostic(&mut self, d: &pipeline::Diagnostic) {
        if d.kind == pipeline::DiagnosticKind::Warning {
            return;
        }
        self.flush();
        self.writer.outcome.errors += 1;
        let _ = writeln!(self.writer.err, "tracekit: error: {d}");
    }

    fn caught_up(&mut self) -> Flow {
        self.flush()
    }

    fn finish(&mut self, _summary: &pipeline::Summary) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spreads a trace's times out ×10^7 from its first: deltas of 1 µs and more
    /// become 10 s and more, which the merge writes itself rather than in the placeholder.
    struct Stretch(i64);

    impl TimeMap for Stretch {
        fn map(&self, _trace: usize, ns: i64) -> i64 {
            self.0 + (ns - self.0) * 10_000_000
        }
    }

    /// Takes at most a few bytes per write, vectored or not, then fails with `fail` once
    /// `limit` bytes were taken.
    struct Trickle {
        got: Vec<u8>,
        step: usize,
        limit: usize,
        fail: io::ErrorKind,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.got.len() >= self.limit {
                return Err(self.fail.into());
            }
            self.step = self.step % 7 + 1;
            let n = buf.len().min(self.step);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            // Up to three buffers, as long as each is taken whole.
            let mut n = 0;
            for b in bufs.iter().filter(|b| !b.is_empty()).take(3) {
                match self.write(b) {
                    Ok(k) if k == b.len() => n += k,
                    Ok(k) => return Ok(n + k),
                    Err(e) if n == 0 => return Err(e),
                    Err(_) => break,
                }
            }
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The time of day of a line's stamp `[HH:MM:SS.nnnnnnnnn]` and its delta
    /// `(+S.nnnnnnnnn)`, in ns.
    fn stamp_and_delta(line: &str) -> (i64, i64) {
        let ns = |s: &str| {
            let (secs, frac) = s.split_once('.').unwrap();
            let secs: i64 = secs
                .split(':')
                .fold(0, |acc, p| acc * 60 + p.parse::<i64>().unwrap());
            secs * 1_000_000_000 + frac.parse::<i64>().unwrap()
        };
        let stamp = &line[1..line.find(']').unwrap()];
        let delta = &line[line.find("(").unwrap() + 1..line.find(')').unwrap()];
        let d = ns(&delta[1..]);
        (ns(stamp), if delta.starts_with('-') { -d } else { d })
    }

    /// Lines are written from their chunks in place, long deltas made by the merge between
    /// two parts of the line: every delta is the distance between the stamps, and an output
    /// that takes a few bytes per write gets the same bytes.
    #[test]
    fn deltas_long_and_short_through_partial_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("km");
        testkit::kernel_mix(&dir, 3_000, 3, 7);
        let traces = ctf::trace::open_all(&[&dir]).unwrap();
        let first = first_message_time(&traces, None).unwrap();
        let options = PrintOptions {
            gmt: true,
            time_map: Some(Arc::new(Stretch(first))),
            ..Default::default()
        };
        let mut whole = Vec::new();
        let outcome = print(&traces, &options, &mut whole, &mut io::sink()).unwrap();
        // The events and the state dump's.
        assert!(outcome.events >= 3_000, "{outcome:?}");
        let text = String::from_utf8(whole.clone()).unwrap();
        // The rest of each line is the one printed without the map.
        let mut plain = Vec::new();
        let unmapped = PrintOptions {
            gmt: true,
            ..Default::default()
        };
        print(&traces, &unmapped, &mut plain, &mut io::sink()).unwrap();
        let plain = String::from_utf8(plain).unwrap();
        assert_eq!(text.lines().count(), plain.lines().count());
        for (a, b) in text.lines().zip(plain.lines()) {
            assert_eq!(&a[a.find(") ").unwrap()..], &b[b.find(") ").unwrap()..]);
        }
        let (mut long, mut last) = (0, None::<i64>);
        for line in text.lines() {
            // The first line's delta is `+?.?????????`.
            let line = if last.is_none() {
                line.replacen("?.?????????", "0.000000000", 1)
            } else {
                line.to_string()
            };
            let (stamp, delta) = stamp_and_delta(&line);
            if let Some(last) = last {
                const DAY: i64 = 86_400 * 1_000_000_000;
                assert_eq!(delta, (stamp - last).rem_euclid(DAY), "{line}");
                long += (delta >= 10_000_000_000) as usize;
            }
            last = Some(stamp);
        }
        assert!(long > 20 && long < 2_900, "{long} long deltas");
        let mut trickle = Trickle {
            got: Vec::new(),
            step: 0,
            limit: usize::MAX,
            fail: io::ErrorKind::Other,
        };
        print(&traces, &options, &mut trickle, &mut io::sink()).unwrap();
        assert!(trickle.got == whole, "partial writes changed the output");
    }

    /// A reader that goes away (`EPIPE`) ends printing quietly with what it took; another
    /// write error is an error.
    #[test]
    fn write_errors_stop_the_print() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("km");
        testkit::kernel_mix(&dir, 20_000, 2, 1);
        let traces = ctf::trace::open_all(&[&dir]).unwrap();
        let options = PrintOptions {
            gmt: true,
            ..Default::default()
        };
        let mut whole = Vec::new();
        print(&traces, &options, &mut whole, &mut io::sink()).unwrap();
        for (fail, ok) in [
            (io::ErrorKind::BrokenPipe, true),
            (io::ErrorKind::Other, false),
        ] {
            let mut out = Trickle {
                got: Vec::new(),
                step: 0,
                limit: 10_000,
                fail,
            };
            let r = print(&traces, &options, &mut out, &mut io::sink());
            assert_eq!(r.is_ok(), ok, "{fail:?}");
            assert!(out.got.len() >= 10_000 && out.got.len() < whole.len());
            assert!(whole.starts_with(&out.got));
        }
    }
}
