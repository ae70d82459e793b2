//! One trace's tables: the `event` rows, and the derived tables made from the kernel model's
//! notifications (the state machine `tracekit analyze` runs, not a second one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ::ctf::{Event, Trace};
use compact_str::CompactString;
use kernel::{
    Facet, IntMap, Interest, Model, NoteKind, Notification, StateOptions, StreamCpus, ThreadStatus,
};

use super::fields::EventFile;
use super::tables::{self, row, FileProps, TableDef, TableOut};
use super::{Tables, TraceReport};
use crate::{Error, NameFilter};

/// Linux's soft IRQ vector names, by number.
const SOFTIRQ_NAMES: [&str; 10] = [
    "HI_SOFTIRQ",
    "TIMER_SOFTIRQ",
    "NET_TX_SOFTIRQ",
    "NET_RX_SOFTIRQ",
    "BLOCK_SOFTIRQ",
    "IRQ_POLL_SOFTIRQ",
    "TASKLET_SOFTIRQ",
    "SCHED_SOFTIRQ",
    "HRTIMER_SOFTIRQ",
    "RCU_SOFTIRQ",
];

/// The notifications and state facets the derived tables of `tables` need.
pub(crate) fn interest(tables: &Tables) -> Interest {
    let mut kinds = Vec::new();
    let mut facets = Vec::new();
    if tables.sched_slice {
        kinds.extend([NoteKind::SchedSwitch, NoteKind::ThreadStatus]);
    }
    if tables.thread_state {
        kinds.extend([NoteKind::ThreadStatus, NoteKind::Wakeup]);
    }
    if tables.syscall {
        kinds.extend([NoteKind::SyscallDone, NoteKind::Io]);
        facets.extend([Facet::Threads, Facet::Fds]);
    }
    if tables.irq {
        kinds.extend([NoteKind::HardIrqDone, NoteKind::SoftIrqDone]);
        facets.push(Facet::IrqNames);
    }
    if tables.block_io {
        kinds.push(NoteKind::BlockDone);
        facets.push(Facet::Disks);
    }
    if tables.thread || tables.process {
        kinds.extend([NoteKind::SchedSwitch, NoteKind::Lifecycle]);
        facets.push(Facet::Threads);
    }
    Interest::of(&kinds).reading(&facets)
}

/// The CPU holder a `sched_slice` row is open for.
#[derive(Debug, Clone, Copy)]
struct Running {
    tid: i32,
    ts: i64,
    prio: Option<i32>,
    wakeup: Option<(i64, Option<i32>)>,
}

/// A thread's open `thread_state` interval.
#[derive(Debug, Clone, Copy)]
struct StateIv {
    state: &'static str,
    ts: i64,
    /// For a `blocked` interval: the system call (name index) it blocked in.
    blocked_in: Option<u32>,
    /// The system call the thread is in now, if any.
    in_call: Option<u32>,
}

/// A thread's open `thread` row.
#[derive(Debug, Clone)]
struct NameIv {
    name: CompactString,
    pid: Option<i32>,
    ts: i64,
}

/// A process for the `process` table.
#[derive(Debug, Clone, Copy)]
struct Proc {
    ppid: Option<i32>,
    ts: i64,
    end: Option<i64>,
}

/// A completed system call waiting for the descriptor details the same event may give.
#[derive(Debug, Clone)]
struct PendingCall {
    tid: i32,
    name: u32,
    entry: i64,
    exit: i64,
    ret: i64,
    cmd: Option<i64>,
    fd: Option<i64>,
    size: Option<i64>,
    file: Option<u32>,
}

/// The open output tables of one trace.
struct Outs {
    event: Option<EventFile>,
    sched_slice: Option<TableOut>,
    thread_state: Option<TableOut>,
    syscall: Option<TableOut>,
    irq: Option<TableOut>,
    block_io: Option<TableOut>,
    disk: Option<TableOut>,
    net_packet: Option<TableOut>,
    thread: Option<TableOut>,
    process: Option<TableOut>,
}

/// One trace being exported.
pub(crate) struct TraceOut {
    /// The trace.
    trace: std::sync::Arc<Trace>,
    /// `host=…/trace=…`.
    pub(crate) partition: PathBuf,
    names: NameFilter,
    /// Per event class (stream class, event class): kept by `names` (None: not asked yet).
    kept: Vec<Vec<Option<bool>>>,
    outs: Outs,
    model: Model,
    notes: Vec<Notification>,
    cpus_of: StreamCpus,
    running: IntMap<u32, Running>,
    states: IntMap<i32, StateIv>,
    thread_names: IntMap<i32, NameIv>,
    procs: BTreeMap<i32, Proc>,
    /// The devices of the `block_io` rows.
    devs: std::collections::BTreeSet<u64>,
    pub(crate) first: Option<i64>,
    pub(crate) last: Option<i64>,
    pub(crate) events: u64,
    /// Per stream index: (discarded events, lost packets).
    pub(crate) losses: BTreeMap<usize, (u64, u64)>,
    pub(crate) errors: Vec<String>,
    /// The `event` table written beside this read ([`TraceOut::set_events`]): rows, bytes.
    event_files: Option<(u64, u64)>,
    /// The first write error: the rest of the trace is not written.
    pub(crate) failed: Option<Error>,
}

fn open(
    on: bool,
    def: &'static TableDef,
    root: &Path,
    partition: &Path,
    props: FileProps,
) -> Result<Option<TableOut>, Error> {
    if !on {
        return Ok(None);
    }
    TableOut::create(def, &root.join(def.name).join(partition), props).map(Some)
}

impl TraceOut {
    /// Creates the files of `trace`'s tables under `root`, in `partition`.
    pub(crate) fn new(
        trace: std::sync::Arc<Trace>,
        root: &Path,
        partition: PathBuf,
        tables: &Tables,
        names: NameFilter,
        props: FileProps,
    ) -> Result<Self, Error> {
        let o = |on, def| open(on, def, root, &partition, props);
        let outs = Outs {
            event: match tables.event {
                true => Some(super::events::event_file(
                    &root.join(tables::EVENT.name).join(&partition),
                    "part-0.parquet",
                    props,
                    true,
                )?),
                false => None,
            },
            sched_slice: o(tables.sched_slice, &tables::SCHED_SLICE)?,
            thread_state: o(tables.thread_state, &tables::THREAD_STATE)?,
            syscall: o(tables.syscall, &tables::SYSCALL)?,
            irq: o(tables.irq, &tables::IRQ)?,
            block_io: o(tables.block_io, &tables::BLOCK_IO)?,
            disk: o(tables.block_io, &tables::DISK)?,
            net_packet: o(tables.net_packet, &tables::NET_PACKET)?,
            thread: o(tables.thread, &tables::THREAD)?,
            process: o(tables.process, &tables::PROCESS)?,
        };
        let mut model = Model::new(StateOptions::default());
        model.state.set_interest(interest(tables));
        Ok(TraceOut {
            trace,
            partition,
            names,
            kept: Vec::new(),
            outs,
            model,
            notes: Vec::with_capacity(8),
            cpus_of: StreamCpus::default(),
            running: IntMap::default(),
            states: IntMap::default(),
            thread_names: IntMap::default(),
            procs: BTreeMap::new(),
            devs: Default::default(),
            first: None,
            last: None,
            events: 0,
            losses: BTreeMap::new(),
            errors: Vec::new(),
            event_files: None,
            failed: None,
        })
    }

    /// What the streams' exports wrote of the `event` table: the trace's events, first and
    /// last times are theirs (this read saw only the events the derived tables need).
    pub(crate) fn set_events(&mut self, e: &super::events::Events) {
        self.events = e.events;
        self.first = match (self.first, e.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = self.last.max(e.last);
        self.event_files = Some((e.rows, e.bytes));
    }

    /// The trace.
    pub(crate) fn trace(&self) -> &std::sync::Arc<Trace> {
        &self.trace
    }

    /// The trace's directory.
    pub(crate) fn trace_path(&self) -> &Path {
        &self.trace.path
    }

    /// Whether `ev`'s class is kept in the `event` table.
    #[inline]
    fn kept(&mut self, ev: &Event<'_>) -> bool {
        let (sc, ec) = ev.class_index();
        if let Some(Some(k)) = self.kept.get(sc).and_then(|v| v.get(ec)) {
            return *k;
        }
        let k = self.names.keeps(ev.name());
        if self.kept.len() <= sc {
            self.kept.resize_with(sc + 1, Vec::new);
        }
        let v = &mut self.kept[sc];
        if v.len() <= ec {
            v.resize(ec + 1, None);
        }
        v[ec] = Some(k);
        k
    }

    /// One event at `ts`.
    #[inline]
    pub(crate) fn event(&mut self, ev: &Event<'_>, ts: i64) {
        if self.failed.is_some() {
            return;
        }
        if self.first.is_none() {
            self.first = Some(ts);
        }
        self.last = Some(ts);
        self.events += 1;
        if let Err(e) = self.event_rows(ev, ts) {
            self.failed = Some(e);
        }
    }

    fn event_rows(&mut self, ev: &Event<'_>, ts: i64) -> Result<(), Error> {
        let cpu = self.cpus_of.of(ev) as i32;
        if self.outs.event.is_some() && self.kept(ev) {
            let out = self.outs.event.as_mut().expect("checked above");
            out.row(ev, ts, cpu)?;
        }
        let r = self.model.process(ev, ts, &mut self.notes);
        if let Some(dir) = r.kind.packet_direction() {
            if let Some(out) = self.outs.net_packet.as_mut() {
                net_row(out, ev, ts, cpu, dir == kernel::PacketDir::Send)?;
            }
        }
        if !self.notes.is_empty() {
            let notes = std::mem::take(&mut self.notes);
            let done = self.derive(&notes);
            self.notes = notes;
            self.notes.clear();
            done?;
        }
        Ok(())
    }

    /// The derived rows of one event's notifications.
    fn derive(&mut self, notes: &[Notification]) -> Result<(), Error> {
        let mut pending: Option<PendingCall> = None;
        for n in notes {
            match *n {
                Notification::SchedSwitch {
                    ts,
                    cpu,
                    prev_tid,
                    next_tid,
                    next_prio,
                    wakeup,
                    ..
                } => {
                    if self.outs.sched_slice.is_some() {
                        let left = notes.iter().find_map(|m| match *m {
                            Notification::ThreadStatus { tid, status, .. } if tid == prev_tid => {
                                Some(status)
                            }
                            _ => None,
                        });
                        self.switch(ts, cpu, prev_tid, next_tid, next_prio, wakeup, left)?;
                    }
                    if self.outs.thread.is_some() || self.outs.process.is_some() {
                        self.check_name(prev_tid, ts)?;
                        self.check_name(next_tid, ts)?;
                    }
                }
                Notification::ThreadStatus { ts, tid, status }
                    if self.outs.thread_state.is_some() =>
                {
                    self.status(notes, ts, tid, status)?;
                }
                Notification::SyscallDone {
                    tid,
                    name,
                    entry_ts,
                    exit_ts,
                    ret,
                    cmd,
                    ..
                } => {
                    if let Some(p) = pending.take() {
                        self.call_row(p)?;
                    }
                    pending = Some(PendingCall {
                        tid,
                        name,
                        entry: entry_ts,
                        exit: exit_ts,
                        ret,
                        cmd,
                        fd: None,
                        size: None,
                        file: None,
                    });
                }
                Notification::Io(d) => {
                    if let Some(p) = pending
                        .as_mut()
                        .filter(|p| p.tid == d.tid && p.entry == d.entry_ts)
                    {
                        p.fd = d.fd;
                        p.size = d.size;
                        p.file = d.file;
                    }
                }
                Notification::HardIrqDone {
                    cpu,
                    irq,
                    begin,
                    end,
                } => {
                    if let Some(out) = self.outs.irq.as_mut() {
                        let name = self
                            .model
                            .state
                            .irq_names
                            .get(&irq)
                            .map_or("", String::as_str);
                        row!(
                            out,
                            begin,
                            end.saturating_sub(begin),
                            cpu as i32,
                            true,
                            irq,
                            name,
                            None::<i64>
                        )?;
                    }
                }
                Notification::SoftIrqDone {
                    cpu,
                    vec,
                    raise,
                    begin,
                    end,
                } => {
                    if let Some(out) = self.outs.irq.as_mut() {
                        let name = SOFTIRQ_NAMES
                            .get(vec as usize)
                            .copied()
                            .unwrap_or("UNKNOWN_SOFTIRQ");
                        let latency = raise.map(|r| begin.saturating_sub(r));
                        row!(
                            out,
                            begin,
                            end.saturating_sub(begin),
                            cpu as i32,
                            false,
                            vec as i64,
                            name,
                            latency
                        )?;
                    }
                }
                Notification::BlockDone {
                    disk,
                    issue,
                    complete,
                    nr_sector,
                    write,
                    tid,
                } => {
                    if let Some(out) = self.outs.block_io.as_mut() {
                        self.devs.insert(disk);
                        row!(
                            out,
                            issue,
                            complete.saturating_sub(issue),
                            disk as i64,
                            nr_sector as i64,
                            write,
                            tid
                        )?;
                    }
                }
                Notification::ThreadBirth {
                    ts,
                    tid,
                    pid,
                    parent_pid,
                    ..
                } => {
                    if tid == pid {
                        self.procs.entry(pid).or_insert(Proc {
                            ppid: Some(parent_pid),
                            ts,
                            end: None,
                        });
                    }
                    self.check_name(tid, ts)?;
                }
                Notification::ThreadKnown {
                    ts, tid, pid, ppid, ..
                } => {
                    if pid == Some(tid) {
                        self.procs.entry(tid).or_insert(Proc {
                            ppid,
                            ts,
                            end: None,
                        });
                    }
                    self.check_name(tid, ts)?;
                }
                Notification::ThreadExit { ts, tid } => {
                    if let Some(iv) = self.thread_names.remove(&tid) {
                        if let Some(out) = self.outs.thread.as_mut() {
                            row!(out, tid, iv.pid, iv.name.as_str(), iv.ts, ts, true)?;
                        }
                    }
                    if let Some(p) = self.procs.get_mut(&tid) {
                        p.end.get_or_insert(ts);
                    }
                }
                _ => {}
            }
        }
        if let Some(p) = pending {
            self.call_row(p)?;
        }
        Ok(())
    }

    /// A context switch on `cpu`: the slice of the thread switched out ends, one of the thread
    /// switched in starts.
    #[allow(clippy::too_many_arguments)]
    fn switch(
        &mut self,
        ts: i64,
        cpu: u32,
        prev_tid: i32,
        next_tid: i32,
        next_prio: Option<i32>,
        wakeup: Option<(i64, Option<i32>)>,
        left: Option<ThreadStatus>,
    ) -> Result<(), Error> {
        let next = Running {
            tid: next_tid,
            ts,
            prio: next_prio,
            wakeup,
        };
        // Before the CPU's first switch, its thread ran since the range's begin.
        let ran = self.running.insert(cpu, next).unwrap_or(Running {
            tid: prev_tid,
            ts: self.first.unwrap_or(ts),
            prio: None,
            wakeup: None,
        });
        let end_state = if ran.tid == prev_tid {
            left.map_or("unknown", |s| left_name(s))
        } else {
            "unknown"
        };
        let out = self
            .outs
            .sched_slice
            .as_mut()
            .expect("checked by the caller");
        slice_row(out, &ran, ts, cpu, Some(end_state))
    }

    /// A thread's status changed at `ts`. Statuses fold into the `thread_state` states:
    /// user mode, system calls and the interrupts that preempt them are all `running` (the
    /// thread holds its CPU), so an interval ends only when the thread is switched, woken or
    /// dies; the `syscall` table has the calls themselves.
    fn status(
        &mut self,
        notes: &[Notification],
        ts: i64,
        tid: i32,
        status: ThreadStatus,
    ) -> Result<(), Error> {
        let state = state_name(status);
        let call = match status {
            ThreadStatus::Syscall(c) => Some(c),
            ThreadStatus::Usermode => None,
            _ => self.states.get(&tid).and_then(|iv| iv.in_call),
        };
        let Some(iv) = self.states.get_mut(&tid) else {
            self.states.insert(
                tid,
                StateIv {
                    state,
                    ts,
                    blocked_in: None,
                    in_call: call,
                },
            );
            return Ok(());
        };
        iv.in_call = call;
        if iv.state == state {
            return Ok(());
        }
        let old = *iv;
        iv.state = state;
        iv.ts = ts;
        iv.blocked_in = if state == "blocked" { call } else { None };
        if ts <= old.ts {
            return Ok(());
        }
        let (woken_by, in_irq) = if old.state == "blocked" {
            notes
                .iter()
                .find_map(|m| match *m {
                    Notification::Wakeup {
                        tid: t,
                        waker,
                        in_irq,
                        ..
                    } if t == tid => Some((waker.filter(|_| !in_irq), Some(in_irq))),
                    _ => None,
                })
                .unwrap_or((None, None))
        } else {
            (None, None)
        };
        let name = old.blocked_in.map(|c| self.model.resolver.syscalls.name(c));
        let out = self
            .outs
            .thread_state
            .as_mut()
            .expect("checked by the caller");
        row!(
            out,
            old.ts,
            ts.saturating_sub(old.ts),
            tid,
            old.state,
            name,
            woken_by,
            in_irq
        )
    }

    fn call_row(&mut self, p: PendingCall) -> Result<(), Error> {
        let Some(out) = self.outs.syscall.as_mut() else {
            return Ok(());
        };
        let state = &self.model.state;
        let pid = state.thread(p.tid).and_then(|t| t.pid);
        let file = p
            .file
            .and_then(|f| state.files.get(f as usize))
            .map(|f| f.name.as_str());
        row!(
            out,
            p.entry,
            p.exit.saturating_sub(p.entry),
            p.tid,
            pid,
            self.model.resolver.syscalls.name(p.name),
            p.ret,
            p.cmd,
            p.fd,
            p.size,
            file
        )
    }

    /// Notes the name thread `tid` has at `ts`, ending the row of the name it had.
    fn check_name(&mut self, tid: i32, ts: i64) -> Result<(), Error> {
        if tid == 0 {
            return Ok(());
        }
        let Some(t) = self.model.state.thread(tid) else {
            return Ok(());
        };
        match self.thread_names.get_mut(&tid) {
            Some(iv) if iv.name == t.comm => {
                if iv.pid.is_none() {
                    iv.pid = t.pid;
                }
                Ok(())
            }
            Some(iv) => {
                let old = std::mem::replace(
                    iv,
                    NameIv {
                        name: t.comm.clone(),
                        pid: t.pid,
                        ts,
                    },
                );
                match self.outs.thread.as_mut() {
                    Some(out) => row!(out, tid, old.pid, old.name.as_str(), old.ts, ts, false),
                    None => Ok(()),
                }
            }
            None => {
                self.thread_names.insert(
                    tid,
                    NameIv {
                        name: t.comm.clone(),
                        pid: t.pid,
                        ts,
                    },
                );
                if !self.procs.contains_key(&tid) && t.pid == Some(tid) {
                    self.procs.insert(
                        tid,
                        Proc {
                            ppid: None,
                            ts,
                            end: None,
                        },
                    );
                }
                Ok(())
            }
        }
    }

    /// Ends what is open at the range's end `end` and closes the files.
    pub(crate) fn close(mut self, end: Option<i64>, report: &mut TraceReport) -> Result<(), Error> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let end = end.or(self.last).unwrap_or(0);
        if let Some(out) = self.outs.sched_slice.as_mut() {
            let mut open: Vec<(u32, Running)> = self.running.drain().collect();
            open.sort_by_key(|(cpu, _)| *cpu);
            for (cpu, r) in open {
                slice_row(out, &r, end, cpu, None)?;
            }
        }
        if let Some(out) = self.outs.thread_state.as_mut() {
            let mut open: Vec<(i32, StateIv)> = self.states.drain().collect();
            open.sort_by_key(|(tid, _)| *tid);
            for (tid, iv) in open {
                if end > iv.ts {
                    let name = iv.blocked_in.map(|c| self.model.resolver.syscalls.name(c));
                    row!(
                        out,
                        iv.ts,
                        end.saturating_sub(iv.ts),
                        tid,
                        iv.state,
                        name,
                        None::<i32>,
                        None::<bool>
                    )?;
                }
            }
        }
        let mut open: Vec<(i32, NameIv)> = self.thread_names.drain().collect();
        open.sort_by_key(|(tid, _)| *tid);
        if let Some(out) = self.outs.thread.as_mut() {
            for (tid, iv) in &open {
                row!(out, *tid, iv.pid, iv.name.as_str(), iv.ts, end, false)?;
            }
        }
        if let Some(out) = self.outs.process.as_mut() {
            for (pid, p) in &self.procs {
                let name = self.model.state.thread(*pid).map(|t| t.comm.as_str());
                row!(out, *pid, p.ppid, name, p.ts, p.end)?;
            }
        }
        if let Some(out) = self.outs.disk.as_mut() {
            let state = &self.model.state;
            let mut devs = std::mem::take(&mut self.devs);
            devs.extend(state.disks.keys().copied());
            for dev in devs {
                let name = state
                    .disks
                    .get(&dev)
                    .and_then(|d| d.name.clone())
                    .unwrap_or_else(|| format!("{},{}", dev >> 20, dev & 0xfffff));
                row!(
                    out,
                    dev as i64,
                    name.as_str(),
                    state.whole_disks.contains(&dev)
                )?;
            }
        }
        report.cpus = self.model.state.known_cpus().count() as i32;
        if let Some((rows, bytes)) = self.event_files {
            report.tables.push(("event", rows, bytes));
        }
        if let Some(out) = self.outs.event {
            let rows = out.written_rows();
            let (_, bytes) = out.close()?;
            report.tables.push((tables::EVENT.name, rows, bytes));
        }
        let outs = [
            self.outs.sched_slice,
            self.outs.thread_state,
            self.outs.syscall,
            self.outs.irq,
            self.outs.block_io,
            self.outs.disk,
            self.outs.net_packet,
            self.outs.thread,
            self.outs.process,
        ];
        for out in outs.into_iter().flatten() {
            let name = out.name();
            let rows = out.written_rows();
            let (_, bytes) = out.close()?;
            report.tables.push((name, rows, bytes));
        }
        Ok(())
    }
}

fn slice_row(
    out: &mut TableOut,
    r: &Running,
    end: i64,
    cpu: u32,
    end_state: Option<&str>,
) -> Result<(), Error> {
    row!(
        out,
        r.ts,
        end.saturating_sub(r.ts),
        cpu as i32,
        r.tid,
        r.prio,
        end_state,
        r.wakeup.map(|w| w.0),
        r.wakeup.and_then(|w| w.1)
    )
}

/// How a thread left its CPU.
fn left_name(s: ThreadStatus) -> &'static str {
    match s {
        ThreadStatus::WaitCpu => "runnable",
        ThreadStatus::WaitBlocked => "blocked",
        ThreadStatus::Dead => "dead",
        _ => "unknown",
    }
}

/// The `thread_state` state of a status.
fn state_name(s: ThreadStatus) -> &'static str {
    match s {
        ThreadStatus::Usermode
        | ThreadStatus::Syscall(_)
        | ThreadStatus::Interrupted
        | ThreadStatus::SoftIrq => "running",
        ThreadStatus::WaitCpu => "runnable",
        ThreadStatus::WaitBlocked => "blocked",
        ThreadStatus::Unknown => "unknown",
        ThreadStatus::Dead => "dead",
    }
}

/// The `net_packet` row of a network event: its TCP/IP header fields, found wherever the
/// tracer version put them.
fn net_row(out: &mut TableOut, ev: &Event<'_>, ts: i64, cpu: i32, sent: bool) -> Result<(), Error> {
    let mut f = NetFields::default();
    if let Some(p) = ev.payload() {
        p.walk(&mut f);
    }
    row!(
        out,
        ts,
        cpu,
        sent,
        ev.name(),
        f.iface.as_deref(),
        f.len,
        f.saddr.as_deref(),
        f.daddr.as_deref(),
        f.sport,
        f.dport,
        f.seq,
        f.ack,
        f.flags
    )
}

/// The fields of a network event payload `net_packet` keeps, by member name at any depth.
#[derive(Default)]
struct NetFields {
    iface: Option<String>,
    len: Option<i64>,
    saddr: Option<String>,
    daddr: Option<String>,
    sport: Option<i32>,
    dport: Option<i32>,
    seq: Option<i64>,
    ack: Option<i64>,
    flags: Option<i32>,
    /// The address array being read (`saddr`/`daddr`) and its bytes.
    addr: Option<(bool, Vec<u8>)>,
}

impl ::ctf::field::FieldVisitor for NetFields {
    fn value(
        &mut self,
        name: Option<&str>,
        _role: Option<::ctf::ir::Role>,
        v: &::ctf::FieldValue<'_>,
    ) {
        use ::ctf::FieldValue;
        let int = match v {
            FieldValue::UInt { value, .. } => Some(*value as i64),
            FieldValue::SInt { value, .. } => Some(*value),
            _ => None,
        };
        if let Some((_, bytes)) = self.addr.as_mut() {
            if let Some(b) = int {
                bytes.push(b as u8);
            }
            return;
        }
        match (name, v) {
            (Some("name"), FieldValue::Str(s)) => {
                self.iface = Some(String::from_utf8_lossy(s).into_owned())
            }
            (Some("len"), _) if self.len.is_none() => self.len = int,
            (Some("source_port" | "sport"), _) => self.sport = int.map(|x| x as i32),
            (Some("dest_port" | "dport"), _) => self.dport = int.map(|x| x as i32),
            (Some("seq"), _) => self.seq = int,
            (Some("ack_seq"), _) => self.ack = int,
            (Some("flags"), _) => self.flags = int.map(|x| x as i32),
            // A 4-byte address as one integer (inet_sock_local_*).
            (Some(n @ ("saddr" | "daddr")), _) => {
                if let Some(a) = int {
                    let text = std::net::Ipv4Addr::from(a as u32).to_string();
                    if n == "saddr" {
                        self.saddr = Some(text);
                    } else {
                        self.daddr = Some(text);
                    }
                }
            }
            _ => {}
        }
    }

    fn enter(&mut self, name: Option<&str>, _kind: ::ctf::field::Compound<'_>) {
        match name {
            Some("saddr") => self.addr = Some((true, Vec::new())),
            Some("daddr") => self.addr = Some((false, Vec::new())),
            _ => {}
        }
    }

    fn leave(&mut self) {
        if let Some((src, b)) = self.addr.take() {
            let text = match b.len() {
                4 => std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string(),
                16 => {
                    let a: [u8; 16] = b.try_into().unwrap_or([0; 16]);
                    std::net::Ipv6Addr::from(a).to_string()
                }
                _ => return,
            };
            if src {
                self.saddr = Some(text);
            } else {
                self.daddr = Some(text);
            }
        }
    }
}
