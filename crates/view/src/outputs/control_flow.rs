//! Control Flow: a row per thread (per tid and birth) in a process tree under each host,
//! coloured by thread state, system call names as labels, wake-up arrows.

use std::sync::Arc;

use timeline::{Row, RowKind};

use super::state_graph::StateGraph;
use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's thread status provider).
pub const ID: &str = "org.eclipse.tracecompass.internal.analysis.os.linux.core.threadstatus.ThreadStatusDataProvider";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "Control Flow",
        description: "Thread states per thread, in a process tree per host",
        kind: ProviderType::TimeGraph,
        query_parameters: &[],
        make: |m| Box::new(ControlFlow(graph(m))),
    }
}

const HEADERS: &[(&str, &str)] = &[
    ("Process", "The thread's name"),
    ("TID", "Thread id"),
    ("PTID", "Parent's process id"),
    ("Birth time", "First time seen (ns)"),
];

fn labels(m: &Model, r: &Row) -> Vec<String> {
    match r.kind {
        RowKind::Thread { tid, ppid, .. } => vec![
            r.label.clone(),
            tid.to_string(),
            ppid.map(|p| p.to_string()).unwrap_or_default(),
            r.start.to_string(),
        ],
        _ => vec![
            m.host_name(r.host).to_string(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

pub(crate) fn graph(m: Arc<Model>) -> StateGraph {
    StateGraph::new(
        m,
        |r| matches!(r.kind, RowKind::Thread { .. } | RowKind::Host),
        HEADERS,
        labels,
    )
}

struct ControlFlow(StateGraph);

impl Output for ControlFlow {
    fn id(&self) -> &'static str {
        ID
    }
    fn model(&self) -> &Model {
        &self.0.model
    }
    fn tree(&self, _p: &Params) -> Result<EntryModel, ApiError> {
        Ok(self.0.tree())
    }
    fn states(&self, p: &Params) -> Result<TimeGraphModel, ApiError> {
        self.0.states(p)
    }
    fn arrows(&self, p: &Params) -> Result<Vec<TimeGraphArrow>, ApiError> {
        self.0.arrows(p)
    }
    fn tooltip(&self, p: &Params) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
        self.0.tooltip(p)
    }
    fn styles(&self, _p: &Params) -> Result<OutputStyleModel, ApiError> {
        Ok(self.0.styles())
    }
}
