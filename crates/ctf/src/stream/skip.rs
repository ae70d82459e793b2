//! Leaving out the events a consumer does not want, without changing what it sees of the
//! others.
//!
//! A time-ordered consumer (an analysis) that wants a few event classes still pays, per
//! unwanted event, for merging it with the other streams and handing it over. A reader with a
//! [`SkipRule`] reads such events (so errors, warnings and counters stay those of a full read)
//! but does not give them out, so they never reach the merger.
//!
//! What the consumer sees must stay what a full read would show it, and three things depend on
//! the events left out:
//! - **Order.** The merger takes the stream whose next message has the smallest time. A
//!   stream whose time goes backwards (a regression) makes that order depend on every event
//!   of the stream, so the merger orders skipping readers by their running maximum time (the
//!   *key*, [`StreamReader::merge_key`]) instead. Both orders are the same on full streams: an
//!   event below its stream's running maximum comes right after the one before it in both
//!   (that one was the smallest, and this one is smaller still, or equal with the same stream
//!   index). With keys every stream is sorted, so merging what is left of the streams gives
//!   the full merge's order with the left-out events taken away.
//! - **The window's ends.** A consumer reading `[lo, hi]` stops at the first event past `hi`
//!   and starts at the first at or after `lo`. Events whose key is past `hi` are all given
//!   out, so the consumer still meets the one it stops at; the first event of each class at or
//!   after `lo` is given out, so the consumer still meets the first event at or after `lo`.
//! - **The last event's time.** The consumer's range ends at the last event it read: the reader
//!   remembers the last event it left out at or after `lo` ([`StreamReader::last_left_out`]),
//!   which the consumer compares with the last one it took, in merge order.
//!
//! Giving out the first event of every class at or after `lo` also keeps what a consumer learns
//! from an event's mere presence (the CPUs a stream's events were seen on).

use std::sync::Arc;

use super::{clock_ns, Message, StreamReader};
use crate::error::Result;
use crate::fast::{HeaderValues, LttngHeader, ScanClass, ScanShape, ScanTable};
use crate::layout::StreamLayout;

/// Which events a [`StreamReader`] may leave out (see the module documentation).
#[derive(Debug, Clone)]
pub struct SkipRule {
    /// Per stream class position, per event class position ([`crate::Event::class_index`]):
    /// whether the consumer wants the class's events. Classes outside the table are wanted.
    pub wanted: Arc<Vec<Vec<bool>>>,
    /// The consumer's time window (ns from the stream's clock origin): it reads nothing before
    /// `lo` and stops at the first event after `hi`.
    pub lo: i64,
    /// End of the window (see `lo`).
    pub hi: i64,
}

/// A reader's skipping state.
#[derive(Debug)]
pub(super) struct Skipping {
    /// Per stream class and event class position: [`WANTED`] and [`SEEN`] bits.
    classes: Vec<Vec<u8>>,
    lo: i64,
    hi: i64,
    /// The largest message time so far (ns; `i64::MIN` for none): the merge key.
    key: i64,
    /// The last event left out at or after `lo`: (its key, `events_read` after it, its time).
    last_left: Option<(i64, u64, i64)>,
    /// `[lo, hi]` in cycles of the clock of a stream class (its position, first and last
    /// cycle values in the window).
    cycles_window: Option<(usize, u64, u64)>,
    /// What [`StreamReader::skip_run`] needs of the current packet.
    ready: Ready,
    /// The byte walk's table (see [`StreamReader::skip_run_with`]) for the stream class at
    /// position `walk_for`: per event class id, the bytes of the body of a class whose events
    /// are passed over in the window (not wanted, one already given out) when its body is a
    /// fixed run of whole bytes aligned on at most a byte; [`NO_WALK`] for the others.
    walk: Vec<u32>,
    walk_for: usize,
}

/// In [`Skipping::walk`]: an id the byte walk stops before.
const NO_WALK: u32 = u32::MAX;

/// What [`StreamReader::skip_run`] reads of the current packet and its stream class before
/// its loop: worked out when a packet is opened rather than once per event given out, which
/// is most events for an analysis.
#[derive(Debug, Clone, Copy, Default)]
struct Ready {
    /// The [`StreamReader::packet_gen`] it holds for: the packet, and so the file, the stream
    /// class and its clock. 0 for none: a reader in a packet has opened one, so counts at
    /// least 1. The window (`lo`, `hi`) is that of the [`Skipping`] holding it.
    packet_gen: u64,
    /// [`COMPACT`], [`LARGE`], [`OTHER`] or [`STOP`].
    kind: u8,
    /// The window in cycles of the packet's clock.
    c_lo: u64,
    c_hi: u64,
    /// The packet's content in the mapping (address, length in bytes); empty when the mapping
    /// lacks it. An address rather than a slice: the mapping is only replaced when a packet is
    /// opened, which makes `packet_gen` differ.
    content: (usize, usize),
}

/// Kinds of event header [`StreamReader::skip_run_with`] is specialised for.
const COMPACT: u8 = 0;
const LARGE: u8 = 1;
const OTHER: u8 = 2;
/// For [`Ready::kind`]: the packet's events all take the general path.
const STOP: u8 = 3;

/// Where [`StreamReader::skip_run`] stopped.
enum Run {
    /// Before an event [`StreamReader::next_message`] reads.
    Stopped,
    /// After an event it gave out, which [`StreamReader::event`] reads.
    Kept,
    /// Before an event to give out whose header it read, with a body the general path reads.
    General(HeaderValues),
}

/// The consumer wants the class.
const WANTED: u8 = 1;
/// An event of the class at or after `lo` was given out.
const SEEN: u8 = 2;

impl Skipping {
    pub(super) fn new(rule: &SkipRule) -> Skipping {
        Skipping {
            classes: rule
                .wanted
                .iter()
                .map(|row| row.iter().map(|&w| if w { WANTED } else { 0 }).collect())
                .collect(),
            lo: rule.lo,
            hi: rule.hi,
            key: i64::MIN,
            last_left: None,
            cycles_window: None,
            ready: Ready::default(),
            walk: Vec::new(),
            walk_for: usize::MAX,
        }
    }

    /// Makes [`Self::walk`] for stream class position `sc` of `table`.
    #[cold]
    #[inline(never)]
    fn make_walk(&mut self, sc: usize, sl: &StreamLayout, table: &ScanTable) {
        let row = self.classes.get(sc).map_or(&[][..], |r| &r[..]);
        self.walk.clear();
        self.walk.extend((0..table.ids() as u64).map(|id| {
            let passed = table
                .class(id)
                .and_then(|c| row.get(c.ev_idx))
                .is_some_and(|&state| state == SEEN);
            if passed {
                walk_bytes_of(sl, table, id)
            } else {
                NO_WALK
            }
        }));
        self.walk_for = sc;
    }

    /// Notes that the class of id `id` (in stream class position `sc`, of `table`) was
    /// given out for the first time in the window: from now on the byte walk may pass its
    /// events over unless it is wanted.
    #[cold]
    fn seen(&mut self, sc: usize, id: u64, state: u8, sl: &StreamLayout) {
        if self.walk_for != sc || state & WANTED != 0 {
            return;
        }
        if let (Some(slot), Some(table)) = (self.walk.get_mut(id as usize), &sl.scan) {
            *slot = walk_bytes_of(sl, table, id);
        }
    }
}

/// The body bytes of the class of id `id` in a [`Skipping::walk`] of `table` (of stream
/// layout `sl`) when its events are passed over: those of a fixed body of whole bytes aligned
/// on at most a byte (which starts right after a header ending on a byte), else [`NO_WALK`].
fn walk_bytes_of(sl: &StreamLayout, table: &ScanTable, id: u64) -> u32 {
    let Some(class) = table.class(id) else {
        return NO_WALK;
    };
    let bits = match class.shape {
        ScanShape::One => table.one_size(id),
        ScanShape::Fixed => match &sl.events.at(class.ev_idx).fixed_body {
            Some(b)
                if b.scopes
                    .iter()
                    .all(|s| s.align <= 8 && s.size_bits % 8 == 0) =>
            {
                b.scopes.iter().map(|s| s.size_bits).sum()
            }
            _ => u64::MAX,
        },
        _ => u64::MAX,
    };
    if bits.is_multiple_of(8) && bits / 8 < u64::from(NO_WALK) {
        (bits / 8) as u32
    } else {
        NO_WALK
    }
}

impl StreamReader {
    /// Leaves out the events `rule` allows (see the module documentation); None gives out
    /// every event again. For a merger's readers: [`crate::Merger::with_skip`] sets it.
    pub fn set_skip(&mut self, rule: Option<&SkipRule>) {
        self.skipping = rule.map(|r| Box::new(Skipping::new(r)));
    }

    /// The key the merger orders this reader's current message by when skipping: the largest
    /// time (ns) of every message read so far, this one included. `i64::MIN` before any.
    #[inline]
    pub fn merge_key(&self) -> i64 {
        self.skipping.as_ref().map_or(i64::MIN, |s| s.key)
    }

    /// The last event left out at or after the rule's `lo`: (its merge key, [`Self::events_read`]
    /// just after it, its time in ns).
    pub fn last_left_out(&self) -> Option<(i64, u64, i64)> {
        self.skipping.as_ref().and_then(|s| s.last_left)
    }

    /// [`Self::next`] for a skipping reader: the next message it gives out.
    #[inline(never)]
    pub(super) fn next_kept(&mut self) -> Option<Result<Message>> {
        if self.keep_next_wanted() {
            return Some(Ok(Message::Event));
        }
        loop {
            let run = if self.in_packet && self.pending.is_empty() && self.pos < self.content_bits {
                self.skip_run()
            } else {
                Run::Stopped
            };
            match run {
                Run::Kept => return Some(Ok(Message::Event)),
                // What `next_message` does with an event it cannot read by the fixed path, but
                // with the header already read (an error is left to `next_message` to report).
                Run::General(h) if self.decode_event_general(Some(h)).is_ok() => {
                    self.events_read += 1;
                }
                _ => match self.next_message()? {
                    Ok(Message::Event) => {}
                    other => {
                        if let (Ok(m), Some(s)) = (&other, self.skipping.as_deref_mut()) {
                            s.key = s.key.max(m.time_ns().unwrap_or(i64::MIN));
                        }
                        return Some(other);
                    }
                },
            }
            if self.keeps_event() {
                return Some(Ok(Message::Event));
            }
        }
    }

    /// Reads the next event when it is of a wanted class with a fixed body after an LTTng
    /// header, in order, in a packet [`Self::skip_run`] is ready for: most events an analysis
    /// keeps, read without the skipping loop's set-up (`next_kept` took a quarter fewer
    /// instructions on a real trace). False, having read nothing, for any other event.
    #[inline(always)]
    fn keep_next_wanted(&mut self) -> bool {
        // Field by field: the skipping state is written while the layout is read.
        let Some(s) = self.skipping.as_deref_mut() else {
            return false;
        };
        let ready = &s.ready;
        let large = match ready.kind {
            COMPACT => false,
            LARGE => true,
            _ => return false,
        };
        if ready.packet_gen != self.packet_gen
            || !self.in_packet
            || !self.pending.is_empty()
            || self.pos >= self.content_bits
        {
            return false;
        }
        // SAFETY: as in `skip_run_with`: taken from `self.map` for this `packet_gen`.
        let content =
            unsafe { std::slice::from_raw_parts(ready.content.0 as *const u8, ready.content.1) };
        let header = if large {
            LttngHeader::decode::<true>(content, self.pos, self.dec.clock)
        } else {
            LttngHeader::decode::<false>(content, self.pos, self.dec.clock)
        };
        let Some((id, ev_clock, h_end)) = header else {
            return false;
        };
        let sl = self.trace.layout.streams.at(self.sc_idx);
        let Some(class) = sl.scan.as_ref().and_then(|t| t.class(id)) else {
            return false;
        };
        let wanted = s
            .classes
            .get(self.sc_idx)
            .and_then(|row| row.get(class.ev_idx))
            .is_some_and(|c| c & WANTED != 0);
        let ordered = self.warned_regression || ev_clock >= self.last_cycles;
        if !wanted || !ordered {
            return false;
        }
        let Some(body) = &sl.events.at(class.ev_idx).fixed_body else {
            return false;
        };
        self.ev_at = [None; 4];
        self.ev_slots.clear();
        let after = body.place(h_end, &mut self.ev_slots, &mut self.ev_at);
        if after > self.content_bits {
            return false;
        }
        if self.lazy_header.get().is_some() {
            self.lazy_header.take();
        }
        if let Some(t) = clock_ns(self.ghz_offset_ns, self.clock.as_ref(), ev_clock) {
            s.key = s.key.max(t);
        }
        self.event_offset = (self.pos / 8) as usize;
        self.event_bit = self.pos;
        self.event_id = id;
        self.ev_idx = class.ev_idx;
        self.dec.clock = ev_clock;
        self.pos = after;
        self.last_cycles = ev_clock;
        self.cycles = ev_clock;
        self.events_read += 1;
        true
    }

    /// Whether the event just read is given out; notes it in the skipping state.
    #[inline(always)]
    fn keeps_event(&mut self) -> bool {
        let Some(t) = self.event_time_ns() else {
            return true;
        };
        let (sc, ev, events_read) = (self.sc_idx, self.ev_idx, self.events_read);
        let s = self.skipping.as_deref_mut().expect("a skipping reader");
        s.key = s.key.max(t);
        if s.key > s.hi {
            return true;
        }
        let Some(class) = s.classes.get_mut(sc).and_then(|row| row.get_mut(ev)) else {
            return true;
        };
        if *class & WANTED != 0 {
            return true;
        }
        if t >= s.lo {
            if *class & SEEN == 0 {
                *class |= SEEN;
                let state = *class;
                s.seen(sc, self.event_id, state, self.trace.layout.streams.at(sc));
                return true;
            }
            s.last_left = Some((s.key, events_read, t));
        }
        false
    }

    /// Passes over the events of the current packet that are left out, as long as they take
    /// the straight-line path: a compiled header, a body whose end the stream class's
    /// [`crate::fast::ScanTable`] finds, inside the content, a clock that does not go
    /// backwards for the first time. Stops before any other event, leaving it to
    /// [`Self::next_message`], which decides its fate (and reports what is wrong with it) —
    /// unless it is one to give out with a fixed-layout body: read here then, as
    /// [`Self::next_message`] would.
    ///
    /// Inlined in [`Self::next_kept`]: it runs once per event given out.
    #[inline(always)]
    fn skip_run(&mut self) -> Run {
        let kind = match self.skipping.as_deref() {
            Some(s) if s.ready.packet_gen == self.packet_gen => s.ready.kind,
            Some(_) => self.make_ready(),
            None => STOP,
        };
        // One loop per way of decoding the header, as the scan does.
        match kind {
            COMPACT => self.skip_run_with::<COMPACT>(),
            LARGE => self.skip_run_with::<LARGE>(),
            OTHER => self.skip_run_with::<OTHER>(),
            _ => Run::Stopped,
        }
    }

    /// Works out the skipping state's [`Ready`] for the current packet; returns its kind.
    #[cold]
    #[inline(never)]
    fn make_ready(&mut self) -> u8 {
        let sl = self.trace.layout.streams.at(self.sc_idx);
        let (ghz, clock_class) = (self.ghz_offset_ns, self.clock.as_ref());
        let Some(s) = self.skipping.as_deref_mut() else {
            return STOP;
        };
        let mut ready = Ready {
            packet_gen: self.packet_gen,
            kind: STOP,
            ..Ready::default()
        };
        // The window in cycles of this stream class's clock: no conversion per event.
        let window = match s.cycles_window {
            Some((sc, lo, hi)) if sc == self.sc_idx => Some((lo, hi)),
            _ => {
                let ns = |cycles: u64| clock_ns(ghz, clock_class, cycles);
                let w = cycle_window(&ns, s.lo, s.hi);
                if let Some((lo, hi)) = w {
                    s.cycles_window = Some((self.sc_idx, lo, hi));
                }
                w
            }
        };
        if let (Some(compiled), Some(_), Some(map), Some((c_lo, c_hi)), Some(_)) = (
            &sl.compiled_header,
            &sl.scan,
            self.map.as_deref(),
            window,
            s.classes.get(self.sc_idx),
        ) {
            let end = (self.packet_off as u64 + self.content_bits.div_ceil(8)) as usize;
            let end = end.min(map.len());
            ready.kind = match compiled.lttng() {
                Some(LttngHeader::Compact) => COMPACT,
                Some(LttngHeader::Large) => LARGE,
                None => OTHER,
            };
            ready.c_lo = c_lo;
            ready.c_hi = c_hi;
            let content = map.get(self.packet_off..end).unwrap_or(&[]);
            ready.content = (content.as_ptr() as usize, content.len());
        }
        s.ready = ready;
        ready.kind
    }

    /// [`Self::skip_run`] for headers of kind `KIND` ([`COMPACT`], [`LARGE`], [`OTHER`]).
    ///
    /// Runs once per event given out: what does not depend on the event stays out of the
    /// loop, and so does the clock conversion, done once on the way out.
    #[inline(always)]
    fn skip_run_with<const KIND: u8>(&mut self) -> Run {
        // Borrowed field by field: the loop reads the layout while it writes the event's slots.
        let StreamReader {
            trace,
            skipping,
            dec,
            ev_slots,
            ev_at,
            lazy_header,
            ..
        } = self;
        let sl = trace.layout.streams.at(self.sc_idx);
        let (Some(compiled), Some(table), Some(s)) =
            (&sl.compiled_header, &sl.scan, skipping.as_deref_mut())
        else {
            return Run::Stopped;
        };
        let header = |d: &[u8], pos: u64, clock: u64, none: u64| {
            let fast = match KIND {
                COMPACT => LttngHeader::decode::<false>(d, pos, clock),
                LARGE => LttngHeader::decode::<true>(d, pos, clock),
                _ => None,
            };
            fast.or_else(|| compiled.decode_id(d, pos, clock, none))
        };
        if s.key > s.hi {
            return Run::Stopped;
        }
        let Ready {
            c_lo,
            c_hi,
            content: (addr, len),
            ..
        } = s.ready;
        if KIND != OTHER && s.walk_for != self.sc_idx {
            s.make_walk(self.sc_idx, sl, table);
        }
        let walk = &s.walk[..];
        let Some(classes) = s.classes.get_mut(self.sc_idx) else {
            return Run::Stopped;
        };
        // The invariant below, checked where the tests run (debug builds).
        debug_assert!(self.map.as_deref().is_some_and(|m| {
            let r = m.as_ptr_range();
            r.start as usize <= addr && addr + len <= r.end as usize
        }));
        // SAFETY: `make_ready` took it from a slice of `self.map` for this `packet_gen`, and
        // the mapping is neither replaced nor dropped until the next packet is opened (which
        // changes `packet_gen`; a reader is inside a packet only once that is done).
        let content = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        let content_bits = self.content_bits;
        let check_regression = !self.warned_regression;
        let mut last = self.last_cycles;
        let (mut pos, mut clock) = (self.pos, dec.clock);
        // The largest clock value of the run (its events' keys follow from it).
        let mut top = 0u64;
        // The last event left out at or after `lo`: (`top` then, events read, its clock).
        let mut left: Option<(u64, u64, u64)> = None;
        let mut n = 0u64;
        let mut stop = Run::Stopped;
        let mut newly_seen = None;
        let mut decoded = None;
        while pos < content_bits {
            // The byte walk decoded the header of the event it stopped before.
            let next = decoded
                .take()
                .or_else(|| header(content, pos, clock, table.default_id));
            let Some((id, ev_clock, h_end)) = next else {
                break;
            };
            let Some(class) = table.class(id) else {
                break;
            };
            if check_regression && ev_clock < last {
                break;
            }
            let state = classes.get(class.ev_idx).copied().unwrap_or(WANTED);
            let t = top.max(ev_clock);
            let in_window = ev_clock >= c_lo;
            if state & WANTED != 0 || t > c_hi || (in_window && state & SEEN == 0) {
                let Some(body) = &sl.events.at(class.ev_idx).fixed_body else {
                    stop = Run::General(HeaderValues {
                        id: Some(id),
                        clock: ev_clock,
                        end: h_end,
                    });
                    break;
                };
                // Placed straight into the reader: an event it stops before is decoded again
                // from scratch.
                *ev_at = [None; 4];
                ev_slots.clear();
                let after = body.place(h_end, ev_slots, ev_at);
                if after > content_bits {
                    break;
                }
                if in_window {
                    if let Some(c) = classes.get_mut(class.ev_idx) {
                        if *c & SEEN == 0 {
                            *c |= SEEN;
                            newly_seen = Some((id, *c));
                        }
                    }
                }
                if lazy_header.get().is_some() {
                    lazy_header.take();
                }
                self.event_offset = (pos / 8) as usize;
                self.event_bit = pos;
                self.event_id = id;
                self.ev_idx = class.ev_idx;
                n += 1;
                top = t;
                last = ev_clock;
                clock = ev_clock;
                pos = after;
                stop = Run::Kept;
                break;
            }
            let after = match class.shape {
                ScanShape::One => Some(class.one.end(h_end)),
                ScanShape::Fixed => sl
                    .events
                    .at(class.ev_idx)
                    .fixed_body
                    .as_ref()
                    .map(|b| b.end(h_end)),
                ScanShape::Steps { entry } => {
                    steps_end(table, class, entry, dec.regs_mut(), content, h_end)
                }
                ScanShape::Fold => None,
            };
            let Some(after) = after.filter(|a| *a <= content_bits) else {
                break;
            };
            n += 1;
            top = t;
            if in_window {
                left = Some((t, n, ev_clock));
            }
            last = ev_clock;
            clock = ev_clock;
            pos = after;
            // The events after one left out are often left out too: most need no look at
            // their class (see `walk_bytes`). Not tried after the others: an event given out
            // ends the loop, and those left out the slow way are few.
            if KIND != OTHER && in_window && t <= c_hi {
                let (p, c, k, h) = if KIND == LARGE {
                    walk_bytes::<true>(content, content_bits, pos, clock, c_hi, walk)
                } else {
                    walk_bytes::<false>(content, content_bits, pos, clock, c_hi, walk)
                };
                decoded = h;
                if k > 0 {
                    n += k;
                    top = top.max(c);
                    left = Some((top, n, c));
                    (last, clock, pos) = (c, c, p);
                }
            }
        }
        if let Some((id, state)) = newly_seen {
            s.seen(self.sc_idx, id, state, sl);
        }
        if n == 0 {
            return stop;
        }
        let ns = |cycles: u64| clock_ns(self.ghz_offset_ns, self.clock.as_ref(), cycles);
        let key_at = |c: u64| ns(c).map_or(s.key, |k| s.key.max(k));
        if let Some((top_then, seq, c)) = left {
            s.last_left = Some((key_at(top_then), self.events_read + seq, ns(c).unwrap_or(0)));
        }
        // Written out rather than through `key_at`: one use inlined where every event given
        // out passes, instead of a call shared with the rare branch above.
        if let Some(k) = clock_ns(self.ghz_offset_ns, self.clock.as_ref(), top) {
            s.key = s.key.max(k);
        }
        dec.clock = clock;
        self.pos = pos;
        self.last_cycles = last;
        self.cycles = last;
        self.events_read += n;
        stop
    }
}

/// Passes over the events from bit `pos` of `content` (after an event that ended on a
/// byte, in the window, whose clock was `clock`) with an LTTng large (`LARGE`) or compact
/// header whose ids `walk` gives a body size, whose clock neither goes back nor passes
/// `c_hi`, and which end within `content_bits`. Returns where it stopped (a bit on a byte),
/// the clock of the last event passed, how many it passed and the header of the event it
/// stopped before (id, clock, end) when it could decode it.
///
/// What [`StreamReader::skip_run_with`]'s loop does for these events, without looking up
/// their classes: a load and a few compares per event instead of a few dozen instructions.
#[inline(always)]
fn walk_bytes<const LARGE: bool>(
    content: &[u8],
    content_bits: u64,
    mut pos: u64,
    mut clock: u64,
    c_hi: u64,
    walk: &[u32],
) -> (u64, u64, u64, Option<(u64, u64, u64)>) {
    let mut n = 0;
    loop {
        let header = LttngHeader::decode::<LARGE>(content, pos, clock);
        let Some((id, c, h_end)) = header else {
            return (pos, clock, n, None);
        };
        let bytes = walk.get(id as usize).copied().unwrap_or(NO_WALK);
        let after = h_end + u64::from(bytes) * 8;
        if bytes == NO_WALK || c < clock || c > c_hi || after > content_bits {
            return (pos, clock, n, header);
        }
        (pos, clock) = (after, c);
        n += 1;
    }
}

/// Where the body at bit `at` of `content` of a [`ScanShape::Steps`] class ends: out of the
/// skipping loop, which passes over few such events.
#[inline(never)]
fn steps_end(
    table: &ScanTable,
    class: &ScanClass,
    entry: u32,
    regs: &mut [i128],
    content: &[u8],
    at: u64,
) -> Option<u64> {
    match class.text.as_ref().and_then(|t| t.fold(content, at)) {
        Some((_, after)) => Some(after),
        None => table.skip_steps(entry, regs, content, at),
    }
}

/// The cycle values of a clock (`ns` converting them, monotonic) whose times fall in
/// `[lo, hi]`: (the smallest at or after `lo`, the largest at or before `hi`). None when
/// there are none at either end (the caller then converts every time).
fn cycle_window(ns: &impl Fn(u64) -> Option<i64>, lo: i64, hi: i64) -> Option<(u64, u64)> {
    // The smallest cycle value whose time passes `pred`, which holds from some value on.
    let first = |pred: &dyn Fn(i64) -> bool| -> Option<u64> {
        if !pred(ns(u64::MAX)?) {
            return None;
        }
        let (mut a, mut b) = (0u64, u64::MAX);
        while a < b {
            let m = a + (b - a) / 2;
            if pred(ns(m)?) {
                b = m;
            } else {
                a = m + 1;
            }
        }
        Some(a)
    };
    let c_lo = first(&|t| t >= lo)?;
    let c_hi = match first(&|t| t > hi) {
        Some(0) => return None,
        Some(c) => c - 1,
        None => u64::MAX,
    };
    Some((c_lo, c_hi))
}

#[cfg(test)]
mod tests {
    use super::cycle_window;
    use proptest::prelude::*;

    proptest! {
        /// The window in cycles holds exactly the cycle values whose times are in the window,
        /// for clocks slower and faster than 1 GHz and windows near both ends.
        #[test]
        fn cycle_window_is_exact(
            freq in 1u64..5_000_000_000,
            offset in -1_000_000_000i64..1_000_000_000,
            lo in -2_000_000i64..2_000_000,
            len in 0i64..3_000_000,
        ) {
            let ns = move |c: u64| -> Option<i64> {
                let v = offset as i128 + (c as i128 * 1_000_000_000) / freq as i128;
                Some(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
            };
            let hi = lo + len;
            match cycle_window(&ns, lo, hi) {
                Some((c_lo, c_hi)) => {
                    prop_assert!(ns(c_lo).unwrap() >= lo);
                    prop_assert!(c_lo == 0 || ns(c_lo - 1).unwrap() < lo);
                    prop_assert!(ns(c_hi).unwrap() <= hi);
                    prop_assert!(c_hi == u64::MAX || ns(c_hi + 1).unwrap() > hi);
                }
                None => prop_assert!(ns(0).unwrap() > hi || ns(u64::MAX).unwrap() < lo),
            }
        }
    }
}
