//! Reading CTF kernel traces into the [`Builder`]: event classes of every LTTng layout
//! mapped once per class, the CPU of each stream, hosts from the traces' clocks.

use std::collections::HashMap;
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Merger, Message, Trace};

use crate::builder::{BuildStats, Builder, Ctx, KEvent};
use crate::graph::Graph;
use crate::net::{Dir, NetObs, PacketMatcher, SyncMatcher};

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
    wakeup: &'static str,
    has_wakeup_new: bool,
    /// CPU of each stream, by [`ctf::Event::stream_index`].
    stream_cpu: Vec<Option<u32>>,
}

fn kind_of(name: &str, wakeup: &str, has_new: bool) -> Kind {
    match name {
        "sched_switch" => Kind::Switch,
        n if n == wakeup => Kind::Wakeup,
        "sched_wakeup_new" if has_new => Kind::WakeupNew,
        "sched_process_fork" => Kind::Fork,
        "sched_process_exit" => Kind::Exit,
        "sched_process_exec" => Kind::Exec,
        "irq_handler_entry" => Kind::IrqEntry,
        "irq_handler_exit" => Kind::IrqExit,
        "softirq_entry" | "irq_softirq_entry" => Kind::SoftirqEntry,
        "softirq_exit" | "irq_softirq_exit" => Kind::SoftirqExit,
        "softirq_raise" | "irq_softirq_raise" => Kind::SoftirqRaise,
        "hrtimer_expire_entry" | "timer_hrtimer_expire_entry" => Kind::HrtimerEntry,
        "hrtimer_expire_exit" | "timer_hrtimer_expire_exit" => Kind::HrtimerExit,
        "do_IRQ_entry" => Kind::DoIrqEntry,
        "do_IRQ_return" => Kind::DoIrqExit,
        "netif_receive_skb_internal_entry" => Kind::PacketRxEntry,
        "netif_receive_skb_internal_return" => Kind::PacketRxExit,
        "net_dev_queue" | "inet_sock_local_out" => Kind::NetSend,
        "net_if_receive_skb" | "netif_receive_skb" | "inet_sock_local_in" => Kind::NetRecv,
        "ipi_entry" => Kind::IpiEntry,
        "ipi_exit" => Kind::IpiExit,
        "block_rq_issue" => Kind::BlockIssue,
        "block_rq_complete" => Kind::BlockComplete,
        "lttng_statedump_process_state" => Kind::Statedump,
        n if n.starts_with("x86_irq_vectors_") && !n.contains("local_timer") => {
            if n.ends_with("_entry") {
                Kind::IpiEntry
            } else if n.ends_with("_exit") {
                Kind::IpiExit
            } else {
                Kind::Ignore
            }
        }
        n if n.starts_with("x86_irq_vectors_local_timer") => {
            if n.ends_with("_entry") {
                Kind::HrtimerEntry
            } else {
                Kind::HrtimerExit
            }
        }
        _ => Kind::Ignore,
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
pub fn host_of(t: &Trace) -> (String, String) {
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
    /// Packet matcher (default: [`SyncMatcher`]).
    pub matcher: Option<Box<dyn PacketMatcher>>,
}

/// The graph of some traces and what was seen building it.
pub struct Built {
    pub graph: Graph,
    pub stats: BuildStats,
    /// Host index of every trace.
    pub trace_hosts: Vec<u32>,
    pub first_ts: i64,
    pub last_ts: i64,
    pub read_errors: usize,
}

/// Reads every event of `traces` in time order and builds their execution graph.
pub fn build_graph(traces: &[Arc<Trace>], opts: BuildOptions) -> Built {
    let mut b = Builder::new();
    let mut host_keys: HashMap<String, u32> = HashMap::new();
    let mut infos = Vec::new();
    for t in traces {
        let (key, name) = host_of(t);
        let host = *host_keys.entry(key).or_insert_with(|| b.add_host(&name));
        let names: Vec<&str> = t
            .class
            .streams
            .values()
            .flat_map(|s| s.events.values().map(|e| e.name.as_str()))
            .collect();
        let wakeup = if names.contains(&"sched_ttwu") {
            "sched_ttwu"
        } else if names.contains(&"sched_waking") {
            "sched_waking"
        } else {
            "sched_wakeup"
        };
        let has_wakeup_new = wakeup != "sched_ttwu" && names.contains(&"sched_wakeup_new");
        infos.push(TraceInfo {
            host,
            classes: Vec::new(),
            wakeup,
            has_wakeup_new,
            stream_cpu: Vec::new(),
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
    let match_packets = opts.matcher.is_some() || host_keys.len() > 1;
    let mut matcher = opts
        .matcher
        .unwrap_or_else(|| Box::new(SyncMatcher::new(matching_hosts)));
    let mut m = Merger::new(traces);
    if let Some(tm) = opts.time_map {
        m = m.with_time_map(tm);
    }
    let mut first_ts = i64::MAX;
    let mut last_ts = i64::MIN;
    let mut comm_buf = [String::new(), String::new()];
    while let Some(msg) = m.next() {
        if !matches!(msg, Message::Event) {
            continue;
        }
        let Some(ts) = m.current_time() else { continue };
        let Some(ev) = m.event() else { continue };
        let ti = ev.trace().index;
        let info = &mut infos[ti];
        let (sc, ec) = ev.class_index();
        if info.classes.len() <= sc {
            info.classes.resize(sc + 1, Vec::new());
        }
        let row = &mut info.classes[sc];
        if row.len() <= ec {
            row.resize(ec + 1, None);
        }
        let class = *row[ec].get_or_insert_with(|| {
            let kind = kind_of(ev.name(), info.wakeup, info.has_wakeup_new);
            let mut idx = [None; 5];
            let layout = ev.class_layout();
            for (i, f) in fields_of(kind).iter().enumerate() {
                idx[i] = layout.payload_index(&ev.trace().layout, f);
            }
            Class { kind, idx }
        });
        if class.kind == Kind::Ignore {
            continue;
        }
        first_ts = first_ts.min(ts);
        last_ts = last_ts.max(ts);
        let si = ev.stream_index();
        if info.stream_cpu.len() <= si {
            info.stream_cpu.resize(si + 1, None);
        }
        let cpu = *info.stream_cpu[si].get_or_insert_with(|| {
            ev.packet_context()
                .and_then(|p| p.field("cpu_id"))
                .and_then(|f| f.as_u64())
                .unwrap_or(si as u64) as u32
        });
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
                text(2, &mut comm_buf[0]);
                text(4, &mut comm_buf[1]);
                KEvent::Switch {
                    prev_tid: int(0).unwrap_or(-1),
                    prev_state: int(1).unwrap_or(0),
                    prev_comm: &comm_buf[0],
                    next_tid: int(3).unwrap_or(-1),
                    next_comm: &comm_buf[1],
                }
            }
            Kind::Wakeup | Kind::WakeupNew => {
                text(1, &mut comm_buf[0]);
                let tid = int(0).unwrap_or(-1);
                if class.kind == Kind::Wakeup {
                    KEvent::Wakeup {
                        tid,
                        comm: &comm_buf[0],
                    }
                } else {
                    KEvent::WakeupNew {
                        tid,
                        comm: &comm_buf[0],
                    }
                }
            }
            Kind::Fork => {
                text(2, &mut comm_buf[0]);
                KEvent::Fork {
                    parent_tid: int(0).unwrap_or(-1),
                    child_tid: int(1).unwrap_or(-1),
                    child_comm: &comm_buf[0],
                }
            }
            Kind::Exit => KEvent::Exit {
                tid: int(0).unwrap_or(-1),
            },
            Kind::Exec => {
                text(1, &mut comm_buf[0]);
                let base = comm_buf[0].rsplit('/').next().unwrap_or("").to_string();
                comm_buf[0] = base.chars().take(15).collect();
                KEvent::Exec {
                    tid: int(0).unwrap_or(-1),
                    comm: &comm_buf[0],
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
                text(1, &mut comm_buf[0]);
                KEvent::Statedump {
                    tid: int(0).unwrap_or(-1),
                    comm: &comm_buf[0],
                    status: int(2).unwrap_or(0),
                }
            }
            Kind::Ignore => continue,
        };
        let v = b.event(host, cpu, ts, &kev);
        if let Some(v) = v.filter(|_| match_packets) {
            let key = ev.payload().and_then(|p| sync::extract::packet_key(&p));
            if let Some(mut key) = key {
                if !uses_flows {
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
                for (s, r) in matcher.push(obs) {
                    b.link_packet(s, r);
                }
            }
        }
    }
    let read_errors = m.errors.len();
    let end = if last_ts == i64::MIN { 0 } else { last_ts };
    let (graph, stats) = b.finish(end);
    Built {
        graph,
        stats,
        trace_hosts,
        first_ts: if first_ts == i64::MAX { 0 } else { first_ts },
        last_ts: end,
        read_errors,
    }
}
