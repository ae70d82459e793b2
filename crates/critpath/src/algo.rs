//! The critical path: Giraldeau & Dagenais's bounded backward walk.
//!
//! Following one worker forward from a start vertex, every interval it spends in a state
//! that is not a wait (running, preempted, timer…) is on the path as it is. A wait (blocked,
//! network) is explained by the vertical edge that ended it: from its source, the walk goes
//! *back* through the source worker's own history until it reaches the start of the wait
//! (the bound), recursing into the source's own waits, and switching to an alternative
//! vertical edge when a worker's history runs out before the bound. The edges found are then
//! copied onto the path, in time order.
//!
//! Differences from Trace Compass's generic implementation (whose defects are not copied):
//! the walk follows every edge to the end (it does not stop after the first one), and the
//! search for an incoming edge looks at the vertex being examined.

use crate::graph::{Edge, EdgeType, Graph, VId, WorkerId};

/// Options of the walk.
#[derive(Clone, Copy, Debug)]
pub struct PathOptions {
    /// Stop after the edge that reaches or passes this time.
    pub end: i64,
    /// When a wait is explained by a message or I/O request the followed worker itself sent
    /// (a network packet or block request that left before it blocked), cut the path back to
    /// the moment it left: what the worker did after is parallel to the transfer.
    pub cut_at_departure: bool,
}

impl Default for PathOptions {
    fn default() -> Self {
        PathOptions {
            end: i64::MAX,
            cut_at_departure: false,
        }
    }
}

/// Computes the critical path of the worker of `start`, from `start` on. The result is a
/// graph with the same workers, holding only the path's vertices and edges.
pub fn critical_path(g: &Graph, start: VId, opts: &PathOptions) -> Graph {
    let mut p = Graph::with_workers_of(g);
    let a = g.worker_of(start);
    p.add_vertex(a, g.ts(start));
    let mut cur = start;
    while let Some(e) = g.out_h(cur) {
        if g.ts(cur) >= opts.end {
            break;
        }
        if e.ty.is_blocking() {
            let mut links = resolve(g, e, g.ts(e.from), 0, opts.cut_at_departure);
            links.reverse();
            append_path(g, &mut p, a, e, &links, opts);
        } else {
            p.append_q(a, g.ts(e.to), e.ty, e.qual);
        }
        cur = e.to;
    }
    p
}

/// The vertex at or just after `v` (same timestamp, same worker) that has an incoming
/// vertical edge.
fn find_incoming(g: &Graph, v: VId) -> Option<VId> {
    let t = g.ts(v);
    let mut cur = Some(v);
    while let Some(x) = cur {
        if g.ts(x) != t {
            return None;
        }
        if g.in_v(x).is_some() {
            return Some(x);
        }
        cur = g.next_vertex(x);
    }
    None
}

const MAX_DEPTH: u32 = 10_000;

/// The edges (latest first) that explain the wait `b`, no earlier than `bound`.
fn resolve(g: &Graph, b: Edge, bound: i64, depth: u32, cut: bool) -> Vec<Edge> {
    let mut s: Vec<Edge> = Vec::new();
    if depth > MAX_DEPTH {
        return s;
    }
    let Some(j) = find_incoming(g, b.to) else {
        return s;
    };
    let d = g.in_v(j).expect("incoming edge");
    s.push(d);
    let bnd = bound.max(g.ts(b.from));
    // Vertices passed on the way back that had an alternative (vertical) way in.
    let mut alternatives: Vec<VId> = Vec::new();
    let mut v = Some(d.from);
    while let Some(x) = v {
        if g.ts(x) <= bnd {
            break;
        }
        let iv = g.in_v(x);
        if let Some(iv) = iv {
            if g.ts(iv.from) <= bnd {
                s.push(iv);
                break;
            }
        }
        let ih = g.in_h(x);
        if iv.is_some() && ih.is_none_or(|h| !h.ty.is_blocking()) {
            alternatives.push(x);
        }
        if let Some(h) = ih {
            if h.ty.is_blocking() {
                let r = resolve(g, h, bnd, depth + 1, cut);
                let mut back_to = h.from;
                if r.is_empty() && h.ty == EdgeType::Network {
                    s.push(h);
                } else {
                    // The wait is explained by a packet or I/O request this same worker sent
                    // before it blocked: its path goes on from the departure.
                    if let Some(e) = r.last() {
                        if cut && departs_before(g, e, h.from) {
                            back_to = e.from;
                        }
                    }
                    s.extend(r);
                }
                v = Some(back_to);
                continue;
            } else {
                s.push(h);
            }
            v = Some(h.from);
        } else {
            v = None;
            if let Some(w) = alternatives.pop() {
                while s.last().is_some_and(|l| l.from != w) {
                    s.pop();
                }
                if let Some(e2) = g.in_v(w) {
                    s.push(e2);
                    v = Some(e2.from);
                }
            }
        }
    }
    s
}

/// True when `e` is a packet or block request that left `at`'s worker before `at`.
fn departs_before(g: &Graph, e: &Edge, at: VId) -> bool {
    matches!(e.ty, EdgeType::Network | EdgeType::BlockDevice)
        && g.worker_of(e.from) == g.worker_of(at)
        && g.worker_of(e.to) != g.worker_of(e.from)
        && g.ts(e.from) < g.ts(at)
}

/// Copies the explanation `links` (in time order) of the wait `b` of worker `a` onto the
/// path.
fn append_path(g: &Graph, p: &mut Graph, a: WorkerId, b: Edge, links: &[Edge], opts: &PathOptions) {
    let Some(first) = links.first() else {
        // Nothing explains the wait: it stays on the path as it is.
        p.append_q(a, g.ts(b.to), b.ty, b.qual);
        return;
    };
    let b1 = p.tail(a).expect("the path has a vertex of its worker");
    let src = g.worker_of(first.from);
    let mut anc;
    if src == a {
        anc = b1;
        let departure = g.ts(first.from);
        if opts.cut_at_departure
            && matches!(first.ty, EdgeType::Network | EdgeType::BlockDevice)
            && g.worker_of(first.to) != a
            && departure < p.ts(b1)
        {
            anc = cut_back(p, a, departure);
        }
    } else {
        anc = p.add_vertex(src, g.ts(b.from));
        p.link(b1, anc, EdgeType::Default, u32::MAX);
        if g.ts(first.from) > p.ts(anc) {
            // Nothing is known of the source before it started the chain: that time is
            // unknown, except that a network wait is still network time.
            let ty = if b.ty == EdgeType::Network {
                EdgeType::Network
            } else {
                EdgeType::Unknown
            };
            anc = p.append(src, g.ts(first.from), ty);
        }
    }
    let mut prev: Option<Edge> = None;
    for l in links {
        if let Some(pe) = prev {
            if pe.to != l.from {
                let t = g.ts(pe.to).max(g.ts(l.from));
                anc = copy(p, anc, g.worker_of(l.from), t, EdgeType::Default, u32::MAX);
            }
        }
        anc = copy(p, anc, g.worker_of(l.to), g.ts(l.to), l.ty, l.qual);
        prev = Some(*l);
    }
}

/// Cuts the path of worker `a` back to time `t` (never past a vertex with vertical edges).
fn cut_back(p: &mut Graph, a: WorkerId, t: i64) -> VId {
    loop {
        let tail = p.tail(a).expect("tail");
        let Some(prev) = p.prev_vertex(tail) else {
            break;
        };
        if p.ts(prev) >= t && p.pop_tail(a) {
            continue;
        }
        if p.ts(prev) <= t && p.vin_free(tail) && p.vout_free(tail) {
            p.set_tail_ts(a, t);
        }
        break;
    }
    p.tail(a).expect("tail")
}

fn copy(p: &mut Graph, anc: VId, w: WorkerId, ts: i64, ty: EdgeType, qual: u32) -> VId {
    if p.worker_of(anc) == w && p.ts(anc) == ts {
        return anc;
    }
    if p.worker_of(anc) == w {
        p.append_q(w, ts, ty, qual)
    } else {
        let x = p.add_vertex(w, ts);
        p.link(anc, x, ty, qual);
        x
    }
}
