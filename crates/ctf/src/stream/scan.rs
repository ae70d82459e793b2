//! Reading a stream to fold every event, without handing out events one by one.
//!
//! [`StreamReader::next`] leaves each event readable through [`crate::Event`]: slots for its
//! scopes, the reader's fields updated. A consumer that only folds every field (`tracekit
//! count`) needs none of it. [`StreamReader::scan`] reads the events of a packet in one loop
//! that keeps its state in locals and folds each body straight from the header's end; the
//! moment anything is unusual (a packet boundary, a class without a fixed body, data too
//! short, a first timestamp regression, an error) it leaves the event to `next`, which
//! therefore still decides every message, warning and error. A sink that only counts
//! events per class ([`ScanSink::counts`]) lends its counters: the scan then reads headers
//! in order and folds bodies class by class ([`Packet::run_grouped`]).

use super::{Message, StreamReader};
use crate::decode::Decoder;
use crate::error::Result;
use crate::fast::{LttngHeader, ScanClass, ScanShape, ScanTable};
use crate::layout::{Layout, StreamLayout};

/// Receives the events [`StreamReader::scan`] reads.
pub trait ScanSink {
    /// One event: `class` as [`crate::Event::class_index`] gives it, its clock value in
    /// cycles, and [`crate::Event::fold_fields`] of it.
    fn event(&mut self, class: (usize, usize), cycles: u64, fold: u64);

    /// The last `n` events handed to [`Self::event`] are all those since the previous call:
    /// made before each [`Self::pause`], so that a count of events costs nothing per event.
    fn ran(&mut self, _n: u64) {}

    /// A run of events ended (at a packet's end or before an event read the general way):
    /// a place for work not worth doing per event.
    fn pause(&mut self) {}

    /// The counters of stream class `sc` (`counts` at least `classes` long, indexed by class
    /// position), when this sink does with each event exactly what a counting sink's
    /// [`Self::event`] does: `counts[class.1] += 1`, `checksum += fold` (wrapping),
    /// `max_cycles = max(max_cycles, cycles)`. The scan then updates them itself, in an
    /// order of its choosing, instead of calling [`Self::event`]. None (the default) for
    /// any other sink.
    fn counts(&mut self, _sc: usize, _classes: usize) -> Option<ScanCounts<'_>> {
        None
    }
}

/// What [`ScanSink::counts`] lends the scan.
#[derive(Debug)]
pub struct ScanCounts<'a> {
    /// Events per event class position of the stream class.
    pub counts: &'a mut [u64],
    /// Wrapping sum of [`crate::Event::fold_fields`] of the events.
    pub checksum: &'a mut u64,
    /// The largest event clock value seen (cycles).
    pub max_cycles: &'a mut u64,
}

impl StreamReader {
    /// Reads events, handing each to `sink`, up to the next message that is not an event:
    /// returns it (never [`Message::Event`]), or None at the end of the stream. The events,
    /// messages, warnings and errors are those [`Self::next`] gives, in the same order.
    /// [`Self::event`] means nothing after it.
    pub fn scan(&mut self, sink: &mut impl ScanSink) -> Option<Result<Message>> {
        loop {
            if self.in_packet && self.pending.is_empty() && self.pos < self.content_bits {
                self.scan_packet(sink);
            }
            match self.next()? {
                Ok(Message::Event) => {
                    let fold = self.event().fold_fields();
                    sink.event((self.sc_idx, self.ev_idx), self.cycles, fold);
                    sink.ran(1);
                    sink.pause();
                }
                other => return Some(other),
            }
        }
    }

    /// Reads the current packet's events while they take the straight-line path: a compiled
    /// header, a class the stream class's [`crate::fast::ScanTable`] folds, a body inside
    /// the content, a clock that does not go backwards for the first time. Stops before the
    /// first that does not, leaving it to [`Self::next`].
    #[inline(never)]
    fn scan_packet(&mut self, sink: &mut impl ScanSink) {
        let trace = self.trace.clone();
        let layout = &*trace.layout;
        let sl = layout.streams.at(self.sc_idx);
        let (Some(header), Some(table), Some(map)) =
            (&sl.compiled_header, &sl.scan, self.map.as_deref())
        else {
            return;
        };
        // What the general path decodes from (the content) and what `Event::fold_fields`
        // folds from (the packet): the same values, as long as reads stay in the content.
        let end = (self.packet_off as u64 + self.content_bits.div_ceil(8)) as usize;
        let content = map.get(self.packet_off..end.min(map.len())).unwrap_or(&[]);
        let pend = (self.packet_off + self.packet_len).min(map.len());
        let p = Packet {
            layout,
            sl,
            table,
            content,
            packet: &map[self.packet_off.min(pend)..pend],
            content_bits: self.content_bits,
            sc_idx: self.sc_idx,
            check_regression: !self.warned_regression,
        };
        // Without a previous event, no clock value is below it: 0 stands for none.
        let last = self.last_cycles;
        let none_id = table.default_id;
        let dec = &mut self.dec;
        let at = (self.pos, dec.clock, last);
        let mut runner = Runner {
            packet: &p,
            dec,
            sink,
            groups: &mut self.groups,
            compact: header.lttng() == Some(LttngHeader::Compact),
        };
        // One loop per way of decoding the header, so that the choice is not made per event.
        let r = match (header.lttng(), header.tag_cases()) {
            (Some(LttngHeader::Compact), _) => runner.run(at, |d, pos, clock| {
                match LttngHeader::decode::<false>(d, pos, clock) {
                    Some(h) => Some(h),
                    None => header.decode_id(d, pos, clock, none_id),
                }
            }),
            (Some(LttngHeader::Large), _) => runner.run(at, |d, pos, clock| {
                match LttngHeader::decode::<true>(d, pos, clock) {
                    Some(h) => Some(h),
                    None => header.decode_id(d, pos, clock, none_id),
                }
            }),
            (None, Some(cases)) => runner.run(at, |d, pos, clock| {
                match cases.decode_id(d, pos, clock, none_id) {
                    Some(h) => Some(h),
                    None => header.decode_id(d, pos, clock, none_id),
                }
            }),
            (None, None) => {
                runner.run(at, |d, pos, clock| header.decode_id(d, pos, clock, none_id))
            }
        };
        let Some((pos, last, start, n)) = r else {
            return;
        };
        let sink = runner.sink;
        sink.ran(n);
        sink.pause();
        // The reader's state as `next` would have left it after the last of these events.
        self.pos = pos;
        self.dec.clock = last;
        self.last_cycles = last;
        self.cycles = last;
        self.events_read += n;
        let id = header
            .decode_id(content, start, 0, none_id)
            .map_or(none_id, |h| h.0);
        self.event_id = id;
        if let Some(class) = table.class(id) {
            self.ev_idx = class.ev_idx;
        }
        self.event_offset = (start / 8) as usize;
        self.event_bit = start;
        self.ev_slots.clear();
        self.ev_at = [None; 4];
        self.lazy_header.take();
    }
}

/// Per class id, the header ends of the events of one packet whose bodies a counting scan
/// folds class by class ([`Packet::run_grouped`]), and the ids that have any.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    /// Byte offsets in the packet (the grouped scan only sets aside bodies that start on a
    /// byte): half the memory traffic of bit positions.
    by_id: Vec<Vec<u32>>,
    touched: Vec<usize>,
    /// Those of events with a compact header ([`walk_compact`]): 32 KiB, made by the first
    /// grouped scan (readers that hand events out one by one never need them).
    batches: Option<Box<Batches>>,
}

/// Runs the scan of a packet the sink's way: grouped for a counting sink, event by event
/// otherwise.
struct Runner<'r, 'a, S> {
    packet: &'r Packet<'a>,
    dec: &'r mut Decoder,
    sink: &'r mut S,
    groups: &'r mut Groups,
    /// Whether the header is LTTng's compact one: the grouped scan then walks from event to
    /// event in [`walk_compact`].
    compact: bool,
}

impl<S: ScanSink> Runner<'_, '_, S> {
    #[inline(always)]
    fn run(
        &mut self,
        at: (u64, u64, u64),
        decode: impl Fn(&[u8], u64, u64) -> Option<(u64, u64, u64)>,
    ) -> Option<(u64, u64, u64, u64)> {
        let p = self.packet;
        // Body offsets are set aside as 32-bit byte offsets: packets of 4 GiB and more (none
        // seen) are read event by event.
        let small = p.packet.len() <= u32::MAX as usize;
        let counts = if small {
            self.sink.counts(p.sc_idx, p.sl.events.len())
        } else {
            None
        };
        match counts {
            Some(c) if p.check_regression => {
                p.run_grouped::<true>(self.dec, c, self.groups, self.compact, at, decode)
            }
            Some(c) => p.run_grouped::<false>(self.dec, c, self.groups, self.compact, at, decode),
            None => p.run(self.dec, self.sink, at, decode),
        }
    }
}

/// What the scan of one packet reads from.
struct Packet<'a> {
    layout: &'a Layout,
    sl: &'a StreamLayout,
    table: &'a ScanTable,
    /// The packet's content, which the general path decodes from.
    content: &'a [u8],
    /// The whole packet, which `Event::fold_fields` folds from.
    packet: &'a [u8],
    content_bits: u64,
    sc_idx: usize,
    check_regression: bool,
}

impl Packet<'_> {
    /// The scan loop from `(pos, clock, last)` (the clock before the header at `pos`, the
    /// last event's clock value), `decode` giving a header's id, clock and end. Returns the
    /// position after the last event read, its clock value, its start and the number of
    /// events read; None when it read none.
    #[inline(always)]
    fn run(
        &self,
        dec: &mut Decoder,
        sink: &mut impl ScanSink,
        (mut pos, mut clock, mut last): (u64, u64, u64),
        decode: impl Fn(&[u8], u64, u64) -> Option<(u64, u64, u64)>,
    ) -> Option<(u64, u64, u64, u64)> {
        let table = self.table;
        // The first regression stops the loop: none when it was reported already.
        let keep = if self.check_regression { u64::MAX } else { 0 };
        last &= keep;
        // Where the last event read starts: its id and class are found again from there
        // at the end rather than kept through the loop.
        let (mut start, mut n) = (pos, 0u64);
        while pos < self.content_bits {
            let Some((id, now, h_end)) = decode(self.content, pos, clock) else {
                break;
            };
            let Some(class) = table.class(id) else {
                break;
            };
            let Some((fold, after)) = self.fold_body(class, dec, h_end) else {
                break;
            };
            if after > self.content_bits || now < last {
                break;
            }
            sink.event((self.sc_idx, class.ev_idx), now, fold);
            start = pos;
            last = now & keep;
            clock = now;
            pos = after;
            n += 1;
        }
        (n > 0).then_some((pos, clock, start, n))
    }

    /// [`Self::run`] for a counting sink. The events are read in order, but for those of
    /// [`ScanShape::One`] classes aligned on at most a byte (most of LTTng's) only the
    /// header: one table load gives the body's size, so that each event's start waits on
    /// two loads (its header, its size), not on a walk through its class. Their bodies are
    /// then folded class by class, each class's loop running the same way many times
    /// instead of branching on the class of every event. The fold is a wrapping sum: its
    /// order does not matter. `CHECK`: whether a first clock regression stops the loop
    /// ([`Self::check_regression`]); the clock then never goes back, and its largest value
    /// is the last event's.
    #[inline(always)]
    fn run_grouped<const CHECK: bool>(
        &self,
        dec: &mut Decoder,
        c: ScanCounts,
        groups: &mut Groups,
        compact: bool,
        (pos, clock, last): (u64, u64, u64),
        decode: impl Fn(&[u8], u64, u64) -> Option<(u64, u64, u64)>,
    ) -> Option<(u64, u64, u64, u64)> {
        let table = self.table;
        let counts = c.counts.get_mut(..self.sl.events.len())?;
        let mut w = WalkState {
            pos,
            clock,
            // Not checked: none.
            last: if CHECK { last } else { 0 },
            start: pos,
            n: 0,
            max: *c.max_cycles,
        };
        let Groups {
            by_id,
            touched,
            batches,
        } = groups;
        if by_id.len() < table.ids() {
            by_id.resize_with(table.ids(), Vec::new);
        }
        let batches = batches.get_or_insert_with(Box::default);
        if compact {
            batches.prepare(self.sc_idx, table);
        }
        let mut out = WalkOut {
            dec,
            counts,
            sum: 0,
            batches,
        };
        while w.pos < self.content_bits {
            if compact {
                walk_compact::<CHECK>(self, &mut out, &mut w);
                if w.pos >= self.content_bits {
                    break;
                }
            }
            // The general way, for one event (each event when the header is not compact).
            let Some((id, now, h_end)) = decode(self.content, w.pos, w.clock) else {
                break;
            };
            let size = table.one_size(id);
            // The end and clock checks are in both arms: one check after them, with a branch
            // on what to record, runs slower.
            let after = if size != u64::MAX && h_end.is_multiple_of(8) {
                let after = h_end + size;
                if after > self.content_bits || now < w.last {
                    break;
                }
                // `one_size` knows the id: it is below the table's length.
                let group = &mut by_id[id as usize];
                if group.is_empty() {
                    touched.push(id as usize);
                }
                // On a byte and inside a packet below 4 GiB (`Runner::run`).
                group.push((h_end / 8) as u32);
                after
            } else {
                let Some(class) = table.class(id) else {
                    break;
                };
                let Some((fold, after)) = self.fold_body(class, out.dec, h_end) else {
                    break;
                };
                if after > self.content_bits || now < w.last {
                    break;
                }
                out.sum = out.sum.wrapping_add(fold);
                out.counts[class.ev_idx] += 1;
                after
            };
            if !CHECK {
                w.max = w.max.max(now);
            }
            w.start = w.pos;
            if CHECK {
                w.last = now;
            }
            w.clock = now;
            w.pos = after;
            w.n += 1;
        }
        if CHECK && w.n > 0 {
            w.max = w.max.max(w.clock);
        }
        self.fold_batches(&mut out);
        for id in touched.drain(..) {
            let fold = self.fold_set_aside(out.dec, out.counts, id, &by_id[id]);
            out.sum = out.sum.wrapping_add(fold);
            by_id[id].clear();
        }
        *c.checksum = c.checksum.wrapping_add(out.sum);
        *c.max_cycles = w.max;
        (w.n > 0).then_some((w.pos, w.clock, w.start, w.n))
    }

    /// Folds and counts the bodies set aside at the bytes `ats` of the packet for id `id`.
    fn fold_set_aside(&self, dec: &mut Decoder, counts: &mut [u64], id: usize, ats: &[u32]) -> u64 {
        let Some(class) = self.table.class(id as u64) else {
            return 0;
        };
        counts[class.ev_idx] += ats.len() as u64;
        // A body of one fixed scope always folds, the general way near the end.
        class.one.fold_each(self.packet, ats, |at| {
            self.fold_other(class, dec, at).map_or(0, |f| f.0)
        })
    }

    /// Folds the body at bit `at` of `class`: by its [`ScanShape::One`] word loop where that
    /// applies (classes of other shapes have a body that never folds), out of line
    /// otherwise. None where the general path must read the event.
    #[inline(always)]
    fn fold_body(&self, class: &ScanClass, dec: &mut Decoder, at: u64) -> Option<(u64, u64)> {
        let one = class.one.fold(self.packet, at);
        one.or_else(|| self.fold_other(class, dec, at))
    }

    /// Folds the body at bit `at` of a [`ScanShape::Steps`] class: without the step loop
    /// where it is a string between runs ([`ScanClass::text`]).
    #[inline(always)]
    fn fold_steps(
        &self,
        class: &ScanClass,
        entry: u32,
        dec: &mut Decoder,
        at: u64,
    ) -> Option<(u64, u64)> {
        let mut steps = || {
            self.table
                .fold_steps(entry, dec.regs_mut(), self.content, at)
        };
        match &class.text {
            Some(t) => t.fold(self.content, at).or_else(steps),
            None => steps(),
        }
    }

    /// Folds the body at bit `at` of a class [`ScanShape::One`]'s word loop does not fold
    /// (or not there): out of line, so that the scan loop keeps its registers for that
    /// common case. None where the general path must read the event.
    #[inline(never)]
    fn fold_other(&self, class: &ScanClass, dec: &mut Decoder, at: u64) -> Option<(u64, u64)> {
        let (layout, sl, content) = (self.layout, self.sl, self.content);
        let el = sl.events.at(class.ev_idx);
        match class.shape {
            ScanShape::One | ScanShape::Fixed => {
                Some(el.fixed_body.as_ref()?.place_and_fold(at, self.packet))
            }
            ScanShape::Steps { entry } => self.fold_steps(class, entry, dec, at),
            ScanShape::Fold => {
                let (mut p, mut acc) = (at, 0u64);
                for node in [sl.event_common_context, el.context, el.payload]
                    .into_iter()
                    .flatten()
                {
                    acc = acc.wrapping_add(dec.fold(layout, node, content, &mut p).ok()?);
                }
                Some((acc, p))
            }
        }
    }
}

/// The state of [`Packet::run_grouped`]'s walk: the position, the clock before the header
/// there, the last event's clock value (0 when not checked), where the last event read
/// starts, the events read, the largest clock value (when not checked).
struct WalkState {
    pos: u64,
    clock: u64,
    last: u64,
    start: u64,
    n: u64,
    max: u64,
}

/// Events of one class [`walk_compact`] sets aside before folding their bodies together.
const BATCH: usize = 256;

/// Batches [`Batches`] holds at most: one per compact id, and as many for ids read from
/// extended headers as a kernel trace uses classes (past that, those ids' bodies are
/// folded one by one).
const MAX_SLOTS: usize = 160;

/// [`ExtEntry::slot`] of an id that has no batch yet.
const NO_SLOT: u32 = u32::MAX;

/// What [`walk_compact`] does with an event of one id after an LTTng extended header.
#[derive(Debug, Clone, Copy)]
struct ExtEntry {
    /// Bytes of such an event (13 of header, its body), when its body is one the batches
    /// take; 0 otherwise (then folded on the spot).
    bytes: u32,
    /// Its batch, [`NO_SLOT`] until its first event.
    slot: u32,
}

/// Batches of events whose bodies [`walk_compact`] has set aside, each the header ends (byte
/// offsets in the packet) of up to [`BATCH`] events of one id: batch `id` for each compact
/// id (below 31, and for the same ids after extended headers), then one per other id as its
/// first event comes. Folded when full, while the packet's bytes they point at are still in
/// the cache, and at the end of each run ([`Packet::fold_batches`]).
#[derive(Debug)]
pub(crate) struct Batches {
    /// The first 32, in arrays: the compact loop indexes them by a 5-bit id without bounds
    /// checks.
    at: [[u32; BATCH]; 32],
    len: [u16; 32],
    /// Batch `32 + i` of other ids, and its id.
    more: Vec<([u32; BATCH], u16, u32)>,
    /// Per id of the stream class [`Self::sc`], what an extended header of that id leads to.
    ext: Vec<ExtEntry>,
    /// The stream class `ext` was made for.
    sc: Option<usize>,
}

impl Default for Batches {
    fn default() -> Self {
        Batches {
            at: [[0; BATCH]; 32],
            len: [0; 32],
            more: Vec::new(),
            ext: Vec::new(),
            sc: None,
        }
    }
}

impl Batches {
    /// Makes [`Self::ext`] for stream class `sc` (when it was made for another): the batches
    /// are empty between runs.
    fn prepare(&mut self, sc: usize, table: &ScanTable) {
        if self.sc == Some(sc) {
            return;
        }
        self.more.clear();
        self.ext = (0..table.ids())
            .map(|id| {
                let bits = table.one_size(id as u64);
                let bytes = match u32::try_from(bits / 8) {
                    Ok(b) if bits.is_multiple_of(8) && b < u32::MAX - 13 => b + 13,
                    _ => 0,
                };
                let slot = if id < 31 { id as u32 } else { NO_SLOT };
                ExtEntry { bytes, slot }
            })
            .collect();
        self.sc = Some(sc);
    }

    /// A batch for extended id `id`, made on its first event; None when all are taken
    /// (its events are then folded one by one).
    #[cold]
    #[inline(never)]
    fn new_slot(&mut self, id: usize) -> Option<u32> {
        let e = self.ext.get_mut(id)?;
        if 32 + self.more.len() >= MAX_SLOTS {
            e.bytes = 0;
            return None;
        }
        e.slot = (32 + self.more.len()) as u32;
        self.more.push(([0; BATCH], 0, id as u32));
        Some(e.slot)
    }

    /// Adds the header end `at` to batch `slot`: whether it is now full (its length then
    /// left at [`BATCH`] - 1, for [`Packet::fold_batch`]).
    #[inline(always)]
    fn push(&mut self, slot: usize, at: u32) -> bool {
        let (batch, len) = if slot < 32 {
            (&mut self.at[slot], &mut self.len[slot])
        } else {
            let (b, l, _) = &mut self.more[slot - 32];
            (b, l)
        };
        let n = usize::from(*len);
        batch[n % BATCH] = at;
        if n + 1 == BATCH {
            return true;
        }
        *len = n as u16 + 1;
        false
    }

    /// The id of batch `slot`, its length and its header ends.
    fn batch(&mut self, slot: usize) -> (usize, &mut u16, &[u32; BATCH]) {
        if slot < 32 {
            (slot, &mut self.len[slot], &self.at[slot])
        } else {
            let (b, l, id) = &mut self.more[slot - 32];
            (*id as usize, l, b)
        }
    }

    /// Batches in all.
    fn slots(&self) -> usize {
        32 + self.more.len()
    }
}

/// What [`walk_compact`] adds events to.
struct WalkOut<'o> {
    dec: &'o mut Decoder,
    counts: &'o mut [u64],
    sum: u64,
    batches: &'o mut Batches,
}

/// [`Packet::run_grouped`]'s walk over events with LTTng's compact event header (5-bit id
/// below 31 and 27-bit clock, or id 31 then an extended header: 32-bit id, 64-bit clock),
/// a kernel trace's events, from byte to byte. The body of an event of a
/// [`ScanShape::One`] class aligned on at most a byte and of whole bytes (one table load
/// gives the event's length) is set aside in a [`Batches`], folded with others of its
/// class; any other body (strings, sequences, variants) is folded on the spot, out of line,
/// instead of leaving the walk. Returns before the first event the general way must read
/// (a class the scan leaves to it, a body past the end, that does not fold or does not end
/// on a byte, an extended header's clock value below the last event's when that is
/// checked). Out of line, with the compact ids looked up in arrays of 32 without bounds
/// checks, so that the loop keeps most of its state in registers. A 27-bit clock value
/// never takes the clock back (it wraps forward): the loop counts the wraps and makes the
/// clock only at extended headers and at the end; the regression check and the largest
/// clock value are made there too, not at every event.
#[inline(never)]
fn walk_compact<const CHECK: bool>(p: &Packet, out: &mut WalkOut, w: &mut WalkState) {
    const MASK: u64 = (1 << 27) - 1;
    // The clock before the first event is below the last event's: the caller reads it
    // (and stops there, for a first regression). The walk goes from byte to byte: it
    // starts on one, and stops before an event that would not end on one.
    if (CHECK && w.last > w.clock) || !w.pos.is_multiple_of(8) {
        return;
    }
    // Nor where the clock could wrap past 2^64 in this packet (each event at most once
    // past 2^27), which the general way reads as going back: only in damaged packets.
    let most_wraps = (p.content.len() as u64 / 4 + 1) << 27;
    if w.clock.checked_add(most_wraps).is_none() {
        return;
    }
    let content = p.content;
    // Events start below `begin_end` and end at or below `end` (bytes).
    let (begin_end, end) = (p.content_bits.div_ceil(8), p.content_bits / 8);
    let bytes = p.table.compact_bytes();
    let mut at = w.pos / 8;
    let mut start = w.start;
    let mut n = 0u64;
    // The clock is `high + (wraps << 27) + low`: its bits above the 27 low ones at the last
    // extended header (or the start), how many times the low ones wrapped since, and them.
    let mut high = w.clock & !MASK;
    let mut low = w.clock & MASK;
    let mut wraps = 0u64;
    // The largest clock value before the last extended header (not checked: the clock may
    // go back there).
    let mut max = 0u64;
    let batches = &mut *out.batches;
    // An inner loop over compact headers, the registers its own; an extended header leaves
    // it for the outer one.
    'walk: loop {
        loop {
            if at >= begin_end {
                break 'walk;
            }
            let Some(word) = content.get(at as usize..at as usize + 4) else {
                break 'walk;
            };
            let lo = u32::from_le_bytes(word.try_into().unwrap_or_default());
            let id = (lo & 31) as usize;
            let size = bytes[id];
            let next = if size != 0 {
                let next = at + u64::from(size);
                if next > end {
                    break 'walk;
                }
                let len = usize::from(batches.len[id]);
                // Inside a packet below 4 GiB (`Runner::run`).
                batches.at[id][len % BATCH] = at as u32 + 4;
                if len + 1 == BATCH {
                    out.sum = out
                        .sum
                        .wrapping_add(p.fold_batch(out.dec, out.counts, batches, id, BATCH));
                } else {
                    batches.len[id] = len as u16 + 1;
                }
                next
            } else if id != 31 {
                let Some((fold, after)) = p.fold_unbatched(out.dec, out.counts, id, at * 8 + 32)
                else {
                    break 'walk;
                };
                out.sum = out.sum.wrapping_add(fold);
                after / 8
            } else {
                break;
            };
            let raw = u64::from(lo >> 5);
            wraps += u64::from(raw < low);
            low = raw;
            start = at * 8;
            at = next;
            n += 1;
        }
        // An extended header at `at`: id 31 (a byte), the id, the clock value.
        let Some(h) = content.get(at as usize + 1..at as usize + 13) else {
            break;
        };
        let ext_id = u32::from_le_bytes(h[..4].try_into().unwrap_or_default()) as usize;
        let now = u64::from_le_bytes(h[4..].try_into().unwrap_or_default());
        let clock = high + (wraps << 27) + low;
        if (CHECK && now < clock) || now.checked_add(most_wraps).is_none() {
            break;
        }
        let e = batches.ext.get(ext_id).copied();
        let slot = match e {
            Some(e) if e.bytes != 0 => match e.slot {
                NO_SLOT => batches.new_slot(ext_id),
                s => Some(s),
            },
            _ => None,
        };
        let next = match (slot, e) {
            (Some(slot), Some(e)) => {
                let next = at + u64::from(e.bytes);
                if next > end {
                    break;
                }
                // Inside a packet below 4 GiB (`Runner::run`).
                if batches.push(slot as usize, at as u32 + 13) {
                    let f = p.fold_batch(out.dec, out.counts, batches, slot as usize, BATCH);
                    out.sum = out.sum.wrapping_add(f);
                }
                next
            }
            _ => {
                let Some((fold, after)) =
                    p.fold_unbatched(out.dec, out.counts, ext_id, at * 8 + 104)
                else {
                    break;
                };
                out.sum = out.sum.wrapping_add(fold);
                after / 8
            }
        };
        // The clock before the walk's first event may be a packet's beginning, not an
        // event's clock value.
        if !CHECK && n > 0 {
            max = max.max(clock);
        }
        high = now & !MASK;
        low = now & MASK;
        wraps = 0;
        start = at * 8;
        at = next;
        n += 1;
    }
    if n > 0 {
        // Below 2^64 (checked at the start and at each extended header).
        let clock = high + (wraps << 27) + low;
        w.pos = at * 8;
        w.clock = clock;
        w.start = start;
        w.n += n;
        if CHECK {
            w.last = clock;
        } else {
            w.max = w.max.max(max).max(clock);
        }
    }
}

impl Packet<'_> {
    /// Folds the first `len` bodies set aside in batch `slot` (and counts them), and
    /// empties it.
    #[inline(never)]
    fn fold_batch(
        &self,
        dec: &mut Decoder,
        counts: &mut [u64],
        batches: &mut Batches,
        slot: usize,
        len: usize,
    ) -> u64 {
        let (id, l, at) = batches.batch(slot);
        *l = 0;
        self.fold_set_aside(dec, counts, id, &at[..len])
    }

    /// Folds and counts the body after the event header of id `id` ending at bit `h_end`
    /// when it is not one [`walk_compact`] sets aside: its fold and end; None where the
    /// general path must read the event (a class left to it, a body past the end, that
    /// does not fold or does not end on a byte).
    #[inline(never)]
    fn fold_unbatched(
        &self,
        dec: &mut Decoder,
        counts: &mut [u64],
        id: usize,
        h_end: u64,
    ) -> Option<(u64, u64)> {
        let class = self.table.class(id as u64)?;
        // Most of these are bodies of steps (strings, sequences, variants): straight to
        // them, not through `fold_body`'s attempt at a fixed body.
        let (fold, after) = match class.shape {
            ScanShape::Steps { entry } => self.fold_steps(class, entry, dec, h_end)?,
            _ => self.fold_body(class, dec, h_end)?,
        };
        if after > self.content_bits || !after.is_multiple_of(8) {
            return None;
        }
        counts[class.ev_idx] += 1;
        Some((fold, after))
    }

    /// Folds what the batches hold (at the end of a run: they point into this packet).
    fn fold_batches(&self, out: &mut WalkOut) {
        for slot in 0..out.batches.slots() {
            let len = usize::from(*out.batches.batch(slot).1);
            if len > 0 {
                let fold = self.fold_batch(out.dec, out.counts, out.batches, slot, len);
                out.sum = out.sum.wrapping_add(fold);
            }
        }
    }
}
