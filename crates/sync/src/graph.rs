//! N hosts: one convex hull per host pair (plus per-window hulls for the piecewise fallback),
//! the reference, a spanning tree preferring the most accurate links, and per-host transforms
//! with bounds.

use std::collections::BTreeMap;

use crate::hull::{ConvexHullSync, FormulaKind, HullFormula, PairDir, Quality};
use crate::matching::Match;
use crate::rational::Rational;
use crate::transform::{Linear, Transform};

/// Default window of the piecewise fallback, on the pair reference's clock.
pub(crate) const DEFAULT_WINDOW_NS: i64 = 60_000_000_000;

/// One pair's hulls.
#[derive(Clone, Debug)]
struct PairState {
    hull: ConvexHullSync,
    /// Finished windows, and the current one (points arrive nearly in time order).
    windows: BTreeMap<i64, ConvexHullSync>,
    cur: Option<(i64, ConvexHullSync)>,
}

impl PairState {
    fn window(&mut self, w: i64) -> &mut ConvexHullSync {
        if self.cur.as_ref().is_none_or(|c| c.0 != w) {
            if let Some((i, h)) = self.cur.take() {
                self.windows.insert(i, h);
            }
            let h = self.windows.remove(&w).unwrap_or_default();
            self.cur = Some((w, h));
        }
        &mut self.cur.as_mut().unwrap().1
    }

    fn all_windows(&self) -> BTreeMap<i64, ConvexHullSync> {
        let mut all = self.windows.clone();
        if let Some((i, h)) = &self.cur {
            all.insert(*i, h.clone());
        }
        all
    }
}

/// Accumulates matches into per-pair hulls.
#[derive(Clone, Debug)]
pub struct Synchronizer {
    host_ids: Vec<String>,
    /// Rank of each host's ID in sorted order.
    rank: Vec<usize>,
    pairs: BTreeMap<(u32, u32), PairState>,
    window_ns: i64,
    same_host: u64,
    formula: FormulaKind,
}

/// Interval bounds of a transform `t_ref = slope·t + offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest and largest slope.
    pub slope: (Rational, Rational),
    /// Smallest and largest offset (ns).
    pub offset: (Rational, Rational),
}

impl Bounds {
    fn exact(l: &Linear) -> Self {
        Bounds {
            slope: (l.slope.clone(), l.slope.clone()),
            offset: (l.offset.clone(), l.offset.clone()),
        }
    }

    /// Bounds of f∘g from those of f (self) and g, with positive slopes.
    fn compose(&self, g: &Bounds) -> Bounds {
        let prod = |a: &(Rational, Rational), b: &(Rational, Rational)| {
            let c = [a.0.mul(&b.0), a.0.mul(&b.1), a.1.mul(&b.0), a.1.mul(&b.1)];
            let lo = c.iter().min().unwrap().clone();
            let hi = c.iter().max().unwrap().clone();
            (lo, hi)
        };
        let slope = prod(&self.slope, &g.slope);
        let so = prod(&self.slope, &g.offset);
        Bounds {
            slope,
            offset: (so.0.add(&self.offset.0), so.1.add(&self.offset.1)),
        }
    }

    /// True when `l`'s slope and offset are both within the bounds.
    pub fn contains(&self, l: &Linear) -> bool {
        self.slope.0 <= l.slope
            && l.slope <= self.slope.1
            && self.offset.0 <= l.offset
            && l.offset <= self.offset.1
    }
}

/// One window of a pair's piecewise fallback.
#[derive(Clone, Debug)]
pub(crate) struct WindowReport {
    /// Window start on the pair reference's clock.
    pub(crate) start: i64,
    pub(crate) quality: Quality,
    pub(crate) matches: u64,
}

/// The result for one host pair: `T_other = α·T_ref + β`.
#[derive(Clone, Debug)]
pub struct PairReport {
    /// The pair's reference (smaller host ID).
    pub ref_host: u32,
    /// The pair's other host.
    pub other_host: u32,
    /// How good the pair's formula is.
    pub quality: Quality,
    /// Packets matched between the two hosts, both directions.
    pub matches: u64,
    pub(crate) accurate: u64,
    pub(crate) hull_sizes: (usize, usize),
    pub(crate) formula: Option<HullFormula>,
    /// Set when the hull failed and the piecewise fallback was built from windows.
    pub(crate) windows: Option<Vec<WindowReport>>,
    /// Transform other → ref (linear, or piecewise for a failed pair with usable windows).
    pub(crate) transform: Option<Transform>,
    /// Bounds of the linear transform other → ref (accurate formulas only).
    pub(crate) bounds: Option<Bounds>,
}

/// The result for one host.
#[derive(Clone, Debug)]
pub struct HostReport {
    /// The host's identity (see [`crate::extract::host_id`]).
    pub host_id: String,
    /// Maps this host's timestamps to the reference's.
    pub transform: Transform,
    /// Bounds of the (linear) transform, when every link on its path has them.
    pub bounds: Option<Bounds>,
    /// Worst quality along the path to the reference (Accurate for the reference itself);
    /// for hosts not connected, the best quality of their pairs (Absent without any).
    pub quality: Quality,
    /// True when a chain of pairs with formulas links the host to the reference.
    pub connected: bool,
    /// Hosts from the reference to this one.
    pub path: Vec<u32>,
    /// True when a piecewise fallback is on the path.
    pub piecewise: bool,
}

/// Everything `synchronize` finds.
#[derive(Clone, Debug)]
pub struct SyncResult {
    /// The reference host, whose clock is the common time line.
    pub reference: u32,
    /// Every host, by host index.
    pub hosts: Vec<HostReport>,
    /// Every host pair that matched packets.
    pub pairs: Vec<PairReport>,
    /// Matches within one host (ignored).
    pub same_host: u64,
}

fn quality_badness(q: Quality) -> u8 {
    match q {
        Quality::Accurate => 0,
        Quality::Approximate => 1,
        Quality::Fail => 2,
        Quality::Incomplete => 3,
        Quality::Absent => 4,
    }
}

impl Synchronizer {
    /// A synchronizer for the hosts of `host_ids` (by host index), with the default window
    /// and formula.
    pub fn new(host_ids: Vec<String>) -> Self {
        let mut order: Vec<usize> = (0..host_ids.len()).collect();
        order.sort_by(|a, b| host_ids[*a].cmp(&host_ids[*b]).then(a.cmp(b)));
        let mut rank = vec![0; host_ids.len()];
        for (r, h) in order.into_iter().enumerate() {
            rank[h] = r;
        }
        Synchronizer {
            host_ids,
            rank,
            pairs: BTreeMap::new(),
            window_ns: DEFAULT_WINDOW_NS,
            same_host: 0,
            formula: FormulaKind::default(),
        }
    }

    /// Sets the piecewise fallback's window (ns, on each pair reference's clock).
    pub(crate) fn with_window(mut self, ns: i64) -> Self {
        self.window_ns = ns.max(1);
        self
    }

    /// Sets how each pair's formula is chosen in its feasible region.
    pub fn with_formula(mut self, kind: FormulaKind) -> Self {
        self.formula = kind;
        self
    }

    /// Orders a pair: the host with the smaller ID is the pair's reference.
    fn order(&self, a: u32, b: u32) -> (u32, u32) {
        if self.rank[a as usize] <= self.rank[b as usize] {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// Adds one matched packet.
    pub fn add(&mut self, m: &Match) {
        let (s, r) = (m.send.host, m.recv.host);
        if s == r {
            self.same_host += 1;
            return;
        }
        let key = self.order(s, r);
        let (dir, x) = if s == key.0 {
            (PairDir::RefToOther, m.send.ts)
        } else {
            (PairDir::OtherToRef, m.recv.ts)
        };
        let w = self.window_ns;
        let st = self.pairs.entry(key).or_insert_with(|| PairState {
            hull: ConvexHullSync::new(),
            windows: BTreeMap::new(),
            cur: None,
        });
        st.hull.add(dir, m.send.ts, m.recv.ts);
        st.window(x.div_euclid(w)).add(dir, m.send.ts, m.recv.ts);
    }

    /// Per-pair reports.
    pub(crate) fn pairs(&self) -> Vec<PairReport> {
        self.pairs
            .iter()
            .map(|(&(a, b), st)| self.pair_report(a, b, st))
            .collect()
    }

    fn pair_report(&self, a: u32, b: u32, st: &PairState) -> PairReport {
        let h = &st.hull;
        let formula = h.formula_of(self.formula);
        let mut windows = None;
        let mut transform = None;
        let mut bounds = None;
        if let Some(f) = &formula {
            let lin = Linear::new(f.alpha.clone(), f.beta.clone()).inverse();
            if let Some(fb) = &f.bounds {
                // t_ref = (t − β)/α: slope 1/α, offset −β/α, monotone in α and in β.
                let mut offs = Vec::new();
                for al in [&fb.alpha_min, &fb.alpha_max] {
                    for be in [&fb.beta_min, &fb.beta_max] {
                        offs.push(be.div(al).neg());
                    }
                }
                bounds = Some(Bounds {
                    slope: (fb.alpha_max.recip(), fb.alpha_min.recip()),
                    offset: (
                        offs.iter().min().unwrap().clone(),
                        offs.iter().max().unwrap().clone(),
                    ),
                });
            }
            transform = Some(Transform::Linear(lin));
        }
        if h.quality() == Quality::Fail {
            let w: Vec<WindowReport> = st
                .all_windows()
                .iter()
                .map(|(&i, wh)| WindowReport {
                    // (The first window of a clock near i64::MIN starts before it.)
                    start: i.saturating_mul(self.window_ns),
                    quality: wh.quality(),
                    matches: wh.matches(),
                })
                .collect();
            if let Some(t) = self.piecewise(st) {
                transform = Some(t);
                bounds = None;
            }
            windows = Some(w);
        }
        PairReport {
            ref_host: a,
            other_host: b,
            quality: h.quality(),
            matches: h.matches(),
            accurate: h.accurate(),
            hull_sizes: h.hull_sizes(),
            formula,
            windows,
            transform,
            bounds,
        }
    }

    /// Piecewise transform other → ref through the midpoints of the usable windows.
    fn piecewise(&self, st: &PairState) -> Option<Transform> {
        let mut knots: Vec<(Rational, Rational)> = Vec::new();
        let mut lins = Vec::new();
        for (&i, wh) in &st.all_windows() {
            if !matches!(wh.quality(), Quality::Accurate | Quality::Approximate) {
                continue;
            }
            let Some(f) = wh.formula_of(self.formula) else {
                continue;
            };
            let xm = Rational::int(i as i128 * self.window_ns as i128 + self.window_ns as i128 / 2);
            let ym = f.alpha.mul(&xm).add(&f.beta);
            // Knots (other time, ref time), increasing in both.
            if let Some((y0, x0)) = knots.last() {
                if ym <= *y0 || xm <= *x0 {
                    continue;
                }
            }
            knots.push((ym, xm));
            lins.push(Linear::new(f.alpha, f.beta).inverse());
        }
        if knots.len() < 2 {
            return None;
        }
        let first = lins.first()?.clone();
        let last = lins.last()?.clone();
        Some(Transform::through_knots(&knots, first, last))
    }

    /// The default reference: the host with the smallest ID among those linked to another
    /// (the smallest overall when none is).
    pub(crate) fn default_reference(&self, pairs: &[PairReport]) -> u32 {
        let linked = |h: u32| {
            pairs
                .iter()
                .any(|p| p.transform.is_some() && (p.ref_host == h || p.other_host == h))
        };
        let mut ids: Vec<u32> = (0..self.host_ids.len() as u32).collect();
        ids.sort_by(|a, b| self.host_ids[*a as usize].cmp(&self.host_ids[*b as usize]));
        ids.iter()
            .copied()
            .find(|&h| linked(h))
            .or(ids.first().copied())
            .unwrap_or(0)
    }

    /// Reference, spanning tree and per-host transforms. The tree is a shortest-path tree
    /// from the reference where a link costs by quality first (accurate, approximate, failed
    /// with a piecewise fallback, failed) and then by its accuracy (α_max − α_min).
    pub fn finish(&self, reference: Option<u32>) -> SyncResult {
        let pairs = self.pairs();
        let n = self.host_ids.len();
        let reference = reference.unwrap_or_else(|| self.default_reference(&pairs));
        // Edges.
        let mut adj: Vec<Vec<(u32, f64, usize)>> = vec![Vec::new(); n];
        for (i, p) in pairs.iter().enumerate() {
            if p.transform.is_none() {
                continue;
            }
            let rank = match (
                p.quality,
                p.windows.is_some() && matches!(p.transform, Some(Transform::Piecewise(_))),
            ) {
                (Quality::Accurate, _) => 0.0,
                (Quality::Approximate, _) => 1.0,
                (Quality::Fail, true) => 2.0,
                _ => 3.0,
            };
            let acc = p
                .formula
                .as_ref()
                .and_then(|f| f.bounds.as_ref())
                .map(|b| b.accuracy().to_f64().abs().min(0.5))
                .unwrap_or(0.5);
            let cost = rank + acc;
            adj[p.ref_host as usize].push((p.other_host, cost, i));
            adj[p.other_host as usize].push((p.ref_host, cost, i));
        }
        // Dijkstra (n is small).
        let mut dist = vec![f64::INFINITY; n];
        let mut prev: Vec<Option<(u32, usize)>> = vec![None; n];
        let mut done = vec![false; n];
        if (reference as usize) < n {
            dist[reference as usize] = 0.0;
        }
        loop {
            let u = (0..n)
                .filter(|&i| !done[i] && dist[i].is_finite())
                .min_by(|&a, &b| dist[a].total_cmp(&dist[b]).then(a.cmp(&b)));
            let Some(u) = u else { break };
            done[u] = true;
            for &(v, c, e) in &adj[u] {
                let nd = dist[u] + c;
                if nd < dist[v as usize] {
                    dist[v as usize] = nd;
                    prev[v as usize] = Some((u as u32, e));
                }
            }
        }
        let mut hosts = Vec::new();
        for h in 0..n as u32 {
            let id = self.host_ids[h as usize].clone();
            if h == reference {
                hosts.push(HostReport {
                    host_id: id,
                    transform: Transform::identity(),
                    bounds: Some(Bounds::exact(&Linear::identity())),
                    quality: Quality::Accurate,
                    connected: true,
                    path: vec![h],
                    piecewise: false,
                });
                continue;
            }
            if !dist[h as usize].is_finite() {
                let q = pairs
                    .iter()
                    .filter(|p| p.ref_host == h || p.other_host == h)
                    .map(|p| p.quality)
                    .min_by_key(|q| quality_badness(*q))
                    .unwrap_or(Quality::Absent);
                hosts.push(HostReport {
                    host_id: id,
                    transform: Transform::identity(),
                    bounds: None,
                    quality: q,
                    connected: false,
                    path: Vec::new(),
                    piecewise: false,
                });
                continue;
            }
            // Walk from h up to the reference, composing: T(h) = T(parent) ∘ E(h → parent).
            let mut path = vec![h];
            let mut edges = Vec::new();
            let mut cur = h;
            while let Some((p, e)) = prev[cur as usize] {
                edges.push((cur, p, e));
                path.push(p);
                cur = p;
            }
            path.reverse();
            let mut t = Transform::identity();
            let mut b = Some(Bounds::exact(&Linear::identity()));
            let mut worst = Quality::Accurate;
            let mut piecewise = false;
            // Compose from the reference side: T = E(p1→ref) ∘ E(p2→p1) ∘ … ∘ E(h→…).
            for &(from, to, e) in edges.iter().rev() {
                let p = &pairs[e];
                let fwd = p.transform.clone().unwrap();
                piecewise |= matches!(fwd, Transform::Piecewise(_));
                let (edge, eb) = if from == p.other_host && to == p.ref_host {
                    (fwd, p.bounds.clone())
                } else {
                    // ref → other: the inverse; bounds of y = α·x + β.
                    let eb = p
                        .formula
                        .as_ref()
                        .and_then(|f| f.bounds.as_ref())
                        .map(|fb| Bounds {
                            slope: (fb.alpha_min.clone(), fb.alpha_max.clone()),
                            offset: (fb.beta_min.clone(), fb.beta_max.clone()),
                        });
                    (fwd.inverse(), if p.windows.is_some() { None } else { eb })
                };
                t = t.compose(&edge);
                b = match (b, eb) {
                    (Some(b), Some(eb)) => Some(b.compose(&eb)),
                    _ => None,
                };
                if quality_badness(p.quality) > quality_badness(worst) {
                    worst = p.quality;
                }
            }
            if piecewise {
                b = None;
            }
            hosts.push(HostReport {
                host_id: id,
                transform: t,
                bounds: b,
                quality: worst,
                connected: true,
                path,
                piecewise,
            });
        }
        SyncResult {
            reference,
            hosts,
            pairs,
            same_host: self.same_host,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::{End, Match, PacketKey};

    fn m(sh: u32, st: i64, rh: u32, rt: i64) -> Match {
        Match {
            send: End {
                host: sh,
                trace: sh,
                ts: st,
            },
            recv: End {
                host: rh,
                trace: rh,
                ts: rt,
            },
            key: PacketKey::default(),
        }
    }

    /// A tiny deterministic generator.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, lo: i64, hi: i64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + ((self.0 >> 33) as i64).rem_euclid(hi - lo)
        }
    }

    /// Host "b"'s clock drifts from −20 to +20 ppm over 10 minutes (quadratic): the global hull
    /// fails and the piecewise fallback follows the clock within a few µs.
    #[test]
    fn nonlinear_drift_falls_back_to_piecewise() {
        let t0: i64 = 1_700_000_000_000_000_000;
        let span: i64 = 600_000_000_000;
        // b(t) = t + 3 600 s + c·(t−t0−span/2)², c such that the drift goes ±20 ppm.
        let c = 20e-6 / span as f64;
        let b = |t: i64| {
            let u = (t - t0 - span / 2) as f64;
            t + 3_600_000_000_000 + (c * u * u) as i64
        };
        let mut s = Synchronizer::new(vec!["a".into(), "b".into()]).with_window(60_000_000_000);
        let mut r = Lcg(7);
        let mut t = t0;
        while t < t0 + span {
            let d = r.next(50_000, 500_000);
            s.add(&m(0, t, 1, b(t + d)));
            let t2 = t + 1_000_000;
            let d = r.next(50_000, 500_000);
            s.add(&m(1, b(t2), 0, t2 + d));
            t += 20_000_000;
        }
        let res = s.finish(None);
        assert_eq!(res.reference, 0);
        let p = &res.pairs[0];
        assert_eq!(p.quality, Quality::Fail);
        let w = p.windows.as_ref().unwrap();
        assert!(w.len() >= 10);
        let good = w.iter().filter(|w| w.quality == Quality::Accurate).count();
        assert!(good >= 9, "{w:?}");
        let h = &res.hosts[1];
        assert!(h.piecewise && h.connected);
        let Transform::Piecewise(_) = &h.transform else {
            panic!("piecewise expected")
        };
        let mut worst = 0f64;
        for k in 0..600 {
            let tr = t0 + k * 1_000_000_000;
            let err = h.transform.apply_ns(b(tr)).to_f64() - tr as f64;
            worst = worst.max(err.abs());
        }
        assert!(worst < 100_000.0, "piecewise error {worst} ns");
        // The last good linear formula alone would be off by far more.
        let last = p.formula.as_ref().unwrap();
        let lin = Linear::new(last.alpha.clone(), last.beta.clone()).inverse();
        let err_lin = (lin.apply_ns(b(t0 + span - 1)).to_f64() - (t0 + span - 1) as f64).abs();
        assert!(err_lin > 5.0 * worst, "{err_lin} vs {worst}");
    }

    #[test]
    fn tree_prefers_accurate_links_and_reports_islands() {
        // a–b accurate, b–c accurate, a–c approximate (one point on one side); d isolated
        // with one-way traffic only.
        let mut s = Synchronizer::new(vec!["a".into(), "b".into(), "c".into(), "d".into()]);
        let mut r = Lcg(3);
        let t0 = 1_000_000_000_000i64;
        for k in 0..200 {
            let t = t0 + k * 10_000_000;
            for (x, y, off) in [(0u32, 1u32, 5_000i64), (1, 2, 7_000)] {
                let d = r.next(50_000, 500_000);
                let clock = |h: u32, t: i64| {
                    t + if h == 0 {
                        0
                    } else if h == 1 {
                        5_000
                    } else {
                        12_000
                    }
                };
                let _ = off;
                s.add(&m(x, clock(x, t), y, clock(y, t + d)));
                let d = r.next(50_000, 500_000);
                s.add(&m(
                    y,
                    clock(y, t + 3_000_000),
                    x,
                    clock(x, t + 3_000_000 + d),
                ));
            }
        }
        s.add(&m(0, t0, 2, t0 + 12_000 + 90_000));
        s.add(&m(2, t0 + 10, 0, t0 + 95_000));
        s.add(&m(3, t0, 0, t0 + 70_000));
        let res = s.finish(None);
        let c = &res.hosts[2];
        assert_eq!(c.path, vec![0, 1, 2]);
        assert_eq!(c.quality, Quality::Accurate);
        let off = c.transform.apply_ns(t0 + 12_000).to_f64() - t0 as f64;
        assert!(off.abs() < 50_000.0, "{off}");
        let d = &res.hosts[3];
        assert!(!d.connected);
        assert_eq!(d.quality, Quality::Incomplete);
        assert!(d.transform.is_identity());
    }
}
