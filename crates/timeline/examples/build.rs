//! Builds the state model of the traces under the given paths and reports its cost: build
//! time, cache load time, memory (rows, intervals, bytes) and the time of a full-range
//! 2,000-pixel query over every row.
//!
//! `cargo run --release -p tracekit-timeline --example build -- PATH... [--cache DIR] [--rows]`
//! (`--rows`: list the rows too).

use std::path::PathBuf;
use std::time::Instant;

use timeline::{BuildOptions, Origin, Timeline};

/// CPU time (user + system) of the process so far, in seconds: what a phase costs whatever
/// else the machine runs (the wall time shows it on a loaded machine too).
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are 14th and
    // 15th of the line, 12th and 13th after the `)`.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // Clock ticks of 1/100 s, as Linux reports them.
    (field(11) + field(12)) / 100.0
}

/// A line of /proc/self/status (`VmRSS`, `VmHWM`), in bytes.
fn vm(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
        .map_or(0, |k| k * 1024)
}

fn main() {
    let mut paths = Vec::new();
    let mut cache = None;
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rows" {
            list = true;
        } else if a == "--cache" {
            cache = args.next().map(PathBuf::from);
        } else {
            paths.push(PathBuf::from(a));
        }
    }
    if paths.is_empty() {
        eprintln!("usage: build PATH... [--cache DIR] [--rows]");
        std::process::exit(2);
    }
    let traces = match ctf::open_all(&paths) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let cache_dir = cache.unwrap_or_else(|| std::env::temp_dir().join("tracekit-timeline-bench"));
    let path = Timeline::cache_path(&traces, &cache_dir);
    let _ = std::fs::remove_file(&path);
    let opts = BuildOptions {
        cache_dir: Some(cache_dir),
        ..Default::default()
    };
    let (t, c) = (Instant::now(), cpu());
    let (tl, origin, diags) = match Timeline::open(&traces, &opts) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let build = t.elapsed();
    let build_cpu = cpu() - c;
    let (rss, peak) = (vm("VmRSS"), vm("VmHWM"));
    assert_eq!(origin, Origin::Built);
    for d in &diags {
        eprintln!("warning: {d}");
    }
    let (t, c) = (Instant::now(), cpu());
    let (cached, origin, _) = Timeline::open(&traces, &opts).expect("cache load");
    let load = t.elapsed();
    let load_cpu = cpu() - c;
    assert_eq!(origin, Origin::Cached);
    let trace_bytes: u64 = traces
        .iter()
        .flat_map(|t| t.streams.iter().flat_map(|s| s.files.iter()))
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    if list {
        for r in &tl.rows {
            println!(
                "row {:5} parent {:>5} {:?} {:?} [{}, {}] {} names",
                r.id,
                r.parent.map_or("-".to_string(), |p| p.to_string()),
                r.label,
                r.kind,
                r.start,
                r.end,
                r.names.len()
            );
        }
    }
    println!("events:        {}", tl.events);
    println!("trace bytes:   {trace_bytes}");
    println!(
        "build:         {:.3} s (CPU {build_cpu:.2} s, with the cache written)",
        build.as_secs_f64()
    );
    println!(
        "cache load:    {:.3} s (CPU {load_cpu:.2} s)",
        load.as_secs_f64()
    );
    println!(
        "cache file:    {} bytes",
        std::fs::metadata(Timeline::cache_path(
            &traces,
            opts.cache_dir.as_ref().unwrap()
        ))
        .map_or(0, |m| m.len())
    );
    println!("after build:   RSS {rss} bytes, peak {peak} bytes");
    println!("rows:          {}", tl.rows.len());
    println!("intervals:     {}", tl.intervals());
    println!("arrows+model:  {} bytes", tl.memory());
    let res = ((tl.end - tl.start) / 2000).max(1);
    for (name, m) in [("built", &tl), ("cached", &cached)] {
        let t = Instant::now();
        let mut spans = 0;
        for r in 0..m.rows.len() as u32 {
            spans += m.states(r, m.start, m.end, res).len();
        }
        let states = t.elapsed();
        let arrows = m.arrows(&[], m.start, m.end, res).len();
        let q = t.elapsed();
        println!(
            "query 2000 px: {:.1} ms ({name}: {spans} spans in {:.1} ms, {arrows} arrows)",
            q.as_secs_f64() * 1e3,
            states.as_secs_f64() * 1e3
        );
    }
    let t = Instant::now();
    let _ = tl.cpu_usage(0, &[], tl.start, tl.end, 2000);
    let _ = tl.cpu_time(0, tl.start, tl.end);
    let _ = tl.event_density(tl.start, tl.end, 2000);
    println!(
        "usage+time+density: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
}
