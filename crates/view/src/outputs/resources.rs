//! Resources: a row per CPU (the running thread as label, idle, IRQ and soft IRQ), per IRQ
//! line and soft IRQ vector, under each host.

use std::sync::Arc;

use timeline::{Row, RowKind};

use super::state_graph::StateGraph;
use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's resources provider).
pub const ID: &str =
    "org.eclipse.tracecompass.internal.analysis.os.linux.core.resourcesstatus.ResourcesStatusDataProvider";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "Resources",
        description: "CPU states (running thread, idle, IRQ, soft IRQ) and IRQ lines per host",
        kind: ProviderType::TimeGraph,
        query_parameters: &[],
        make: |m| Box::new(Resources(graph(m))),
    }
}

const HEADERS: &[(&str, &str)] = &[("Resource", "Host, CPU, IRQ line or soft IRQ vector")];

fn labels(m: &Model, r: &Row) -> Vec<String> {
    match r.kind {
        RowKind::Host => vec![m.host_name(r.host).to_string()],
        _ => vec![r.label.clone()],
    }
}

fn graph(m: Arc<Model>) -> StateGraph {
    StateGraph::new(
        m,
        |r| {
            matches!(
                r.kind,
                RowKind::Host | RowKind::Cpu { .. } | RowKind::Irq { .. } | RowKind::SoftIrq { .. }
            )
        },
        HEADERS,
        labels,
    )
}

struct Resources(StateGraph);

impl Output for Resources {
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
    fn tooltip(&self, p: &Params) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
        self.0.tooltip(p)
    }
    fn styles(&self, _p: &Params) -> Result<OutputStyleModel, ApiError> {
        Ok(self.0.styles())
    }
}
