//! The execution graph: workers (threads and per-CPU kernel workers), each with a time-ordered
//! chain of vertices. Consecutive vertices of a worker are joined by a *horizontal* edge that
//! carries the worker's state over the interval (or by nothing: a gap). *Vertical* edges join
//! vertices of different workers (wake-ups, forks, network packets…).
//!
//! Storage is compact and columnar: a vertex is 21 bytes (timestamp, worker, previous and
//! next vertex of its worker, type of the edge to the next one); vertical edges and
//! qualifiers are few and kept in side tables.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for the small integer keys of the graph's tables (multiply-rotate).
#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A hash map with [`IntHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Vertex index.
pub type VId = u32;
/// Worker index.
pub type WorkerId = u32;

const NIL: u32 = u32::MAX;

/// What an edge means. Horizontal edges carry the state of their worker; vertical edges say
/// why the target depends on the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EdgeType {
    /// No edge (a gap between two vertices of a worker).
    None = 0,
    /// Zero-duration link.
    Eps,
    /// State unknown (before a thread's first known status, an unexplained wait).
    Unknown,
    /// A plain dependency (wake-up by a task, fork).
    Default,
    /// Running on a CPU.
    Running,
    /// Blocked, until a wake-up that explains the wait.
    Blocked,
    /// Interrupt work: a kernel worker's episode, or a wait ended by the `SCHED` softirq.
    Interrupted,
    /// Runnable, waiting for a CPU.
    Preempted,
    /// A wait ended by a timer.
    Timer,
    /// A wait ended by a packet; on a vertical edge, the packet in flight.
    Network,
    /// Waiting for user input (Trace Compass's type; the builder does not make it).
    UserInput,
    /// A wait ended by block I/O; on a vertical edge, the request in flight.
    BlockDevice,
    /// A wait ended by an inter-processor interrupt.
    Ipi,
}

impl EdgeType {
    fn from_u8(v: u8) -> EdgeType {
        use EdgeType::*;
        match v {
            1 => Eps,
            2 => Unknown,
            3 => Default,
            4 => Running,
            5 => Blocked,
            6 => Interrupted,
            7 => Preempted,
            8 => Timer,
            9 => Network,
            10 => UserInput,
            11 => BlockDevice,
            12 => Ipi,
            _ => None,
        }
    }

    /// An interval of this type is a wait that the critical path explains by following the
    /// wake-up back to its source.
    pub(crate) fn is_blocking(self) -> bool {
        matches!(self, EdgeType::Blocked | EdgeType::Network)
    }

    /// The state name used in reports.
    pub(crate) fn state_name(self) -> &'static str {
        match self {
            EdgeType::Running => "running",
            EdgeType::Preempted => "preempted",
            EdgeType::Blocked | EdgeType::UserInput => "blocked",
            EdgeType::Timer => "timer",
            EdgeType::Network => "network",
            EdgeType::BlockDevice => "block_device",
            EdgeType::Interrupted => "interrupted",
            EdgeType::Ipi => "ipi",
            EdgeType::None | EdgeType::Eps | EdgeType::Unknown | EdgeType::Default => "unknown",
        }
    }
}

/// A worker: a thread of a host, or the interrupt context of one CPU of a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    /// Index of its host in the graph.
    pub host: u32,
    /// Thread id; −1 for a kernel (interrupt-context) worker.
    pub tid: i64,
    /// The CPU of a kernel worker.
    pub cpu: Option<u32>,
    /// Command name of a thread (its last known one).
    pub comm: String,
}

impl Worker {
    /// A kernel (interrupt-context) worker.
    pub(crate) fn is_kernel(&self) -> bool {
        self.cpu.is_some()
    }

    /// `comm/tid`, or `kernel/CPU`.
    pub(crate) fn label(&self) -> String {
        match self.cpu {
            Some(c) => format!("kernel/{c}"),
            None => format!("{}/{}", self.comm, self.tid),
        }
    }
}

/// A vertical edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VEdge {
    /// Source vertex (the cause).
    pub from: VId,
    /// Target vertex (the effect), never earlier than `from`.
    pub to: VId,
    /// Why `to` depends on `from`.
    pub ty: EdgeType,
    /// Qualifier string index ([`Graph::qual_id`]), or `u32::MAX`.
    pub qual: u32,
}

/// An edge seen from the algorithm: horizontal or vertical.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) from: VId,
    pub(crate) to: VId,
    pub(crate) ty: EdgeType,
    pub(crate) qual: u32,
}

/// The execution graph.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Host names, by host index.
    pub(crate) hosts: Vec<String>,
    /// Workers, by [`WorkerId`].
    pub(crate) workers: Vec<Worker>,
    head: Vec<VId>,
    tail: Vec<VId>,
    ts: Vec<i64>,
    worker: Vec<WorkerId>,
    prev: Vec<VId>,
    next: Vec<VId>,
    out_ty: Vec<u8>,
    vedges: Vec<VEdge>,
    vin: FastMap<VId, u32>,
    vout: FastMap<VId, u32>,
    /// Qualifier of the horizontal edge leaving a vertex.
    hqual: FastMap<VId, u32>,
    quals: Vec<String>,
    qual_ids: HashMap<String, u32>,
    /// Vertical edges refused because they went back in time.
    pub(crate) backward_links: u64,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty graph with the same hosts and workers (the shape of a critical path).
    pub(crate) fn with_workers_of(g: &Graph) -> Self {
        Graph {
            hosts: g.hosts.clone(),
            workers: g.workers.clone(),
            head: vec![NIL; g.workers.len()],
            tail: vec![NIL; g.workers.len()],
            quals: g.quals.clone(),
            qual_ids: g.qual_ids.clone(),
            ..Default::default()
        }
    }

    /// Adds a host; workers name it by the returned index.
    pub fn add_host(&mut self, name: &str) -> u32 {
        self.hosts.push(name.to_string());
        self.hosts.len() as u32 - 1
    }

    /// Adds a worker, without vertices.
    pub fn add_worker(&mut self, w: Worker) -> WorkerId {
        self.workers.push(w);
        self.head.push(NIL);
        self.tail.push(NIL);
        self.workers.len() as WorkerId - 1
    }

    /// The worker `w`.
    pub fn worker(&self, w: WorkerId) -> &Worker {
        &self.workers[w as usize]
    }

    pub(crate) fn worker_mut(&mut self, w: WorkerId) -> &mut Worker {
        &mut self.workers[w as usize]
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    /// True when the graph has no vertex.
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// Approximate heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.ts.capacity() * 8
            + (self.worker.capacity() + self.prev.capacity() + self.next.capacity()) * 4
            + self.out_ty.capacity()
            + self.vedges.capacity() * std::mem::size_of::<VEdge>()
            + (self.vin.capacity() + self.vout.capacity() + self.hqual.capacity()) * 12
            + (self.head.capacity() + self.tail.capacity()) * 4
            + self.workers.capacity() * std::mem::size_of::<Worker>()
    }

    /// Interns a qualifier string.
    pub fn qual_id(&mut self, q: &str) -> u32 {
        if let Some(&i) = self.qual_ids.get(q) {
            return i;
        }
        self.quals.push(q.to_string());
        let i = self.quals.len() as u32 - 1;
        self.qual_ids.insert(q.to_string(), i);
        i
    }

    /// The qualifier string of index `q`.
    pub(crate) fn qual_str(&self, q: u32) -> Option<&str> {
        self.quals.get(q as usize).map(|s| s.as_str())
    }

    /// The time of vertex `v` (ns on the common time line).
    pub fn ts(&self, v: VId) -> i64 {
        self.ts[v as usize]
    }

    /// The worker of vertex `v`.
    pub(crate) fn worker_of(&self, v: VId) -> WorkerId {
        self.worker[v as usize]
    }

    /// The first vertex of `w`.
    pub fn head(&self, w: WorkerId) -> Option<VId> {
        let h = self.head[w as usize];
        (h != NIL).then_some(h)
    }

    /// The last vertex of `w`.
    pub fn tail(&self, w: WorkerId) -> Option<VId> {
        let t = self.tail[w as usize];
        (t != NIL).then_some(t)
    }

    /// Adds a vertex at the end of `w`'s chain, with no horizontal edge to it.
    pub fn add_vertex(&mut self, w: WorkerId, ts: i64) -> VId {
        let v = self.ts.len() as VId;
        assert!(v != NIL, "too many vertices");
        let t = self.tail[w as usize];
        self.ts.push(ts);
        self.worker.push(w);
        self.prev.push(t);
        self.next.push(NIL);
        self.out_ty.push(0);
        if t == NIL {
            self.head[w as usize] = v;
        } else {
            self.next[t as usize] = v;
        }
        self.tail[w as usize] = v;
        v
    }

    /// Adds a vertex at the end of `w`'s chain, joined to the previous one by an edge of type
    /// `ty` (a first vertex gets no edge).
    pub fn append(&mut self, w: WorkerId, ts: i64, ty: EdgeType) -> VId {
        let t = self.tail[w as usize];
        let v = self.add_vertex(w, ts);
        if t != NIL {
            self.out_ty[t as usize] = ty as u8;
        }
        v
    }

    /// [`Self::append`] with a qualifier on the edge.
    pub fn append_q(&mut self, w: WorkerId, ts: i64, ty: EdgeType, qual: u32) -> VId {
        let t = self.tail[w as usize];
        let v = self.append(w, ts, ty);
        if t != NIL && qual != u32::MAX {
            self.hqual.insert(t, qual);
        }
        v
    }

    /// Adds a vertical edge. Refused (false) when `to` is earlier than `from`, or when a slot
    /// is taken.
    pub fn link(&mut self, from: VId, to: VId, ty: EdgeType, qual: u32) -> bool {
        if self.ts(to) < self.ts(from) {
            self.backward_links += 1;
            return false;
        }
        if self.vout.contains_key(&from) || self.vin.contains_key(&to) {
            return false;
        }
        let i = self.vedges.len() as u32;
        self.vedges.push(VEdge { from, to, ty, qual });
        self.vout.insert(from, i);
        self.vin.insert(to, i);
        true
    }

    /// True when `v` has no incoming vertical edge.
    pub(crate) fn vin_free(&self, v: VId) -> bool {
        !self.vin.contains_key(&v)
    }

    /// True when `v` has no outgoing vertical edge.
    pub(crate) fn vout_free(&self, v: VId) -> bool {
        !self.vout.contains_key(&v)
    }

    /// The next vertex of the same worker, whatever joins them.
    pub(crate) fn next_vertex(&self, v: VId) -> Option<VId> {
        let n = self.next[v as usize];
        (n != NIL).then_some(n)
    }

    /// The previous vertex of the same worker.
    pub(crate) fn prev_vertex(&self, v: VId) -> Option<VId> {
        let p = self.prev[v as usize];
        (p != NIL).then_some(p)
    }

    /// The horizontal edge leaving `v`.
    pub(crate) fn out_h(&self, v: VId) -> Option<Edge> {
        let n = self.next[v as usize];
        let ty = EdgeType::from_u8(self.out_ty[v as usize]);
        (n != NIL && ty != EdgeType::None).then(|| Edge {
            from: v,
            to: n,
            ty,
            qual: self.hqual.get(&v).copied().unwrap_or(u32::MAX),
        })
    }

    /// The horizontal edge reaching `v`.
    pub(crate) fn in_h(&self, v: VId) -> Option<Edge> {
        let p = self.prev[v as usize];
        if p == NIL {
            return None;
        }
        self.out_h(p)
    }

    /// The vertical edge reaching `v`.
    pub(crate) fn in_v(&self, v: VId) -> Option<Edge> {
        self.vin.get(&v).map(|&i| self.vedge(i))
    }

    fn vedge(&self, i: u32) -> Edge {
        let e = self.vedges[i as usize];
        Edge {
            from: e.from,
            to: e.to,
            ty: e.ty,
            qual: e.qual,
        }
    }

    /// Every vertical edge.
    pub fn vertical_edges(&self) -> &[VEdge] {
        &self.vedges
    }

    /// The vertices of a worker in order.
    pub fn vertices_of(&self, w: WorkerId) -> impl Iterator<Item = VId> + '_ {
        let mut cur = self.head[w as usize];
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let v = cur;
            cur = self.next[v as usize];
            Some(v)
        })
    }

    /// The last vertex of `w` at or before `ts` (or its first vertex when all are later).
    pub(crate) fn vertex_at(&self, w: WorkerId, ts: i64) -> Option<VId> {
        let mut best = self.head(w)?;
        for v in self.vertices_of(w) {
            if self.ts(v) <= ts {
                best = v;
            } else {
                break;
            }
        }
        Some(best)
    }

    /// Removes the tail vertex of `w` from its chain (it stays allocated but unreachable).
    /// Refused when it has vertical edges.
    pub(crate) fn pop_tail(&mut self, w: WorkerId) -> bool {
        let t = self.tail[w as usize];
        if t == NIL || self.vin.contains_key(&t) || self.vout.contains_key(&t) {
            return false;
        }
        let p = self.prev[t as usize];
        self.tail[w as usize] = p;
        if p == NIL {
            self.head[w as usize] = NIL;
        } else {
            self.next[p as usize] = NIL;
            self.out_ty[p as usize] = 0;
            self.hqual.remove(&p);
        }
        true
    }

    /// Moves the timestamp of the tail vertex of `w` (used to cut the end of a path).
    pub(crate) fn set_tail_ts(&mut self, w: WorkerId, ts: i64) {
        let t = self.tail[w as usize];
        if t != NIL {
            self.ts[t as usize] = ts;
        }
    }

    /// Releases the spare capacity of the vertex columns.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.ts.shrink_to_fit();
        self.worker.shrink_to_fit();
        self.prev.shrink_to_fit();
        self.next.shrink_to_fit();
        self.out_ty.shrink_to_fit();
        self.vedges.shrink_to_fit();
    }

    /// Finds a worker by host and tid (threads only).
    pub fn find_thread(&self, host: u32, tid: i64) -> Option<WorkerId> {
        self.workers
            .iter()
            .position(|w| w.host == host && w.tid == tid && w.cpu.is_none())
            .map(|i| i as WorkerId)
    }

    /// A readable dump: one line per worker with vertices (`[t]` when no horizontal edge
    /// reaches it) and edges (`-R-`, `-B-`… with `(q)` for a qualifier), then the vertical
    /// edges. Workers without vertices are left out. Used by tests to compare graphs.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for w in 0..self.workers.len() as WorkerId {
            if self.head(w).is_none() {
                continue;
            }
            out.push_str(&self.worker(w).label());
            out.push(':');
            let mut first = true;
            for v in self.vertices_of(w) {
                let inh = self.in_h(v);
                match inh {
                    Some(e) => {
                        out.push('-');
                        out.push_str(short(e.ty));
                        if e.qual != u32::MAX {
                            out.push_str(&format!("({})", self.qual_str(e.qual).unwrap_or("?")));
                        }
                        out.push('-');
                        out.push_str(&self.ts(v).to_string());
                    }
                    None => {
                        out.push_str(if first { " [" } else { ", [" });
                        out.push_str(&self.ts(v).to_string());
                        out.push(']');
                    }
                }
                first = false;
            }
            out.push('\n');
        }
        let mut vs: Vec<String> = self
            .vedges
            .iter()
            .map(|e| {
                let mut s = format!(
                    "{}@{} => {}@{}",
                    self.worker(self.worker_of(e.from)).label(),
                    self.ts(e.from),
                    self.worker(self.worker_of(e.to)).label(),
                    self.ts(e.to)
                );
                if e.ty != EdgeType::Default {
                    s.push(' ');
                    s.push_str(short(e.ty));
                }
                if e.qual != u32::MAX {
                    s.push_str(&format!("({})", self.qual_str(e.qual).unwrap_or("?")));
                }
                s
            })
            .collect();
        vs.sort();
        for s in vs {
            out.push_str(&s);
            out.push('\n');
        }
        out
    }
}

/// One-letter (or short) name of an edge type, for dumps.
pub(crate) fn short(t: EdgeType) -> &'static str {
    match t {
        EdgeType::None => "none",
        EdgeType::Eps => "E",
        EdgeType::Unknown => "U",
        EdgeType::Default => "D",
        EdgeType::Running => "R",
        EdgeType::Blocked => "B",
        EdgeType::Interrupted => "I",
        EdgeType::Preempted => "P",
        EdgeType::Timer => "T",
        EdgeType::Network => "N",
        EdgeType::UserInput => "UI",
        EdgeType::BlockDevice => "BD",
        EdgeType::Ipi => "IPI",
    }
}
