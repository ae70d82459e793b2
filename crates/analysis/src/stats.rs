//! Streaming statistics: count, min, max, mean and sample standard deviation (Welford), and
//! histograms.

use std::sync::{Arc, Mutex};

/// Running statistics of a series of integer samples (durations in ns, counts…).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample (0 without samples).
    pub min: i64,
    /// Largest sample (0 without samples).
    pub max: i64,
    /// Sum of the samples (wide enough not to overflow).
    pub sum: i128,
    mean: f64,
    m2: f64,
}

impl Stats {
    /// Adds sample `v`.
    pub(crate) fn add(&mut self, v: i64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += v as i128;
        let x = v as f64;
        let d = x - self.mean;
        self.mean += d / self.count as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Adds every sample of `o` (Chan et al.'s parallel update).
    pub(crate) fn merge(&mut self, o: &Stats) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        let n = (self.count + o.count) as f64;
        let delta = o.mean - self.mean;
        self.mean += delta * o.count as f64 / n;
        self.m2 += o.m2 + delta * delta * self.count as f64 * o.count as f64 / n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum += o.sum;
    }

    pub(crate) fn avg(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Sample standard deviation (n − 1); None below two samples.
    pub(crate) fn stdev(&self) -> Option<f64> {
        (self.count >= 2).then(|| (self.m2 / (self.count - 1) as f64).sqrt())
    }
}

/// A linear histogram of `values` (ns) over `[min, max]` (ns; default: the values' range) in
/// `bins` bins: (lower bound, upper bound, count), bounds in ns. Bounds are computed in µs and
/// scaled, as lttng-analyses does, so they agree to the last digit.
pub(crate) fn histogram(
    values: &[i64],
    bins: usize,
    min: Option<i64>,
    max: Option<i64>,
) -> Vec<(f64, f64, u64)> {
    if values.is_empty() || bins == 0 {
        return Vec::new();
    }
    let lo = min.unwrap_or_else(|| *values.iter().min().unwrap()) as f64 / 1000.0;
    let hi = max.unwrap_or_else(|| *values.iter().max().unwrap()) as f64 / 1000.0;
    if hi <= lo {
        // A single value: no distribution to show (lttng-analyses omits these too).
        return Vec::new();
    }
    let step = (hi - lo) / bins as f64;
    let mut counts = vec![0u64; bins];
    for &v in values {
        let x = v as f64 / 1000.0;
        if x < lo || x > hi {
            continue;
        }
        let i = if step > 0.0 {
            (((x - lo) / step) as usize).min(bins - 1)
        } else {
            0
        };
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let b = lo + i as f64 * step;
            ((b * 1000.0), ((b + step) * 1000.0), c)
        })
        .collect()
}

/// A linear histogram of `values` (in the unit of the bins, e.g. counts or percentages) over
/// `[min, max]` (default: the values' range) in `bins` bins: (lower, upper, count). Empty for
/// a single value or no values.
pub(crate) fn histogram_f(
    values: &[f64],
    bins: usize,
    min: Option<f64>,
    max: Option<f64>,
) -> Vec<(f64, f64, u64)> {
    if values.is_empty() || bins == 0 {
        return Vec::new();
    }
    let lo = min.unwrap_or_else(|| values.iter().copied().fold(f64::INFINITY, f64::min));
    let hi = max.unwrap_or_else(|| values.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return Vec::new();
    }
    let step = (hi - lo) / bins as f64;
    let mut counts = vec![0u64; bins];
    for &x in values {
        if x < lo || x > hi {
            continue;
        }
        counts[(((x - lo) / step) as usize).min(bins - 1)] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let b = lo + i as f64 * step;
            (b, b + step, c)
        })
        .collect()
}

/// The shared bin bounds of `--freq-uniform`: the smallest and largest value (ns) over every
/// histogram of an analysis. Clones share the bounds, so that successive `--refresh` periods
/// widen the same bounds (lttng-analyses keeps them across periods too).
#[derive(Debug, Clone, Default)]
pub struct Uniform(Arc<Mutex<Option<(i64, i64)>>>);

impl Uniform {
    /// Widens the bounds with `values` and returns the `(min, max)` to give [`histogram`]:
    /// `min` / `max` (`--min` / `--max`, ns) when given, else the bounds.
    pub(crate) fn bounds<'a>(
        &self,
        values: impl IntoIterator<Item = &'a [i64]>,
        min: Option<i64>,
        max: Option<i64>,
    ) -> (Option<i64>, Option<i64>) {
        let mut b = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for v in values.into_iter().flatten() {
            *b = Some(match *b {
                None => (*v, *v),
                Some((lo, hi)) => (lo.min(*v), hi.max(*v)),
            });
        }
        (min.or(b.map(|x| x.0)), max.or(b.map(|x| x.1)))
    }
}

/// The bounds for the histograms of `groups`: with `uniform`, the same for all
/// ([`Uniform::bounds`]); else `min` / `max` (each histogram then spans its own values).
pub(crate) fn freq_bounds(
    groups: &[&[i64]],
    min: Option<i64>,
    max: Option<i64>,
    uniform: Option<&Uniform>,
) -> (Option<i64>, Option<i64>) {
    match uniform {
        Some(u) => u.bounds(groups.iter().copied(), min, max),
        None => (min, max),
    }
}

/// A thread's "Chronological priorities" cell as lttng-analyses writes it
/// (`format_utils.format_prio_list`): the distinct priorities in increasing order, each
/// followed by its count when seen more than once (`[-51 (33 times), -2, 20 (41 times)]`).
pub(crate) fn prio_list(prios: &[i32]) -> String {
    let mut sorted = prios.to_vec();
    sorted.sort_unstable();
    let mut out = String::from("[");
    for (i, run) in sorted.chunk_by(|a, b| a == b).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(itoa::Buffer::new().format(run[0]));
        if run.len() > 1 {
            out.push_str(" (");
            out.push_str(itoa::Buffer::new().format(run.len()));
            out.push_str(" times)");
        }
    }
    out.push(']');
    out
}

/// Keeps the first `limit` items of `v` in `order` (all of them for 0), sorted. `order` must
/// be total (ties broken by a unique key), so that the rows do not depend on the method: only
/// the rows shown are sorted, the others just set apart (a table of thousands of threads
/// shows ten by default).
pub(crate) fn top_rows<T>(
    v: &mut Vec<T>,
    limit: usize,
    mut order: impl FnMut(&T, &T) -> std::cmp::Ordering,
) {
    if limit > 0 && limit < v.len() {
        v.select_nth_unstable_by(limit, &mut order);
        v.truncate(limit);
    }
    v.sort_unstable_by(order);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `top_rows` gives the rows a full sort then a cut gives, for every limit, on vectors
    /// with many ties in the first key.
    #[test]
    fn top_rows_is_sort_then_cut() {
        let mut x = testkit::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for len in [0usize, 1, 2, 7, 50, 301] {
            let v: Vec<(u64, usize)> = (0..len).map(|i| (x.below(5), i)).collect();
            let order = |a: &(u64, usize), b: &(u64, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
            for limit in [0, 1, 3, len.saturating_sub(1), len, len + 4] {
                let mut want = v.clone();
                want.sort_by(order);
                if limit > 0 {
                    want.truncate(limit);
                }
                let mut got = v.clone();
                top_rows(&mut got, limit, order);
                assert_eq!(got, want, "len {len} limit {limit}");
            }
        }
    }

    /// lttng-analyses' format: distinct values sorted as numbers, counts above one.
    #[test]
    fn prio_list_counts_distinct_priorities() {
        assert_eq!(prio_list(&[]), "[]");
        assert_eq!(prio_list(&[20]), "[20]");
        assert_eq!(prio_list(&[20, 20]), "[20 (2 times)]");
        assert_eq!(
            prio_list(&[20, -51, 20, -2, -51, -100, 20]),
            "[-100, -51 (2 times), -2, 20 (3 times)]"
        );
    }

    #[test]
    fn stdev_matches_definition() {
        let mut s = Stats::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        assert_eq!((s.min, s.max, s.count), (2, 9, 8));
        assert!((s.avg() - 5.0).abs() < 1e-12);
        assert!((s.stdev().unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let mut one = Stats::default();
        one.add(3);
        assert_eq!(one.stdev(), None);
    }

    #[test]
    fn histogram_bins() {
        let h = histogram(&[1000, 2000, 3000, 5000], 4, None, None);
        let counts: Vec<u64> = h.iter().map(|x| x.2).collect();
        assert_eq!(counts, vec![1, 1, 1, 1]);
        assert_eq!((h[0].0, h[3].1), (1000.0, 5000.0));
        assert!(histogram(&[7, 7], 4, None, None).is_empty());
    }

    #[test]
    fn float_histogram() {
        let h = histogram_f(&[0.5, 1.0, 1.5, 2.5], 2, None, None);
        assert_eq!(h, vec![(0.5, 1.5, 2), (1.5, 2.5, 2)]);
        assert_eq!(histogram_f(&[1.0], 3, Some(0.0), Some(3.0)).len(), 3);
        assert!(histogram_f(&[1.0, 1.0], 3, None, None).is_empty());
    }

    #[test]
    fn uniform_bounds_are_shared_and_widen() {
        let u = Uniform::default();
        let a: &[i64] = &[3000, 5000];
        let b: &[i64] = &[1000];
        assert_eq!(freq_bounds(&[a, b], None, None, None), (None, None));
        assert_eq!(
            freq_bounds(&[a, b], None, None, Some(&u)),
            (Some(1000), Some(5000))
        );
        // A clone (the next refresh period) keeps and widens the bounds.
        let c: &[i64] = &[9000];
        assert_eq!(
            freq_bounds(&[c], None, None, Some(&u.clone())),
            (Some(1000), Some(9000))
        );
        assert_eq!(u.bounds([c], Some(0), None), (Some(0), Some(9000)));
        // The single-value histogram gets the shared bins.
        let h = histogram(b, 4, Some(1000), Some(9000));
        assert_eq!(h.iter().map(|x| x.2).collect::<Vec<_>>(), vec![1, 0, 0, 0]);
        assert_eq!((h[0].0, h[3].1), (1000.0, 9000.0));
    }
}
