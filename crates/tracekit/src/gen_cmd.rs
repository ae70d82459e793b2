//! `tracekit gen`: deterministic LTTng-like kernel traces with ground truth.

use scenario::cli::GenRequest;
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
pub fn run(args: &GenArgs) -> Result<(), scenario::cli::Error> {
    let req = GenRequest {
        scenario: match args.scenario {
            Scenario::ClientServer => scenario::cli::Scenario::ClientServer,
            Scenario::KernelMix => scenario::cli::Scenario::KernelMix,
            Scenario::Chaos => scenario::cli::Scenario::Chaos,
        },
        output: args.output.clone(),
        seed: args.seed,
        hosts: args.hosts,
        max_offset: args.max_offset,
        max_drift_ppm: args.max_drift_ppm,
        requests: args.requests,
        events: args.events,
        cpus: args.cpus,
        inet_sock: args.inet_sock,
        no_empty_texts: args.no_empty_texts,
    };
    println!("{}", scenario::cli::generate(&req)?);
    Ok(())
}
