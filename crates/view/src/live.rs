//! Live experiments: `tracekit view net://RELAY/host/H/S…` while the sessions run.
//!
//! A thread reads the sessions through a [`live::LiveSource`] that also writes what it
//! receives to a local copy ([`live::Mirror`]). Each time the read has caught up with the
//! relay (and at least [`REFRESH`] after the previous model, longer when building takes
//! long), the experiment's model is made again from that copy, up to the last event the
//! source gave out (every stream is known complete through it), with `--sync`'s transform
//! estimated again from the packets matched so far. The outputs then answer from the new
//! model. Until the sessions end the experiment and its outputs say RUNNING (the Trace
//! Server Protocol's "more is coming"); the last model, made once every stream has ended,
//! reads the whole copy: the same model as `tracekit view` on the trace the relay wrote.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctf::Event;
use pipeline::{Flow, Progress, Sink, Source};

use crate::error::ApiError;
use crate::state::{build, AppState, Experiment, IndexProgress, Indexing, TraceEntry};

/// The shortest time between two models of a live experiment.
pub const REFRESH: Duration = Duration::from_secs(1);

/// How often (in events) a read that never waits checks whether a new model is due.
const CHECK_EVERY: u64 = 1 << 14;

impl AppState {
    /// Starts reading the live sessions `urls` as one experiment named `name`: the
    /// experiment exists at once (RUNNING, no model) and gets a model shortly after the first
    /// events arrive. The received traces are copied under `copy_dir` (made, owner-only;
    /// the caller removes it when it wants).
    pub fn create_live_experiment(
        &self,
        name: &str,
        urls: Vec<live::Url>,
        copy_dir: PathBuf,
        also: Option<Arc<dyn Progress>>,
    ) -> Result<Arc<Experiment>, ApiError> {
        let mirror = live::Mirror::new(&copy_dir).map_err(|e| ApiError::Internal(e.to_string()))?;
        let entry = TraceEntry {
            uuid: uuid::Uuid::new_v4().to_string(),
            name: name.to_string(),
            path: copy_dir,
            traces: Vec::new(),
            errors: Vec::new(),
        };
        self.add_trace(entry.clone())?;
        let exp = Arc::new(Experiment {
            uuid: uuid::Uuid::new_v4().to_string(),
            name: name.to_string(),
            traces: vec![entry],
            progress: Arc::new(IndexProgress::with(also)),
            indexing: Mutex::new(Indexing::Running),
            live: AtomicBool::new(true),
        });
        self.add_experiment(exp.clone())?;
        let state = self.clone();
        let e = exp.clone();
        std::thread::Builder::new()
            .name("tracekit-view-live".into())
            .spawn(move || {
                let last = follow(&state, &e, &urls, &mirror);
                e.set_indexing(last);
                e.live.store(false, Ordering::Release);
            })
            .map_err(|e| ApiError::Internal(format!("cannot start the live read: {e}")))?;
        Ok(exp)
    }
}

/// Reads the sessions to their end, remaking the model as they go; the last model.
fn follow(
    state: &AppState,
    exp: &Experiment,
    urls: &[live::Url],
    mirror: &Arc<live::Mirror>,
) -> Indexing {
    // With --sync, the live read orders by the transform estimated as packets arrive, so the
    // bound of each model is on the synchronized time line the model is built on.
    let options = live::LiveOptions {
        mirror: Some(mirror.clone()),
        sync: state.config().sync && urls.len() > 1,
        ..Default::default()
    };
    let source = match live::LiveSource::connect(urls, options) {
        Ok(s) => s,
        Err(e) => return Indexing::Failed(e.to_string()),
    };
    let mut sink = Refresh {
        state,
        exp,
        mirror,
        last: None,
        events: 0,
        built_at: None,
        next_after: REFRESH,
    };
    let summary = source.run(&mut sink);
    let traces = mirror.snapshot();
    if traces.is_empty() {
        let why = summary.errors.first().map_or_else(
            || "the sessions ended with no event".to_string(),
            |d| d.to_string(),
        );
        return Indexing::Failed(why);
    }
    // The read's problems (a relay that went away, a damaged packet) are the model's too.
    let problems: Vec<String> = summary
        .errors
        .iter()
        .chain(&summary.warnings)
        .map(|d| d.to_string())
        .collect();
    let last = build(state, exp, traces, None, None, &problems);
    if let Indexing::Completed(m, _) = &last {
        exp.progress.done(m.timeline.events);
    }
    last
}

/// The live read's sink: counts what the source gave out and remakes the model when due.
struct Refresh<'a> {
    state: &'a AppState,
    exp: &'a Experiment,
    mirror: &'a Arc<live::Mirror>,
    /// The time of the last event given out.
    last: Option<i64>,
    events: u64,
    built_at: Option<Instant>,
    /// The pause due after the last model (longer when building takes long).
    next_after: Duration,
}

impl Refresh<'_> {
    fn due(&self) -> bool {
        self.last.is_some() && self.built_at.is_none_or(|t| t.elapsed() >= self.next_after)
    }

    fn rebuild(&mut self) {
        let traces = self.mirror.snapshot();
        if traces.is_empty() {
            return;
        }
        let start = Instant::now();
        let built = build(self.state, self.exp, traces, self.last, None, &[]);
        let took = start.elapsed();
        // A model that could not be made (no event under the bound yet) leaves the last one.
        if matches!(built, Indexing::Completed(..)) {
            self.exp.set_indexing(built);
        }
        self.built_at = Some(Instant::now());
        // Building is at most about a third of the time.
        self.next_after = REFRESH.max(took * 2);
    }
}

impl Sink for Refresh<'_> {
    fn event(&mut self, _ev: &Event<'_>, ts: i64) -> Flow {
        self.last = Some(ts);
        self.events += 1;
        if self.events.is_multiple_of(CHECK_EVERY) && self.due() {
            self.rebuild();
        }
        Flow::Continue
    }

    fn caught_up(&mut self) -> Flow {
        if self.due() {
            self.rebuild();
        }
        Flow::Continue
    }
}
