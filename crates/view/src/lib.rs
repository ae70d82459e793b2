//! tracekit's web trace viewer: a Trace Server Protocol back end over the [`timeline`] state
//! model and the analyses, serving the single-page app in `web/` (embedded in the binary).
//!
//! - [`api::router`]: the routes (TSP under `/tsp/api`, `/view/session`, the app at `/`);
//!   see `README.md` beside this crate for the API notes the app is written against.
//! - [`outputs`]: the outputs (Control Flow, Resources, CPU Usage, Histogram, Events table,
//!   Critical Path), one module each behind the [`outputs::Output`] trait.
//! - [`state`]: opened traces, experiments and their background indexing.
//! - [`live`]: experiments of live sessions, their model remade as packets arrive.
//! - [`server::Server`]: `tracekit view`'s server (bind, index, serve until Ctrl-C).

#![deny(missing_docs)]

pub mod api;
pub mod auth;
pub mod error;
pub mod live;
pub mod model;
pub mod outputs;
pub mod params;
pub mod server;
pub mod state;
pub mod tsp;
pub mod web;

pub use error::ApiError;
pub use server::{default_cache_dir, Error, ServeOptions, Server};
pub use state::{AppState, Config, PeriodDefs};
