//! Analyses on a small generated trace whose ground truth is known exactly.

use analysis::{lami::results_json, Common, Options};
use scenario::common::{irq_entry, irq_exit, read_entry, read_exit, switch, Task};
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
