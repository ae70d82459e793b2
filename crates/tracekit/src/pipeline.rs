//! Parallel text output: one worker thread per stream decodes and formats its events, time
//! stamp included; the main thread merges the formatted lines by time and fills in what
//! depends on the merged order, the delta from the previous line, in place before it copies
//! each line out.
//!
//! The order is the one [`ctf::Merger`] gives (time, then stream position), so the output is
//! byte-identical to the sequential printer.

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Message, StreamReader};

use crate::progress::Progress;
use crate::text::{Loss, TextBuf, TextPrinter};
use crate::timefmt::{short_delta, write_delta, TimeFormatter, DELTA_AT, DELTA_LEN};

/// What a formatted entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An event line (stdout), stamped when its time is not `i64::MIN`; the main thread
    /// fills in its delta.
    Event,
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
#[derive(Default)]
struct Chunk {
    entries: Vec<Entry>,
    text: TextBuf,
}

const CHUNK_ENTRIES: usize = 4096;
const CHUNK_BYTES: usize = 1 << 20;

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            entries: Vec::with_capacity(CHUNK_ENTRIES + 64),
            text: TextBuf::with_capacity(CHUNK_BYTES + (64 << 10)),
        }
    }
}

/// Bytes of output gathered before they are written.
const OUT_BYTES: usize = 1 << 19;

/// Settings shared by the workers.
pub struct PrintSetup {
    pub gmt: bool,
    /// The time zone of `gmt`, found once for all threads (None: found by each).
    pub tz: Option<jiff::tz::TimeZone>,
    pub time_map: Option<Arc<dyn TimeMap>>,
}

/// Decodes and formats one stream into chunks.
/// Chunks the main thread is done with come back on `free` to be refilled: their memory is
/// already mapped and sized.
fn worker(mut r: StreamReader, setup: &PrintSetup, tx: SyncSender<Chunk>, free: Receiver<Chunk>) {
    let times = match &setup.tz {
        Some(tz) => TimeFormatter::with_tz(tz.clone()),
        None => TimeFormatter::new(setup.gmt),
    };
    let mut printer = TextPrinter::new(times);
    let mut chunk = Chunk::new();
    let trace_index = r.trace().index;
    let map = |ns: Option<i64>| match (ns, &setup.time_map) {
        (Some(t), Some(m)) => m.map(trace_index, t),
        (Some(t), None) => t,
        (None, _) => i64::MIN,
    };
    let mut warnings_sent = 0;
    while let Some(m) = r.next() {
        let (time, kind) = match m {
            Ok(Message::Event) => {
                let ev = r.event();
                let time = map(ev.time_ns());
                printer.event(&mut chunk.text, &ev, time);
                (time, Kind::Event)
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
                (map(begin_ns), Kind::Loss)
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
        let full = chunk.entries.len() >= CHUNK_ENTRIES || chunk.text.len() >= CHUNK_BYTES;
        // A send fails when the printer stopped early (--end, broken pipe).
        if full {
            let next = match free.try_recv() {
                Ok(mut c) => {
                    c.entries.clear();
                    c.text.clear();
                    c
                }
                Err(_) => Chunk::new(),
            };
            if tx.send(std::mem::replace(&mut chunk, next)).is_err() {
                return;
            }
        }
    }
    if !chunk.entries.is_empty() {
        let _ = tx.send(chunk);
    }
}

/// The entries of one stream as the main thread walks them.
struct Cursor {
    rx: Receiver<Chunk>,
    /// Returns used chunks to the worker.
    free: Sender<Chunk>,
    chunk: Chunk,
    next: usize,
    start: usize,
}

impl Cursor {
    /// Makes sure an entry is available; false at the end of the stream.
    #[inline]
    fn fill(&mut self) -> bool {
        self.next < self.chunk.entries.len() || self.refill()
    }

    #[cold]
    fn refill(&mut self) -> bool {
        while self.next >= self.chunk.entries.len() {
            match self.rx.recv() {
                Ok(c) => {
                    let used = std::mem::replace(&mut self.chunk, c);
                    if used.text.capacity() > 0 {
                        // The worker may be gone already: then the chunk is just dropped.
                        let _ = self.free.send(used);
                    }
                    self.next = 0;
                    self.start = 0;
                }
                Err(_) => return false,
            }
        }
        true
    }

    fn time(&self) -> i64 {
        self.chunk.entries[self.next].time
    }
}

/// A place of the merge's heads with no stream.
const CLOSED: (i64, usize) = (i64::MAX, usize::MAX);

/// What the merged output held.
#[derive(Default)]
pub struct Outcome {
    pub events: u64,
    pub errors: u64,
}

/// Prints every stream of `readers` merged by time, keeping events within `bounds`
/// (computed from the first merged time by `bounds`).
pub fn print_parallel<W: Write>(
    readers: Vec<StreamReader>,
    setup: PrintSetup,
    out: &mut W,
    mut bounds: impl FnMut(Option<i64>) -> Result<Option<(i64, i64)>, String>,
    progress: &Progress,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    std::thread::scope(|scope| -> Result<Outcome, Box<dyn std::error::Error>> {
        let mut cursors = Vec::with_capacity(readers.len());
        for r in readers {
            let (tx, rx) = sync_channel(2);
            let (free_tx, free_rx) = channel();
            let setup = &setup;
            scope.spawn(move || worker(r, setup, tx, free_rx));
            cursors.push(Cursor {
                rx,
                free: free_tx,
                chunk: Chunk::default(),
                next: 0,
                start: 0,
            });
        }
        // The streams still open, in index order, each as the time of its next entry and its
        // index: a linear scan for the minimum (few streams) with ties to the lowest index, as
        // a merge by (time, index). Times and indexes side by side: the scan reads one array.
        let mut heads: Vec<(i64, usize)> = Vec::with_capacity(cursors.len());
        for (i, c) in cursors.iter_mut().enumerate() {
            if c.fill() {
                heads.push((c.time(), i));
            }
        }
        let first = heads.iter().map(|h| h.0).min().filter(|t| *t != i64::MIN);
        // Padded to whole groups of four by closed places after the open streams: the scan
        // compares a group without a loop or a count, and a closed place never wins (it
        // comes after every open one, and only a lower time displaces the lowest so far).
        while !heads.len().is_multiple_of(4) {
            heads.push(CLOSED);
        }
        let bounds = bounds(first)?;
        let mut buf: Vec<u8> = Vec::with_capacity(OUT_BYTES + (64 << 10));
        // The merge's own state, not the caller's: kept in registers rather than stored to
        // memory at each event.
        let mut last_ns: Option<i64> = None;
        let mut outcome = Outcome::default();
        let stderr = io::stderr();
        let done = |e: io::Error| -> Result<(), Box<dyn std::error::Error>> {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Ok(())
            } else {
                Err(e.into())
            }
        };
        while let Some(&(mut time, first)) = heads.first() {
            if first == CLOSED.1 {
                break;
            }
            let mut at = 0;
            for (q, g) in heads.chunks_exact(4).enumerate() {
                for (r, &(t, _)) in g.iter().enumerate() {
                    if t < time {
                        (time, at) = (t, 4 * q + r);
                    }
                }
            }
            let i = heads[at].1;
            let c = &mut cursors[i];
            let e = &c.chunk.entries[c.next];
            let (kind, end) = (e.kind, e.end as usize);
            let text = &mut c.chunk.text.text_mut()[c.start..end];
            let in_range = match bounds {
                Some((b, en)) if time != i64::MIN => {
                    if time > en && kind != Kind::Error {
                        break;
                    }
                    time >= b
                }
                _ => true,
            };
            if in_range || kind == Kind::Error {
                match kind {
                    Kind::Event => {
                        if time == i64::MIN {
                            buf.extend_from_slice(text);
                        } else {
                            // The stamp holds the first event's delta: the others' goes in.
                            match last_ns.map(|l| time.wrapping_sub(l)) {
                                None => buf.extend_from_slice(text),
                                Some(d) => match short_delta(d) {
                                    Some(x) => {
                                        text[DELTA_AT..DELTA_AT + DELTA_LEN].copy_from_slice(&x);
                                        buf.extend_from_slice(text);
                                    }
                                    None => {
                                        buf.extend_from_slice(&text[..DELTA_AT]);
                                        write_delta(&mut buf, d);
                                        buf.extend_from_slice(&text[DELTA_AT + DELTA_LEN..]);
                                    }
                                },
                            }
                            last_ns = Some(time);
                        }
                        outcome.events += 1;
                        if outcome.events & 0xffff == 0 {
                            progress.add(1 << 16);
                        }
                        if buf.len() >= OUT_BYTES {
                            if let Err(e) = out.write_all(&buf) {
                                return done(e).map(|()| outcome);
                            }
                            buf.clear();
                        }
                    }
                    Kind::Loss | Kind::Error | Kind::Warning => {
                        if kind == Kind::Error {
                            outcome.errors += 1;
                        }
                        // Keep stdout and stderr in the order Babeltrace gives them.
                        if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
                            return done(e).map(|()| outcome);
                        }
                        buf.clear();
                        stderr.lock().write_all(text)?;
                    }
                }
            }
            c.start = end;
            c.next += 1;
            if c.fill() {
                heads[at].0 = c.time();
            } else {
                heads.remove(at);
                heads.push(CLOSED);
            }
        }
        if let Err(e) = out.write_all(&buf) {
            return done(e).map(|()| outcome);
        }
        // Dropping the receivers stops workers that are still producing.
        drop(cursors);
        Ok(outcome)
    })
}
