//! From a critical-path graph to a readable timeline of segments and totals.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::input::Built;

use crate::algo::{critical_path, PathOptions};
use crate::graph::{EdgeType, Graph, WorkerId};

/// One segment of the critical path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Start (ns on the common time line).
    pub start: i64,
    /// End (ns).
    pub end: i64,
    /// Host name.
    pub host: String,
    /// Thread the time is spent in (or on behalf of); −1 for interrupt work attributed to no
    /// thread.
    pub tid: i64,
    /// The thread's command name (`kernel/CPU` for unattributed interrupt work).
    pub comm: String,
    /// The state name (`running`, `preempted`, `blocked`, `network`, `timer`…).
    pub state: &'static str,
    /// Set when the time was spent in interrupt context on this CPU (on behalf of `tid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
    /// For a wait: the kernel function the thread waited in, from the stacks of
    /// `tracekit record --stacks` ([`name_blocked_functions`]), as Perfetto's
    /// `blocked_function`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_function: Option<String>,
}

impl Segment {
    /// Its length (ns).
    pub(crate) fn duration(&self) -> i64 {
        self.end - self.start
    }
}

/// Time of one worker on the path.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerTotal {
    /// Host name.
    pub host: String,
    /// Thread id (as in [`Segment::tid`]).
    pub tid: i64,
    /// Command name.
    pub comm: String,
    /// Its time on the path (ns).
    pub total_ns: i64,
    /// That time by state name.
    pub by_state: BTreeMap<&'static str, i64>,
}

/// Totals of a path.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Host of the followed thread.
    pub host: String,
    /// The followed thread.
    pub tid: i64,
    /// Its command name.
    pub comm: String,
    /// Start of the path (ns on the common time line).
    pub begin: i64,
    /// End of the path (ns).
    pub end: i64,
    /// Sum of the segments' durations (ns).
    pub total_ns: i64,
    /// That time by state name.
    pub by_state: BTreeMap<&'static str, i64>,
    /// Largest first.
    pub by_worker: Vec<WorkerTotal>,
    /// The totals in one sentence.
    pub text: String,
}

/// A computed critical path.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The segments, in time order.
    pub path: Vec<Segment>,
    /// Their totals.
    pub summary: Summary,
}

/// Errors of [`find_thread`] and [`path_of_thread`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// No thread with that id (on that host) has any history in the graph.
    #[error("no thread {tid}{} in the traces", host.as_ref().map(|h| format!(" on host {h}")).unwrap_or_default())]
    NoThread {
        /// The thread id asked for.
        tid: i64,
        /// The host asked for.
        host: Option<String>,
    },
    /// Threads with that id exist on several hosts, and no host was given.
    #[error("thread {tid} exists on several hosts ({0}); choose one with --host", hosts.join(", "))]
    Ambiguous {
        /// The thread id asked for.
        tid: i64,
        /// The hosts that have it.
        hosts: Vec<String>,
    },
    /// No host has that name.
    #[error("no host named {0}")]
    NoHost(String),
    /// The end of the range asked for is before its beginning.
    #[error("--end is before --begin")]
    EndBeforeBegin,
    /// The thread has no history in the range asked for.
    #[error(
        "thread {tid} has no history between {begin} and {end} ns (its history spans {first} to \
         {last} ns on the merged time line)"
    )]
    NoHistory {
        /// The thread id asked for.
        tid: i64,
        /// The range asked for (ns, merged time line).
        begin: i64,
        /// See `begin`.
        end: i64,
        /// The thread's first time in the graph.
        first: i64,
        /// Its last time.
        last: i64,
    },
    /// The walk could not complete (it panicked; the graph is inconsistent).
    #[error("the critical path computation failed")]
    WalkFailed,
    /// The walk's thread could not be started.
    #[error("the critical path computation could not start: {0}")]
    Thread(#[from] std::io::Error),
}

/// The critical path of thread `tid` (on `host` when given) in a built graph, from `begin`
/// (default: the graph's first time) to `end` (default: its last), cut to the range with
/// `cut`. The walk recurses into nested waits, so it runs on a thread with a deep stack.
pub fn path_of_thread(
    built: &crate::Built,
    tid: i64,
    host: Option<&str>,
    begin: Option<i64>,
    end: Option<i64>,
    cut: bool,
) -> Result<Report, PathError> {
    let g = &built.graph;
    let w = find_thread(g, tid, host)?;
    let begin = begin.unwrap_or(built.first_ts);
    let end = end.unwrap_or(built.last_ts);
    if end < begin {
        return Err(PathError::EndBeforeBegin);
    }
    let report = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(512 << 20)
            .spawn_scoped(s, || critical_path_of(g, w, begin, end, cut))
            .map(|h| h.join())
    })?;
    match report {
        Ok(r) if r.path.is_empty() => {
            let span = |v: Option<u32>| v.map(|v| g.ts(v)).unwrap_or(0);
            Err(PathError::NoHistory {
                tid,
                begin,
                end,
                first: span(g.head(w)),
                last: span(g.tail(w)),
            })
        }
        Ok(r) => Ok(r),
        Err(_) => Err(PathError::WalkFailed),
    }
}

/// Finds the worker of thread `tid` (on `host` when given, by name).
pub fn find_thread(g: &Graph, tid: i64, host: Option<&str>) -> Result<WorkerId, PathError> {
    let hosts: Vec<u32> = match host {
        Some(h) => {
            let v: Vec<u32> = (0..g.hosts.len() as u32)
                .filter(|&i| g.hosts[i as usize] == h)
                .collect();
            if v.is_empty() {
                return Err(PathError::NoHost(h.to_string()));
            }
            v
        }
        None => (0..g.hosts.len() as u32).collect(),
    };
    let found: Vec<WorkerId> = hosts
        .iter()
        .filter_map(|&h| g.find_thread(h, tid))
        .filter(|&w| g.head(w).is_some())
        .collect();
    match found.len() {
        0 => Err(PathError::NoThread {
            tid,
            host: host.map(str::to_string),
        }),
        1 => Ok(found[0]),
        _ => Err(PathError::Ambiguous {
            tid,
            hosts: found
                .iter()
                .map(|&w| g.hosts[g.worker(w).host as usize].clone())
                .collect(),
        }),
    }
}

/// The critical path of worker `w` between `begin` and `end` (clipped), as segments.
pub fn critical_path_of(g: &Graph, w: WorkerId, begin: i64, end: i64, cut: bool) -> Report {
    let start = g.vertex_at(w, begin).expect("worker with vertices");
    let p = critical_path(
        g,
        start,
        &PathOptions {
            end,
            cut_at_departure: cut,
        },
    );
    let path = segments(&p, begin, end);
    let (begin, end) = match (path.first(), path.iter().map(|s| s.end).max()) {
        (Some(f), Some(l)) => (f.start, l),
        _ => (begin, end),
    };
    let summary = summarize(g, w, &path, begin, end);
    Report { path, summary }
}

struct Piece {
    start: i64,
    end: i64,
    w: WorkerId,
    ty: EdgeType,
    /// A vertical edge with a duration (a packet or request in flight).
    transfer: bool,
}

/// The segments of a path graph within `[begin, end]`, in time order. Time spent by a
/// kernel (interrupt-context) worker, and packets that arrive at one, are attributed to
/// the thread that the interrupt work leads to on the path, with the CPU noted.
pub fn segments(p: &Graph, begin: i64, end: i64) -> Vec<Segment> {
    let mut pieces = Vec::new();
    for w in 0..p.workers.len() as WorkerId {
        for v in p.vertices_of(w) {
            if let Some(e) = p.in_h(v) {
                pieces.push(Piece {
                    start: p.ts(e.from),
                    end: p.ts(v),
                    w,
                    ty: e.ty,
                    transfer: false,
                });
            }
        }
    }
    for e in p.vertical_edges() {
        if p.ts(e.to) > p.ts(e.from) {
            pieces.push(Piece {
                start: p.ts(e.from),
                end: p.ts(e.to),
                w: p.worker_of(e.to),
                ty: e.ty,
                transfer: true,
            });
        }
    }
    let mut pieces: Vec<Piece> = pieces
        .into_iter()
        .filter_map(|mut x| {
            x.start = x.start.max(begin);
            x.end = x.end.min(end);
            (x.end > x.start).then_some(x)
        })
        .collect();
    pieces.sort_by_key(|x| (x.start, x.end));
    // Attribution of interrupt-context time to the thread it leads to.
    let mut owner: Vec<(WorkerId, Option<u32>)> = vec![(0, None); pieces.len()];
    let mut next_thread: Option<WorkerId> = None;
    for (i, x) in pieces.iter().enumerate().rev() {
        let wk = p.worker(x.w);
        if let Some(cpu) = wk.cpu {
            let cpu = (!x.transfer).then_some(cpu);
            owner[i] = (next_thread.unwrap_or(x.w), cpu);
        } else {
            owner[i] = (x.w, None);
            next_thread = Some(x.w);
        }
    }
    let mut out: Vec<Segment> = Vec::new();
    for (x, (w, cpu)) in pieces.iter().zip(owner) {
        let wk = p.worker(w);
        let (tid, comm) = if wk.is_kernel() {
            (-1, wk.label())
        } else {
            (wk.tid, wk.comm.clone())
        };
        let seg = Segment {
            start: x.start,
            end: x.end,
            host: p.hosts[wk.host as usize].clone(),
            tid,
            comm,
            state: x.ty.state_name(),
            cpu,
            blocked_function: None,
        };
        if let Some(last) = out.last_mut() {
            if last.end == seg.start
                && last.host == seg.host
                && last.tid == seg.tid
                && last.state == seg.state
                && last.cpu == seg.cpu
            {
                last.end = seg.end;
                continue;
            }
        }
        out.push(seg);
    }
    out
}

fn summarize(g: &Graph, w: WorkerId, path: &[Segment], begin: i64, end: i64) -> Summary {
    let wk = g.worker(w);
    let mut by_state = BTreeMap::new();
    let mut by_worker: BTreeMap<(String, i64, String), BTreeMap<&'static str, i64>> =
        BTreeMap::new();
    for s in path {
        *by_state.entry(s.state).or_insert(0) += s.duration();
        *by_worker
            .entry((s.host.clone(), s.tid, s.comm.clone()))
            .or_default()
            .entry(s.state)
            .or_insert(0) += s.duration();
    }
    let mut workers: Vec<WorkerTotal> = by_worker
        .into_iter()
        .map(|((host, tid, comm), by_state)| WorkerTotal {
            host,
            tid,
            comm,
            total_ns: by_state.values().sum(),
            by_state,
        })
        .collect();
    workers.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.tid.cmp(&b.tid)));
    let mut s = Summary {
        host: g.hosts[wk.host as usize].clone(),
        tid: wk.tid,
        comm: wk.comm.clone(),
        begin,
        end,
        total_ns: path.iter().map(|s| s.duration()).sum(),
        by_state,
        by_worker: workers,
        text: String::new(),
    };
    s.text = s.sentence();
    s
}

/// A duration for people: `20.2 ms`, `350 µs`, `1.25 s`.
pub(crate) fn human(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    if a >= 1e9 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if a >= 1e6 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

impl Summary {
    /// One sentence, largest parts first: "wget/1234 on client1 spent 20.2 ms: 14.1 ms
    /// running in apache/2196 on httpd, 3.2 ms network in itself, …".
    pub(crate) fn sentence(&self) -> String {
        let mut parts: Vec<(i64, String)> = Vec::new();
        for w in &self.by_worker {
            for (st, ns) in &w.by_state {
                let who = if w.host == self.host && w.tid == self.tid {
                    "itself".to_string()
                } else {
                    format!("{}/{} on {}", w.comm, w.tid, w.host)
                };
                parts.push((*ns, format!("{} {} in {}", human(*ns), st, who)));
            }
        }
        parts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let list: Vec<String> = parts.into_iter().map(|(_, s)| s).collect();
        format!(
            "{}/{} on {} spent {}: {}",
            self.comm,
            self.tid,
            self.host,
            human(self.total_ns),
            list.join(", ")
        )
    }
}

/// Names the kernel function each wait of the path was spent in, from stack samples taken
/// while the thread was off the CPU (`record --stacks offcpu>T`, `syscall>T`, `block>T`):
/// the sample of the segment's thread whose off-CPU interval overlaps the segment most. The
/// samples' times must be on the path's time line (traces not synchronized).
pub fn name_blocked_functions(report: &mut Report, stacks: &kernel::stacks::TraceStacks) {
    use kernel::stacks::{blocked_function, StackKind};
    if stacks.samples.is_empty() {
        return;
    }
    let mut by_tid: std::collections::HashMap<i64, Vec<&kernel::stacks::StackSample>> =
        std::collections::HashMap::new();
    for s in &stacks.samples {
        if matches!(
            s.kind,
            StackKind::OffCpu | StackKind::Syscall | StackKind::Block
        ) {
            by_tid.entry(s.tid as i64).or_default().push(s);
        }
    }
    for seg in &mut report.path {
        if seg.tid < 0 || seg.cpu.is_some() || matches!(seg.state, "running" | "preempted") {
            continue;
        }
        let Some(cands) = by_tid.get(&seg.tid) else {
            continue;
        };
        let best = cands
            .iter()
            .filter(|s| s.host.as_deref().is_none_or(|h| h == seg.host))
            .filter_map(|s| {
                let from = s.ts.saturating_sub(s.delay.min(i64::MAX as u64) as i64);
                let overlap = s.ts.min(seg.end) - from.max(seg.start);
                (overlap > 0).then_some((overlap, *s))
            })
            .max_by_key(|(o, _)| *o);
        if let Some((_, s)) = best {
            seg.blocked_function = blocked_function(&s.kstack, &stacks.symbols).map(str::to_string);
        }
    }
}

/// The path as a timeline and its totals.
/// `write_time` writes a time of day (the printer's `HH:MM:SS.NNNNNNNNN`).
pub fn render_text(report: &Report, mut write_time: impl FnMut(&mut Vec<u8>, i64)) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let mut t = Vec::new();
    write_time(&mut t, s.begin);
    let b = String::from_utf8_lossy(&t).into_owned();
    t.clear();
    write_time(&mut t, s.end);
    let e = String::from_utf8_lossy(&t).into_owned();
    out.push_str(&format!(
        "Critical path of {}/{} on {}, {} to {} ({})\n\n",
        s.comm,
        s.tid,
        s.host,
        b,
        e,
        human(s.end - s.begin)
    ));
    out.push_str(&format!(
        "{:<4} {:<18} {:>12}  {:<10} {:<24} {}\n",
        "#", "start", "duration", "host", "thread", "state"
    ));
    for (i, seg) in report.path.iter().enumerate() {
        t.clear();
        write_time(&mut t, seg.start);
        let thread = format!("{}/{}", seg.comm, seg.tid);
        let state = match (seg.cpu, &seg.blocked_function) {
            (Some(c), _) => format!("{} (interrupt context, CPU {c})", seg.state),
            (None, Some(f)) => format!("{} in {f}", seg.state),
            (None, None) => seg.state.to_string(),
        };
        out.push_str(&format!(
            "{:<4} {:<18} {:>12}  {:<10} {:<24} {}\n",
            i + 1,
            String::from_utf8_lossy(&t),
            human(seg.duration()),
            seg.host,
            thread,
            state
        ));
    }
    out.push_str("\nTotal per state:\n");
    let mut states: Vec<(&&str, &i64)> = s.by_state.iter().collect();
    states.sort_by(|a, b| b.1.cmp(a.1));
    for (st, ns) in states {
        out.push_str(&format!(
            "  {:<14} {:>12}  {:>5.1}%\n",
            st,
            human(*ns),
            100.0 * *ns as f64 / s.total_ns.max(1) as f64
        ));
    }
    out.push_str("\nTotal per thread:\n");
    for w in &s.by_worker {
        let detail: Vec<String> = w
            .by_state
            .iter()
            .map(|(st, ns)| format!("{st} {}", human(*ns)))
            .collect();
        out.push_str(&format!(
            "  {:<24} {:<10} {:>12}  ({})\n",
            format!("{}/{}", w.comm, w.tid),
            w.host,
            human(w.total_ns),
            detail.join(", ")
        ));
    }
    out.push('\n');
    out.push_str(&s.sentence());
    out.push('\n');
    out
}

/// The JSON report: the path, its totals and the graph's size.
pub fn to_json(report: &Report, built: &Built) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct GraphInfo<'a> {
        hosts: &'a [String],
        workers: usize,
        vertices: usize,
        vertical_edges: usize,
        heap_bytes: usize,
        stats: &'a crate::builder::BuildStats,
    }
    #[derive(Serialize)]
    struct Out<'a> {
        path: &'a [Segment],
        summary: &'a Summary,
        graph: GraphInfo<'a>,
    }
    let g = &built.graph;
    let out = Out {
        path: &report.path,
        summary: &report.summary,
        graph: GraphInfo {
            hosts: &g.hosts,
            workers: g.workers.len(),
            vertices: g.len(),
            vertical_edges: g.vertical_edges().len(),
            heap_bytes: g.heap_bytes(),
            stats: &built.stats,
        },
    };
    serde_json::to_string_pretty(&out)
}
