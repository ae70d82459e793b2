//! `tracekit critpath`: the critical path of a thread, across hosts.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use critpath::input::{build_graph, BuildOptions, Built};
use critpath::report::Report;

use pipeline::time::parse_time;
use text::TimeFormatter;

#[derive(clap::Args)]
pub struct CritpathArgs {
    /// Trace directories (searched recursively), one or more hosts.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Thread to follow.
    #[arg(long)]
    pub tid: i64,
    /// Host of the thread (its `hostname`), when the tid exists on several hosts.
    #[arg(long)]
    pub host: Option<String>,
    /// Start of the interval: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` or `SECONDS[.NNNNNNNNN]`.
    #[arg(long)]
    pub begin: Option<String>,
    /// End of the interval (same syntax).
    #[arg(long)]
    pub end: Option<String>,
    /// Synchronize the hosts' clocks first (from the TCP packets they exchanged).
    #[arg(long)]
    pub sync: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
    /// Keep the followed thread's own time after it sent the packet (or issued the I/O) it
    /// then waited for, as Trace Compass does; by default the path leaves it when the
    /// request left.
    #[arg(long)]
    pub no_cut: bool,
    /// Print times in UTC.
    #[arg(long)]
    pub gmt: bool,
    /// Print the time spent building the graph and computing the path to stderr.
    #[arg(long)]
    pub timings: bool,
}

/// Reads the traces (synchronized first when asked) and builds their graph.
pub fn build(traces: &[Arc<ctf::Trace>], sync: bool) -> Result<Built, Box<dyn std::error::Error>> {
    let mut opts = BuildOptions::default();
    if sync {
        opts.time_map = Some(crate::sync_cmd::time_map(traces));
    }
    Ok(build_graph(traces, opts))
}

pub fn run(args: &CritpathArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    if traces.is_empty() {
        return Err("no trace found".into());
    }
    let t0 = std::time::Instant::now();
    let built = build(&traces, args.sync)?;
    let build_s = t0.elapsed().as_secs_f64();
    let fmt = TimeFormatter::new(args.gmt);
    let reference = Some(built.first_ts);
    let begin = args
        .begin
        .as_deref()
        .map(|s| parse_time(s, fmt.tz(), reference))
        .transpose()?;
    let end = args
        .end
        .as_deref()
        .map(|s| parse_time(s, fmt.tz(), reference))
        .transpose()?;
    let mut report = critpath::path_of_thread(
        &built,
        args.tid,
        args.host.as_deref(),
        begin,
        end,
        !args.no_cut,
    )?;
    if !args.sync {
        // The stacks of `record --stacks` name the functions the waits were spent in.
        let stacks = kernel::stacks::read_stacks(&traces)?;
        critpath::report::name_blocked_functions(&mut report, &stacks);
    }
    if args.timings {
        let g = &built.graph;
        eprintln!(
            "tracekit: critpath timings: build {build_s:.3} s, path {:.3} s, {} events, {} \
             vertices, {} vertical edges, {} graph bytes",
            t0.elapsed().as_secs_f64() - build_s,
            built.stats.events,
            g.len(),
            g.vertical_edges().len(),
            g.heap_bytes()
        );
    }
    if args.json {
        println!("{}", critpath::report::to_json(&report, &built)?);
    } else {
        print!("{}", render_text(&report, args.gmt));
    }
    Ok(ExitCode::SUCCESS)
}

/// The path as a timeline and its totals, times of day in UTC with `gmt`.
pub fn render_text(report: &Report, gmt: bool) -> String {
    let mut fmt = TimeFormatter::new(gmt);
    critpath::report::render_text(report, |b, t| fmt.write_time(b, t))
}

/// `tracekit demo`'s section: the critical path of the scenario's marked request, computed
/// on the synchronized traces, next to the generator's ground truth.
pub fn demo_section(
    traces: &[Arc<ctf::Trace>],
    ground_truth: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(m) = scenario::ground_truth::MarkedRequest::read(ground_truth)? else {
        return Ok(());
    };
    let client = m.client.as_str();
    let tid = m.tid;
    let ci = traces
        .iter()
        .position(|t| t.hostname() == Some(client))
        .ok_or("no trace of the client")?;
    let session = sync::synchronize(traces, &sync::SyncOptions::default());
    let maps = session.time_maps();
    // True time → the client's clock → the synchronized time line.
    let on_client = |t: i64| ctf::merge::TimeMap::map(&maps, ci, m.on_client(t));
    let built = build_graph(
        traces,
        BuildOptions {
            time_map: Some(Arc::new(session.time_maps())),
            matcher: None,
        },
    );
    let report = critpath::path_of_thread(
        &built,
        tid,
        Some(client),
        Some(on_client(m.begin)),
        Some(on_client(m.end)),
        true,
    )?;
    println!(
        "\n== Critical path of the marked request (request {} of {}/{}), hosts synchronized",
        m.index, client, tid
    );
    println!(
        "   (tracekit critpath {} --sync --tid {tid} --host {client} --begin … --end …)\n",
        traces
            .first()
            .and_then(|t| t.path.parent())
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    );
    print!("{}", render_text(&report, true));
    // Compare with the ground truth: the sequence of (host, thread, state).
    let (expected, got, same) = m.compare_path(
        report
            .path
            .iter()
            .map(|s| (s.host.clone(), s.tid, s.state.to_string())),
    );
    println!(
        "\nGround truth: {} segments; computed: {} segments; same hosts, threads and states in \
         the same order: {}",
        expected,
        got,
        if same { "yes" } else { "NO" }
    );
    Ok(())
}
