//! The Perfetto sink through the library API, on arbitrary traces: whatever a trace says, the
//! output is a `Trace` whose every packet decodes, holding what the report counts. (Perfetto's
//! own bindings check the format itself: crates/tracekit/tests/perfetto.rs.)

#![cfg(feature = "perfetto")]

use std::collections::BTreeMap;

use export::perfetto::proto::{self, Data, Event};
use export::perfetto::{export_files, PerfettoOptions, PerfettoReport, PerfettoSink, Written};
use pipeline::{FileSource, ReadOptions, Source};
use proptest::prelude::*;
use prost::Message;
use scenario::chaos::{write_chaos_trace, ChaosOptions};
use scenario::rng::Rng;

/// Perfetto's name of a decoded event's kind.
fn name(e: &Event) -> &'static str {
    match e {
        Event::SchedSwitch(_) => "sched_switch",
        Event::SchedWakeup(_) => "sched_wakeup",
        Event::SchedWaking(_) => "sched_waking",
        Event::SchedWakeupNew(_) => "sched_wakeup_new",
        Event::SoftirqEntry(_) => "softirq_entry",
        Event::SoftirqExit(_) => "softirq_exit",
        Event::SoftirqRaise(_) => "softirq_raise",
        Event::IrqHandlerEntry(_) => "irq_handler_entry",
        Event::IrqHandlerExit(_) => "irq_handler_exit",
        Event::TaskNewtask(_) => "task_newtask",
        Event::SchedProcessExec(_) => "sched_process_exec",
        Event::SchedProcessExit(_) => "sched_process_exit",
        Event::SchedProcessFork(_) => "sched_process_fork",
        Event::SchedProcessFree(_) => "sched_process_free",
        Event::SysEnter(_) => "sys_enter",
        Event::SysExit(_) => "sys_exit",
    }
}

/// The events of bundle `b` in time order: its expanded events, and those of its compact
/// columns (times as deltas from the previous of their kind), with their kinds. Each form is
/// checked to be in time order on its own.
fn bundle_events(b: &proto::FtraceEventBundle) -> Vec<(u64, &'static str)> {
    let mut out: Vec<(u64, &'static str)> = Vec::new();
    for e in &b.event {
        let ts = e.timestamp.expect("a time");
        assert!(
            out.last().is_none_or(|l| l.0 <= ts),
            "expanded events go back in time"
        );
        out.push((ts, name(e.event.as_ref().expect("a kind"))));
    }
    if let Some(c) = &b.compact_sched {
        let n = c.switch_timestamp.len();
        for col in [
            c.switch_prev_state.len(),
            c.switch_next_pid.len(),
            c.switch_next_prio.len(),
        ] {
            assert_eq!(col, n, "compact sched_switch columns of one length");
        }
        assert_eq!(c.switch_next_comm_index.len(), n);
        let n = c.waking_timestamp.len();
        for col in [
            c.waking_pid.len(),
            c.waking_target_cpu.len(),
            c.waking_prio.len(),
        ] {
            assert_eq!(col, n, "compact sched_waking columns of one length");
        }
        assert_eq!(c.waking_comm_index.len(), n);
        let strings = c.intern_table.len() as u32;
        for (deltas, index, kind) in [
            (
                &c.switch_timestamp,
                &c.switch_next_comm_index,
                "sched_switch",
            ),
            (&c.waking_timestamp, &c.waking_comm_index, "sched_waking"),
        ] {
            let mut ts = 0u64;
            for (d, i) in deltas.iter().zip(index) {
                assert!(*i < strings, "a comm index within the intern table");
                ts = ts.checked_add(*d).expect("compact times never go back");
                out.push((ts, kind));
            }
        }
    }
    out.sort_by_key(|e| e.0);
    out
}

/// Exports the chaos trace of `seed` through the sink and through [`export_files`], checks
/// each output against its report and that both hold the same events; returns the number of
/// events written.
fn export_chaos(seed: u64, events: usize) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let written = write_chaos_trace(&dir, &mut Rng::new(seed), &ChaosOptions::events(events))
        .expect("chaos trace written");
    let source = FileSource::open(
        &[&dir],
        ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    )
    .expect("trace opens");
    let file = tmp.path().join("out.pftrace");
    let sink = PerfettoSink::new(source.traces(), PerfettoOptions { file: file.clone() }).unwrap();
    let report = match export::export(&source, sink) {
        Ok((report, _)) => report,
        // A trace may hold no event Perfetto has a counterpart for.
        Err(export::Error::NothingKept) => return 0,
        Err(e) => panic!("seed {seed}: {e}"),
    };
    let merged = check_output(seed, &file, &report, written.cpus);
    let parallel = tmp.path().join("parallel.pftrace");
    let (report2, _) = export_files(
        &source,
        PerfettoOptions {
            file: parallel.clone(),
        },
    )
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(report2.counts, report.counts, "seed {seed}");
    assert_eq!(
        check_output(seed, &parallel, &report2, written.cpus),
        merged
    );
    report.exported
}

/// Per CPU, its events' times and kinds.
type PerCpu = BTreeMap<u32, Vec<(u64, &'static str)>>;

/// Checks the Perfetto trace `file` against its report: every packet decodes, each CPU's
/// events are in time order, the counts are the report's. Returns each CPU's events (time and
/// kind, in order) and the number of statedump threads.
fn check_output(
    seed: u64,
    file: &std::path::Path,
    report: &PerfettoReport,
    cpus: u32,
) -> (PerCpu, u64) {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(bytes.len() as u64, report.bytes, "seed {seed}");
    let trace = proto::Trace::decode(bytes.as_slice()).expect("the output decodes");
    assert_eq!(trace.packet.len() as u64, report.packets, "seed {seed}");
    let mut got: BTreeMap<&str, u64> = BTreeMap::new();
    let mut per_cpu = PerCpu::new();
    for p in &trace.packet {
        match &p.data {
            Some(Data::FtraceEvents(b)) => {
                let cpu = b.cpu.expect("a bundle names its CPU");
                assert!(cpu < cpus, "seed {seed}: CPU {cpu}");
                let events = per_cpu.entry(cpu).or_default();
                for (ts, kind) in bundle_events(b) {
                    *got.entry(kind).or_default() += 1;
                    let l = events.last().map_or(0, |e| e.0);
                    assert!(ts >= l, "seed {seed}: CPU {cpu} goes back in time");
                    events.push((ts, kind));
                }
            }
            Some(Data::ProcessTree(t)) => {
                *got.entry("process_tree.threads").or_default() += t.threads.len() as u64;
            }
            Some(Data::ClockSnapshot(_) | Data::SystemInfo(_)) => {}
            None => panic!("seed {seed}: a packet without data"),
        }
    }
    let expected: BTreeMap<&str, u64> = report
        .counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(w, n)| (w.name(), *n))
        .collect();
    assert_eq!(got, expected, "seed {seed}");
    let forks = report.counts[Written::SchedProcessFork as usize].1;
    assert_eq!(report.counts[Written::TaskNewtask as usize].1, forks);
    let threads = got.get("process_tree.threads").copied().unwrap_or(0);
    // Events at one time may come in either order: compared sorted.
    for events in per_cpu.values_mut() {
        events.sort();
    }
    (per_cpu, threads)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any generated trace exports to protobuf that decodes into what the report says.
    #[test]
    fn any_trace_exports_to_decodable_protobuf(seed in any::<u64>()) {
        export_chaos(seed, 2000);
    }
}

/// The chaos traces do hold events Perfetto has a counterpart for (the property is not met by
/// writing nothing).
#[test]
fn chaos_traces_export_events() {
    let n: u64 = (0..4).map(|s| export_chaos(s, 2000)).sum();
    assert!(n > 1000, "{n} events written");
}

/// Two traces of one host (a copy of a trace beside it): each CPU's events are in two
/// streams, which [`export_files`] merges as the sink does; the output holds every event of
/// both, as the sink's does.
#[test]
fn one_cpu_in_two_streams_is_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let written = write_chaos_trace(&a, &mut Rng::new(7), &ChaosOptions::events(2000))
        .expect("chaos trace written");
    std::fs::create_dir(&b).unwrap();
    for f in std::fs::read_dir(&a).unwrap() {
        let f = f.unwrap();
        if f.file_type().unwrap().is_file() {
            std::fs::copy(f.path(), b.join(f.file_name())).unwrap();
        }
    }
    // Opened one by one: opened together, the copy is taken for the same trace.
    let mut traces = Vec::new();
    for (i, dir) in [&a, &b].into_iter().enumerate() {
        let mut t = ctf::open_all(&[dir]).expect("trace opens");
        assert_eq!(t.len(), 1);
        let mut t = t.remove(0);
        std::sync::Arc::get_mut(&mut t).expect("not shared").index = i;
        traces.push(t);
    }
    let source = FileSource::new(
        traces,
        ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    );
    let merged = tmp.path().join("merged.pftrace");
    let sink = PerfettoSink::new(
        source.traces(),
        PerfettoOptions {
            file: merged.clone(),
        },
    )
    .unwrap();
    let (report, _) = export::export(&source, sink).unwrap();
    let parallel = tmp.path().join("parallel.pftrace");
    let (report2, _) = export_files(
        &source,
        PerfettoOptions {
            file: parallel.clone(),
        },
    )
    .unwrap();
    assert_eq!(report2.counts, report.counts);
    assert_eq!(report.machines.len(), 1, "{:?}", report.machines);
    let (events, threads) = check_output(7, &merged, &report, written.cpus);
    assert_eq!(
        check_output(7, &parallel, &report2, written.cpus),
        (events.clone(), threads)
    );
    // Every event twice.
    for e in events.values() {
        assert!(e.chunks(2).all(|p| p.len() == 2 && p[0] == p[1]), "{e:?}");
    }
}
