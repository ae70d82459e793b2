//! Latency views, from the latency trackers of `tracekit latency` (wake-up, off-CPU, system
//! call, block request, IRQ) run over each host with no threshold: every matched latency; and
//! from the period engine of `tracekit analyze periodlog` when the server has user-defined
//! periods (`tracekit view --period`): every completed period, a series per definition.
//!
//! * Scatter ([`SCATTER`], XY over time): per tracker, the longest latency starting in each
//!   time bucket (a bucket per requested time), so outliers stay visible at any zoom.
//! * Density ([`DENSITY`], XY over durations): per tracker, how many latencies fall in each
//!   of `nbTimes` equal duration buckets from 0 to the longest in the range.
//! * Table ([`TABLE`]): every latency starting in the range, by start time (`tracker`
//!   parameter: one tracker's only).
//!
//! Tree entries, shared by the three: host `h` is entry `h * STRIDE`, its series
//! `h * STRIDE + 1 + k`: k is a position in [`latency::Tracker::ALL`], then, after the
//! trackers, a period definition's position (see [`kinds`]).

use std::collections::HashMap;
use std::sync::Arc;

use latency::{Config, Tracker};

use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// The scatter output's id.
pub const SCATTER: &str = "tracekit.latency.scatter";
/// The density output's id.
pub const DENSITY: &str = "tracekit.latency.density";
/// The table output's id.
pub const TABLE: &str = "tracekit.latency.table";

/// Entry ids per host.
pub const STRIDE: i64 = 256;

/// The most period definitions the latency views show (the series of a host must fit its
/// [`STRIDE`] of entry ids).
pub const MAX_PERIODS: usize = STRIDE as usize - 1 - Tracker::ALL.len();

/// One measured latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Start (ns, on the experiment's time line).
    pub begin: i64,
    /// Duration (ns).
    pub latency: i64,
    /// The thread measured (−1: none).
    pub tid: i32,
    /// The CPU (u32::MAX: unknown).
    pub cpu: u32,
    /// The host (timeline host index).
    pub host: u32,
    /// The series: a [`Tracker::ALL`] position, or after them a period definition's (see
    /// [`kinds`]).
    pub tracker: u8,
    /// What was measured ([`Latencies::details`] index).
    pub detail: u32,
}

/// Every latency of an experiment, by start time.
#[derive(Debug, Default)]
pub struct Latencies {
    /// The latencies.
    pub all: Vec<Latency>,
    /// The details' texts (system call names, IRQs, devices and sectors, thread states).
    pub details: Vec<String>,
    /// The command names of the measured threads.
    pub comms: HashMap<(u32, i32), String>,
    /// Read problems.
    pub errors: Vec<String>,
}

/// The latencies of `model`, measured on first use (a read of every host).
pub fn latencies(model: &Model) -> Arc<Latencies> {
    model.memo("latencies", || measure(model))
}

fn measure(model: &Model) -> Latencies {
    let mut out = Latencies::default();
    let mut interned: HashMap<String, u32> = HashMap::new();
    // One run per host (the model's hosts, in its order): the trackers key threads and CPUs by
    // number, which hosts share.
    let groups = timeline::hosts(&model.traces);
    let config = Config {
        threshold: 0,
        timeout: None,
        max_pending: usize::MAX,
    };
    for (host, (_, traces)) in groups.into_iter().enumerate() {
        let host = host as u32;
        let summary = latency::run_traces_mapped(
            &traces,
            model.time_map.clone(),
            &Tracker::ALL,
            config,
            |r| -> Result<(), std::convert::Infallible> {
                let next = interned.len() as u32;
                let detail = *interned.entry(r.detail.clone()).or_insert_with(|| {
                    out.details.push(r.detail.clone());
                    next
                });
                let tid = r.tid.unwrap_or(-1);
                if let Some(c) = r.comm {
                    out.comms.insert((host, tid), c);
                }
                out.all.push(Latency {
                    begin: r.begin,
                    latency: r.latency,
                    tid,
                    cpu: r.cpu.unwrap_or(u32::MAX),
                    host,
                    tracker: Tracker::ALL
                        .iter()
                        .position(|t| *t == r.tracker)
                        .unwrap_or(0) as u8,
                    detail,
                });
                Ok(())
            },
        );
        // The trackers' counters (skipped entries…) are not shown: no threshold nor pending
        // limit applies here, so every matched latency is in `all`.
        let Ok(_summary) = summary;
        if !model.periods.periods.is_empty() {
            measure_periods(model, host, &traces, &mut out, &mut interned);
        }
    }
    out.all.sort_by_key(|l| (l.begin, l.host, l.tracker));
    out
}

/// Adds the completed periods of one host: each one's begin and duration, its captures as
/// the detail.
fn measure_periods(
    model: &Model,
    host: u32,
    traces: &[Arc<ctf::Trace>],
    out: &mut Latencies,
    interned: &mut HashMap<String, u32>,
) {
    let common = analysis::Common {
        time_map: model.time_map.clone(),
        no_intersection: true,
        ..Default::default()
    };
    let opts = analysis::period::PeriodOptions {
        periods: model.periods.periods.clone(),
        captures: model.periods.captures.clone(),
        reports: vec![analysis::period::PeriodCmd::Log],
        ..Default::default()
    };
    let res = match analysis::period::run(traces, &common, &opts) {
        Ok(r) => r,
        Err(e) => {
            out.errors.push(format!("periods: {e}"));
            return;
        }
    };
    out.errors.extend(res.errors);
    let first = Tracker::ALL.len();
    for p in res.done.iter().filter(|p| p.def < MAX_PERIODS) {
        let caps: Vec<String> = p
            .begin_caps
            .iter()
            .chain(&p.end_caps)
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        let text = caps.join(", ");
        let next = interned.len() as u32;
        let detail = *interned.entry(text.clone()).or_insert_with(|| {
            out.details.push(text);
            next
        });
        let tid = ["tid", "next_tid", "prev_tid"]
            .iter()
            .find_map(|n| p.begin_caps.iter().find(|(c, _)| c == n))
            .and_then(|(_, v)| match v {
                analysis::period_expr::Val::Int(t) => i32::try_from(*t).ok(),
                _ => None,
            })
            .unwrap_or(-1);
        out.all.push(Latency {
            begin: p.begin,
            latency: p.end - p.begin,
            tid,
            cpu: u32::MAX,
            host,
            tracker: (first + p.def) as u8,
            detail,
        });
    }
}

/// The series every host has: the trackers' names, then `period:NAME` per user-defined
/// period (at most [`MAX_PERIODS`]).
pub fn kinds(model: &Model) -> Vec<String> {
    let periods =
        analysis::period::definition_names(&model.periods.periods, &model.periods.captures)
            .unwrap_or_default();
    Tracker::ALL
        .iter()
        .map(|t| t.name().to_string())
        .chain(
            periods
                .iter()
                .take(MAX_PERIODS)
                .map(|n| format!("period:{n}")),
        )
        .collect()
}

/// The tree shared by the three outputs: hosts, and their trackers.
fn tracker_tree(model: &Model) -> EntryModel {
    let mut entries = Vec::new();
    for (h, host) in model.timeline.hosts.iter().enumerate() {
        let hid = h as i64 * STRIDE;
        entries.push(entry(hid, -1, &host.name));
        for (k, name) in kinds(model).iter().enumerate() {
            entries.push(entry(hid + 1 + k as i64, hid, name));
        }
    }
    EntryModel {
        headers: vec![EntryHeader {
            name: "Tracker".into(),
            tooltip: String::new(),
        }],
        entries,
        auto_expand_level: -1,
    }
}

fn entry(id: i64, parent_id: i64, label: &str) -> Entry {
    Entry {
        id,
        parent_id,
        labels: vec![label.to_string()],
        start: None,
        end: None,
        has_data: parent_id >= 0,
        style: None,
        metadata: Default::default(),
    }
}

/// The (host, tracker) of each requested series entry (every tracker of every host when none
/// is requested; a host entry stands for its trackers).
fn requested_series(model: &Model, p: &Params) -> Result<Vec<(u32, u8)>, ApiError> {
    let hosts = model.timeline.hosts.len() as i64;
    let n = kinds(model).len();
    let all = |h: i64| (0..n).map(move |k| (h as u32, k as u8));
    match p.int_list("requested_items")? {
        None => Ok((0..hosts).flat_map(all).collect()),
        Some(items) => {
            let mut out = Vec::new();
            for i in items {
                let (h, k) = (i.div_euclid(STRIDE), i.rem_euclid(STRIDE));
                if i < 0 || h >= hosts || k > n as i64 {
                    return Err(ApiError::param(
                        "requested_items",
                        format!("{i} is not an entry of this output"),
                    ));
                }
                if k == 0 {
                    out.extend(all(h));
                } else {
                    out.push((h as u32, (k - 1) as u8));
                }
            }
            Ok(out)
        }
    }
}

fn series_name(model: &Model, host: u32, tracker: u8) -> String {
    let kinds = kinds(model);
    let t = kinds.get(tracker as usize).map_or("?", |k| k.as_str());
    if model.timeline.hosts.len() > 1 {
        format!("{}/{t}", model.host_name(host))
    } else {
        t.to_string()
    }
}

/// The latencies starting in `[start, end]`.
fn in_range(l: &Latencies, start: i64, end: i64) -> &[Latency] {
    let a = l.all.partition_point(|x| x.begin < start);
    let b = l.all.partition_point(|x| x.begin <= end);
    &l.all[a..b.max(a)]
}

/// Its registrations.
pub fn registrations() -> Vec<Registration> {
    vec![
        Registration {
            id: SCATTER,
            name: "Latency scatter",
            description: "The longest wake-up, off-CPU, system call, block and IRQ latency \
                          (and user-defined period) starting in each time bucket",
            kind: ProviderType::TreeTimeXy,
            query_parameters: &[],
            make: |m| Box::new(Scatter { model: m }),
        },
        Registration {
            id: DENSITY,
            name: "Latency density",
            description: "How many latencies of each tracker fall in each duration bucket",
            kind: ProviderType::TreeGenericXy,
            query_parameters: &[],
            make: |m| Box::new(Density { model: m }),
        },
        Registration {
            id: TABLE,
            name: "Latencies",
            description: "Every latency the trackers measured, by start time",
            kind: ProviderType::Table,
            query_parameters: &[(
                "tracker",
                "wakeup, offcpu, syscall, block, irq or period:NAME: that tracker's \
                 latencies (or that period's) only",
            )],
            make: |m| Box::new(Table { model: m }),
        },
    ]
}

struct Scatter {
    model: Arc<Model>,
}

impl Output for Scatter {
    fn id(&self) -> &'static str {
        SCATTER
    }
    fn model(&self) -> &Model {
        &self.model
    }
    fn tree(&self, _p: &Params) -> Result<EntryModel, ApiError> {
        Ok(tracker_tree(&self.model))
    }

    fn xy(&self, p: &Params) -> Result<XyModel, ApiError> {
        let range = p.required_time_range()?;
        let series = requested_series(&self.model, p)?;
        let n = range.nb_times.unwrap_or(500) as usize;
        let step = range.resolution(500) as i128;
        let lat = latencies(&self.model);
        let mut out = Vec::new();
        for (host, tracker) in series {
            // The longest latency per bucket: (bucket, its start, latency).
            let mut best: Vec<Option<(i64, i64)>> = vec![None; n];
            for l in in_range(&lat, range.start, range.end)
                .iter()
                .filter(|l| l.host == host && l.tracker == tracker)
            {
                let b = (((l.begin as i128 - range.start as i128) / step) as usize).min(n - 1);
                if best[b].is_none_or(|(_, d)| l.latency > d) {
                    best[b] = Some((l.begin, l.latency));
                }
            }
            let (xs, ys): (Vec<i64>, Vec<f64>) = best
                .into_iter()
                .flatten()
                .map(|(x, y)| (x, y as f64))
                .unzip();
            let mut style = OutputElementStyle::key("LATENCY");
            style
                .values
                .insert("series-type".into(), serde_json::json!("scatter"));
            out.push(XySeries {
                series_name: series_name(&self.model, host, tracker),
                series_id: host as i64 * STRIDE + 1 + tracker as i64,
                x_values_description: XyAxisDescription::new("Time", "ns", "TIMESTAMP"),
                y_values_description: XyAxisDescription::new("Latency", "ns", "DURATION"),
                x_values: xs,
                y_values: ys,
                style,
            });
        }
        Ok(XyModel {
            title: "Latency scatter".into(),
            series: out,
        })
    }
}

struct Density {
    model: Arc<Model>,
}

impl Output for Density {
    fn id(&self) -> &'static str {
        DENSITY
    }
    fn model(&self) -> &Model {
        &self.model
    }
    fn tree(&self, _p: &Params) -> Result<EntryModel, ApiError> {
        Ok(tracker_tree(&self.model))
    }

    fn xy(&self, p: &Params) -> Result<XyModel, ApiError> {
        let (start, end, n) = match p.time_range()? {
            Some(r) => (r.start, r.end, r.nb_times.unwrap_or(100) as usize),
            None => (i64::MIN, i64::MAX, 100),
        };
        let series = requested_series(&self.model, p)?;
        let lat = latencies(&self.model);
        let chosen: Vec<&Latency> = in_range(&lat, start, end)
            .iter()
            .filter(|l| series.contains(&(l.host, l.tracker)))
            .collect();
        // Equal buckets from 0 to the longest latency of the chosen series, so the series
        // share an x axis.
        let longest = chosen.iter().map(|l| l.latency).max().unwrap_or(0).max(1);
        let width = (longest / n as i64 + 1).max(1);
        let xs: Vec<i64> = (0..n as i64).map(|i| i * width).collect();
        let mut out = Vec::new();
        for (host, tracker) in series {
            let mut counts = vec![0f64; n];
            for l in chosen
                .iter()
                .filter(|l| l.host == host && l.tracker == tracker)
            {
                counts[((l.latency / width) as usize).min(n - 1)] += 1.0;
            }
            let mut style = OutputElementStyle::key("LATENCY");
            style
                .values
                .insert("series-type".into(), serde_json::json!("bar"));
            out.push(XySeries {
                series_name: series_name(&self.model, host, tracker),
                series_id: host as i64 * STRIDE + 1 + tracker as i64,
                x_values_description: XyAxisDescription::new("Latency", "ns", "DURATION"),
                y_values_description: XyAxisDescription::new("Count", "", "NUMBER"),
                x_values: xs.clone(),
                y_values: counts,
                style,
            });
        }
        Ok(XyModel {
            title: "Latency density".into(),
            series: out,
        })
    }
}

struct Table {
    model: Arc<Model>,
}

/// The table's columns: (id, name, type).
const COLUMNS: &[(i64, &str, &str)] = &[
    (0, "Start", "TIMESTAMP"),
    (1, "Duration (ns)", "NUMBER"),
    (2, "Tracker", "STRING"),
    (3, "Host", "STRING"),
    (4, "TID", "NUMBER"),
    (5, "Thread", "STRING"),
    (6, "CPU", "NUMBER"),
    (7, "Detail", "STRING"),
];

impl Output for Table {
    fn id(&self) -> &'static str {
        TABLE
    }
    fn model(&self) -> &Model {
        &self.model
    }

    fn columns(&self, _p: &Params) -> Result<Vec<ColumnHeaderEntry>, ApiError> {
        Ok(COLUMNS
            .iter()
            .map(|(id, name, t)| ColumnHeaderEntry {
                id: *id,
                name: name.to_string(),
                description: String::new(),
                kind: t.to_string(),
            })
            .collect())
    }

    fn lines(&self, p: &Params) -> Result<TableModel, ApiError> {
        let kinds = kinds(&self.model);
        let tracker = match p.string("tracker")? {
            None => None,
            Some(name) => Some(kinds.iter().position(|k| *k == name).ok_or_else(|| {
                ApiError::param(
                    "tracker",
                    format!("{name:?}: expected one of {}", kinds.join(", ")),
                )
            })? as u8),
        };
        let (start, end) = match p.time_range()? {
            Some(r) => (r.start, r.end),
            None => (i64::MIN, i64::MAX),
        };
        let index = p.uint("requested_table_index")?.unwrap_or(0);
        let count = p.table_count()?.unwrap_or(1000);
        let all: Vec<i64> = COLUMNS.iter().map(|c| c.0).collect();
        let columns = p.column_ids(&all)?;
        let lat = latencies(&self.model);
        let rows = in_range(&lat, start, end)
            .iter()
            .filter(|l| tracker.is_none_or(|t| l.tracker == t));
        Ok(super::table_page(
            rows,
            index,
            count,
            columns,
            |l, c| match c {
                0 => l.begin.to_string(),
                1 => l.latency.to_string(),
                2 => kinds.get(l.tracker as usize).cloned().unwrap_or_default(),
                3 => self.model.host_name(l.host).to_string(),
                4 if l.tid >= 0 => l.tid.to_string(),
                5 => lat.comms.get(&(l.host, l.tid)).cloned().unwrap_or_default(),
                6 if l.cpu != u32::MAX => l.cpu.to_string(),
                7 => lat.details[l.detail as usize].clone(),
                _ => String::new(),
            },
        ))
    }
}
