//! period* parity with lttng-analyses 0.6.1 (text and `--mi`) on the shared real traces, and
//! nested periods on a generated trace.
//!
//! The parity part needs `TRACEKIT_SHARED` (the `shared` directory with `traces/` and
//! `reference/`); it is skipped with a message otherwise.

mod common;

use std::path::{Path, PathBuf};

use analysis::period::{run, PeriodCmd, PeriodOptions, PeriodResult};
use analysis::{lami::results_json, Common};
use scenario::common::{read_entry, read_exit, switch, Task};
use scenario::lttng::ev;
use serde_json::Value;

const SWITCH: &str = r#"switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id"#;
const SWITCH_CAPS: &str = "switch : comm = $evt.next_comm, tid = $evt.next_tid, cpu = $evt.cpu_id";
const WAKE: &str = r#"wake : $evt.$name == "sched_waking" : $evt.$name == "sched_switch" && $evt.next_tid == $begin.$evt.$payload.tid"#;
const OPEN: &str = r#"open : $evt.$name == "syscall_entry_open" : $evt.$name == "syscall_exit_open" && $evt.cpu_id == $begin.$evt.cpu_id"#;
const OPEN_CAPS: &str = "open : filename = $evt.filename : fd = $evt.ret";

fn shared() -> Option<PathBuf> {
    testkit::shared_or_skip("the period* parity tests")
}

fn ours(trace: &Path, periods: &[&str], caps: &[&str], group_by: &[&str]) -> PeriodResult {
    let traces = ctf::open_all(&[trace.to_path_buf()]).unwrap();
    let opts = PeriodOptions {
        periods: periods.iter().map(|s| s.to_string()).collect(),
        captures: caps.iter().map(|s| s.to_string()).collect(),
        group_by: group_by.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    run(&traces, &Common::default(), &opts).unwrap()
}

/// The reference text without lttng-analyses' progress line.
fn ref_text(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("Checking the trace for lost events"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Log rows (a line starting with `[` and its continuation lines), sorted: periods beginning
/// at the same time are listed in the order the trace reader delivers simultaneous events,
/// which differs between babeltrace and tracekit.
fn blocks(s: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for l in s.lines() {
        if l.starts_with('[') || v.is_empty() {
            v.push(String::new());
        }
        let last = v.last_mut().unwrap();
        last.push_str(l);
        last.push('\n');
    }
    v.sort();
    v
}

fn text_eq(what: &str, cmd: PeriodCmd, ours: &str, reference: &str) {
    if cmd == PeriodCmd::Log {
        assert_eq!(blocks(ours), blocks(reference), "{what}");
    } else {
        assert_eq!(ours, reference, "{what}");
    }
}

fn mi_eq(what: &str, ours: &Value, reference: &Value) {
    let (a, b) = (
        ours["results"].as_array().unwrap(),
        reference["results"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len(), "{what}: tables");
    for (ta, tb) in a.iter().zip(b) {
        assert_eq!(ta["class"], tb["class"], "{what}");
        assert_eq!(ta["time-range"], tb["time-range"], "{what}");
        // In order, but for the log's periods that begin at the same time (see `blocks`).
        let begin = |r: &Value| r[0]["begin"].clone();
        let tie: Option<&dyn Fn(&Value) -> Value> = (ta["class"] == "log").then_some(&begin);
        common::rows_in_order(
            &format!("{what} {}", ta["class"]),
            ta["data"].as_array().unwrap(),
            tb["data"].as_array().unwrap(),
            tie,
        );
    }
}

const CMDS: [(PeriodCmd, &str); 4] = [
    (PeriodCmd::Log, "periodlog"),
    (PeriodCmd::Top, "periodtop"),
    (PeriodCmd::Stats, "periodstats"),
    (PeriodCmd::Freq, "periodfreq"),
];

#[test]
fn switch_period_parity() {
    let Some(sh) = shared() else { return };
    let refs = sh.join("reference/lttng-analyses-0.6.1");
    let (mut mi_checked, mut skipped) = (0, 0);
    for t in [
        "flipping-endianness",
        "bug446190",
        "basic-kernel-analysis",
        "many-threads",
    ] {
        // A damaged trace cannot match references made from the original: skipped loudly.
        let Some(dir) = testkit::intact_trace(&sh, &format!("traces/kernel/{t}")) else {
            skipped += 1;
            continue;
        };
        let r = ours(&dir, &[SWITCH], &[SWITCH_CAPS], &[]);
        for (cmd, name) in CMDS {
            let what = format!("{t} {name}");
            let txt = ref_text(&refs.join(t).join(format!("{name}-switch.txt")));
            text_eq(&what, cmd, &r.text(cmd), &txt);
            // Not every trace has `--mi` references.
            let Ok(mi) =
                std::fs::read_to_string(refs.join(t).join(format!("{name}-switch-mi.json")))
            else {
                continue;
            };
            let mi: Value = serde_json::from_str(&mi).unwrap();
            mi_eq(&what, &results_json(&r.tables(cmd)), &mi);
            mi_checked += 1;
        }
    }
    // Three of the traces have all four; fewer only when some trace was skipped.
    assert!(
        mi_checked >= 8 || (skipped > 0 && mi_checked > 0),
        "{mi_checked} --mi references compared"
    );
}

#[test]
fn variants_parity() {
    let Some(sh) = shared() else { return };
    let refs = sh.join("reference/lttng-analyses-0.6.1");
    let v = refs.join("many-threads/variants");
    let mut compared = 0;
    // A damaged trace cannot match references made from the original: skipped loudly.
    if let Some(mt) = testkit::intact_trace(&sh, "traces/kernel/many-threads") {
        compared += 1;
        let none = ours(&mt, &[], &[], &[]);
        text_eq(
            "no period",
            PeriodCmd::Log,
            &none.text(PeriodCmd::Log),
            &ref_text(&refs.join("many-threads/periodlog-noperiod.txt")),
        );

        let wake = ours(&mt, &[WAKE], &[], &[]);
        text_eq(
            "wake freq",
            PeriodCmd::Freq,
            &wake.text(PeriodCmd::Freq),
            &ref_text(&v.join("periodfreq-wake.txt")),
        );
        let mi: Value = serde_json::from_str(
            &std::fs::read_to_string(v.join("periodstats-wake-mi.json")).unwrap(),
        )
        .unwrap();
        mi_eq(
            "wake stats",
            &results_json(&wake.tables(PeriodCmd::Stats)),
            &mi,
        );

        let wake = ours(
            &mt,
            &[WAKE],
            &["wake : wakee_tid = $evt.tid, prio = $evt.prio : wakee = $evt.next_comm, cpu = $evt.cpu_id"],
            &[],
        );
        text_eq(
            "wake top",
            PeriodCmd::Top,
            &wake.text(PeriodCmd::Top),
            &ref_text(&v.join("periodtop-wake.txt")),
        );

        let open = ours(&mt, &[OPEN], &[OPEN_CAPS], &[]);
        text_eq(
            "open log",
            PeriodCmd::Log,
            &open.text(PeriodCmd::Log),
            &ref_text(&v.join("periodlog-open.txt")),
        );
    }

    for t in ["many-threads", "basic-kernel-analysis"] {
        let Some(dir) = testkit::intact_trace(&sh, &format!("traces/kernel/{t}")) else {
            continue;
        };
        compared += 1;
        let r = ours(&dir, &[OPEN], &[OPEN_CAPS], &["open.filename"]);
        text_eq(
            &format!("{t} open group-by"),
            PeriodCmd::Stats,
            &r.text(PeriodCmd::Stats),
            &ref_text(
                &refs
                    .join(t)
                    .join("variants/periodstats-open-groupby-filename.txt"),
            ),
        );
    }

    assert!(compared > 0, "no intact shared trace compared");

    // lttng-analyses cannot run on these ("Cannot run analysis: 'tid'"); tracekit can.
    for t in ["synctraces/scp_src", "synctraces/scp_dest"] {
        let r = ours(
            &sh.join("traces/kernel").join(t),
            &[SWITCH],
            &[SWITCH_CAPS],
            &[],
        );
        assert!(r.done.len() > 100, "{t}");
    }
}

use testkit::CLOCK_OFFSET_NS as OFFSET;

/// CPU 0: alpha 1000..5000 (two reads: 1500..2500, 3000..3600), beta 5000..9000 (one read
/// 6000..6500). CPU 1: gamma 2000..8000 (one read 4000..7000).
fn write_trace(dir: &Path) {
    let mut w = testkit::small_kernel_writer(dir, 5, 2);
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(100, 100, "alpha");
    let b = Task::new(200, 200, "beta");
    let c = Task::new(300, 300, "gamma");
    let evs: Vec<(u32, u64, u64, Vec<ctf::value::Value>)> = vec![
        (0, ev::SCHED_SWITCH, 1000, switch(&s0, 0, &a)),
        (0, ev::SYS_READ, 1500, read_entry(3, 100)),
        (1, ev::SCHED_SWITCH, 2000, switch(&s1, 0, &c)),
        (0, ev::SYSX_READ, 2500, read_exit(10, 0)),
        (0, ev::SYS_READ, 3000, read_entry(4, 100)),
        (0, ev::SYSX_READ, 3600, read_exit(-11, 0)),
        (1, ev::SYS_READ, 4000, read_entry(5, 100)),
        (0, ev::SCHED_SWITCH, 5000, switch(&a, 1, &b)),
        (0, ev::SYS_READ, 6000, read_entry(3, 100)),
        (0, ev::SYSX_READ, 6500, read_exit(1, 0)),
        (1, ev::SYSX_READ, 7000, read_exit(2, 0)),
        (1, ev::SCHED_SWITCH, 8000, switch(&c, 1, &s1)),
        (0, ev::SCHED_SWITCH, 9000, switch(&b, 1, &s0)),
    ];
    for (s, id, ts, p) in evs {
        w.write_event(s, id, ts, &p).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn nested_periods_on_generated_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    write_trace(&dir);
    let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
    let common = Common {
        no_intersection: true,
        ..Default::default()
    };
    let read = r#"read(switch) : $evt.$name =* "syscall_entry_rea*" && $evt.cpu_id == $parent.$begin.$evt.cpu_id : $evt.$name == "syscall_exit_read" && $evt.cpu_id == $begin.$evt.cpu_id"#;
    let opts = PeriodOptions {
        periods: vec![SWITCH.into(), read.into()],
        captures: vec![
            SWITCH_CAPS.into(),
            "read : fd = $evt.fd, who = $parent.$begin.$evt.next_comm : ret = $evt.ret".into(),
        ],
        select: Some(vec!["read".into(), "switch".into()]),
        aggregate_by: Some("switch".into()),
        ..Default::default()
    };
    let r = run(&traces, &common, &opts).unwrap();
    let mut reads: Vec<(i64, i64, String)> = r
        .done
        .iter()
        .filter(|d| r.names[d.def] == "read")
        .map(|d| {
            let who = d
                .begin_caps
                .iter()
                .find(|c| c.0 == "who")
                .map(|c| c.1.to_string())
                .unwrap();
            (d.begin - OFFSET, d.end - OFFSET, who)
        })
        .collect();
    reads.sort();
    assert_eq!(
        reads,
        vec![
            (1500, 2500, "alpha".to_string()),
            (3000, 3600, "alpha".to_string()),
            (4000, 7000, "gamma".to_string()),
            (6000, 6500, "beta".to_string()),
        ]
    );
    // Every read's parent is the switch period of its CPU.
    for d in r.done.iter().filter(|d| r.names[d.def] == "read") {
        let p = r.done.iter().find(|p| Some(p.id) == d.parent).unwrap();
        assert!(p.begin <= d.begin && d.end <= p.end);
    }
    let stats = results_json(&r.tables(PeriodCmd::Stats));
    let rows = &stats["results"][0]["data"];
    assert_eq!(rows[0][0]["value"], "read");
    assert_eq!(rows[0][1]["value"], 4);
    assert_eq!(rows[0][6]["value"], 1000 + 600 + 3000 + 500);
    assert_eq!(rows[1][0]["value"], "switch");
    assert_eq!(rows[1][1]["value"], 3);
    // Per-parent aggregation: alpha's period has 2 reads (1600 ns of 4000), gamma's 1, beta's 1.
    let agg = &stats["results"][1];
    assert_eq!(agg["class"], "aggregated_stats");
    let a: Vec<(i64, u64, i64)> = agg["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row[0]["value"].as_i64().unwrap() - OFFSET,
                row[4]["value"].as_u64().unwrap(),
                row[8]["value"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(a, vec![(1000, 2, 1600), (2000, 1, 3000), (5000, 1, 500)]);
    let text = r.text(PeriodCmd::Stats);
    assert!(text.contains("Period tree:\nswitch\n  read\n"), "{text}");
    let log = r.text(PeriodCmd::Log);
    assert!(log.contains("who = alpha"), "{log}");
    // A child whose parent ends first is dropped; a child needs an open parent.
    let opts = PeriodOptions {
        periods: vec![
            SWITCH.into(),
            r#"late(switch) : $evt.$name == "syscall_entry_read" && $evt.fd == 5 : $evt.$name == "sched_switch" && $evt.next_tid == 0"#.into(),
            r#"orphan(read2) : $evt.$name == "syscall_entry_read" : $evt.$name == "syscall_exit_read""#.into(),
            r#"read2 : $evt.$name == "nothing" : $evt.$name == "nothing""#.into(),
        ],
        ..Default::default()
    };
    let r = run(&traces, &common, &opts).unwrap();
    assert_eq!(
        r.done.iter().filter(|d| r.names[d.def] == "late").count(),
        1
    );
    assert_eq!(
        r.done.iter().filter(|d| r.names[d.def] == "orphan").count(),
        0
    );
    // Definition errors.
    let bad = |p: &[&str]| {
        let o = PeriodOptions {
            periods: p.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        run(&traces, &common, &o).err().map(|e| e.to_string())
    };
    assert!(bad(&["a(b) : $evt.x == 1 : $evt.x == 2"])
        .unwrap()
        .contains("unknown parent"));
    assert!(bad(&["a(b) : $evt.x == 1", "b(a) : $evt.x == 1"])
        .unwrap()
        .contains("cycle"));
    assert!(bad(&["a : $evt.x == "]).unwrap().contains("Cannot parse"));
}
