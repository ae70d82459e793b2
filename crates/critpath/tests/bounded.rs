//! Trace Compass's bounded-algorithm graph scenarios (`GraphFactory` /
//! `TmfCriticalPathAlgoBoundedTest`), rebuilt by hand: the critical path of actor 0 from its
//! first vertex, compared with the expected path graph.

use critpath::graph::{EdgeType as T, Graph, VId, Worker, WorkerId};
use critpath::{critical_path, PathOptions};

const Q: &str = "testLinkQualifier";

struct B {
    g: Graph,
}

/// An edge spec: the type of the edge reaching a vertex (None: a gap), and whether it has the
/// qualifier.
#[derive(Clone, Copy)]
enum E {
    Gap,
    H(T),
    Hq(T),
}

impl B {
    fn new(n: usize) -> B {
        let mut g = Graph::new();
        let h = g.add_host("h");
        for i in 0..n {
            g.add_worker(Worker {
                host: h,
                tid: i as i64,
                cpu: None,
                comm: format!("A{i}"),
            });
        }
        B { g }
    }

    /// Worker `w`: vertices at the given times, each reached by the given edge.
    fn chain(&mut self, w: WorkerId, spec: &[(i64, E)]) {
        for &(t, e) in spec {
            match e {
                E::Gap => {
                    self.g.add_vertex(w, t);
                }
                E::H(ty) => {
                    self.g.append(w, t, ty);
                }
                E::Hq(ty) => {
                    let q = self.g.qual_id(Q);
                    self.g.append_q(w, t, ty, q);
                }
            }
        }
    }

    fn v(&self, w: WorkerId, t: i64) -> VId {
        self.g
            .vertices_of(w)
            .find(|&v| self.g.ts(v) == t)
            .unwrap_or_else(|| panic!("no vertex A{w}@{t}"))
    }

    fn link(&mut self, a: (WorkerId, i64), b: (WorkerId, i64), ty: T) {
        let (x, y) = (self.v(a.0, a.1), self.v(b.0, b.1));
        assert!(self.g.link(x, y, ty, u32::MAX));
    }

    fn path(&self) -> String {
        let start = self.g.head(0).unwrap();
        critical_path(&self.g, start, &PathOptions::default()).dump()
    }
}

use E::{Gap, Hq, H};
const R: T = T::Running;
const BL: T = T::Blocked;

fn check(b: &B, expected: &str) {
    let got = b.path();
    let exp: String = expected
        .lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, exp, "got:\n{got}\nexpected:\n{exp}");
}

#[test]
fn basic() {
    let mut b = B::new(1);
    b.chain(0, &[(0, Gap), (1, H(R))]);
    check(&b, "A0/0: [0]-R-1");
}

#[test]
fn wakeup_self() {
    let mut b = B::new(1);
    b.chain(0, &[(0, Gap), (1, H(R)), (2, Hq(R)), (3, H(BL)), (4, H(R))]);
    b.link((0, 1), (0, 3), T::Timer);
    check(&b, "A0/0: [0]-R-1-R(testLinkQualifier)-2-T-3-R-4");
}

#[test]
fn wakeup_missing() {
    let mut b = B::new(1);
    b.chain(0, &[(0, Gap), (2, H(R)), (4, Hq(BL)), (6, H(R))]);
    check(&b, "A0/0: [0]-R-2-B(testLinkQualifier)-4-R-6");
}

#[test]
fn wakeup_unknown() {
    let mut b = B::new(2);
    b.chain(0, &[(0, Gap), (2, H(R)), (4, H(BL)), (6, H(R))]);
    b.chain(1, &[(3, Gap)]);
    b.link((1, 3), (0, 4), T::Network);
    check(
        &b,
        "A0/0: [0]-R-2, [4]-R-6
         A1/1: [2]-U-3
         A0/0@2 => A1/1@2
         A1/1@3 => A0/0@4 N",
    );
}

#[test]
fn wakeup_new() {
    let mut b = B::new(2);
    b.chain(
        0,
        &[(0, Gap), (2, H(R)), (4, Hq(R)), (6, H(BL)), (8, Hq(R))],
    );
    b.chain(1, &[(3, Gap), (6, Hq(R))]);
    b.link((0, 2), (1, 3), T::Default);
    b.link((1, 6), (0, 6), T::Default);
    check(
        &b,
        "A0/0: [0]-R-2-R(testLinkQualifier)-4, [6]-R(testLinkQualifier)-8
         A1/1: [4]-R(testLinkQualifier)-6
         A0/0@4 => A1/1@4
         A1/1@6 => A0/0@6",
    );
}

#[test]
fn opened_delay() {
    let mut b = B::new(2);
    b.chain(0, &[(0, Gap), (3, H(R)), (6, H(BL)), (9, H(R))]);
    b.chain(1, &[(0, Gap), (2, H(R)), (5, H(R))]);
    b.link((1, 2), (0, 6), T::Default);
    check(
        &b,
        "A0/0: [0]-R-3, [6]-R-9
         A1/1: [3]
         A0/0@3 => A1/1@3
         A1/1@3 => A0/0@6",
    );
}

#[test]
fn opened() {
    let mut b = B::new(2);
    b.chain(0, &[(0, Gap), (3, H(R)), (6, H(BL)), (9, H(R))]);
    b.chain(1, &[(0, Gap), (6, H(R)), (9, H(R))]);
    b.link((1, 6), (0, 6), T::Default);
    check(
        &b,
        "A0/0: [0]-R-3, [6]-R-9
         A1/1: [3]-R-6
         A0/0@3 => A1/1@3
         A1/1@6 => A0/0@6",
    );
}

#[test]
fn wakeup_mutual() {
    let mut b = B::new(2);
    b.chain(
        0,
        &[
            (0, Gap),
            (1, H(R)),
            (2, H(R)),
            (3, H(R)),
            (4, H(BL)),
            (5, H(R)),
        ],
    );
    b.chain(
        1,
        &[
            (0, Gap),
            (1, H(R)),
            (2, H(BL)),
            (3, H(R)),
            (4, H(R)),
            (5, H(R)),
        ],
    );
    b.link((0, 2), (1, 2), T::Default);
    b.link((1, 4), (0, 4), T::Default);
    check(
        &b,
        "A0/0: [0]-R-1-R-2-R-3, [4]-R-5
         A1/1: [3]-R-4
         A0/0@3 => A1/1@3
         A1/1@4 => A0/0@4",
    );
}

fn embedded_like(interleave: bool) -> B {
    let mut b = B::new(3);
    b.chain(
        0,
        &[
            (0, Gap),
            (2, H(R)),
            (4, H(R)),
            (6, H(R)),
            (8, H(BL)),
            (10, H(BL)),
            (12, H(R)),
        ],
    );
    if interleave {
        b.chain(1, &[(2, Gap), (8, H(R))]);
        b.chain(2, &[(4, Gap), (10, H(R))]);
        b.link((0, 2), (1, 2), T::Default);
        b.link((0, 4), (2, 4), T::Default);
    } else {
        b.chain(1, &[(4, Gap), (8, H(R))]);
        b.chain(2, &[(2, Gap), (10, H(R))]);
        b.link((0, 2), (2, 2), T::Default);
        b.link((0, 4), (1, 4), T::Default);
    }
    b.link((1, 8), (0, 8), T::Default);
    b.link((2, 10), (0, 10), T::Default);
    b
}

const EMBEDDED_EXPECTED: &str = "A0/0: [0]-R-2-R-4-R-6, [8], [10]-R-12
     A1/1: [6]-R-8
     A2/2: [8]-R-10
     A0/0@6 => A1/1@6
     A0/0@8 => A2/2@8
     A1/1@8 => A0/0@8
     A2/2@10 => A0/0@10";

#[test]
fn wakeup_embedded() {
    check(&embedded_like(false), EMBEDDED_EXPECTED);
}

#[test]
fn wakeup_interleave() {
    check(&embedded_like(true), EMBEDDED_EXPECTED);
}

#[test]
fn nested() {
    let mut b = B::new(4);
    b.chain(0, &[(0, Gap), (1, H(R)), (6, H(BL)), (7, H(R))]);
    b.chain(1, &[(1, Gap), (2, H(R)), (5, H(BL)), (6, H(R))]);
    b.chain(2, &[(2, Gap), (3, H(R)), (4, H(BL)), (5, H(R))]);
    b.chain(3, &[(3, Gap), (4, H(R))]);
    b.link((0, 1), (1, 1), T::Default);
    b.link((1, 2), (2, 2), T::Default);
    b.link((2, 3), (3, 3), T::Default);
    b.link((3, 4), (2, 4), T::Default);
    b.link((2, 5), (1, 5), T::Default);
    b.link((1, 6), (0, 6), T::Default);
    check(
        &b,
        "A0/0: [0]-R-1, [6]-R-7
         A1/1: [1]-R-2, [5]-R-6
         A2/2: [2]-R-3, [4]-R-5
         A3/3: [3]-R-4
         A0/0@1 => A1/1@1
         A1/1@2 => A2/2@2
         A1/1@6 => A0/0@6
         A2/2@3 => A3/3@3
         A2/2@5 => A1/1@5
         A3/3@4 => A2/2@4",
    );
}

#[test]
fn net1() {
    let mut b = B::new(4);
    b.chain(0, &[(0, Gap), (1, H(R)), (11, H(BL)), (12, H(R))]);
    b.chain(1, &[(3, Gap), (4, H(R)), (5, H(R))]);
    b.chain(2, &[(6, Gap), (7, H(R)), (8, H(R))]);
    b.chain(3, &[(9, Gap), (10, H(R)), (11, H(R))]);
    b.link((1, 4), (2, 7), T::Network);
    b.link((2, 8), (3, 10), T::Network);
    b.link((3, 11), (0, 11), T::Default);
    check(
        &b,
        "A0/0: [0]-R-1, [11]-R-12
         A1/1: [1]-U-3-R-4
         A2/2: [7]-R-8
         A3/3: [10]-R-11
         A0/0@1 => A1/1@1
         A1/1@4 => A2/2@7 N
         A2/2@8 => A3/3@10 N
         A3/3@11 => A0/0@11",
    );
}
