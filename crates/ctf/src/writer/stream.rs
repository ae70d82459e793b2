//! One data stream file of fixed-size LTTng packets, written in constant memory, with its
//! LTTng packet index ([`index::path_of`]).

use super::chunked::ChunkedFile;
use super::encode::{encode_struct, BitBuf};
use super::lttng::{
    EventHeaderKind, OFF_CONTENT_SIZE, OFF_EVENTS_DISCARDED, OFF_PACKET_SIZE, OFF_TIMESTAMP_END,
    PACKET_MAGIC, PACKET_PREAMBLE_LEN,
};
use super::WriteError;
use crate::index::{self, PacketEntry, ENTRY_1_1};
use crate::ir::{ByteOrder, StructType};
use crate::private_files;
use crate::value::Value;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Index entries kept in memory before they are written (after the stream file is flushed,
/// see `write_index`): bounds the memory and the number of flushes forced on the data.
const INDEX_BATCH: usize = 256;

/// Fixed parameters of a data stream.
#[derive(Debug, Clone)]
pub struct StreamParams {
    /// The trace UUID, written in each packet header.
    pub uuid: [u8; 16],
    /// Byte order of the stream's fields.
    pub byte_order: ByteOrder,
    /// Data stream class id (`stream_id`).
    pub stream_class_id: u32,
    /// `stream_instance_id` of the packet header.
    pub instance_id: u64,
    /// `cpu_id` of the packet context.
    pub cpu_id: u32,
    /// Packet size in bytes (a multiple of 8, at least 4 KiB).
    pub packet_size: usize,
    /// Which event header the stream's events have.
    pub header: EventHeaderKind,
}

/// Writes one data stream: packets are filled in memory and flushed to the file when full.
/// Each closed packet gets an entry in the stream's index file (version 1.1).
pub struct StreamWriter {
    p: StreamParams,
    path: PathBuf,
    file: ChunkedFile,
    buf: BitBuf,
    open: bool,
    /// `timestamp_begin` of the open packet.
    packet_begin: u64,
    /// Bytes of the packets closed so far: where the next one starts.
    offset: u64,
    index_path: PathBuf,
    /// Unbuffered: entries are batched in `index_pending`.
    index_file: File,
    index_pending: Vec<u8>,
    seq: u64,
    last_ts: u64,
    events: u64,
    packets: u64,
    discarded: u64,
    /// When the tracing session started: the first packet begins there, as LTTng's do.
    session_start: Option<u64>,
    /// Where closed packets also go, and this stream's position there.
    tap: Option<(usize, super::SharedTap)>,
}

impl StreamWriter {
    /// Creates the stream file.
    pub fn create(path: &Path, p: StreamParams) -> Result<Self, WriteError> {
        if p.packet_size < 4096 || !p.packet_size.is_multiple_of(8) {
            return Err(WriteError::Invalid(format!(
                "packet size {} must be a multiple of 8 and at least 4096",
                p.packet_size
            )));
        }
        let file = private_files::create_file(path).map_err(|e| WriteError::io(path, e))?;
        let index_path = index::path_of(path);
        if let Some(dir) = index_path.parent() {
            private_files::create_dir_all(dir).map_err(|e| WriteError::io(dir, e))?;
        }
        let mut index_file =
            private_files::create_file(&index_path).map_err(|e| WriteError::io(&index_path, e))?;
        // The header goes out at once: an index without entries is still a valid one.
        index_file
            .write_all(&index::header())
            .map_err(|e| WriteError::io(&index_path, e))?;
        Ok(StreamWriter {
            path: path.to_path_buf(),
            file: ChunkedFile::new(file),
            buf: BitBuf::with_capacity(p.packet_size + 64),
            open: false,
            packet_begin: 0,
            offset: 0,
            index_path,
            index_file,
            index_pending: Vec::with_capacity(INDEX_BATCH * ENTRY_1_1),
            seq: 0,
            last_ts: 0,
            events: 0,
            packets: 0,
            discarded: 0,
            session_start: None,
            tap: None,
            p,
        })
    }

    /// Path of the stream file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packets written so far (closed ones).
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Timestamp of the last event written.
    pub fn last_timestamp(&self) -> u64 {
        self.last_ts
    }

    /// Counts events lost before they reached the writer (e.g. ring-buffer overruns). The
    /// cumulative count is the `events_discarded` snapshot of each packet closed from now on.
    pub fn add_discarded(&mut self, n: u64) {
        self.discarded += n;
    }

    /// Events counted as discarded so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Makes the first packet begin at `ts` (the session start) rather than at the first event,
    /// so that every stream covers the session: readers intersect stream ranges.
    pub fn set_session_start(&mut self, ts: u64) {
        self.session_start = Some(ts);
    }

    fn open_packet(&mut self, ts: u64) {
        let ts = match self.session_start {
            Some(start) if self.packets == 0 => start.min(ts),
            _ => ts,
        };
        let bo = self.p.byte_order;
        let b = &mut self.buf;
        b.clear();
        b.write_bits(PACKET_MAGIC as u64, 32, bo);
        b.write_bytes(&self.p.uuid);
        b.write_bits(self.p.stream_class_id as u64, 32, bo);
        b.write_bits(self.p.instance_id, 64, bo);
        b.write_bits(ts, 64, bo); // timestamp_begin
        b.write_bits(ts, 64, bo); // timestamp_end, patched
        b.write_bits(0, 64, bo); // content_size, patched
        b.write_bits(self.p.packet_size as u64 * 8, 64, bo);
        b.write_bits(self.seq, 64, bo);
        b.write_bits(0, 64, bo); // events_discarded
        b.write_bits(self.p.cpu_id as u64, 32, bo);
        debug_assert_eq!(b.pos(), PACKET_PREAMBLE_LEN as u64 * 8);
        self.open = true;
        self.packet_begin = ts;
        self.last_ts = self.last_ts.max(ts);
    }

    /// Writes the open packet. A `short` packet (an early flush) is padded to the next 4 KiB
    /// only, with its own `packet_size`: CTF lets packet sizes vary.
    fn close_packet_sized(&mut self, short: bool) -> Result<(), WriteError> {
        let bo = self.p.byte_order;
        let content = self.buf.pos();
        self.buf.patch(OFF_TIMESTAMP_END, self.last_ts, 64, bo);
        self.buf.patch(OFF_CONTENT_SIZE, content, 64, bo);
        self.buf.patch(OFF_EVENTS_DISCARDED, self.discarded, 64, bo);
        let full = self.p.packet_size as u64 * 8;
        let size = if short {
            content.div_ceil(4096 * 8).max(1) * 4096 * 8
        } else {
            full
        }
        .min(full);
        self.buf.patch(OFF_PACKET_SIZE, size, 64, bo);
        self.buf.pad_to(size);
        self.file
            .write_all(self.buf.bytes())
            .map_err(|e| WriteError::io(&self.path, e))?;
        let entry = PacketEntry {
            offset: self.offset,
            packet_bits: size,
            content_bits: content,
            ts_begin: self.packet_begin,
            ts_end: self.last_ts,
            discarded: self.discarded,
            stream_class_id: self.p.stream_class_id as u64,
            instance_id: Some(self.p.instance_id),
            seq_num: Some(self.seq),
        };
        self.index_pending.extend_from_slice(&index::encode(&entry));
        if let Some((i, tap)) = &self.tap {
            let mut tap = tap.lock().unwrap_or_else(|p| p.into_inner());
            tap.packet(*i, self.buf.bytes(), &entry)
                .map_err(|e| WriteError::io(Path::new(tap.name()), e))?;
        }
        self.buf.clear();
        self.open = false;
        self.offset += size / 8;
        self.seq += 1;
        self.packets += 1;
        if self.index_pending.len() >= INDEX_BATCH * ENTRY_1_1 {
            self.write_index()?;
        }
        Ok(())
    }

    /// Flushes the stream file, then writes the pending index entries: the index on disk
    /// never describes a packet the stream file does not hold yet, so that what a crash
    /// leaves passes [`index::check`].
    fn write_index(&mut self) -> Result<(), WriteError> {
        self.file
            .flush()
            .map_err(|e| WriteError::io(&self.path, e))?;
        self.index_file
            .write_all(&self.index_pending)
            .map_err(|e| WriteError::io(&self.index_path, e))?;
        self.index_pending.clear();
        Ok(())
    }

    fn close_packet(&mut self) -> Result<(), WriteError> {
        self.close_packet_sized(false)
    }

    #[inline]
    fn encode_event(
        &mut self,
        id: u64,
        ts: u64,
        parts: &[(&StructType, &[Value])],
    ) -> Result<(), WriteError> {
        let bo = self.p.byte_order;
        let kind = self.p.header;
        let b = &mut self.buf;
        b.align(8);
        if kind.needs_extended(id, ts, self.last_ts) {
            match kind {
                EventHeaderKind::Compact => b.write_bits(31, 5, bo),
                EventHeaderKind::Large => b.write_bits(65535, 16, bo),
            }
            b.align(8);
            b.write_bits(id, 32, bo);
            b.write_bits(ts, 64, bo);
        } else {
            match kind {
                EventHeaderKind::Compact => {
                    b.write_bits(id, 5, bo);
                    b.write_bits(ts & ((1 << 27) - 1), 27, bo);
                }
                EventHeaderKind::Large => {
                    b.write_bits(id, 16, bo);
                    b.write_bits(ts & 0xFFFF_FFFF, 32, bo);
                }
            }
        }
        for (st, vals) in parts {
            encode_struct(b, st, vals).map_err(|e| WriteError::Encode {
                path: self.path.clone(),
                event_id: id,
                message: e.0,
            })?;
        }
        Ok(())
    }

    /// Appends an event record. `parts` are the event's scopes after the header, in order
    /// (common context, specific context, payload), each with its structure type and values.
    pub fn write_event(
        &mut self,
        id: u64,
        ts: u64,
        parts: &[(&StructType, &[Value])],
    ) -> Result<(), WriteError> {
        if ts < self.last_ts {
            return Err(WriteError::Timestamp {
                path: self.path.clone(),
                last: self.last_ts,
                ts,
            });
        }
        if !self.open {
            self.open_packet(ts);
        }
        let limit = self.p.packet_size as u64 * 8;
        let mark = self.buf.pos();
        let r = self.encode_event(id, ts, parts);
        if r.is_err() {
            self.buf.truncate_bits(mark);
            return r;
        }
        if self.buf.pos() > limit {
            self.buf.truncate_bits(mark);
            self.close_packet()?;
            self.open_packet(ts);
            self.encode_event(id, ts, parts)?;
            if self.buf.pos() > limit {
                return Err(WriteError::Invalid(format!(
                    "{}: event {id} does not fit in a packet of {} bytes",
                    self.path.display(),
                    self.p.packet_size
                )));
            }
        }
        self.last_ts = ts;
        self.events += 1;
        Ok(())
    }

    /// Closes the open packet (if any) and writes everything to the file and the index, so
    /// that a reader, or whatever is left after a crash, sees every event so far in complete
    /// packets. The next event opens a new packet (LTTng's periodic "switch timer" does the
    /// same).
    pub fn flush(&mut self) -> Result<(), WriteError> {
        if self.open {
            self.close_packet_sized(true)?;
        }
        self.write_index()
    }

    /// Sends closed packets to `tap` too, as its stream `index`.
    pub fn set_tap(&mut self, index: usize, tap: super::SharedTap) {
        self.tap = Some((index, tap));
    }

    /// The live timer's work: closes the open packet (as [`Self::flush`]) so that a live
    /// reader gets its events now, or, when the stream wrote nothing since the last call,
    /// tells the tap that the stream is quiet up to `now` (a beacon), so that readers need
    /// not wait for it. (The index file is written by the periodic flush.)
    pub fn live_tick(&mut self, now: u64) -> Result<(), WriteError> {
        if self.open {
            return self.close_packet_sized(true);
        }
        let Some((i, tap)) = &self.tap else {
            return Ok(());
        };
        let quiet = PacketEntry {
            offset: self.offset,
            packet_bits: 0,
            content_bits: 0,
            ts_begin: now.max(self.last_ts),
            ts_end: now.max(self.last_ts),
            discarded: self.discarded,
            stream_class_id: self.p.stream_class_id as u64,
            instance_id: Some(self.p.instance_id),
            seq_num: Some(self.seq),
        };
        let mut tap = tap.lock().unwrap_or_else(|p| p.into_inner());
        tap.quiet(*i, &quiet)
            .map_err(|e| WriteError::io(Path::new(tap.name()), e))
    }

    /// Closes the last packet and flushes the file and its index. A stream without events
    /// gets one empty packet stamped `end_ts`, so that readers see every CPU.
    pub fn finish(mut self, end_ts: u64) -> Result<StreamStats, WriteError> {
        if !self.open && self.packets == 0 {
            self.open_packet(end_ts.max(self.last_ts));
        }
        if self.open {
            self.last_ts = self.last_ts.max(end_ts);
            self.close_packet()?;
        }
        self.write_index()?;
        Ok(StreamStats {
            events: self.events,
            packets: self.packets,
            bytes: self.offset,
        })
    }
}

/// What a finished stream holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Events written.
    pub events: u64,
    /// Packets written.
    pub packets: u64,
    /// Bytes written.
    pub bytes: u64,
}
