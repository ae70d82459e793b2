//! periodstats and periodtop without keeping every period (`PeriodOptions::reports`): the
//! same tables and text as the run that keeps them all.

use std::path::Path;

use analysis::period::{run, PeriodCmd, PeriodOptions, PeriodResult};
use analysis::Common;

const SWITCH: &str = r#"switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id"#;
const READ: &str = r#"read(switch) : $evt.$name == "syscall_entry_read" : $evt.$name == "syscall_exit_read" && $evt.cpu_id == $begin.$evt.cpu_id"#;

fn result(trace: &Path, base: &PeriodOptions, reports: &[PeriodCmd]) -> PeriodResult {
    let traces = ctf::open_all(&[trace.to_path_buf()]).unwrap();
    let opts = PeriodOptions {
        reports: reports.to_vec(),
        ..base.clone()
    };
    run(&traces, &Common::default(), &opts).unwrap()
}

/// Checks that the reducing run reports what the full run does, for every option set.
fn check_same(trace: &Path) {
    let periods = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let variants = [
        PeriodOptions {
            periods: periods(&[SWITCH]),
            ..Default::default()
        },
        PeriodOptions {
            periods: periods(&[SWITCH]),
            limit: 3,
            min_duration: Some(5_000),
            max_duration: Some(5_000_000),
            ..Default::default()
        },
        PeriodOptions {
            periods: periods(&[SWITCH, READ]),
            limit: 25,
            ..Default::default()
        },
        PeriodOptions {
            periods: periods(&[SWITCH, READ]),
            select: Some(vec!["read".into()]),
            ..Default::default()
        },
    ];
    for (i, base) in variants.iter().enumerate() {
        let full = result(trace, base, &[]);
        assert!(full.stats.is_none());
        for reports in [
            &[PeriodCmd::Stats][..],
            &[PeriodCmd::Top],
            &[PeriodCmd::Stats, PeriodCmd::Top],
        ] {
            let r = result(trace, base, reports);
            assert!(r.stats.is_some(), "variant {i} {reports:?}");
            assert!(r.done.len() <= base.limit, "variant {i} {reports:?}");
            for &c in reports {
                assert_eq!(r.text(c), full.text(c), "variant {i} {reports:?} {c:?}");
                assert_eq!(
                    format!("{:?}", r.tables(c)),
                    format!("{:?}", full.tables(c)),
                    "variant {i} {reports:?} {c:?}"
                );
            }
        }
        // periodlog needs every period: nothing is left out.
        let log = result(trace, base, &[PeriodCmd::Stats, PeriodCmd::Log]);
        assert!(log.stats.is_none());
        assert_eq!(log.done.len(), full.done.len());
    }
}

#[test]
fn generated_kernel_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("km");
    testkit::kernel_mix(&dir, 20_000, 4, 7);
    let r = result(
        &dir,
        &PeriodOptions {
            periods: vec![SWITCH.into()],
            ..Default::default()
        },
        &[],
    );
    // Enough periods, of varied durations, to make the order of the statistics matter.
    assert!(r.done.len() > 1000, "{}", r.done.len());
    check_same(&dir);
}
