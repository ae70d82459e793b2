//! `tracekit demo`: the whole pipeline on built-in data (a generated client-server scenario).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use scenario::client_server::{self, ClientServerParams};

use text::progress::Progress;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Where to generate the demo traces (default: a `tracekit-demo` folder in the temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Scenario seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: &DemoArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("tracekit-demo-{}-v3", args.seed)));
    // Enough requests for the clock hulls to close in on the true formulas.
    let params = ClientServerParams {
        seed: args.seed,
        requests: 200,
        ..Default::default()
    };
    if !dir.join("ground-truth.json").is_file() {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        client_server::generate(&dir, &params)?;
        println!(
            "Generated the client-server scenario (seed {}, {} hosts, {} requests) in {}",
            params.seed,
            params.hosts,
            params.requests,
            dir.display()
        );
    } else {
        println!("Using the client-server scenario in {}", dir.display());
    }
    let traces = ctf::open_all(&[&dir])?;
    println!("\n== What the traces hold");
    for t in &traces {
        println!("{}", text::cli::trace_line(t));
    }
    let counts = {
        let progress = Progress::for_traces(&traces);
        text::count_traces(&traces, &|n| progress.add(n))
    };
    let net: u64 = [
        "net_dev_queue",
        "net_if_receive_skb",
        "inet_sock_local_out",
        "inet_sock_local_in",
    ]
    .iter()
    .filter_map(|n| counts.classes.get(*n))
    .sum();
    println!(
        "\nIn all: {} events in {} traces, {} event classes, {} network packet events, {} discarded.",
        counts.events,
        traces.len(),
        counts.classes.len(),
        net,
        counts.discarded
    );
    for e in &counts.errors {
        println!("error: {e}");
    }
    show_sync(&traces, &dir)?;
    crate::critpath_cmd::demo_section(&traces, &dir.join("ground-truth.json"))?;
    println!(
        "\nNext: tracekit print --sync {} | head; tracekit sync {}",
        dir.display(),
        dir.display()
    );
    Ok(if counts.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Synchronizes the hosts' clocks and compares the result with the generator's ground truth.
fn show_sync(
    traces: &[Arc<ctf::Trace>],
    dir: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    use ctf::merge::TimeMap;
    println!("\n== Clock synchronization (tracekit sync)");
    let session = sync::synchronize(traces, &sync::SyncOptions::default());
    for m in crate::sync_cmd::verdicts(&session) {
        println!("note: {m}");
    }
    let maps = session.time_maps();
    let truth_path = dir.join("ground-truth.json");
    let clocks = scenario::ground_truth::HostClock::read_all(&truth_path)?;
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(&truth_path)?)?;
    let r = session.reference_trace();
    let ref_name = traces[r].hostname().unwrap_or("?").to_string();
    let min_delay = truth["min_one_way_delay_ns"].as_i64().unwrap_or(0);
    println!(
        "{} packets matched; reference clock: {ref_name}. Error of each recovered clock against the \
         generator's truth, at mid-trace:",
        session.stats.matches
    );
    let mut worst = 0i128;
    for (i, t) in traces.iter().enumerate() {
        let name = t.hostname().unwrap_or("?");
        let info = &session.traces[i];
        let (Some(first), Some(last)) = (info.first_ns, info.last_ns) else {
            continue;
        };
        let mid = first + (last - first) / 2;
        let (Some(own), Some(reference)) = (clocks.get(name), clocks.get(&ref_name)) else {
            continue;
        };
        // True time of `mid`, then what the reference clock read at that instant.
        let want = reference.at(own.true_time(mid as i128));
        let got = maps.map(i, mid) as i128;
        let err = got - want;
        worst = worst.max(err.abs());
        println!(
            "  {name:<8} {:>10}  error {:>8.1} µs",
            format!("{:?}", session.result.hosts[info.host as usize].quality).to_lowercase(),
            err as f64 / 1e3
        );
    }
    println!(
        "worst error {:.1} µs; the smallest one-way network delay is {:.1} µs",
        worst as f64 / 1e3,
        min_delay as f64 / 1e3
    );
    Ok(())
}
