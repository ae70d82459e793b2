//! Helpers for the workspace's tests (a dev-dependency only): finding the shared reference
//! data, and telling whether a shared trace is still the one its references were made from.
//!
//! The shared traces (`TRACEKIT_SHARED`) are read-only data that the project does not own,
//! and they can be damaged from outside: a trace directory once got another trace's
//! `metadata` and one of its stream files, so that its own streams no longer decoded (big-endian
//! metadata over little-endian streams). Tests comparing with references computed from the
//! original trace cannot pass on such a directory, and must not fail on it either: they skip
//! that trace loudly ([`intact_trace`]) and keep comparing the others.

#![deny(missing_docs)]

pub mod lttng;
pub mod root;
mod xorshift;

pub use xorshift::XorShift;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use ctf::ir::ByteOrder;
use ctf::trace::StreamFiles;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use ctf::{Message, StreamReader, Trace};
use kernel::lttng::{ev, trace_class, with_byte_order, HostInfo, NetLayout};
use scenario::common::{read_entry, read_exit, switch, Task};

/// The shared data directory (`TRACEKIT_SHARED`, e.g. `/work/shared`; CI sets `../shared`), or
/// `None` when the variable is unset.
pub fn shared() -> Option<PathBuf> {
    std::env::var_os("TRACEKIT_SHARED").map(PathBuf::from)
}

/// [`shared`], saying on stderr that `what` is skipped when `TRACEKIT_SHARED` is unset.
pub fn shared_or_skip(what: &str) -> Option<PathBuf> {
    let sh = shared();
    if sh.is_none() {
        eprintln!("TRACEKIT_SHARED is not set: skipping {what}");
    }
    sh
}

/// Whether the peer tool `program` runs (`program --version`), for a test that compares with
/// it. Where the shared suites run (`TRACEKIT_SHARED` set: CI) it must: a missing one fails
/// the test, saying to install `install`; elsewhere the test skips `what`, said on stderr.
pub fn tool_or_skip(program: &str, install: &str, what: &str) -> bool {
    let runs = std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !runs {
        assert!(
            shared().is_none(),
            "{program} must be installed where the shared suites run ({install})"
        );
        eprintln!("{program} is not installed: skipping {what}");
    }
    runs
}

/// babeltrace2's text of the trace(s) at `path`, which it must read without an error; `None`
/// where babeltrace2 is missing and the test may skip that read ([`tool_or_skip`]).
pub fn babeltrace2_text(path: &std::path::Path) -> Option<String> {
    if !tool_or_skip(
        "babeltrace2",
        "apt-get install babeltrace2",
        "the babeltrace2 read",
    ) {
        return None;
    }
    let bt = std::process::Command::new("babeltrace2")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        bt.status.success(),
        "babeltrace2 {}: {}",
        path.display(),
        String::from_utf8_lossy(&bt.stderr)
    );
    Some(String::from_utf8_lossy(&bt.stdout).into_owned())
}

/// What reading a whole trace with its own metadata found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceCheck {
    /// Every problem, naming its file (and the byte offset in data files): metadata errors,
    /// streams that cannot be decoded, packet UUIDs differing from the metadata's.
    pub problems: Vec<String>,
    /// Stream files read to their end without a problem.
    pub sound_files: usize,
    /// Events of those files.
    pub sound_events: u64,
}

impl TraceCheck {
    /// A one-line description of the damage (the first problems and how many there are), or
    /// `None` when there is none.
    pub fn damage(&self) -> Option<String> {
        const SHOWN: usize = 3;
        let first = self.problems.first()?;
        let mut s = first.clone();
        for p in self.problems.iter().skip(1).take(SHOWN - 1) {
            s.push_str("; ");
            s.push_str(p);
        }
        if self.problems.len() > SHOWN {
            s.push_str(&format!(
                "; and {} more problems",
                self.problems.len() - SHOWN
            ));
        }
        Some(s)
    }
}

/// Opens the trace in `dir` and reads every stream file to its end with the trace's metadata.
///
/// Results are kept per directory for the life of the test binary: reading a large trace
/// takes a while in a debug build, and every test of a file asks about the same traces.
pub fn check_trace(dir: &Path) -> TraceCheck {
    static CACHE: OnceLock<Mutex<BTreeMap<PathBuf, Arc<TraceCheck>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    // Held while checking: tests running in parallel wait for one check instead of all
    // reading the same trace.
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    let check = cache
        .entry(dir.to_path_buf())
        .or_insert_with(|| Arc::new(check_uncached(dir)));
    (**check).clone()
}

fn check_uncached(dir: &Path) -> TraceCheck {
    let mut check = TraceCheck::default();
    let trace = match Trace::open(dir) {
        Ok(t) => t,
        Err(e) => {
            check.problems.push(e.to_string());
            return check;
        }
    };
    // Each file on its own: the reader of a stream stops at its first bad file, and a foreign
    // file can be grouped with a sound one (the stream ids it seems to hold are garbage).
    let files = trace.streams.iter().flat_map(|s| s.files.iter().cloned());
    for file in files {
        let one = Arc::new(Trace {
            streams: vec![StreamFiles {
                files: vec![file],
                stream_class_id: None,
                stream_id: None,
                indexes: Vec::new(),
                packets: None,
            }],
            errors: Vec::new(),
            class: trace.class.clone(),
            layout: trace.layout.clone(),
            path: trace.path.clone(),
            name: trace.name.clone(),
            index: 0,
        });
        let mut r = StreamReader::new(one, 0);
        let mut problems = Vec::new();
        let mut events = 0u64;
        while let Some(m) = r.next() {
            match m {
                Ok(Message::Event) => events += 1,
                Ok(_) => {}
                Err(e) => problems.push(e.to_string()),
            }
        }
        // A packet UUID that is not the metadata's is only a warning when reading (Babeltrace
        // 2's own test traces have some), but it is what a stream file of another trace of the
        // same byte order looks like.
        problems.extend(
            r.warnings
                .iter()
                .filter(|w| w.contains("UUID differs"))
                .cloned(),
        );
        if problems.is_empty() {
            check.sound_files += 1;
            check.sound_events += events;
        }
        check.problems.extend(problems);
    }
    check
}

/// Why the trace in `dir` cannot be read with its own metadata (a metadata error, a stream
/// that does not decode, a packet UUID that is not the metadata's), or `None` when every
/// stream reads to its end.
pub fn trace_damage(dir: &Path) -> Option<String> {
    check_trace(dir).damage()
}

/// The shared trace `rel` (a path below the shared directory, e.g.
/// `traces/kernel/many-threads`), for comparing with references made from the original trace.
///
/// `None` when the trace is damaged ([`trace_damage`]), after saying so loudly: it cannot match
/// its references, and it is not the code under test that is wrong. Panics when the trace is
/// missing: a test must not pass by not finding what it compares.
pub fn intact_trace(shared: &Path, rel: &str) -> Option<PathBuf> {
    let dir = shared.join(rel);
    assert!(
        dir.join("metadata").is_file(),
        "shared trace {} is missing (no metadata file)",
        dir.display()
    );
    let Some(damage) = trace_damage(&dir) else {
        return Some(dir);
    };
    // The test harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .map_or(String::new(), |n| format!("{n}: "));
    loud(&format!(
        "{test}SKIPPED: shared trace {} is damaged: {damage} (its references were made from \
         the original trace; restore it to compare)",
        dir.display()
    ));
    None
}

/// Writes a line to the process's stderr even when the test harness captures output (it
/// captures `eprintln!`, and shows it only for failing tests): a skipped comparison must be
/// seen in a passing run.
pub fn loud(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Epoch time (ns) of the clock zero of [`small_kernel_writer`]'s traces.
pub const CLOCK_OFFSET_NS: i64 = 1_700_000_000_000_000_000;

/// Trace directories (holding `metadata`) at or below `root`, sorted: each trace once, its
/// subdirectories not searched further (an unreadable directory holds none).
pub fn trace_dirs(root: &Path) -> Vec<PathBuf> {
    if root.join("metadata").is_file() {
        return vec![root.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut subs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.iter().flat_map(|s| trace_dirs(s)).collect()
}

/// A writer of a small LTTng 2.13 kernel trace in `dir` (compact headers, `cpus` streams,
/// hostname `gen`, clock zero at [`CLOCK_OFFSET_NS`]), with trace UUID `[uuid_byte; 16]`:
/// what the tests that build traces event by event start from.
pub fn small_kernel_writer(dir: &Path, uuid_byte: u8, cpus: u32) -> TraceWriter {
    let host = HostInfo {
        hostname: "gen".into(),
        trace_uuid: [uuid_byte; 16],
        clock_uuid: [uuid_byte.wrapping_add(1); 16],
        clock_offset_ns: CLOCK_OFFSET_NS as i128,
        creation: "20240305T101500+0000".into(),
        trace_name: "gen".into(),
        kernel_release: "6.1.0".into(),
    };
    let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    TraceWriter::create(dir, &tc, cpus, &WriterOptions::default()).expect("trace writer")
}

/// Writes a small LTTng-like kernel trace in `dir` (created): two CPUs, a few scheduling and
/// `read` events, in the byte order `byte_order`, with trace UUID `[uuid_byte; 16]`. Returns
/// its number of events. Two such traces of different byte orders make a damaged trace the way
/// the shared `many-threads` once was: one's metadata, both one's streams.
pub fn write_small_trace(dir: &Path, byte_order: ByteOrder, uuid_byte: u8) -> u64 {
    let host = HostInfo {
        hostname: format!("small-{uuid_byte}"),
        trace_uuid: [uuid_byte; 16],
        clock_uuid: [uuid_byte ^ 0xff; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "small".into(),
        kernel_release: "6.1.0".into(),
    };
    let mut tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    if byte_order != tc.byte_order {
        tc = with_byte_order(&tc, byte_order).expect("flipped TSDL parses");
        assert_eq!(tc.byte_order, byte_order);
    }
    let mut w = TraceWriter::create(dir, &tc, 2, &WriterOptions::default()).unwrap();
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(100, 100, "alpha");
    let c = Task::new(300, 300, "gamma");
    let evs = [
        (0, ev::SCHED_SWITCH, 1000, switch(&s0, 0, &a)),
        (0, ev::SYS_READ, 1500, read_entry(3, 100)),
        (1, ev::SCHED_SWITCH, 2000, switch(&s1, 0, &c)),
        (0, ev::SYSX_READ, 2500, read_exit(10, 0)),
        (1, ev::SYS_READ, 4000, read_entry(5, 100)),
        (1, ev::SYSX_READ, 7000, read_exit(2, 0)),
        (0, ev::SCHED_SWITCH, 9000, switch(&a, 1, &s0)),
    ];
    for (cpu, id, ts, p) in &evs {
        w.write_event(*cpu, *id, *ts, p).unwrap();
    }
    w.finish().unwrap();
    evs.len() as u64
}

/// Makes `out` a damaged trace: trace `a`'s metadata and stream files, plus trace `b`'s stream
/// files renamed `other_*` (a `metadata` of `b` is left out).
pub fn mix_traces(a: &Path, b: &Path, out: &Path) {
    mix_traces_with_prefix(a, b, out, "other_");
}

/// [`mix_traces`], `b`'s files renamed `PREFIX*` (which decides whether they sort before or
/// after `a`'s).
pub fn mix_traces_with_prefix(a: &Path, b: &Path, out: &Path, other: &str) {
    std::fs::create_dir_all(out).unwrap();
    for (from, prefix) in [(a, ""), (b, other)] {
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            // Stream files only: `b`'s indexes would describe files renamed here.
            if e.file_type().unwrap().is_dir() {
                continue;
            }
            if prefix.is_empty() || name != "metadata" {
                std::fs::copy(e.path(), out.join(format!("{prefix}{name}"))).unwrap();
            }
        }
    }
}

/// Writes a generated kernel-mix trace (`scenario::kernel_mix`, default layout) of `events`
/// events on `cpus` CPUs from `seed` into `dir`.
pub fn kernel_mix(dir: &Path, events: u64, cpus: u32, seed: u64) {
    let p = scenario::kernel_mix::KernelMixParams {
        events,
        cpus,
        seed,
        ..Default::default()
    };
    scenario::kernel_mix::generate(dir, &p).expect("kernel-mix trace written");
}
