//! `tracekit`: the command-line front end.

mod analyze_cmd;
mod count;
mod critpath_cmd;
mod demo;
mod gen_cmd;
mod heap;
mod latency_cmd;
mod output;
mod period_cmd;
mod pipeline;
mod plan;
mod print;
mod progress;
mod record_cmd;
mod sync_cmd;
mod text;
mod timefmt;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Linux tracing and trace analysis: read, merge, print and count CTF (LTTng) traces.
#[derive(Parser)]
#[command(name = "tracekit", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate the built-in client-server scenario and show what tracekit finds in it.
    Demo(demo::DemoArgs),
    /// Generate deterministic LTTng-like kernel traces (with ground truth).
    Gen(gen_cmd::GenArgs),
    /// Print events as text, byte-identical to `babeltrace2 PATH...`.
    Print(print::PrintArgs),
    /// Decode every field of every event and count events per class.
    Count(count::CountArgs),
    /// Critical path of a thread (or a request) across hosts.
    Critpath(critpath_cmd::CritpathArgs),
    /// Record a kernel trace (tracefs, stock kernel, root) as LTTng 2.13 CTF.
    Record(record_cmd::RecordArgs),
    /// Synchronize traces of different hosts by matching the TCP packets they exchanged.
    Sync(sync_cmd::SyncArgs),
    /// Kernel trace analyses (lttng-analyses equivalents): cputop, syscallstats, irqstats…
    Analyze(analyze_cmd::AnalyzeArgs),
    /// Latency trackers (wakeup, off-CPU, syscall, block, IRQ): occurrences over a threshold,
    /// timeouts and histograms.
    Latency(latency_cmd::LatencyArgs),
}

fn main() -> ExitCode {
    heap::tune();
    // Die quietly on a closed pipe (`tracekit print … | head`), as command-line tools do,
    // instead of panicking in `println!`.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => demo::run(&a),
        Command::Gen(a) => gen_cmd::run(&a)
            .map(|_| ExitCode::SUCCESS)
            .map_err(Into::into),
        Command::Print(a) => print::run(&a),
        Command::Count(a) => count::run(&a),
        Command::Critpath(a) => critpath_cmd::run(&a),
        Command::Record(a) => record_cmd::run(&a),
        Command::Sync(a) => sync_cmd::run(&a),
        Command::Analyze(a) => analyze_cmd::run(&a),
        Command::Latency(a) => latency_cmd::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tracekit: error: {e}");
            ExitCode::from(2)
        }
    }
}
