//! `--sync` on live inputs: two generated hosts (drifting, offset clocks, TCP between them)
//! are replayed packet by packet into `tracekit relay` by a scripted consumer (the streaming
//! recorder's `RelayTap`), with live beacons, while they are read live with their clocks
//! synchronized as packets arrive:
//! - in-process, with a short sync delay (events given out while the replay goes on): every
//!   event of the traces once, in non-decreasing time, each within the network's largest
//!   round trip of where `--sync` on the traces puts it;
//! - `tracekit print --sync net://…` (default delay, longer than the traces): the same text
//!   as `tracekit print --sync` on the traces;
//! - `tracekit view --sync` on the live sessions: once they end, the model of
//!   `tracekit view --sync` on the traces.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctf::index::PacketEntry;
use ctf::writer::PacketTap;
use pipeline::{Flow, Sink, Source};
use record::relay::{RelayTap, RelayTarget};

const TK: &str = env!("CARGO_BIN_EXE_tracekit");

fn tracekit(args: &[&str]) -> String {
    let o = Command::new(TK).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "tracekit {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One host's trace as a consumer streams it: its metadata and each stream's packets with
/// their index entries.
struct HostTrace {
    name: String,
    metadata: Vec<u8>,
    channels: Vec<String>,
    packets: Vec<Vec<(Vec<u8>, PacketEntry)>>,
}

fn load(dir: &Path, name: &str) -> HostTrace {
    let mut channels: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("chan_"))
        .collect();
    channels.sort();
    let packets = channels
        .iter()
        .map(|c| {
            let data = std::fs::read(dir.join(c)).unwrap();
            let idx = std::fs::read(ctf::index::path_of(&dir.join(c))).unwrap();
            ctf::index::parse(&idx)
                .unwrap()
                .into_iter()
                .map(|e| {
                    let at = e.offset as usize;
                    (data[at..at + (e.packet_bits / 8) as usize].to_vec(), e)
                })
                .collect()
        })
        .collect();
    HostTrace {
        name: name.to_string(),
        metadata: std::fs::read(dir.join("metadata")).unwrap(),
        channels,
        packets,
    }
}

/// Streams the hosts' packets into the relay in `steps` rounds (each host's packets in order of
/// their end, the hosts interleaved by progress), each round followed by live beacons and a
/// pause; then ends the sessions (unless `keep`: the returned taps then hold them open).
fn replay(
    hosts: &[HostTrace],
    taps: Vec<RelayTap>,
    steps: usize,
    replaying: &AtomicBool,
    keep: bool,
) -> Vec<RelayTap> {
    let mut taps = taps;
    // Per host: (stream, packet) in order of end time.
    let order: Vec<Vec<(usize, usize)>> = hosts
        .iter()
        .map(|h| {
            let mut v: Vec<(usize, usize)> = h
                .packets
                .iter()
                .enumerate()
                .flat_map(|(s, ps)| (0..ps.len()).map(move |p| (s, p)))
                .collect();
            v.sort_by_key(|&(s, p)| h.packets[s][p].1.ts_end);
            v
        })
        .collect();
    let mut sent: Vec<Vec<usize>> = hosts.iter().map(|h| vec![0; h.packets.len()]).collect();
    let mut last_seq: Vec<Vec<Option<u64>>> =
        hosts.iter().map(|h| vec![None; h.packets.len()]).collect();
    for step in 1..=steps {
        for (h, host) in hosts.iter().enumerate() {
            let upto = order[h].len() * step / steps;
            let from = order[h].len() * (step - 1) / steps;
            let mut bound = 0;
            for &(s, p) in &order[h][from..upto] {
                let (bytes, e) = &host.packets[s][p];
                taps[h].packet(s, bytes, e).unwrap();
                sent[h][s] = p + 1;
                last_seq[h][s] = Some(last_seq[h][s].map_or(0, |q| q + 1));
                bound = bound.max(e.ts_end);
            }
            // As the live timer does: each stream is known empty up to its next packet.
            for (s, ps) in host.packets.iter().enumerate() {
                let quiet = match ps.get(sent[h][s]) {
                    Some((_, next)) => next.ts_begin.saturating_sub(1),
                    None => bound,
                };
                let entry = PacketEntry {
                    ts_end: quiet,
                    ..ps[0].1
                };
                taps[h].quiet(s, &entry).unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(60));
    }
    replaying.store(false, Ordering::SeqCst);
    if !keep {
        for (h, tap) in taps.iter_mut().enumerate() {
            tap.finish(&last_seq[h]).unwrap();
        }
    }
    taps
}

/// Collects (host, own-clock time, name) → synchronized time, and the order's monotony.
#[derive(Default)]
struct Collect {
    events: Vec<(String, i64, String, i64)>,
    released_early: usize,
    /// Set while the replay streams packets.
    replaying: Option<Arc<AtomicBool>>,
}

impl Sink for Collect {
    fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> Flow {
        let host = ev.trace().hostname().unwrap_or("?").to_string();
        self.events
            .push((host, ev.time_ns().unwrap(), ev.name().to_string(), ts));
        // Given out while the replay still streams: the read is live, not a read of the end.
        if self
            .replaying
            .as_ref()
            .is_some_and(|r| r.load(Ordering::SeqCst))
        {
            self.released_early += 1;
        }
        Flow::Continue
    }
}

fn key_map(v: &[(String, i64, String, i64)]) -> HashMap<(String, i64, String), Vec<i64>> {
    let mut m: HashMap<(String, i64, String), Vec<i64>> = HashMap::new();
    for (h, raw, n, ts) in v {
        m.entry((h.clone(), *raw, n.clone())).or_default().push(*ts);
    }
    for t in m.values_mut() {
        t.sort_unstable();
    }
    m
}

#[test]
fn live_sync_tracks_the_sync_of_the_written_traces() {
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let gen = tmp.path().join("gen");
    let gen_s = gen.to_str().unwrap();
    tracekit(&[
        "gen",
        "client-server",
        "-o",
        gen_s,
        "--hosts",
        "2",
        "--requests",
        "200",
        "--seed",
        "3",
    ]);
    let gt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gen.join("ground-truth.json")).unwrap())
            .unwrap();
    // Small packets: the replay streams each host in many.
    let names = ["client1", "httpd"];
    let small: Vec<PathBuf> = names
        .iter()
        .map(|n| tmp.path().join("small").join(n))
        .collect();
    for (n, d) in names.iter().zip(&small) {
        tracekit(&[
            "convert",
            "--packet-size",
            "4096",
            "-o",
            d.to_str().unwrap(),
            gen.join(n).to_str().unwrap(),
        ]);
    }
    let small_s: Vec<&str> = small.iter().map(|p| p.to_str().unwrap()).collect();
    let hosts: Vec<HostTrace> = names.iter().zip(&small).map(|(n, d)| load(d, n)).collect();
    assert!(hosts
        .iter()
        .all(|h| h.packets.iter().map(Vec::len).sum::<usize>() > 20));

    // The relay.
    let out = tmp.path().join("relay");
    let (mut relay, target, live_port) = start_relay(&out);
    let taps: Vec<RelayTap> = hosts
        .iter()
        .map(|h| {
            let mut tap =
                RelayTap::connect(&target, "s", &h.name, 100_000, "kernel", &h.channels).unwrap();
            tap.metadata(&h.metadata).unwrap();
            tap
        })
        .collect();
    let urls: Vec<String> = names
        .iter()
        .map(|n| format!("net://127.0.0.1:{live_port}/host/{n}/s"))
        .collect();

    // tracekit print --sync on the live sessions (the default delay: the whole traces).
    let mut args = vec!["print".to_string(), "--sync".to_string()];
    args.extend(urls.iter().cloned());
    let printer = Command::new(TK)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // In-process, a short delay.
    let parsed: Vec<live::Url> = urls.iter().map(|u| live::Url::parse(u).unwrap()).collect();
    let source = live::LiveSource::connect(
        &parsed,
        live::LiveOptions {
            sync: true,
            sync_delay: Duration::from_millis(20),
            ..Default::default()
        },
    )
    .unwrap();
    // tracekit view --sync on the live sessions.
    #[cfg(feature = "view")]
    let live_view = view::Server::start(view::ServeOptions {
        live: parsed.clone(),
        sync: true,
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    let replaying = Arc::new(AtomicBool::new(true));
    let flag = replaying.clone();
    let reader = std::thread::spawn(move || {
        let mut sink = Collect {
            replaying: Some(flag),
            ..Default::default()
        };
        let summary = source.run(&mut sink);
        (sink, summary)
    });
    replay(&hosts, taps, 12, &replaying, false);
    let (live_events, summary) = reader.join().unwrap();
    #[cfg(feature = "view")]
    compare_views(&live_view, &small);
    let printed = printer.wait_with_output().unwrap();
    let _ = relay.kill();
    let _ = relay.wait();
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);

    // --sync on the traces, as the reference.
    let traces = ctf::open_all(&small_s).unwrap();
    let session = sync::synchronize(&traces, &sync::SyncOptions::default());
    let files = pipeline::FileSource::open(
        &small_s,
        pipeline::ReadOptions {
            time_map: Some(Arc::new(session.time_maps()) as Arc<dyn ctf::merge::TimeMap>),
            no_intersection: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut file_events = Collect::default();
    files.run(&mut file_events);

    // Every event once, in order, each near where the written traces' sync puts it: within
    // the largest round trip of the generated network (one-way delays up to 500 µs), the
    // width of the hulls' feasible band around the packets seen so far.
    assert_eq!(live_events.events.len(), file_events.events.len());
    assert_eq!(
        live_events.events.len() as u64,
        gt["events"].as_u64().unwrap()
    );
    assert!(live_events.events.windows(2).all(|w| w[0].3 <= w[1].3));
    assert!(
        live_events.released_early > 0,
        "nothing was given out before the replay ended"
    );
    let (live_m, file_m) = (key_map(&live_events.events), key_map(&file_events.events));
    assert_eq!(
        live_m.keys().collect::<std::collections::BTreeSet<_>>(),
        file_m.keys().collect::<std::collections::BTreeSet<_>>()
    );
    let mut worst = 0i64;
    for (k, lt) in &live_m {
        for (a, b) in lt.iter().zip(&file_m[k]) {
            worst = worst.max((a - b).abs());
        }
    }
    assert!(
        worst <= 1_000_000,
        "an event {worst} ns away from its synchronized time"
    );

    // The CLI with the default delay: the sync of every packet, as on the traces.
    let stderr = String::from_utf8_lossy(&printed.stderr);
    assert!(printed.status.success(), "{stderr}");
    let mut file_args = vec!["print", "--sync"];
    file_args.extend(&small_s);
    let expected = tracekit(&file_args);
    let got = String::from_utf8_lossy(&printed.stdout);
    assert_eq!(got.lines().count(), expected.lines().count());
    if got != expected {
        let (g, e): (Vec<&str>, Vec<&str>) = (got.lines().collect(), expected.lines().collect());
        let i = g.iter().zip(&e).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "live print --sync differs from print --sync of the traces at line {i}:\n{}\n---\n{}\nstderr: {stderr}",
            g[i.saturating_sub(2)..(i + 3).min(g.len())].join("\n"),
            e[i.saturating_sub(2)..(i + 3).min(e.len())].join("\n"),
        );
    }
    assert!(stderr.is_empty(), "{stderr}");
    eprintln!(
        "live sync: {} events, {} given out during the replay, worst {worst} ns from the \
         traces' sync ({:?}); {:.1} s",
        live_events.events.len(),
        live_events.released_early,
        summary.warnings,
        t0.elapsed().as_secs_f64()
    );
}

/// The live view's last model equals the model of `tracekit view --sync` on the traces.
#[cfg(feature = "view")]
fn compare_views(live_view: &view::Server, traces: &[PathBuf]) {
    let exp = live_view.state().experiments()[0].clone();
    let t = Instant::now();
    while exp.is_live() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the live view never completed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let view::state::Indexing::Completed(live, _) = exp.indexing() else {
        panic!("the live view has no model")
    };
    let files = view::Server::start(view::ServeOptions {
        paths: traces.to_vec(),
        sync: true,
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    files.wait_indexed().unwrap();
    let view::state::Indexing::Completed(f, _) = files.state().experiments()[0].indexing() else {
        panic!("the traces' view has no model")
    };
    let (a, b) = (&live.timeline, &f.timeline);
    assert_eq!((a.events, a.start, a.end), (b.events, b.start, b.end));
    assert_eq!(a.rows.len(), b.rows.len());
    assert_eq!(a.intervals(), b.intervals());
    assert_eq!(a.checkpoints, b.checkpoints);
}

/// The live reader's own pace (ignored by default, a measurement): a generated kernel trace
/// replayed into `tracekit relay` at once, then `print net://…` timed to its end against
/// `print` of the files, for each binary in `TRACEKIT_BENCH_BINS` (colon-separated; default
/// this build's). `TRACEKIT_BENCH_EVENTS` (1 000 000) events.
#[test]
#[ignore]
fn live_read_throughput() {
    let n: u64 = std::env::var("TRACEKIT_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let bins: Vec<String> = std::env::var("TRACEKIT_BENCH_BINS")
        .map(|v| v.split(':').map(str::to_string).collect())
        .unwrap_or_else(|_| vec![TK.to_string()]);
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("mix");
    tracekit(&[
        "gen",
        "kernel-mix",
        "-o",
        trace.to_str().unwrap(),
        "--events",
        &n.to_string(),
    ]);
    let host = load(&trace, "mix");
    let (mut relay, target, live_port) = start_relay(&tmp.path().join("relay"));
    let mut tap =
        RelayTap::connect(&target, "s", "mix", 100_000, "kernel", &host.channels).unwrap();
    tap.metadata(&host.metadata).unwrap();
    // The session stays open (a live reader of a closed session is refused): each reader is
    // timed to its last event's line.
    let _taps = replay(&[host], vec![tap], 1, &AtomicBool::new(true), true);
    let url = format!("net://127.0.0.1:{live_port}/host/mix/s");
    let lines = tracekit(&["print", trace.to_str().unwrap()])
        .lines()
        .count();
    let time = |bin: &str, input: &str| {
        use std::io::BufRead;
        let t = Instant::now();
        let mut child = Command::new(bin)
            .args(["print", input])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        let mut got = 0;
        for l in out.split(b'\n') {
            l.unwrap();
            got += 1;
            if got == lines {
                break;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        // CPU time (user + system, clock ticks of 10 ms): less disturbed by other loads.
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        let cpu = (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0;
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(got, lines, "{bin} print {input}");
        (secs, cpu)
    };
    for round in 0..3 {
        for bin in &bins {
            let (live, live_cpu) = time(bin, &url);
            let (files, files_cpu) = time(bin, trace.to_str().unwrap());
            eprintln!(
                "round {round} {bin}: live {live:.2} s, CPU {live_cpu:.2} s ({:.0} k events per \
                 CPU-s); files {files:.2} s, CPU {files_cpu:.2} s",
                n as f64 / live_cpu / 1e3
            );
        }
    }
    let _ = relay.kill();
    let _ = relay.wait();
}

/// `tracekit relay` writing into `out` on free ports, once its live port answers: the
/// process, the consumer side's address and the live port.
fn start_relay(out: &std::path::Path) -> (std::process::Child, RelayTarget, u16) {
    let (ctrl, data, live_port) = (free_port(), free_port(), free_port());
    let relay = Command::new(TK)
        .args(["relay", "-o", out.to_str().unwrap()])
        .args(["--control-port", &ctrl.to_string()])
        .args(["--data-port", &data.to_string()])
        .args(["--live-port", &live_port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", live_port)).is_err() {
        assert!(
            up.elapsed() < Duration::from_secs(10),
            "the relay did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let target = RelayTarget {
        host: "127.0.0.1".into(),
        control_port: ctrl,
        data_port: data,
    };
    (relay, target, live_port)
}
