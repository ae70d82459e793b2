//! `tracekit gen`: deterministic LTTng-like kernel traces with ground truth.

use kernel::lttng::NetLayout;
use scenario::chaos::{self, ChaosOptions};
use scenario::client_server::{self, ClientServerParams};
use scenario::kernel_mix::{self, KernelMixParams};
use scenario::rng::Rng;
use std::path::PathBuf;

/// Which scenario to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Clients → httpd → db over TCP, one trace per host, drifting clocks, ground truth.
    ClientServer,
    /// One large single-host trace with a realistic event mix (streamed).
    KernelMix,
    /// Arbitrary events of every class, with any values, in any order, on 1 to 4 CPUs (chosen
    /// by the seed): well-formed CTF saying impossible things, for testing trace tools.
    Chaos,
}

/// Arguments of `tracekit gen`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenArgs {
    /// Scenario to generate.
    #[arg(value_enum)]
    pub scenario: Scenario,
    /// Output directory (kernel-mix: the trace directory itself).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Hosts (client-server, 2..=8).
    #[arg(long, default_value_t = 3)]
    pub hosts: u32,
    /// Maximum clock offset of a host, seconds (client-server).
    #[arg(long, default_value_t = 3600)]
    pub max_offset: u64,
    /// Maximum clock drift of a host, ppm, up to 100 (client-server).
    #[arg(long, default_value_t = 50)]
    pub max_drift_ppm: u32,
    /// Requests (client-server).
    #[arg(long, default_value_t = 40)]
    pub requests: u32,
    /// Events (kernel-mix, chaos).
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    /// CPUs per host.
    #[arg(long, default_value_t = 4)]
    pub cpus: u32,
    /// Use the old inet_sock_local_in/out network events instead of net_dev_queue /
    /// net_if_receive_skb with network_header.
    #[arg(long)]
    pub inet_sock: bool,
    /// No empty strings (chaos): Babeltrace 2.0.4 prints an empty string as the previous
    /// value of the same field, so its output can be compared only without them.
    #[arg(long)]
    pub no_empty_texts: bool,
}

/// Runs the generator and prints a summary.
pub fn run(args: &GenArgs) -> Result<(), String> {
    let net = if args.inet_sock {
        NetLayout::InetSock
    } else {
        NetLayout::NetworkHeader
    };
    if args.cpus < 3 && args.scenario == Scenario::ClientServer {
        return Err("client-server needs at least 3 CPUs per host (--cpus)".into());
    }
    let start = std::time::Instant::now();
    match args.scenario {
        Scenario::ClientServer => {
            let p = ClientServerParams {
                seed: args.seed,
                hosts: args.hosts,
                max_offset_s: args.max_offset,
                max_drift_ppm: args.max_drift_ppm,
                requests: args.requests,
                cpus: args.cpus,
                net,
                ..Default::default()
            };
            let o = client_server::generate(&args.output, &p).map_err(|e| e.to_string())?;
            println!(
                "Generated client-server (seed {}) in {:.2} s: {} hosts, {} requests, {} events in {}; ground truth in {}.",
                args.seed,
                start.elapsed().as_secs_f64(),
                o.dirs.len(),
                args.requests,
                o.events,
                args.output.display(),
                o.ground_truth.display()
            );
        }
        Scenario::KernelMix => {
            let p = KernelMixParams {
                seed: args.seed,
                events: args.events,
                cpus: args.cpus,
                net,
                ..Default::default()
            };
            let s = kernel_mix::generate(&args.output, &p).map_err(|e| e.to_string())?;
            let dt = start.elapsed().as_secs_f64();
            println!(
                "Generated kernel-mix (seed {}) in {:.2} s: {} events on {} CPUs, {} packets, {} bytes in {} ({:.2} M events/s).",
                args.seed,
                dt,
                s.events,
                args.cpus,
                s.packets,
                s.bytes,
                s.dir.display(),
                s.events as f64 / dt / 1e6
            );
        }
        Scenario::Chaos => {
            let opts = ChaosOptions {
                max_events: usize::try_from(args.events).map_err(|e| e.to_string())?,
                empty_texts: !args.no_empty_texts,
                // One per seed: traces of different seeds are different traces.
                trace_uuid: {
                    let mut u = [0x5a; 16];
                    u[..8].copy_from_slice(&args.seed.to_le_bytes());
                    u
                },
            };
            let t = chaos::write_chaos_trace(&args.output, &mut Rng::new(args.seed), &opts)
                .map_err(|e| e.to_string())?;
            println!(
                "Generated chaos (seed {}) in {:.2} s: {} events on {} CPUs ({}, {} headers), {} counted as discarded, system calls {}, in {}.",
                args.seed,
                start.elapsed().as_secs_f64(),
                t.events,
                t.cpus,
                if t.big_endian { "big-endian" } else { "little-endian" },
                if t.large_headers { "large" } else { "compact" },
                t.discarded,
                if t.paired_syscalls { "in pairs" } else { "in any order" },
                args.output.display(),
            );
        }
    }
    Ok(())
}
