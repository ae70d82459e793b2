//! `tracekit view`'s server: opens the command line's traces as one experiment, indexes it
//! in the background and serves the API and the app until Ctrl-C.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pipeline::Progress;

use crate::state::{AppState, Config, Experiment, Indexing};

/// What can stop the server from starting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The cache directory could not be made.
    #[error("cache directory {path}: {source}")]
    Cache {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path holds no readable trace.
    #[error("{0}")]
    Trace(String),
    /// The live sessions' local copy could not be made.
    #[error("live copy directory: {0}")]
    LiveCopy(std::io::Error),
    /// The async runtime could not start.
    #[error("cannot start the server: {0}")]
    Runtime(std::io::Error),
}

/// How to serve.
#[derive(Clone)]
pub struct ServeOptions {
    /// The traces (each path: a trace or a directory of traces), one experiment (none when
    /// empty).
    pub paths: Vec<PathBuf>,
    /// Synchronize the hosts' clocks.
    pub sync: bool,
    /// Where to listen (loopback by default; any other address requires a token).
    pub listen: SocketAddr,
    /// The cache directory (None: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Told how the indexing of the command line's traces goes (a terminal progress bar).
    pub progress: Option<Arc<dyn Progress>>,
    /// User-defined periods for the latency views.
    pub periods: crate::PeriodDefs,
    /// Live sessions (`net://RELAY[:PORT]/host/H/S`), one experiment followed while they
    /// run (instead of `paths`).
    pub live: Vec<live::Url>,
    /// Where the live sessions' received traces are kept (None: a temporary directory,
    /// removed when the server stops).
    pub live_copy: Option<PathBuf>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            paths: Vec::new(),
            sync: false,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            cache_dir: None,
            progress: None,
            periods: Default::default(),
            live: Vec::new(),
            live_copy: None,
        }
    }
}

/// `$XDG_CACHE_HOME/tracekit/view`, else `~/.cache/tracekit/view`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tracekit").join("view"))
}

/// Makes `dir` (and its parents) and restricts it to its owner (0700): the cache holds what
/// the traces hold.
pub fn prepare_cache_dir(dir: &Path) -> Result<(), Error> {
    let err = |source| Error::Cache {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)
}

/// Restricts a cache file to its owner (0600), if it exists.
pub(crate) fn restrict_file(path: &Path) {
    if path.exists() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

/// A running server.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    url: String,
    addr: SocketAddr,
    state: AppState,
    experiment: Option<Arc<Experiment>>,
    /// A live experiment's temporary copy, removed when the server goes.
    _live_copy: Option<tempfile::TempDir>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// Opens the traces, starts indexing them and starts serving (in the background).
    pub fn start(opts: ServeOptions) -> Result<Server, Error> {
        if let Some(dir) = &opts.cache_dir {
            prepare_cache_dir(dir)?;
        }
        let token = (!opts.listen.ip().is_loopback()).then(crate::auth::new_token);
        let state = AppState::new(Config {
            cache_dir: opts.cache_dir.clone(),
            sync: opts.sync,
            token: token.clone(),
            periods: opts.periods.clone(),
        });
        let mut uuids = Vec::new();
        for p in &opts.paths {
            let t = state
                .open_trace(p, None)
                .map_err(|e| Error::Trace(e.to_string()))?;
            if !uuids.contains(&t.uuid) {
                uuids.push(t.uuid);
            }
        }
        let name = opts
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(u) = opts.live.iter().find(|u| u.session.is_none()) {
            return Err(Error::Trace(format!(
                "{u}: name a session (net://RELAY[:PORT]/host/HOST/SESSION; `tracekit print {u}` \
                 lists them)"
            )));
        }
        let mut live_copy = None;
        // No path: a server whose client opens the traces itself.
        let experiment = match uuids.is_empty() {
            true if !opts.live.is_empty() => {
                let dir = match &opts.live_copy {
                    Some(d) => d.clone(),
                    None => {
                        let tmp = tempfile::Builder::new()
                            .prefix("tracekit-live-")
                            .tempdir()
                            .map_err(Error::LiveCopy)?;
                        let d = tmp.path().to_path_buf();
                        live_copy = Some(tmp);
                        d
                    }
                };
                let name = opts
                    .live
                    .iter()
                    .map(live::Url::to_string)
                    .collect::<Vec<_>>()
                    .join(" ");
                Some(
                    state
                        .create_live_experiment(&name, opts.live.clone(), dir, None)
                        .map_err(|e| Error::Trace(e.to_string()))?,
                )
            }
            true => None,
            false => Some(
                state
                    .create_experiment(&name, &uuids, opts.progress.clone())
                    .map_err(|e| Error::Trace(e.to_string()))?,
            ),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(opts.listen))
            .map_err(|source| Error::Bind {
                addr: opts.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: opts.listen,
            source,
        })?;
        let url = match &token {
            Some(t) => format!("http://{addr}/?token={t}"),
            None => format!("http://{addr}/"),
        };
        let app = crate::api::router(state.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = runtime.spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
        });
        Ok(Server {
            runtime,
            url,
            addr,
            state,
            experiment,
            _live_copy: live_copy,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    /// The page's URL (with the token when one is needed).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's state (its traces and experiments).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Waits until the command line's traces are indexed: Ok with the problems met reading
    /// them (file and offset in each), Err when nothing could be read. For live sessions:
    /// until their first model.
    pub fn wait_indexed(&self) -> Result<Vec<String>, String> {
        let Some(e) = &self.experiment else {
            return Ok(Vec::new());
        };
        loop {
            match e.indexing() {
                Indexing::Running => std::thread::sleep(Duration::from_millis(50)),
                Indexing::Completed(m, _) => return Ok(m.diagnostics.clone()),
                Indexing::Failed(why) => return Err(why),
            }
        }
    }

    /// Serves until Ctrl-C (SIGINT) or SIGTERM.
    pub fn run_until_signal(mut self) -> Result<(), Error> {
        self.runtime.block_on(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async {
                    match term.as_mut() {
                        Some(t) => { t.recv().await; }
                        None => std::future::pending::<()>().await,
                    }
                } => {}
            }
        });
        self.stop();
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(2), task).await });
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
