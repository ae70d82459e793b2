//! Critical Path: what a chosen thread waited for, as `tracekit critpath --json` computes it
//! (the same segments), one row per thread the path goes through under its host, arrows
//! where the path jumps from one thread (or host) to another.
//!
//! The thread is given in every query's parameters: `tid` with `host` (its host name, when
//! the tid exists on several hosts), or `thread_row` (a Control Flow entry id); optionally
//! `begin`/`end` (ns) bound the path (default: the whole trace).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use critpath::report::Report;
use timeline::RowKind;

use super::{styles, Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's critical path provider).
pub const ID: &str =
    "org.eclipse.tracecompass.analysis.graph.core.dataprovider.CriticalPathDataProvider";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "Critical Path",
        description: "What a thread waited for, across threads and hosts (tracekit critpath)",
        kind: ProviderType::TimeGraph,
        query_parameters: &[
            ("tid", "the thread to follow"),
            ("host", "its host name, when the tid is on several hosts"),
            (
                "thread_row",
                "or: a Control Flow entry id standing for the thread",
            ),
            (
                "begin",
                "start of the path (ns; default: the trace's start)",
            ),
            ("end", "end of the path (ns; default: the trace's end)"),
        ],
        make: |m| {
            Box::new(CriticalPath {
                model: m,
                cache: Mutex::new(HashMap::new()),
            })
        },
    }
}

type Key = (i64, Option<String>, Option<i64>, Option<i64>);

/// A computed path laid out as rows.
struct Laid {
    report: Report,
    /// (host, tid, comm) of each thread row; row id = index + number of hosts.
    threads: Vec<(String, i64, String)>,
    hosts: Vec<String>,
    /// Row of each segment.
    seg_rows: Vec<i64>,
}

struct CriticalPath {
    model: Arc<Model>,
    cache: Mutex<HashMap<Key, Arc<Laid>>>,
}

impl CriticalPath {
    fn key(&self, p: &Params) -> Result<Key, ApiError> {
        let begin = p.int("begin")?;
        let end = p.int("end")?;
        if let Some(row) = p.int("thread_row")? {
            let tl = &self.model.timeline;
            let r = usize::try_from(row)
                .ok()
                .and_then(|i| tl.rows.get(i))
                .ok_or_else(|| ApiError::param("thread_row", format!("no entry {row}")))?;
            let RowKind::Thread { tid, .. } = r.kind else {
                return Err(ApiError::param(
                    "thread_row",
                    format!("entry {row} is not a thread"),
                ));
            };
            return Ok((
                tid.into(),
                Some(self.model.host_name(r.host).to_string()),
                begin,
                end,
            ));
        }
        let tid = p.int("tid")?.ok_or_else(|| {
            ApiError::param(
                "tid",
                "missing (the thread to follow: tid, with host when needed, or thread_row)",
            )
        })?;
        Ok((tid, p.string("host")?.map(str::to_string), begin, end))
    }

    fn laid(&self, p: &Params) -> Result<Arc<Laid>, ApiError> {
        let key = self.key(p)?;
        if let Some(l) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(l);
        }
        let built = self.model.critpath();
        let report = critpath::path_of_thread(&built, key.0, key.1.as_deref(), key.2, key.3, true)
            .map_err(|e| ApiError::param("tid", e.to_string()))?;
        let mut hosts: Vec<String> = Vec::new();
        let mut threads: Vec<(String, i64, String)> = Vec::new();
        let mut seg_rows = Vec::with_capacity(report.path.len());
        for s in &report.path {
            if !hosts.contains(&s.host) {
                hosts.push(s.host.clone());
            }
            let i = match threads.iter().position(|t| t.0 == s.host && t.1 == s.tid) {
                Some(i) => i,
                None => {
                    threads.push((s.host.clone(), s.tid, s.comm.clone()));
                    threads.len() - 1
                }
            };
            seg_rows.push(i as i64);
        }
        let nh = hosts.len() as i64;
        for r in &mut seg_rows {
            *r += nh;
        }
        let l = Arc::new(Laid {
            report,
            threads,
            hosts,
            seg_rows,
        });
        if let Ok(mut c) = self.cache.lock() {
            if c.len() > 64 {
                c.clear();
            }
            c.insert(key, l.clone());
        }
        Ok(l)
    }
}

impl Output for CriticalPath {
    fn id(&self) -> &'static str {
        ID
    }
    fn model(&self) -> &Model {
        &self.model
    }

    fn tree(&self, p: &Params) -> Result<EntryModel, ApiError> {
        let l = self.laid(p)?;
        let (start, end) = (
            l.report.path.first().map(|s| s.start).unwrap_or(0),
            l.report.path.last().map(|s| s.end).unwrap_or(0),
        );
        let mut entries: Vec<Entry> = l
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| Entry {
                id: i as i64,
                parent_id: -1,
                labels: vec![h.clone(), String::new()],
                start: Some(start),
                end: Some(end),
                has_data: false,
                style: None,
                metadata: Default::default(),
            })
            .collect();
        let nh = l.hosts.len() as i64;
        for (i, (host, tid, comm)) in l.threads.iter().enumerate() {
            let mut metadata = BTreeMap::new();
            metadata.insert("host".to_string(), vec![host.clone().into()]);
            metadata.insert("tid".to_string(), vec![(*tid).into()]);
            entries.push(Entry {
                id: nh + i as i64,
                parent_id: l.hosts.iter().position(|h| h == host).unwrap_or(0) as i64,
                labels: vec![comm.clone(), tid.to_string()],
                start: Some(start),
                end: Some(end),
                has_data: true,
                style: None,
                metadata,
            });
        }
        Ok(EntryModel {
            headers: vec![
                EntryHeader {
                    name: "Thread".into(),
                    tooltip: "Host, then the threads on the path".into(),
                },
                EntryHeader {
                    name: "TID".into(),
                    tooltip: String::new(),
                },
            ],
            entries,
            auto_expand_level: -1,
        })
    }

    fn states(&self, p: &Params) -> Result<TimeGraphModel, ApiError> {
        let range = p.required_time_range()?;
        let l = self.laid(p)?;
        let nh = l.hosts.len() as i64;
        let wanted: Option<Vec<i64>> = p.int_list("requested_items")?;
        let mut rows: Vec<TimeGraphRow> = (0..l.threads.len())
            .map(|i| TimeGraphRow {
                entry_id: nh + i as i64,
                states: Vec::new(),
            })
            .collect();
        for (s, r) in l.report.path.iter().zip(&l.seg_rows) {
            if s.end < range.start || s.start > range.end {
                continue;
            }
            rows[(r - nh) as usize].states.push(TimeGraphState {
                start: s.start,
                end: s.end,
                label: Some(s.state.to_string()),
                style: Some(OutputElementStyle::key(styles::critpath_key(s.state))),
                tags: None,
            });
        }
        if let Some(w) = wanted {
            rows.retain(|r| w.contains(&r.entry_id));
        }
        Ok(TimeGraphModel { rows })
    }

    fn arrows(&self, p: &Params) -> Result<Vec<TimeGraphArrow>, ApiError> {
        let range = p.required_time_range()?;
        let l = self.laid(p)?;
        let mut out = Vec::new();
        for (i, w) in l.seg_rows.windows(2).enumerate() {
            let (a, b) = (&l.report.path[i], &l.report.path[i + 1]);
            if w[0] != w[1] && b.start >= range.start && a.end <= range.end {
                out.push(TimeGraphArrow {
                    source_id: w[0],
                    target_id: w[1],
                    start: a.end,
                    end: b.start,
                    style: Some(OutputElementStyle::key("CRITPATH_LINK")),
                });
            }
        }
        Ok(out)
    }

    fn tooltip(&self, p: &Params) -> Result<BTreeMap<String, String>, ApiError> {
        let l = self.laid(p)?;
        let row = p
            .int_list("requested_items")?
            .and_then(|v| v.first().copied())
            .ok_or_else(|| ApiError::param("requested_items", "missing"))?;
        let t = p
            .int_list("requested_times")?
            .and_then(|v| v.first().copied())
            .ok_or_else(|| ApiError::param("requested_times", "missing"))?;
        let mut out = BTreeMap::new();
        if let Some((s, _)) = l
            .report
            .path
            .iter()
            .zip(&l.seg_rows)
            .find(|(s, r)| **r == row && s.start <= t && t < s.end.max(s.start + 1))
        {
            out.insert("State".into(), s.state.to_string());
            out.insert("Host".into(), s.host.clone());
            out.insert("TID".into(), s.tid.to_string());
            out.insert("Process".into(), s.comm.clone());
            out.insert("Start".into(), s.start.to_string());
            out.insert("End".into(), s.end.to_string());
            out.insert("Duration".into(), format!("{} ns", s.end - s.start));
            if let Some(c) = s.cpu {
                out.insert("CPU".into(), c.to_string());
            }
        }
        Ok(out)
    }

    fn styles(&self, _p: &Params) -> Result<OutputStyleModel, ApiError> {
        Ok(styles::critpath_styles())
    }
}
