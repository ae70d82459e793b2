//! Building the model: per host, a kernel model fed by its own read, whose status
//! notifications become state intervals; hosts are read in parallel, then joined.

use std::collections::HashMap;
use std::sync::Arc;

use ctf::{Event, Trace};
use kernel::{
    CpuStatus, Facet, IntMap, Interest, NoteKind, Notification, SoftIrqStep, StateOptions,
    ThreadStatus,
};
use pipeline::{Diagnostic, FileSource, Flow, Notice, ReadOptions, Sink, Source};
use rayon::prelude::*;

use crate::store::{thread_code, Column, Density, Family, RawArrow, Store, BUSY, MARK, NONE};
use crate::{Checkpoint, Host, Row, RowKind, ThreadState, Timeline};

/// Events between two checkpoints.
pub(crate) const CHECKPOINT_EVERY: u64 = 4096;

/// The notifications the model is built from.
fn interest() -> Interest {
    Interest::of(&[
        NoteKind::ThreadStatus,
        NoteKind::CpuStatus,
        NoteKind::IrqStatus,
        NoteKind::Wakeup,
        NoteKind::Lifecycle,
    ])
    .reading(&[Facet::Threads, Facet::IrqNames])
}

/// Linux's soft IRQ vector names.
fn softirq_name(vec: u64) -> String {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES
        .get(vec as usize)
        .map_or_else(|| format!("SOFTIRQ {vec}"), |s| s.to_string())
}

/// Interned labels.
#[derive(Default)]
struct Interner {
    strings: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl Interner {
    fn new() -> Self {
        let mut i = Interner::default();
        i.intern("");
        i
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        let a: Arc<str> = Arc::from(s);
        self.strings.push(a.clone());
        self.index.insert(a, i);
        i
    }
}

/// A row being built.
struct RowB {
    kind: RowKind,
    label: String,
    names: Vec<(i64, u32)>,
    col: Column,
    /// A thread row's end (`sched_process_free`).
    ended: Option<i64>,
}

impl RowB {
    fn new(kind: RowKind, label: String) -> Self {
        let family = Family::of(&kind) as u8;
        RowB {
            kind,
            label,
            names: Vec::new(),
            col: Column {
                family,
                ..Default::default()
            },
            ended: None,
        }
    }

    fn current(&self) -> (u8, u32) {
        match (self.col.states.last(), self.col.labels.last()) {
            (Some(&s), Some(l)) => (s, l),
            _ => (NONE, 0),
        }
    }

    /// The row is in `state` (with `label`) from `ts` on.
    fn set(&mut self, ts: i64, state: u8, label: u32) {
        if self.current() == (state, label) {
            return;
        }
        let c = &mut self.col;
        if c.starts.last() == Some(ts) {
            // Several changes at one time: the last one holds.
            c.starts.pop();
            c.states.pop();
            c.labels.pop();
            if self.current() == (state, label) {
                return;
            }
        }
        let c = &mut self.col;
        let last = c.starts.last();
        if last.is_none() && state == NONE {
            return;
        }
        if last.is_some_and(|l| l > ts) {
            // Out of order (cannot happen in a merged read): ignored.
            return;
        }
        c.starts.push(ts);
        c.states.push(state);
        c.labels.push(label);
    }
}

/// A thread row's thread id, process id and parent's process id.
type Ids = (i32, Option<i32>, Option<i32>);

/// What one host's read made.
pub(crate) struct HostModel {
    name: String,
    rows: Vec<RowB>,
    strings: Vec<Arc<str>>,
    arrows: Vec<RawArrow>,
    density: Density,
    first: Option<i64>,
    checkpoints: Vec<Checkpoint>,
    diagnostics: Vec<Diagnostic>,
    /// Per row: a thread row's ids.
    ids: Vec<Option<Ids>>,
}

/// The sink that builds one host's rows.
struct HostSink {
    model: kernel::Model,
    notes: Vec<Notification>,
    rows: Vec<RowB>,
    strings: Interner,
    /// The live row of each thread id.
    live: IntMap<i32, u32>,
    pids: IntMap<u32, (Option<i32>, Option<i32>)>,
    cpus: IntMap<u32, u32>,
    irqs: IntMap<i64, u32>,
    softirqs: IntMap<u64, u32>,
    /// The per-CPU rows of IRQ lines and soft IRQ vectors, by (CPU, number).
    cpu_irqs: std::collections::HashMap<(u32, i64), u32>,
    cpu_softirqs: std::collections::HashMap<(u32, u64), u32>,
    /// Per CPU row: the current thread (0: idle; None: not known) and its name's label.
    cpu_tid: IntMap<u32, (Option<i32>, u32)>,
    /// The label `CPU n` of each CPU.
    cpu_labels: IntMap<u32, u32>,
    /// Per IRQ or soft IRQ row: handlers running, raises pending.
    irq_counts: IntMap<u32, (u32, u32)>,
    /// Per thread row: the wake-up that will let it run (time, source row).
    pending: IntMap<u32, (i64, u32)>,
    arrows: Vec<RawArrow>,
    syscall_labels: Vec<u32>,
    density: Density,
    first: Option<i64>,
    checkpoints: Option<Vec<Checkpoint>>,
    last_ts: i64,
    ties: u64,
    diagnostics: Vec<Diagnostic>,
}

impl HostSink {
    fn new(name: &str, checkpoints: bool) -> Self {
        let mut model = kernel::Model::new(StateOptions::default());
        model.state.set_interest(interest());
        let mut s = HostSink {
            model,
            notes: Vec::new(),
            rows: Vec::new(),
            strings: Interner::new(),
            live: IntMap::default(),
            pids: IntMap::default(),
            cpus: IntMap::default(),
            irqs: IntMap::default(),
            softirqs: IntMap::default(),
            cpu_irqs: Default::default(),
            cpu_softirqs: Default::default(),
            cpu_tid: IntMap::default(),
            cpu_labels: IntMap::default(),
            irq_counts: IntMap::default(),
            pending: IntMap::default(),
            arrows: Vec::new(),
            syscall_labels: Vec::new(),
            density: Density::default(),
            first: None,
            checkpoints: checkpoints.then(Vec::new),
            last_ts: i64::MIN,
            ties: 0,
            diagnostics: Vec::new(),
        };
        s.rows.push(RowB::new(RowKind::Host, name.to_string()));
        s
    }

    fn new_row(&mut self, kind: RowKind, label: String) -> u32 {
        self.rows.push(RowB::new(kind, label));
        self.rows.len() as u32 - 1
    }

    fn thread_name(&self, tid: i32) -> &str {
        self.model.state.thread(tid).map_or("", |t| t.comm.as_str())
    }

    /// The live row of thread `tid`, made if none.
    fn thread(&mut self, tid: i32, ts: i64) -> u32 {
        if let Some(&r) = self.live.get(&tid) {
            return r;
        }
        let name = self.thread_name(tid).to_string();
        let r = self.new_row(
            RowKind::Thread {
                tid,
                pid: None,
                ppid: None,
            },
            name.clone(),
        );
        let l = self.strings.intern(&name);
        self.rows[r as usize].names.push((ts, l));
        self.live.insert(tid, r);
        r
    }

    /// Notes the name thread row `r` has at `ts`; returns its label.
    fn name_thread(&mut self, r: u32, tid: i32, ts: i64) -> u32 {
        let name = self.thread_name(tid);
        let row = &self.rows[r as usize];
        let last = row.names.last().map(|&(_, l)| l);
        if let Some(l) = last.filter(|&l| &*self.strings.strings[l as usize] == name) {
            return l;
        }
        if name.is_empty() {
            return last.unwrap_or(0);
        }
        let name = name.to_string();
        let l = self.strings.intern(&name);
        let row = &mut self.rows[r as usize];
        row.names.push((ts, l));
        row.label = name;
        l
    }

    fn cpu(&mut self, cpu: u32) -> u32 {
        if let Some(&r) = self.cpus.get(&cpu) {
            return r;
        }
        let r = self.new_row(RowKind::Cpu { cpu }, format!("CPU {cpu}"));
        self.cpus.insert(cpu, r);
        r
    }

    /// The row of IRQ line `irq`: over every CPU, or on `cpu`.
    fn irq(&mut self, irq: i64, cpu: Option<u32>) -> u32 {
        let known = match cpu {
            None => self.irqs.get(&irq),
            Some(c) => self.cpu_irqs.get(&(c, irq)),
        };
        if let Some(&r) = known {
            return r;
        }
        let label = match self.model.state.irq_names.get(&irq) {
            Some(n) => format!("IRQ {irq} ({n})"),
            None => format!("IRQ {irq}"),
        };
        let r = self.new_row(RowKind::Irq { irq, cpu }, label);
        match cpu {
            None => self.irqs.insert(irq, r),
            Some(c) => self.cpu_irqs.insert((c, irq), r),
        };
        r
    }

    /// The row of soft IRQ vector `vec`: over every CPU, or on `cpu`.
    fn softirq(&mut self, vec: u64, cpu: Option<u32>) -> u32 {
        let known = match cpu {
            None => self.softirqs.get(&vec),
            Some(c) => self.cpu_softirqs.get(&(c, vec)),
        };
        if let Some(&r) = known {
            return r;
        }
        let r = self.new_row(RowKind::SoftIrq { vec, cpu }, softirq_name(vec));
        match cpu {
            None => self.softirqs.insert(vec, r),
            Some(c) => self.cpu_softirqs.insert((c, vec), r),
        };
        r
    }

    fn syscall_label(&mut self, name: u32) -> u32 {
        if let Some(&l) = self.syscall_labels.get(name as usize) {
            if l != u32::MAX {
                return l;
            }
        }
        let s = self.model.resolver.syscalls.shared(name);
        let l = self.strings.intern(&s);
        if self.syscall_labels.len() <= name as usize {
            self.syscall_labels.resize(name as usize + 1, u32::MAX);
        }
        self.syscall_labels[name as usize] = l;
        l
    }

    fn thread_status(&mut self, ts: i64, tid: i32, status: ThreadStatus) {
        let r = self.thread(tid, ts);
        let (code, label) = match status {
            ThreadStatus::Usermode => (thread_code(ThreadState::Usermode), 0),
            ThreadStatus::Syscall(n) => (thread_code(ThreadState::Syscall), self.syscall_label(n)),
            ThreadStatus::WaitCpu => (thread_code(ThreadState::WaitCpu), 0),
            ThreadStatus::WaitBlocked => (thread_code(ThreadState::WaitBlocked), 0),
            ThreadStatus::Interrupted => (thread_code(ThreadState::Interrupted), 0),
            ThreadStatus::SoftIrq => (thread_code(ThreadState::SoftIrq), 0),
            ThreadStatus::Unknown => (thread_code(ThreadState::Unknown), 0),
            ThreadStatus::Dead => (NONE, 0),
        };
        self.rows[r as usize].set(ts, code, label);
    }

    fn cpu_status(&mut self, ts: i64, cpu: u32, status: CpuStatus) {
        let r = self.cpu(cpu);
        let now = match status {
            CpuStatus::Idle => Some(Some(0)),
            CpuStatus::Usermode(t) | CpuStatus::Syscall(t, _) => Some(Some(t)),
            CpuStatus::Unknown => Some(None),
            _ => None,
        };
        let (mut cur, mut name) = self.cpu_tid.get(&r).copied().unwrap_or((None, 0));
        if let Some(now) = now {
            if now != cur {
                name = 0;
                if let Some(t) = now.filter(|&t| t != 0) {
                    // Switched in: the wake-up that let it run ends here; its name is current.
                    let tr = self.thread(t, ts);
                    name = self.name_thread(tr, t, ts);
                    if let Some((w, src)) = self.pending.remove(&tr) {
                        self.arrows.push(RawArrow {
                            start: w,
                            end: ts,
                            source: src,
                            target: tr,
                        });
                    }
                }
                cur = now;
                self.cpu_tid.insert(r, (cur, name));
            }
        }
        let busy = match cur {
            Some(t) if t != 0 => BUSY,
            _ => 0,
        };
        let (code, label) = match status {
            CpuStatus::Idle => (0, 0),
            CpuStatus::Usermode(_) => (1, name),
            CpuStatus::Syscall(_, n) => (2, self.syscall_label(n)),
            CpuStatus::Irq(irq) => {
                let n = match self.model.state.irq_names.get(&irq) {
                    Some(n) => n.clone(),
                    None => format!("IRQ {irq}"),
                };
                (3, self.strings.intern(&n))
            }
            CpuStatus::SoftIrq(vec) => (4, self.strings.intern(&softirq_name(vec))),
            CpuStatus::Unknown => (5, 0),
        };
        self.rows[r as usize].set(ts, code | busy, label);
    }

    /// Sets an IRQ or soft IRQ row from its counts.
    fn irq_row(&mut self, ts: i64, r: u32, cpu: u32) {
        let (active, raised) = self.irq_counts.get(&r).copied().unwrap_or((0, 0));
        let (code, label) = if active > 0 {
            let l = match self.cpu_labels.get(&cpu) {
                Some(&l) => l,
                None => {
                    let l = self.strings.intern(&format!("CPU {cpu}"));
                    self.cpu_labels.insert(cpu, l);
                    l
                }
            };
            (0, l)
        } else if raised > 0 {
            (1, 0)
        } else {
            (NONE, 0)
        };
        self.rows[r as usize].set(ts, code, label);
    }

    fn apply(&mut self, n: Notification) {
        match n {
            Notification::ThreadStatus { ts, tid, status } => self.thread_status(ts, tid, status),
            Notification::CpuStatus { ts, cpu, status } => self.cpu_status(ts, cpu, status),
            Notification::Irq {
                ts,
                cpu,
                irq,
                entry,
            } => {
                // The line's row over every CPU, and its row on this CPU.
                for on in [None, Some(cpu)] {
                    let r = self.irq(irq, on);
                    let c = self.irq_counts.entry(r).or_default();
                    if entry {
                        c.0 += 1;
                    } else {
                        c.0 = c.0.saturating_sub(1);
                    }
                    self.irq_row(ts, r, cpu);
                }
            }
            Notification::SoftIrq { ts, cpu, vec, step } => {
                for on in [None, Some(cpu)] {
                    let r = self.softirq(vec, on);
                    let c = self.irq_counts.entry(r).or_default();
                    match step {
                        SoftIrqStep::Raise => c.1 += 1,
                        SoftIrqStep::Entry => {
                            c.0 += 1;
                            c.1 = c.1.saturating_sub(1);
                        }
                        SoftIrqStep::Exit => c.0 = c.0.saturating_sub(1),
                    }
                    self.irq_row(ts, r, cpu);
                }
            }
            Notification::Wakeup {
                ts,
                tid,
                cpu,
                waker,
                in_irq,
            } => {
                let target = self.thread(tid, ts);
                let source = match waker {
                    Some(w) if w != 0 && !in_irq => self.thread(w, ts),
                    _ => self.cpu(cpu),
                };
                self.pending.insert(target, (ts, source));
            }
            Notification::ThreadBirth {
                ts,
                tid,
                pid,
                parent_pid,
                ..
            } => {
                if let Some(old) = self.live.remove(&tid) {
                    // A thread id used again: the old thread is gone.
                    let row = &mut self.rows[old as usize];
                    row.set(ts, NONE, 0);
                    row.ended.get_or_insert(ts);
                }
                let r = self.thread(tid, ts);
                self.pids.insert(r, (Some(pid), Some(parent_pid)));
            }
            Notification::ThreadKnown {
                ts,
                tid,
                pid,
                ppid,
                status,
            } => {
                let r = self.thread(tid, ts);
                let e = self.pids.entry(r).or_default();
                e.0 = e.0.or(pid);
                e.1 = e.1.or(ppid);
                self.name_thread(r, tid, ts);
                if self.rows[r as usize].current().0 == NONE {
                    self.thread_status(ts, tid, status);
                }
            }
            Notification::ThreadExec { .. } => {}
            Notification::ThreadExit { ts, tid } => {
                if let Some(r) = self.live.remove(&tid) {
                    let row = &mut self.rows[r as usize];
                    row.set(ts, NONE, 0);
                    row.ended = Some(ts);
                    self.pending.remove(&r);
                }
            }
            _ => {}
        }
    }

    fn finish_host(self) -> HostModel {
        let ids = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| match r.kind {
                RowKind::Thread { tid, .. } => {
                    let (pid, ppid) = self.pids.get(&(i as u32)).copied().unwrap_or((None, None));
                    let pid = pid.or_else(|| self.model.state.thread(tid).and_then(|t| t.pid));
                    Some((tid, pid, ppid))
                }
                _ => None,
            })
            .collect();
        HostModel {
            name: self.rows[0].label.clone(),
            rows: self.rows,
            strings: self.strings.strings,
            arrows: self.arrows,
            density: self.density,
            first: self.first,
            checkpoints: self.checkpoints.unwrap_or_default(),
            diagnostics: self.diagnostics,
            ids,
        }
    }
}

impl Sink for HostSink {
    fn wants_notices(&self) -> bool {
        true
    }

    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.model.process(ev, ts, &mut self.notes);
        if !self.notes.is_empty() {
            let notes = std::mem::take(&mut self.notes);
            for &n in &notes {
                self.apply(n);
            }
            self.notes = notes;
            self.notes.clear();
        }
        let i = self.density.events;
        if ts == self.last_ts {
            self.ties += 1;
        } else {
            self.ties = 0;
            self.last_ts = ts;
        }
        if i.is_multiple_of(MARK) {
            self.density.marks.push(ts);
        }
        if let Some(c) = &mut self.checkpoints {
            if i.is_multiple_of(CHECKPOINT_EVERY) {
                c.push(Checkpoint {
                    index: i,
                    ts,
                    skip: self.ties,
                });
            }
        }
        self.first.get_or_insert(ts);
        self.density.last = ts;
        self.density.events = i + 1;
        Flow::Continue
    }

    fn notice(&mut self, notice: &Notice) -> Flow {
        let ts = notice.ts.unwrap_or(self.density.last);
        if notice.kind == pipeline::NoticeKind::DiscardedEvents {
            self.density.lost.push((ts, notice.count));
        }
        Flow::Continue
    }

    fn diagnostic(&mut self, d: &Diagnostic) {
        self.diagnostics.push(d.clone());
    }
}

/// Counts events in the merged order of several hosts, for the checkpoints.
struct Counter {
    events: u64,
    last_ts: i64,
    ties: u64,
    checkpoints: Vec<Checkpoint>,
}

impl Sink for Counter {
    #[inline]
    fn event(&mut self, _ev: &Event<'_>, ts: i64) -> Flow {
        if ts == self.last_ts {
            self.ties += 1;
        } else {
            self.ties = 0;
            self.last_ts = ts;
        }
        if self.events.is_multiple_of(CHECKPOINT_EVERY) {
            self.checkpoints.push(Checkpoint {
                index: self.events,
                ts,
                skip: self.ties,
            });
        }
        self.events += 1;
        Flow::Continue
    }
}

/// The read options of the model's reads: every event of every stream.
pub(crate) fn read_options(opts: &ReadOptions) -> ReadOptions {
    ReadOptions {
        begin: None,
        end: None,
        no_intersection: true,
        time_map: opts.time_map.clone(),
        progress: opts.progress.clone(),
    }
}

/// The traces grouped by host (hostname, else path), in the order of their first trace: the
/// model's [`crate::Timeline::hosts`], in their order.
pub fn hosts(traces: &[Arc<Trace>]) -> Vec<(String, Vec<Arc<Trace>>)> {
    let mut out: Vec<(String, Vec<Arc<Trace>>)> = Vec::new();
    for t in traces {
        let name = t
            .class
            .env_str("hostname")
            .map(str::to_string)
            .unwrap_or_else(|| t.path.display().to_string());
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(t.clone()),
            None => out.push((name, vec![t.clone()])),
        }
    }
    out
}

/// Builds the model of `traces`.
pub(crate) fn build(traces: &[Arc<Trace>], opts: &ReadOptions) -> (Timeline, Vec<Diagnostic>) {
    let groups = hosts(traces);
    let single = groups.len() == 1;
    let read = read_options(opts);
    let build_hosts = || -> Vec<HostModel> {
        groups
            .par_iter()
            .map(|(name, ts)| {
                let mut sink = HostSink::new(name, single);
                let source = FileSource::new(ts.clone(), read.clone());
                // Its problems reached the sink as diagnostics.
                source.run(&mut sink);
                sink.finish_host()
            })
            .collect()
    };
    let (models, merged) = if single {
        (build_hosts(), None)
    } else {
        let (m, c) = rayon::join(build_hosts, || {
            let mut c = Counter {
                events: 0,
                last_ts: i64::MIN,
                ties: 0,
                checkpoints: Vec::new(),
            };
            FileSource::new(traces.to_vec(), read.clone()).run(&mut c);
            c.checkpoints
        });
        (m, Some(c))
    };
    join(models, merged)
}

/// Joins the hosts' models into one.
fn join(models: Vec<HostModel>, merged: Option<Vec<Checkpoint>>) -> (Timeline, Vec<Diagnostic>) {
    let mut store = Store::default();
    let mut strings = Interner::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut hosts = Vec::new();
    let mut diagnostics = Vec::new();
    let start = models.iter().filter_map(|m| m.first).min().unwrap_or(0);
    let end = models
        .iter()
        .filter(|m| m.density.events > 0)
        .map(|m| m.density.last)
        .max()
        .unwrap_or(start);
    let mut events = 0;
    let mut checkpoints = merged.unwrap_or_default();
    for (h, m) in models.into_iter().enumerate() {
        let base = rows.len() as u32;
        let remap: Vec<u32> = m.strings.iter().map(|s| strings.intern(s)).collect();
        events += m.density.events;
        if checkpoints.is_empty() {
            checkpoints = m.checkpoints;
        }
        diagnostics.extend(m.diagnostics);
        hosts.push(Host {
            name: m.name.clone(),
            row: base,
        });
        // Thread rows of each tid, for the parents.
        let mut by_tid: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, id) in m.ids.iter().enumerate() {
            if let Some((tid, ..)) = id {
                by_tid.entry(*tid).or_default().push(i);
            }
        }
        let row_start = |r: &RowB| r.col.starts.first().unwrap_or(start);
        let find = |tid: i32, ts: i64, me: usize| -> Option<usize> {
            let v = by_tid.get(&tid)?;
            let mut best = None;
            for &i in v {
                if i != me && row_start(&m.rows[i]) <= ts {
                    best = Some(i);
                }
            }
            best.or_else(|| v.iter().copied().find(|&i| i != me))
        };
        let mut parents: Vec<Option<usize>> = vec![None; m.rows.len()];
        for (i, id) in m.ids.iter().enumerate() {
            if let Some((tid, pid, ppid)) = *id {
                let ts = row_start(&m.rows[i]);
                parents[i] = match pid {
                    Some(p) if p != tid => find(p, ts, i),
                    _ => ppid
                        .filter(|&p| p != tid && p > 0)
                        .and_then(|p| find(p, ts, i)),
                };
            }
        }
        // A per-CPU IRQ or soft IRQ row hangs from its CPU's row.
        let cpu_rows: HashMap<u32, usize> = m
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r.kind {
                RowKind::Cpu { cpu } => Some((cpu, i)),
                _ => None,
            })
            .collect();
        for (i, r) in m.rows.iter().enumerate() {
            if let RowKind::Irq { cpu: Some(c), .. } | RowKind::SoftIrq { cpu: Some(c), .. } =
                r.kind
            {
                parents[i] = cpu_rows.get(&c).copied();
            }
        }
        // No cycles: a row whose ancestors lead back to it hangs from the host.
        for i in 0..parents.len() {
            let mut at = parents[i];
            let mut steps = 0;
            while let Some(p) = at {
                if p == i || steps > parents.len() {
                    parents[i] = None;
                    break;
                }
                at = parents[p];
                steps += 1;
            }
        }
        // Rows in a stable order: the host, its CPUs (each followed by its IRQ lines and soft
        // IRQ vectors), the IRQ lines and soft IRQ vectors over every CPU, then its threads
        // by id and birth.
        let sort_key = |i: usize| -> (u8, i128, i64) {
            let r = &m.rows[i];
            match r.kind {
                RowKind::Host => (0, 0, 0),
                RowKind::Cpu { cpu } => (1, cpu as i128, i64::MIN),
                // Under their CPU (first): IRQ lines (shifted below every vector), then vectors.
                RowKind::Irq { irq, cpu: Some(c) } => {
                    (1, c as i128, irq.saturating_sub(i64::MAX / 2))
                }
                RowKind::SoftIrq { vec, cpu: Some(c) } => {
                    (1, c as i128, vec.min(i64::MAX as u64 / 2) as i64)
                }
                RowKind::Irq { irq, cpu: None } => (2, irq as i128, 0),
                RowKind::SoftIrq { vec, cpu: None } => (3, vec as i128, 0),
                RowKind::Thread { tid, .. } => (4, tid as i128, row_start(r)),
            }
        };
        let mut order: Vec<usize> = (0..m.rows.len()).collect();
        order.sort_by_key(|&i| (sort_key(i), i));
        let mut new_of = vec![0u32; m.rows.len()];
        for (n, &i) in order.iter().enumerate() {
            new_of[i] = base + n as u32;
        }
        let mut taken: Vec<Option<(RowB, Option<Ids>)>> =
            m.rows.into_iter().zip(m.ids).map(Some).collect();
        for &i in &order {
            let Some((r, id)) = taken[i].take() else {
                continue;
            };
            let id_ = new_of[i];
            let mut col = r.col;
            col.labels.remap(|l| remap[l as usize]);
            let row_end = r
                .ended
                .unwrap_or(end)
                .max(col.starts.last().unwrap_or(start));
            col.end = row_end;
            // The columns grew by doubling: their slack would be most of the model's memory.
            col.starts.shrink_to_fit();
            col.states.shrink_to_fit();
            col.labels.shrink_to_fit();
            col.index();
            let kind = match (r.kind, id) {
                (RowKind::Thread { tid, .. }, Some((_, pid, ppid))) => {
                    RowKind::Thread { tid, pid, ppid }
                }
                (k, _) => k,
            };
            let parent = if i == 0 {
                None
            } else {
                Some(parents[i].map_or(base, |p| new_of[p]))
            };
            let names: Vec<(i64, String)> = if r.names.is_empty() {
                vec![(col.starts.first().unwrap_or(start), r.label.clone())]
            } else {
                r.names
                    .iter()
                    .map(|&(t, l)| (t, m.strings[l as usize].to_string()))
                    .collect()
            };
            let row_start = if i == 0 {
                start
            } else {
                col.starts.first().unwrap_or(start)
            };
            rows.push(Row {
                id: id_,
                parent,
                host: h as u32,
                kind,
                label: r.label,
                names,
                start: row_start,
                end: if i == 0 { end } else { row_end },
            });
            store.cols.push(col);
        }
        for a in m.arrows {
            store.arrows.push(RawArrow {
                source: new_of[a.source as usize],
                target: new_of[a.target as usize],
                ..a
            });
        }
        store.density.push(m.density);
    }
    store
        .arrows
        .sort_by_key(|a| (a.start, a.end, a.source, a.target));
    store.arrows.shrink_to_fit();
    store.max_arrow = store
        .arrows
        .iter()
        .map(|a| a.end - a.start)
        .max()
        .unwrap_or(0);
    store.strings = strings.strings;
    store.derive(&rows, hosts.len());
    let tl = Timeline {
        hosts,
        rows,
        start,
        end,
        events,
        checkpoints,
        store: Arc::new(store),
    };
    (tl, diagnostics)
}
