//! `tracekit sync` and the `--sync` flags end to end on generated multi-host scenarios.

use std::path::Path;
use std::process::Output;

use sync::Rational;

mod common;
use common::ok;

fn tracekit(args: &[&str]) -> Output {
    common::command()
        .args(args)
        .output()
        .expect("tracekit runs")
}

/// Generates a client-server scenario with drifting, offset clocks; returns its ground truth.
fn gen(dir: &Path, hosts: u32, requests: u32, seed: u64) -> serde_json::Value {
    ok(tracekit(&[
        "gen",
        "client-server",
        "--hosts",
        &hosts.to_string(),
        "--requests",
        &requests.to_string(),
        "--max-drift-ppm",
        "100",
        "--max-offset",
        "7200",
        "--seed",
        &seed.to_string(),
        "-o",
        dir.to_str().unwrap(),
    ]));
    serde_json::from_str(&std::fs::read_to_string(dir.join("ground-truth.json")).unwrap()).unwrap()
}

fn sync_json(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["sync", "--json", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(tracekit(&args))).expect("sync --json is JSON")
}

fn dec(v: &serde_json::Value) -> Rational {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{v} is not a decimal string"));
    Rational::parse_decimal(s).unwrap_or_else(|| panic!("{s} is not a decimal"))
}

/// Significant digits of a decimal string.
fn significant(s: &str) -> usize {
    s.chars()
        .filter(|c| c.is_ascii_digit())
        .skip_while(|c| *c == '0')
        .count()
}

fn base(p: &str) -> String {
    Path::new(p)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Largest error, in ns, of the published transforms at the true time `t`: each host's clock
/// reading at `t` (its true formula), mapped to the reference clock, against the reference
/// clock's reading at `t`.
fn worst_error(gt: &serde_json::Value, s: &serde_json::Value, t: &Rational) -> Rational {
    let host = |dir: &str| {
        gt["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["dir"] == dir)
            .unwrap_or_else(|| panic!("no host {dir} in the ground truth"))
            .clone()
    };
    let reading = |h: &serde_json::Value| dec(&h["slope"]).mul(t).add(&dec(&h["offset_ns"]));
    let traces = s["traces"].as_array().unwrap();
    let r = traces.iter().find(|x| x["reference"] == true).unwrap();
    let ref_ns = reading(&host(&base(r["path"].as_str().unwrap())));
    let mut worst = Rational::zero();
    for tr in traces {
        let own = reading(&host(&base(tr["path"].as_str().unwrap())));
        let mapped = dec(&tr["slope"]).mul(&own).add(&dec(&tr["offset"]));
        let e = mapped.sub(&ref_ns).abs();
        if e > worst {
            worst = e;
        }
    }
    worst
}

fn check_accuracy(hosts: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cs");
    let gt = gen(&dir, hosts, 400, 7);
    let s = sync_json(&dir, &[]);
    for k in ["reference", "matches", "pairs", "traces"] {
        assert!(s.get(k).is_some(), "no {k:?} in {s}");
    }
    assert!(s["matches"].as_u64().unwrap() > 0);
    assert!(!s["pairs"].as_array().unwrap().is_empty());
    let traces = s["traces"].as_array().unwrap();
    assert_eq!(traces.len(), hosts as usize);
    let mut refs = 0;
    for t in traces {
        for k in ["path", "host_id", "slope", "offset", "quality"] {
            assert!(t.get(k).is_some(), "no {k:?} in {t}");
        }
        assert_eq!(t["connected"], true, "{t}");
        if t["reference"] == true {
            refs += 1;
            assert_eq!(t["slope"], "1", "{t}");
            assert_eq!(t["offset"], "0", "{t}");
            assert_eq!(t["path"], s["reference"]);
        } else {
            for k in ["slope", "offset"] {
                let v = t[k].as_str().unwrap();
                assert!(significant(v) >= 30, "{k} {v}: fewer than 30 digits");
            }
        }
    }
    assert_eq!(refs, 1);
    // A time in the middle of the traffic: the marked request's start.
    let t = dec(&gt["marked_request"]["begin"]);
    let min_delay = Rational::int(gt["min_one_way_delay_ns"].as_i64().unwrap() as i128);
    let worst = worst_error(&gt, &s, &t);
    assert!(
        worst < min_delay,
        "{hosts} hosts: error {} ns, min one-way delay {} ns",
        worst.to_decimal(6),
        min_delay.to_decimal(6)
    );
    // Trace Compass's bisector too, at this traffic.
    let b = sync_json(&dir, &["--formula", "bisector"]);
    let worst = worst_error(&gt, &b, &t);
    assert!(worst < min_delay, "bisector: {}", worst.to_decimal(6));
}

#[test]
fn sync_json_three_hosts_within_the_min_delay() {
    check_accuracy(3);
}

#[test]
fn sync_json_eight_hosts_within_the_min_delay() {
    check_accuracy(8);
}

/// Seconds of a `[HH:MM:SS.NNNNNNNNN]` line.
fn line_ns(l: &str) -> u64 {
    let t = &l[1..l.find(']').unwrap()];
    let (hms, frac) = t.split_once('.').unwrap();
    let mut v = 0u64;
    for p in hms.split(':') {
        v = v * 60 + p.parse::<u64>().unwrap();
    }
    v * 1_000_000_000 + frac.parse::<u64>().unwrap()
}

#[test]
fn analyses_with_sync_on_multi_host_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cs");
    let gt = gen(&dir, 3, 40, 3);
    let d = dir.to_str().unwrap();

    // print --sync: one time line, the hosts interleaved.
    let out = ok(tracekit(&["print", "--sync", "--clock-gmt", d]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 1000);
    let mut prev = 0;
    let mut switches = 0;
    let mut prev_host = "";
    for l in &lines {
        let ns = line_ns(l);
        assert!(ns >= prev, "not time-ordered at {l}");
        prev = ns;
        let host = l.split_whitespace().nth(2).unwrap();
        if host != prev_host {
            switches += 1;
            prev_host = host;
        }
    }
    assert!(switches > 100, "hosts not interleaved: {switches} switches");

    let out = ok(tracekit(&["analyze", "schedtop", "--sync", d]));
    assert!(!out.trim().is_empty());

    let m = &gt["marked_request"];
    let tid = m["tid"].as_i64().unwrap().to_string();
    let out = ok(tracekit(&[
        "critpath",
        d,
        "--sync",
        "--tid",
        &tid,
        "--host",
        m["client"].as_str().unwrap(),
        "--json",
    ]));
    let _: serde_json::Value = serde_json::from_str(&out).expect("critpath --json is JSON");

    // The analyses with their own pass over the events.
    let out = ok(tracekit(&[
        "analyze",
        "periodlog",
        "--sync",
        "--period",
        "switch : $evt.$name == \"sched_switch\" : $evt.$name == \"sched_switch\" && \
         $evt.prev_tid == $begin.$evt.next_tid",
        d,
    ]));
    assert!(!out.trim().is_empty());
    let synced = ok(tracekit(&[
        "latency",
        "--sync",
        "--json",
        "--summary-only",
        d,
    ]));
    let raw = ok(tracekit(&["latency", "--json", "--summary-only", d]));
    assert!(synced.contains("\"summary\""));
    assert!(raw.contains("\"summary\""));
    // The reports are on the reference's clock.
    let synced = ok(tracekit(&["latency", "--sync", "--json", d]));
    let raw = ok(tracekit(&["latency", "--json", d]));
    assert_ne!(synced, raw);
}

#[test]
fn no_network_events_is_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("km");
    let d = dir.to_str().unwrap();
    ok(tracekit(&[
        "gen",
        "kernel-mix",
        "-o",
        d,
        "--events",
        "50",
        "--cpus",
        "2",
    ]));
    let out = ok(tracekit(&["sync", d]));
    assert!(
        out.contains("note: no network event"),
        "no clear note in:\n{out}"
    );
    let s = sync_json(&dir, &[]);
    assert_eq!(s["matches"], 0);
    assert!(s["messages"][0]
        .as_str()
        .unwrap()
        .contains("nothing to synchronize"));
    let o = tracekit(&["print", "--sync", d]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing to synchronize"));
}
