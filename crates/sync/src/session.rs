//! Synchronizing opened traces: one pass over their events merged by raw time, matching
//! packets and feeding the pair hulls.

use std::sync::Arc;

use ctf::{Message, Trace};

use crate::extract::{can_match, has_flow_fields, host_id, Extractor};
use crate::graph::{SyncResult, Synchronizer, DEFAULT_WINDOW_NS};
use crate::matching::{MatchStats, Matcher};
use crate::transform::{TimeMaps, Transform};

/// Options of [`synchronize`].
#[derive(Clone, Debug)]
pub struct SyncOptions {
    /// Index of the reference trace (its host is the reference); default: the host whose ID
    /// sorts first.
    pub reference: Option<usize>,
    /// Window of the piecewise fallback (ns).
    pub window_ns: i64,
    /// Bound on unmatched entries per host and direction.
    pub max_pending: usize,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            reference: None,
            window_ns: DEFAULT_WINDOW_NS,
            max_pending: 1 << 22,
        }
    }
}

/// Per-trace facts.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    pub index: usize,
    pub path: std::path::PathBuf,
    pub host: u32,
    /// The trace declares network event classes.
    pub can_match: bool,
    /// Network events with TCP fields seen.
    pub net_events: u64,
    /// First and last event times (own clock).
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
}

/// A completed synchronization.
#[derive(Clone, Debug)]
pub struct Session {
    pub traces: Vec<TraceInfo>,
    pub result: SyncResult,
    pub stats: MatchStats,
    /// Keys include the address/port 4-tuple (every trace's layout has it).
    pub uses_flows: bool,
    /// Decoding errors met (reading went on).
    pub errors: Vec<String>,
}

impl Session {
    /// The transform of a trace (its host's).
    pub fn trace_transform(&self, trace: usize) -> &Transform {
        &self.result.hosts[self.traces[trace].host as usize].transform
    }

    /// The time maps to merge these traces on the reference's clock.
    pub fn time_maps(&self) -> TimeMaps {
        let t: Vec<Transform> = (0..self.traces.len())
            .map(|i| self.trace_transform(i).clone())
            .collect();
        let anchors: Vec<i64> = self
            .traces
            .iter()
            .map(|t| t.first_ns.unwrap_or(0))
            .collect();
        TimeMaps::new(&t, &anchors)
    }

    /// The reference trace: the first trace of the reference host.
    pub fn reference_trace(&self) -> usize {
        self.traces
            .iter()
            .position(|t| t.host == self.result.reference)
            .unwrap_or(0)
    }
}

/// Host IDs of the traces (traces sharing an ID are one host): (ids, host of each trace).
pub fn hosts_of(traces: &[Arc<Trace>]) -> (Vec<String>, Vec<u32>) {
    let mut ids: Vec<String> = Vec::new();
    let mut of = Vec::new();
    for t in traces {
        let id = host_id(t);
        let h = match ids.iter().position(|x| *x == id) {
            Some(h) => h,
            None => {
                ids.push(id);
                ids.len() - 1
            }
        };
        of.push(h as u32);
    }
    (ids, of)
}

/// Reads every event of the traces once (merged by raw time, as Trace Compass does), matches
/// the packets and computes the transforms.
pub fn synchronize(traces: &[Arc<Trace>], opts: &SyncOptions) -> Session {
    let (ids, host_of) = hosts_of(traces);
    let flows: Vec<Option<bool>> = traces.iter().map(|t| has_flow_fields(t)).collect();
    let uses_flows = flows.iter().any(|f| f.is_some()) && flows.iter().all(|f| *f != Some(false));
    let mut infos: Vec<TraceInfo> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| TraceInfo {
            index: i,
            path: t.path.clone(),
            host: host_of[i],
            can_match: can_match(t),
            net_events: 0,
            first_ns: None,
            last_ns: None,
        })
        .collect();
    let mut extractors: Vec<Extractor> = (0..traces.len())
        .map(|i| Extractor::new(host_of[i], i as u32))
        .collect();
    let mut matcher = Matcher::with_max_pending(opts.max_pending);
    let mut matching_hosts: Vec<u32> = infos
        .iter()
        .filter(|t| t.can_match)
        .map(|t| t.host)
        .collect();
    matching_hosts.sort_unstable();
    matching_hosts.dedup();
    matcher.set_hosts(matching_hosts.len());
    let mut sync = Synchronizer::new(ids).with_window(opts.window_ns);
    let mut merger = ctf::Merger::new(traces);
    while let Some(msg) = merger.next() {
        if !matches!(msg, Message::Event) {
            continue;
        }
        let ev = merger.event().expect("event message");
        let ti = ev.trace().index;
        let Some(ts) = ev.time_ns() else { continue };
        let info = &mut infos[ti];
        if info.first_ns.is_none() {
            info.first_ns = Some(ts);
        }
        info.last_ns = Some(ts);
        if !info.can_match {
            continue;
        }
        let Some(mut ne) = extractors[ti].event(&ev) else {
            continue;
        };
        info.net_events += 1;
        if !uses_flows {
            ne.key.flow = 0;
        }
        if let Some(m) = matcher.push(ne) {
            sync.add(&m);
        }
    }
    let reference = opts.reference.and_then(|i| host_of.get(i).copied());
    let result = sync.finish(reference);
    Session {
        traces: infos,
        result,
        stats: matcher.stats.clone(),
        uses_flows,
        errors: merger.errors.iter().map(|e| e.to_string()).collect(),
    }
}
