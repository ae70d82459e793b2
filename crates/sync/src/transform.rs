//! Exact clock transforms `t' = slope·t + offset` (possibly piecewise), their composition and
//! inversion, and a fast fixed-point evaluator for merging ([`TimeMaps`]).

use crate::bigint::BigInt;
use crate::rational::Rational;

/// `t' = slope·t + offset`, exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    /// Clock rate ratio.
    pub slope: Rational,
    /// ns added after scaling.
    pub offset: Rational,
}

impl Linear {
    pub(crate) fn identity() -> Self {
        Linear {
            slope: Rational::one(),
            offset: Rational::zero(),
        }
    }

    /// `t' = slope·t + offset`.
    pub fn new(slope: Rational, offset: Rational) -> Self {
        Linear { slope, offset }
    }

    /// True for `t' = t`.
    pub fn is_identity(&self) -> bool {
        *self == Linear::identity()
    }

    /// self ∘ g: t ↦ self(g(t)).
    pub(crate) fn compose(&self, g: &Linear) -> Linear {
        Linear {
            slope: self.slope.mul(&g.slope),
            offset: self.slope.mul(&g.offset).add(&self.offset),
        }
    }

    /// The inverse (slope must not be zero).
    pub(crate) fn inverse(&self) -> Linear {
        let s = self.slope.recip();
        Linear {
            offset: self.offset.mul(&s).neg(),
            slope: s,
        }
    }

    pub(crate) fn apply(&self, t: &Rational) -> Rational {
        self.slope.mul(t).add(&self.offset)
    }

    /// The exact image of `t` ns.
    pub fn apply_ns(&self, t: i64) -> Rational {
        self.apply(&Rational::int(t as i128))
    }
}

/// One piece of a piecewise transform: applies from `start` (on the source clock) to the next
/// piece's start; the first piece also applies before its start.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// Where the piece starts (ns, source clock).
    pub start: i64,
    /// The formula that applies from there.
    pub lin: Linear,
}

/// A clock transform from a trace's clock to the reference's.
#[derive(Clone, Debug, PartialEq)]
pub enum Transform {
    /// One formula for the whole trace.
    Linear(Linear),
    /// Pieces sorted by start, each with a positive slope; continuous where built from knots.
    Piecewise(Vec<Piece>),
}

fn ceil_i64(r: &Rational) -> i64 {
    let f = r.neg().floor().neg();
    f.to_i128()
        .map(|v| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
        .unwrap_or(if r.is_negative() { i64::MIN } else { i64::MAX })
}

impl Transform {
    pub(crate) fn identity() -> Self {
        Transform::Linear(Linear::identity())
    }

    /// True for `t' = t` (the reference's own transform).
    pub fn is_identity(&self) -> bool {
        matches!(self, Transform::Linear(l) if l.is_identity())
    }

    fn pieces(&self) -> Vec<Piece> {
        match self {
            Transform::Linear(l) => vec![Piece {
                start: i64::MIN,
                lin: l.clone(),
            }],
            Transform::Piecewise(p) => p.clone(),
        }
    }

    fn from_pieces(mut p: Vec<Piece>) -> Self {
        p.dedup_by(|b, a| a.lin == b.lin);
        if p.len() == 1 {
            Transform::Linear(p.pop().unwrap().lin)
        } else {
            Transform::Piecewise(p)
        }
    }

    /// The piece that applies at `t`.
    pub(crate) fn piece_at(&self, t: i64) -> &Linear {
        match self {
            Transform::Linear(l) => l,
            Transform::Piecewise(p) => {
                let i = p.partition_point(|x| x.start <= t);
                &p[i.saturating_sub(1)].lin
            }
        }
    }

    /// The exact image of `t` ns (through the piece that applies at `t`).
    pub fn apply_ns(&self, t: i64) -> Rational {
        self.piece_at(t).apply_ns(t)
    }

    /// The linear formula when there is one (the first piece of a piecewise transform
    /// otherwise).
    pub(crate) fn main_linear(&self) -> &Linear {
        match self {
            Transform::Linear(l) => l,
            Transform::Piecewise(p) => &p[0].lin,
        }
    }

    /// self ∘ g.
    pub(crate) fn compose(&self, g: &Transform) -> Transform {
        if let (Transform::Linear(f), Transform::Linear(g)) = (self, g) {
            return Transform::Linear(f.compose(g));
        }
        let gp = g.pieces();
        let fp = self.pieces();
        // Breakpoints on g's clock: g's own, and where g reaches each of f's.
        let mut starts: Vec<i64> = gp.iter().map(|p| p.start).collect();
        for f in fp.iter().skip(1) {
            // The g piece whose image contains f.start: the last with image(start) ≤ f.start.
            let b = Rational::int(f.start as i128);
            let mut chosen = &gp[0];
            for p in gp.iter().skip(1) {
                if p.lin.apply_ns(p.start) <= b {
                    chosen = p;
                }
            }
            starts.push(ceil_i64(&chosen.lin.inverse().apply(&b)));
        }
        starts.sort_unstable();
        starts.dedup();
        let out = starts
            .iter()
            .map(|&s| {
                let gl = g.piece_at(s);
                let f = if s == i64::MIN {
                    &fp[0].lin
                } else {
                    self.piece_at(ceil_i64(&gl.apply_ns(s)))
                };
                Piece {
                    start: s,
                    lin: f.compose(gl),
                }
            })
            .collect();
        Transform::from_pieces(out)
    }

    pub(crate) fn inverse(&self) -> Transform {
        match self {
            Transform::Linear(l) => Transform::Linear(l.inverse()),
            Transform::Piecewise(p) => Transform::from_pieces(
                p.iter()
                    .map(|x| Piece {
                        start: if x.start == i64::MIN {
                            i64::MIN
                        } else {
                            ceil_i64(&x.lin.apply_ns(x.start))
                        },
                        lin: x.lin.inverse(),
                    })
                    .collect(),
            ),
        }
    }

    /// A piecewise-linear transform through knots (source time, target time), increasing in
    /// both; before the first and after the last knot, `first` and `last` apply.
    pub(crate) fn through_knots(
        knots: &[(Rational, Rational)],
        first: Linear,
        last: Linear,
    ) -> Self {
        let mut pieces = vec![Piece {
            start: i64::MIN,
            lin: first,
        }];
        for w in knots.windows(2) {
            let ((x0, y0), (x1, y1)) = (&w[0], &w[1]);
            let slope = y1.sub(y0).div(&x1.sub(x0));
            let offset = y0.sub(&slope.mul(x0));
            pieces.push(Piece {
                start: ceil_i64(x0),
                lin: Linear { slope, offset },
            });
        }
        if let Some((x, _)) = knots.last() {
            pieces.push(Piece {
                start: ceil_i64(x),
                lin: last,
            });
        }
        Transform::from_pieces(pieces)
    }
}

/// Fixed-point evaluation of a linear transform around an anchor time `a`:
/// `(base + slope·2^64·(t − a)) >> 64` with `base = (slope·a + offset)·2^64`, rounded to
/// nearest. The error before rounding is below 2^-64·(|t − a| + 1) ns (2^-9 ns a year from
/// the anchor), so the result is the exactly rounded value but for ties. Falls back to exact
/// rational arithmetic when the products do not fit an i128.
#[derive(Clone, Debug)]
struct Fixed {
    anchor: i64,
    base: i128,
    slope: i128,
    exact: Linear,
}

const FRAC: u32 = 64;

impl Fixed {
    fn new(l: &Linear, anchor: i64) -> Self {
        let scale = Rational::new(
            BigInt::from(1i128 << 62).mul(&BigInt::from(4i128)),
            BigInt::from(1i128),
        );
        let fit = |r: Rational| r.mul(&scale).round().to_i128();
        Fixed {
            anchor,
            base: fit(l.apply_ns(anchor)).unwrap_or(i128::MAX),
            slope: fit(l.slope.clone()).unwrap_or(i128::MAX),
            exact: l.clone(),
        }
    }

    fn map(&self, t: i64) -> i64 {
        if self.slope != i128::MAX && self.base != i128::MAX {
            if let Some(v) = self
                .slope
                .checked_mul(t as i128 - self.anchor as i128)
                .and_then(|p| p.checked_add(self.base))
                .and_then(|p| p.checked_add(1i128 << (FRAC - 1)))
            {
                return (v >> FRAC).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            }
        }
        self.exact
            .apply_ns(t)
            .round()
            .to_i128()
            .map(|v| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
            .unwrap_or(i64::MAX)
    }
}

/// Per-trace transforms to the reference clock, for `ctf::Merger::with_time_map`.
#[derive(Clone, Debug, Default)]
pub struct TimeMaps {
    /// Indexed by `Trace::index`; None maps a trace's times unchanged.
    traces: Vec<Option<Vec<(i64, Fixed)>>>,
}

impl TimeMaps {
    /// From one transform per trace (by trace index) and a time near which each trace's
    /// timestamps lie (its first event, say; 0 when unknown).
    pub(crate) fn new(per_trace: &[Transform], anchors: &[i64]) -> Self {
        TimeMaps {
            traces: per_trace
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let a = anchors.get(i).copied().unwrap_or(0);
                    (!t.is_identity()).then(|| {
                        t.pieces()
                            .iter()
                            .map(|p| {
                                let anchor = if p.start == i64::MIN {
                                    a
                                } else {
                                    p.start.max(a)
                                };
                                (p.start, Fixed::new(&p.lin, anchor))
                            })
                            .collect()
                    })
                })
                .collect(),
        }
    }
}

impl ctf::merge::TimeMap for TimeMaps {
    fn map(&self, trace: usize, ns: i64) -> i64 {
        match self.traces.get(trace) {
            Some(Some(p)) => {
                let i = p.partition_point(|x| x.0 <= ns).saturating_sub(1);
                p[i].1.map(ns)
            }
            _ => ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctf::merge::TimeMap;

    fn lin(s: &str, o: &str) -> Linear {
        Linear::new(
            Rational::parse_decimal(s).unwrap(),
            Rational::parse_decimal(o).unwrap(),
        )
    }

    #[test]
    fn trace_compass_transform_vectors() {
        let ts: i64 = 1_361_657_893_526_374_091;
        let r = |l: Linear| l.apply_ns(ts).round().to_string();
        assert_eq!(r(lin("1", "3")), "1361657893526374094");
        assert_eq!(r(lin("2", "0")), "2723315787052748182");
        assert_eq!(r(lin("0.5", "0")), "680828946763187046");
        // (2,3)∘(1.5,8) at 100 = 2·(1.5·100+8)+3 = 319; the reverse = 1.5·(2·100+3)+8 = 312.5.
        let (f, g) = (lin("2", "3"), lin("1.5", "8"));
        assert_eq!(f.compose(&g).apply_ns(100), Rational::int(319));
        assert_eq!(g.compose(&f).apply_ns(100), Rational::ratio(625, 2));
        let inv = f.inverse();
        assert_eq!(inv.compose(&f), Linear::identity());
    }

    #[test]
    fn fixed_point_is_within_a_tenth_of_ns() {
        let l = lin(
            "0.9999413783703139011056845831168394",
            "79796507913179.33347660124688298171",
        );
        let fx = Fixed::new(&l, 1_361_203_559_332_331_489);
        let mut prev = i64::MIN;
        for k in 0..1000i64 {
            let t = 1_361_203_559_332_331_489 + k * 3_000_000_007;
            let exact = l.apply_ns(t);
            let got = fx.map(t);
            let err = Rational::int(got as i128).sub(&exact).abs();
            assert!(err <= Rational::ratio(1, 2), "{t}: {got} vs {exact}");
            assert!(got >= prev);
            prev = got;
        }
        let maps = TimeMaps::new(&[Transform::identity(), Transform::Linear(l.clone())], &[]);
        assert_eq!(maps.map(0, 42), 42);
        assert_eq!(
            maps.map(1, 1_361_203_559_332_331_489),
            l.apply_ns(1_361_203_559_332_331_489)
                .round()
                .to_i128()
                .unwrap() as i64
        );
    }

    #[test]
    fn piecewise_compose_and_invert() {
        let knots = vec![
            (Rational::int(1000), Rational::int(2000)),
            (Rational::int(2000), Rational::int(3100)),
            (Rational::int(3000), Rational::int(4300)),
        ];
        let p = Transform::through_knots(&knots, lin("1", "1000"), lin("1.2", "700"));
        assert_eq!(p.apply_ns(500), Rational::int(1500));
        assert_eq!(p.apply_ns(1500), Rational::int(2550));
        assert_eq!(p.apply_ns(2500), Rational::int(3700));
        assert_eq!(p.apply_ns(4000), Rational::int(5500));
        let inv = p.inverse();
        for t in [0i64, 999, 1000, 1500, 2000, 2500, 3000, 8000] {
            let y = p.apply_ns(t).floor().to_i128().unwrap() as i64;
            assert_eq!(inv.apply_ns(y), Rational::int(t as i128), "{t}");
        }
        let shift = Transform::Linear(lin("1", "-1000"));
        let c = shift.compose(&p);
        assert_eq!(c.apply_ns(2500), Rational::int(2700));
        let c2 = p.compose(&shift);
        assert_eq!(c2.apply_ns(3500), Rational::int(3700));
        let pp = p.compose(&p);
        assert_eq!(pp.apply_ns(1500), p.apply_ns(2550));
    }
}
