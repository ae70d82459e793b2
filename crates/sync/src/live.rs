//! Clock sync estimated while traces are still being received (live `--sync`).
//!
//! [`Incremental`] is fed the events of every stream as they arrive, in each stream's order
//! (streams and hosts need not be merged first): their network events are matched as in
//! [`crate::synchronize`] and each match goes into its host pair's convex hull at once (the
//! fully incremental algorithm, [`crate::hull`]). [`Incremental::time_maps`] gives the
//! transforms the hulls hold so far, remade only when a match came in since the last call.
//!
//! The hulls take points in time order, and packets of different streams arrive in another
//! order; so the network events are also kept (about 40 bytes each), and from time to time
//! (each time their number doubled, and on [`Incremental::settle`]) matched again from
//! scratch in the order [`crate::synchronize`] reads them (time, then trace and stream): the
//! transforms are then exactly those of [`crate::synchronize`] on the events received so
//! far, and later events go on from that state.

use std::sync::Arc;

use ctf::{Event, Trace};

use crate::extract::{can_match, has_flow_fields, host_id, Extractor};
use crate::graph::Synchronizer;
use crate::matching::{Matcher, NetEvent};
use crate::transform::{TimeMaps, Transform};
use crate::SyncResult;

/// A synchronization fed as events arrive (see the [module](self)).
pub struct Incremental {
    host_ids: Vec<String>,
    /// Per trace index: its extractor (None: a trace of a host that joined after the start,
    /// or with no network event class).
    extractors: Vec<Option<Extractor>>,
    /// Per trace index: its host (None: not synchronized).
    host_of: Vec<Option<u32>>,
    /// Per trace index: its first event time, near which its transform is evaluated.
    anchors: Vec<Option<i64>>,
    strip_flow: bool,
    /// Hosts whose traces can match (the matcher's cleanup waits for all of them).
    matching_hosts: usize,
    matcher: Matcher,
    sync: Synchronizer,
    /// Every network event so far, with its stream's position in its trace.
    events: Vec<(NetEvent, u32)>,
    /// How many of them the last matching from scratch had.
    exact: usize,
    /// Matches added since the last [`Incremental::time_maps`].
    fresh: bool,
    result: Option<SyncResult>,
}

impl std::fmt::Debug for Incremental {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incremental")
            .field("hosts", &self.host_ids.len())
            .field("matches", &self.matcher.stats.matches)
            .finish()
    }
}

impl Incremental {
    /// A synchronization of `traces` (by [`Trace::index`]): their hosts are the hosts
    /// synchronized.
    pub fn new(traces: &[Arc<Trace>]) -> Self {
        let (ids, _) = crate::session::hosts_of(traces);
        let flows: Vec<Option<bool>> = traces.iter().map(|t| has_flow_fields(t)).collect();
        let uses_flows =
            flows.iter().any(|f| f.is_some()) && flows.iter().all(|f| *f != Some(false));
        let sync = Synchronizer::new(ids.clone());
        let (_, host_of) = crate::session::hosts_of(traces);
        let mut matching: Vec<u32> = traces
            .iter()
            .zip(&host_of)
            .filter(|(t, _)| can_match(t))
            .map(|(_, h)| *h)
            .collect();
        matching.sort_unstable();
        matching.dedup();
        let mut matcher = Matcher::new();
        matcher.set_hosts(matching.len());
        let mut inc = Incremental {
            host_ids: ids,
            extractors: Vec::new(),
            host_of: Vec::new(),
            anchors: Vec::new(),
            strip_flow: !uses_flows,
            matching_hosts: matching.len(),
            matcher,
            sync,
            events: Vec::new(),
            exact: 0,
            fresh: false,
            result: None,
        };
        for t in traces {
            inc.add_trace(t);
        }
        inc
    }

    /// Adds (or updates, when its metadata grew) trace `t`. A trace of a host not among the
    /// first traces' keeps its own clock: false then.
    pub fn add_trace(&mut self, t: &Trace) -> bool {
        let i = t.index;
        if self.host_of.len() <= i {
            self.host_of.resize(i + 1, None);
            self.anchors.resize(i + 1, None);
            self.extractors.resize_with(i + 1, || None);
        }
        let id = host_id(t);
        let host = self
            .host_ids
            .iter()
            .position(|h| *h == id)
            .map(|h| h as u32);
        self.host_of[i] = host;
        if self.extractors[i].is_none() {
            self.extractors[i] = host
                .filter(|_| can_match(t))
                .map(|h| Extractor::new(h, i as u32));
        }
        host.is_some()
    }

    /// One event of trace `trace`, stream `stream` of it (raw time, its own clock). True when
    /// it completed a match.
    pub fn event(&mut self, trace: usize, stream: usize, ev: &Event<'_>) -> bool {
        if let (Some(a), Some(ts)) = (self.anchors.get_mut(trace), ev.time_ns()) {
            *a = Some(a.map_or(ts, |a| a.min(ts)));
        }
        let Some(Some(ex)) = self.extractors.get_mut(trace) else {
            return false;
        };
        let Some(mut ne) = ex.event(ev) else {
            return false;
        };
        if self.strip_flow {
            ne.key.flow = 0;
        }
        self.events.push((ne, stream as u32));
        match self.matcher.push(ne) {
            Some(m) => {
                self.sync.add(&m);
                self.fresh = true;
                true
            }
            None => false,
        }
    }

    /// The transforms of every trace given so far to the reference's clock, when matches came
    /// in since the last call (None: unchanged).
    pub fn time_maps(&mut self) -> Option<TimeMaps> {
        if !std::mem::take(&mut self.fresh) {
            return None;
        }
        if self.events.len() >= 2 * self.exact.max(512) {
            self.rematch();
        }
        Some(self.maps())
    }

    /// Matches every network event received so far again, in the order of a read of the
    /// traces, and gives the transforms (None when nothing new came since the last time).
    pub fn settle(&mut self) -> Option<TimeMaps> {
        if self.exact == self.events.len() && !self.fresh {
            return None;
        }
        self.fresh = false;
        self.rematch();
        Some(self.maps())
    }

    /// Matching from scratch, in time then trace and stream order.
    fn rematch(&mut self) {
        self.events
            .sort_by_key(|(e, stream)| (e.ts, e.trace, *stream));
        let mut matcher = Matcher::new();
        matcher.set_hosts(self.matching_hosts);
        let mut sync = Synchronizer::new(self.host_ids.clone());
        for (e, _) in &self.events {
            if let Some(m) = matcher.push(*e) {
                sync.add(&m);
            }
        }
        self.matcher = matcher;
        self.sync = sync;
        self.exact = self.events.len();
    }

    fn maps(&mut self) -> TimeMaps {
        let result = self.sync.finish(None);
        let per_trace: Vec<Transform> = self
            .host_of
            .iter()
            .map(|h| match h {
                Some(h) => result.hosts[*h as usize].transform.clone(),
                None => Transform::identity(),
            })
            .collect();
        let anchors: Vec<i64> = self.anchors.iter().map(|a| a.unwrap_or(0)).collect();
        self.result = Some(result);
        TimeMaps::new(&per_trace, &anchors)
    }

    /// The hosts of the first traces (only those are synchronized).
    pub fn hosts(&self) -> usize {
        self.host_ids.len()
    }

    /// Packets matched between hosts so far.
    pub fn matches(&self) -> u64 {
        self.matcher.stats.matches
    }

    /// The hosts' transforms as of the last [`Incremental::time_maps`] that changed them.
    pub fn result(&self) -> Option<&SyncResult> {
        self.result.as_ref()
    }
}
