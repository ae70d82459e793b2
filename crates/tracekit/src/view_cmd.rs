//! `tracekit view`: the web trace viewer.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct ViewArgs {
    /// Trace directories (searched recursively), one or more hosts: one experiment; or live
    /// sessions `net://RELAY[:PORT]/host/HOST/SESSION`, followed while they run.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Synchronize the hosts' clocks first (from the TCP packets they exchanged).
    #[arg(long)]
    pub sync: bool,
    /// Address to listen on; any non-loopback address requires the access token printed in
    /// the URL.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Open the page in the desktop's browser (xdg-open).
    #[arg(long)]
    pub open: bool,
    /// Where the state models are cached [default: $XDG_CACHE_HOME/tracekit/view or
    /// ~/.cache/tracekit/view].
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the cache.
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,
    /// A period to measure in the latency views (several allowed), as `tracekit analyze
    /// periodlog --period` defines it: `NAME[(PARENT)] : BEGIN-EXPR [: END-EXPR]`.
    #[arg(long)]
    pub period: Vec<String>,
    /// Captures of the periods, shown in the latency table: `NAME : a = $evt.f, ...`.
    #[arg(long)]
    pub period_captures: Vec<String>,
    /// Live sessions: keep the traces received in DIR (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    pub live_copy: Option<PathBuf>,
}

pub fn run(args: &ViewArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let cache_dir = if args.no_cache {
        None
    } else {
        args.cache_dir.clone().or_else(view::default_cache_dir)
    };
    analysis::period::definition_names(&args.period, &args.period_captures)?;
    // Live sessions are served at once, their model growing (nothing to wait for).
    let live = crate::live_cmd::urls(&args.paths).transpose()?;
    let traces = match live {
        Some(_) => Vec::new(),
        None => ctf::open_all(&args.paths)?,
    };
    if traces.is_empty() && live.is_none() {
        return Err("no trace found".into());
    }
    let progress = Arc::new(text::progress::Progress::for_traces(&traces));
    let server = view::Server::start(view::ServeOptions {
        paths: if live.is_some() {
            Vec::new()
        } else {
            args.paths.clone()
        },
        sync: args.sync,
        listen: args.listen,
        cache_dir,
        progress: Some(progress.clone() as Arc<dyn pipeline::Progress>),
        periods: view::PeriodDefs {
            periods: args.period.clone(),
            captures: args.period_captures.clone(),
        },
        live: live.clone().unwrap_or_default(),
        live_copy: args.live_copy.clone(),
    })?;
    if live.is_none() {
        eprintln!("tracekit: indexing {} trace(s)…", traces.len());
    }
    let indexed = if traces.is_empty() {
        Ok(Vec::new())
    } else {
        server.wait_indexed()
    };
    progress.finish();
    match indexed {
        Ok(problems) => {
            for p in problems {
                eprintln!("tracekit: warning: {p}");
            }
        }
        Err(why) => eprintln!("tracekit: error: {why}"),
    }
    println!("tracekit view: {}", server.url());
    println!("(Ctrl-C to stop)");
    if args.open {
        if let Err(e) = std::process::Command::new("xdg-open")
            .arg(server.url())
            .spawn()
        {
            eprintln!("tracekit: cannot run xdg-open: {e}");
        }
    }
    server.run_until_signal()?;
    Ok(ExitCode::SUCCESS)
}
