//! Reading CTF kernel traces into the [`Builder`]: event classes of every LTTng layout
//! mapped once per class, the CPU of each stream, hosts from the traces' clocks.

use std::collections::HashMap;
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::Trace;
use kernel::{classify_unnumbered, Kind as K, PacketDir, StreamCpus};
use pipeline::{classes_where, FileSource, Flow, ReadOptions, Sink, Source, Summary, Wanted};

use crate::builder::{BuildStats, Builder, Ctx, KEvent};
use crate::graph::Graph;
use crate::net::{Dir, NetObs, PacketMatcher, SyncMatcher};

/// What the graph builder makes of an event class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Switch,
    Wakeup,
    WakeupNew,
    Fork,
    Exit,
    Exec,
    IrqEntry,
    IrqExit,
    SoftirqEntry,
    SoftirqExit,
    SoftirqRaise,
    HrtimerEntry,
    HrtimerExit,
    IpiEntry,
    IpiExit,
    DoIrqEntry,
    DoIrqExit,
    PacketRxEntry,
    PacketRxExit,
    NetSend,
    NetRecv,
    BlockIssue,
    BlockComplete,
    Statedump,
    Ignore,
}

/// Payload member positions of one event class, in the order its kind reads them.
#[derive(Clone, Copy, Debug)]
struct Class {
    kind: Kind,
    idx: [Option<usize>; 5],
}

struct TraceInfo {
    host: u32,
    /// Per event class, by [`ctf::Event::class_index`]: `classes[stream class][event class]`
    /// (dense tables, no hashing per event).
    classes: Vec<Vec<Option<Class>>>,
    /// Which wake-up event the trace uses.
    wakeup: K,
    has_wakeup_new: bool,
}

/// The builder's kind of an event of kernel kind `k`, in a trace whose wake-ups are `wakeup`
/// events.
fn kind_of(k: K, wakeup: K, has_new: bool) -> Kind {
    match k {
        K::SchedSwitch => Kind::Switch,
        k if k == wakeup => Kind::Wakeup,
        K::SchedWakeupNew if has_new => Kind::WakeupNew,
        K::SchedProcessFork => Kind::Fork,
        K::SchedProcessExit => Kind::Exit,
        K::SchedProcessExec => Kind::Exec,
        K::IrqHandlerEntry => Kind::IrqEntry,
        K::IrqHandlerExit => Kind::IrqExit,
        K::SoftirqEntry => Kind::SoftirqEntry,
        K::SoftirqExit => Kind::SoftirqExit,
        K::SoftirqRaise => Kind::SoftirqRaise,
        K::HrtimerExpireEntry | K::LocalTimerEntry => Kind::HrtimerEntry,
        K::HrtimerExpireExit | K::LocalTimerExit => Kind::HrtimerExit,
        K::DoIrqEntry => Kind::DoIrqEntry,
        K::DoIrqReturn => Kind::DoIrqExit,
        K::PacketRxEntry => Kind::PacketRxEntry,
        K::PacketRxReturn => Kind::PacketRxExit,
        K::IpiEntry | K::IrqVectorEntry => Kind::IpiEntry,
        K::IpiExit | K::IrqVectorExit => Kind::IpiExit,
        K::BlockRqIssue => Kind::BlockIssue,
        K::BlockRqComplete => Kind::BlockComplete,
        K::StatedumpProcessState => Kind::Statedump,
        k => match k.packet_direction() {
            Some(PacketDir::Send) => Kind::NetSend,
            Some(PacketDir::Recv) => Kind::NetRecv,
            None => Kind::Ignore,
        },
    }
}

fn fields_of(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Switch => &[
            "prev_tid",
            "prev_state",
            "prev_comm",
            "next_tid",
            "next_comm",
        ],
        Kind::Wakeup | Kind::WakeupNew => &["tid", "comm"],
        Kind::Fork => &["parent_tid", "child_tid", "child_comm"],
        Kind::Exit => &["tid"],
        Kind::Exec => &["tid", "filename"],
        Kind::IrqEntry | Kind::IrqExit => &["irq"],
        Kind::SoftirqEntry | Kind::SoftirqExit | Kind::SoftirqRaise => &["vec"],
        Kind::BlockIssue | Kind::BlockComplete => &["dev", "sector"],
        Kind::Statedump => &["tid", "name", "status"],
        _ => &[],
    }
}

/// The host identity of a trace (the synchronization crate's: its clock's UUID, else its
/// `hostname`, else its path) and its display name.
pub(crate) fn host_of(t: &Trace) -> (String, String) {
    let name = t
        .hostname()
        .map(str::to_string)
        .unwrap_or_else(|| t.path.display().to_string());
    (sync::extract::host_id(t), name)
}

/// Options of [`build_graph`].
#[derive(Default)]
pub struct BuildOptions {
    /// Clock transformation of every trace onto the common time line (synchronization).
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Packet matcher (default: the synchronization crate's, the pairs `tracekit sync` uses).
    pub matcher: Option<Box<dyn PacketMatcher>>,
}

/// The graph of some traces and what was seen building it.
pub struct Built {
    /// The execution graph.
    pub graph: Graph,
    /// What the builder saw.
    pub stats: BuildStats,
    /// Host index of every trace.
    pub trace_hosts: Vec<u32>,
    /// Time of the first event the graph read (ns on the common time line; 0 without any).
    pub first_ts: i64,
    /// Time of the last one, where every thread's history ends.
    pub last_ts: i64,
    /// Errors met reading the events (those of the classes the graph does not read may go
    /// unseen: their payloads are skipped).
    pub read_errors: usize,
}

/// Reads every event of `traces` in time order (from a [`FileSource`] over all of them, on
/// the time line of `opts.time_map`) and builds their execution graph.
pub fn build_graph(traces: &[Arc<Trace>], opts: BuildOptions) -> Built {
    let mut sink = GraphSink::new(traces, opts.matcher);
    let source = FileSource::new(
        traces.to_vec(),
        ReadOptions {
            // Every event of every stream: the graph covers the whole traces.
            no_intersection: true,
            time_map: opts.time_map,
            ..ReadOptions::default()
        },
    );
    source.run(&mut sink);
    sink.built()
}

/// The graph builder as a [`Sink`]: fed the time-ordered events of `traces` (by any
/// [`pipeline::Source`] over them, in their order), it builds their execution graph
/// ([`GraphSink::built`]).
pub struct GraphSink {
    b: Builder,
    infos: Vec<TraceInfo>,
    trace_hosts: Vec<u32>,
    /// Network events carry the flow (4-tuple) in every trace that has them.
    uses_flows: bool,
    /// Network events are matched into packets.
    match_packets: bool,
    matcher: Box<dyn PacketMatcher>,
    first_ts: i64,
    last_ts: i64,
    comm_buf: [String; 2],
    /// The CPU of each stream.
    stream_cpus: StreamCpus,
    /// Errors of opening the traces, which [`Built::read_errors`] does not count.
    open_errors: usize,
    read_errors: usize,
}

impl GraphSink {
    /// A builder for the events of `traces`, pairing packets with `matcher` (default:
    /// the synchronization crate's).
    pub fn new(traces: &[Arc<Trace>], matcher: Option<Box<dyn PacketMatcher>>) -> Self {
        let mut b = Builder::new();
        let mut host_keys: HashMap<String, u32> = HashMap::new();
        let mut infos = Vec::new();
        for t in traces {
            let (key, name) = host_of(t);
            let host = *host_keys.entry(key).or_insert_with(|| b.add_host(&name));
            let kinds: Vec<K> = t
                .class
                .streams
                .values()
                .flat_map(|s| s.events.values().map(|e| classify_unnumbered(&e.name).kind))
                .collect();
            let wakeup = if kinds.contains(&K::SchedTtwu) {
                K::SchedTtwu
            } else if kinds.contains(&K::SchedWaking) {
                K::SchedWaking
            } else {
                K::SchedWakeup
            };
            let has_wakeup_new = wakeup != K::SchedTtwu && kinds.contains(&K::SchedWakeupNew);
            infos.push(TraceInfo {
                host,
                classes: Vec::new(),
                wakeup,
                has_wakeup_new,
            });
        }
        let trace_hosts: Vec<u32> = infos.iter().map(|i| i.host).collect();
        let uses_flows = {
            let f: Vec<Option<bool>> = traces
                .iter()
                .map(|t| sync::extract::has_flow_fields(t))
                .collect();
            f.iter().any(|x| x.is_some()) && f.iter().all(|x| *x != Some(false))
        };
        let matching_hosts = {
            let mut h: Vec<u32> = traces
                .iter()
                .zip(&trace_hosts)
                .filter(|(t, _)| sync::extract::can_match(t))
                .map(|(_, h)| *h)
                .collect();
            h.sort_unstable();
            h.dedup();
            h.len()
        };
        // The default matcher only pairs packets of different hosts: with one host, network
        // events need no packet key at all.
        let match_packets = matcher.is_some() || host_keys.len() > 1;
        let matcher = matcher.unwrap_or_else(|| Box::new(SyncMatcher::new(matching_hosts)));
        GraphSink {
            b,
            infos,
            trace_hosts,
            uses_flows,
            match_packets,
            matcher,
            first_ts: i64::MAX,
            last_ts: i64::MIN,
            comm_buf: [String::new(), String::new()],
            stream_cpus: StreamCpus::default(),
            open_errors: traces.iter().map(|t| t.errors.len()).sum(),
            read_errors: 0,
        }
    }

    /// The graph of the events read, once the source has finished.
    pub fn built(self) -> Built {
        let end = if self.last_ts == i64::MIN {
            0
        } else {
            self.last_ts
        };
        let (graph, stats) = self.b.finish(end);
        Built {
            graph,
            stats,
            trace_hosts: self.trace_hosts,
            first_ts: if self.first_ts == i64::MAX {
                0
            } else {
                self.first_ts
            },
            last_ts: end,
            read_errors: self.read_errors,
        }
    }
}

impl Sink for GraphSink {
    /// The classes the graph reads: the others are left out of the read where the source
    /// can (most of a kernel trace's events are system calls, which the graph does not read).
    fn wanted(&self, trace: &Trace) -> Wanted {
        let info = self.infos.get(trace.index)?;
        Some(classes_where(trace, |name| {
            kind_of(
                classify_unnumbered(name).kind,
                info.wakeup,
                info.has_wakeup_new,
            ) != Kind::Ignore
        }))
    }

    #[inline]
    fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> Flow {
        let ti = ev.trace().index;
        // Events of a trace the sink was not made for are not the graph's.
        let Some(info) = self.infos.get_mut(ti) else {
            return Flow::Continue;
        };
        let (sc, ec) = ev.class_index();
        if info.classes.len() <= sc {
            info.classes.resize(sc + 1, Vec::new());
        }
        let row = &mut info.classes[sc];
        if row.len() <= ec {
            row.resize(ec + 1, None);
        }
        let class = *row[ec].get_or_insert_with(|| {
            let kind = kind_of(
                classify_unnumbered(ev.name()).kind,
                info.wakeup,
                info.has_wakeup_new,
            );
            let mut idx = [None; 5];
            let layout = ev.class_layout();
            for (i, f) in fields_of(kind).iter().enumerate() {
                idx[i] = layout.payload_index(&ev.trace().layout, f);
            }
            Class { kind, idx }
        });
        if class.kind == Kind::Ignore {
            return Flow::Continue;
        }
        self.first_ts = self.first_ts.min(ts);
        self.last_ts = self.last_ts.max(ts);
        let cpu = self.stream_cpus.of(ev);
        let host = info.host;
        let int = |i: usize| -> Option<i64> {
            class.idx[i]
                .and_then(|x| ev.payload_member(x))
                .and_then(|f| f.as_i64())
        };
        let text = |i: usize, buf: &mut String| {
            buf.clear();
            if let Some(s) = class.idx[i]
                .and_then(|x| ev.payload_member(x))
                .and_then(|f| f.as_str())
            {
                buf.push_str(s.trim_end_matches('\0'));
            }
        };
        let kev = match class.kind {
            Kind::Switch => {
                text(2, &mut self.comm_buf[0]);
                text(4, &mut self.comm_buf[1]);
                KEvent::Switch {
                    prev_tid: int(0).unwrap_or(-1),
                    prev_state: int(1).unwrap_or(0),
                    prev_comm: &self.comm_buf[0],
                    next_tid: int(3).unwrap_or(-1),
                    next_comm: &self.comm_buf[1],
                }
            }
            Kind::Wakeup | Kind::WakeupNew => {
                text(1, &mut self.comm_buf[0]);
                let tid = int(0).unwrap_or(-1);
                if class.kind == Kind::Wakeup {
                    KEvent::Wakeup {
                        tid,
                        comm: &self.comm_buf[0],
                    }
                } else {
                    KEvent::WakeupNew {
                        tid,
                        comm: &self.comm_buf[0],
                    }
                }
            }
            Kind::Fork => {
                text(2, &mut self.comm_buf[0]);
                KEvent::Fork {
                    parent_tid: int(0).unwrap_or(-1),
                    child_tid: int(1).unwrap_or(-1),
                    child_comm: &self.comm_buf[0],
                }
            }
            Kind::Exit => KEvent::Exit {
                tid: int(0).unwrap_or(-1),
            },
            Kind::Exec => {
                text(1, &mut self.comm_buf[0]);
                let base = self.comm_buf[0]
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_string();
                self.comm_buf[0] = base.chars().take(15).collect();
                KEvent::Exec {
                    tid: int(0).unwrap_or(-1),
                    comm: &self.comm_buf[0],
                }
            }
            Kind::IrqEntry => KEvent::Enter(Ctx::Irq(int(0))),
            Kind::IrqExit => KEvent::Leave(Ctx::Irq(int(0))),
            Kind::SoftirqEntry => KEvent::Enter(Ctx::Softirq(int(0).map(|v| v as u64))),
            Kind::SoftirqExit => KEvent::Leave(Ctx::Softirq(int(0).map(|v| v as u64))),
            Kind::SoftirqRaise => KEvent::SoftirqRaise {
                vec: int(0).map(|v| v as u64),
            },
            Kind::HrtimerEntry => KEvent::Enter(Ctx::Hrtimer),
            Kind::HrtimerExit => KEvent::Leave(Ctx::Hrtimer),
            Kind::IpiEntry => KEvent::Enter(Ctx::Ipi),
            Kind::IpiExit => KEvent::Leave(Ctx::Ipi),
            Kind::DoIrqEntry => KEvent::Enter(Ctx::CompleteIrq),
            Kind::DoIrqExit => KEvent::Leave(Ctx::CompleteIrq),
            Kind::PacketRxEntry => KEvent::Enter(Ctx::PacketReception),
            Kind::PacketRxExit => KEvent::Leave(Ctx::PacketReception),
            Kind::NetSend => KEvent::NetSend,
            Kind::NetRecv => KEvent::NetRecv,
            Kind::BlockIssue => KEvent::BlockIssue {
                dev: int(0).unwrap_or(0) as u64,
                sector: int(1).unwrap_or(0) as u64,
            },
            Kind::BlockComplete => KEvent::BlockComplete {
                dev: int(0).unwrap_or(0) as u64,
                sector: int(1).unwrap_or(0) as u64,
            },
            Kind::Statedump => {
                text(1, &mut self.comm_buf[0]);
                KEvent::Statedump {
                    tid: int(0).unwrap_or(-1),
                    comm: &self.comm_buf[0],
                    status: int(2).unwrap_or(0),
                }
            }
            Kind::Ignore => return Flow::Continue,
        };
        let v = self.b.event(host, cpu, ts, &kev);
        if let Some(v) = v.filter(|_| self.match_packets) {
            let key = ev.payload().and_then(|p| sync::extract::packet_key(&p));
            if let Some(mut key) = key {
                if !self.uses_flows {
                    key.flow = 0;
                }
                let obs = NetObs {
                    host,
                    trace: ti as u32,
                    dir: if class.kind == Kind::NetSend {
                        Dir::Send
                    } else {
                        Dir::Recv
                    },
                    key,
                    ts,
                    raw_ts: ev.time_ns().unwrap_or(ts),
                    vertex: v,
                };
                for (s, r) in self.matcher.push(obs) {
                    self.b.link_packet(s, r);
                }
            }
        }
        Flow::Continue
    }

    fn finish(&mut self, summary: &Summary) {
        // Read errors only: those of opening the traces come first in the summary's.
        self.read_errors = summary.errors.len().saturating_sub(self.open_errors);
    }
}
