//! An experiment's data once indexed: its traces, the state model, the time map, and what the
//! outputs compute lazily from them (the critical-path graph).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ctf::merge::TimeMap;
use ctf::Trace;
use timeline::Timeline;

/// What every output of an experiment reads.
pub struct Model {
    /// The traces, in the experiment's order (trace index = position).
    pub traces: Vec<Arc<Trace>>,
    /// The state model.
    pub timeline: Timeline,
    /// The clock transform of every trace (`--sync`), the one the model was built with.
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Problems met reading (file and byte offset in each), shown in status messages.
    pub diagnostics: Vec<String>,
    /// User-defined periods, measured by the latency views.
    pub periods: crate::PeriodDefs,
    /// The last time the model covers when its traces hold more (a live session's copy,
    /// whose streams are received up to different times): reads stop there.
    pub read_end: Option<i64>,
    critpath: OnceLock<Arc<critpath::input::Built>>,
    memo: Mutex<HashMap<String, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("traces", &self.traces.len())
            .field("events", &self.timeline.events)
            .field("diagnostics", &self.diagnostics)
            .finish()
    }
}

impl Model {
    /// A model over `traces`.
    pub fn new(
        traces: Vec<Arc<Trace>>,
        timeline: Timeline,
        time_map: Option<Arc<dyn TimeMap>>,
        diagnostics: Vec<String>,
    ) -> Self {
        Model {
            traces,
            timeline,
            time_map,
            diagnostics,
            periods: Default::default(),
            read_end: None,
            critpath: OnceLock::new(),
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The same model, whose latency views also measure these user-defined periods.
    pub fn with_periods(mut self, periods: crate::PeriodDefs) -> Self {
        self.periods = periods;
        self
    }

    /// The same model, whose reads stop at `end` ([`Model::read_end`]).
    pub fn with_read_end(mut self, end: Option<i64>) -> Self {
        self.read_end = end;
        self
    }

    /// The read options every output's own reads use (same time line and end as the model).
    pub fn read_options(&self) -> pipeline::ReadOptions {
        pipeline::ReadOptions {
            time_map: self.time_map.clone(),
            end: self.read_end,
            no_intersection: true,
            ..Default::default()
        }
    }

    /// The critical-path graph of the traces, built on first use (a full read).
    pub fn critpath(&self) -> Arc<critpath::input::Built> {
        self.critpath
            .get_or_init(|| {
                Arc::new(critpath::input::build_graph(
                    &self.traces,
                    critpath::input::BuildOptions {
                        time_map: self.time_map.clone(),
                        matcher: None,
                    },
                ))
            })
            .clone()
    }

    /// The host name of timeline host `h`.
    pub fn host_name(&self, h: u32) -> &str {
        self.timeline
            .hosts
            .get(h as usize)
            .map(|h| h.name.as_str())
            .unwrap_or("?")
    }

    /// The result `make` computes, made once per `key` and shared by the outputs showing parts
    /// of it (the tables of one analysis run over one range). Computed under the lock, so two
    /// requests for the same result wait for one computation. At most [`MEMO_ENTRIES`] are
    /// kept (a zoom makes a new range: the oldest results go first).
    pub fn memo<T: Any + Send + Sync>(&self, key: &str, make: impl FnOnce() -> T) -> Arc<T> {
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = memo.get(key).and_then(|v| v.clone().downcast::<T>().ok()) {
            return v;
        }
        if memo.len() >= MEMO_ENTRIES {
            memo.clear();
        }
        let v = Arc::new(make());
        memo.insert(key.to_string(), v.clone());
        v
    }
}

/// The most results [`Model::memo`] keeps.
pub const MEMO_ENTRIES: usize = 64;
