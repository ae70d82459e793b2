//! The outputs (data providers) of an experiment, behind one trait: each module is one output,
//! registered in [`registry`]. An output is made once per experiment when its model is ready
//! ([`Registration::make`]) and answers the endpoints of its kind; the others answer
//! [`ApiError::Unsupported`] by default.
//!
//! To add an output: a module with a type implementing [`Output`], and a line in [`registry`].

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::{
    AnnotationModel, Cell, ColumnHeaderEntry, EntryModel, Line, OutputDescriptor, OutputStyleModel,
    ProviderType, TableModel, TimeGraphArrow, TimeGraphModel, XyModel,
};

pub mod analyses;
pub mod control_flow;
pub mod cpu_usage;
pub mod critical_path;
pub mod events;
pub mod histogram;
pub mod latency;
pub mod resources;
pub mod state_graph;
pub mod styles;

/// One output of an experiment. Each method answers one endpoint from the query's
/// parameters; a method an output does not answer keeps its default (a 400 naming it).
pub trait Output: Send + Sync {
    /// Its id (as registered).
    fn id(&self) -> &'static str;

    /// `…/{kind}/{id}/tree`: the entries (rows of a time graph, series of an XY chart).
    fn tree(&self, p: &Params) -> Result<EntryModel, ApiError> {
        let _ = p;
        Err(self.unsupported("tree"))
    }
    /// `timeGraph/{id}/states`.
    fn states(&self, p: &Params) -> Result<TimeGraphModel, ApiError> {
        let _ = p;
        Err(self.unsupported("states"))
    }
    /// `timeGraph/{id}/arrows`.
    fn arrows(&self, p: &Params) -> Result<Vec<TimeGraphArrow>, ApiError> {
        let _ = p;
        Ok(Vec::new())
    }
    /// `timeGraph/{id}/tooltip`: label → value.
    fn tooltip(&self, p: &Params) -> Result<BTreeMap<String, String>, ApiError> {
        let _ = p;
        Ok(BTreeMap::new())
    }
    /// `XY/{id}/xy`.
    fn xy(&self, p: &Params) -> Result<XyModel, ApiError> {
        let _ = p;
        Err(self.unsupported("xy"))
    }
    /// `table/{id}/columns`.
    fn columns(&self, p: &Params) -> Result<Vec<ColumnHeaderEntry>, ApiError> {
        let _ = p;
        Err(self.unsupported("columns"))
    }
    /// `table/{id}/lines`.
    fn lines(&self, p: &Params) -> Result<TableModel, ApiError> {
        let _ = p;
        Err(self.unsupported("lines"))
    }
    /// `{id}/style`: the style keys its states, arrows and series use.
    fn styles(&self, p: &Params) -> Result<OutputStyleModel, ApiError> {
        let _ = p;
        Ok(OutputStyleModel::default())
    }
    /// `{id}/annotations`: markers (lost events…) in the requested range.
    fn annotations(&self, p: &Params) -> Result<AnnotationModel, ApiError> {
        crate::outputs::histogram::lost_event_annotations(self.model(), p)
    }
    /// The experiment's model.
    fn model(&self) -> &Model;

    /// The error of an endpoint this output does not answer.
    fn unsupported(&self, what: &'static str) -> ApiError {
        ApiError::Unsupported {
            output: self.id().to_string(),
            what,
        }
    }
}

/// An output as listed before its experiment is indexed, and how to make it after.
pub struct Registration {
    /// Its id (the `{outputId}` of its endpoints; Trace Compass's provider id where it has
    /// one, so TSP clients that know them recognise the view).
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// What it shows.
    pub description: &'static str,
    /// Its kind.
    pub kind: ProviderType,
    /// Parameters it takes besides the standard ones (name → description).
    pub query_parameters: &'static [(&'static str, &'static str)],
    /// Makes it over an indexed experiment.
    pub make: fn(Arc<Model>) -> Box<dyn Output>,
}

impl Registration {
    /// Its descriptor.
    pub fn descriptor(&self) -> OutputDescriptor {
        OutputDescriptor {
            id: self.id.to_string(),
            name: self.name.to_string(),
            description: self.description.to_string(),
            kind: self.kind,
            query_parameters: self
                .query_parameters
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// Every output, in the order they are listed.
pub fn registry() -> Vec<Registration> {
    vec![
        control_flow::registration(),
        resources::registration(),
        cpu_usage::registration(),
        histogram::registration(),
        events::registration(),
        critical_path::registration(),
    ]
    .into_iter()
    .chain(latency::registrations())
    .chain(analyses::registrations())
    .collect()
}

/// The rows of `model` whose kind `keep` accepts, with their ancestors (parents listed before
/// children), as tree entries made by `entry`.
pub(crate) fn rows_with_ancestors(
    model: &Model,
    keep: impl Fn(&timeline::Row) -> bool,
) -> Vec<u32> {
    let rows = &model.timeline.rows;
    let mut wanted = vec![false; rows.len()];
    for r in rows {
        if keep(r) {
            let mut at = Some(r.id);
            while let Some(i) = at {
                let Some(slot) = wanted.get_mut(i as usize) else {
                    break;
                };
                if *slot {
                    break;
                }
                *slot = true;
                at = rows[i as usize].parent;
            }
        }
    }
    // Parents before children: a depth-first walk from the top-level rows, children in the
    // rows' order.
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); rows.len()];
    let mut tops = Vec::new();
    for r in rows.iter().filter(|r| wanted[r.id as usize]) {
        match r.parent {
            Some(p) if (p as usize) < rows.len() && wanted[p as usize] => {
                children[p as usize].push(r.id)
            }
            _ => tops.push(r.id),
        }
    }
    let mut out = Vec::with_capacity(tops.len());
    let mut stack: Vec<u32> = tops.into_iter().rev().collect();
    while let Some(id) = stack.pop() {
        out.push(id);
        stack.extend(children[id as usize].iter().rev());
    }
    out
}

/// The parent id of row `id` as a tree entry among `listed` rows (−1 at the top).
pub(crate) fn parent_of(model: &Model, id: u32) -> i64 {
    model
        .timeline
        .rows
        .get(id as usize)
        .and_then(|r| r.parent)
        .map(i64::from)
        .unwrap_or(-1)
}

/// The requested entries: `requested_items` if given (each checked against `valid`), else
/// every one of `all`.
pub(crate) fn requested_rows(
    p: &Params,
    all: &[u32],
    valid: impl Fn(i64) -> bool,
) -> Result<Vec<u32>, ApiError> {
    match p.int_list("requested_items")? {
        None => Ok(all.to_vec()),
        Some(items) => items
            .into_iter()
            .map(|i| {
                if valid(i) {
                    Ok(i as u32)
                } else {
                    Err(ApiError::param(
                        "requested_items",
                        format!("{i} is not an entry of this output"),
                    ))
                }
            })
            .collect(),
    }
}

/// The page of `count` lines from `index` of a table whose rows `rows` gives in order: each
/// line's cells are `cell(row, column)` of the requested `columns`.
pub(crate) fn table_page<R>(
    rows: impl Iterator<Item = R> + Clone,
    index: u64,
    count: u64,
    columns: Vec<i64>,
    cell: impl Fn(&R, i64) -> String,
) -> TableModel {
    let size = rows.clone().count() as u64;
    let low_index = index.min(size);
    let lines = rows
        .enumerate()
        .skip(low_index as usize)
        .take(count.min(size) as usize)
        .map(|(i, row)| Line {
            index: i as u64,
            cells: columns
                .iter()
                .map(|&c| Cell {
                    content: cell(&row, c),
                })
                .collect(),
            tags: None,
        })
        .collect();
    TableModel {
        low_index,
        size,
        column_ids: columns,
        lines,
    }
}
