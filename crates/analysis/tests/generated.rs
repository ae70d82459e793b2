//! Analyses on a small generated trace whose ground truth is known exactly.

use analysis::{lami::results_json, Common, Options};
use scenario::common::{irq_entry, irq_exit, read_entry, read_exit, switch, wake, Task};
use scenario::lttng::ev;
use serde_json::Value;

use testkit::CLOCK_OFFSET_NS as OFFSET;

fn write_trace(dir: &std::path::Path) {
    let mut w = testkit::small_kernel_writer(dir, 1, 2);
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(100, 100, "alpha");
    let b = Task::new(200, 200, "beta");
    let c = Task::new(300, 300, "gamma");
    // CPU 0: alpha 1000..5000, beta 5000..9000. CPU 1: idle until 2000, gamma 2000..8000.
    w.write_event(0, ev::SCHED_SWITCH, 1000, &switch(&s0, 0, &a))
        .unwrap();
    w.write_event(0, ev::SYS_READ, 1500, &read_entry(3, 100))
        .unwrap();
    w.write_event(1, ev::SCHED_SWITCH, 2000, &switch(&s1, 0, &c))
        .unwrap();
    w.write_event(0, ev::SYSX_READ, 2500, &read_exit(10, 0))
        .unwrap();
    w.write_event(0, ev::SYS_READ, 3000, &read_entry(3, 100))
        .unwrap();
    w.write_event(0, ev::SYSX_READ, 3600, &read_exit(-11, 0))
        .unwrap();
    w.write_event(1, ev::IRQ_ENTRY, 4000, &irq_entry(5, "eth0"))
        .unwrap();
    w.write_event(1, ev::IRQ_EXIT, 4600, &irq_exit(5)).unwrap();
    w.write_event(0, ev::SCHED_SWITCH, 5000, &switch(&a, 1, &b))
        .unwrap();
    w.write_event(1, ev::IRQ_ENTRY, 6000, &irq_entry(5, "eth0"))
        .unwrap();
    w.write_event(1, ev::IRQ_EXIT, 6200, &irq_exit(5)).unwrap();
    w.write_event(1, ev::SCHED_SWITCH, 8000, &switch(&c, 1, &s1))
        .unwrap();
    w.write_event(0, ev::SCHED_SWITCH, 9000, &switch(&b, 1, &s0))
        .unwrap();
    w.finish().unwrap();
}

fn run(cmd: &str, dir: &std::path::Path) -> Value {
    let common = Common {
        no_intersection: true,
        ..Default::default()
    };
    results_json(
        &analysis::run_named(cmd, &[dir.to_path_buf()], &common, &Options::default()).unwrap(),
    )
}

#[test]
fn ground_truth() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    write_trace(&dir);

    let cpu = run("cputop", &dir);
    let t = &cpu["results"];
    assert_eq!(t[0]["time-range"]["begin"]["value"], OFFSET + 1000);
    assert_eq!(t[0]["time-range"]["end"]["value"], OFFSET + 9000);
    let usage: Vec<(i64, f64)> = t[0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0]["tid"].as_i64().unwrap(),
                r[3]["value"].as_f64().unwrap(),
            )
        })
        .collect();
    // Over 8000 ns: gamma 6000, alpha 4000, beta 4000.
    assert_eq!(usage, vec![(300, 0.75), (100, 0.5), (200, 0.5)]);
    assert_eq!(t[0]["data"][0][0]["name"], "gamma");
    assert_eq!(t[0]["data"][0][2]["value"], "[20]");
    let cpus: Vec<f64> = t[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1]["value"].as_f64().unwrap())
        .collect();
    assert_eq!(cpus, vec![1.0, 0.75]);
    assert_eq!(t[2]["data"][0][0]["value"].as_f64().unwrap(), 0.875);

    let sys = run("syscallstats", &dir);
    let per_tid = &sys["results"][0];
    assert_eq!(
        per_tid["class"]["title"],
        "System call statistics [alpha (?, TID: 100)]"
    );
    let row = &per_tid["data"][0];
    assert_eq!(row[0]["name"], "read");
    assert_eq!(row[1]["value"], 2);
    assert_eq!(row[2]["value"], 600);
    assert_eq!(row[3]["value"].as_f64().unwrap(), 800.0);
    assert_eq!(row[4]["value"], 1000);
    assert_eq!(row[5]["class"], "unknown");
    assert_eq!(row[6]["value"], "{'success': 1, 'EAGAIN': 1}");
    assert_eq!(sys["results"][1]["data"][0][1]["value"], 2);

    let irq = run("irqstats", &dir);
    let hard = &irq["results"][0];
    assert_eq!(hard["class"], "hard-stats");
    let row = &hard["data"][0];
    assert_eq!(row[0]["nr"], 5);
    assert_eq!(row[0]["name"], "eth0");
    assert_eq!(row[1]["value"], 2);
    assert_eq!(row[2]["value"], 200);
    assert_eq!(row[4]["value"], 600);
    // Sample standard deviation of {600, 200}.
    let sd = row[5]["value"].as_f64().unwrap();
    assert!((sd - 282.842712474619).abs() < 1e-9);
}

/// Row order as lttng-analyses gives it, on a trace where it differs from tid and byte order:
/// equal usages in first-seen order (cputop), threads by lower-cased name, equal names in
/// first-seen order (schedstats), and priorities listed once each with their count.
#[test]
fn rows_in_lttng_analyses_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let mut w = testkit::small_kernel_writer(&dir, 4, 1);
    let s0 = Task::swapper(0);
    let b = Task::new(10, 10, "beta");
    let z = Task::new(3, 3, "Zed");
    let mut a1 = Task::new(20, 20, "Alpha");
    let a2 = Task::new(5, 5, "alpha");
    let mut ev_at = |ts: u64, id: u64, payload: Vec<ctf::value::Value>| {
        w.write_event(0, id, ts, &payload).unwrap();
    };
    // beta and Zed run 1100 ns each, beta first.
    ev_at(1000, ev::SCHED_WAKING, wake(&b, 0));
    ev_at(1100, ev::SCHED_SWITCH, switch(&s0, 0, &b));
    ev_at(2100, ev::SCHED_WAKING, wake(&z, 0));
    ev_at(2200, ev::SCHED_SWITCH, switch(&b, 1, &z));
    ev_at(3300, ev::SCHED_SWITCH, switch(&z, 1, &s0));
    // Alpha runs with priority 20, then -51 (woken so), then 20 again; alpha in between.
    ev_at(4000, ev::SCHED_WAKING, wake(&a1, 0));
    ev_at(4100, ev::SCHED_SWITCH, switch(&s0, 0, &a1));
    ev_at(4200, ev::SCHED_WAKING, wake(&a2, 0));
    ev_at(4300, ev::SCHED_SWITCH, switch(&a1, 1, &a2));
    a1.prio = -51;
    ev_at(4400, ev::SCHED_WAKING, wake(&a1, 0));
    ev_at(4500, ev::SCHED_SWITCH, switch(&a2, 1, &a1));
    ev_at(4600, ev::SCHED_SWITCH, switch(&a1, 1, &s0));
    a1.prio = 20;
    ev_at(5000, ev::SCHED_WAKING, wake(&a1, 0));
    ev_at(5100, ev::SCHED_SWITCH, switch(&s0, 0, &a1));
    ev_at(5200, ev::SCHED_SWITCH, switch(&a1, 1, &s0));
    w.finish().unwrap();

    let rows = |doc: &Value, table: usize, cell: usize| -> Vec<(i64, String)> {
        doc["results"][table]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let c = &r[cell];
                let v = c["value"].as_str().map(str::to_string);
                (r[0]["tid"].as_i64().unwrap(), v.unwrap_or_default())
            })
            .collect()
    };
    let cpu = run("cputop", &dir);
    // beta and Zed 1100 ns (beta seen first), Alpha 400, alpha 200.
    let prios = [
        (10, "[20]".to_string()),
        (3, "[20]".into()),
        (20, "[-51, 20 (2 times)]".into()),
        (5, "[20]".into()),
    ];
    assert_eq!(rows(&cpu, 0, 2), prios);
    let sched = run("schedstats", &dir);
    assert_eq!(sched["results"][0]["class"], "per_tid_stats");
    let names: Vec<&str> = sched["results"][0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Alpha", "alpha", "beta", "Zed"]);
    assert_eq!(
        rows(&sched, 0, 6),
        [
            (20, "[-51, 20 (2 times)]".to_string()),
            (5, "[20]".into()),
            (10, "[20]".into()),
            (3, "[20]".into()),
        ]
    );
}

/// Times past what 64-bit nanoseconds hold are clamped to the largest one (with the reader's
/// warning): the events there are still analysed, in one period.
#[test]
fn clamped_times_make_one_period() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let mut w = testkit::small_kernel_writer(&dir, 9, 1);
    let (s0, a) = (Task::swapper(0), Task::new(100, 100, "alpha"));
    let far = u64::MAX - 1_000_000;
    w.write_event(0, ev::SCHED_SWITCH, far, &switch(&s0, 0, &a))
        .unwrap();
    for k in 0..3 {
        let ts = far + 1000 * (k + 1);
        w.write_event(0, ev::SYS_READ, ts, &read_entry(3, 100))
            .unwrap();
        w.write_event(0, ev::SYSX_READ, ts + 500, &read_exit(10, 0))
            .unwrap();
    }
    w.finish().unwrap();
    let tables = run("syscallstats", &dir)["results"].clone();
    // The per-thread table and the total, without the summary of several periods.
    assert_eq!(tables.as_array().unwrap().len(), 2, "{tables}");
    assert_eq!(tables[0]["data"][0][0]["name"], "read");
    assert_eq!(tables[0]["data"][0][1]["value"], 3);
    // Clamped times do not tell durations apart.
    assert_eq!(tables[0]["data"][0][4]["value"], 0);
    assert_eq!(tables[0]["time-range"]["end"]["value"], i64::MAX);
}
