//! `irqstats` / `irqlog` / `irqfreq`: hard and soft IRQ handler durations and soft IRQ raise
//! latencies.

use std::collections::BTreeMap;

use kernel::{Facet, Interest, Model, NoteKind, Notification, State};

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Cell, Metadata, Table, TableClass};
use crate::stats::{freq_bounds, Stats, Uniform};

/// The LAMI metadata of the IRQ analyses (irqstats, irqlog, irqfreq).
pub const METADATA: Metadata = Metadata {
    title: "System interrupt analysis",
    description: "Interrupt frequency distribution, statistics, and log",
    tags: &[
        "linux-kernel",
        "lttng-analyses",
        "interrupt",
        "stats",
        "freq",
        "log",
    ],
    table_classes: &[
        TableClass {
            name: "log",
            title: "Interrupt log",
            columns: &[
                col("Time range", "time-range"),
                col("Raised timestamp", "timestamp"),
                col("CPU", "cpu"),
                col("Interrupt", "irq"),
            ],
        },
        TableClass {
            name: "hard-stats",
            title: "Hardware interrupt statistics",
            columns: &[
                col("Interrupt", "irq"),
                colu("Interrupt count", "number", "interrupts"),
                col("Minimum duration", "duration"),
                col("Average duration", "duration"),
                col("Maximum duration", "duration"),
                col("Interrupt duration standard deviation", "duration"),
            ],
        },
        TableClass {
            name: "soft-stats",
            title: "Software interrupt statistics",
            columns: &[
                col("Interrupt", "irq"),
                colu("Interrupt count", "number", "interrupts"),
                col("Minimum duration", "duration"),
                col("Average duration", "duration"),
                col("Maximum duration", "duration"),
                col("Interrupt duration standard deviation", "duration"),
                colu("Interrupt raise count", "number", "interrupt raises"),
                col("Minimum raise latency", "duration"),
                col("Average raise latency", "duration"),
                col("Maximum raise latency", "duration"),
                col("Interrupt raise latency standard deviation", "duration"),
            ],
        },
        TableClass {
            name: "freq",
            title: "Interrupt handler duration frequency distribution",
            columns: &[
                col("Duration (lower bound)", "duration"),
                col("Duration (upper bound)", "duration"),
                colu("Interrupt count", "number", "interrupts"),
            ],
        },
        TableClass {
            name: "summary",
            title: "Interrupt statistics - summary",
            columns: &[
                col("Time range", "time-range"),
                colu("Total interrupt count", "number", "interrupts"),
            ],
        },
    ],
};

/// The bound columns of the `--freq-series` tables.
pub(crate) const FREQ_BOUNDS: (&str, &str, &str) = (
    "Duration (lower bound)",
    "Duration (upper bound)",
    "duration",
);

/// Names of the soft IRQ vectors.
pub(crate) fn softirq_name(vec: u64) -> &'static str {
    const N: &[&str] = &[
        "HI_SOFTIRQ",
        "TIMER_SOFTIRQ",
        "NET_TX_SOFTIRQ",
        "NET_RX_SOFTIRQ",
        "BLOCK_SOFTIRQ",
        "BLOCK_IOPOLL_SOFTIRQ",
        "TASKLET_SOFTIRQ",
        "SCHED_SOFTIRQ",
        "HRTIMER_SOFTIRQ",
        "RCU_SOFTIRQ",
    ];
    N.get(vec as usize).copied().unwrap_or("UNKNOWN_SOFTIRQ")
}

/// One handled interrupt, for the log and histograms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IrqRecord {
    pub hard: bool,
    pub nr: i64,
    pub cpu: u32,
    pub raise: Option<i64>,
    pub begin: i64,
    pub end: i64,
}

#[derive(Debug, Default)]
struct SoftStat {
    dur: Stats,
    raise: Stats,
}

/// What the IRQ analysis outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IrqMode {
    Stats,
    Log,
    /// Histograms of handler durations, with this many bins.
    Freq(usize),
}

/// The IRQ analysis.
#[derive(Debug)]
pub(crate) struct Irq {
    common: Common,
    pub mode: IrqMode,
    /// Restrict to these hard IRQs / soft IRQ vectors (None: all). An empty list disables
    /// that kind, as giving only the other filter does in lttng-analyses.
    pub irqs: Option<Vec<i64>>,
    pub softirqs: Option<Vec<u64>>,
    /// Durations bounds (ns) to keep.
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub keep_log: bool,
    /// `--freq-uniform`: the same bins for every histogram.
    pub uniform: Option<Uniform>,
    /// `--freq-series`: the histograms as one table of series.
    pub series: bool,
    pub log: Vec<IrqRecord>,
    hard: BTreeMap<i64, Stats>,
    soft: BTreeMap<u64, SoftStat>,
}

impl Irq {
    pub fn new(common: Common) -> Self {
        Irq {
            common,
            mode: IrqMode::Stats,
            irqs: None,
            softirqs: None,
            min: None,
            max: None,
            keep_log: false,
            uniform: None,
            series: false,
            log: Vec::new(),
            hard: BTreeMap::new(),
            soft: BTreeMap::new(),
        }
    }

    fn dur_ok(&self, d: i64) -> bool {
        self.min.is_none_or(|m| d >= m) && self.max.is_none_or(|m| d <= m)
    }
}

impl Analysis for Irq {
    fn interest(&self) -> Interest {
        Interest::of(&[NoteKind::HardIrqDone, NoteKind::SoftIrqDone]).reading(&[Facet::IrqNames])
    }

    fn notify(&mut self, _state: &State, n: &Notification) {
        match *n {
            Notification::HardIrqDone {
                cpu,
                irq,
                begin,
                end,
            } => {
                if !self.common.cpu_ok(cpu) || !self.dur_ok(end - begin) {
                    return;
                }
                if self.irqs.as_ref().is_some_and(|l| !l.contains(&irq)) {
                    return;
                }
                self.hard.entry(irq).or_default().add(end - begin);
                if self.keep_log {
                    self.log.push(IrqRecord {
                        hard: true,
                        nr: irq,
                        cpu,
                        raise: None,
                        begin,
                        end,
                    });
                }
            }
            Notification::SoftIrqDone {
                cpu,
                vec,
                raise,
                begin,
                end,
            } => {
                if !self.common.cpu_ok(cpu) || !self.dur_ok(end - begin) {
                    return;
                }
                if self.softirqs.as_ref().is_some_and(|l| !l.contains(&vec)) {
                    return;
                }
                let s = self.soft.entry(vec).or_default();
                s.dur.add(end - begin);
                if let Some(r) = raise {
                    s.raise.add(begin - r);
                }
                if self.keep_log {
                    self.log.push(IrqRecord {
                        hard: false,
                        nr: vec as i64,
                        cpu,
                        raise,
                        begin,
                        end,
                    });
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        let irq_name = |hard: bool, nr: i64| {
            if hard {
                state.irq_names.get(&nr).map(|s| s.as_str()).unwrap_or("")
            } else {
                softirq_name(nr as u64)
            }
        };
        let irq_cell = |hard: bool, nr: i64| cell::irq(hard, nr, irq_name(hard, nr));
        match self.mode {
            IrqMode::Stats => {}
            IrqMode::Log => {
                if self.log.is_empty() {
                    return Vec::new();
                }
                let mut t = Table::new("log", range.begin, range.end);
                for r in &self.log {
                    t.rows.push(vec![
                        cell::time_range(r.begin, r.end),
                        r.raise.map(cell::timestamp).unwrap_or(Cell::Null),
                        cell::cpu(r.cpu),
                        irq_cell(r.hard, r.nr),
                    ]);
                }
                return vec![t];
            }
            IrqMode::Freq(bins) => {
                let mut groups: BTreeMap<(bool, i64), Vec<i64>> = BTreeMap::new();
                for r in &self.log {
                    groups
                        .entry((!r.hard, r.nr))
                        .or_default()
                        .push(r.end - r.begin);
                }
                let all: Vec<&[i64]> = groups.values().map(|v| v.as_slice()).collect();
                let (lo, hi) = freq_bounds(&all, self.min, self.max, self.uniform.as_ref());
                let mut out = Vec::new();
                for ((soft, nr), durs) in &groups {
                    let name = irq_name(!soft, *nr);
                    let t = crate::lami::duration_freq_table(
                        format!(
                            "Interrupt handler duration frequency distribution [{name} ({nr})]"
                        ),
                        durs,
                        bins,
                        (lo, hi),
                        (range.begin, range.end),
                    );
                    if !t.rows.is_empty() || self.series {
                        out.push(t);
                    }
                }
                if self.series {
                    return crate::lami::series_table(
                        "Interrupt handlers duration frequency distributions",
                        FREQ_BOUNDS,
                        "interrupts",
                        &out,
                    )
                    .into_iter()
                    .collect();
                }
                return out;
            }
        }
        let sd = |s: &Stats| s.stdev().map(cell::duration).unwrap_or_else(cell::unknown);
        let mut hard = Table::new("hard-stats", range.begin, range.end);
        for (irq, s) in &self.hard {
            hard.rows.push(vec![
                irq_cell(true, *irq),
                cell::number(s.count),
                cell::duration_int(s.min),
                cell::duration(s.avg()),
                cell::duration_int(s.max),
                sd(s),
            ]);
        }
        let mut soft = Table::new("soft-stats", range.begin, range.end);
        for (vec, s) in &self.soft {
            let mut row = vec![
                cell::irq(false, *vec as i64, softirq_name(*vec)),
                cell::number(s.dur.count),
                cell::duration_int(s.dur.min),
                cell::duration(s.dur.avg()),
                cell::duration_int(s.dur.max),
                sd(&s.dur),
                cell::number(s.raise.count),
            ];
            if s.raise.count > 0 {
                row.extend([
                    cell::duration_int(s.raise.min),
                    cell::duration(s.raise.avg()),
                    cell::duration_int(s.raise.max),
                    sd(&s.raise),
                ]);
            } else {
                row.extend([
                    cell::unknown(),
                    cell::unknown(),
                    cell::unknown(),
                    cell::unknown(),
                ]);
            }
            soft.rows.push(row);
        }
        // Like lttng-analyses, a kind of interrupt without any record has no table.
        [hard, soft]
            .into_iter()
            .filter(|t| !t.rows.is_empty())
            .collect()
    }
}
