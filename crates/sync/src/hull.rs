//! The fully incremental convex-hull synchronization of one pair of hosts (Duda et al.;
//! Jabbarifar, Poirier and Dagenais), with exact arithmetic.
//!
//! Points have x = the reference host's timestamp and y = the other host's. A packet from the
//! other host to the reference gives (recv, send) (a point above the clock line, `upper`); a
//! packet from the reference gives (send, recv) (below it, `lower`). The algorithm keeps, for
//! each side, the part of the convex hull facing the other side, and the two separating lines
//! of maximal slope (`lmax`, through lower then upper hull points) and minimal slope (`lmin`).
//! The published formula `y = α·x + β` is their bisector. Every cross product is computed in
//! i128 (with an exact fallback), every slope and intercept as an exact rational.

use crate::bigint::BigInt;
use crate::rational::Rational;
use std::cmp::Ordering;

/// A point: x on the reference host's clock, y on the other host's (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pt {
    pub(crate) x: i64,
    pub(crate) y: i64,
}

/// How good a pair's formula is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Quality {
    /// No packet matched.
    Absent,
    /// Packets in one direction only: no formula.
    Incomplete,
    /// Both directions, but one bounding line has a single point: a formula without bounds.
    Approximate,
    /// Both bounding lines exist and their slopes are ordered: formula with bounds.
    Accurate,
    /// The hulls intersect (the clocks are not related linearly over the whole trace); the
    /// last good formula is kept.
    Fail,
}

impl Quality {
    /// The lowercase name the reports print.
    pub fn as_str(self) -> &'static str {
        match self {
            Quality::Absent => "absent",
            Quality::Incomplete => "incomplete",
            Quality::Approximate => "approximate",
            Quality::Accurate => "accurate",
            Quality::Fail => "fail",
        }
    }
}

/// Which way a packet went, relative to the pair's reference host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PairDir {
    /// From the reference host to the other.
    RefToOther,
    /// From the other host to the reference.
    OtherToRef,
}

/// Sign of cross(p, a, b) = (a.x−p.x)(b.y−p.y) − (a.y−p.y)(b.x−p.x).
fn cross_sign(p: Pt, a: Pt, b: Pt) -> i32 {
    let d = |u: i64, v: i64| u as i128 - v as i128;
    let (ax, ay, bx, by) = (d(a.x, p.x), d(a.y, p.y), d(b.x, p.x), d(b.y, p.y));
    let r = match (ax.checked_mul(by), ay.checked_mul(bx)) {
        (Some(l), Some(r)) => l.checked_sub(r).map(|v| v.cmp(&0)),
        _ => None,
    };
    let ord = r.unwrap_or_else(|| {
        let l = BigInt::from(ax).mul(&BigInt::from(by));
        let r = BigInt::from(ay).mul(&BigInt::from(bx));
        l.cmp(&r)
    });
    match ord {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// A line through two points (the first may be missing).
type Line = [Option<Pt>; 2];

/// Slope of the line through p0 and p1, or 1 when p0 is missing or Δx = 0.
fn slope(p1: Pt, p0: Option<Pt>) -> Rational {
    match p0 {
        Some(p0) if p0.x != p1.x => {
            Rational::ratio(p1.y as i128 - p0.y as i128, p1.x as i128 - p0.x as i128)
        }
        _ => Rational::one(),
    }
}

fn intercept(p: Pt, a: &Rational) -> Rational {
    Rational::int(p.y as i128).sub(&a.mul(&Rational::int(p.x as i128)))
}

/// slope(l1) > slope(l2), exactly.
fn slope_gt(l1: &Line, l2: &Line) -> bool {
    let s = |l: &Line| -> (i128, i128) {
        match (l[0], l[1]) {
            (Some(p0), Some(p1)) if p0.x != p1.x => {
                (p1.y as i128 - p0.y as i128, p1.x as i128 - p0.x as i128)
            }
            _ => (1, 1),
        }
    };
    let ((n1, d1), (n2, d2)) = (s(l1), s(l2));
    // Denominators are positive (line[0].x ≤ line[1].x is maintained).
    match (n1.checked_mul(d2), n2.checked_mul(d1)) {
        (Some(a), Some(b)) => a > b,
        _ => Rational::ratio(n1, d1) > Rational::ratio(n2, d2),
    }
}

/// How the published formula is chosen among the lines separating the two hulls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FormulaKind {
    /// The bisector of the two bounding lines: the fully incremental method's formula, and
    /// Trace Compass's, so results compare (the default).
    #[default]
    Bisector,
    /// The centre of the feasible region: the centroid of the polygon of the (α, β) of every
    /// line separating the two hulls (the mean line under a uniform prior); more accurate than
    /// the bisector with few packets. The bisector when the region is degenerate.
    Centre,
}

/// The formula `y = α·x + β` of a pair (other host's time from the reference host's).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HullFormula {
    pub(crate) alpha: Rational,
    pub(crate) beta: Rational,
    /// Bounds (α_min, α_max, β_min, β_max) when both bounding lines are known: every line
    /// separating the two hulls has α_min ≤ α ≤ α_max and β_min ≤ β ≤ β_max (β is taken at
    /// x = 0, left of every point, where it decreases as the slope increases).
    pub(crate) bounds: Option<FormulaBounds>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FormulaBounds {
    pub(crate) alpha_min: Rational,
    pub(crate) alpha_max: Rational,
    pub(crate) beta_min: Rational,
    pub(crate) beta_max: Rational,
}

impl FormulaBounds {
    /// α_max − α_min.
    pub(crate) fn accuracy(&self) -> Rational {
        self.alpha_max.sub(&self.alpha_min)
    }
}

/// One pair's streaming convex-hull synchronization.
#[derive(Clone, Debug)]
pub(crate) struct ConvexHullSync {
    upper: Vec<Pt>,
    lower: Vec<Pt>,
    lmax: Line,
    lmin: Line,
    quality: Quality,
    /// Bounding lines (lmax, lmin) of the last formula that was not a failure.
    good: Option<(Line, Line)>,
    matches: u64,
    accurate: u64,
    /// Versions of `upper` and `lower`, bumped when they change.
    ver: [u64; 2],
    /// For `lmin` and `lmax`: the line after its last adjustment and the version of the list
    /// it was adjusted against. Adjusting is idempotent, so an unchanged line against an
    /// unchanged list is skipped (most packets change nothing).
    memo: [Option<(Line, u64)>; 2],
    use_memo: bool,
}

impl Default for ConvexHullSync {
    fn default() -> Self {
        Self::new()
    }
}

impl ConvexHullSync {
    pub(crate) fn new() -> Self {
        ConvexHullSync {
            upper: Vec::new(),
            lower: Vec::new(),
            lmax: [None, None],
            lmin: [None, None],
            quality: Quality::Absent,
            good: None,
            matches: 0,
            accurate: 0,
            ver: [0, 0],
            memo: [None, None],
            use_memo: true,
        }
    }

    #[cfg(test)]
    fn without_memo() -> Self {
        ConvexHullSync {
            use_memo: false,
            ..Self::new()
        }
    }

    pub(crate) fn quality(&self) -> Quality {
        self.quality
    }

    /// Packets processed.
    pub(crate) fn matches(&self) -> u64 {
        self.matches
    }

    /// Packets that moved a bounding line (the "accurate packets").
    pub(crate) fn accurate(&self) -> u64 {
        self.accurate
    }

    /// Points kept in the upper (other→ref) and lower (ref→other) hulls.
    pub(crate) fn hull_sizes(&self) -> (usize, usize) {
        (self.upper.len(), self.lower.len())
    }

    /// Adds one packet: `send` on the sender's clock, `recv` on the receiver's.
    pub(crate) fn add(&mut self, dir: PairDir, send: i64, recv: i64) {
        self.matches += 1;
        let (p, inv) = match dir {
            PairDir::OtherToRef => (Pt { x: recv, y: send }, 1),
            PairDir::RefToOther => (Pt { x: send, y: recv }, -1),
        };
        // Index 0: upper list / lmin line; 1: lower list / lmax line.
        let (me, other) = match dir {
            PairDir::OtherToRef => (0, 1),
            PairDir::RefToOther => (1, 0),
        };
        let (list, other_list, line, other_line) = match dir {
            PairDir::OtherToRef => (
                &mut self.upper,
                &mut self.lower,
                &mut self.lmin,
                &mut self.lmax,
            ),
            PairDir::RefToOther => (
                &mut self.lower,
                &mut self.upper,
                &mut self.lmax,
                &mut self.lmin,
            ),
        };
        let mut qualify = false;
        let improves = match (line[0], line[1]) {
            (Some(a), Some(b)) => cross_sign(p, a, b) * inv > 0,
            _ => true,
        };
        if improves {
            self.accurate += 1;
            qualify = true;
            while list.len() >= 2
                && cross_sign(p, list[list.len() - 2], list[list.len() - 1]) * inv > 0
            {
                list.pop();
            }
            list.push(p);
            line[1] = Some(p);
            self.ver[me] += 1;
        }
        let memo = &mut self.memo;
        let use_memo = self.use_memo;
        let ver = self.ver;
        // `line` (index me) is adjusted against the other list (version ver[other]).
        if !(use_memo && memo[me] == Some((*line, ver[other]))) {
            adjust_bound(line, other_list, inv);
            memo[me] = Some((*line, ver[other]));
        }
        if other_line[1].is_some()
            && !(use_memo && memo[other] == Some((*other_line, ver[me])))
            && other_line[0].is_none_or(|q| !list.contains(&q))
        {
            adjust_bound(other_line, list, -inv);
            memo[other] = Some((*other_line, ver[me]));
        }
        if qualify {
            self.approximate();
        }
    }

    fn approximate(&mut self) {
        let (lmax, lmin) = (self.lmax, self.lmin);
        if lmax[0].is_some() || lmin[0].is_some() {
            if self.quality != Quality::Fail {
                let q = if lmax[0].is_none() || lmin[0].is_none() {
                    Quality::Approximate
                } else if slope_gt(&lmax, &lmin) {
                    Quality::Accurate
                } else {
                    Quality::Fail
                };
                if q != Quality::Fail {
                    self.good = Some((lmax, lmin));
                }
                self.quality = q;
            }
        } else if lmin[1].is_none() || lmax[1].is_none() {
            self.quality = Quality::Incomplete;
        }
    }

    /// The formula (the last good one after a failure), or None before there is one.
    pub(crate) fn formula(&self) -> Option<HullFormula> {
        let (lmax, lmin) = self.good?;
        let (p_max, p_min) = (lmax[1]?, lmin[1]?);
        let amax = slope(p_max, lmax[0]);
        let amin = slope(p_min, lmin[0]);
        let bmin = intercept(p_max, &amax);
        let bmax = intercept(p_min, &amin);
        let alpha = amax.add(&amin).half();
        // Only damaged times give a clock that stands still or runs backwards against the
        // other: no formula then, and no bounds that reach such a slope.
        if alpha <= Rational::zero() {
            return None;
        }
        let beta = bmin.add(&bmax).half();
        let bounds = (lmax[0].is_some() && lmin[0].is_some() && amin > Rational::zero()).then_some(
            FormulaBounds {
                alpha_min: amin,
                alpha_max: amax,
                beta_min: bmin,
                beta_max: bmax,
            },
        );
        Some(HullFormula {
            alpha,
            beta,
            bounds,
        })
    }

    /// The formula of `kind` (see [`FormulaKind`]); bounds as [`Self::formula`].
    pub(crate) fn formula_of(&self, kind: FormulaKind) -> Option<HullFormula> {
        let f = self.formula()?;
        if kind == FormulaKind::Bisector || self.quality != Quality::Accurate {
            return Some(f);
        }
        let Some(b) = &f.bounds else { return Some(f) };
        // `lower` holds the packets ref → other (above the clock line), `upper` the others.
        match centroid(&self.lower, &self.upper, &b.alpha_min, &b.alpha_max) {
            Some((alpha, beta)) => Some(HullFormula {
                alpha,
                beta,
                bounds: f.bounds,
            }),
            None => Some(f),
        }
    }

    /// (α, β), or (1, 0) when there is no formula yet.
    #[cfg(test)]
    fn alpha_beta(&self) -> (Rational, Rational) {
        match self.formula() {
            Some(f) => (f.alpha, f.beta),
            None => (Rational::one(), Rational::zero()),
        }
    }
}

/// A half-plane `p·α + q·β ≤ r` of the (α, β) plane.
#[derive(Clone, Debug)]
struct Half {
    p: Rational,
    q: Rational,
    r: Rational,
}

impl Half {
    fn meet(&self, o: &Half) -> Option<(Rational, Rational)> {
        let det = self.p.mul(&o.q).sub(&self.q.mul(&o.p));
        if det.is_zero() {
            return None;
        }
        let a = self.r.mul(&o.q).sub(&self.q.mul(&o.r)).div(&det);
        let b = self.p.mul(&o.r).sub(&self.r.mul(&o.p)).div(&det);
        Some((a, b))
    }

    fn inside(&self, v: &(Rational, Rational)) -> bool {
        self.p.mul(&v.0).add(&self.q.mul(&v.1)) <= self.r
    }
}

/// The centroid of the feasible region: the (α, β) of the lines separating `above` from
/// `below` with α in [amin, amax] (a convex polygon, clipped exactly).
fn centroid(
    above: &[Pt],
    below: &[Pt],
    amin: &Rational,
    amax: &Rational,
) -> Option<(Rational, Rational)> {
    if above.is_empty() || below.is_empty() || amin >= amax {
        return None;
    }
    let xs = above.iter().chain(below).map(|p| p.x);
    let (x0, x1) = (xs.clone().min()?, xs.max()?);
    let o = Pt {
        // (Halfway, without overflow between times far apart.)
        x: x0.midpoint(x1),
        y: above[0].y,
    };
    let int = |v: i128| Rational::int(v);
    let big = int(1 << 80);
    let one = Rational::one();
    // Counter-clockwise box: α ≥ amin, β ≥ −big, α ≤ amax, β ≤ big.
    let mut poly = vec![
        Half {
            p: one.neg(),
            q: Rational::zero(),
            r: amin.neg(),
        },
        Half {
            p: Rational::zero(),
            q: one.neg(),
            r: big.clone(),
        },
        Half {
            p: one.clone(),
            q: Rational::zero(),
            r: amax.clone(),
        },
        Half {
            p: Rational::zero(),
            q: one.clone(),
            r: big,
        },
    ];
    let rel = |p: &Pt| {
        (
            int(p.x as i128 - o.x as i128),
            int(p.y as i128 - o.y as i128),
        )
    };
    let mut halves = Vec::new();
    for p in above {
        // α·x + β ≤ y.
        let (x, y) = rel(p);
        halves.push(Half {
            p: x,
            q: one.clone(),
            r: y,
        });
    }
    for p in below {
        // α·x + β ≥ y.
        let (x, y) = rel(p);
        halves.push(Half {
            p: x.neg(),
            q: one.neg(),
            r: y.neg(),
        });
    }
    for h in halves {
        let n = poly.len();
        // Vertex k joins edges k and k + 1.
        let verts: Vec<(Rational, Rational)> = (0..n)
            .map(|k| poly[k].meet(&poly[(k + 1) % n]))
            .collect::<Option<_>>()?;
        let ins: Vec<bool> = verts.iter().map(|v| h.inside(v)).collect();
        if ins.iter().all(|x| *x) {
            continue;
        }
        if !ins.iter().any(|x| *x) {
            return None;
        }
        let mut next = Vec::with_capacity(n + 1);
        for k in 0..n {
            let (a, b) = (ins[(k + n - 1) % n], ins[k]);
            if a || b {
                next.push(poly[k].clone());
            }
            if a && !b {
                next.push(h.clone());
            }
        }
        poly = next;
    }
    let n = poly.len();
    let verts: Vec<(Rational, Rational)> = (0..n)
        .map(|k| poly[k].meet(&poly[(k + 1) % n]))
        .collect::<Option<_>>()?;
    let (mut area2, mut cx, mut cy) = (Rational::zero(), Rational::zero(), Rational::zero());
    for k in 0..n {
        let (a, b) = (&verts[k], &verts[(k + 1) % n]);
        let cr = a.0.mul(&b.1).sub(&b.0.mul(&a.1));
        area2 = area2.add(&cr);
        cx = cx.add(&a.0.add(&b.0).mul(&cr));
        cy = cy.add(&a.1.add(&b.1).mul(&cr));
    }
    if area2.is_zero() {
        return None;
    }
    let six_a = area2.mul(&int(3));
    let (alpha, b) = (cx.div(&six_a), cy.div(&six_a));
    let beta = b.add(&int(o.y as i128)).sub(&alpha.mul(&int(o.x as i128)));
    Some((alpha, beta))
}

fn adjust_bound(line: &mut Line, list: &[Pt], inv: i32) {
    let Some(end) = line[1] else { return };
    let mut i = line[0]
        .and_then(|p| list.iter().rposition(|q| *q == p))
        .unwrap_or(0);
    let mut min = None;
    while i + 1 < list.len() {
        let (cur, nxt) = (list[i], list[i + 1]);
        min = Some(cur);
        if cross_sign(cur, nxt, end) * inv > 0 {
            if nxt.x < end.x {
                i += 1;
                continue;
            }
            line[0] = None;
            break;
        }
        line[0] = Some(cur);
        break;
    }
    if line[0].is_none() {
        line[0] = min;
    }
    if line[0].is_some_and(|a| a.x > end.x) {
        line[0] = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hosts "t1" (reference) and "t2": a packet (from, send → to, recv).
    fn step(h: &mut ConvexHullSync, from: &str, send: i64, recv: i64) {
        let dir = if from == "t1" {
            PairDir::RefToOther
        } else {
            PairDir::OtherToRef
        };
        h.add(dir, send, recv);
    }

    fn check(h: &ConvexHullSync, q: Quality, a: &str, b: &str) {
        let (alpha, beta) = h.alpha_beta();
        assert_eq!(h.quality(), q);
        assert_eq!(alpha.to_decimal(34), a, "alpha");
        assert_eq!(beta.to_decimal(34), b, "beta");
    }

    #[test]
    fn fully_incremental_vector() {
        let mut h = ConvexHullSync::new();
        assert_eq!(h.quality(), Quality::Absent);
        let steps: [(&str, i64, i64, Quality, &str, &str); 10] = [
            ("t2", 1, 1, Quality::Incomplete, "1", "0"),
            ("t1", 1, 3, Quality::Incomplete, "1", "0"),
            ("t2", 2, 3, Quality::Approximate, "1", "0.5"),
            ("t1", 3, 5, Quality::Accurate, "0.75", "1.25"),
            ("t1", 4, 8, Quality::Accurate, "0.75", "1.25"),
            ("t2", 4, 5, Quality::Accurate, "1.125", "0.875"),
            ("t2", 4, 6, Quality::Accurate, "1.125", "0.875"),
            ("t1", 6, 7, Quality::Accurate, "0.725", "1.275"),
            ("t1", 7, 4, Quality::Accurate, "0.375", "1.625"),
            ("t2", 7, 3, Quality::Fail, "0.375", "1.625"),
        ];
        for (i, (from, s, r, q, a, b)) in steps.into_iter().enumerate() {
            step(&mut h, from, s, r);
            let (alpha, beta) = h.alpha_beta();
            assert_eq!(h.quality(), q, "step {}", i + 1);
            assert_eq!(alpha.to_decimal(34), a, "alpha at step {}", i + 1);
            assert_eq!(beta.to_decimal(34), b, "beta at step {}", i + 1);
        }
        assert_eq!(h.matches(), 10);
    }

    #[test]
    fn one_hull_stays_incomplete() {
        let mut h = ConvexHullSync::new();
        for (s, r) in [(1, 3), (2, 5), (3, 5), (4, 7)] {
            step(&mut h, "t1", s, r);
            check(&h, Quality::Incomplete, "1", "0");
        }
        assert!(h.formula().is_none());
    }

    #[test]
    fn disjoint_hulls() {
        let mut h = ConvexHullSync::new();
        for (s, r) in [(1, 3), (2, 5), (3, 5), (4, 7)] {
            step(&mut h, "t1", s, r);
        }
        step(&mut h, "t2", 7, 6);
        assert_eq!(h.quality(), Quality::Approximate);
        step(&mut h, "t2", 8, 6);
        step(&mut h, "t2", 10, 8);
        check(&h, Quality::Approximate, "1", "2.5");
    }

    /// The memo (skipping adjustments of unchanged lines against unchanged lists) changes
    /// nothing: random streams, including tiny coordinates with many collinear points.
    #[test]
    fn memo_is_transparent() {
        let mut seed = 99u64;
        let mut rnd = |n: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64).rem_euclid(n)
        };
        for round in 0..300 {
            let mut a = ConvexHullSync::new();
            let mut b = ConvexHullSync::without_memo();
            let spread = [3, 10, 1000][round % 3];
            let mut t = 0i64;
            for _ in 0..200 {
                t += rnd(spread);
                let d = 1 + rnd(spread);
                let dir = if rnd(2) == 0 {
                    PairDir::RefToOther
                } else {
                    PairDir::OtherToRef
                };
                let (s, r) = match dir {
                    PairDir::RefToOther => (t, t + d + rnd(3) - 1),
                    PairDir::OtherToRef => (t, t + d),
                };
                a.add(dir, s, r);
                b.add(dir, s, r);
                assert_eq!(a.quality(), b.quality());
                assert_eq!((a.lmax, a.lmin), (b.lmax, b.lmin), "round {round}");
                assert_eq!(a.formula(), b.formula());
            }
        }
    }

    #[test]
    fn centre_of_a_symmetric_region() {
        let mut h = ConvexHullSync::new();
        // Above y = x + 1: (0, 2), (10, 12); below: (0, 0), (10, 10).
        h.add(PairDir::RefToOther, 0, 2);
        h.add(PairDir::OtherToRef, 0, 0);
        h.add(PairDir::RefToOther, 10, 12);
        h.add(PairDir::OtherToRef, 10, 10);
        assert_eq!(h.quality(), Quality::Accurate);
        let c = h.formula_of(FormulaKind::Centre).unwrap();
        assert_eq!(
            (c.alpha.to_decimal(10), c.beta.to_decimal(10)),
            ("1".into(), "1".into())
        );
        assert_eq!(
            h.formula_of(FormulaKind::Bisector),
            h.formula(),
            "formula() is the bisector"
        );
    }

    /// The centre is a separating line: inside the bounds, below every point above and above
    /// every point below.
    #[test]
    fn centre_separates() {
        let mut seed = 7u64;
        let mut rnd = |n: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64).rem_euclid(n)
        };
        for _ in 0..40 {
            let mut h = ConvexHullSync::new();
            let (mut above, mut below) = (Vec::new(), Vec::new());
            let mut t = 1_700_000_000_000_000_000i64;
            for _ in 0..30 {
                t += 1 + rnd(1_000_000);
                let d = 50_000 + rnd(450_000);
                if rnd(2) == 0 {
                    h.add(PairDir::RefToOther, t, t + d);
                    above.push((t, t + d));
                } else {
                    h.add(PairDir::OtherToRef, t, t + d);
                    below.push((t + d, t));
                }
            }
            if h.quality() != Quality::Accurate {
                continue;
            }
            let c = h.formula_of(FormulaKind::Centre).unwrap();
            let b = c.bounds.as_ref().unwrap();
            assert!(b.alpha_min <= c.alpha && c.alpha <= b.alpha_max);
            let at = |x: i64| c.alpha.mul(&Rational::int(x as i128)).add(&c.beta);
            for (x, y) in &above {
                assert!(at(*x) <= Rational::int(*y as i128));
            }
            for (x, y) in &below {
                assert!(at(*x) >= Rational::int(*y as i128));
            }
        }
    }

    #[test]
    fn no_overflow_far_apart() {
        // Points hours apart around 2024 epoch ns, drift 80 ppm, offset 2 h: the cross
        // products exceed i64 by far.
        let mut h = ConvexHullSync::new();
        let t0: i64 = 1_709_600_000_000_000_000;
        let other = |t: i64| t + (t - t0) / 12_500 + 7_200_000_000_000;
        for k in 0..2000i64 {
            let t = t0 + k * 5_000_000_000;
            let d = 50_000 + (k * 7919) % 400_000;
            // ref → other, then other → ref.
            h.add(PairDir::RefToOther, t, other(t + d));
            let t2 = t + 1_000_000;
            h.add(PairDir::OtherToRef, other(t2), t2 + d);
        }
        assert_eq!(h.quality(), Quality::Accurate);
        let f = h.formula().unwrap();
        let b = f.bounds.unwrap();
        let truth = Rational::ratio(12_501, 12_500);
        assert!(b.alpha_min <= truth && truth <= b.alpha_max);
        assert!(b.alpha_min < f.alpha && f.alpha < b.alpha_max);
    }
}
