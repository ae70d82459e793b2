//! Synchronizing opened traces: one pass over their events merged by raw time, matching
//! packets and feeding the pair hulls.

use std::sync::Arc;

use ctf::{Message, Trace};
use pipeline::parallel::{self, Batch, Filled, StreamTime, StreamWork, Threads};
use pipeline::{Flow, ReadOptions};

use crate::extract::{can_match, has_flow_fields, host_id, Extractor};
use crate::graph::{SyncResult, Synchronizer, DEFAULT_WINDOW_NS};
use crate::hull::FormulaKind;
use crate::matching::{MatchStats, Matcher, NetEvent};
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
    /// How each pair's formula is chosen among the feasible lines.
    pub formula: FormulaKind,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            reference: None,
            window_ns: DEFAULT_WINDOW_NS,
            max_pending: 1 << 22,
            formula: FormulaKind::default(),
        }
    }
}

/// Per-trace facts.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    /// Index among the traces given.
    pub index: usize,
    /// The trace's directory.
    pub path: std::path::PathBuf,
    /// Host index (in [`SyncResult::hosts`]).
    pub host: u32,
    /// The trace declares network event classes.
    pub can_match: bool,
    /// Network events with TCP fields seen.
    pub net_events: u64,
    /// First event time (own clock).
    pub first_ns: Option<i64>,
    /// Last event time (own clock).
    pub last_ns: Option<i64>,
}

/// A completed synchronization.
#[derive(Clone, Debug)]
pub struct Session {
    /// Every trace given, in order.
    pub traces: Vec<TraceInfo>,
    /// Formulas, transforms and qualities per host and pair.
    pub result: SyncResult,
    /// Packet matching counters.
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

/// A stream's network events, a batch of them for the merge.
struct NetBatch(Vec<NetEvent>);

impl Batch for NetBatch {
    fn new() -> Self {
        NetBatch(Vec::with_capacity(4096))
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn time(&self, i: usize) -> i64 {
        self.0[i].ts
    }

    fn is_full(&self) -> bool {
        self.0.len() >= 4096
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// What a stream's work found besides its network events.
struct StreamFacts {
    trace: usize,
    first: Option<i64>,
    last: Option<i64>,
    errors: Vec<String>,
}

/// One stream's decoding into batches of its network events; its output is the stream's
/// first and last event times and its decoding errors.
struct StreamNetEvents {
    r: ctf::StreamReader,
    ex: Extractor,
    can_match: bool,
    strip_flow: bool,
    facts: StreamFacts,
}

impl StreamWork<NetBatch> for StreamNetEvents {
    type Output = StreamFacts;

    fn fill(mut self, batch: &mut NetBatch) -> Filled<Self, StreamFacts> {
        while let Some(m) = self.r.next() {
            match m {
                Ok(Message::Event) => {
                    let ev = self.r.event();
                    let Some(ts) = ev.time_ns() else { continue };
                    self.facts.first.get_or_insert(ts);
                    self.facts.last = Some(ts);
                    if !self.can_match {
                        continue;
                    }
                    if let Some(mut ne) = self.ex.event(&ev) {
                        if self.strip_flow {
                            ne.key.flow = 0;
                        }
                        batch.0.push(ne);
                        if batch.is_full() {
                            return Filled::More(self);
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => self.facts.errors.push(e.to_string()),
            }
        }
        Filled::Done(self.facts)
    }

    fn stop(self) -> StreamFacts {
        self.facts
    }
}

/// Host IDs of the traces (traces sharing an ID are one host): (ids, host of each trace).
pub(crate) fn hosts_of(traces: &[Arc<Trace>]) -> (Vec<String>, Vec<u32>) {
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
    let mut matcher = Matcher::with_max_pending(opts.max_pending);
    let mut matching_hosts: Vec<u32> = infos
        .iter()
        .filter(|t| t.can_match)
        .map(|t| t.host)
        .collect();
    matching_hosts.sort_unstable();
    matching_hosts.dedup();
    matcher.set_hosts(matching_hosts.len());
    let mut sync = Synchronizer::new(ids)
        .with_window(opts.window_ns)
        .with_formula(opts.formula);
    let mut errors = Vec::new();
    // Each stream is decoded a batch at a time on every core, keeping only its network
    // events; they are merged here by (time, stream position), the order a full time merge
    // would give them.
    let strip_flow = !uses_flows;
    let can: Vec<bool> = infos.iter().map(|t| t.can_match).collect();
    let work = |r: ctf::StreamReader, _: StreamTime| {
        let ti = r.trace().index;
        StreamNetEvents {
            ex: Extractor::new(host_of[ti], ti as u32),
            can_match: can[ti],
            strip_flow,
            facts: StreamFacts {
                trace: ti,
                first: None,
                last: None,
                errors: Vec::new(),
            },
            r,
        }
    };
    let every = ReadOptions {
        no_intersection: true,
        ..ReadOptions::default()
    };
    let (outcomes, _, _) = parallel::run(
        Threads::Cores,
        traces,
        &every,
        work,
        |b: &mut NetBatch, i: usize, _: i64| {
            let ne = b.0[i];
            infos[ne.trace as usize].net_events += 1;
            if let Some(m) = matcher.push(ne) {
                sync.add(&m);
            }
            Flow::Continue
        },
    );
    for StreamFacts {
        trace,
        first,
        last,
        errors: errs,
    } in outcomes
    {
        let info = &mut infos[trace];
        info.first_ns = match (info.first_ns, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        info.last_ns = match (info.last_ns, last) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        errors.extend(errs);
    }
    let reference = opts.reference.and_then(|i| host_of.get(i).copied());
    let result = sync.finish(reference);
    Session {
        traces: infos,
        result,
        stats: matcher.stats.clone(),
        uses_flows,
        errors,
    }
}
