use scenario::client_server::{generate as cs, ClientServerParams};
use scenario::kernel_mix::{generate as km, KernelMixParams};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracekit-scn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn have(tool: &str) -> bool {
    Command::new("which")
        .arg(tool)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for e in walk(dir) {
        v.push((
            e.strip_prefix(dir).unwrap().display().to_string(),
            std::fs::read(&e).unwrap(),
        ));
    }
    v.sort();
    v
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

fn babeltrace_ok(path: &Path) {
    if !have("babeltrace2") {
        eprintln!("babeltrace2 not installed: skipped");
        return;
    }
    let o = Command::new("babeltrace2").arg(path).output().unwrap();
    assert!(
        o.status.success(),
        "babeltrace2 failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "babeltrace2 warned: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.stdout.is_empty());
}

#[test]
fn kernel_mix_is_deterministic_and_readable() {
    let d = tmp("km");
    let p = KernelMixParams {
        events: 30_000,
        cpus: 3,
        packet_size: 16384,
        ..Default::default()
    };
    let a = km(&d.join("a/kernel"), &p).unwrap();
    let b = km(&d.join("b/kernel"), &p).unwrap();
    assert_eq!(a.events, b.events);
    assert!(a.events >= 30_000);
    assert_eq!(files(&d.join("a")), files(&d.join("b")));
    babeltrace_ok(&d.join("a/kernel"));
    for tool in ["lttng-cputop", "lttng-schedtop"] {
        if !have(tool) {
            eprintln!("{tool} not installed: skipped");
            continue;
        }
        let o = Command::new(tool)
            .arg("--no-progress")
            .arg(d.join("a/kernel"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn client_server_ground_truth() {
    let d = tmp("cs");
    let p = ClientServerParams {
        requests: 10,
        ..Default::default()
    };
    let o = cs(&d.join("a"), &p).unwrap();
    cs(&d.join("b"), &p).unwrap();
    assert_eq!(files(&d.join("a")), files(&d.join("b")));
    babeltrace_ok(&d.join("a"));
    for dir in &o.dirs {
        babeltrace_ok(dir);
    }
    let gt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&o.ground_truth).unwrap()).unwrap();
    let hosts = gt["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    for h in hosts {
        let slope: f64 = h["slope"].as_str().unwrap().parse().unwrap();
        assert!((slope - 1.0).abs() <= 50e-6 + 1e-12);
        let off: f64 = h["offset_ns"].as_str().unwrap().parse().unwrap();
        assert!(off.is_finite());
        assert!(h["events"].as_u64().unwrap() > 0);
        assert!(d
            .join("a")
            .join(h["dir"].as_str().unwrap())
            .join("metadata")
            .exists());
    }
    assert!(gt["min_one_way_delay_ns"].as_u64().unwrap() >= 50_000);
    let m = &gt["marked_request"];
    let begin: i128 = m["begin"].as_str().unwrap().parse().unwrap();
    let end: i128 = m["end"].as_str().unwrap().parse().unwrap();
    let path = m["critical_path"].as_array().unwrap();
    assert!(path.len() > 5);
    let mut t = begin;
    let mut hosts_seen = std::collections::BTreeSet::new();
    for s in path {
        let b: i128 = s["begin"].as_str().unwrap().parse().unwrap();
        let e: i128 = s["end"].as_str().unwrap().parse().unwrap();
        assert_eq!(b, t, "contiguous: {s}");
        assert!(e > b);
        hosts_seen.insert(s["host"].as_str().unwrap().to_string());
        t = e;
    }
    assert_eq!(t, end);
    assert_eq!(hosts_seen.len(), 3, "the path crosses every host");
    let _ = std::fs::remove_dir_all(&d);
}

/// Every stream of a host covers the whole session (first packet begins at the session start,
/// last packet ends at the last event), as in LTTng traces: readers that intersect stream
/// ranges (lttng-analyses, `tracekit analyze`) must see all events, CPUs without events too.
#[test]
fn every_stream_spans_the_session() {
    let out = tmp("spans");
    let p = ClientServerParams {
        cpus: 6,
        ..Default::default()
    };
    cs(&out, &p).unwrap();
    let km_dir = out.join("km");
    km(
        &km_dir,
        &KernelMixParams {
            events: 2000,
            cpus: 6,
            ..Default::default()
        },
    )
    .unwrap();
    let mut hosts: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("metadata").is_file())
        .collect();
    hosts.sort();
    assert!(hosts.len() >= 4, "{hosts:?}");
    for host in hosts {
        let mut ranges = Vec::new();
        let mut streams: Vec<PathBuf> = std::fs::read_dir(&host)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("chan_")
            })
            .collect();
        streams.sort();
        for s in &streams {
            let b = std::fs::read(s).unwrap();
            let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
            // LTTng packet context: timestamp_begin at byte 32, timestamp_end at 40,
            // packet_size (bits) at 56.
            let packet = (u64_at(56) / 8) as usize;
            let last = b.len() - packet;
            ranges.push((u64_at(32), u64_at(last + 40)));
        }
        assert_eq!(streams.len(), 6, "{}", host.display());
        assert!(
            ranges.windows(2).all(|w| w[0] == w[1]),
            "{}: stream ranges differ: {ranges:?}",
            host.display()
        );
        assert!(
            ranges[0].0 < ranges[0].1,
            "{}: empty session",
            host.display()
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
