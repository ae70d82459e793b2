//! Distributed trace synchronization.
//!
//! - [`matching`]: pairs the TCP packets that hosts sent with those other hosts received
//!   (sans-io: fed with [`matching::NetEvent`]s).
//! - [`extract`]: turns `ctf::Event`s of every LTTng network layout into `NetEvent`s.
//! - [`hull`]: the fully incremental convex-hull algorithm for one pair of hosts.
//! - [`transform`]: exact clock transforms, their composition and [`TimeMaps`].
//! - [`graph`]: N hosts: reference choice, spanning tree, per-trace transforms.
//! - [`session`]: one pass over opened traces, through [`pipeline::parallel`].
//! - [`report`]: the text and JSON reports of a session.

pub mod bigint;
pub mod extract;
pub mod graph;
pub mod hull;
pub mod matching;
pub mod rational;
pub mod report;
pub mod session;
pub mod transform;

pub use graph::{SyncResult, Synchronizer};
pub use hull::{ConvexHullSync, FormulaKind, PairDir, Quality};
pub use rational::Rational;
pub use session::{synchronize, Session, SyncOptions};
pub use transform::{Linear, TimeMaps, Transform};
