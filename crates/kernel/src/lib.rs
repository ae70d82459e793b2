//! The LTTng kernel model shared by tracekit's analyses.
//!
//! * [`model`]: the event names of lttng-modules 2.1–2.13 mapped to one typed [`Kind`],
//!   resolved once per (trace, stream class, event class).
//! * [`state`]: one per-host state machine (threads, CPUs, IRQ context, fd tables, disks)
//!   that emits [`Notification`]s.
//! * [`Model`]: both together, fed events in time order.

pub mod hash;
pub mod model;
pub mod payload;
pub mod state;
pub mod threads;

pub use hash::{IntMap, IntSet};
pub use model::{Class, FdOp, Fields, Kind, Resolved, Resolver, SyscallNames, F};
pub use payload::{Payload, WordPlan};
pub use state::{Cpu, Fd, IoDone, Notification, OpenFile, State, StateOptions, Thread};
pub use threads::Threads;

use ctf::Event;

/// A resolver and a state machine, fed time-ordered events.
#[derive(Debug, Default)]
pub struct Model {
    pub resolver: Resolver,
    pub state: State,
    /// CPU of each (trace, stream), from the packet context's `cpu_id`.
    cpu_of: Vec<Vec<Option<u32>>>,
}

impl Model {
    pub fn new(options: StateOptions) -> Self {
        Model {
            state: State::new(options),
            ..Default::default()
        }
    }

    /// A model that reads every payload through the CTF field views, as the word reads of
    /// [`WordPlan`]s must agree with (for tests).
    pub fn generic(options: StateOptions) -> Self {
        Model {
            state: State::new(options),
            resolver: Resolver::generic(),
            ..Default::default()
        }
    }

    /// Feeds every event of `traces`, merged by time, to the model, appending the
    /// notifications to `out`; returns the read errors (each naming its file and offset).
    pub fn process_all(
        &mut self,
        traces: &[std::sync::Arc<ctf::Trace>],
        out: &mut Vec<Notification>,
    ) -> Vec<ctf::Error> {
        let mut merger = ctf::Merger::new(traces);
        while let Some(msg) = merger.next() {
            if *msg != ctf::Message::Event {
                continue;
            }
            let (Some(ts), Some(ev)) = (merger.current_time(), merger.event()) else {
                continue;
            };
            self.process(&ev, ts, out);
        }
        std::mem::take(&mut merger.errors)
    }

    /// The CPU that recorded `ev` (its stream's `cpu_id`, else the stream index).
    pub fn cpu_of(&mut self, ev: &Event<'_>) -> u32 {
        cpu_of(&mut self.cpu_of, ev)
    }

    /// Resolves `ev`, applies it at time `ts` and appends the notifications to `out`.
    /// Returns the resolved kind.
    #[inline]
    pub fn process(&mut self, ev: &Event<'_>, ts: i64, out: &mut Vec<Notification>) -> Resolved {
        let class = self.resolver.class(ev);
        let r = class.resolved;
        if r.kind != Kind::Other {
            let cpu = cpu_of(&mut self.cpu_of, ev);
            self.state.handle(class, ts, cpu, ev, out);
        }
        r
    }
}

/// The CPU that recorded `ev`, cached per (trace, stream) in `cache`.
#[inline]
fn cpu_of(cache: &mut Vec<Vec<Option<u32>>>, ev: &Event<'_>) -> u32 {
    let (t, s) = (ev.trace().index, ev.stream_index());
    if let Some(&Some(c)) = cache.get(t).and_then(|v| v.get(s)) {
        return c;
    }
    if cache.len() <= t {
        cache.resize(t + 1, Vec::new());
    }
    let v = &mut cache[t];
    if v.len() <= s {
        v.resize(s + 1, None);
    }
    *v[s].get_or_insert_with(|| {
        ev.packet_context()
            .and_then(|p| p.field("cpu_id"))
            .and_then(|f| f.as_u64())
            .map(|c| c as u32)
            .unwrap_or(s as u32)
    })
}
