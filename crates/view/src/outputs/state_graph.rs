//! What the Control Flow and Resources views share: a time graph over a subset of the state
//! model's rows, entry ids being the model's row ids.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use timeline::{Row, Span};

use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::{
    Entry, EntryHeader, EntryModel, OutputElementStyle, OutputStyleModel, TimeGraphArrow,
    TimeGraphModel, TimeGraphRow, TimeGraphState,
};

use super::styles;

/// A time graph of the model's rows that `keep` accepts (and their ancestors).
pub struct StateGraph {
    pub(crate) model: Arc<Model>,
    /// The listed rows, parents first.
    pub(crate) rows: Vec<u32>,
    listed: Vec<bool>,
    headers: &'static [(&'static str, &'static str)],
    labels: fn(&Model, &Row) -> Vec<String>,
}

/// The resolution steps of a time range without `nbTimes`.
const DEFAULT_STEPS: u64 = 2000;

impl StateGraph {
    /// The graph of the rows `keep` accepts.
    pub fn new(
        model: Arc<Model>,
        keep: impl Fn(&Row) -> bool,
        headers: &'static [(&'static str, &'static str)],
        labels: fn(&Model, &Row) -> Vec<String>,
    ) -> Self {
        let rows = super::rows_with_ancestors(&model, keep);
        let mut listed = vec![false; model.timeline.rows.len()];
        for &r in &rows {
            listed[r as usize] = true;
        }
        StateGraph {
            model,
            rows,
            listed,
            headers,
            labels,
        }
    }

    fn is_listed(&self, i: i64) -> bool {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.listed.get(i))
            .copied()
            .unwrap_or(false)
    }

    /// The tree.
    pub fn tree(&self) -> EntryModel {
        let tl = &self.model.timeline;
        let entries = self
            .rows
            .iter()
            .map(|&id| {
                let r = &tl.rows[id as usize];
                let mut metadata = BTreeMap::new();
                metadata.insert(
                    "host".to_string(),
                    vec![self.model.host_name(r.host).into()],
                );
                if let timeline::RowKind::Thread { tid, pid, .. } = r.kind {
                    metadata.insert("tid".to_string(), vec![tid.into()]);
                    if let Some(pid) = pid {
                        metadata.insert("pid".to_string(), vec![pid.into()]);
                    }
                }
                Entry {
                    id: id as i64,
                    parent_id: super::parent_of(&self.model, id),
                    labels: (self.labels)(&self.model, r),
                    start: Some(r.start),
                    end: Some(r.end),
                    has_data: !matches!(r.kind, timeline::RowKind::Host),
                    style: None,
                    metadata,
                }
            })
            .collect();
        EntryModel {
            headers: self
                .headers
                .iter()
                .map(|(n, t)| EntryHeader {
                    name: n.to_string(),
                    tooltip: t.to_string(),
                })
                .collect(),
            entries,
            auto_expand_level: -1,
        }
    }

    fn requested(&self, p: &Params) -> Result<Vec<u32>, ApiError> {
        super::requested_rows(p, &self.rows, |i| self.is_listed(i))
    }

    /// The states of the requested rows.
    pub fn states(&self, p: &Params) -> Result<TimeGraphModel, ApiError> {
        let range = p.required_time_range()?;
        let res = range.resolution(DEFAULT_STEPS);
        let tl = &self.model.timeline;
        let ids: Vec<u32> = self
            .requested(p)?
            .into_iter()
            .filter(|&id| !matches!(tl.rows[id as usize].kind, timeline::RowKind::Host))
            .collect();
        // Rows are independent: queried in parallel (a zoom over all rows is the query the
        // viewer waits for).
        let rows = ids
            .into_par_iter()
            .map(|id| TimeGraphRow {
                entry_id: id as i64,
                states: tl
                    .states(id, range.start, range.end, res)
                    .iter()
                    .map(state)
                    .collect(),
            })
            .collect();
        Ok(TimeGraphModel { rows })
    }

    /// The wake-up arrows touching the requested rows.
    pub fn arrows(&self, p: &Params) -> Result<Vec<TimeGraphArrow>, ApiError> {
        let range = p.required_time_range()?;
        let res = range.resolution(DEFAULT_STEPS);
        let rows = match p.get("requested_items") {
            Some(_) => self.requested(p)?,
            None => Vec::new(),
        };
        Ok(self
            .model
            .timeline
            .arrows(&rows, range.start, range.end, res)
            .into_iter()
            .filter(|a| self.is_listed(a.source.into()) && self.is_listed(a.target.into()))
            .map(|a| TimeGraphArrow {
                source_id: a.source.into(),
                target_id: a.target.into(),
                start: a.start,
                end: a.end,
                style: Some(OutputElementStyle::key(match a.kind {
                    timeline::ArrowKind::Wakeup => "WAKEUP",
                })),
            })
            .collect())
    }

    /// The tooltip of the state under `requested_times[0]` (or `requested_element.time`) on
    /// `requested_items[0]`.
    pub fn tooltip(&self, p: &Params) -> Result<BTreeMap<String, String>, ApiError> {
        let row = match p
            .int_list("requested_items")?
            .and_then(|v| v.first().copied())
        {
            Some(i) if self.is_listed(i) => i as u32,
            Some(i) => {
                return Err(ApiError::param(
                    "requested_items",
                    format!("{i} is not an entry of this output"),
                ))
            }
            None => return Err(ApiError::param("requested_items", "missing")),
        };
        let t = match p
            .int_list("requested_times")?
            .and_then(|v| v.first().copied())
        {
            Some(t) => t,
            None => match p.get("requested_element").and_then(|e| e.get("time")) {
                Some(v) => v.as_i64().ok_or_else(|| {
                    ApiError::param("requested_element.time", "expected an integer")
                })?,
                None => return Err(ApiError::param("requested_times", "missing")),
            },
        };
        let mut out = BTreeMap::new();
        let tl = &self.model.timeline;
        let r = &tl.rows[row as usize];
        out.insert("Host".into(), self.model.host_name(r.host).to_string());
        if let timeline::RowKind::Thread { tid, .. } = r.kind {
            out.insert("TID".into(), tid.to_string());
            out.insert("Process".into(), r.label.clone());
        }
        if let Some(s) = tl.state_at(row, t) {
            out.insert("State".into(), styles::state_name(s.state).to_string());
            if let Some(l) = &s.label {
                let what = match s.state {
                    timeline::State::Thread(timeline::ThreadState::Syscall)
                    | timeline::State::Cpu(timeline::CpuState::Syscall) => "System call",
                    _ => "Label",
                };
                out.insert(what.into(), l.to_string());
            }
            out.insert("Start".into(), s.start.to_string());
            out.insert("End".into(), s.end.to_string());
            out.insert("Duration".into(), format!("{} ns", s.end - s.start));
        }
        Ok(out)
    }

    /// The style keys.
    pub fn styles(&self) -> OutputStyleModel {
        styles::state_styles()
    }
}

fn state(s: &Span) -> TimeGraphState {
    let mut style = OutputElementStyle::key(styles::state_key(s.state));
    if s.merged {
        // Shorter states hide in this one at this resolution (Trace Compass's "zoom in"
        // dots); clients that do not know the value ignore it.
        style.values.insert("merged".into(), true.into());
    }
    TimeGraphState {
        start: s.start,
        end: s.end,
        label: s.label.as_deref().map(str::to_string),
        style: Some(style),
        tags: None,
    }
}
