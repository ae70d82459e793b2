//! The LTTng kernel model shared by tracekit's analyses.
//!
//! * [`model`]: the event names of lttng-modules 2.1–2.13 mapped to one typed [`Kind`],
//!   resolved once per (trace, stream class, event class).
//! * [`state`]: one per-host state machine (threads, CPUs, IRQ context, fd tables, disks)
//!   that emits [`Notification`]s.
//! * [`Model`]: both together, fed events in time order.
//! * [`CpuMap`]: a table per CPU id, for the state and the analyses.
//! * [`needs`]: which events the state needs for a given [`Interest`], so a reader can skip
//!   the others.
//! * [`stacks`]: the stacks of `tracekit record --stacks` (symbols, folded stacks, the
//!   function a blocked thread waited in).
//! * [`lttng`]: the kernel trace classes lttng-modules writes, for the generator, the recorder
//!   and the converters.

#![deny(missing_docs)]

mod cpu_map;
mod hash;
pub mod lttng;
pub mod model;
pub mod needs;
mod payload;
pub mod stacks;
pub mod state;
mod threads;

pub use cpu_map::{recorded_cpu, CpuMap, StreamCpus};
pub use hash::{IntMap, IntSet};
pub use model::{
    classify_unnumbered, syscall_name, Class, FdOp, Kind, PacketDir, Resolved, Resolver,
    SyscallNames, F,
};
pub use payload::{Payload, SlotPlan, WordPlan};
pub use state::{
    Cpu, CpuStatus, Facet, Fd, Interest, IoDone, NoteKind, Notification, OpenFile, SoftIrqStep,
    State, StateOptions, Thread, ThreadStatus,
};
pub use threads::Threads;

use ctf::Event;

/// A [`pipeline::Sink`] that feeds a [`Model`] and gathers its notifications.
pub(crate) struct Feed<'a> {
    /// The model fed.
    pub(crate) model: &'a mut Model,
    /// Where the notifications go.
    pub(crate) out: &'a mut Vec<Notification>,
}

impl pipeline::Sink for Feed<'_> {
    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> pipeline::Flow {
        self.model.process(ev, ts, self.out);
        pipeline::Flow::Continue
    }
}

/// A resolver and a state machine, fed time-ordered events.
#[derive(Debug, Default)]
pub struct Model {
    /// The event classes met so far, resolved to kinds (and the system call names).
    pub resolver: Resolver,
    /// The state of the host the events come from.
    pub state: State,
    /// Per trace, per stream: what each event needs besides its payload, found by one lookup.
    streams: Vec<Vec<StreamEntry>>,
}

/// What the model keeps about one stream.
#[derive(Debug, Clone)]
struct StreamEntry {
    /// The stream class position the class table is for ([`NO_STREAM_CLASS`]: none yet).
    sc: usize,
    /// The CPU that recorded the stream, from its first packet's `cpu_id` (else the stream
    /// index).
    cpu: u32,
    /// The resolver's class index of each event class ([`UNRESOLVED`]: not seen yet).
    classes: Vec<u32>,
}

const NO_STREAM_CLASS: usize = usize::MAX;
const UNRESOLVED: u32 = u32::MAX;

impl Default for StreamEntry {
    fn default() -> Self {
        StreamEntry {
            sc: NO_STREAM_CLASS,
            cpu: 0,
            classes: Vec::new(),
        }
    }
}

impl Model {
    /// A model with an empty state, reading payloads by the fastest way each class allows.
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
    ) -> Vec<pipeline::Diagnostic> {
        use pipeline::Source;
        let source = pipeline::FileSource::new(
            traces.to_vec(),
            pipeline::ReadOptions {
                no_intersection: true,
                ..Default::default()
            },
        );
        source.run(&mut Feed { model: self, out }).errors
    }

    /// Resolves `ev`, applies it at time `ts` and appends the notifications to `out`.
    /// Returns the resolved kind.
    #[inline]
    pub fn process(&mut self, ev: &Event<'_>, ts: i64, out: &mut Vec<Notification>) -> Resolved {
        let (i, cpu) = self.lookup(ev);
        let class = self.resolver.at(i);
        let r = class.resolved;
        if r.kind.is_modelled() {
            self.state.handle(class, ts, cpu, ev, out);
        }
        r
    }

    /// The class index and CPU of `ev`.
    #[inline(always)]
    fn lookup(&mut self, ev: &Event<'_>) -> (u32, u32) {
        let (t, s) = (ev.trace().index, ev.stream_index());
        let (sc, ec) = ev.class_index();
        if let Some(e) = self.streams.get(t).and_then(|v| v.get(s)) {
            if e.sc == sc {
                if let Some(&i) = e.classes.get(ec) {
                    if i != UNRESOLVED {
                        return (i, e.cpu);
                    }
                }
            }
        }
        self.lookup_new(ev, t, s, sc, ec)
    }

    #[cold]
    fn lookup_new(
        &mut self,
        ev: &Event<'_>,
        t: usize,
        s: usize,
        sc: usize,
        ec: usize,
    ) -> (u32, u32) {
        let i = self.resolver.index(ev);
        if self.streams.len() <= t {
            self.streams.resize_with(t + 1, Vec::new);
        }
        let v = &mut self.streams[t];
        if v.len() <= s {
            v.resize_with(s + 1, StreamEntry::default);
        }
        let e = &mut v[s];
        if e.sc != sc {
            if e.sc == NO_STREAM_CLASS {
                e.cpu = recorded_cpu(ev).unwrap_or(s as u32);
            }
            e.sc = sc;
            e.classes.clear();
        }
        if e.classes.len() <= ec {
            e.classes.resize(ec + 1, UNRESOLVED);
        }
        e.classes[ec] = i;
        (i, e.cpu)
    }
}
