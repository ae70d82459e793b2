//! Execution graph and critical path of kernel traces.
//!
//! - [`graph`]: the compact execution graph (workers, vertices, horizontal and vertical
//!   edges).
//! - [`builder`]: the graph from decoded kernel events (sans-io).
//! - [`net`]: packet matching adapters (send vertex → receive vertex across hosts).
//! - [`input`]: CTF traces → builder (every LTTng layout).
//! - [`algo`]: the bounded backward-walk critical path (Giraldeau & Dagenais).
//! - [`report`]: segments, totals, the summary sentence.

#![deny(missing_docs)]

pub mod algo;
pub mod builder;
pub mod graph;
pub mod input;
pub mod net;
pub mod report;

pub use algo::{critical_path, PathOptions};
pub use builder::{Builder, Ctx, KEvent};
pub use graph::{EdgeType, Graph, VId, Worker, WorkerId};
pub use input::{build_graph, BuildOptions, Built, GraphSink};
pub use report::{
    critical_path_of, find_thread, path_of_thread, PathError, Report, Segment, Summary,
};
