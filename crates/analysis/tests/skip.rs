//! A pass leaves out of the read the events none of its analyses needs (`kernel::needs`,
//! `driver::events_for_interest`): every analysis, alone and with all the others, under every
//! filter and time window, must give the tables it gives when every event is read, on
//! generated kernel traces and on every shared kernel trace.

use std::sync::Arc;

use analysis::period::{PeriodCmd, PeriodOptions};
use analysis::{Analysis, Common, Options};

const SWITCH: &str = r#"switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id"#;
const READ: &str = r#"read(switch) : $evt.$name == "syscall_entry_read" : $evt.$name == "syscall_exit_read" && $evt.cpu_id == $begin.$evt.cpu_id"#;
const IRQ: &str =
    r#"irq : $evt.$name =* "irq_handler_*" && $evt.irq >= 0 : $evt.$name == "irq_handler_exit""#;

/// The period family: every report of a few definitions (nested ones, a glob on the name),
/// with and without running statistics.
fn periods(traces: &[Arc<ctf::Trace>], common: &Common) -> String {
    let mut out = String::new();
    for defs in [&[SWITCH][..], &[SWITCH, READ], &[IRQ]] {
        for reports in [vec![], vec![PeriodCmd::Stats, PeriodCmd::Top]] {
            let opts = PeriodOptions {
                periods: defs.iter().map(|d| d.to_string()).collect(),
                limit: 10,
                reports,
                ..Default::default()
            };
            match analysis::period::run(traces, common, &opts) {
                Ok(r) => {
                    for c in [
                        PeriodCmd::Log,
                        PeriodCmd::Stats,
                        PeriodCmd::Top,
                        PeriodCmd::Freq,
                    ] {
                        if opts.reports.is_empty() || opts.reports.contains(&c) {
                            out.push_str(&format!("{:?} {:?}\n", r.range, r.tables(c)));
                        }
                    }
                }
                Err(e) => out.push_str(&format!("{e}\n")),
            }
        }
    }
    out
}

/// The range and the tables of each analysis, as text.
fn run(traces: &[Arc<ctf::Trace>], common: &Common, names: &[&str]) -> Option<String> {
    let opts = Options::default();
    let mut make = || {
        names
            .iter()
            .map(|n| analysis::build(n, common, &opts).unwrap().0)
            .collect::<Vec<Box<dyn Analysis>>>()
    };
    let mut out = String::new();
    let analysed = analysis::run_refresh(traces, common, None, &mut make, &mut |r, t| {
        out.push_str(&format!("{r:?} {t:?}\n"))
    })
    .ok()?;
    Some(format!("{:?}\n{out}", analysed.range))
}

/// The analyses run by `run_refresh` (the period family has its own pass).
fn names() -> Vec<&'static str> {
    analysis::NAMES
        .iter()
        .copied()
        .filter(|n| analysis::build(n, &Common::default(), &Options::default()).is_some())
        .collect()
}

/// Option sets worth comparing on `traces`: none, time windows, filters, quirks.
fn commons(traces: &[Arc<ctf::Trace>]) -> Vec<Common> {
    let mut out = vec![
        Common::default(),
        Common {
            lttng_analyses_quirks: true,
            ..Default::default()
        },
        Common {
            no_intersection: true,
            ..Default::default()
        },
        Common {
            cpus: Some(vec![0]),
            ..Default::default()
        },
    ];
    if let Some((b, e)) = analysis::driver::intersection(traces) {
        let d = (e - b) / 4;
        out.insert(
            1,
            Common {
                begin: Some(b + d),
                end: Some(e - d),
                ..Default::default()
            },
        );
        out.push(Common {
            begin: Some(b + d),
            no_intersection: true,
            ..Default::default()
        });
    }
    out.push(Common {
        procnames: Some(vec!["swapper/1".into(), "bash".into()]),
        ..Default::default()
    });
    out
}

/// Compares every analysis alone under the first `alone` option sets, and all together
/// under each.
fn compare(traces: &[Arc<ctf::Trace>], what: &str, alone: usize) -> usize {
    let names = names();
    assert!(names.len() >= 10, "{names:?}");
    let mut compared = 0;
    for (i, common) in commons(traces).into_iter().enumerate() {
        let every = Common {
            read_every_event: true,
            ..common.clone()
        };
        for n in names.iter().filter(|_| i < alone) {
            let left_out = run(traces, &common, &[n]);
            assert_eq!(
                left_out,
                run(traces, &every, &[n]),
                "{what}: {n}, {common:?}"
            );
            compared += left_out.is_some() as usize;
        }
        assert_eq!(
            run(traces, &common, &names),
            run(traces, &every, &names),
            "{what}: all together, {common:?}"
        );
        assert_eq!(
            periods(traces, &common),
            periods(traces, &every),
            "{what}: periods, {common:?}"
        );
    }
    compared
}

#[test]
fn generated_traces() {
    let tmp = tempfile::tempdir().unwrap();
    for (seed, cpus) in [(5, 3), (9, 1)] {
        let dir = tmp.path().join(format!("mix-{seed}"));
        testkit::kernel_mix(&dir, 30_000, cpus, seed);
        let traces = ctf::open_all(&[dir]).unwrap();
        assert!(compare(&traces, "kernel-mix", usize::MAX) > 50);
    }
}

#[test]
fn shared_kernel_traces() {
    let Some(shared) = testkit::shared_or_skip("the event-skipping comparison on real traces")
    else {
        return;
    };
    let dirs = ctf::trace::discover(&shared.join("traces").join("kernel")).unwrap();
    let mut compared = 0;
    for d in &dirs {
        let Ok(traces) = ctf::open_all(std::slice::from_ref(d)) else {
            continue;
        };
        compared += compare(&traces, &d.display().to_string(), 2);
    }
    assert!(compared > 40, "{compared} runs compared");
}
