//! The server's state: opened traces, experiments and their indexing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ctf::Trace;
use pipeline::{Progress, ProgressPoint, ReadOptions};
use timeline::{BuildOptions, Timeline};

use crate::error::ApiError;
use crate::model::Model;
use crate::outputs::{registry, Output, Registration};

/// How the server builds models.
#[derive(Clone, Default)]
pub struct Config {
    /// Where the models' cache files go (None: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Synchronize the hosts' clocks (from the TCP packets they exchanged) in every
    /// experiment of several traces.
    pub sync: bool,
    /// The access token every request must carry (None: none needed).
    pub token: Option<String>,
    /// User-defined periods measured in every experiment's latency views (`tracekit view
    /// --period`).
    pub periods: PeriodDefs,
}

/// `--period` and `--period-captures` definitions (the syntax of `tracekit analyze
/// periodlog`).
#[derive(Debug, Clone, Default)]
pub struct PeriodDefs {
    /// The period definitions.
    pub periods: Vec<String>,
    /// Their captures.
    pub captures: Vec<String>,
}

/// An opened trace (a path: one trace directory, or a directory of traces, e.g. the hosts of
/// one recording).
#[derive(Clone)]
pub struct TraceEntry {
    /// Its UUID.
    pub uuid: String,
    /// Its name.
    pub name: String,
    /// The path it was opened from.
    pub path: PathBuf,
    /// The CTF traces found there.
    pub traces: Vec<Arc<Trace>>,
    /// Problems met opening them (file and offset in each).
    pub errors: Vec<String>,
}

/// How far an experiment's indexing went.
#[derive(Default)]
pub struct IndexProgress {
    events: AtomicU64,
    /// Per mille of the time range read.
    permille: AtomicI64,
    also: Option<Arc<dyn Progress>>,
}

impl IndexProgress {
    /// A progress that also tells `also`.
    pub fn with(also: Option<Arc<dyn Progress>>) -> Self {
        IndexProgress {
            also,
            ..Default::default()
        }
    }
    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }
    /// The part of the range read, 0–1000.
    pub fn permille(&self) -> i64 {
        self.permille.load(Ordering::Relaxed)
    }
}

impl Progress for IndexProgress {
    fn at(&self, p: ProgressPoint) {
        self.events.store(p.events, Ordering::Relaxed);
        self.permille
            .store((p.fraction() * 1000.0) as i64, Ordering::Relaxed);
        if let Some(a) = &self.also {
            a.at(p);
        }
    }
    fn done(&self, events: u64) {
        self.events.store(events, Ordering::Relaxed);
        self.permille.store(1000, Ordering::Relaxed);
        if let Some(a) = &self.also {
            a.done(events);
        }
    }
}

/// An experiment's state.
#[derive(Clone)]
pub enum Indexing {
    /// The model is being built.
    Running,
    /// Built: the model and its outputs (by registry order).
    Completed(Arc<Model>, Arc<Vec<Arc<dyn Output>>>),
    /// Nothing could be read.
    Failed(String),
}

/// A set of traces on one time line.
pub struct Experiment {
    /// Its UUID.
    pub uuid: String,
    /// Its name.
    pub name: String,
    /// Its traces.
    pub traces: Vec<TraceEntry>,
    /// Indexing progress.
    pub progress: Arc<IndexProgress>,
    /// Its state.
    pub indexing: Mutex<Indexing>,
    /// A live session still running: its model (when [`Indexing::Completed`]) covers what
    /// has arrived so far and is remade as packets come (see [`crate::live`]).
    pub live: AtomicBool,
}

impl Experiment {
    /// Whether this is a live session still running.
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    /// Its state now.
    pub fn indexing(&self) -> Indexing {
        self.indexing
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|_| Indexing::Failed("internal error: lock poisoned".into()))
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState(pub Arc<Inner>);

/// The shared state.
pub struct Inner {
    /// Configuration.
    pub config: Config,
    /// Opened traces, in opening order.
    pub traces: RwLock<Vec<TraceEntry>>,
    /// Experiments, in creation order.
    pub experiments: RwLock<Vec<Arc<Experiment>>>,
    /// The outputs every experiment has.
    pub registry: Vec<Registration>,
}

impl AppState {
    /// A server state with no trace.
    pub fn new(config: Config) -> Self {
        AppState(Arc::new(Inner {
            config,
            traces: RwLock::new(Vec::new()),
            experiments: RwLock::new(Vec::new()),
            registry: registry(),
        }))
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.0.config
    }

    /// Opens the traces at `path` (the same path again gives the same trace).
    pub fn open_trace(&self, path: &Path, name: Option<&str>) -> Result<TraceEntry, ApiError> {
        if let Some(t) = self.read_traces().iter().find(|t| t.path == path) {
            return Ok(t.clone());
        }
        if !path.exists() {
            return Err(ApiError::NotFound(format!(
                "no trace at {}",
                path.display()
            )));
        }
        let traces = ctf::open_all(&[path])
            .map_err(|e| ApiError::NotFound(format!("{}: {e}", path.display())))?;
        if traces.is_empty() {
            return Err(ApiError::NotFound(format!(
                "no CTF trace found under {}",
                path.display()
            )));
        }
        let errors = traces
            .iter()
            .flat_map(|t| t.errors.iter().cloned())
            .collect();
        let entry = TraceEntry {
            uuid: uuid::Uuid::new_v4().to_string(),
            name: name
                .map(str::to_string)
                .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| path.display().to_string()),
            path: path.to_path_buf(),
            traces,
            errors,
        };
        let mut all = self.0.traces.write().map_err(|_| poisoned())?;
        if let Some(t) = all.iter().find(|t| t.path == path) {
            return Ok(t.clone());
        }
        all.push(entry.clone());
        Ok(entry)
    }

    /// The opened traces.
    pub fn read_traces(&self) -> Vec<TraceEntry> {
        self.0.traces.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// The trace `uuid`.
    pub fn trace(&self, uuid: &str) -> Result<TraceEntry, ApiError> {
        self.read_traces()
            .into_iter()
            .find(|t| t.uuid == uuid)
            .ok_or_else(|| ApiError::NoTrace(uuid.to_string()))
    }

    /// Forgets the trace `uuid`.
    pub fn remove_trace(&self, uuid: &str) -> Result<TraceEntry, ApiError> {
        let mut all = self.0.traces.write().map_err(|_| poisoned())?;
        let i = all
            .iter()
            .position(|t| t.uuid == uuid)
            .ok_or_else(|| ApiError::NoTrace(uuid.to_string()))?;
        Ok(all.remove(i))
    }

    /// The experiments.
    pub fn experiments(&self) -> Vec<Arc<Experiment>> {
        self.0
            .experiments
            .read()
            .map(|e| e.clone())
            .unwrap_or_default()
    }

    /// The experiment `uuid`.
    pub fn experiment(&self, uuid: &str) -> Result<Arc<Experiment>, ApiError> {
        self.experiments()
            .into_iter()
            .find(|e| e.uuid == uuid)
            .ok_or_else(|| ApiError::NoExperiment(uuid.to_string()))
    }

    /// Forgets the experiment `uuid`.
    pub fn remove_experiment(&self, uuid: &str) -> Result<Arc<Experiment>, ApiError> {
        let mut all = self.0.experiments.write().map_err(|_| poisoned())?;
        let i = all
            .iter()
            .position(|e| e.uuid == uuid)
            .ok_or_else(|| ApiError::NoExperiment(uuid.to_string()))?;
        Ok(all.remove(i))
    }

    /// Creates an experiment of the traces `uuids` (the same traces again give the same
    /// experiment) and starts indexing it on a thread of its own; `also` is told the
    /// indexing's progress too.
    pub fn create_experiment(
        &self,
        name: &str,
        uuids: &[String],
        also: Option<Arc<dyn Progress>>,
    ) -> Result<Arc<Experiment>, ApiError> {
        let traces: Vec<TraceEntry> = uuids
            .iter()
            .map(|u| self.trace(u))
            .collect::<Result<_, _>>()?;
        if traces.is_empty() {
            return Err(ApiError::param(
                "traces",
                "empty: give the UUIDs of opened traces",
            ));
        }
        let exp = {
            let mut all = self.0.experiments.write().map_err(|_| poisoned())?;
            let same = |e: &Experiment| {
                e.traces.len() == traces.len()
                    && e.traces.iter().zip(&traces).all(|(a, b)| a.uuid == b.uuid)
            };
            if let Some(e) = all.iter().find(|e| same(e)) {
                return Ok(e.clone());
            }
            let exp = Arc::new(Experiment {
                uuid: uuid::Uuid::new_v4().to_string(),
                name: name.to_string(),
                traces,
                progress: Arc::new(IndexProgress {
                    also,
                    ..Default::default()
                }),
                indexing: Mutex::new(Indexing::Running),
                live: AtomicBool::new(false),
            });
            all.push(exp.clone());
            exp
        };
        let state = self.clone();
        let e = exp.clone();
        std::thread::Builder::new()
            .name("tracekit-view-index".into())
            .spawn(move || {
                let result = index(&state, &e);
                e.set_indexing(result);
            })
            .map_err(|e| ApiError::Internal(format!("cannot start indexing: {e}")))?;
        Ok(exp)
    }

    /// Registers `entry` as an opened trace (a live session's local copy).
    pub(crate) fn add_trace(&self, entry: TraceEntry) -> Result<(), ApiError> {
        self.0.traces.write().map_err(|_| poisoned())?.push(entry);
        Ok(())
    }

    /// Registers `exp`.
    pub(crate) fn add_experiment(&self, exp: Arc<Experiment>) -> Result<(), ApiError> {
        self.0
            .experiments
            .write()
            .map_err(|_| poisoned())?
            .push(exp);
        Ok(())
    }
}

impl Experiment {
    /// Replaces its state.
    pub(crate) fn set_indexing(&self, indexing: Indexing) {
        if let Ok(mut g) = self.indexing.lock() {
            *g = indexing;
        }
    }
}

fn poisoned() -> ApiError {
    ApiError::Internal("internal error: lock poisoned".into())
}

/// Builds (or loads) the model of `exp`, and its outputs.
fn index(state: &AppState, exp: &Experiment) -> Indexing {
    // Opened again together: a trace's index among those read at once is what the time map
    // and the per-host state go by.
    let paths: Vec<&Path> = exp.traces.iter().map(|t| t.path.as_path()).collect();
    let traces: Vec<Arc<Trace>> = match ctf::open_all(&paths) {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => return Indexing::Failed("no trace found".into()),
        Err(e) => return Indexing::Failed(e.to_string()),
    };
    let cache_dir = state.config().cache_dir.clone();
    let built = build(state, exp, traces, None, cache_dir.as_deref(), &[]);
    if let Indexing::Completed(m, _) = &built {
        exp.progress.done(m.timeline.events);
    }
    built
}

/// Builds (or loads, with a `cache_dir`) the model of `traces` up to `end` (None: all), and
/// the outputs over it; `problems` are shown with the model's own.
pub(crate) fn build(
    state: &AppState,
    exp: &Experiment,
    traces: Vec<Arc<Trace>>,
    end: Option<i64>,
    cache_dir: Option<&Path>,
    problems: &[String],
) -> Indexing {
    let config = state.config();
    let time_map = (config.sync && traces.len() > 1).then(|| {
        let session = sync::synchronize(&traces, &sync::SyncOptions::default());
        Arc::new(session.time_maps()) as Arc<dyn ctf::merge::TimeMap>
    });
    let read = ReadOptions {
        time_map: time_map.clone(),
        end,
        no_intersection: true,
        progress: Some(exp.progress.clone() as Arc<dyn Progress>),
        ..Default::default()
    };
    let opts = BuildOptions {
        read,
        cache_dir: cache_dir.map(Path::to_path_buf),
    };
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Timeline::open(&traces, &opts)
    }));
    let (timeline, diagnostics) = match built {
        Ok(Ok((tl, _origin, diags))) => (tl, diags),
        Ok(Err(e)) => return Indexing::Failed(e.to_string()),
        Err(_) => return Indexing::Failed("internal error: building the model failed".into()),
    };
    if let Some(dir) = cache_dir {
        crate::server::restrict_file(&Timeline::cache_path(&traces, dir));
    }
    let mut messages: Vec<String> = exp
        .traces
        .iter()
        .flat_map(|t| t.errors.iter().cloned())
        .collect();
    messages.extend(diagnostics.iter().map(|d| d.to_string()));
    messages.extend(problems.iter().cloned());
    let model = Arc::new(
        Model::new(traces, timeline, time_map, messages)
            .with_periods(config.periods.clone())
            .with_read_end(end),
    );
    let outputs: Vec<Arc<dyn Output>> = state
        .0
        .registry
        .iter()
        .map(|r| Arc::from((r.make)(model.clone())))
        .collect();
    Indexing::Completed(model, Arc::new(outputs))
}
