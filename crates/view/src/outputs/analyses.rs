//! The lttng-analyses tables of `tracekit analyze`, one TABLE output per (analysis, table
//! class) that the analysis gives in its default mode: `cputop`'s per-process, per-CPU and
//! total tables, `iousagetop`'s seven, and so on. An analysis runs once per requested range
//! (the whole trace without `requested_timerange`), over the experiment's traces on its time
//! line (`--sync`), and its result is shared by the outputs of its tables.
//!
//! A class may hold several tables (`syscallstats` gives one `per-tid` table per thread,
//! `schedfreq` one histogram per thread): their rows follow one another, the first column
//! naming the table each row comes from.

use std::sync::{Arc, OnceLock};

use analysis::lami::{Table, TableClass};
use analysis::Common;

use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Every output: (id, analysis, table class). The classes are those the analysis gives in
/// its default mode, in the order it gives them (a test runs each and checks).
pub const TABLES: &[(&str, &str, &str)] = &[
    (
        "tracekit.analysis.cputop.per-process",
        "cputop",
        "per-process",
    ),
    ("tracekit.analysis.cputop.per-cpu", "cputop", "per-cpu"),
    ("tracekit.analysis.cputop.total", "cputop", "total"),
    ("tracekit.analysis.memtop.allocd", "memtop", "allocd"),
    ("tracekit.analysis.memtop.freed", "memtop", "freed"),
    ("tracekit.analysis.memtop.total", "memtop", "total"),
    (
        "tracekit.analysis.syscallstats.per-tid",
        "syscallstats",
        "per-tid",
    ),
    (
        "tracekit.analysis.syscallstats.total",
        "syscallstats",
        "total",
    ),
    (
        "tracekit.analysis.irqstats.hard-stats",
        "irqstats",
        "hard-stats",
    ),
    (
        "tracekit.analysis.irqstats.soft-stats",
        "irqstats",
        "soft-stats",
    ),
    ("tracekit.analysis.irqlog.log", "irqlog", "log"),
    ("tracekit.analysis.irqfreq.freq", "irqfreq", "freq"),
    ("tracekit.analysis.schedlog.log", "schedlog", "log"),
    ("tracekit.analysis.schedfreq.freq", "schedfreq", "freq"),
    ("tracekit.analysis.schedtop.top", "schedtop", "top"),
    (
        "tracekit.analysis.schedstats.per_tid_stats",
        "schedstats",
        "per_tid_stats",
    ),
    (
        "tracekit.analysis.iolatencystats.syscall-latency-stats",
        "iolatencystats",
        "syscall-latency-stats",
    ),
    (
        "tracekit.analysis.iolatencystats.disk-latency-stats",
        "iolatencystats",
        "disk-latency-stats",
    ),
    (
        "tracekit.analysis.iolatencyfreq.freq",
        "iolatencyfreq",
        "freq",
    ),
    (
        "tracekit.analysis.iolatencytop.top-syscall",
        "iolatencytop",
        "top-syscall",
    ),
    ("tracekit.analysis.iolog.log", "iolog", "log"),
    (
        "tracekit.analysis.iousagetop.per-process-top",
        "iousagetop",
        "per-process-top",
    ),
    (
        "tracekit.analysis.iousagetop.per-file-top",
        "iousagetop",
        "per-file-top",
    ),
    (
        "tracekit.analysis.iousagetop.per-process-top-block",
        "iousagetop",
        "per-process-top-block",
    ),
    (
        "tracekit.analysis.iousagetop.per-disk-top-sector",
        "iousagetop",
        "per-disk-top-sector",
    ),
    (
        "tracekit.analysis.iousagetop.per-disk-top-request",
        "iousagetop",
        "per-disk-top-request",
    ),
    (
        "tracekit.analysis.iousagetop.per-disk-top-rps",
        "iousagetop",
        "per-disk-top-rps",
    ),
    (
        "tracekit.analysis.iousagetop.per-netif-top",
        "iousagetop",
        "per-netif-top",
    ),
];

/// The registrations of every output of [`TABLES`], in its order.
pub fn registrations() -> Vec<Registration> {
    macro_rules! each {
        ($($i:literal)*) => { vec![$(registration::<$i>(),)*] };
    }
    let v = each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27);
    debug_assert_eq!(v.len(), TABLES.len());
    v
}

/// The name of each output: the analysis' title and the table class's.
fn titles() -> &'static [String] {
    static TITLES: OnceLock<Vec<String>> = OnceLock::new();
    TITLES.get_or_init(|| {
        (0..TABLES.len())
            .map(|i| {
                let meta = analysis::commands::metadata(TABLES[i].1).expect("a known analysis");
                format!("{}: {}", meta.title, class_of(i).title)
            })
            .collect()
    })
}

/// The table class of entry `i` of [`TABLES`].
fn class_of(i: usize) -> &'static TableClass {
    let (_, name, class) = TABLES[i];
    analysis::commands::metadata(name)
        .and_then(|m| m.table_classes.iter().find(|c| c.name == class))
        .unwrap_or_else(|| panic!("analysis {name} has no table class {class}"))
}

fn registration<const I: usize>() -> Registration {
    let (id, name, _) = TABLES[I];
    let meta = analysis::commands::metadata(name).expect("a known analysis");
    Registration {
        id,
        name: titles()[I].as_str(),
        description: meta.description,
        kind: ProviderType::Table,
        query_parameters: &[
            (
                "requested_timerange",
                "{start, end}: the range analysed (default: the whole trace)",
            ),
            ("limit", "rows of top tables (default 0: every row)"),
        ],
        make: |m| Box::new(AnalysisTable { model: m, index: I }),
    }
}

struct AnalysisTable {
    model: Arc<Model>,
    index: usize,
}

/// The tables of one analysis run.
type Run = Result<Vec<Table>, String>;

impl AnalysisTable {
    fn analysis(&self) -> &'static str {
        TABLES[self.index].1
    }

    /// The tables of the analysis over the requested range, run once per range and limit.
    fn run(&self, p: &Params) -> Result<Arc<Run>, ApiError> {
        let range = p.time_range()?;
        let limit = p.uint("limit")?.unwrap_or(0) as usize;
        let name = self.analysis();
        let key = format!(
            "analysis {name} {:?} {:?} {limit}",
            range.map(|r| r.start),
            range.map(|r| r.end)
        );
        let model = &self.model;
        Ok(model.memo(&key, || {
            let common = Common {
                begin: range.map(|r| r.start),
                end: range.map(|r| r.end).or(model.read_end),
                time_map: model.time_map.clone(),
                no_intersection: true,
                ..Default::default()
            };
            let opts = analysis::Options {
                limit,
                ..Default::default()
            };
            let mut tables = Vec::new();
            analysis::run_names(
                &model.traces,
                &[name],
                &common,
                &opts,
                None,
                &mut |_, mut t| tables = t.remove(0),
            )
            .map(|_| tables)
            .map_err(|e| e.to_string())
        }))
    }
}

impl Output for AnalysisTable {
    fn id(&self) -> &'static str {
        TABLES[self.index].0
    }
    fn model(&self) -> &Model {
        &self.model
    }

    fn columns(&self, _p: &Params) -> Result<Vec<ColumnHeaderEntry>, ApiError> {
        let class = class_of(self.index);
        let mut cols = vec![ColumnHeaderEntry {
            id: 0,
            name: "Table".into(),
            description: "The result table the row belongs to".into(),
            kind: "STRING".into(),
        }];
        cols.extend(class.columns.iter().enumerate().map(|(i, c)| {
            ColumnHeaderEntry {
                id: i as i64 + 1,
                name: match c.unit {
                    Some(u) => format!("{} ({u})", c.title),
                    None => c.title.to_string(),
                },
                description: format!("LAMI {}", c.class),
                kind: match c.class {
                    "number" | "ratio" | "duration" | "size" | "cpu" | "fd" => "NUMBER",
                    "timestamp" => "TIMESTAMP",
                    _ => "STRING",
                }
                .into(),
            }
        }));
        Ok(cols)
    }

    fn lines(&self, p: &Params) -> Result<TableModel, ApiError> {
        let run = self.run(p)?;
        let tables = run
            .as_ref()
            .as_ref()
            .map_err(|e| ApiError::Internal(format!("analysis {}: {e}", self.analysis())))?;
        let class = class_of(self.index);
        let ncols = class.columns.len() + 1;
        let columns = p.column_ids(&(0..ncols as i64).collect::<Vec<_>>())?;
        let index = p.uint("requested_table_index")?.unwrap_or(0);
        let count = p.uint("requested_table_count")?.unwrap_or(u64::MAX);
        let rows = tables
            .iter()
            .filter(|t| t.class == class.name && t.inline.is_none())
            .flat_map(|t| {
                let title = t.title.as_deref().unwrap_or(class.title);
                t.rows.iter().map(move |r| (title, r))
            });
        Ok(super::table_page(
            rows,
            index,
            count,
            columns,
            |(title, row), c| match c {
                0 => title.to_string(),
                c => row
                    .get(c as usize - 1)
                    .map(|cell| analysis::text::cell_text(cell).0)
                    .unwrap_or_default(),
            },
        ))
    }
}
