//! Every analysis on arbitrary kernel traces ([`scenario::chaos`]): events of every class in
//! any order with any values, packets cut anywhere, discarded events counted anywhere. No
//! analysis may panic, and reading only the events a pass needs (the default) must give what
//! reading every event gives, for the analyses run together as for each alone: the skipping
//! and lossless readers against the plain one, on traces no one would write by hand.

use std::sync::Arc;

use analysis::driver::{events_for_interest_lossless, Analysed};
use analysis::lami::results_json;
use analysis::period::{run as run_periods, PeriodCmd, PeriodOptions};
use analysis::{run_names, Common, Options, NAMES};
use scenario::chaos::{write_chaos_trace, ChaosOptions, ChaosTrace};
use scenario::rng::Rng;

/// Traces per test (`TRACEKIT_CHAOS_TRACES` for a longer run), and events per trace.
fn traces_per_test() -> u64 {
    std::env::var("TRACEKIT_CHAOS_TRACES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}
const EVENTS: usize = 400;

/// The `--mi` JSON of the analyses `names` run in one pass over `traces`, one value each
/// (one error message when the run fails: no event in the analysed range).
fn results(
    traces: &[Arc<ctf::Trace>],
    names: &[&str],
    common: &Common,
    opts: &Options,
) -> Vec<serde_json::Value> {
    run(traces, names, common, opts).0
}

/// [`results`] and what the run says of the trace (nothing when it fails).
fn run(
    traces: &[Arc<ctf::Trace>],
    names: &[&str],
    common: &Common,
    opts: &Options,
) -> (Vec<serde_json::Value>, Option<Analysed>) {
    let mut out = Vec::new();
    match run_names(traces, names, common, opts, None, &mut |_, tables| {
        out = tables.iter().map(|t| results_json(t)).collect();
    }) {
        Ok(done) => (out, Some(done)),
        Err(e) => (vec![serde_json::Value::String(e.to_string())], None),
    }
}

/// Whether the analyses of `interest` read only the system calls they count: the lossless
/// read applies and meets no loss.
fn narrowed_read(traces: &[Arc<ctf::Trace>], common: &Common, interest: kernel::Interest) -> bool {
    events_for_interest_lossless(traces, common, interest).is_some_and(|mut read| {
        while read.next().is_some() {}
        !read.lost()
    })
}

fn chaos_traces(seed: u64) -> (tempfile::TempDir, Vec<Arc<ctf::Trace>>, ChaosTrace) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let written =
        write_chaos_trace(&dir, &mut Rng::new(seed), &ChaosOptions::events(EVENTS)).unwrap();
    let traces = ctf::open_all(&[dir]).unwrap();
    (tmp, traces, written)
}

#[test]
fn skipping_reads_agree_with_full_reads_on_arbitrary_traces() {
    let (mut lossy, mut interleaved, mut narrowed_unchecked) = (0, 0, 0);
    let traces_n = traces_per_test();
    for seed in 0..traces_n {
        let (_tmp, traces, written) = chaos_traces(seed);
        let discarded = written.discarded;
        lossy += (discarded > 0) as u32;
        // Half the traces with the stream intersection (most of them lose their first
        // events to it), half without.
        let common = Common {
            no_intersection: seed % 2 == 0,
            ..Default::default()
        };
        let opts = Options::default();
        let together = results(&traces, NAMES, &common, &opts);
        let every = Common {
            read_every_event: true,
            ..common.clone()
        };
        // Reading every event, the count of calls that did not pair is the whole trace's.
        let (all, done) = run(&traces, NAMES, &every, &opts);
        assert_eq!(
            together, all,
            "seed {seed}: skipping read against full read"
        );
        let (unpaired_calls, warnings) =
            done.map_or((0, Vec::new()), |d| (d.interleaved_syscalls, d.warnings));
        let unpaired = unpaired_calls > 0;
        interleaved += unpaired as u32;
        assert_eq!(
            unpaired,
            warnings.iter().any(|w| w.contains("did not pair")),
            "seed {seed}: {warnings:?}"
        );
        // Calls written in pairs pair; in any order, they interleave.
        if written.paired_syscalls {
            assert!(!unpaired, "seed {seed}: {unpaired_calls} unpaired");
        }
        for (name, joint) in NAMES.iter().zip(&together) {
            // A read of only the system calls on descriptors assumes that where it meets no
            // discarded event (in the analysed range) nothing was lost, so that a thread's
            // calls do not interleave (as on every Linux trace): where they do, it pairs
            // differently from a full read (tests/lossless.rs shows how).
            let interest = analysis::build(name, &common, &opts).unwrap().0.interest();
            if unpaired && narrowed_read(&traces, &common, interest) {
                narrowed_unchecked += 1;
                continue;
            }
            let alone = results(&traces, &[name], &common, &opts);
            assert_eq!(&alone[0], joint, "seed {seed}: {name} alone");
        }
    }
    // The generator counts discarded events in about one trace of two: both ways of the
    // lossless pass are exercised.
    assert!(
        lossy > 5 && lossy < traces_n as u32 - 5,
        "{lossy} lossy traces"
    );
    assert!(
        interleaved > 5,
        "{interleaved} traces with interleaved calls"
    );
    assert!(
        narrowed_unchecked < NAMES.len() as u32 * traces_n as u32 / 6,
        "{narrowed_unchecked} comparisons left out"
    );
}

#[test]
fn filters_and_quirks_hold_on_arbitrary_traces() {
    for seed in 100..100 + traces_per_test() / 2 {
        let (_tmp, traces, _) = chaos_traces(seed);
        let mut rng = Rng::new(seed);
        let common = Common {
            no_intersection: true,
            lttng_analyses_quirks: seed % 2 == 0,
            tids: Some(vec![rng.range(0, 7) as i32, 1_000 + rng.range(0, 9) as i32]),
            cpus: Some(vec![rng.range(0, 3) as u32]),
            procnames: rng.chance(0.5).then(|| vec!["bash".to_string()]),
            ..Default::default()
        };
        let opts = Options {
            limit: 3,
            min: Some(0),
            max: Some(rng.range(0, 1_000_000) as i64),
            irqs: rng.chance(0.5).then(|| vec![0, 1, -1]),
            softirqs: rng.chance(0.5).then(|| vec![1, 9, 300]),
            freq_resolution: 1 + rng.range(0, 5) as usize,
            freq_series: rng.chance(0.5),
            total: true,
            per_tid: true,
            per_prio: true,
            minsize: Some(1),
            maxsize: Some(1 << 20),
            ..Default::default()
        };
        let together = results(&traces, NAMES, &common, &opts);
        let every = Common {
            read_every_event: true,
            ..common.clone()
        };
        assert_eq!(
            together,
            results(&traces, NAMES, &every, &opts),
            "seed {seed}: filtered skipping read against full read"
        );
        // Every table of every analysis, in refresh periods too.
        let mut periods = 0;
        match run_names(
            &traces,
            NAMES,
            &common,
            &opts,
            Some(1 + rng.range(0, 5_000_000) as i64),
            &mut |_, _| periods += 1,
        ) {
            Ok(_) => assert!(periods > 0, "seed {seed}"),
            // No event in the range: the same without periods.
            Err(e) => assert_eq!(together, [serde_json::Value::String(e.to_string())]),
        }
    }
}

#[test]
fn period_analyses_run_on_arbitrary_traces() {
    let defs = [
        // lttng-analyses' own examples: a switch-in to switch-out period, and a system call
        // with a nested one.
        "switch : $evt.$name == \"sched_switch\" && $evt.next_tid != 0 : \
         $evt.$name == \"sched_switch\" && $evt.prev_tid == $begin.$evt.next_tid",
        "call : $evt.$name =* \"syscall_entry_*\" : $evt.$name =* \"syscall_exit_*\" \
         && $evt.cpu_id == $begin.$evt.cpu_id",
        "inner(call) : $evt.$name == \"syscall_entry_read\" : \
         $evt.$name == \"syscall_exit_read\"",
    ];
    for seed in 200..200 + traces_per_test() / 2 {
        let (_tmp, traces, _) = chaos_traces(seed);
        let opts = PeriodOptions {
            periods: defs.iter().map(|d| d.to_string()).collect(),
            captures: vec!["switch : tid = $evt.next_tid : out = $evt.prev_state".into()],
            group_by: if seed % 2 == 0 {
                vec!["switch.tid".into()]
            } else {
                Vec::new()
            },
            aggregate_by: (seed % 3 == 0).then(|| "call".into()),
            limit: 5,
            freq_resolution: 4,
            freq_uniform: seed % 2 == 1,
            ..Default::default()
        };
        // With and without the left-out events (those no definition can match, and half the
        // traces with the stream intersection).
        let common = Common {
            no_intersection: seed % 4 < 2,
            ..Default::default()
        };
        let every = Common {
            read_every_event: true,
            ..common.clone()
        };
        let run = |common: &Common| match run_periods(&traces, common, &opts) {
            Ok(result) => [
                PeriodCmd::Log,
                PeriodCmd::Top,
                PeriodCmd::Stats,
                PeriodCmd::Freq,
            ]
            .map(|cmd| {
                // Both front ends: tables for `--mi`, text for the terminal.
                (results_json(&result.tables(cmd)), result.text(cmd))
            })
            .to_vec(),
            Err(e) => vec![(serde_json::Value::String(e.to_string()), String::new())],
        };
        assert_eq!(run(&common), run(&every), "seed {seed}");
    }
}
