//! Any bytes → an arbitrary kernel trace (`scenario::chaos`, the bytes choosing every event,
//! value, packet cut and loss) → every analysis in one pass, twice: reading only the events
//! the analyses need, and reading every event. No panic, and the same results.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use analysis::lami::results_json;
use analysis::{run_names, Common, Options, NAMES};
use libfuzzer_sys::fuzz_target;
use scenario::chaos::{write_chaos_trace, Bytes, ChaosOptions};

/// This process' scratch directory (the trace is written again for each input).
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        base.join(format!("tracekit-fuzz-chaos-{}", std::process::id()))
    })
}

fn results(traces: &[std::sync::Arc<ctf::Trace>], common: &Common) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let r = run_names(traces, NAMES, common, &Options::default(), None, &mut |_, tables| {
        out = tables.iter().map(|t| results_json(t)).collect();
    });
    // A trace whose events all fall outside the analysed range reads nothing: an error,
    // the same for both reads.
    if r.is_err() {
        out.clear();
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    let _ = std::fs::remove_dir_all(dir);
    let opts = ChaosOptions::events(2_000);
    if write_chaos_trace(dir, &mut Bytes::new(data), &opts).is_err() {
        return;
    }
    let Ok(traces) = ctf::open_all(&[dir.clone()]) else {
        return;
    };
    let common = Common {
        no_intersection: data.first().is_some_and(|b| b & 1 == 1),
        ..Default::default()
    };
    let skipping = results(&traces, &common);
    let every = Common {
        read_every_event: true,
        ..common
    };
    assert_eq!(skipping, results(&traces, &every));
});
