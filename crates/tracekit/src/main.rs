//! `tracekit`: the command-line front end.

mod analyze_cmd;
mod convert_cmd;
mod count;
mod critpath_cmd;
mod demo;
mod export_cmd;
mod gen_cmd;
mod lami_links;
mod latency_cmd;
mod live_cmd;
mod output;
mod period_cmd;
mod print;
mod read_args;
mod record_cmd;
mod recover_cmd;
mod relay_cmd;
mod sync_cmd;
mod top_cmd;
#[cfg(feature = "view")]
mod view_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Linux tracing and trace analysis: read, merge, print and count CTF (LTTng) traces.
#[derive(Parser)]
#[command(name = "tracekit", version, about, arg_required_else_help = true)]
struct Cli {
    /// Print the LAMI version of `analyze --mi` (1.0) and exit: the first question Trace
    /// Compass asks an external analysis, of the executable alone.
    #[arg(long, exclusive = true)]
    mi_version: bool,
    #[command(subcommand)]
    command: Option<Command>,
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
    /// Write the events kept by a time range and event-name patterns as CTF (LTTng layout),
    /// like `babeltrace2 --begin … --end … -o ctf -w DIR`.
    Convert(convert_cmd::ConvertArgs),
    /// Write traces in another format for other tools: Parquet tables for Spark and DuckDB
    /// (`--format parquet`), Perfetto's protobuf trace (`--format perfetto`).
    Export(export_cmd::ExportArgs),
    /// Critical path of a thread (or a request) across hosts.
    Critpath(critpath_cmd::CritpathArgs),
    /// Record a kernel trace (tracefs, stock kernel, root) as LTTng 2.13 CTF.
    Record(record_cmd::RecordArgs),
    /// Turn the kernel buffers of a flight recorder that was killed into a trace.
    Recover(recover_cmd::RecoverArgs),
    /// Synchronize traces of different hosts by matching the TCP packets they exchanged.
    Sync(sync_cmd::SyncArgs),
    /// Kernel trace analyses (lttng-analyses equivalents): cputop, syscallstats, irqstats…
    Analyze(analyze_cmd::AnalyzeArgs),
    /// Latency trackers (wakeup, off-CPU, syscall, block, IRQ): occurrences over a threshold,
    /// timeouts and histograms.
    Latency(latency_cmd::LatencyArgs),
    /// A live terminal dashboard: per-thread CPU, per-CPU load, latency distributions and
    /// the worst latencies, of a recording as it is made or of a replayed trace.
    Top(top_cmd::TopArgs),
    #[cfg(feature = "view")]
    /// Serve a web trace viewer (Control Flow, Resources, CPU usage, events, critical path)
    /// with a Trace Server Protocol back end.
    View(view_cmd::ViewArgs),
    /// Make `lttng-NAME` and `lttng-NAME-mi` links to tracekit in a directory: run by those
    /// names it is `tracekit analyze NAME [--mi]`, a drop-in for lttng-analyses' commands.
    LamiLinks(lami_links::LamiLinksArgs),
    /// A relay daemon (drop-in for lttng-relayd): LTTng sessions stream into it
    /// (`--set-url net://HOST`), live viewers read them as they are recorded.
    Relay(relay_cmd::RelayArgs),
}

fn main() -> ExitCode {
    pipeline::heap::tune();
    // Die quietly on a closed pipe (`tracekit print … | head`), as command-line tools do,
    // instead of panicking in `println!`.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Run as `lttng-cputop-mi` (a link made by `tracekit lami-links`): `analyze cputop --mi`.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = Cli::parse_from(analysis::cli::lttng_command_args(&args).unwrap_or(args));
    if cli.mi_version {
        println!("{}", analysis::lami::mi_version_string());
        return ExitCode::SUCCESS;
    }
    let Some(command) = cli.command else {
        // Not reached (no argument prints the help), but a help is the answer anyway.
        let _ = Cli::command().print_help();
        return ExitCode::from(2);
    };
    let result = match command {
        Command::Demo(a) => demo::run(&a),
        Command::Gen(a) => gen_cmd::run(&a)
            .map(|_| ExitCode::SUCCESS)
            .map_err(Into::into),
        Command::Print(a) => print::run(&a),
        Command::Count(a) => count::run(&a),
        Command::Convert(a) => convert_cmd::run(&a),
        Command::Export(a) => export_cmd::run(&a),
        Command::Critpath(a) => critpath_cmd::run(&a),
        Command::Record(a) => record_cmd::run(&a),
        Command::Recover(a) => recover_cmd::run(&a),
        Command::Sync(a) => sync_cmd::run(&a),
        Command::Analyze(a) => analyze_cmd::run(&a),
        Command::Latency(a) => latency_cmd::run(&a),
        Command::Top(a) => top_cmd::run(&a),
        #[cfg(feature = "view")]
        Command::View(a) => view_cmd::run(&a),
        Command::LamiLinks(a) => lami_links::run(&a),
        Command::Relay(a) => relay_cmd::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tracekit: error: {e}");
            ExitCode::from(2)
        }
    }
}
