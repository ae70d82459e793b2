//! `tracekit sync`: synchronizes traces of different hosts by matching the TCP packets they
//! exchanged (fully incremental convex hull per host pair, exact arithmetic).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use sync::report::{to_json, to_text};
use sync::{FormulaKind, SyncOptions};

pub use sync::report::verdicts;

#[derive(clap::Args)]
pub struct SyncArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// The trace whose clock is the reference (default: the one whose clock UUID sorts first).
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Window of the piecewise-linear fallback for pairs whose drift is not linear, seconds.
    #[arg(long, default_value_t = 60.0)]
    pub window: f64,
    /// The formula chosen among the lines the packets allow: `bisector` of the two bounding
    /// lines (the fully incremental method's, as Trace Compass: results compare), or `centre`,
    /// the centroid of the feasible region (more accurate with few packets).
    #[arg(long, value_enum, default_value_t = FormulaArg::Bisector)]
    pub formula: FormulaArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormulaArg {
    Bisector,
    Centre,
}

impl From<FormulaArg> for FormulaKind {
    fn from(f: FormulaArg) -> Self {
        match f {
            FormulaArg::Bisector => FormulaKind::Bisector,
            FormulaArg::Centre => FormulaKind::Centre,
        }
    }
}

/// `--sync` of every command: synchronizes `traces` with the default options, tells on
/// stderr what the result is worth, and returns the time line to read them on.
pub fn time_map(traces: &[Arc<ctf::Trace>]) -> Arc<dyn ctf::merge::TimeMap> {
    let session = sync::synchronize(traces, &SyncOptions::default());
    for m in verdicts(&session) {
        eprintln!("tracekit: sync: {m}");
    }
    Arc::new(session.time_maps())
}

pub fn run(args: &SyncArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    if traces.is_empty() {
        return Err("no trace found".into());
    }
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let opts = SyncOptions {
        reference: args
            .reference
            .as_deref()
            .map(|p| sync::reference_index(&traces, p))
            .transpose()?,
        window_ns: (args.window * 1e9).max(1.0) as i64,
        formula: args.formula.into(),
        ..SyncOptions::default()
    };
    let s = sync::synchronize(&traces, &opts);
    for e in s.errors.iter().take(20) {
        eprintln!("tracekit: warning: {e}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&s))?);
    } else {
        print!("{}", to_text(&s));
    }
    Ok(ExitCode::SUCCESS)
}
