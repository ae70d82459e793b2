//! Packet matching adapter: pairs the vertex of a packet's send with the vertex of its
//! receive on another host.
//!
//! The builder hands every network event to a [`PacketMatcher`] with its vertex; the matcher
//! answers with (send vertex, receive vertex) pairs as they become known. [`SyncMatcher`]
//! uses the synchronization crate's matching; [`PairsMatcher`] takes known pairs.

use std::collections::HashMap;

use crate::graph::{FastMap, VId};

pub use sync::matching::{Dir, PacketKey};

/// One network event seen by the builder.
#[derive(Clone, Copy, Debug)]
pub struct NetObs {
    pub host: u32,
    pub trace: u32,
    pub dir: Dir,
    pub key: PacketKey,
    /// Time on the common time line.
    pub ts: i64,
    /// Raw time on the trace's own clock.
    pub raw_ts: i64,
    pub vertex: VId,
}

/// Pairs sends with receives.
pub trait PacketMatcher {
    /// Takes one network event; returns `(send vertex, receive vertex)` pairs now matched.
    fn push(&mut self, obs: NetObs) -> Vec<(VId, VId)>;
}

/// The synchronization crate's matcher (the same pairs `tracekit sync` uses: TCP `seq`,
/// `ack_seq`, `flags` and the flow when every trace has it; first send with first receive;
/// local deliveries never paired across hosts), mapped back to graph vertices.
pub struct SyncMatcher {
    m: sync::matching::Matcher,
    /// Vertices of the events the matcher holds, by (trace, raw time, direction).
    pending: FastMap<(u32, i64, bool), VId>,
    max_pending: usize,
}

impl SyncMatcher {
    /// `hosts`: number of hosts that can match (enables the matcher's cleanup).
    pub fn new(hosts: usize) -> Self {
        let mut m = sync::matching::Matcher::new();
        m.set_hosts(hosts);
        SyncMatcher {
            m,
            pending: FastMap::default(),
            max_pending: 1 << 22,
        }
    }

    /// Statistics of the underlying matcher.
    pub fn stats(&self) -> &sync::matching::MatchStats {
        &self.m.stats
    }
}

impl PacketMatcher for SyncMatcher {
    fn push(&mut self, o: NetObs) -> Vec<(VId, VId)> {
        let ev = sync::matching::NetEvent {
            host: o.host,
            trace: o.trace,
            dir: o.dir,
            key: o.key,
            ts: o.raw_ts,
        };
        match self.m.push(ev) {
            Some(mt) => {
                let mine = (o.trace, o.raw_ts, o.dir == Dir::Send);
                let (other, other_send) = match o.dir {
                    Dir::Send => (mt.recv, false),
                    Dir::Recv => (mt.send, true),
                };
                self.pending.remove(&mine);
                let Some(v) = self.pending.remove(&(other.trace, other.ts, other_send)) else {
                    return Vec::new();
                };
                vec![match o.dir {
                    Dir::Send => (o.vertex, v),
                    Dir::Recv => (v, o.vertex),
                }]
            }
            None => {
                if self.pending.len() >= self.max_pending {
                    self.pending.clear();
                }
                self.pending
                    .insert((o.trace, o.raw_ts, o.dir == Dir::Send), o.vertex);
                Vec::new()
            }
        }
    }
}

/// A matcher fed with known pairs of (trace, raw timestamp) ends — for tests and for
/// external matchers that work on raw event times.
#[derive(Default)]
pub struct PairsMatcher {
    pairs: HashMap<(u32, i64), (u32, i64)>,
    rev: HashMap<(u32, i64), (u32, i64)>,
    seen: HashMap<(u32, i64), VId>,
}

impl PairsMatcher {
    /// `pairs`: ((send trace, send raw ns), (receive trace, receive raw ns)).
    pub fn new(pairs: impl IntoIterator<Item = ((u32, i64), (u32, i64))>) -> Self {
        let mut m = PairsMatcher::default();
        for (s, r) in pairs {
            m.pairs.insert(s, r);
            m.rev.insert(r, s);
        }
        m
    }
}

impl PacketMatcher for PairsMatcher {
    fn push(&mut self, o: NetObs) -> Vec<(VId, VId)> {
        let me = (o.trace, o.raw_ts);
        let other = match o.dir {
            Dir::Send => self.pairs.get(&me),
            Dir::Recv => self.rev.get(&me),
        };
        let Some(other) = other.copied() else {
            return Vec::new();
        };
        if let Some(v) = self.seen.remove(&other) {
            return vec![match o.dir {
                Dir::Send => (o.vertex, v),
                Dir::Recv => (v, o.vertex),
            }];
        }
        self.seen.insert(me, o.vertex);
        Vec::new()
    }
}
