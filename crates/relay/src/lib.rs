//! `tracekit relay`: a relay daemon that LTTng's consumer daemons stream traces to (the
//! protocol of `lttng-relayd`, 2.11 to 2.13) and that live viewers (babeltrace2's
//! `lttng-live` source, tracekit's live reader) read them from while they are recorded.
//!
//! Traces are written as `lttng-relayd` writes them: `OUTPUT/HOST/SESSION-DATE/` then the
//! stream's path (`ust/uid/0/64-bit/`), the stream files, `metadata` and CTF packet indexes
//! in `index/`; files are 0600 and directories 0700. Session rotations and clears move and
//! delete trace chunks as `lttng-relayd` does (see the `chunk` module): archives in
//! `SESSION-DATE/archives/BEGIN-END-ID/`. Trace-file rotation (a channel's
//! `--tracefile-size`/`--tracefile-count`) splits a data stream into `CHANNEL_0`,
//! `CHANNEL_1`, … with an index each, deleting the oldest beyond the count, as it does.
//!
//! Unlike `lttng-relayd`, any number of viewers may attach to one session: each viewer
//! connection keeps its own positions in the streams. Each connection is served by a task of
//! its own: bytes that are not the protocol close that connection (saying why on stderr) and
//! nothing else; a producer that disconnects in the middle of a packet loses that packet only
//! (the stream file is cut back to the packet's start, and the loss is logged). A connection
//! holds at most one chunk of [`CHUNK`] bytes of a packet in memory: packets are written as
//! they arrive, and nothing more is read from a peer until they are (TCP backpressure).

#![deny(missing_docs)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

mod chunk;
mod consumer;
mod state;
mod viewer;

pub use state::Registry;

/// The most bytes of a packet or metadata chunk a connection holds at once.
pub const CHUNK: usize = 64 << 10;

/// Where the relay listens and writes.
#[derive(Debug, Clone)]
pub struct Config {
    /// Output directory (`lttng-relayd`'s `-o`).
    pub output: PathBuf,
    /// The address listened on (localhost by default).
    pub listen: IpAddr,
    /// Consumer control port (5342).
    pub control_port: u16,
    /// Consumer data port (5343).
    pub data_port: u16,
    /// Live viewer port (5344).
    pub live_port: u16,
}

impl Config {
    /// The defaults of `lttng-relayd`: ports 5342, 5343 and 5344 on localhost, output in
    /// `output`.
    pub fn new(output: PathBuf) -> Self {
        Config {
            output,
            listen: IpAddr::V4(Ipv4Addr::LOCALHOST),
            control_port: 5342,
            data_port: 5343,
            live_port: 5344,
        }
    }
}

/// Why the relay could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// A port could not be listened on.
    #[error("cannot listen on {addr} ({what}): {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Which port.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The output directory could not be made.
    #[error("output directory {path}: {source}")]
    Output {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}

/// A relay bound to its three ports, ready to [`Relay::serve`].
pub struct Relay {
    control: TcpListener,
    data: TcpListener,
    live: TcpListener,
    registry: Arc<Registry>,
}

impl Relay {
    /// Binds the three ports (port 0: any free one) and makes the output directory.
    pub async fn bind(config: &Config) -> Result<Relay, RelayError> {
        state::make_dir(&config.output).map_err(|source| RelayError::Output {
            path: config.output.clone(),
            source,
        })?;
        let listen = |port: u16, what: &'static str| async move {
            let addr = SocketAddr::new(config.listen, port);
            TcpListener::bind(addr)
                .await
                .map_err(|source| RelayError::Listen { addr, what, source })
        };
        Ok(Relay {
            control: listen(config.control_port, "control").await?,
            data: listen(config.data_port, "data").await?,
            live: listen(config.live_port, "live").await?,
            registry: Arc::new(Registry::new(config.output.clone())),
        })
    }

    /// The bound addresses: control, data, live.
    pub fn local_addrs(&self) -> [SocketAddr; 3] {
        [&self.control, &self.data, &self.live].map(|l| {
            l.local_addr()
                .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
        })
    }

    /// The shared state (sessions and streams).
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Serves connections until `shutdown` completes.
    pub async fn serve(self, shutdown: impl std::future::Future<Output = ()>) {
        let Relay {
            control,
            data,
            live,
            registry,
        } = self;
        let accept = async move {
            loop {
                tokio::select! {
                    c = control.accept() => if let Ok((sock, peer)) = c {
                        let _ = sock.set_nodelay(true);
                        tokio::spawn(consumer::control(sock, peer, registry.clone()));
                    },
                    c = data.accept() => if let Ok((sock, peer)) = c {
                        tokio::spawn(consumer::data(sock, peer, registry.clone()));
                    },
                    c = live.accept() => if let Ok((sock, peer)) = c {
                        let _ = sock.set_nodelay(true);
                        tokio::spawn(viewer::serve(sock, peer, registry.clone()));
                    },
                }
            }
        };
        tokio::select! {
            () = accept => {}
            () = shutdown => {}
        }
    }
}

/// Runs a relay with `config` until SIGINT or SIGTERM, saying where it listens on stderr.
pub fn run(config: &Config) -> Result<(), RelayError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(RelayError::Runtime)?;
    rt.block_on(async {
        let relay = Relay::bind(config).await?;
        let [c, d, l] = relay.local_addrs();
        log(format_args!(
            "control on {c}, data on {d}, live on {l}; traces go to {}",
            config.output.display()
        ));
        let shutdown = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
            }
        };
        relay.serve(shutdown).await;
        log(format_args!("stopped"));
        Ok(())
    })
}

/// One line on stderr.
pub(crate) fn log(msg: std::fmt::Arguments) {
    eprintln!("tracekit relay: {msg}");
}
