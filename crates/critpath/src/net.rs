//! Packet matching adapter: pairs the vertex of a packet's send with the vertex of its
//! receive on another host.
//!
//! The builder hands every network event to a [`PacketMatcher`] with its vertex; the matcher
//! answers with (send vertex, receive vertex) pairs as they become known. [`TcpMatcher`] is
//! the built-in one (TCP `seq`, `ack_seq`, `flags`, plus the flow when known); another
//! matcher (e.g. the synchronization crate's) can be plugged in.

use std::collections::HashMap;

use crate::graph::VId;

/// Direction of a network event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Send,
    Recv,
}

/// What identifies a packet on both hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TcpKey {
    pub seq: u32,
    pub ack_seq: u32,
    pub flags: u32,
}

/// One network event seen by the builder.
#[derive(Clone, Copy, Debug)]
pub struct NetObs {
    pub host: u32,
    pub trace: u32,
    pub dir: Dir,
    pub key: TcpKey,
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

/// The built-in matcher: first send of a key pairs with the first receive of the same key on
/// another host; either may come first; duplicates are dropped.
#[derive(Default)]
pub struct TcpMatcher {
    sends: HashMap<TcpKey, (u32, VId)>,
    recvs: HashMap<TcpKey, (u32, VId)>,
    /// Upper bound on pending entries per direction (then the table is cleared).
    pub max_pending: usize,
}

impl TcpMatcher {
    pub fn new() -> Self {
        TcpMatcher {
            max_pending: 1 << 20,
            ..Default::default()
        }
    }
}

impl PacketMatcher for TcpMatcher {
    fn push(&mut self, o: NetObs) -> Vec<(VId, VId)> {
        let (mine, other) = match o.dir {
            Dir::Send => (&mut self.sends, &mut self.recvs),
            Dir::Recv => (&mut self.recvs, &mut self.sends),
        };
        if let Some(&(h, v)) = other.get(&o.key) {
            if h != o.host {
                other.remove(&o.key);
                return vec![match o.dir {
                    Dir::Send => (o.vertex, v),
                    Dir::Recv => (v, o.vertex),
                }];
            }
        }
        if mine.len() >= self.max_pending {
            mine.clear();
        }
        mine.entry(o.key).or_insert((o.host, o.vertex));
        Vec::new()
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
