//! `tracekit sync`: synchronizes traces of different hosts by matching the TCP packets they
//! exchanged (fully incremental convex hull per host pair, exact arithmetic).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use sync::report::{to_json, to_text};
use sync::{FormulaKind, Session, SyncOptions};

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

/// Finds the trace index of `--reference PATH`.
pub fn resolve_reference(traces: &[Arc<ctf::Trace>], p: &Path) -> Result<usize, String> {
    let want = std::fs::canonicalize(p).map_err(|e| format!("--reference {}: {e}", p.display()))?;
    traces
        .iter()
        .position(|t| {
            std::fs::canonicalize(&t.path)
                .map(|c| c == want || c.starts_with(&want))
                .unwrap_or(false)
        })
        .ok_or_else(|| format!("--reference {}: not one of the traces given", p.display()))
}

/// Synchronizes opened traces (shared by `sync` and the `--sync` flags), default formula.
pub fn session_for(
    traces: &[Arc<ctf::Trace>],
    reference: Option<&Path>,
    window_s: f64,
) -> Result<Session, String> {
    session_with(traces, reference, window_s, FormulaKind::default())
}

/// [`session_for`] with the formula chosen in each pair's feasible region.
pub fn session_with(
    traces: &[Arc<ctf::Trace>],
    reference: Option<&Path>,
    window_s: f64,
    formula: FormulaKind,
) -> Result<Session, String> {
    let reference = reference
        .map(|p| resolve_reference(traces, p))
        .transpose()?;
    let opts = SyncOptions {
        reference,
        window_ns: (window_s * 1e9).max(1.0) as i64,
        formula,
        ..SyncOptions::default()
    };
    Ok(sync::synchronize(traces, &opts))
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
    let s = session_with(
        &traces,
        args.reference.as_deref(),
        args.window,
        args.formula.into(),
    )?;
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
