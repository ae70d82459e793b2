//! Builds small LTTng-kernel-like CTF traces (metadata in `kernel.tsdl`) byte by byte.
#![allow(dead_code)]

use std::path::Path;

use ctf::value::Value;
use ctf::{Message, StreamReader};

/// Little-endian, LTTng-like metadata: compact/extended event headers and six event classes.
pub const KERNEL_TSDL: &str = include_str!("kernel.tsdl");
/// The trace UUID declared in [`KERNEL_TSDL`].
pub const UUID: [u8; 16] = [
    0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0, 0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64,
];
pub const MAGIC: u32 = 0xC1FC_1FC1;
/// Packet header (32 bytes) plus packet context (52 bytes): events start here.
pub const HEADER_LEN: usize = 84;

/// Event class ids of [`KERNEL_TSDL`].
pub const SCHED_SWITCH: u32 = 0;
pub const OPENAT: u32 = 1;
pub const SENDMSG: u32 = 2;
pub const TAGGED: u32 = 3;
pub const BITFIELDS: u32 = 4;
pub const TICK: u32 = 5;

/// One data packet being built.
#[derive(Clone)]
pub struct Packet {
    pub magic: u32,
    pub uuid: [u8; 16],
    pub stream_id: u32,
    pub ts_begin: u64,
    pub ts_end: u64,
    pub seq: u64,
    pub discarded: u64,
    pub cpu: u32,
    /// Event bytes, right after the packet context.
    pub body: Vec<u8>,
    /// Zero bytes after the content (packet_size - content_size).
    pub padding: usize,
    /// Overrides of the declared sizes, in bits.
    pub content_bits: Option<u64>,
    pub packet_bits: Option<u64>,
}

impl Packet {
    pub fn new(seq: u64, ts_begin: u64, ts_end: u64) -> Packet {
        Packet {
            magic: MAGIC,
            uuid: UUID,
            stream_id: 0,
            ts_begin,
            ts_end,
            seq,
            discarded: 0,
            cpu: 0,
            body: Vec::new(),
            padding: 12,
            content_bits: None,
            packet_bits: None,
        }
    }

    /// Appends an event with a compact header (`ts` is the low 27 bits of the clock).
    pub fn event(mut self, id: u32, ts: u64, payload: &[u8]) -> Packet {
        assert!(id < 31 && ts < 1 << 27);
        let word = id | ((ts as u32) << 5);
        self.body.extend_from_slice(&word.to_le_bytes());
        self.body.extend_from_slice(payload);
        self
    }

    /// Appends an event with an extended header (full 64-bit timestamp).
    pub fn event_ext(mut self, id: u32, ts: u64, payload: &[u8]) -> Packet {
        self.body.push(31);
        self.body.extend_from_slice(&id.to_le_bytes());
        self.body.extend_from_slice(&ts.to_le_bytes());
        self.body.extend_from_slice(payload);
        self
    }

    /// Offset of the next event to be appended, from the packet start.
    pub fn next_event_offset(&self) -> usize {
        HEADER_LEN + self.body.len()
    }

    pub fn bytes(&self) -> Vec<u8> {
        let content = (HEADER_LEN + self.body.len()) as u64 * 8;
        let total = content + self.padding as u64 * 8;
        let mut b = Vec::new();
        b.extend_from_slice(&self.magic.to_le_bytes());
        b.extend_from_slice(&self.uuid);
        b.extend_from_slice(&self.stream_id.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&self.ts_begin.to_le_bytes());
        b.extend_from_slice(&self.ts_end.to_le_bytes());
        b.extend_from_slice(&self.content_bits.unwrap_or(content).to_le_bytes());
        b.extend_from_slice(&self.packet_bits.unwrap_or(total).to_le_bytes());
        b.extend_from_slice(&self.seq.to_le_bytes());
        b.extend_from_slice(&self.discarded.to_le_bytes());
        b.extend_from_slice(&self.cpu.to_le_bytes());
        assert_eq!(b.len(), HEADER_LEN);
        b.extend_from_slice(&self.body);
        b.extend(std::iter::repeat_n(0u8, self.padding));
        b
    }
}

/// Concatenated packets.
pub fn stream(packets: &[Packet]) -> Vec<u8> {
    packets.iter().flat_map(|p| p.bytes()).collect()
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Payload of `sched_switch`.
pub fn sched_switch(
    prev_comm: &str,
    prev_tid: i32,
    state: i32,
    next: &str,
    next_tid: i32,
) -> Vec<u8> {
    let mut p = [0u8; 16].to_vec();
    p[..prev_comm.len()].copy_from_slice(prev_comm.as_bytes());
    p.extend_from_slice(&prev_tid.to_le_bytes());
    p.extend_from_slice(&state.to_le_bytes());
    cstr(&mut p, next);
    p.extend_from_slice(&next_tid.to_le_bytes());
    p
}

/// Value of a `sched_switch` payload.
pub fn sched_switch_value(
    prev_comm: &str,
    prev_tid: i32,
    state: i32,
    next: &str,
    next_tid: i32,
) -> Value {
    let mut comm = [0u8; 16].to_vec();
    comm[..prev_comm.len()].copy_from_slice(prev_comm.as_bytes());
    Value::Struct(vec![
        Value::Str(comm),
        Value::I64(prev_tid as i64),
        Value::I64(state as i64),
        Value::str(next),
        Value::I64(next_tid as i64),
    ])
}

/// Payload of `syscall_entry_openat`.
pub fn openat(dfd: i32, filename: &str, flags: i32) -> Vec<u8> {
    let mut p = dfd.to_le_bytes().to_vec();
    cstr(&mut p, filename);
    p.extend_from_slice(&flags.to_le_bytes());
    p
}

pub fn openat_value(dfd: i32, filename: &str, flags: i32) -> Value {
    Value::Struct(vec![
        Value::I64(dfd as i64),
        Value::str(filename),
        Value::I64(flags as i64),
    ])
}

/// Payload of `sys_sendmsg`.
pub fn sendmsg(data: &[u8], fds: &[i32]) -> Vec<u8> {
    let mut p = (data.len() as u32).to_le_bytes().to_vec();
    p.extend_from_slice(data);
    p.extend_from_slice(&(fds.len() as u16).to_le_bytes());
    for fd in fds {
        p.extend_from_slice(&fd.to_le_bytes());
    }
    p
}

/// Payload of `tagged` with option `I`.
pub fn tagged_int(v: i32) -> Vec<u8> {
    let mut p = vec![0u8];
    p.extend_from_slice(&v.to_le_bytes());
    p
}

/// Payload of `tagged` with option `S`.
pub fn tagged_str(s: &str) -> Vec<u8> {
    let mut p = vec![1u8];
    cstr(&mut p, s);
    p
}

/// Payload of `bitfields`.
pub fn bitfields(small: i8, flags: u16, ratio: f64, names: &[&str]) -> Vec<u8> {
    let word = (small as u16 & 0x7) | (flags << 3);
    let mut p = word.to_le_bytes().to_vec();
    p.extend_from_slice(&ratio.to_le_bytes());
    p.extend_from_slice(&(names.len() as u16).to_le_bytes());
    for n in names {
        cstr(&mut p, n);
    }
    p
}

/// Writes a trace directory: `metadata` and the given stream files.
pub fn write_trace(dir: &Path, metadata: &str, streams: &[(&str, &[u8])]) {
    std::fs::write(dir.join("metadata"), metadata).unwrap();
    for (name, bytes) in streams {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// What a reader yielded, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// Event name, clock value in cycles and payload value.
    Event(String, u64, Value),
    /// `Error::Decode` file name and offset.
    Decode(String, u64),
    Other(String),
    Msg(Message),
}

/// Reads a stream to its end, touching every field of every event.
pub fn read_all(r: &mut StreamReader) -> Vec<Got> {
    let mut out = Vec::new();
    let mut guard = 0;
    while let Some(m) = r.next() {
        guard += 1;
        assert!(guard < 100_000, "reader does not end");
        match m {
            Ok(Message::Event) => {
                let ev = r.event();
                let payload = ev.payload().map_or(Value::Absent, |p| p.to_value());
                for v in [ev.header(), ev.packet_context(), ev.packet_header()]
                    .into_iter()
                    .flatten()
                {
                    v.to_value();
                }
                out.push(Got::Event(ev.name().to_string(), ev.cycles(), payload));
            }
            Ok(m) => out.push(Got::Msg(m)),
            Err(ctf::Error::Decode { path, offset, .. }) => out.push(Got::Decode(
                path.file_name().unwrap().to_string_lossy().into_owned(),
                offset,
            )),
            Err(e) => out.push(Got::Other(e.to_string())),
        }
    }
    out
}

/// Opens the trace in `dir` and reads its only stream.
pub fn read_dir_stream(dir: &Path) -> (Vec<Got>, Vec<String>) {
    let traces = ctf::open_all(&[dir]).unwrap();
    assert_eq!(traces.len(), 1);
    let mut readers = traces[0].readers();
    assert_eq!(readers.len(), 1, "streams: {:?}", traces[0].streams);
    let got = read_all(&mut readers[0]);
    (got, readers[0].warnings.clone())
}
