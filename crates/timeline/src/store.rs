//! The model's storage — per row, contiguous columns of state intervals — and the queries on
//! it. A row's interval `i` runs from `starts[i]` to `starts[i + 1]` (the last one to the row's
//! end); [`NONE`] marks a gap (a thread not alive or dead, an IRQ line at rest).

use std::collections::HashMap;
use std::sync::Arc;

use crate::{CpuState, IrqState, RowKind, Span, State, ThreadState};

/// The state code of a gap.
pub(crate) const NONE: u8 = u8::MAX;
/// On CPU rows: the flag of a state during which a thread other than idle is current (the
/// CPU counts as busy, as cputop counts it, through its interrupts too).
pub(crate) const BUSY: u8 = 0x80;
/// Intervals per block of a column's busy-time prefix sums.
pub(crate) const BLOCK: usize = 64;

/// What a row's state codes stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Family {
    /// A host row: no states.
    None = 0,
    /// [`ThreadState`] codes.
    Thread = 1,
    /// [`CpuState`] codes, with [`BUSY`].
    Cpu = 2,
    /// [`IrqState`] codes.
    Irq = 3,
}

impl Family {
    pub(crate) fn of(kind: &RowKind) -> Family {
        match kind {
            RowKind::Host => Family::None,
            RowKind::Thread { .. } => Family::Thread,
            RowKind::Cpu { .. } => Family::Cpu,
            RowKind::Irq { .. } | RowKind::SoftIrq { .. } => Family::Irq,
        }
    }
}

/// The thread state codes.
pub(crate) fn thread_code(s: ThreadState) -> u8 {
    s as u8
}

fn thread_state(c: u8) -> Option<ThreadState> {
    use ThreadState::*;
    Some(match c {
        0 => Usermode,
        1 => Syscall,
        2 => WaitCpu,
        3 => WaitBlocked,
        4 => Interrupted,
        5 => SoftIrq,
        6 => Unknown,
        _ => return None,
    })
}

fn cpu_state(c: u8) -> Option<CpuState> {
    use CpuState::*;
    Some(match c & !BUSY {
        0 => Idle,
        1 => Usermode,
        2 => Syscall,
        3 => Irq,
        4 => SoftIrq,
        5 => Unknown,
        _ => return None,
    })
}

fn irq_state(c: u8) -> Option<IrqState> {
    match c {
        0 => Some(IrqState::Active),
        1 => Some(IrqState::Raised),
        _ => None,
    }
}

/// The state a code of family `f` stands for (None: a gap).
pub(crate) fn decode(f: Family, c: u8) -> Option<State> {
    if c == NONE {
        return None;
    }
    match f {
        Family::None => None,
        Family::Thread => thread_state(c).map(State::Thread),
        Family::Cpu => cpu_state(c).map(State::Cpu),
        Family::Irq => irq_state(c).map(State::Irq),
    }
}

/// Whether a code of family `f` counts as running a thread (CPU time).
#[inline]
fn busy(f: Family, c: u8) -> bool {
    match f {
        // User mode, system call, interrupted, soft IRQ.
        Family::Thread => matches!(c, 0 | 1 | 4 | 5),
        Family::Cpu => c != NONE && c & BUSY != 0,
        _ => false,
    }
}

/// Interval starts, increasing, packed: per block of [`BLOCK`] the block's first start, then
/// each start as its distance from it in 4 bytes (a start [`FAR`] or more after it is kept
/// whole in `far`): about half the bytes of plain `i64`s, and the per-block firsts are the
/// small (cache-resident) array a search goes through first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Starts {
    /// The first start of each block.
    base: Vec<i64>,
    /// Each start's distance from its block's first, or [`FAR`].
    off: Vec<u32>,
    /// The starts too far from their block's first: (index, start), by index.
    far: Vec<(usize, i64)>,
}

/// The distance marking a start kept whole.
const FAR: u32 = u32::MAX;

impl Starts {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.off.len()
    }

    /// Start `i` (`i < len`).
    #[inline]
    pub(crate) fn at(&self, i: usize) -> i64 {
        match self.off[i] {
            FAR => self.far_at(i),
            d => self.base[i / BLOCK] + d as i64,
        }
    }

    #[cold]
    fn far_at(&self, i: usize) -> i64 {
        let k = self.far.partition_point(|&(j, _)| j < i);
        self.far[k].1
    }

    /// Start `i`, if there is one.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<i64> {
        (i < self.len()).then(|| self.at(i))
    }

    pub(crate) fn first(&self) -> Option<i64> {
        self.base.first().copied()
    }

    #[inline]
    pub(crate) fn last(&self) -> Option<i64> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    /// Adds a start, not below the last one.
    #[inline]
    pub(crate) fn push(&mut self, t: i64) {
        let i = self.off.len();
        let base = match self.base.last() {
            Some(&b) if !i.is_multiple_of(BLOCK) => b,
            _ => {
                self.base.push(t);
                self.off.push(0);
                return;
            }
        };
        // (Unsigned: from a start far below zero to one far above is more than `i64::MAX`.)
        let d = t.wrapping_sub(base) as u64;
        match u32::try_from(d) {
            Ok(d) if d != FAR => self.off.push(d),
            _ => {
                self.off.push(FAR);
                self.far.push((i, t));
            }
        }
    }

    /// Removes the last start.
    pub(crate) fn pop(&mut self) {
        let Some(i) = self.len().checked_sub(1) else {
            return;
        };
        if self.off[i] == FAR {
            self.far.pop();
        }
        self.off.pop();
        if i % BLOCK == 0 {
            self.base.pop();
        }
    }

    /// Room for `n` more starts.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.off.reserve_exact(n);
        self.base.reserve_exact(n.div_ceil(BLOCK));
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.base.shrink_to_fit();
        self.off.shrink_to_fit();
        self.far.shrink_to_fit();
    }

    /// The first block's first start `below` is false for, in blocks (`below` true then
    /// false over the starts).
    #[inline]
    fn block_point(&self, below: impl Fn(i64) -> bool) -> usize {
        self.base.partition_point(|&x| below(x))
    }

    /// The first `k` in `from..to` where `below(start k)` is false (true then false).
    #[inline]
    pub(crate) fn partition_in(
        &self,
        from: usize,
        to: usize,
        below: impl Fn(i64) -> bool,
    ) -> usize {
        let (mut lo, mut hi) = (from, to);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Bytes taken.
    pub(crate) fn memory(&self) -> usize {
        self.base.len() * 8 + self.off.len() * 4 + self.far.len() * 16
    }

    /// All starts, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.off.iter().enumerate().map(|(i, &d)| match d {
            FAR => self.far_at(i),
            d => self.base[i / BLOCK] + d as i64,
        })
    }
}

/// Labels ([`Store::strings`] indexes), in 2 bytes each while all fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Labels {
    /// All below 65536.
    Narrow(Vec<u16>),
    /// Any.
    Wide(Vec<u32>),
}

impl Default for Labels {
    fn default() -> Self {
        Labels::Narrow(Vec::new())
    }
}

impl Labels {
    #[inline]
    pub(crate) fn at(&self, i: usize) -> u32 {
        match self {
            Labels::Narrow(v) => v[i] as u32,
            Labels::Wide(v) => v[i],
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            Labels::Narrow(v) => v.len(),
            Labels::Wide(v) => v.len(),
        }
    }

    #[inline]
    pub(crate) fn last(&self) -> Option<u32> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    #[inline]
    pub(crate) fn push(&mut self, l: u32) {
        match self {
            Labels::Narrow(v) => match u16::try_from(l) {
                Ok(x) => v.push(x),
                Err(_) => {
                    let mut w: Vec<u32> = v.iter().map(|&x| x as u32).collect();
                    w.push(l);
                    *self = Labels::Wide(w);
                }
            },
            Labels::Wide(v) => v.push(l),
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) {
        match self {
            Labels::Narrow(v) => {
                v.pop();
            }
            Labels::Wide(v) => {
                v.pop();
            }
        }
    }

    /// Every label `l` replaced by `f(l)`, narrow when all the new ones fit.
    pub(crate) fn remap(&mut self, f: impl Fn(u32) -> u32) {
        let n = self.len();
        let wide = (0..n).any(|i| f(self.at(i)) > u16::MAX as u32);
        *self = match (std::mem::take(self), wide) {
            (Labels::Narrow(mut v), false) => {
                v.iter_mut().for_each(|x| *x = f(*x as u32) as u16);
                Labels::Narrow(v)
            }
            (Labels::Wide(v), false) => {
                Labels::Narrow(v.into_iter().map(|x| f(x) as u16).collect())
            }
            (Labels::Narrow(v), true) => Labels::Wide(v.into_iter().map(|x| f(x as u32)).collect()),
            (Labels::Wide(mut v), true) => {
                v.iter_mut().for_each(|x| *x = f(*x));
                Labels::Wide(v)
            }
        };
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        match self {
            Labels::Narrow(v) => v.shrink_to_fit(),
            Labels::Wide(v) => v.shrink_to_fit(),
        }
    }

    /// Bytes taken.
    pub(crate) fn memory(&self) -> usize {
        match self {
            Labels::Narrow(v) => v.len() * 2,
            Labels::Wide(v) => v.len() * 4,
        }
    }

    /// The largest label (0 when none).
    pub(crate) fn max(&self) -> u32 {
        (0..self.len()).map(|i| self.at(i)).max().unwrap_or(0)
    }
}

/// One row's intervals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Column {
    /// What the codes stand for.
    pub(crate) family: u8,
    /// Interval starts, increasing.
    pub(crate) starts: Starts,
    /// State codes.
    pub(crate) states: Vec<u8>,
    /// Labels ([`Store::strings`] indexes; 0: none).
    pub(crate) labels: Labels,
    /// The end of the last interval.
    pub(crate) end: i64,
    /// Busy time (ns) before interval `k * BLOCK`, per block.
    pub(crate) busy: Vec<i64>,
}

impl Column {
    pub(crate) fn family(&self) -> Family {
        match self.family {
            1 => Family::Thread,
            2 => Family::Cpu,
            3 => Family::Irq,
            _ => Family::None,
        }
    }

    #[inline]
    fn end_of(&self, i: usize) -> i64 {
        self.starts.get(i + 1).unwrap_or(self.end)
    }

    /// How many starts are `<= t` (with `le`) or `< t`.
    #[inline]
    fn count(&self, t: i64, le: bool) -> usize {
        let below = |x: i64| if le { x <= t } else { x < t };
        // Through the blocks' first starts first: a search over all starts would miss the
        // cache at nearly every step.
        let b = self.starts.block_point(below);
        if b == 0 {
            return 0;
        }
        let from = (b - 1) * BLOCK;
        let to = (b * BLOCK).min(self.starts.len());
        self.starts.partition_in(from, to, below)
    }

    /// The index of the first interval starting at or after `t`, searched from `from`.
    #[inline]
    fn first_from(&self, from: usize, t: i64) -> usize {
        // Near `from` first: at a fine resolution the next interval shown is close.
        let n = self.starts.len();
        let mut step = 1;
        let mut lo = from;
        while lo < n && step <= BLOCK {
            let hi = (lo + step).min(n);
            if self.starts.at(hi - 1) >= t {
                return self.starts.partition_in(lo, hi, |x| x < t);
            }
            lo = hi;
            step *= 2;
        }
        if lo >= n {
            return n;
        }
        self.count(t, false).max(lo)
    }

    /// Fills in the busy-time prefix sums.
    pub(crate) fn index(&mut self) {
        let f = self.family();
        let n = self.starts.len();
        let busy_code: [bool; 256] = std::array::from_fn(|c| busy(f, c as u8));
        self.busy.clear();
        self.busy.reserve_exact(n.div_ceil(BLOCK));
        let mut sum = 0i64;
        // In order, each interval added when the next one starts.
        let mut prev: Option<(i64, u8)> = None;
        for (i, (s, &c)) in self.starts.iter().zip(&self.states).enumerate() {
            if let Some((p, pc)) = prev {
                if busy_code[pc as usize] {
                    // (Wrapping: a damaged cache file is decoded before its CRC is checked;
                    // differences of the sums are right all the same.)
                    sum = sum.wrapping_add(s - p);
                }
            }
            if i % BLOCK == 0 {
                self.busy.push(sum);
            }
            prev = Some((s, c));
        }
    }

    /// Busy time from the row's start to `t`.
    pub(crate) fn busy_until(&self, t: i64) -> i64 {
        let n = self.starts.len();
        if n == 0 || t <= self.starts.at(0) {
            return 0;
        }
        let f = self.family();
        let k = self.count(t, true) - 1;
        let b = k / BLOCK;
        let mut sum = self.busy.get(b).copied().unwrap_or(0);
        for i in b * BLOCK..k {
            if busy(f, self.states[i]) {
                sum = sum.wrapping_add(self.end_of(i) - self.starts.at(i));
            }
        }
        if busy(f, self.states[k]) {
            sum = sum.wrapping_add(t.min(self.end_of(k)) - self.starts.at(k));
        }
        sum
    }

    /// Busy time in `[a, b]`.
    pub(crate) fn busy_in(&self, a: i64, b: i64) -> i64 {
        if b <= a {
            return 0;
        }
        self.busy_until(b).wrapping_sub(self.busy_until(a))
    }
}

/// The first `k` in `0..n` where `below(k)` is false (`below` true then false).
#[inline]
fn partition(n: usize, below: impl Fn(usize) -> bool) -> usize {
    // Galloping first: the next arrow shown is usually close.
    let mut hi = 1;
    while hi <= n && below(hi - 1) {
        hi *= 2;
    }
    let lo = hi / 2;
    let hi = hi.min(n);
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A wake-up arrow, compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawArrow {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) source: u32,
    pub(crate) target: u32,
}

/// A host's event times, sampled: enough to count events in any time range closely (exactly
/// over the whole trace).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Density {
    /// The time of every [`MARK`]-th event.
    pub(crate) marks: Vec<i64>,
    /// Events.
    pub(crate) events: u64,
    /// The last event's time.
    pub(crate) last: i64,
    /// Events lost (time, count), in time order.
    pub(crate) lost: Vec<(i64, u64)>,
}

/// Events per density mark.
pub(crate) const MARK: u64 = 32;

impl Density {
    /// Events at or before `t` (interpolated between marks).
    pub(crate) fn count_le(&self, t: i64) -> f64 {
        let m = self.marks.partition_point(|&x| x <= t);
        if m == 0 {
            return 0.0;
        }
        if t >= self.last {
            return self.events as f64;
        }
        let lo = (m as u64 - 1) * MARK;
        let hi = (m as u64 * MARK).min(self.events);
        let (t0, t1) = (
            self.marks[m - 1],
            self.marks.get(m).copied().unwrap_or(self.last),
        );
        // The event at `lo` is at or before t, the one at `hi` after it.
        let span = (hi - lo - 1) as f64;
        let frac = if t1 > t0 {
            (t - t0) as f64 / (t1 - t0) as f64
        } else {
            0.0
        };
        lo as f64 + 1.0 + span * frac
    }

    /// Events strictly before `t`.
    pub(crate) fn count_lt(&self, t: i64) -> f64 {
        self.count_le(t.saturating_sub(1))
    }
}

/// Everything the queries read besides the rows' descriptions.
#[derive(Debug, Default)]
pub(crate) struct Store {
    /// Per row.
    pub(crate) cols: Vec<Column>,
    /// Labels; 0 is the empty one.
    pub(crate) strings: Vec<Arc<str>>,
    /// Wake-ups, by start.
    pub(crate) arrows: Vec<RawArrow>,
    /// The longest arrow.
    pub(crate) max_arrow: i64,
    /// Arrow indexes by target row, then start; `by_target[target_at[r]..target_at[r + 1]]`
    /// are row `r`'s. Derived from the arrows.
    pub(crate) by_target: Vec<u32>,
    pub(crate) target_at: Vec<u32>,
    /// The same by source row.
    pub(crate) by_source: Vec<u32>,
    pub(crate) source_at: Vec<u32>,
    /// Per host.
    pub(crate) density: Vec<Density>,
    /// Thread rows of each (host, tid), by start. Derived from the rows.
    pub(crate) threads: HashMap<(u32, i32), Vec<u32>>,
    /// CPU rows of each host. Derived from the rows.
    pub(crate) cpus: Vec<Vec<u32>>,
    /// Thread rows of each host. Derived from the rows.
    pub(crate) host_threads: Vec<Vec<u32>>,
}

impl Store {
    /// Bytes taken by the intervals, arrows and density samples.
    pub(crate) fn memory(&self) -> usize {
        let cols: usize = self
            .cols
            .iter()
            .map(|c| {
                c.starts.memory()
                    + c.states.len()
                    + c.labels.memory()
                    + c.busy.len() * 8
                    + size_of::<Column>()
            })
            .sum();
        let strings: usize = self.strings.iter().map(|s| s.len() + 16).sum();
        let density: usize = self
            .density
            .iter()
            .map(|d| d.marks.len() * 8 + d.lost.len() * 16)
            .sum();
        let arrows = self.arrows.len() * (std::mem::size_of::<RawArrow>() + 8)
            + (self.target_at.len() + self.source_at.len()) * 4;
        cols + strings + density + arrows
    }

    fn label(&self, l: u32) -> Option<Arc<str>> {
        if l == 0 {
            return None;
        }
        self.strings.get(l as usize).cloned()
    }

    /// See [`crate::Timeline::states`].
    pub(crate) fn states(&self, row: u32, start: i64, end: i64, resolution: i64) -> Vec<Span> {
        let Some(c) = self.cols.get(row as usize) else {
            return Vec::new();
        };
        let n = c.starts.len();
        if n == 0 || end < start || c.end <= start {
            return Vec::new();
        }
        let f = c.family();
        let res = resolution.max(1);
        let mut out = Vec::new();
        let mut i = c.count(start, true).saturating_sub(1);
        while i < n && c.starts.at(i) <= end {
            let s = c.starts.at(i);
            let e = c.end_of(i);
            // The next interval shown is the first that starts a resolution step after this
            // one: those in between are hidden.
            let j = if e >= s.saturating_add(res) {
                i + 1
            } else {
                c.first_from(i + 1, s.saturating_add(res))
            };
            let merged = j > i + 1;
            let span_end = c.starts.get(j).unwrap_or(c.end);
            // A gap hiding states shows the first of them.
            let k = if c.states[i] == NONE && merged {
                i + 1
            } else {
                i
            };
            if let Some(state) = decode(f, c.states[k]) {
                if span_end > start || s >= start {
                    out.push(Span {
                        start: s,
                        end: span_end,
                        state,
                        label: self.label(c.labels.at(k)),
                        merged,
                    });
                }
            }
            i = j;
        }
        out
    }

    /// See [`crate::Timeline::state_at`].
    pub(crate) fn state_at(&self, row: u32, ts: i64) -> Option<Span> {
        let c = self.cols.get(row as usize)?;
        let k = c.count(ts, true).checked_sub(1)?;
        let end = c.end_of(k);
        if ts >= end && !(ts == c.end && k + 1 == c.starts.len()) {
            return None;
        }
        Some(Span {
            start: c.starts.at(k),
            end,
            state: decode(c.family(), c.states[k])?,
            label: self.label(c.labels.at(k)),
            merged: false,
        })
    }

    /// See [`crate::Timeline::arrows`]. Per row, through its arrows in time order, skipping
    /// a resolution step after each one shown: the cost follows the pixels, not the arrows.
    pub(crate) fn arrows(
        &self,
        rows: &[u32],
        start: i64,
        end: i64,
        resolution: i64,
    ) -> Vec<crate::Arrow> {
        let res = resolution.max(1);
        let mut picked: Vec<u32> = Vec::new();
        let nrows = self.target_at.len().saturating_sub(1) as u32;
        let mut scan = |index: &[u32], at: &[u32], r: u32| {
            let Some(v) = at
                .get(r as usize)
                .zip(at.get(r as usize + 1))
                .and_then(|(&a, &b)| index.get(a as usize..b as usize))
            else {
                return;
            };
            let start_of = |k: usize| self.arrows[v[k] as usize].start;
            let from = start.saturating_sub(self.max_arrow);
            let mut k = partition(v.len(), |k| start_of(k) < from);
            while k < v.len() {
                let a = &self.arrows[v[k] as usize];
                if a.start > end {
                    break;
                }
                if a.end < start {
                    k += 1;
                    continue;
                }
                picked.push(v[k]);
                let next = a.start.saturating_add(res);
                k += 1 + partition(v.len() - k - 1, |j| start_of(k + 1 + j) < next);
            }
        };
        if rows.is_empty() {
            for r in 0..nrows {
                scan(&self.by_target, &self.target_at, r);
            }
        } else {
            for &r in rows {
                scan(&self.by_target, &self.target_at, r);
                scan(&self.by_source, &self.source_at, r);
            }
            picked.sort_unstable();
            picked.dedup();
        }
        let mut out: Vec<crate::Arrow> = picked
            .into_iter()
            .map(|i| {
                let a = &self.arrows[i as usize];
                crate::Arrow {
                    source: a.source,
                    target: a.target,
                    start: a.start,
                    end: a.end,
                    kind: crate::ArrowKind::Wakeup,
                }
            })
            .collect();
        out.sort_by_key(|a| (a.start, a.end, a.source, a.target));
        out
    }

    /// See [`crate::Timeline::cpu_usage`].
    pub(crate) fn cpu_usage(
        &self,
        host: u32,
        threads: &[u32],
        start: i64,
        end: i64,
        n: usize,
    ) -> Vec<f64> {
        let Some(cpus) = self.cpus.get(host as usize) else {
            return vec![0.0; n];
        };
        if n == 0 || end <= start || cpus.is_empty() {
            return vec![0.0; n];
        }
        let rows: &[u32] = if threads.is_empty() { cpus } else { threads };
        // In i128: a range of any two i64 times (a client may ask for one) does not overflow.
        let span = (end as i128 - start as i128) as f64;
        let width = span / n as f64;
        let at = |k: usize| start.saturating_add((span * k as f64 / n as f64) as i64);
        let mut prev: Vec<i64> = rows
            .iter()
            .map(|&r| self.cols.get(r as usize).map_or(0, |c| c.busy_until(start)))
            .collect();
        let mut out = Vec::with_capacity(n);
        for k in 1..=n {
            let t = if k == n { end } else { at(k) };
            let mut sum = 0i64;
            for (p, &r) in prev.iter_mut().zip(rows) {
                let b = self.cols.get(r as usize).map_or(0, |c| c.busy_until(t));
                sum += b.wrapping_sub(*p);
                *p = b;
            }
            out.push((100.0 * sum as f64 / (width * cpus.len() as f64)).clamp(0.0, 100.0));
        }
        out
    }

    /// See [`crate::Timeline::cpu_time`].
    pub(crate) fn cpu_time(&self, host: u32, start: i64, end: i64) -> Vec<(u32, i64)> {
        let Some(rows) = self.host_threads.get(host as usize) else {
            return Vec::new();
        };
        let mut out: Vec<(u32, i64)> = rows
            .iter()
            .map(|&r| (r, self.cols[r as usize].busy_in(start, end)))
            .filter(|&(_, t)| t > 0)
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// See [`crate::Timeline::event_density`].
    pub(crate) fn event_density(&self, start: i64, end: i64, n: usize) -> (Vec<u64>, Vec<u64>) {
        let mut counts = vec![0u64; n];
        let mut lost = vec![0u64; n];
        if n == 0 || end < start {
            return (counts, lost);
        }
        let span = end as i128 - start as i128 + 1;
        // Bucket k holds [b(k), b(k + 1)); the last one ends after `end`.
        let b =
            |k: usize| (start as i128 + span * k as i128 / n as i128).min(i64::MAX as i128) as i64;
        for d in &self.density {
            let mut prev = d.count_lt(start);
            for (k, c) in counts.iter_mut().enumerate() {
                let next = if k + 1 == n {
                    d.count_le(end)
                } else {
                    d.count_lt(b(k + 1))
                };
                // Rounded at the bounds, so that buckets add up to the events in range.
                *c += (next.round() - prev.round()).max(0.0) as u64;
                prev = next;
            }
            for &(t, c) in &d.lost {
                if t >= start && t <= end {
                    let k = (((t - start) as i128 * n as i128) / span) as usize;
                    lost[k.min(n - 1)] += c;
                }
            }
        }
        (counts, lost)
    }

    /// See [`crate::Timeline::thread_row`].
    pub(crate) fn thread_row(
        &self,
        host: u32,
        tid: i32,
        ts: i64,
        rows: &[crate::Row],
    ) -> Option<u32> {
        let v = self.threads.get(&(host, tid))?;
        let k = v.partition_point(|&r| rows[r as usize].start <= ts);
        Some(if k == 0 { v[0] } else { v[k - 1] })
    }

    /// Rebuilds the indexes derived from the rows and arrows.
    pub(crate) fn derive(&mut self, rows: &[crate::Row], hosts: usize) {
        let n = rows.len();
        let arrows = &self.arrows;
        let group = |key: &dyn Fn(&RawArrow) -> u32| -> (Vec<u32>, Vec<u32>) {
            let mut at = vec![0u32; n + 1];
            for a in arrows {
                at[key(a) as usize + 1] += 1;
            }
            for i in 0..n {
                at[i + 1] += at[i];
            }
            let mut fill = at.clone();
            let mut index = vec![0u32; arrows.len()];
            // Arrows are in time order: each row's come out in time order too.
            for (i, a) in arrows.iter().enumerate() {
                let r = key(a) as usize;
                index[fill[r] as usize] = i as u32;
                fill[r] += 1;
            }
            (index, at)
        };
        (self.by_target, self.target_at) = group(&|a| a.target);
        (self.by_source, self.source_at) = group(&|a| a.source);
        self.threads.clear();
        self.cpus = vec![Vec::new(); hosts];
        self.host_threads = vec![Vec::new(); hosts];
        for r in rows {
            match r.kind {
                RowKind::Thread { tid, .. } => {
                    self.threads.entry((r.host, tid)).or_default().push(r.id);
                    if let Some(v) = self.host_threads.get_mut(r.host as usize) {
                        v.push(r.id);
                    }
                }
                RowKind::Cpu { .. } => {
                    if let Some(v) = self.cpus.get_mut(r.host as usize) {
                        v.push(r.id);
                    }
                }
                _ => {}
            }
        }
        for v in self.threads.values_mut() {
            v.sort_by_key(|&r| (rows[r as usize].start, r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Column, Labels, Starts, BLOCK};

    /// Packed starts and labels read back as pushed, and the searches over them agree with
    /// searches over plain vectors, with gaps beyond 4 bytes of nanoseconds and pops.
    #[test]
    fn packed_columns_match_plain_vectors() {
        let mut rng = testkit::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut rand = move |n: u64| rng.below(n);
        for round in 0..40 {
            let mut plain: Vec<i64> = Vec::new();
            let mut labels: Vec<u32> = Vec::new();
            let mut c = Column::default();
            let mut t = i64::MIN / 2 + rand(1 << 40) as i64;
            for _ in 0..(rand(5 * BLOCK as u64) + 1) {
                if !plain.is_empty() && rand(7) == 0 {
                    plain.pop();
                    labels.pop();
                    c.starts.pop();
                    c.labels.pop();
                    continue;
                }
                t += match rand(10) {
                    0 => u32::MAX as i64 + rand(3) as i64 - 1,
                    1 => rand(1 << 40) as i64 + 1,
                    2 if round % 4 == 0 && t < 0 => i64::MAX / 8,
                    _ => rand(1000) as i64 + 1,
                };
                let l = if round % 3 == 0 {
                    rand(70_000)
                } else {
                    rand(300)
                } as u32;
                plain.push(t);
                labels.push(l);
                c.starts.push(t);
                c.labels.push(l);
            }
            c.states = vec![0; plain.len()];
            c.end = t + 5;
            assert_eq!(c.starts.iter().collect::<Vec<_>>(), plain);
            assert_eq!(
                (0..c.labels.len())
                    .map(|i| c.labels.at(i))
                    .collect::<Vec<_>>(),
                labels
            );
            let mut narrowed = c.labels.clone();
            narrowed.remap(|l| l % 1000);
            assert!(matches!(narrowed, Labels::Narrow(_)));
            assert_eq!(
                narrowed.max(),
                labels.iter().map(|l| l % 1000).max().unwrap_or(0)
            );
            let mut probes: Vec<i64> = plain.iter().flat_map(|&x| [x - 1, x, x + 1]).collect();
            probes.extend([i64::MIN, i64::MAX, 0]);
            for &p in &probes {
                assert_eq!(c.count(p, true), plain.partition_point(|&x| x <= p));
                assert_eq!(c.count(p, false), plain.partition_point(|&x| x < p));
                for from in [0, plain.len() / 2, plain.len()] {
                    let want = plain[from..].partition_point(|&x| x < p) + from;
                    assert_eq!(c.first_from(from, p), want, "from {from} to {p}");
                }
            }
        }
        assert_eq!(Starts::default().last(), None);
    }
}
