//! `tracekit demo`: the whole pipeline on built-in data (a generated client-server scenario).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use scenario::client_server::{self, ClientServerParams};

use crate::count::count_traces;
use crate::progress::Progress;

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
        .unwrap_or_else(|| std::env::temp_dir().join(format!("tracekit-demo-{}", args.seed)));
    let params = ClientServerParams {
        seed: args.seed,
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
        show_trace(t);
    }
    let counts = count_traces(&traces, &Progress::for_traces(&traces));
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
    println!(
        "\nThe hosts' clocks disagree (offsets up to an hour, drifts up to 50 ppm): merging them as\n\
         recorded is wrong until `tracekit sync` lands. Ground truth: {}",
        dir.join("ground-truth.json").display()
    );
    crate::critpath_cmd::demo_section(&traces, &dir.join("ground-truth.json"))?;
    println!("\nNext: tracekit print {}/<host> | head", dir.display());
    Ok(if counts.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn show_trace(t: &Arc<ctf::Trace>) {
    let host = t.hostname().unwrap_or("?");
    let mut per_class: BTreeMap<String, u64> = BTreeMap::new();
    let (mut first, mut last) = (None, None);
    for mut r in t.readers() {
        while let Some(m) = r.next() {
            if let Ok(ctf::Message::Event) = m {
                let ev = r.event();
                *per_class.entry(ev.name().to_string()).or_default() += 1;
                let ts = ev.time_ns();
                if let Some(ts) = ts {
                    first = Some(first.map_or(ts, |f: i64| f.min(ts)));
                    last = Some(last.map_or(ts, |l: i64| l.max(ts)));
                }
            }
        }
    }
    let total: u64 = per_class.values().sum();
    let mut top: Vec<(&String, &u64)> = per_class.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let dur = match (first, last) {
        (Some(a), Some(b)) => format!("{:.3} s", (b - a) as f64 / 1e9),
        _ => "?".into(),
    };
    println!(
        "{host:<10} {total:>7} events on {} CPUs over {dur}; most frequent: {}",
        t.streams.len(),
        top.iter()
            .take(4)
            .map(|(n, c)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
