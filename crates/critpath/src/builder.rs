//! Building the execution graph from kernel events (sans-io: fed with decoded [`KEvent`]s
//! in time order).
//!
//! State kept: the current task and the interrupt-context stack of every (host, CPU), the
//! scheduling status of every thread, pending block requests.
//!
//! Model:
//! - A thread's horizontal edges carry the status it had over the interval: running,
//!   preempted (runnable), blocked… A wait ends at a wake-up; what woke it decides the type
//!   of the wait (timer, network, block device, IPI, interrupted or plain blocked) and
//!   whether a vertical edge explains it.
//! - Interrupt context is a per-(host, CPU) kernel worker. One *episode* runs from the entry
//!   of the outermost interrupt context to its exit (a hard IRQ that raises a softirq run
//!   right after it is one episode). Wake-ups, packets and I/O completions inside an episode
//!   are vertices of the kernel worker, joined by `interrupted` edges; a gap separates
//!   episodes.
//! - A packet (or block request) that completes inside an episode arrives at the episode's
//!   first vertex: the device interrupt is when it arrived; handling it is interrupt time.
//! - Vertical edges: waker → wakee (task, or kernel worker for interrupt context), parent →
//!   child at the child's first wake-up, sender → receiver for matched packets (given by a
//!   [`PacketMatcher`](crate::net::PacketMatcher)), block request issue → its completion.
//!
//! Not copied from Trace Compass: IPI exits close IPI context (its IPI context was never
//! pushed); a second wake-up of a task that is already runnable is ignored instead of
//! reusing a stale status; a wake-up from hard-IRQ context is explained through the kernel
//! worker (Trace Compass leaves the wait unexplained).

use crate::graph::{EdgeType, FastMap, Graph, VId, Worker, WorkerId};

/// Scheduling status of a thread (the Linux kernel analysis's statuses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Unknown,
    WaitFork,
    WaitCpu,
    Exit,
    Zombie,
    WaitBlocked,
    Run,
    WaitUnknown,
    /// Switched out after its exit: no more history.
    Dead,
}

impl Status {
    /// The type of a horizontal edge spent in this status.
    pub(crate) fn edge(self) -> EdgeType {
        match self {
            Status::Run | Status::Exit => EdgeType::Running,
            Status::WaitBlocked => EdgeType::Blocked,
            Status::WaitCpu | Status::WaitFork | Status::WaitUnknown => EdgeType::Preempted,
            Status::Unknown | Status::Zombie | Status::Dead => EdgeType::Unknown,
        }
    }

    /// From `lttng_statedump_process_state`'s `status`.
    pub(crate) fn from_statedump(s: i64) -> Status {
        match s {
            1 => Status::WaitFork,
            2 => Status::WaitCpu,
            3 => Status::Exit,
            4 => Status::Zombie,
            5 => Status::WaitUnknown,
            6 => Status::Run,
            _ => Status::Unknown,
        }
    }
}

/// An interrupt context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Hard IRQ with its number.
    Irq(Option<i64>),
    /// `do_IRQ` (whole IRQ, with threaded handlers).
    CompleteIrq,
    /// Softirq with its vector.
    Softirq(Option<u64>),
    /// Timer expiry (`hrtimer_expire_*`, `local_timer_*`).
    Hrtimer,
    /// Inter-processor interrupt (`ipi_*`, x86 `irq_vectors_*`).
    Ipi,
    /// `netif_receive_skb_internal`: packet reception, in whatever context it runs.
    PacketReception,
}

impl Ctx {
    fn same_kind(self, o: Ctx) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&o)
    }
}

/// A decoded kernel event: what the builder needs of one LTTng kernel event, whatever the
/// layout it was read from. Thread ids are those of the event's host; `comm`s may be empty
/// (unknown).
#[derive(Clone, Copy, Debug)]
pub enum KEvent<'a> {
    /// `sched_switch`: `prev` leaves the CPU, `next` runs on it.
    Switch {
        /// Thread switched out.
        prev_tid: i64,
        /// Its `prev_state` (0: still runnable, preempted; else blocked or exiting).
        prev_state: i64,
        /// Its command name.
        prev_comm: &'a str,
        /// Thread switched in.
        next_tid: i64,
        /// Its command name.
        next_comm: &'a str,
    },
    /// `sched_waking`, `sched_wakeup` or `sched_ttwu` (whichever the trace uses).
    Wakeup {
        /// Thread woken.
        tid: i64,
        /// Its command name.
        comm: &'a str,
    },
    /// `sched_wakeup_new`: the first wake-up of a new thread.
    WakeupNew {
        /// Thread woken.
        tid: i64,
        /// Its command name.
        comm: &'a str,
    },
    /// `sched_process_fork`.
    Fork {
        /// Thread that forked.
        parent_tid: i64,
        /// The new thread.
        child_tid: i64,
        /// The new thread's command name.
        child_comm: &'a str,
    },
    /// `sched_process_exit`.
    Exit {
        /// Thread exiting.
        tid: i64,
    },
    /// `sched_process_exec`.
    Exec {
        /// Thread that executed a program.
        tid: i64,
        /// Its new command name (the program's file name, as the kernel sets it).
        comm: &'a str,
    },
    /// Entry into an interrupt context.
    Enter(Ctx),
    /// Exit from an interrupt context.
    Leave(Ctx),
    /// `softirq_raise`: a hard IRQ that raises a softirq goes on into it (one episode).
    SoftirqRaise {
        /// Softirq vector.
        vec: Option<u64>,
    },
    /// A network packet sent ([`Builder::event`] returns its vertex for matching).
    NetSend,
    /// A network packet received ([`Builder::event`] returns its vertex for matching).
    NetRecv,
    /// `block_rq_issue`: a block request sent to its device.
    BlockIssue {
        /// Device number.
        dev: u64,
        /// First sector of the request.
        sector: u64,
    },
    /// `block_rq_complete`: the request with the same device and sector completed.
    BlockComplete {
        /// Device number.
        dev: u64,
        /// First sector of the request.
        sector: u64,
    },
    /// `lttng_statedump_process_state`: a thread that existed when tracing started.
    Statedump {
        /// Thread id.
        tid: i64,
        /// Its command name.
        comm: &'a str,
        /// Its status (lttng-modules' `status` numbering).
        status: i64,
    },
}

#[derive(Clone, Copy, Debug)]
struct Thread {
    w: WorkerId,
    status: Status,
}

#[derive(Clone, Debug, Default)]
struct Cpu {
    current: i64,
    stack: Vec<Ctx>,
    kw: Option<WorkerId>,
    episode_start: Option<VId>,
    /// An incoming edge is expected at the episode start (packet received, not matched yet).
    start_taken: bool,
    /// The hard IRQ raised a softirq: the episode goes on after its exit (time of the exit).
    open_after_exit: Option<i64>,
    raised: bool,
}

/// Counters of what the builder saw (in `critpath --json`'s `graph.stats`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BuildStats {
    /// Events handled.
    pub events: u64,
    /// `sched_switch` events.
    pub switches: u64,
    /// Wake-up events.
    pub wakeups: u64,
    /// Wake-ups of threads that were not waiting (running, or already runnable).
    pub wakeups_ignored: u64,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets received.
    pub packets_received: u64,
    /// Matched packets joined by a vertical edge.
    pub packet_links: u64,
    /// Matched packets whose edge the graph refused (backward in time, or a vertex already
    /// linked).
    pub packet_links_refused: u64,
    /// Block requests joined from issue to completion.
    pub block_links: u64,
    /// Vertices that would have been earlier than their worker's last one (placed at its
    /// time instead).
    pub time_regressions: u64,
}

/// Builds the execution graph of one or several hosts.
pub struct Builder {
    g: Graph,
    threads: FastMap<(u32, i64), Thread>,
    cpus: Vec<Vec<Cpu>>,
    blocks: FastMap<(u32, u64, u64), VId>,
    stats: BuildStats,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// Who is executing on a CPU, for the event being handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Kernel,
    Task(WorkerId),
}

impl Builder {
    /// A builder without hosts.
    pub fn new() -> Self {
        Builder {
            g: Graph::new(),
            threads: FastMap::default(),
            cpus: Vec::new(),
            blocks: FastMap::default(),
            stats: BuildStats::default(),
        }
    }

    /// Adds a host; events then name it by the returned index.
    pub fn add_host(&mut self, name: &str) -> u32 {
        self.cpus.push(Vec::new());
        self.g.add_host(name)
    }

    fn cpu(&mut self, host: u32, cpu: u32) -> &mut Cpu {
        let v = &mut self.cpus[host as usize];
        if v.len() <= cpu as usize {
            v.resize(
                cpu as usize + 1,
                Cpu {
                    current: -1,
                    ..Default::default()
                },
            );
        }
        &mut v[cpu as usize]
    }

    fn thread(&mut self, host: u32, tid: i64, comm: &str, initial: Status) -> Thread {
        if let Some(t) = self.threads.get(&(host, tid)) {
            if !comm.is_empty() && self.g.worker(t.w).comm != comm {
                self.g.worker_mut(t.w).comm = comm.to_string();
            }
            return *t;
        }
        let w = self.g.add_worker(Worker {
            host,
            tid,
            cpu: None,
            comm: comm.to_string(),
        });
        let t = Thread { w, status: initial };
        self.threads.insert((host, tid), t);
        t
    }

    fn set_status(&mut self, host: u32, tid: i64, s: Status) {
        if let Some(t) = self.threads.get_mut(&(host, tid)) {
            t.status = s;
        }
    }

    fn kernel_worker(&mut self, host: u32, cpu: u32) -> WorkerId {
        if let Some(w) = self.cpu(host, cpu).kw {
            return w;
        }
        let w = self.g.add_worker(Worker {
            host,
            tid: -1,
            cpu: Some(cpu),
            comm: format!("kernel/{cpu}"),
        });
        self.cpu(host, cpu).kw = Some(w);
        w
    }

    /// Appends a vertex to `w` at `ts` (never before its last one) with an edge of type `ty`.
    fn append(&mut self, w: WorkerId, ts: i64, ty: EdgeType, qual: u32) -> VId {
        let ts = match self.g.tail(w) {
            Some(t) if self.g.ts(t) > ts => {
                self.stats.time_regressions += 1;
                self.g.ts(t)
            }
            _ => ts,
        };
        self.g.append_q(w, ts, ty, qual)
    }

    fn add_vertex(&mut self, w: WorkerId, ts: i64) -> VId {
        let ts = match self.g.tail(w) {
            Some(t) if self.g.ts(t) > ts => self.g.ts(t),
            _ => ts,
        };
        self.g.add_vertex(w, ts)
    }

    /// A vertex of the kernel worker inside the current episode.
    fn kernel_vertex(&mut self, host: u32, cpu: u32, ts: i64) -> VId {
        let kw = self.kernel_worker(host, cpu);
        if self.cpu(host, cpu).episode_start.is_some() {
            self.append(kw, ts, EdgeType::Interrupted, u32::MAX)
        } else {
            self.add_vertex(kw, ts)
        }
    }

    /// The vertex of a thread at `ts`, extending its current status.
    fn extend(&mut self, w: WorkerId, status: Status, ts: i64) -> VId {
        self.append(w, ts, status.edge(), u32::MAX)
    }

    /// The innermost context that is not packet reception, and whether packet reception is
    /// on top.
    fn context(&mut self, host: u32, cpu: u32) -> (Option<Ctx>, bool) {
        let c = self.cpu(host, cpu);
        let mut it = c.stack.iter().rev();
        match it.next() {
            None => (None, false),
            Some(Ctx::PacketReception) => (it.find(|x| **x != Ctx::PacketReception).copied(), true),
            Some(x) => (Some(*x), false),
        }
    }

    fn source(&mut self, host: u32, cpu: u32) -> Source {
        if self.context(host, cpu).0.is_some() {
            return Source::Kernel;
        }
        let cur = self.cpu(host, cpu).current;
        if cur > 0 {
            if let Some(t) = self.threads.get(&(host, cur)) {
                return Source::Task(t.w);
            }
            let t = self.thread(host, cur, "", Status::Run);
            return Source::Task(t.w);
        }
        Source::Kernel
    }

    fn source_vertex(&mut self, host: u32, cpu: u32, ts: i64) -> (Source, VId) {
        match self.source(host, cpu) {
            Source::Kernel => (Source::Kernel, self.kernel_vertex(host, cpu, ts)),
            Source::Task(w) => {
                let tid = self.g.worker(w).tid;
                let st = self
                    .threads
                    .get(&(host, tid))
                    .map_or(Status::Run, |t| t.status);
                (Source::Task(w), self.extend(w, st, ts))
            }
        }
    }

    /// Where something that arrives from outside (a packet, an I/O completion) lands: the
    /// first vertex of the current interrupt episode when it is free, else a new vertex.
    fn arrival_vertex(&mut self, host: u32, cpu: u32, ts: i64) -> VId {
        if self.source(host, cpu) == Source::Kernel {
            let c = self.cpu(host, cpu);
            if let (Some(v), false) = (c.episode_start, c.start_taken) {
                c.start_taken = true;
                return v;
            }
        }
        self.source_vertex(host, cpu, ts).1
    }

    /// Closes an interrupt episode kept open after a hard IRQ exit.
    fn close_open_episode(&mut self, host: u32, cpu: u32) {
        if let Some(t) = self.cpu(host, cpu).open_after_exit.take() {
            let kw = self.kernel_worker(host, cpu);
            self.append(kw, t, EdgeType::Interrupted, u32::MAX);
            let c = self.cpu(host, cpu);
            c.episode_start = None;
            c.start_taken = false;
        }
    }

    /// Handles one event of `host` on `cpu` at `ts` (ns on the common time line). Returns the
    /// vertex of a network send or receive, for packet matching.
    pub fn event(&mut self, host: u32, cpu: u32, ts: i64, ev: &KEvent<'_>) -> Option<VId> {
        self.stats.events += 1;
        match *ev {
            KEvent::Switch {
                prev_tid,
                prev_state,
                prev_comm,
                next_tid,
                next_comm,
            } => {
                self.stats.switches += 1;
                if !self.in_interrupt(host, cpu) {
                    self.close_open_episode(host, cpu);
                }
                if prev_tid > 0 {
                    let t = self.thread(host, prev_tid, prev_comm, Status::Unknown);
                    self.append(t.w, ts, t.status.edge(), u32::MAX);
                    // An exit seen before, or EXIT_ZOMBIE / EXIT_DEAD (0x10, 0x20 in every
                    // kernel version): the thread is gone.
                    let gone = t.status == Status::Exit || prev_state & 0x30 != 0;
                    let new = if gone {
                        Status::Dead
                    } else if prev_state & 3 == 0 {
                        Status::WaitCpu
                    } else {
                        Status::WaitBlocked
                    };
                    self.set_status(host, prev_tid, new);
                }
                if next_tid > 0 {
                    let t = self.thread(host, next_tid, next_comm, Status::Unknown);
                    self.append(t.w, ts, t.status.edge(), u32::MAX);
                    self.set_status(host, next_tid, Status::Run);
                }
                self.cpu(host, cpu).current = next_tid;
            }
            KEvent::Wakeup { tid, comm } => self.wakeup(host, cpu, ts, tid, comm),
            KEvent::WakeupNew { tid, comm } => self.wakeup(host, cpu, ts, tid, comm),
            KEvent::Fork {
                parent_tid,
                child_tid,
                child_comm,
            } => {
                if parent_tid > 0 {
                    self.thread(host, parent_tid, "", Status::Run);
                }
                let t = self.thread(host, child_tid, child_comm, Status::WaitFork);
                let _ = t;
                self.set_status(host, child_tid, Status::WaitFork);
            }
            KEvent::Exit { tid } => {
                if tid > 0 {
                    self.thread(host, tid, "", Status::Run);
                    self.set_status(host, tid, Status::Exit);
                }
            }
            KEvent::Exec { tid, comm } => {
                if tid > 0 {
                    self.thread(host, tid, comm, Status::Run);
                }
            }
            KEvent::Enter(ctx) => self.enter(host, cpu, ts, ctx),
            KEvent::Leave(ctx) => self.leave(host, cpu, ts, ctx),
            KEvent::SoftirqRaise { .. } => {
                let c = self.cpu(host, cpu);
                if c.stack
                    .iter()
                    .any(|x| matches!(x, Ctx::Irq(_) | Ctx::CompleteIrq))
                {
                    c.raised = true;
                }
            }
            KEvent::NetSend => {
                self.stats.packets_sent += 1;
                return Some(self.source_vertex(host, cpu, ts).1);
            }
            KEvent::NetRecv => {
                self.stats.packets_received += 1;
                return Some(self.arrival_vertex(host, cpu, ts));
            }
            KEvent::BlockIssue { dev, sector } => {
                let v = self.source_vertex(host, cpu, ts).1;
                self.blocks.insert((host, dev, sector), v);
            }
            KEvent::BlockComplete { dev, sector } => {
                if let Some(from) = self.blocks.remove(&(host, dev, sector)) {
                    let to = self.arrival_vertex(host, cpu, ts);
                    if self.g.link(from, to, EdgeType::BlockDevice, u32::MAX) {
                        self.stats.block_links += 1;
                    }
                }
            }
            KEvent::Statedump { tid, comm, status } => {
                if tid > 0 {
                    if self.threads.contains_key(&(host, tid)) {
                        self.thread(host, tid, comm, Status::Unknown);
                    } else {
                        self.thread(host, tid, comm, Status::from_statedump(status));
                    }
                }
            }
        }
        None
    }

    fn in_interrupt(&mut self, host: u32, cpu: u32) -> bool {
        self.cpu(host, cpu)
            .stack
            .iter()
            .any(|c| *c != Ctx::PacketReception)
    }

    fn enter(&mut self, host: u32, cpu: u32, ts: i64, ctx: Ctx) {
        let was = self.in_interrupt(host, cpu);
        if !was && ctx != Ctx::PacketReception {
            if self.cpu(host, cpu).open_after_exit.take().is_none() {
                let kw = self.kernel_worker(host, cpu);
                let v = self.add_vertex(kw, ts);
                let c = self.cpu(host, cpu);
                c.episode_start = Some(v);
                c.start_taken = false;
            }
            if matches!(ctx, Ctx::Irq(_) | Ctx::CompleteIrq) {
                self.cpu(host, cpu).raised = false;
            }
        }
        self.cpu(host, cpu).stack.push(ctx);
    }

    fn leave(&mut self, host: u32, cpu: u32, ts: i64, ctx: Ctx) {
        let c = self.cpu(host, cpu);
        match c.stack.last() {
            Some(top) if top.same_kind(ctx) => {
                c.stack.pop();
            }
            _ => return,
        }
        if ctx == Ctx::PacketReception || self.in_interrupt(host, cpu) {
            return;
        }
        let c = self.cpu(host, cpu);
        if c.raised && matches!(ctx, Ctx::Irq(_) | Ctx::CompleteIrq) {
            c.raised = false;
            c.open_after_exit = Some(ts);
            return;
        }
        let kw = self.kernel_worker(host, cpu);
        if self.cpu(host, cpu).episode_start.is_some() {
            self.append(kw, ts, EdgeType::Interrupted, u32::MAX);
        }
        let c = self.cpu(host, cpu);
        c.episode_start = None;
        c.start_taken = false;
    }

    fn wakeup(&mut self, host: u32, cpu: u32, ts: i64, tid: i64, comm: &str) {
        self.stats.wakeups += 1;
        if tid <= 0 {
            return;
        }
        let (ctx, packet_rx) = self.context(host, cpu);
        if ctx.is_none() && !packet_rx && self.cpu(host, cpu).current == tid {
            self.stats.wakeups_ignored += 1;
            return;
        }
        let t = self.thread(host, tid, comm, Status::WaitBlocked);
        let old = t.status;
        if matches!(old, Status::WaitCpu | Status::Run) {
            self.stats.wakeups_ignored += 1;
            return;
        }
        self.set_status(host, tid, Status::WaitCpu);
        match old {
            Status::WaitFork => {
                let (_, n0) = self.source_vertex(host, cpu, ts);
                let n1 = self.append(t.w, ts, old.edge(), u32::MAX);
                self.g.link(n0, n1, EdgeType::Default, u32::MAX);
            }
            Status::WaitBlocked => {
                let mut qual = u32::MAX;
                let (ty, link) = match (ctx, packet_rx) {
                    (None, false) => (EdgeType::Blocked, true),
                    (None, true) => {
                        // Packet reception in a task (threaded IRQ handler).
                        let cur = self.cpu(host, cpu).current;
                        if let Some(th) = self.threads.get(&(host, cur)) {
                            let name = self.g.worker(th.w).comm.clone();
                            qual = self.g.qual_id(&name);
                        }
                        (EdgeType::Network, true)
                    }
                    (Some(_), true) => (EdgeType::Network, true),
                    (Some(Ctx::Hrtimer), _) => (EdgeType::Timer, false),
                    (Some(Ctx::Ipi), _) => (EdgeType::Ipi, false),
                    (Some(Ctx::Irq(_)), _) | (Some(Ctx::CompleteIrq), _) => {
                        (EdgeType::Blocked, true)
                    }
                    (Some(Ctx::Softirq(v)), _) => match v {
                        Some(1) | Some(8) => (EdgeType::Timer, false),
                        Some(4) | Some(5) => (EdgeType::BlockDevice, false),
                        Some(2) | Some(3) => (EdgeType::Network, true),
                        Some(7) => (EdgeType::Interrupted, false),
                        Some(_) => (EdgeType::Blocked, true),
                        None => (EdgeType::Unknown, false),
                    },
                    (Some(Ctx::PacketReception), _) => (EdgeType::Network, true),
                };
                if link {
                    let (_, src) = self.source_vertex(host, cpu, ts);
                    let tv = self.append(t.w, ts, ty, qual);
                    self.g.link(src, tv, EdgeType::Default, u32::MAX);
                } else {
                    self.append(t.w, ts, ty, qual);
                }
            }
            _ => {
                self.append(t.w, ts, old.edge(), u32::MAX);
            }
        }
    }

    /// Joins a matched packet: `send` and `recv` are the vertices returned for its send and
    /// receive events.
    pub fn link_packet(&mut self, send: VId, recv: VId) -> bool {
        let ok = self.g.link(send, recv, EdgeType::Network, u32::MAX);
        if ok {
            self.stats.packet_links += 1;
        } else {
            self.stats.packet_links_refused += 1;
        }
        ok
    }

    /// Ends every thread's history at `end` (its last status goes on until then) and
    /// returns the graph.
    pub fn finish(mut self, end: i64) -> (Graph, BuildStats) {
        let threads: Vec<Thread> = self.threads.values().copied().collect();
        for t in threads {
            if matches!(t.status, Status::Dead | Status::Exit | Status::Zombie) {
                continue;
            }
            if let Some(tail) = self.g.tail(t.w) {
                if self.g.ts(tail) < end {
                    self.g.append(t.w, end, t.status.edge());
                }
            }
        }
        self.g.shrink_to_fit();
        (self.g, self.stats)
    }
}
