//! LTTng packet index files (`index/STREAM.idx` beside a stream file): where each packet of
//! the stream file starts, its sizes, its time range and its counters, so that a reader can
//! go to a time or past a broken packet without reading the packets before it.
//!
//! The format (LTTng's `ctf-index.h`, versions 1.0 and 1.1), all integers big-endian: a
//! 16-byte header (magic `0xC1F1DCC1`, major 1, minor, the length of an entry in bytes), then
//! one entry per packet: offset in the file (bytes), packet and content sizes (bits), first
//! and last timestamps (clock cycles), the stream's discarded-event counter, the stream class
//! id, then from 1.1 the stream instance id and the packet sequence number. Entries may be
//! longer than the fields known here (later minor versions): the rest is ignored.
//!
//! Parsing and encoding do no I/O. An index is a hint: a reader checks it against the data
//! ([`check`]) and works without it.

use std::path::{Path, PathBuf};

use crate::access::Layout;
use crate::decode::Decoder;
use crate::error::{Error, Result};

/// Where LTTng keeps the packet index of stream file `DIR/NAME`: `DIR/index/NAME.idx`.
pub fn path_of(stream: &Path) -> PathBuf {
    let name = stream.file_name().unwrap_or_default().to_string_lossy();
    stream
        .parent()
        .unwrap_or(Path::new(""))
        .join("index")
        .join(format!("{name}.idx"))
}

/// The first four bytes of an index file.
pub const MAGIC: u32 = 0xC1F1_DCC1;
/// Bytes of an entry of version 1.0 (seven integers).
pub const ENTRY_1_0: usize = 7 * 8;
/// Bytes of an entry of version 1.1 (nine integers).
pub const ENTRY_1_1: usize = 9 * 8;
const HEADER: usize = 16;

/// One packet as an index file describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketEntry {
    /// Byte offset of the packet in its stream file.
    pub offset: u64,
    /// Packet and content sizes, in bits.
    pub packet_bits: u64,
    /// Content size in bits (the rest of the packet is padding).
    pub content_bits: u64,
    /// First and last clock values of the packet (cycles).
    pub ts_begin: u64,
    /// Last clock value of the packet (cycles).
    pub ts_end: u64,
    /// The stream's discarded-event counter at the packet's end.
    pub discarded: u64,
    /// The packet's stream class id.
    pub stream_class_id: u64,
    /// Version 1.1 only.
    pub instance_id: Option<u64>,
    /// The packet's sequence number (version 1.1 only).
    pub seq_num: Option<u64>,
}

/// Why index bytes were not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    #[error("shorter than an index header ({0} bytes)")]
    /// The bytes cannot hold an index header.
    Short(usize),
    #[error("bad magic number {0:#x} (expected {MAGIC:#x})")]
    /// Not an index file.
    Magic(u32),
    #[error("unsupported index version {0}.{1}")]
    /// A major version other than 1.
    Version(u32, u32),
    #[error("entries of {0} bytes, shorter than the version's {1}")]
    /// Entries too short for the fields their version has.
    EntryLength(u32, usize),
    /// Entry `entry` (from 0) says something the data cannot hold.
    #[error("entry {entry}: {message}")]
    Entry {
        /// The entry's position.
        entry: usize,
        /// What is wrong.
        message: String,
    },
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The entry of the packet at byte `offset` of the stream file `path` (whose bytes are
/// `data`), read from the packet's header and context as `layout`, the trace's compiled
/// metadata, describes them: to rebuild an index, or check one, from the data alone. Fails when
/// they do not decode or lack the stream class id, a size, the time range or the discarded
/// counter.
pub fn entry_at(layout: &Layout, path: &Path, data: &[u8], offset: u64) -> Result<PacketEntry> {
    let fail = |message: String| Error::Decode {
        path: path.to_path_buf(),
        offset,
        message,
    };
    let missing = |what: &str| fail(format!("the packet has no {what}"));
    let mut dec = Decoder::new(layout);
    let mut pos = offset.saturating_mul(8);
    let mut slots = Vec::new();
    let ph = layout.packet_header.ok_or_else(|| missing("header"))?;
    dec.decode(layout, ph, data, &mut pos, &mut slots)
        .map_err(|e| fail(e.message))?;
    // No stream class id: the trace's only stream class.
    let sc = match dec.specials.stream_class_id {
        Some(id) => id,
        None if layout.streams.len() == 1 => layout.streams.id_at(0),
        None => return Err(missing("stream class id")),
    };
    let pc = layout
        .streams
        .get(sc)
        .and_then(|s| s.packet_context)
        .ok_or_else(|| missing("context"))?;
    dec.decode(layout, pc, data, &mut pos, &mut slots)
        .map_err(|e| fail(e.message))?;
    let s = dec.specials;
    Ok(PacketEntry {
        offset,
        packet_bits: s.packet_total_bits.ok_or_else(|| missing("packet size"))?,
        content_bits: s
            .packet_content_bits
            .ok_or_else(|| missing("content size"))?,
        ts_begin: s.ts_begin.ok_or_else(|| missing("beginning time"))?,
        ts_end: s.ts_end.ok_or_else(|| missing("end time"))?,
        discarded: s
            .discarded
            .ok_or_else(|| missing("discarded-event counter"))?,
        stream_class_id: sc,
        instance_id: s.stream_id,
        seq_num: s.seq_num,
    })
}

/// The entries of an index file. Trailing bytes shorter than an entry (an index being
/// written) are left out.
pub fn parse(bytes: &[u8]) -> Result<Vec<PacketEntry>, IndexError> {
    if bytes.len() < HEADER {
        return Err(IndexError::Short(bytes.len()));
    }
    let magic = be32(bytes, 0);
    if magic != MAGIC {
        return Err(IndexError::Magic(magic));
    }
    let (major, minor, len) = (be32(bytes, 4), be32(bytes, 8), be32(bytes, 12));
    if major != 1 {
        return Err(IndexError::Version(major, minor));
    }
    let known = if minor >= 1 { ENTRY_1_1 } else { ENTRY_1_0 };
    if (len as usize) < known {
        return Err(IndexError::EntryLength(len, known));
    }
    Ok(bytes[HEADER..]
        .chunks_exact(len as usize)
        .map(|e| PacketEntry {
            offset: be64(e, 0),
            packet_bits: be64(e, 8),
            content_bits: be64(e, 16),
            ts_begin: be64(e, 24),
            ts_end: be64(e, 32),
            discarded: be64(e, 40),
            stream_class_id: be64(e, 48),
            instance_id: (known == ENTRY_1_1).then(|| be64(e, 56)),
            seq_num: (known == ENTRY_1_1).then(|| be64(e, 64)),
        })
        .collect())
}

/// The header of a version 1.1 index file, as LTTng 2.9 and later write it.
pub fn header() -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..4].copy_from_slice(&MAGIC.to_be_bytes());
    h[4..8].copy_from_slice(&1u32.to_be_bytes());
    h[8..12].copy_from_slice(&1u32.to_be_bytes());
    h[12..16].copy_from_slice(&(ENTRY_1_1 as u32).to_be_bytes());
    h
}

/// `e` as a version 1.1 entry (absent 1.1 fields as 0).
pub fn encode(e: &PacketEntry) -> [u8; ENTRY_1_1] {
    let mut b = [0u8; ENTRY_1_1];
    let fields = [
        e.offset,
        e.packet_bits,
        e.content_bits,
        e.ts_begin,
        e.ts_end,
        e.discarded,
        e.stream_class_id,
        e.instance_id.unwrap_or(0),
        e.seq_num.unwrap_or(0),
    ];
    for (i, v) in fields.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
    }
    b
}

/// Checks `entries` against a stream file of `file_len` bytes: packets in order, not
/// overlapping, sizes in whole bytes with the content inside the packet, packets inside the
/// file. An index that fails is not used (the reader then reads packet after packet).
pub fn check(entries: &[PacketEntry], file_len: u64) -> Result<(), IndexError> {
    let mut end = 0u64;
    for (i, e) in entries.iter().enumerate() {
        let fail = |message: String| Err(IndexError::Entry { entry: i, message });
        if e.packet_bits == 0 || !e.packet_bits.is_multiple_of(8) {
            return fail(format!("packet size of {} bits", e.packet_bits));
        }
        if e.content_bits > e.packet_bits {
            return fail(format!(
                "content of {} bits in a packet of {}",
                e.content_bits, e.packet_bits
            ));
        }
        if e.offset < end {
            return fail(format!(
                "packet at byte {} before the previous one's end ({end})",
                e.offset
            ));
        }
        end = e.offset.saturating_add(e.packet_bits / 8);
        if end > file_len {
            return fail(format!(
                "packet at byte {} of {} bytes past the file's end ({file_len})",
                e.offset,
                e.packet_bits / 8
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(offset: u64, bytes: u64) -> PacketEntry {
        PacketEntry {
            offset,
            packet_bits: bytes * 8,
            content_bits: bytes * 8 - 16,
            ts_begin: offset * 3,
            ts_end: offset * 3 + 2,
            discarded: offset / 7,
            stream_class_id: 2,
            instance_id: Some(5),
            seq_num: Some(offset / bytes),
        }
    }

    #[test]
    fn encoded_entries_parse_back() {
        let entries: Vec<_> = (0..5).map(|i| entry(i * 4096, 4096)).collect();
        let mut bytes = header().to_vec();
        for e in &entries {
            bytes.extend_from_slice(&encode(e));
        }
        // A partly written entry at the end is left out.
        bytes.extend_from_slice(&[0xff; 20]);
        assert_eq!(parse(&bytes), Ok(entries.clone()));
        assert_eq!(check(&entries, 5 * 4096), Ok(()));
        assert!(check(&entries, 5 * 4096 - 1).is_err());
    }

    #[test]
    fn version_1_0_has_no_sequence_numbers() {
        let mut bytes = header().to_vec();
        bytes[8..12].copy_from_slice(&0u32.to_be_bytes());
        bytes[12..16].copy_from_slice(&(ENTRY_1_0 as u32).to_be_bytes());
        bytes.extend_from_slice(&encode(&entry(0, 4096))[..ENTRY_1_0]);
        let e = parse(&bytes).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].offset, e[0].packet_bits, e[0].seq_num),
            (0, 4096 * 8, None)
        );
    }

    #[test]
    fn longer_entries_of_later_minor_versions_are_read() {
        let mut bytes = header().to_vec();
        bytes[8..12].copy_from_slice(&7u32.to_be_bytes());
        bytes[12..16].copy_from_slice(&((ENTRY_1_1 + 8) as u32).to_be_bytes());
        for i in 0..3 {
            bytes.extend_from_slice(&encode(&entry(i * 512, 512)));
            bytes.extend_from_slice(&[9; 8]);
        }
        let e = parse(&bytes).unwrap();
        assert_eq!(e, (0..3).map(|i| entry(i * 512, 512)).collect::<Vec<_>>());
    }

    proptest::proptest! {
        /// Any bytes: an error or entries, never a panic; entries that parse come back from
        /// their encoding, and `check` holds for what it accepts.
        #[test]
        fn any_bytes_parse_or_fail(
            mut bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            valid_header in proptest::prelude::any::<bool>(),
            file_len in 0u64..1 << 16,
        ) {
            if valid_header && bytes.len() >= HEADER {
                bytes[..HEADER].copy_from_slice(&header());
            }
            if let Ok(entries) = parse(&bytes) {
                let mut again = header().to_vec();
                for e in &entries {
                    again.extend_from_slice(&encode(e));
                }
                if bytes[8..12] == header()[8..12] {
                    proptest::prop_assert_eq!(parse(&again), Ok(entries.clone()));
                }
                if check(&entries, file_len).is_ok() {
                    let mut end = 0;
                    for e in &entries {
                        proptest::prop_assert!(e.offset >= end);
                        end = e.offset + e.packet_bits / 8;
                        proptest::prop_assert!(end <= file_len && e.content_bits <= e.packet_bits);
                    }
                }
            }
        }
    }

    #[test]
    fn bad_files_are_refused() {
        assert_eq!(parse(&[0; 3]), Err(IndexError::Short(3)));
        assert_eq!(parse(&[0; 16]), Err(IndexError::Magic(0)));
        let mut h = header();
        h[4..8].copy_from_slice(&2u32.to_be_bytes());
        assert_eq!(parse(&h), Err(IndexError::Version(2, 1)));
        let mut h = header();
        h[12..16].copy_from_slice(&8u32.to_be_bytes());
        assert_eq!(parse(&h), Err(IndexError::EntryLength(8, ENTRY_1_1)));
        // Overlapping packets, content larger than its packet, a size not in bytes.
        assert!(check(&[entry(0, 4096), entry(4000, 4096)], 1 << 20).is_err());
        let mut e = entry(0, 64);
        e.content_bits = e.packet_bits + 8;
        assert!(check(&[e], 1 << 20).is_err());
        e.content_bits = 8;
        e.packet_bits = 12;
        assert!(check(&[e], 1 << 20).is_err());
    }
}
