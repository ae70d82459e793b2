//! Network headers for `net_dev_queue` / `net_if_receive_skb` (lttng-modules 2.9+
//! `network_header` layout of [`kernel::lttng`]): parsing of the header bytes that the eBPF
//! helper copies (see `bpf/netheaders.bpf.c`), and the store that merges those records into
//! the ftrace events of the same packet. Pure: bytes in, values out.

// Only the eBPF helper feeds the store: without it, its record side is unused.
#![cfg_attr(not(feature = "bpf"), allow(dead_code))]

use ctf::value::Value;
use std::collections::{HashMap, VecDeque};

/// Size of one ring-buffer record of the BPF program (`struct record`).
pub(crate) const RECORD_SIZE: usize = 24 + HDR_BYTES;
/// Header bytes copied from the network header on.
pub(crate) const HDR_BYTES: usize = 96;
/// A BPF record matches an ftrace event of the same skb, direction and length at most this
/// far apart (both probes run in the same tracepoint call; this is generous).
pub(crate) const MATCH_WINDOW_NS: u64 = 1_000_000;
/// Unmatched records older than this (behind the newest one) are dropped.
pub(crate) const RETAIN_NS: u64 = 10_000_000_000;

/// Direction of a packet event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Dir {
    /// `net_dev_queue`.
    Tx = 0,
    /// `netif_receive_skb` (`net_if_receive_skb` in LTTng).
    Rx = 1,
}

/// One record of the BPF ring buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BpfRecord {
    pub(crate) ts: u64,
    pub(crate) skbaddr: u64,
    pub(crate) len: u32,
    pub(crate) dir: Dir,
    /// The copied bytes from the network header on.
    pub(crate) hdr: Vec<u8>,
}

impl BpfRecord {
    /// Decodes `struct record` (native byte order, as the kernel wrote it).
    pub(crate) fn parse(b: &[u8]) -> Option<Self> {
        if b.len() < RECORD_SIZE {
            return None;
        }
        let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
        let dir = match b[22] {
            0 => Dir::Tx,
            1 => Dir::Rx,
            _ => return None,
        };
        let n = (b[23] as usize).min(HDR_BYTES);
        Some(BpfRecord {
            ts: u64_at(0),
            skbaddr: u64_at(8),
            len: u32::from_ne_bytes(b[16..20].try_into().unwrap()),
            dir,
            hdr: b[24..24 + n].to_vec(),
        })
    }
}

fn be16(b: &[u8], o: usize) -> u64 {
    u16::from_be_bytes([b[o], b[o + 1]]) as u64
}

fn be32(b: &[u8], o: usize) -> u64 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as u64
}

fn bytes(b: &[u8]) -> Value {
    Value::Array(b.iter().map(|&x| Value::U64(x as u64)).collect())
}

/// `(transport_header_type, transport_header)` for IP protocol `proto` at `t`.
fn transport(proto: u8, t: &[u8]) -> (Value, Value) {
    let unknown = || {
        (
            Value::U64(0),
            Value::Variant(0, Box::new(Value::Struct(vec![]))),
        )
    };
    match proto {
        6 if t.len() >= 20 => {
            let tcp = Value::Struct(vec![
                Value::U64(be16(t, 0)),
                Value::U64(be16(t, 2)),
                Value::U64(be32(t, 4)),
                Value::U64(be32(t, 8)),
                Value::U64((t[12] >> 4) as u64),
                Value::U64(((t[12] >> 1) & 7) as u64),
                Value::U64((((t[12] & 1) as u64) << 8) | t[13] as u64),
                Value::U64(be16(t, 14)),
                Value::U64(be16(t, 16)),
                Value::U64(be16(t, 18)),
            ]);
            (Value::U64(1), Value::Variant(1, Box::new(tcp)))
        }
        17 if t.len() >= 8 => {
            let udp = Value::Struct((0..4).map(|i| Value::U64(be16(t, 2 * i))).collect());
            (Value::U64(2), Value::Variant(2, Box::new(udp)))
        }
        1 if t.len() >= 8 => {
            let icmp = Value::Struct(vec![
                Value::U64(t[0] as u64),
                Value::U64(t[1] as u64),
                Value::U64(be16(t, 2)),
                Value::U64(be32(t, 4)),
            ]);
            (Value::U64(3), Value::Variant(3, Box::new(icmp)))
        }
        _ => unknown(),
    }
}

/// `(network_header_type, network_header)` of an event without header (`_unknown`).
pub(crate) fn unknown_header() -> (Value, Value) {
    (
        Value::U64(0),
        Value::Variant(0, Box::new(Value::Struct(vec![]))),
    )
}

/// Parses the bytes from the network header on into `(network_header_type,
/// network_header)`; `None` if they are neither IPv4 nor IPv6.
pub fn parse_network_header(h: &[u8]) -> Option<(Value, Value)> {
    let version = h.first()? >> 4;
    match version {
        4 if h.len() >= 20 => {
            let ihl = (h[0] & 15) as usize;
            let frag = be16(h, 6);
            // The transport header is only in the first fragment.
            let t = if ihl >= 5 && frag & 0x1fff == 0 {
                h.get(ihl * 4..).unwrap_or(&[])
            } else {
                &[]
            };
            let (tt, th) = transport(h[9], t);
            let ipv4 = Value::Struct(vec![
                Value::U64(4),
                Value::U64(ihl as u64),
                Value::U64(h[1] as u64),
                Value::U64(be16(h, 2)),
                Value::U64(be16(h, 4)),
                Value::U64(frag),
                Value::U64(h[8] as u64),
                Value::U64(h[9] as u64),
                Value::U64(be16(h, 10)),
                bytes(&h[12..16]),
                bytes(&h[16..20]),
                tt,
                th,
            ]);
            Some((Value::U64(1), Value::Variant(1, Box::new(ipv4))))
        }
        6 if h.len() >= 40 => {
            let addr =
                |o: usize| Value::Array((0..8).map(|i| Value::U64(be16(h, o + 2 * i))).collect());
            let (tt, th) = transport(h[6], &h[40..]);
            let ipv6 = Value::Struct(vec![
                Value::U64(6),
                Value::U64((h[0] & 15) as u64),
                bytes(&h[1..4]),
                Value::U64(be16(h, 4)),
                Value::U64(h[6] as u64),
                Value::U64(h[7] as u64),
                addr(8),
                addr(24),
                tt,
                th,
            ]);
            Some((Value::U64(2), Value::Variant(2, Box::new(ipv6))))
        }
        _ => None,
    }
}

/// Merge counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// BPF records received.
    pub records: u64,
    /// Net events that got a header.
    pub matched: u64,
    /// Net events left without one (`_unknown`).
    pub unmatched: u64,
    /// BPF records dropped unmatched (too old).
    pub expired: u64,
}

/// BPF records waiting for their ftrace event, by `(direction, skbaddr)`.
#[derive(Debug, Default)]
pub(crate) struct HeaderStore {
    pending: HashMap<(Dir, u64), VecDeque<BpfRecord>>,
    newest: u64,
    last_sweep: u64,
    pub(crate) stats: MergeStats,
}

impl HeaderStore {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds one raw ring-buffer record; returns whether it was valid.
    pub(crate) fn push_raw(&mut self, raw: &[u8]) -> bool {
        match BpfRecord::parse(raw) {
            Some(r) => {
                self.push(r);
                true
            }
            None => false,
        }
    }

    pub(crate) fn push(&mut self, r: BpfRecord) {
        self.stats.records += 1;
        self.newest = self.newest.max(r.ts);
        self.pending
            .entry((r.dir, r.skbaddr))
            .or_default()
            .push_back(r);
        if self.newest.saturating_sub(self.last_sweep) > RETAIN_NS {
            self.sweep();
        }
    }

    fn sweep(&mut self) {
        let limit = self.newest.saturating_sub(RETAIN_NS);
        let mut expired = 0;
        self.pending.retain(|_, q| {
            let before = q.len();
            q.retain(|r| r.ts >= limit);
            expired += (before - q.len()) as u64;
            !q.is_empty()
        });
        self.stats.expired += expired;
        self.last_sweep = self.newest;
    }

    /// Records waiting.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pending.values().map(VecDeque::len).sum()
    }

    /// Takes the record of the packet event `(dir, skbaddr, len)` at raw time `ts` (nearest
    /// in time within [`MATCH_WINDOW_NS`]), parsed; counts nothing.
    pub(crate) fn take(
        &mut self,
        dir: Dir,
        skbaddr: u64,
        len: u32,
        ts: u64,
    ) -> Option<(Value, Value)> {
        let q = self.pending.get_mut(&(dir, skbaddr))?;
        let best = q
            .iter()
            .enumerate()
            .filter(|(_, r)| r.len == len && r.ts.abs_diff(ts) <= MATCH_WINDOW_NS)
            .min_by_key(|(_, r)| r.ts.abs_diff(ts))
            .map(|(i, _)| i)?;
        let r = q.remove(best)?;
        if q.is_empty() {
            self.pending.remove(&(dir, skbaddr));
        }
        parse_network_header(&r.hdr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 + TCP SYN from 10.200.0.1:38226 to 10.200.0.2:18090.
    fn syn() -> Vec<u8> {
        let mut h = vec![
            0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0xab, 0xcd, 10, 200, 0, 1, 10, 200, 0, 2,
        ];
        h.extend_from_slice(&38226u16.to_be_bytes());
        h.extend_from_slice(&18090u16.to_be_bytes());
        h.extend_from_slice(&545586031u32.to_be_bytes());
        h.extend_from_slice(&0u32.to_be_bytes());
        h.extend_from_slice(&[0xa0, 0x02, 0xfa, 0xf0, 0x11, 0x22, 0, 0]);
        h
    }

    fn raw(ts: u64, skb: u64, len: u32, dir: u8, hdr: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&ts.to_ne_bytes());
        b.extend_from_slice(&skb.to_ne_bytes());
        b.extend_from_slice(&len.to_ne_bytes());
        b.extend_from_slice(&0x0008u16.to_ne_bytes());
        b.push(dir);
        b.push(hdr.len() as u8);
        let mut h = hdr.to_vec();
        h.resize(HDR_BYTES, 0);
        b.extend_from_slice(&h);
        b
    }

    #[test]
    fn parses_ipv4_tcp() {
        let (t, v) = parse_network_header(&syn()).unwrap();
        assert_eq!(t, Value::U64(1));
        let Value::Variant(1, ip) = v else { panic!() };
        let Value::Struct(f) = *ip else { panic!() };
        assert_eq!(f[0], Value::U64(4));
        assert_eq!(f[1], Value::U64(5));
        assert_eq!(f[3], Value::U64(60));
        assert_eq!(f[4], Value::U64(0x1234));
        assert_eq!(f[5], Value::U64(0x4000));
        assert_eq!(f[7], Value::U64(6));
        assert_eq!(f[9], bytes(&[10, 200, 0, 1]));
        assert_eq!(f[11], Value::U64(1));
        let Value::Variant(1, tcp) = &f[12] else {
            panic!()
        };
        let Value::Struct(t) = &**tcp else { panic!() };
        assert_eq!(t[0], Value::U64(38226));
        assert_eq!(t[1], Value::U64(18090));
        assert_eq!(t[2], Value::U64(545586031));
        assert_eq!(t[4], Value::U64(10));
        assert_eq!(t[6], Value::U64(2));
        assert_eq!(t[7], Value::U64(0xfaf0));
    }

    #[test]
    fn parses_ipv6_udp_and_rejects_other() {
        let mut h = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
        h.extend((0..32).map(|i| i as u8));
        h.extend_from_slice(&[0, 53, 0x30, 0x39, 0, 8, 0xbe, 0xef]);
        let (t, v) = parse_network_header(&h).unwrap();
        assert_eq!(t, Value::U64(2));
        let Value::Variant(2, ip) = v else { panic!() };
        let Value::Struct(f) = *ip else { panic!() };
        assert_eq!(f[3], Value::U64(8));
        assert_eq!(f[8], Value::U64(2));
        let Value::Variant(2, udp) = &f[9] else {
            panic!()
        };
        assert_eq!(
            **udp,
            Value::Struct(vec![
                Value::U64(53),
                Value::U64(12345),
                Value::U64(8),
                Value::U64(0xbeef)
            ])
        );
        assert!(parse_network_header(&[0x00; 40]).is_none());
        assert!(parse_network_header(&[0x45; 10]).is_none());
    }

    #[test]
    fn store_matches_nearest_and_expires() {
        let mut s = HeaderStore::new();
        assert!(s.push_raw(&raw(1_000, 0xffff_8881, 74, 0, &syn())));
        assert!(s.push_raw(&raw(900_000, 0xffff_8881, 74, 0, &syn())));
        assert!(!s.push_raw(&[0u8; 10]));
        // Wrong direction, length or too far: no match.
        assert!(s.take(Dir::Rx, 0xffff_8881, 74, 1_000).is_none());
        assert!(s.take(Dir::Tx, 0xffff_8881, 60, 1_000).is_none());
        assert!(s.take(Dir::Tx, 0xffff_8881, 74, 5_000_000).is_none());
        assert!(s.take(Dir::Tx, 0xffff_8881, 74, 890_000).is_some());
        assert_eq!(s.len(), 1);
        assert!(s.take(Dir::Tx, 0xffff_8881, 74, 1_200).is_some());
        assert_eq!(s.len(), 0);
        s.push_raw(&raw(5, 1, 60, 1, &syn()));
        s.push_raw(&raw(RETAIN_NS + 100, 2, 60, 1, &syn()));
        assert_eq!(s.stats.expired, 1);
        assert_eq!(s.stats.records, 4);
    }
}
