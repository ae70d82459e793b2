//! CTF packet index files (`index/CHANNEL_N.idx`): a header, then one entry per packet, all
//! big-endian. The relay writes format 1.1 (entries of 72 bytes).

use crate::wire::{put_u32, put_u64, Reader};
use crate::{DecodeError, Decoded};

/// The file's magic number.
pub const MAGIC: u32 = 0xC1F1_DCC1;
/// Header size.
pub const HEADER_SIZE: usize = 16;
/// Entry size of format 1.1.
pub const ENTRY_SIZE: usize = 72;
/// Entry size of format 1.0 (no instance id or sequence number).
pub const ENTRY_SIZE_1_0: usize = 56;

/// The header of an index file: format 1.1, entries of [`ENTRY_SIZE`] bytes.
pub fn header() -> [u8; HEADER_SIZE] {
    let mut out = Vec::with_capacity(HEADER_SIZE);
    put_u32(&mut out, MAGIC);
    put_u32(&mut out, 1);
    put_u32(&mut out, 1);
    put_u32(&mut out, ENTRY_SIZE as u32);
    let mut a = [0; HEADER_SIZE];
    a.copy_from_slice(&out);
    a
}

/// Reads an index file's header: the size of its entries.
pub fn decode_header(buf: &[u8]) -> Result<usize, DecodeError> {
    let mut r = Reader::new(buf, 0, "index file header");
    let magic = r.u32()?;
    if magic != MAGIC {
        return Err(r.invalid("magic", 0, format!("{magic:#x} is not {MAGIC:#x}")));
    }
    let major = r.u32()?;
    let _minor = r.u32()?;
    if major != 1 {
        return Err(r.invalid("index_major", 4, format!("version {major} is not 1")));
    }
    let len = r.u32()? as usize;
    if !(ENTRY_SIZE_1_0..=4096).contains(&len) {
        return Err(r.invalid("packet_index_len", 12, format!("{len} bytes")));
    }
    Ok(len)
}

/// One packet's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketIndex {
    /// Offset of the packet in the stream file, bytes.
    pub offset: u64,
    /// Packet size, bits.
    pub packet_size: u64,
    /// Content size, bits.
    pub content_size: u64,
    /// First timestamp.
    pub timestamp_begin: u64,
    /// Last timestamp.
    pub timestamp_end: u64,
    /// Events discarded so far.
    pub events_discarded: u64,
    /// CTF stream class id.
    pub stream_id: u64,
    /// CTF stream instance id.
    pub stream_instance_id: u64,
    /// Packet sequence number.
    pub packet_seq_num: u64,
}

impl PacketIndex {
    /// Appends the entry (format 1.1).
    pub fn encode(&self, out: &mut Vec<u8>) {
        for v in [
            self.offset,
            self.packet_size,
            self.content_size,
            self.timestamp_begin,
            self.timestamp_end,
            self.events_discarded,
            self.stream_id,
            self.stream_instance_id,
            self.packet_seq_num,
        ] {
            put_u64(out, v);
        }
    }

    /// Decodes an entry of `entry_size` bytes (from [`decode_header`]).
    pub fn decode(buf: &[u8], entry_size: usize) -> Decoded<Self> {
        let mut r = Reader::new(buf, 0, "index entry");
        if buf.len() < entry_size {
            return Err(DecodeError::Incomplete {
                needed: entry_size - buf.len(),
            });
        }
        let mut i = PacketIndex {
            offset: r.u64()?,
            packet_size: r.u64()?,
            content_size: r.u64()?,
            timestamp_begin: r.u64()?,
            timestamp_end: r.u64()?,
            events_discarded: r.u64()?,
            stream_id: r.u64()?,
            ..PacketIndex::default()
        };
        if entry_size >= ENTRY_SIZE {
            i.stream_instance_id = r.u64()?;
            i.packet_seq_num = r.u64()?;
        }
        Ok((i, entry_size))
    }
}
