//! Execution graph and critical path of kernel traces.
//!
//! - [`graph`]: the compact execution graph (workers, vertices, horizontal and vertical
//!   edges).
//! - [`algo`]: the bounded backward-walk critical path (Giraldeau & Dagenais).

pub mod algo;
pub mod graph;

pub use algo::{critical_path, PathOptions};
pub use graph::{EdgeType, Graph, VId, Worker, WorkerId};
