//! CPU Usage: per host, the share of its CPUs running threads over time (total, and each
//! selected thread), with a tree of the threads' CPU time in the range.

use std::sync::Arc;

use timeline::RowKind;

use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's CPU usage provider).
pub const ID: &str =
    "org.eclipse.tracecompass.analysis.os.linux.core.cpuusage.CpuUsageDataProvider";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "CPU Usage",
        description: "Share of each host's CPUs in use over time: total (the host's entry) and selected threads",
        kind: ProviderType::TreeTimeXy,
        query_parameters: &[],
        make: |m| Box::new(CpuUsage { model: m }),
    }
}

/// Sample points of an XY query without `nbTimes`.
const DEFAULT_POINTS: u64 = 500;

struct CpuUsage {
    model: Arc<Model>,
}

impl CpuUsage {
    fn cpus(&self, host: u32) -> usize {
        self.model
            .timeline
            .rows
            .iter()
            .filter(|r| r.host == host && matches!(r.kind, RowKind::Cpu { .. }))
            .count()
            .max(1)
    }
}

impl Output for CpuUsage {
    fn id(&self) -> &'static str {
        ID
    }
    fn model(&self) -> &Model {
        &self.model
    }

    /// The hosts (their entry is the total) and, under each, the threads that ran in the
    /// range, most CPU time first.
    fn tree(&self, p: &Params) -> Result<EntryModel, ApiError> {
        let tl = &self.model.timeline;
        let (start, end) = match p.time_range()? {
            Some(r) => (r.start, r.end),
            None => (tl.start, tl.end),
        };
        let span = (end as i128 - start as i128).max(1) as f64;
        let mut entries = Vec::new();
        for h in &tl.hosts {
            let hi = tl.rows.get(h.row as usize).map(|r| r.host).unwrap_or(0);
            let times = tl.cpu_time(hi, start, end);
            let total: i64 = times.iter().map(|t| t.1).sum();
            let share = |t: i64| 100.0 * t as f64 / (span * self.cpus(hi) as f64);
            entries.push(Entry {
                id: h.row as i64,
                parent_id: -1,
                labels: vec![
                    h.name.clone(),
                    "Total".into(),
                    format!("{:.1} %", share(total)),
                    total.to_string(),
                ],
                start: None,
                end: None,
                has_data: true,
                style: None,
                metadata: Default::default(),
            });
            for (row, t) in times {
                let Some(r) = tl.rows.get(row as usize) else {
                    continue;
                };
                let tid = match r.kind {
                    RowKind::Thread { tid, .. } => tid.to_string(),
                    _ => String::new(),
                };
                entries.push(Entry {
                    id: row as i64,
                    parent_id: h.row as i64,
                    labels: vec![
                        r.label.clone(),
                        tid,
                        format!("{:.1} %", share(t)),
                        t.to_string(),
                    ],
                    start: None,
                    end: None,
                    has_data: true,
                    style: None,
                    metadata: Default::default(),
                });
            }
        }
        Ok(EntryModel {
            headers: ["Process", "TID", "%", "Time (ns)"]
                .iter()
                .map(|n| EntryHeader {
                    name: n.to_string(),
                    tooltip: String::new(),
                })
                .collect(),
            entries,
            auto_expand_level: 1,
        })
    }

    /// The series of `requested_items` (a host's entry: its total; a thread's: its usage),
    /// every host's total when absent.
    fn xy(&self, p: &Params) -> Result<XyModel, ApiError> {
        let tl = &self.model.timeline;
        let range = p.required_time_range()?;
        let n = range.nb_times.unwrap_or(DEFAULT_POINTS) as usize;
        let x = range.samples(n);
        let items: Vec<u32> = match p.int_list("requested_items")? {
            None => tl.hosts.iter().map(|h| h.row).collect(),
            Some(v) => v
                .into_iter()
                .map(|i| {
                    u32::try_from(i)
                        .ok()
                        .filter(|&i| {
                            tl.rows.get(i as usize).is_some_and(|r| {
                                matches!(r.kind, RowKind::Host | RowKind::Thread { .. })
                            })
                        })
                        .ok_or_else(|| {
                            ApiError::param(
                                "requested_items",
                                format!("{i} is not a host or thread entry"),
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let mut series = Vec::new();
        for id in items {
            let r = &tl.rows[id as usize];
            let (threads, name): (Vec<u32>, String) = match r.kind {
                RowKind::Host => (
                    Vec::new(),
                    format!("{} total", self.model.host_name(r.host)),
                ),
                _ => (
                    vec![id],
                    format!("{} ({})", r.label, self.model.host_name(r.host)),
                ),
            };
            // Rounded to 10⁻⁶ %: a value of 16 digits or more is taken for a big integer by
            // some JavaScript JSON parsers (json-bigint 1.0.0, which TSP clients use).
            let y = tl
                .cpu_usage(r.host, &threads, range.start, range.end, n)
                .into_iter()
                .map(|v| (v * 1e6).round() / 1e6)
                .collect();
            series.push(XySeries {
                series_name: name,
                series_id: id as i64,
                x_values_description: XyAxisDescription::new("Time", "ns", "TIMESTAMP"),
                y_values_description: XyAxisDescription::new("CPU usage", "%", "NUMBER"),
                x_values: x.clone(),
                y_values: y,
                style: OutputElementStyle {
                    parent_key: None,
                    values: [("series-type".to_string(), "line".into())].into(),
                },
            });
        }
        Ok(XyModel {
            title: "CPU Usage".into(),
            series,
        })
    }
}
