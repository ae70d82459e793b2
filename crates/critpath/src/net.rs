//! Packet matching adapter: pairs the vertex of a packet's send with the vertex of its
//! receive on another host.
//!
//! The builder hands every network event to a [`PacketMatcher`] with its vertex; the matcher
//! answers with (send vertex, receive vertex) pairs as they become known. The default
//! matcher uses the synchronization crate's matching.

use crate::graph::{FastMap, VId};

pub use sync::matching::{Dir, PacketKey};

/// One network event seen by the builder.
#[derive(Clone, Copy, Debug)]
pub struct NetObs {
    /// Host index in the graph.
    pub host: u32,
    /// Index of the trace the event is from.
    pub trace: u32,
    /// Send or receive.
    pub dir: Dir,
    /// What identifies the packet on both ends.
    pub key: PacketKey,
    /// Time on the common time line.
    pub ts: i64,
    /// Raw time on the trace's own clock.
    pub raw_ts: i64,
    /// The event's vertex in the graph.
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
pub(crate) struct SyncMatcher {
    m: sync::matching::Matcher,
    /// Vertices of the events the matcher holds, by (trace, raw time, direction).
    pending: FastMap<(u32, i64, bool), VId>,
    max_pending: usize,
}

impl SyncMatcher {
    /// `hosts`: number of hosts that can match (enables the matcher's cleanup).
    pub(crate) fn new(hosts: usize) -> Self {
        let mut m = sync::matching::Matcher::new();
        m.set_hosts(hosts);
        SyncMatcher {
            m,
            pending: FastMap::default(),
            max_pending: 1 << 22,
        }
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
