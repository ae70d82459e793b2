//! Reading one data stream: packets, then events, with loss accounting and error recovery.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::decode::{DecodeError, Decoder, Slot};
use crate::error::{Error, Result};
use crate::fast::HeaderValues;
use crate::field::FieldView;
use crate::index::PacketEntry;
use crate::layout::{EventLayout, Layout, NodeId, StreamLayout};
use crate::trace::{map_file, FileIndex, Reading, Trace};

mod scan;
mod skip;
pub use scan::{ScanCounts, ScanSink};
pub use skip::SkipRule;

/// Granularity of giving read pages back (a multiple of the page size).
const RELEASE_CHUNK: usize = 8 << 20;

/// Magic number of CTF data packets.
pub const PACKET_MAGIC: u64 = 0xC1FC_1FC1;

/// What a stream reader yields besides events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// An event: read it with [`StreamReader::event`].
    Event,
    /// The tracer discarded `count` events between two times (ns from origin).
    DiscardedEvents {
        /// Number of events discarded.
        count: u64,
        /// Start of the interval (ns from origin), when known.
        begin_ns: Option<i64>,
        /// End of the interval (ns from origin), when known.
        end_ns: Option<i64>,
    },
    /// `count` packets are missing (packet sequence number gap).
    DiscardedPackets {
        /// Number of packets missing.
        count: u64,
        /// Start of the interval (ns from origin), when known.
        begin_ns: Option<i64>,
        /// End of the interval (ns from origin), when known.
        end_ns: Option<i64>,
    },
}

impl Message {
    /// Time used to order this message among others.
    pub fn time_ns(&self) -> Option<i64> {
        match self {
            Message::Event => None,
            Message::DiscardedEvents { begin_ns, .. }
            | Message::DiscardedPackets { begin_ns, .. } => *begin_ns,
        }
    }
}

/// Header facts of a stream file's first packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FirstPacket {
    pub stream_class_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub ts_begin: Option<u64>,
    /// The packet is not of this trace (bad magic): its ids mean nothing, so the file must not
    /// be chained with the trace's own files.
    pub foreign: bool,
}

/// How many bytes of a file [`probe_first_packet`] reads first: LTTng's packet header and
/// context take under 100.
const PROBE_BYTES: usize = 4096;

/// Decodes the packet header and context of a file's first packet (None for an empty file).
///
/// The file's start is read into a buffer rather than mapped: a mapping, its page fault and
/// its unmapping cost more than a read of one page, for every stream file of the trace. A
/// header and context larger than that buffer are read from a mapping of the whole file.
pub(crate) fn probe_first_packet(trace: &Trace, path: &Path) -> Result<Option<FirstPacket>> {
    let mut buf = [0u8; PROBE_BYTES];
    let got = read_start(path, &mut buf)?;
    if got == 0 {
        return Ok(None);
    }
    match probe_bytes(trace, path, &buf[..got]) {
        Err(Error::Decode { .. }) if got == PROBE_BYTES => {
            let Some(map) = map_file(path, Reading::Start)? else {
                return Ok(None);
            };
            probe_bytes(trace, path, &map).map(Some)
        }
        r => r.map(Some),
    }
}

/// Reads the start of file `path` into `buf`, as much as fits; returns the number of bytes read.
fn read_start(path: &Path, buf: &mut [u8]) -> Result<usize> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // Only the bytes asked for: a read-ahead here would cache the file's start in small
    // folios, and the whole read that follows (a mapping, its own read-ahead state) would
    // find them and read on in small folios too (see `trace::map_file`).
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: an open descriptor; the call only advises the kernel.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
    }
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(got)
}

/// [`probe_first_packet`] on the file's first bytes `map`.
fn probe_bytes(trace: &Trace, path: &Path, map: &[u8]) -> Result<FirstPacket> {
    let layout = &trace.layout;
    let mut dec = Decoder::new(layout);
    let mut slots = Vec::new();
    let mut pos = 0u64;
    let err = |e: DecodeError| Error::Decode {
        path: path.to_path_buf(),
        offset: e.bit / 8,
        message: e.message,
    };
    if let Some(ph) = layout.packet_header {
        dec.decode(layout, ph, map, &mut pos, &mut slots)
            .map_err(err)?;
    }
    if dec.specials.magic.is_some_and(|m| m != PACKET_MAGIC) {
        return Ok(FirstPacket {
            stream_class_id: None,
            stream_id: None,
            ts_begin: None,
            foreign: true,
        });
    }
    let sc_id = dec.specials.stream_class_id;
    if let Some(sl) = stream_layout(layout, sc_id) {
        if let Some(pc) = sl.packet_context {
            dec.decode(layout, pc, map, &mut pos, &mut slots)
                .map_err(err)?;
        }
    }
    Ok(FirstPacket {
        stream_class_id: sc_id,
        stream_id: dec.specials.stream_id,
        ts_begin: dec.specials.ts_begin,
        foreign: false,
    })
}

fn stream_layout(layout: &Layout, id: Option<u64>) -> Option<&StreamLayout> {
    match id {
        Some(id) => layout.streams.get(id),
        None if layout.streams.len() == 1 => Some(layout.streams.at(0)),
        None => layout.streams.get(0),
    }
}

/// The bytes of the stream file being read: a file map, or a buffer given to
/// [`StreamReader::from_bytes`].
enum StreamData {
    Mapped(Mmap),
    Owned(Arc<[u8]>),
}

impl std::ops::Deref for StreamData {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            StreamData::Mapped(m) => m,
            StreamData::Owned(b) => b,
        }
    }
}

/// A clock value in ns from the clock origin, clamped to i64 (see [`clock_ns_exact`]).
#[inline(always)]
fn clock_ns(
    ghz_offset_ns: Option<i128>,
    clock: Option<&crate::ir::ClockClass>,
    cycles: u64,
) -> Option<i64> {
    let ns = clock_ns_exact(ghz_offset_ns, clock, cycles)?;
    Some(ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

/// A clock value in ns from the clock origin: one addition for a 1 GHz clock
/// (`ghz_offset_ns`, its offset in ns), else `clock`'s conversion; None without a clock.
#[inline(always)]
fn clock_ns_exact(
    ghz_offset_ns: Option<i128>,
    clock: Option<&crate::ir::ClockClass>,
    cycles: u64,
) -> Option<i128> {
    Some(match ghz_offset_ns {
        Some(off) => off + cycles as i128,
        None => clock?.cycles_to_ns(cycles),
    })
}

/// Sequential reader of one data stream (all its files, in order).
pub struct StreamReader {
    trace: Arc<Trace>,
    stream: usize,
    file_idx: usize,
    map: Option<StreamData>,
    /// Bytes of the current file whose pages were given back to the kernel.
    released: usize,
    dec: Decoder,
    /// Buffers of [`StreamReader::scan`] for counting sinks.
    groups: scan::Groups,
    /// Byte offset of the current packet in the current file.
    packet_off: usize,
    /// Packet length in bytes as declared.
    packet_len: usize,
    /// End of the packet's content, in bits from the packet start.
    content_bits: u64,
    /// Current bit position from the packet start.
    pos: u64,
    in_packet: bool,
    truncated: bool,
    stream_class_id: u64,
    sc_idx: usize,
    ev_idx: usize,
    clock: Option<crate::ir::ClockClass>,
    /// For a 1 GHz clock: ns of its offset, so that a timestamp is one addition away.
    ghz_offset_ns: Option<i128>,
    pkt_slots: Vec<Slot>,
    packet_header_at: Option<usize>,
    packet_context_at: Option<usize>,
    ev_slots: Vec<Slot>,
    ev_at: [Option<usize>; 4],
    event_id: u64,
    event_offset: usize,
    /// Bit position of the current event in its packet.
    event_bit: u64,
    /// Header slots of the current event, decoded on demand when the header was read by the
    /// straight-line path.
    lazy_header: std::cell::OnceCell<Vec<Slot>>,
    cycles: u64,
    /// The last event's clock; 0 before the first (no clock is below it, so that a regression
    /// is one compare).
    last_cycles: u64,
    warned_regression: bool,
    /// Whether a packet's times were found past what i64 ns hold ([`Self::check_clock_range`]).
    warned_clamp: bool,
    warned_uuid: bool,
    prev_discarded: u64,
    prev_seq: Option<u64>,
    prev_ts_end: Option<u64>,
    pending: VecDeque<Message>,
    done: bool,
    /// Non-fatal problems (timestamp regressions…), each naming the file and offset.
    pub warnings: Vec<String>,
    /// Events decoded so far.
    pub events_read: u64,
    /// Set when the reader leaves out events ([`Self::set_skip`]).
    skipping: Option<Box<skip::Skipping>>,
    /// Bumped whenever a packet is opened: what the skipping reader caches of the packet (its
    /// file, stream class, clock, content) holds while this stays the same.
    packet_gen: u64,
    /// Where to start in the next file mapped, instead of its first byte ([`Self::seek_ns`]).
    seek_off: Option<usize>,
    /// Files whose unusable index was reported.
    warned_indexes: Vec<usize>,
    /// With a list of the stream's packets ([`crate::trace::StreamFiles::packets`]): the
    /// position of the next packet to open in it.
    next_listed: usize,
}

const EV_HEADER: usize = 0;
const EV_COMMON: usize = 1;
const EV_SPECIFIC: usize = 2;
const EV_PAYLOAD: usize = 3;

impl StreamReader {
    /// A reader positioned before the first packet of stream `stream` of `trace`.
    pub fn new(trace: Arc<Trace>, stream: usize) -> Self {
        let dec = Decoder::new(&trace.layout);
        StreamReader {
            trace,
            stream,
            file_idx: 0,
            map: None,
            released: 0,
            dec,
            packet_off: 0,
            packet_len: 0,
            content_bits: 0,
            pos: 0,
            in_packet: false,
            truncated: false,
            stream_class_id: 0,
            sc_idx: 0,
            ev_idx: 0,
            clock: None,
            ghz_offset_ns: None,
            pkt_slots: Vec::new(),
            packet_header_at: None,
            packet_context_at: None,
            ev_slots: Vec::with_capacity(64),
            ev_at: [None; 4],
            event_id: 0,
            event_offset: 0,
            event_bit: 0,
            lazy_header: std::cell::OnceCell::new(),
            cycles: 0,
            last_cycles: 0,
            warned_regression: false,
            warned_clamp: false,
            groups: Default::default(),
            warned_uuid: false,
            prev_discarded: 0,
            prev_seq: None,
            prev_ts_end: None,
            pending: VecDeque::new(),
            done: false,
            warnings: Vec::new(),
            events_read: 0,
            skipping: None,
            packet_gen: 0,
            seek_off: None,
            warned_indexes: Vec::new(),
            next_listed: 0,
        }
    }

    /// A reader of stream `stream` of `trace` whose data is `bytes` instead of the stream's
    /// files (its first file name is still used in messages). Reads no file: for tests, fuzzing
    /// and in-memory traces (see [`Trace::from_metadata_bytes`]).
    pub fn from_bytes(trace: Arc<Trace>, stream: usize, bytes: impl Into<Arc<[u8]>>) -> Self {
        let mut r = StreamReader::new(trace, stream);
        // `open_packet` moves to the next file at the end of this buffer: make that the end.
        r.file_idx = r.trace.streams[stream].files.len().saturating_sub(1);
        r.map = Some(StreamData::Owned(bytes.into()));
        r
    }

    /// Gives a reader whose data ran out ([`Self::next`] gave None) the stream's next bytes,
    /// one or more whole packets received from a live relay, and, when the trace's metadata
    /// grew, the trace it now belongs to (the same stream position). Reading goes on as if
    /// the bytes followed the previous ones: the discarded-event and packet-sequence counters
    /// and the clock carry over, so losses are told once, between the packets they fall in.
    pub fn feed(&mut self, bytes: impl Into<Arc<[u8]>>, trace: Option<Arc<Trace>>) {
        if let Some(t) = trace {
            if !Arc::ptr_eq(&t.layout, &self.trace.layout) {
                let clock = self.dec.clock;
                self.dec = Decoder::new(&t.layout);
                self.dec.clock = clock;
                // Recomputed from the new class when the next packet opens.
                self.clock = None;
                self.lazy_header = std::cell::OnceCell::new();
            }
            self.trace = t;
        }
        self.file_idx = self.trace.streams[self.stream]
            .files
            .len()
            .saturating_sub(1);
        self.map = Some(StreamData::Owned(bytes.into()));
        self.released = 0;
        self.packet_off = 0;
        self.packet_len = 0;
        self.in_packet = false;
        self.done = false;
    }

    /// Moves a reader that has read nothing yet past the packets its files' LTTng indexes
    /// show to end before `ns` (on the stream's clock): the reader starts at the first packet
    /// that may hold a message at or after `ns`. What it gives from there is what a full read
    /// gives from there: the counters of the packet before (discarded events, sequence number,
    /// end time) come from its index entry. Events, warnings and errors of the packets passed
    /// over are not seen; every message of theirs is timed before `ns`. Returns the number of
    /// packets passed over (0 without an index, or when called after reading).
    pub fn seek_ns(&mut self, ns: i64) -> u64 {
        let fresh = self.map.is_none()
            && self.file_idx == 0
            && !self.in_packet
            && !self.done
            && self.events_read == 0
            && self.pending.is_empty();
        let trace = self.trace.clone();
        let files = &trace.streams[self.stream];
        // A list of packets is read in full (merged copies of a trace: rare, small).
        if !fresh || files.packets.is_some() {
            return 0;
        }
        let (mut passed, mut to) = (0u64, None);
        let mut prev: Option<PacketEntry> = None;
        for fi in 0..files.files.len() {
            // A file without a usable index is read from its start.
            let start_of_file = Some((fi, 0));
            let entries = self.consult_index(fi).unwrap_or_default();
            let Some(first) = entries.first() else {
                to = start_of_file;
                break;
            };
            let Some(clock) = trace.stream_clock(first.stream_class_id) else {
                to = start_of_file;
                break;
            };
            // A packet is passed over when it surely ends before `ns`: an entry whose times
            // are out of order says nothing sure.
            let before = |e: &PacketEntry| {
                e.ts_begin <= e.ts_end && clock_ns(None, Some(clock), e.ts_end) < Some(ns)
            };
            let skip = entries.iter().take_while(|e| before(e)).count();
            let last_file = fi + 1 == files.files.len();
            // The last packet of the stream is always read: a stream whose packets all end
            // before `ns` still has its end (and errors) seen.
            let skip = if last_file {
                skip.min(entries.len() - 1)
            } else {
                skip
            };
            if skip > 0 {
                prev = Some(entries[skip - 1]);
                passed += skip as u64;
            }
            if skip < entries.len() {
                to = Some((fi, entries[skip].offset as usize));
                break;
            }
        }
        let (Some((fi, off)), Some(prev)) = (to, prev) else {
            return 0;
        };
        self.file_idx = fi;
        self.seek_off = Some(off);
        self.prev_discarded = prev.discarded;
        self.prev_seq = prev.seq_num;
        self.prev_ts_end = Some(prev.ts_end);
        passed
    }

    /// The trace this stream belongs to.
    pub fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }

    /// Index of this stream in [`Trace::streams`].
    pub fn stream_index(&self) -> usize {
        self.stream
    }

    fn path(&self) -> &Path {
        let files = &self.trace.streams[self.stream].files;
        &files[self.file_idx.min(files.len() - 1)]
    }

    fn decode_error(&self, packet_off: usize, e: DecodeError) -> Error {
        Error::Decode {
            path: self.path().to_path_buf(),
            offset: packet_off as u64 + e.bit / 8,
            message: e.message,
        }
    }

    fn fail(&mut self, offset: usize, message: String) -> Error {
        let err = Error::Decode {
            path: self.path().to_path_buf(),
            offset: offset as u64,
            message,
        };
        self.packet_failed(err)
    }

    /// The usable index of file `fi` of this stream; the first time an index turns out
    /// unusable, a warning naming it.
    fn consult_index(&mut self, fi: usize) -> Option<Arc<[PacketEntry]>> {
        let trace = self.trace.clone();
        match trace.streams[self.stream].file_index(fi) {
            FileIndex::Valid(entries) => Some(entries.clone()),
            FileIndex::Rejected(why) => {
                if !self.warned_indexes.contains(&fi) {
                    self.warned_indexes.push(fi);
                    self.warnings.push(format!(
                        "{why}: index not used, the file is read without it"
                    ));
                }
                None
            }
            FileIndex::Absent => None,
        }
    }

    /// After the packet at `packet_off` could not be opened: reading goes on at the next
    /// packet the file's index lists (the error says so), or the stream ends there.
    fn packet_failed(&mut self, err: Error) -> Error {
        if self.trace.streams[self.stream].packets.is_some() {
            // The next packet is the next one listed.
            return err;
        }
        let next = self.consult_index(self.file_idx).and_then(|entries| {
            let i = entries.partition_point(|e| e.offset <= self.packet_off as u64);
            entries.get(i).map(|e| e.offset as usize)
        });
        match (next, err) {
            (
                Some(next),
                Error::Decode {
                    path,
                    offset,
                    message,
                },
            ) => {
                self.packet_off = next;
                Error::Decode {
                    path,
                    offset,
                    message: format!(
                        "{message}; reading goes on at the next packet the index lists (byte {next})"
                    ),
                }
            }
            (_, err) => {
                self.done = true;
                err
            }
        }
    }

    #[inline]
    fn ns(&self, cycles: u64) -> Option<i64> {
        clock_ns(self.ghz_offset_ns, self.clock.as_ref(), cycles)
    }

    /// Moves to the next packet with content. Ok(false) at the end of the stream.
    fn open_packet(&mut self) -> Result<bool> {
        loop {
            let files = &self.trace.streams[self.stream].files;
            if let Some(listed) = &self.trace.streams[self.stream].packets {
                let Some(&at) = listed.get(self.next_listed) else {
                    return Ok(false);
                };
                self.next_listed += 1;
                if self.map.is_none() || self.file_idx != at.file {
                    self.map = None;
                    self.file_idx = at.file;
                    match files.get(at.file).map(|f| map_file(f, Reading::Whole)) {
                        Some(Ok(Some(m))) => {
                            self.map = Some(StreamData::Mapped(m));
                            self.released = 0;
                        }
                        Some(Ok(None)) | None => continue,
                        Some(Err(e)) => return Err(e),
                    }
                }
                self.packet_off = at.offset as usize;
                if self.packet_off >= self.map.as_ref().map_or(0, |m| m.len()) {
                    continue;
                }
            } else if self.map.is_none()
                || self.packet_off >= self.map.as_ref().map_or(0, |m| m.len())
            {
                if self.map.is_some() {
                    self.file_idx += 1;
                    self.map = None;
                } else if self.file_idx >= files.len() {
                    return Ok(false);
                }
                if self.file_idx >= files.len() {
                    return Ok(false);
                }
                self.packet_off = self.seek_off.take().unwrap_or(0);
                match map_file(&files[self.file_idx], Reading::Whole) {
                    Ok(Some(m)) => {
                        self.map = Some(StreamData::Mapped(m));
                        self.released = 0;
                    }
                    Ok(None) => {
                        self.file_idx += 1;
                        continue;
                    }
                    Err(e) => {
                        self.file_idx += 1;
                        return Err(e);
                    }
                }
            }
            let map = self.map.as_ref().expect("mapped above");
            let data = &map[self.packet_off..];
            let layout = self.trace.layout.clone();
            self.dec.specials = Default::default();
            self.pkt_slots.clear();
            self.truncated = false;
            let mut pos = 0u64;
            self.packet_header_at = None;
            self.packet_context_at = None;
            let off = self.packet_off;
            if let Some(ph) = layout.packet_header {
                self.packet_header_at = Some(0);
                if let Err(e) = self
                    .dec
                    .decode(&layout, ph, data, &mut pos, &mut self.pkt_slots)
                {
                    let err = self.decode_error(off, e);
                    return Err(self.packet_failed(err));
                }
            }
            let sp = self.dec.specials;
            if let Some(magic) = sp.magic {
                if magic != PACKET_MAGIC {
                    // The magic byte-swapped: data of the other byte order, most likely a
                    // stream file of another trace next to this metadata.
                    let hint = if magic == u64::from((PACKET_MAGIC as u32).swap_bytes()) {
                        " (the CTF magic byte-swapped: the stream's byte order differs from the metadata's; a stream file from another trace?)"
                    } else {
                        ""
                    };
                    return Err(self.fail(off, format!("bad packet magic number {magic:#x}{hint}")));
                }
            }
            if let (Some(at), Some(uuid)) = (sp.uuid_at, self.trace.class.uuid) {
                let at = at as usize;
                // Babeltrace 2 reads such packets (its own test traces have them): warn once
                // per stream and keep the data.
                if data.get(at..at + 16) != Some(&uuid[..]) && !self.warned_uuid {
                    self.warned_uuid = true;
                    self.warnings.push(format!(
                        "{}: at byte {off}: packet UUID differs from the trace UUID (reported once per stream)",
                        self.path().display()
                    ));
                }
            }
            let sc_id = self.trace.stream_class_id(sp.stream_class_id);
            let Some(sc_idx) = layout.streams.index_of(sc_id) else {
                return Err(self.fail(off, format!("unknown stream class id {sc_id}")));
            };
            let sl = layout.streams.at(sc_idx);
            if self.clock.is_none() || self.stream_class_id != sc_id {
                self.clock = self.trace.stream_clock(sc_id).cloned();
                self.ghz_offset_ns = self
                    .clock
                    .as_ref()
                    .filter(|c| c.freq == 1_000_000_000)
                    .map(|c| c.cycles_to_ns(0));
            }
            self.stream_class_id = sc_id;
            self.sc_idx = sc_idx;
            if let Some(pc) = sl.packet_context {
                self.packet_context_at = Some(self.pkt_slots.len());
                if let Err(e) = self
                    .dec
                    .decode(&layout, pc, data, &mut pos, &mut self.pkt_slots)
                {
                    let err = self.decode_error(off, e);
                    return Err(self.packet_failed(err));
                }
            }
            let sp = self.dec.specials;
            let avail_bits = data.len() as u64 * 8;
            let total_bits = sp.packet_total_bits.unwrap_or(avail_bits);
            let content_bits = sp.packet_content_bits.unwrap_or(total_bits);
            if total_bits == 0
                || !total_bits.is_multiple_of(8)
                || content_bits > total_bits
                || pos > content_bits
            {
                return Err(self.fail(
                    off,
                    format!(
                        "bad packet sizes (packet {total_bits} bits, content {content_bits} bits, headers {pos} bits)"
                    ),
                ));
            }
            self.truncated = total_bits > avail_bits;
            self.packet_len = (total_bits / 8) as usize;
            self.content_bits = content_bits.min(avail_bits);
            self.pos = pos;
            if let Some(b) = sp.ts_begin {
                self.dec.clock = b;
            }
            let (begin_ns, end_ns) = (
                sp.ts_begin.and_then(|c| self.ns(c)),
                sp.ts_end.and_then(|c| self.ns(c)),
            );
            let prev_end_ns = self.prev_ts_end.and_then(|c| self.ns(c));
            if !self.warned_clamp {
                self.check_clock_range(off, sp.ts_end);
            }
            if let Some(seq) = sp.seq_num {
                if let Some(prev) = self.prev_seq {
                    if seq > prev && seq - prev > 1 {
                        self.pending.push_back(Message::DiscardedPackets {
                            count: seq - prev - 1,
                            begin_ns: prev_end_ns,
                            end_ns: begin_ns,
                        });
                    }
                }
                self.prev_seq = Some(seq);
            }
            if let Some(d) = sp.discarded {
                if d > self.prev_discarded {
                    self.pending.push_back(Message::DiscardedEvents {
                        count: d - self.prev_discarded,
                        begin_ns: prev_end_ns.or(begin_ns),
                        end_ns,
                    });
                }
                self.prev_discarded = d;
            }
            if sp.ts_end.is_some() {
                self.prev_ts_end = sp.ts_end;
            }
            self.in_packet = true;
            self.packet_gen = self.packet_gen.wrapping_add(1);
            return Ok(true);
        }
    }

    fn finish_packet(&mut self) -> Option<Error> {
        self.in_packet = false;
        let err = if self.truncated {
            let len = self.map.as_ref().map_or(0, |m| m.len());
            let e = Error::Decode {
                path: self.path().to_path_buf(),
                offset: self.packet_off as u64,
                message: format!(
                    "truncated packet: it declares {} bytes but the file ends after {}",
                    self.packet_len,
                    len - self.packet_off
                ),
            };
            Some(e)
        } else {
            None
        };
        self.packet_off = self.packet_off.saturating_add(self.packet_len.max(1));
        self.release_consumed();
        err
    }

    /// Drops the pages of packets already read from memory, so that the resident size of a
    /// reader stays bounded (about [`RELEASE_CHUNK`]) whatever the file size.
    fn release_consumed(&mut self) {
        let Some(StreamData::Mapped(m)) = &self.map else {
            return;
        };
        let upto = self.packet_off.min(m.len()) & !(RELEASE_CHUNK - 1);
        if upto >= self.released + RELEASE_CHUNK {
            // SAFETY: a read-only, file-backed private mapping: dropped pages are read again
            // from the file if touched, never replaced by zeros, so no reference can observe a
            // change. Views into packets before `packet_off` are no longer handed out.
            unsafe {
                let _ = m.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    self.released,
                    upto - self.released,
                );
            }
            self.released = upto;
        }
    }

    /// Advances to the next message. After `Some(Ok(Message::Event))`, [`Self::event`] reads it.
    /// Errors name the file and byte offset; reading goes on after them with what is readable.
    /// With a [`SkipRule`] ([`Self::set_skip`]), only the messages it keeps.
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Option<Result<Message>> {
        if self.skipping.is_some() {
            return self.next_kept();
        }
        self.next_message()
    }

    /// The next message, whatever a skip rule says.
    #[inline(always)]
    fn next_message(&mut self) -> Option<Result<Message>> {
        // The common case first: another event in the current packet.
        if self.in_packet && self.pos < self.content_bits && self.pending.is_empty() {
            if let Ok(()) = self.decode_event() {
                self.events_read += 1;
                return Some(Ok(Message::Event));
            }
            // Errors are reported by the general path below, which decodes the event again
            // from the same position (nothing was consumed).
        }
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Some(Ok(m));
            }
            if self.done {
                return None;
            }
            if !self.in_packet {
                match self.open_packet() {
                    Ok(true) => continue,
                    Ok(false) => {
                        self.done = true;
                        return None;
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            if self.pos >= self.content_bits {
                if let Some(e) = self.finish_packet() {
                    return Some(Err(e));
                }
                continue;
            }
            match self.decode_event() {
                Ok(()) => {
                    self.events_read += 1;
                    return Some(Ok(Message::Event));
                }
                Err(e) => {
                    if self.truncated {
                        // The file ends inside this packet: report that, at the packet's
                        // offset, with the event that could not be read, and skip the rest.
                        let at = self.packet_off as u64 + e.bit / 8;
                        return match self.finish_packet() {
                            Some(Error::Decode {
                                path,
                                offset,
                                message,
                            }) => Some(Err(Error::Decode {
                                path,
                                offset,
                                message: format!("{message} (event at byte {at}: {})", e.message),
                            })),
                            other => other.map(Err),
                        };
                    }
                    let err = self.decode_error(self.packet_off, e);
                    // Skip the rest of this packet; the next one starts at a known offset.
                    self.finish_packet();
                    return Some(Err(err));
                }
            }
        }
    }

    // Always inlined: the per-event loop is this function's, and its call costs more than
    // the straight-line path it leads to.
    #[inline(always)]
    fn decode_event(&mut self) -> Result<(), DecodeError> {
        let header = match self.decode_fixed_event() {
            Ok(()) => return Ok(()),
            Err(header) => header,
        };
        self.decode_event_general(header)
    }

    /// The common LTTng case on its own: a compiled header, then a body of fixed-layout
    /// scopes or one its class's program decodes, with nothing but the event's slots
    /// written. Otherwise, having changed nothing else (but the slots, which the general path
    /// starts again), the header values if it decoded them, for
    /// [`Self::decode_event_general`] (which also reports errors).
    #[inline(always)]
    fn decode_fixed_event(&mut self) -> Result<(), Option<HeaderValues>> {
        let Some(map) = self.map.as_deref() else {
            return Err(None);
        };
        let layout = &*self.trace.layout;
        let sl = layout.streams.at(self.sc_idx);
        let Some(compiled) = &sl.compiled_header else {
            return Err(None);
        };
        let end = (self.packet_off as u64 + self.content_bits.div_ceil(8)) as usize;
        let data = map.get(self.packet_off..end.min(map.len())).unwrap_or(&[]);
        let start = self.pos;
        let h = compiled.decode(data, start, self.dec.clock).ok_or(None)?;
        let id = match h.id {
            Some(id) => id,
            None if sl.events.len() == 1 => sl.events.id_at(0),
            None => 0,
        };
        let Some(ev_idx) = sl.events.index_of(id) else {
            return Err(Some(h));
        };
        // Placed straight into the event's slots: the general path, if taken below, starts
        // them again.
        self.ev_at = [None; 4];
        self.ev_slots.clear();
        let el = sl.events.at(ev_idx);
        let pos = match &el.fixed_body {
            Some(body) => body.place(h.end, &mut self.ev_slots, &mut self.ev_at),
            None => {
                let (slots, at) = (&mut self.ev_slots, &mut self.ev_at);
                let common = sl.event_common_context;
                run_program(el, common, layout, data, h.end, &mut self.dec, slots, at)
                    .ok_or(Some(h))?
            }
        };
        if pos > self.content_bits {
            // The general path reports it.
            return Err(Some(h));
        }
        if self.lazy_header.get().is_some() {
            self.lazy_header.take();
        }
        self.event_offset = (start / 8) as usize;
        self.event_bit = start;
        self.dec.clock = h.clock;
        self.pos = pos;
        self.event_id = id;
        self.ev_idx = ev_idx;
        self.note_clock(h.clock);
        Ok(())
    }

    /// Records the current event's clock, warning once per stream when it goes backwards.
    #[inline(always)]
    fn note_clock(&mut self, clock: u64) {
        if clock < self.last_cycles && !self.warned_regression {
            self.warn_regression(self.last_cycles - clock);
        }
        self.last_cycles = clock;
        self.cycles = clock;
    }

    /// Warns (once per stream) when the packet at `off` ends at a clock value whose time
    /// from the origin does not fit 64-bit nanoseconds (past 2262 from 1970): its events'
    /// times are then clamped to the largest one, where Babeltrace 2 stops reading.
    fn check_clock_range(&mut self, off: usize, ts_end: Option<u64>) {
        let Some(end) = ts_end else {
            return;
        };
        let Some(ns) = clock_ns_exact(self.ghz_offset_ns, self.clock.as_ref(), end) else {
            return;
        };
        if i64::try_from(ns).is_err() {
            self.warned_clamp = true;
            self.warnings.push(format!(
                "{}: at byte {off}: the packet ends at clock value {end}, {ns} ns from the \
                 origin: past what 64-bit nanoseconds hold, its times are clamped to {} ns \
                 (reported once per stream)",
                self.path().display(),
                if ns < 0 { i64::MIN } else { i64::MAX },
            ));
        }
    }

    #[cold]
    #[inline(never)]
    fn warn_regression(&mut self, by: u64) {
        self.warned_regression = true;
        self.warnings.push(format!(
            "{}: at byte {}: timestamp goes backwards by {by} cycles (reported once per stream)",
            self.path().display(),
            self.packet_off + self.event_offset,
        ));
    }

    /// Any event, `header` being its compiled header's values when already decoded.
    #[inline(never)]
    fn decode_event_general(&mut self, header: Option<HeaderValues>) -> Result<(), DecodeError> {
        let map = self.map.as_ref().expect("in a packet");
        let end = (self.packet_off as u64 + self.content_bits.div_ceil(8)) as usize;
        let data = &map[self.packet_off..end.min(map.len())];
        let layout = &*self.trace.layout;
        let sl = layout.streams.at(self.sc_idx);
        self.ev_slots.clear();
        self.ev_at = [None; 4];
        self.lazy_header.take();
        self.event_offset = (self.pos / 8) as usize;
        self.event_bit = self.pos;
        let (start, stream_class_id) = (self.pos, self.stream_class_id);
        let mut scope = Scope {
            layout,
            data,
            dec: &mut self.dec,
            slots: &mut self.ev_slots,
            at: &mut self.ev_at,
        };
        // LTTng's headers: straight-line reads; their slots are made only if asked for.
        let fast = header.or_else(|| {
            sl.compiled_header
                .as_ref()
                .and_then(|h| h.decode(data, start, scope.dec.clock))
        });
        let (id, mut pos) = match fast {
            Some(h) => {
                scope.dec.clock = h.clock;
                (h.id, h.end)
            }
            None => {
                scope.dec.specials.event_id = None;
                let mut pos = start;
                let header_done = match (&sl.fast_header, sl.event_header) {
                    (Some(h), Some(_)) => {
                        scope.at[EV_HEADER] = Some(0);
                        scope
                            .dec
                            .decode_tagged_header(layout, h, data, &mut pos, scope.slots)
                    }
                    _ => false,
                };
                if !header_done {
                    scope.run(EV_HEADER, sl.event_header, &mut pos)?;
                }
                (scope.dec.specials.event_id, pos)
            }
        };
        // Without an id, the stream class's only event class (else id 0).
        let id = match id {
            Some(id) => id,
            None if sl.events.len() == 1 => sl.events.id_at(0),
            None => 0,
        };
        let Some(ev_idx) = sl.events.index_of(id) else {
            return Err(DecodeError {
                bit: start,
                message: format!("unknown event class id {id} in stream class {stream_class_id}"),
            });
        };
        let el = sl.events.at(ev_idx);
        if let Some(body) = &el.fixed_body {
            // Fixed-layout scopes: one slot each, members read on access.
            pos = body.place(pos, scope.slots, scope.at);
        } else if let Some(p) = el
            .program(layout, sl.event_common_context)
            .and_then(|program| {
                let first = scope.slots.len();
                let p = program.run(
                    layout,
                    data,
                    pos,
                    scope.dec.regs_mut(),
                    scope.slots,
                    scope.at,
                );
                if p.is_none() {
                    // Decoded again below, the general way.
                    scope.slots.truncate(first);
                    scope.at[1..].fill(None);
                }
                p
            })
        {
            pos = p;
        } else {
            scope.run(EV_COMMON, sl.event_common_context, &mut pos)?;
            scope.run(EV_SPECIFIC, el.context, &mut pos)?;
            scope.run(EV_PAYLOAD, el.payload, &mut pos)?;
        }
        if pos > self.content_bits
            || pos == self.pos && sl.event_header.is_none() && el.payload.is_none()
        {
            if pos > self.content_bits {
                return Err(DecodeError {
                    bit: self.pos,
                    message: "event goes past the packet content".into(),
                });
            }
            // An empty event without a header would loop forever: end the packet.
            pos = self.content_bits;
        }
        self.pos = pos;
        self.event_id = id;
        self.ev_idx = ev_idx;
        self.note_clock(self.dec.clock);
        Ok(())
    }

    /// Whether the stream's first packet with content opens (its headers decode as the
    /// metadata says): a stream that does not holds no event, so it bounds no time range.
    pub fn first_packet_opens(mut self) -> bool {
        matches!(self.open_packet(), Ok(true))
    }

    /// The time range the stream's packets declare: the first packet's `timestamp_begin` and
    /// the last one's `timestamp_end` (ns), read from packet contexts only, without decoding a
    /// single event. None when packets carry no such timestamps or cannot be read.
    pub fn packet_time_bounds(mut self) -> Option<(i64, i64)> {
        let (mut begin, mut end) = (None, None);
        while let Ok(true) = self.open_packet() {
            let sp = self.dec.specials;
            match (
                sp.ts_begin.and_then(|c| self.ns(c)),
                sp.ts_end.and_then(|c| self.ns(c)),
            ) {
                (Some(b), Some(e)) => {
                    begin.get_or_insert(b);
                    end = Some(e);
                }
                _ => return None,
            }
            self.finish_packet();
        }
        begin.zip(end)
    }

    /// The current event (valid after `next` returned `Message::Event`).
    pub fn event(&self) -> Event<'_> {
        Event { r: self }
    }

    /// Timestamp of the current event, in ns from the clock origin.
    #[inline]
    pub fn event_time_ns(&self) -> Option<i64> {
        self.ns(self.cycles)
    }

    /// A cycle count of this stream's clock in ns from the clock origin (None without a
    /// clock): the conversion is monotonic, so a caller may keep cycles and convert once.
    pub fn cycles_to_ns(&self, cycles: u64) -> Option<i64> {
        self.ns(cycles)
    }

    /// Events the packets of this stream said were discarded so far.
    pub fn discarded_so_far(&self) -> u64 {
        self.prev_discarded
    }
}

/// The program of class `el` (`common` its stream class's common context) run from bit
/// `pos` ([`crate::program::SlotProgram::run`]), out of line: the per-event loop keeps only
/// the fixed-layout path inline. None without a program.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn run_program(
    el: &EventLayout,
    common: Option<NodeId>,
    layout: &Layout,
    data: &[u8],
    pos: u64,
    dec: &mut Decoder,
    slots: &mut Vec<Slot>,
    at: &mut [Option<usize>; 4],
) -> Option<u64> {
    let program = el.program(layout, common)?;
    program.run(layout, data, pos, dec.regs_mut(), slots, at)
}

/// The event scopes being decoded: where each starts in the slot list.
struct Scope<'s> {
    layout: &'s Layout,
    data: &'s [u8],
    dec: &'s mut Decoder,
    slots: &'s mut Vec<Slot>,
    at: &'s mut [Option<usize>; 4],
}

impl Scope<'_> {
    fn run(
        &mut self,
        which: usize,
        node: Option<NodeId>,
        pos: &mut u64,
    ) -> Result<(), DecodeError> {
        if let Some(n) = node {
            self.at[which] = Some(self.slots.len());
            self.dec.decode(self.layout, n, self.data, pos, self.slots)
        } else {
            Ok(())
        }
    }
}

/// A decoded event, borrowed from its stream reader.
#[derive(Clone, Copy)]
pub struct Event<'a> {
    r: &'a StreamReader,
}

impl<'a> Event<'a> {
    fn layout(&self) -> &'a EventLayout {
        self.r
            .trace
            .layout
            .streams
            .at(self.r.sc_idx)
            .events
            .at(self.r.ev_idx)
    }

    fn packet_data(&self) -> &'a [u8] {
        let map = self.r.map.as_deref().unwrap_or(&[]);
        let end = (self.r.packet_off + self.r.packet_len).min(map.len());
        &map[self.r.packet_off.min(end)..end]
    }

    fn ev_view(&self, which: usize) -> Option<FieldView<'a>> {
        self.r.ev_at[which].map(|idx| FieldView {
            layout: &self.r.trace.layout,
            slots: &self.r.ev_slots,
            idx,
            data: self.packet_data(),
            fixed: None,
        })
    }

    /// The event class name.
    pub fn name(&self) -> &'a str {
        &self.layout().name
    }

    /// Dense index of the event class within its trace: `(stream class position, event class
    /// position)`, for per-class tables indexed without hashing.
    pub fn class_index(&self) -> (usize, usize) {
        (self.r.sc_idx, self.r.ev_idx)
    }

    /// The event class id.
    pub fn class_id(&self) -> u64 {
        self.r.event_id
    }

    /// The stream class id.
    pub fn stream_class_id(&self) -> u64 {
        self.r.stream_class_id
    }

    /// The trace this event belongs to.
    pub fn trace(&self) -> &'a Arc<Trace> {
        &self.r.trace
    }

    /// The default clock value, in cycles.
    pub fn cycles(&self) -> u64 {
        self.r.cycles
    }

    /// The timestamp in ns from the clock origin (None when the stream has no clock).
    pub fn time_ns(&self) -> Option<i64> {
        self.r.event_time_ns()
    }

    /// The event payload.
    pub fn payload(&self) -> Option<FieldView<'a>> {
        self.ev_view(EV_PAYLOAD)
    }

    /// The event class's own context.
    pub fn specific_context(&self) -> Option<FieldView<'a>> {
        self.ev_view(EV_SPECIFIC)
    }

    /// The stream's event context (common to all its events).
    pub fn common_context(&self) -> Option<FieldView<'a>> {
        self.ev_view(EV_COMMON)
    }

    /// The event header.
    pub fn header(&self) -> Option<FieldView<'a>> {
        if self.r.ev_at[EV_HEADER].is_some() {
            return self.ev_view(EV_HEADER);
        }
        let layout = &self.r.trace.layout;
        let node = layout.streams.at(self.r.sc_idx).event_header?;
        let data = self.packet_data();
        let slots = self.r.lazy_header.get_or_init(|| {
            // The header decodes alike whatever the decoder's state: its tag is inside it.
            let mut dec = Decoder::new(layout);
            let mut pos = self.r.event_bit;
            let mut slots = Vec::new();
            if dec
                .decode(layout, node, data, &mut pos, &mut slots)
                .is_err()
            {
                slots.clear();
            }
            slots
        });
        (!slots.is_empty()).then_some(FieldView {
            layout,
            slots,
            idx: 0,
            data,
            fixed: None,
        })
    }

    fn pkt_view(&self, at: Option<usize>) -> Option<FieldView<'a>> {
        at.map(|idx| FieldView {
            layout: &self.r.trace.layout,
            slots: &self.r.pkt_slots,
            idx,
            data: self.packet_data(),
            fixed: None,
        })
    }

    /// The packet context of the packet holding this event.
    pub fn packet_context(&self) -> Option<FieldView<'a>> {
        self.pkt_view(self.r.packet_context_at)
    }

    /// The packet header of the packet holding this event.
    pub fn packet_header(&self) -> Option<FieldView<'a>> {
        self.pkt_view(self.r.packet_header_at)
    }

    /// Reads every field of the event's contexts and payload and folds their raw values
    /// together (see [`FieldView::fold_raw`]): decoding everything eagerly, as `count` does,
    /// with fixed-layout scopes read straight from their plans.
    pub fn fold_fields(&self) -> u64 {
        if let Some(body) = &self.layout().fixed_body {
            let data = self.packet_data();
            let mut acc = 0u64;
            // The body's scopes are the event's first slots (its header slots, if any, are
            // made on demand or follow the general path).
            let slots = &self.r.ev_slots;
            if slots.len() == body.scopes.len() {
                for (i, s) in slots.iter().enumerate() {
                    acc = acc.wrapping_add(body.fold_scope(i, data, s.val));
                }
                return acc;
            }
        }
        self.fold_fields_by_slots()
    }

    /// [`Self::fold_fields`] for events decoded by the general path.
    #[inline(never)]
    fn fold_fields_by_slots(&self) -> u64 {
        let layout = &*self.r.trace.layout;
        let data = self.packet_data();
        let mut acc = 0u64;
        if self.layout().fixed_body.is_some() {
            for s in &self.r.ev_slots {
                if let Some(plan) = &layout.nodes[s.node as usize].plan {
                    for r in plan.reads.iter() {
                        acc = acc.wrapping_add(r.fold(data, s.val));
                    }
                }
            }
            return acc;
        }
        for v in [EV_COMMON, EV_SPECIFIC, EV_PAYLOAD]
            .into_iter()
            .filter_map(|w| self.ev_view(w))
        {
            acc = acc.wrapping_add(v.fold_raw());
        }
        acc
    }

    /// A payload field by name.
    pub fn field(&self, name: &str) -> Option<FieldView<'a>> {
        self.payload()?.field(name)
    }

    /// A payload member by position, pre-resolved once per event class with
    /// [`Event::class_layout`] and [`EventLayout::payload_index`].
    pub fn payload_member(&self, index: usize) -> Option<FieldView<'a>> {
        self.payload()?.member_at(index)
    }

    /// The compiled layout of this event's class: its name and the nodes of its scopes, in
    /// the trace's [`Layout`] (see [`crate::access`]).
    pub fn class_layout(&self) -> &'a EventLayout {
        self.layout()
    }

    /// Index of the stream in its trace.
    pub fn stream_index(&self) -> usize {
        self.r.stream
    }

    /// Identifies the packet holding this event within its stream (file and byte offset), so
    /// that consumers can cache per-packet work.
    pub fn packet_key(&self) -> u64 {
        ((self.r.file_idx as u64) << 48) | self.r.packet_off as u64
    }

    /// File and byte offset of the event, for messages.
    pub fn location(&self) -> (&'a Path, u64) {
        (
            self.r.path(),
            (self.r.packet_off + self.r.event_offset) as u64,
        )
    }

    /// The payload's slots without a field view: the packet's bytes (where positions and
    /// string offsets point) and the slots from the payload's own on (its descendants follow
    /// it). For readers that compiled their own reads of a payload class, checking the first
    /// slot's node and count, rather than walking views (see [`crate::access`]).
    #[inline]
    pub fn payload_slots(&self) -> Option<(&'a [u8], &'a [Slot])> {
        let slots = self.r.ev_slots.get(self.r.ev_at[EV_PAYLOAD]?..)?;
        // `packet_data`, written out: this is read once per event.
        let map = self.r.map.as_deref()?;
        let end = (self.r.packet_off + self.r.packet_len).min(map.len());
        Some((map.get(self.r.packet_off..end)?, slots))
    }
}
