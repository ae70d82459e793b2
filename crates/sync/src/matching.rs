//! Sans-io packet matching: pairs each packet a host sent with the same packet received by
//! another host.
//!
//! Policy (Trace Compass's, with its defects fixed):
//! - The key is the TCP `seq`, `ack_seq` and `flags`, plus a hash of the address/port 4-tuple
//!   when the layout has one (`flow`; 0 when unknown), so unrelated flows cannot collide.
//! - Either side may come first (with large clock offsets a receive can precede its send in
//!   raw time order).
//! - The first send of a key pairs with the first receive (retransmissions and packets seen
//!   twice on one host keep the first; later duplicates are dropped).
//! - A packet received on the host that sent it (loopback, veth/bridge) is a *local* match:
//!   consumed, counted, never given to the clock algorithm; a pending receive is never paired
//!   with a later send of the same host.
//! - Memory is bounded: once a host has matched packets with every other host (the number of
//!   hosts is given with [`Matcher::set_hosts`]), its unmatched entries older than its last
//!   match with each of them, by more than `CLEANUP_MARGIN_NS` (one second), are dropped (Trace
//!   Compass's cleanup, which has no margin and so loses packets overtaken by later ones);
//!   and in any case, beyond `max_pending` entries per host and direction, the oldest go.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// How much older than a host's last matches an unmatched entry must be to be dropped (on that
/// host's clock): packets overtaken by later ones still match.
pub(crate) const CLEANUP_MARGIN_NS: i64 = 1_000_000_000;

/// Send (cause) or receive (effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// The packet left this host.
    Send,
    /// The packet arrived on this host.
    Recv,
}

/// What identifies one packet on both hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PacketKey {
    /// TCP sequence number.
    pub seq: u32,
    /// TCP acknowledgment number.
    pub ack_seq: u32,
    /// TCP flags.
    pub flags: u32,
    /// Hash of (source address, destination address, source port, destination port), or 0.
    pub flow: u64,
}

/// One network event: which host and trace saw it, which way, the packet, the time (ns on the
/// host's own clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetEvent {
    /// Host index.
    pub host: u32,
    /// Index of the trace the event is from.
    pub trace: u32,
    /// Send or receive.
    pub dir: Dir,
    /// The packet.
    pub key: PacketKey,
    /// Time, ns on the host's own clock.
    pub ts: i64,
}

/// One end of a matched packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    /// Host index.
    pub host: u32,
    /// Index of the trace that saw it.
    pub trace: u32,
    /// Time, ns on the host's own clock.
    pub ts: i64,
}

/// A packet seen sent by one host and received by another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match {
    /// Where and when it was sent.
    pub send: End,
    /// Where and when it was received.
    pub recv: End,
    /// The packet.
    pub key: PacketKey,
}

/// A fast hasher for fixed-size keys (FxHash-like).
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A pending (unmatched) end: host, trace, time.
type Pending = (u32, u32, i64);

/// Pending ends of one key, in arrival order: usually one (an empty `rest` allocates nothing).
#[derive(Clone, Debug)]
struct Slot {
    first: Pending,
    rest: Vec<Pending>,
}

impl Slot {
    fn iter(&self) -> impl Iterator<Item = &Pending> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }

    /// Removes entry `i`; returns true when the slot became empty.
    fn remove(&mut self, i: usize) -> bool {
        if i == 0 {
            if self.rest.is_empty() {
                return true;
            }
            self.first = self.rest.remove(0);
        } else {
            self.rest.remove(i - 1);
        }
        false
    }
}

/// One direction's table of unmatched ends, with per-host FIFO queues for eviction.
#[derive(Default)]
struct Table {
    map: FastMap<PacketKey, Slot>,
    /// Per host: (key, ts) in insertion order; entries already matched are skipped lazily.
    queues: Vec<VecDeque<(PacketKey, i64)>>,
    /// Live (unmatched) entries per host.
    live: Vec<usize>,
    len: usize,
}

impl Table {
    fn queue(&mut self, host: u32) -> &mut VecDeque<(PacketKey, i64)> {
        let h = host as usize;
        if self.queues.len() <= h {
            self.queues.resize_with(h + 1, VecDeque::new);
            self.live.resize(h + 1, 0);
        }
        &mut self.queues[h]
    }

    /// Inserts unless the host already has this key pending (the first one is kept).
    fn insert(&mut self, host: u32, trace: u32, key: PacketKey, ts: i64) -> bool {
        match self.map.get_mut(&key) {
            Some(slot) => {
                if slot.iter().any(|p| p.0 == host) {
                    return false;
                }
                slot.rest.push((host, trace, ts));
            }
            None => {
                self.map.insert(
                    key,
                    Slot {
                        first: (host, trace, ts),
                        rest: Vec::new(),
                    },
                );
            }
        }
        self.len += 1;
        self.queue(host).push_back((key, ts));
        self.live[host as usize] += 1;
        true
    }

    /// Removes and returns the first pending end of `key` accepted by `pick`.
    fn take(&mut self, key: &PacketKey, pick: impl Fn(&Pending) -> bool) -> Option<Pending> {
        let slot = self.map.get_mut(key)?;
        let i = slot.iter().position(pick)?;
        let p = *slot.iter().nth(i).unwrap();
        if slot.remove(i) {
            self.map.remove(key);
        }
        self.len -= 1;
        self.live[p.0 as usize] -= 1;
        Some(p)
    }

    fn contains(&self, host: u32, key: &PacketKey, ts: i64) -> bool {
        self.map
            .get(key)
            .is_some_and(|s| s.iter().any(|p| p.0 == host && p.2 == ts))
    }

    fn live(&self, host: u32) -> usize {
        self.live.get(host as usize).copied().unwrap_or(0)
    }

    /// Drops `host`'s oldest live entries while they are older than `watermark` or more than
    /// `max` are live, skipping entries already matched; returns how many were dropped.
    fn evict(&mut self, host: u32, watermark: Option<i64>, max: usize) -> u64 {
        let mut dropped = 0;
        while let Some(&(key, ts)) = self.queues.get(host as usize).and_then(|q| q.front()) {
            let live = self.contains(host, &key, ts);
            if live && !(watermark.is_some_and(|w| ts < w) || self.live(host) > max) {
                break;
            }
            self.queues[host as usize].pop_front();
            if live {
                self.take(&key, |p| p.0 == host && p.2 == ts);
                dropped += 1;
            }
        }
        // Matched entries behind a long-pending one: compact the queue now and then.
        let live = self.live(host);
        if let Some(q) = self.queues.get_mut(host as usize) {
            if q.len() > 2 * live + 4096 {
                let map = &self.map;
                q.retain(|(k, ts)| {
                    map.get(k)
                        .is_some_and(|s| s.iter().any(|p| p.0 == host && p.2 == *ts))
                });
            }
        }
        dropped
    }
}

/// Counters of a matching run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchStats {
    /// Network events given.
    pub events: u64,
    /// Packets matched between two hosts.
    pub matches: u64,
    /// Packets received by the host that sent them (loopback, veth, bridge).
    pub local_matches: u64,
    /// Duplicate sends or receives of a pending key on one host (retransmissions, packets
    /// seen twice), dropped.
    pub duplicates: u64,
    /// Unmatched entries dropped by cleanup or by the memory bound.
    pub evicted: u64,
}

/// The matcher: feed it events, get matches.
pub struct Matcher {
    sends: Table,
    recvs: Table,
    /// Last matched (send ts, recv ts) per (sender, receiver).
    last: FastMap<(u32, u32), (i64, i64)>,
    /// Partners each host has matched with, as sender and as receiver.
    partners_out: Vec<Vec<u32>>,
    partners_in: Vec<Vec<u32>>,
    max_pending: usize,
    /// Hosts that can match (the cleanup runs once a host matched all the others).
    hosts: Option<usize>,
    /// The cleanup runs every this many matches.
    cleanup_every: u64,
    /// What the matcher has seen so far.
    pub stats: MatchStats,
}

impl Default for Matcher {
    fn default() -> Self {
        Self::new()
    }
}

impl Matcher {
    /// A matcher with the default bound on unmatched entries.
    pub fn new() -> Self {
        Self::with_max_pending(1 << 22)
    }

    /// A matcher keeping at most `max_pending` unmatched ends per host and direction.
    pub(crate) fn with_max_pending(max_pending: usize) -> Self {
        Matcher {
            sends: Table::default(),
            recvs: Table::default(),
            last: FastMap::default(),
            partners_out: Vec::new(),
            partners_in: Vec::new(),
            max_pending: max_pending.max(1),
            hosts: None,
            cleanup_every: 1024,
            stats: MatchStats::default(),
        }
    }

    /// Sets the number of hosts taking part: enables the cleanup of old unmatched entries.
    pub fn set_hosts(&mut self, n: usize) {
        self.hosts = Some(n);
    }

    /// Unmatched (sends, receives) currently held.
    #[cfg(test)]
    fn pending(&self) -> (usize, usize) {
        (self.sends.len, self.recvs.len)
    }

    /// Processes one event; returns the match it completes, if any.
    pub fn push(&mut self, ev: NetEvent) -> Option<Match> {
        self.stats.events += 1;
        let h = ev.host;
        match ev.dir {
            Dir::Recv => {
                // Prefer a send from another host; a send from this host is a local delivery.
                if let Some(p) = self.sends.take(&ev.key, |p| p.0 != h) {
                    return Some(self.matched(p, (h, ev.trace, ev.ts), ev.key));
                }
                if self.sends.take(&ev.key, |p| p.0 == h).is_some() {
                    self.stats.local_matches += 1;
                    return None;
                }
                if !self.recvs.insert(h, ev.trace, ev.key, ev.ts) {
                    self.stats.duplicates += 1;
                }
                if self.recvs.live(h) > self.max_pending {
                    self.stats.evicted += self.recvs.evict(h, None, self.max_pending);
                }
                None
            }
            Dir::Send => {
                if let Some(p) = self.recvs.take(&ev.key, |p| p.0 != h) {
                    return Some(self.matched((h, ev.trace, ev.ts), p, ev.key));
                }
                if !self.sends.insert(h, ev.trace, ev.key, ev.ts) {
                    self.stats.duplicates += 1;
                }
                if self.sends.live(h) > self.max_pending {
                    self.stats.evicted += self.sends.evict(h, None, self.max_pending);
                }
                None
            }
        }
    }

    fn matched(&mut self, s: Pending, r: Pending, key: PacketKey) -> Match {
        self.stats.matches += 1;
        let (sh, rh) = (s.0, r.0);
        self.last.insert((sh, rh), (s.2, r.2));
        for (v, a, b) in [
            (&mut self.partners_out, sh, rh),
            (&mut self.partners_in, rh, sh),
        ] {
            if v.len() <= a as usize {
                v.resize_with(a as usize + 1, Vec::new);
            }
            if !v[a as usize].contains(&b) {
                v[a as usize].push(b);
            }
        }
        // Cleanup: the sender's unmatched sends older than its last match to every partner,
        // the receiver's unmatched receives older than its last match from every partner.
        if self.stats.matches.is_multiple_of(self.cleanup_every) {
            self.cleanup(sh, rh);
        }
        Match {
            send: End {
                host: sh,
                trace: s.1,
                ts: s.2,
            },
            recv: End {
                host: rh,
                trace: r.1,
                ts: r.2,
            },
            key,
        }
    }

    fn cleanup(&mut self, sh: u32, rh: u32) {
        let max = self.max_pending;
        let others = self
            .hosts
            .map(|n| n.saturating_sub(1))
            .unwrap_or(usize::MAX);
        let wm_out = (self.partners_out[sh as usize].len() >= others)
            .then(|| {
                self.partners_out[sh as usize]
                    .iter()
                    .map(|d| self.last[&(sh, *d)].0)
                    .min()
                    .map(|w| w.saturating_sub(CLEANUP_MARGIN_NS))
            })
            .flatten();
        self.stats.evicted += self.sends.evict(sh, wm_out, max);
        let wm_in = (self.partners_in[rh as usize].len() >= others)
            .then(|| {
                self.partners_in[rh as usize]
                    .iter()
                    .map(|o| self.last[&(*o, rh)].1)
                    .min()
                    .map(|w| w.saturating_sub(CLEANUP_MARGIN_NS))
            })
            .flatten();
        self.stats.evicted += self.recvs.evict(rh, wm_in, max);
    }

    /// Runs the cleanup every `n` matches (default 1024).
    #[cfg(test)]
    fn set_cleanup_every(&mut self, n: u64) {
        self.cleanup_every = n.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(host: u32, dir: Dir, seq: u32, ts: i64) -> NetEvent {
        NetEvent {
            host,
            trace: host,
            dir,
            key: PacketKey {
                seq,
                ack_seq: 0,
                flags: 0x18,
                flow: 0,
            },
            ts,
        }
    }

    #[test]
    fn pairs_either_order_and_first_send_wins() {
        let mut m = Matcher::new();
        assert!(m.push(ev(0, Dir::Send, 1, 100)).is_none());
        // Retransmission of the same packet: dropped, the first send is kept.
        assert!(m.push(ev(0, Dir::Send, 1, 200)).is_none());
        let x = m.push(ev(1, Dir::Recv, 1, 150)).unwrap();
        assert_eq!((x.send.ts, x.recv.ts), (100, 150));
        // Receive before send (clock offsets).
        assert!(m.push(ev(1, Dir::Recv, 2, 10)).is_none());
        let y = m.push(ev(0, Dir::Send, 2, 900)).unwrap();
        assert_eq!(
            (y.send.host, y.send.ts, y.recv.host, y.recv.ts),
            (0, 900, 1, 10)
        );
        assert_eq!(m.stats.matches, 2);
        assert_eq!(m.stats.duplicates, 1);
    }

    #[test]
    fn local_deliveries_are_not_matches() {
        // The veth case: client15 → client20 is local, client30 → server50 is a real match.
        let mut m = Matcher::new();
        assert!(m.push(ev(0, Dir::Send, 7, 15)).is_none());
        assert!(m.push(ev(0, Dir::Recv, 7, 20)).is_none());
        assert_eq!(m.stats.local_matches, 1);
        assert!(m.push(ev(0, Dir::Send, 7, 30)).is_none());
        let x = m.push(ev(1, Dir::Recv, 7, 50)).unwrap();
        assert_eq!((x.send.ts, x.recv.ts), (30, 50));
        // A pending receive is never paired with a later send of the same host.
        assert!(m.push(ev(1, Dir::Recv, 9, 60)).is_none());
        assert!(m.push(ev(1, Dir::Send, 9, 70)).is_none());
        let y = m.push(ev(0, Dir::Send, 9, 65)).unwrap();
        assert_eq!((y.send.host, y.recv.host), (0, 1));
    }

    #[test]
    fn flows_keep_keys_apart() {
        let mut m = Matcher::new();
        let mut a = ev(0, Dir::Send, 5, 1);
        a.key.flow = 11;
        let mut b = ev(1, Dir::Recv, 5, 2);
        b.key.flow = 22;
        assert!(m.push(a).is_none());
        assert!(m.push(b).is_none());
        assert_eq!(m.pending(), (1, 1));
    }

    #[test]
    fn memory_is_bounded() {
        let mut m = Matcher::with_max_pending(100);
        for i in 0..10_000 {
            m.push(ev(0, Dir::Send, i, i as i64));
            m.push(ev(1, Dir::Recv, 1_000_000 + i, i as i64));
        }
        assert!(m.pending().0 <= 100 && m.pending().1 <= 100);
        assert_eq!(m.stats.evicted, 2 * (10_000 - 100));
        // Cleanup: once host 0 matched host 1 (the only other), its older unmatched sends go.
        let mut m = Matcher::new();
        m.set_hosts(2);
        m.set_cleanup_every(1);
        for i in 0..50 {
            m.push(ev(0, Dir::Send, i, i as i64));
        }
        // Entries within the margin stay.
        m.push(ev(1, Dir::Recv, 49, 1000));
        assert_eq!(m.pending(), (49, 0));
        m.push(ev(0, Dir::Send, 1000, 2 * CLEANUP_MARGIN_NS));
        m.push(ev(1, Dir::Recv, 1000, 2 * CLEANUP_MARGIN_NS + 5));
        assert_eq!(m.pending(), (0, 0));
        assert_eq!(m.stats.evicted, 49);
    }
}
