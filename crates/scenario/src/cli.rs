//! `tracekit gen`'s run: one scenario generated with the command line's parameters, and the
//! line that says what was written.

use std::path::PathBuf;
use std::time::Instant;

use ctf::writer::WriteError;
use kernel::lttng::NetLayout;

use crate::chaos::{self, ChaosOptions};
use crate::client_server::{self, ClientServerParams};
use crate::kernel_mix::{self, KernelMixParams};
use crate::rng::Rng;

/// Errors of a `gen` run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Parameters the scenario does not take.
    #[error("{0}")]
    Params(String),
    /// Writing the trace failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// [`client_server`]: one trace per host, with ground truth.
    ClientServer,
    /// [`kernel_mix`]: one large single-host trace.
    KernelMix,
    /// [`chaos`]: arbitrary events of every class.
    Chaos,
}

/// What `tracekit gen` was asked (see its `--help` for each parameter).
#[derive(Debug, Clone)]
pub struct GenRequest {
    /// The scenario.
    pub scenario: Scenario,
    /// Output directory (kernel-mix: the trace directory itself).
    pub output: PathBuf,
    /// Seed: the same seed gives the same bytes.
    pub seed: u64,
    /// Hosts (client-server).
    pub hosts: u32,
    /// Maximum clock offset of a host, s (client-server).
    pub max_offset: u64,
    /// Maximum clock drift of a host, ppm (client-server).
    pub max_drift_ppm: u32,
    /// Requests (client-server).
    pub requests: u32,
    /// Events (kernel-mix, chaos).
    pub events: u64,
    /// CPUs per host.
    pub cpus: u32,
    /// The old `inet_sock_local_in/out` network events.
    pub inet_sock: bool,
    /// No empty strings (chaos).
    pub no_empty_texts: bool,
}

/// Generates the scenario of `req`; the summary line to print.
pub fn generate(req: &GenRequest) -> Result<String, Error> {
    let net = if req.inet_sock {
        NetLayout::InetSock
    } else {
        NetLayout::NetworkHeader
    };
    if req.cpus < 3 && req.scenario == Scenario::ClientServer {
        return Err(Error::Params(
            "client-server needs at least 3 CPUs per host (--cpus)".into(),
        ));
    }
    let start = Instant::now();
    Ok(match req.scenario {
        Scenario::ClientServer => {
            let p = ClientServerParams {
                seed: req.seed,
                hosts: req.hosts,
                max_offset_s: req.max_offset,
                max_drift_ppm: req.max_drift_ppm,
                requests: req.requests,
                cpus: req.cpus,
                net,
                ..Default::default()
            };
            let o = client_server::generate(&req.output, &p)?;
            format!(
                "Generated client-server (seed {}) in {:.2} s: {} hosts, {} requests, {} events in {}; ground truth in {}.",
                req.seed,
                start.elapsed().as_secs_f64(),
                o.dirs.len(),
                req.requests,
                o.events,
                req.output.display(),
                o.ground_truth.display()
            )
        }
        Scenario::KernelMix => {
            let p = KernelMixParams {
                seed: req.seed,
                events: req.events,
                cpus: req.cpus,
                net,
                ..Default::default()
            };
            let s = kernel_mix::generate(&req.output, &p)?;
            let dt = start.elapsed().as_secs_f64();
            format!(
                "Generated kernel-mix (seed {}) in {:.2} s: {} events on {} CPUs, {} packets, {} bytes in {} ({:.2} M events/s).",
                req.seed,
                dt,
                s.events,
                req.cpus,
                s.packets,
                s.bytes,
                s.dir.display(),
                s.events as f64 / dt / 1e6
            )
        }
        Scenario::Chaos => {
            let opts = ChaosOptions {
                max_events: usize::try_from(req.events)
                    .map_err(|e| Error::Params(e.to_string()))?,
                empty_texts: !req.no_empty_texts,
                // One per seed: traces of different seeds are different traces.
                trace_uuid: {
                    let mut u = [0x5a; 16];
                    u[..8].copy_from_slice(&req.seed.to_le_bytes());
                    u
                },
            };
            let t = chaos::write_chaos_trace(&req.output, &mut Rng::new(req.seed), &opts)?;
            format!(
                "Generated chaos (seed {}) in {:.2} s: {} events on {} CPUs ({}, {} headers), {} counted as discarded, system calls {}, in {}.",
                req.seed,
                start.elapsed().as_secs_f64(),
                t.events,
                t.cpus,
                if t.big_endian { "big-endian" } else { "little-endian" },
                if t.large_headers { "large" } else { "compact" },
                t.discarded,
                if t.paired_syscalls { "in pairs" } else { "in any order" },
                req.output.display(),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_server_needs_three_cpus() {
        let req = GenRequest {
            scenario: Scenario::ClientServer,
            output: PathBuf::from("/nonexistent/never-written"),
            seed: 1,
            hosts: 3,
            max_offset: 1,
            max_drift_ppm: 1,
            requests: 1,
            events: 1,
            cpus: 2,
            inet_sock: false,
            no_empty_texts: false,
        };
        let e = generate(&req).unwrap_err();
        assert!(e.to_string().contains("at least 3 CPUs"), "{e}");
    }

    #[test]
    fn chaos_says_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let req = GenRequest {
            scenario: Scenario::Chaos,
            output: dir.path().join("t"),
            seed: 3,
            hosts: 3,
            max_offset: 1,
            max_drift_ppm: 1,
            requests: 1,
            events: 50,
            cpus: 4,
            inet_sock: false,
            no_empty_texts: true,
        };
        let line = generate(&req).unwrap();
        assert!(line.starts_with("Generated chaos (seed 3) in "), "{line}");
        assert!(dir.path().join("t/metadata").is_file());
    }
}
