//! The model of generated traces (`kernel-mix`, `client-server`) against what their events
//! say, read independently here by event and field names; against cputop; through the cache;
//! and on damaged traces.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use analysis::lami::Cell;
use analysis::{Common, Options};
use ctf::Event;
use pipeline::{FileSource, Flow, ReadOptions, Sink, Source};
use scenario::kernel_mix::{self, KernelMixParams};
use timeline::{BuildOptions, Origin, RowKind, State, ThreadState, Timeline};

fn kernel_mix(dir: &Path, events: u64) -> PathBuf {
    let p = dir.join("kmix");
    kernel_mix::generate(
        &p,
        &KernelMixParams {
            events,
            cpus: 3,
            packet_size: 16 * 1024,
            ..Default::default()
        },
    )
    .unwrap();
    p
}

fn open(paths: &[PathBuf], cache: Option<&Path>) -> (Timeline, Origin) {
    let traces = ctf::open_all(paths).unwrap();
    let opts = BuildOptions {
        cache_dir: cache.map(Path::to_path_buf),
        ..Default::default()
    };
    let (tl, origin, diags) = Timeline::open(&traces, &opts).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    (tl, origin)
}

/// What the events say, read by names: system calls (thread, entry, exit, name) and blocked
/// spells (thread, switch-out, the first wakeup or switch-in after it).
#[derive(Default)]
struct Oracle {
    events: u64,
    current: HashMap<u64, i64>,
    in_call: HashMap<i64, (i64, String)>,
    calls: Vec<(i64, i64, i64, String)>,
    blocked_since: HashMap<i64, i64>,
    blocked: Vec<(i64, i64, i64)>,
    times: Vec<i64>,
}

impl Sink for Oracle {
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.events += 1;
        self.times.push(ts);
        let cpu = kernel::recorded_cpu(ev).unwrap() as u64;
        let int = |n: &str| ev.field(n).and_then(|f| f.as_i64()).unwrap();
        let name = ev.name();
        if name == "sched_switch" {
            let (prev, next) = (int("prev_tid"), int("next_tid"));
            if prev != 0 && int("prev_state") & 3 != 0 {
                self.blocked_since.insert(prev, ts);
            }
            if let Some(since) = self.blocked_since.remove(&next) {
                self.blocked.push((next, since, ts));
            }
            self.current.insert(cpu, next);
        } else if name.starts_with("sched_wak") {
            let tid = int("tid");
            if let Some(since) = self.blocked_since.remove(&tid) {
                self.blocked.push((tid, since, ts));
            }
        } else if let Some(call) = name.strip_prefix("syscall_entry_") {
            if let Some(&t) = self.current.get(&cpu).filter(|&&t| t != 0) {
                self.in_call.insert(t, (ts, call.to_string()));
            }
        } else if name.starts_with("syscall_exit_") {
            if let Some(&t) = self.current.get(&cpu) {
                if let Some((entry, call)) = self.in_call.remove(&t) {
                    self.calls.push((t, entry, ts, call));
                }
            }
        }
        Flow::Continue
    }
}

fn oracle(paths: &[PathBuf]) -> Oracle {
    let source = FileSource::open(
        paths,
        ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut o = Oracle::default();
    source.run(&mut o);
    o
}

#[test]
fn thread_states_match_the_events() {
    let tmp = tempfile::tempdir().unwrap();
    let p = kernel_mix(tmp.path(), 40_000);
    let (tl, _) = open(std::slice::from_ref(&p), None);
    let o = oracle(std::slice::from_ref(&p));
    assert_eq!(tl.events, o.events);
    // Events at one time make the last of their states hold: those spells are left out.
    let tied = |t: i64| {
        let i = o.times.partition_point(|&x| x < t);
        o.times.get(i + 1) == Some(&t)
    };
    let mut checked = 0;
    for (tid, entry, exit, call) in &o.calls {
        if entry == exit || tied(*entry) {
            continue;
        }
        let row = tl.thread_row(0, *tid as i32, *entry).unwrap();
        let s = tl.state_at(row, *entry).unwrap();
        assert_eq!(
            (s.start, s.state, s.label.as_deref()),
            (
                *entry,
                State::Thread(ThreadState::Syscall),
                Some(call.as_str())
            ),
            "{tid} {entry}..{exit}"
        );
        assert!(s.end <= *exit);
        checked += 1;
    }
    assert!(checked > 1000, "{checked}");
    let mut checked = 0;
    for (tid, since, until) in &o.blocked {
        if since == until || tied(*since) || tied(*until) {
            continue;
        }
        let row = tl.thread_row(0, *tid as i32, *since).unwrap();
        let s = tl.state_at(row, *since).unwrap();
        assert_eq!(
            (s.start, s.end, s.state),
            (*since, *until, State::Thread(ThreadState::WaitBlocked)),
            "{tid}"
        );
        checked += 1;
    }
    assert!(checked > 100, "{checked}");

    // Rows: the host, its CPUs, IRQs, soft IRQs, then threads by id; the idle task has none.
    let rank = |k: &RowKind| match *k {
        RowKind::Host => (0, 0),
        RowKind::Cpu { cpu } => (1, cpu as i64),
        RowKind::Irq { cpu: Some(c), .. } | RowKind::SoftIrq { cpu: Some(c), .. } => (1, c as i64),
        RowKind::Irq { irq, cpu: None } => (2, irq),
        RowKind::SoftIrq { vec, cpu: None } => (3, vec as i64),
        RowKind::Thread { tid, .. } => (4, tid as i64),
    };
    assert!(tl
        .rows
        .windows(2)
        .all(|w| rank(&w[0].kind) <= rank(&w[1].kind)));
    assert!(tl.rows.iter().enumerate().all(|(i, r)| r.id as usize == i));
    assert!(!tl
        .rows
        .iter()
        .any(|r| matches!(r.kind, RowKind::Thread { tid: 0, .. })));
    assert_eq!(
        tl.rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Cpu { .. }))
            .count(),
        3
    );

    // Resolution: at most one span per step, and every interval at 1 ns.
    for row in &tl.rows {
        let exact = tl.states(row.id, tl.start, tl.end, 1);
        assert!(exact.iter().all(|s| !s.merged));
        for w in exact.windows(2) {
            assert!(w[0].end <= w[1].start && w[0].start < w[1].start);
        }
        for px in [10i64, 100, 1000] {
            let res = (tl.end - tl.start) / px;
            let s = tl.states(row.id, tl.start, tl.end, res);
            let bound = ((tl.end - tl.start) as u64).div_ceil(res as u64) + 1;
            assert!(s.len() as u64 <= bound, "{} {px}: {}", row.label, s.len());
            assert!(s.len() <= exact.len());
            if exact.len() > bound as usize {
                assert!(s.iter().any(|x| x.merged));
            }
        }
    }

    // Density: every event counted, in any bucketing.
    for n in [1, 7, 500] {
        let (d, lost) = tl.event_density(tl.start, tl.end, n);
        assert_eq!(d.iter().sum::<u64>(), tl.events, "{n}");
        assert_eq!(lost.iter().sum::<u64>(), 0);
    }
    let half = tl.start + (tl.end - tl.start) / 2;
    let (d, _) = tl.event_density(tl.start, half, 1);
    let before = o.times.iter().filter(|&&t| t <= half).count() as i64;
    assert!((d[0] as i64 - before).abs() <= 32, "{} {before}", d[0]);

    // Checkpoints: a read from a checkpoint's time, skipping its ties, lands on its event.
    assert!(tl.checkpoints.len() as u64 >= tl.events / 4096);
    for c in tl.checkpoints.iter().step_by(3) {
        assert_eq!(o.times[c.index as usize], c.ts);
        let first = o.times.partition_point(|&t| t < c.ts) as u64;
        assert_eq!(first + c.skip, c.index);
        let source = FileSource::open(
            std::slice::from_ref(&p),
            ReadOptions {
                begin: Some(c.ts),
                no_intersection: true,
                ..Default::default()
            },
        )
        .unwrap();
        struct Nth(u64, Option<i64>);
        impl Sink for Nth {
            fn event(&mut self, _: &Event<'_>, ts: i64) -> Flow {
                if self.0 == 0 {
                    self.1 = Some(ts);
                    return Flow::Stop;
                }
                self.0 -= 1;
                Flow::Continue
            }
        }
        let mut n = Nth(c.skip, None);
        source.run(&mut n);
        assert_eq!(n.1, Some(o.times[c.index as usize]));
    }
}

#[test]
fn cpu_time_agrees_with_cputop() {
    let tmp = tempfile::tempdir().unwrap();
    let p = kernel_mix(tmp.path(), 30_000);
    let (tl, _) = open(std::slice::from_ref(&p), None);
    let common = Common {
        no_intersection: true,
        ..Default::default()
    };
    let opts = Options {
        limit: 0,
        ..Default::default()
    };
    let tables = analysis::run_named("cputop", std::slice::from_ref(&p), &common, &opts).unwrap();
    let per_tid = tables.iter().find(|t| t.class == "per-process").unwrap();
    let (begin, end) = (per_tid.begin, per_tid.end);
    let ours: HashMap<i32, i64> = tl
        .cpu_time(0, begin, end)
        .into_iter()
        .map(|(r, t)| match tl.rows[r as usize].kind {
            RowKind::Thread { tid, .. } => (tid, t),
            _ => panic!("not a thread row"),
        })
        .fold(HashMap::new(), |mut m, (tid, t)| {
            *m.entry(tid).or_default() += t;
            m
        });
    let mut compared = 0;
    for row in &per_tid.rows {
        let (Cell::Process { tid, .. }, Some(Cell::Ratio(r))) = (&row[0], row.last()) else {
            panic!("{row:?}");
        };
        let theirs = r * (end - begin) as f64;
        let mine = ours.get(tid).copied().unwrap_or(0) as f64;
        assert!(
            (mine - theirs).abs() <= 1e-6 * (end - begin) as f64 + 1.0,
            "tid {tid}: {mine} vs {theirs}"
        );
        compared += 1;
    }
    assert!(compared > 5);
    // Usage over the whole range is the busy time of all CPUs.
    let total = tables.iter().find(|t| t.class == "total").unwrap();
    let Cell::Ratio(r) = total.rows[0][0] else {
        panic!()
    };
    let usage = tl.cpu_usage(0, &[], begin, end, 1)[0];
    assert!((usage - 100.0 * r).abs() < 1e-6, "{usage} vs {}", 100.0 * r);
    let n = 50;
    let samples = tl.cpu_usage(0, &[], begin, end, n);
    let mean = samples.iter().sum::<f64>() / n as f64;
    assert!((mean - 100.0 * r).abs() < 0.5, "{mean} vs {}", 100.0 * r);
}

#[test]
fn cache_round_trip_and_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let p = kernel_mix(tmp.path(), 20_000);
    let cache = tmp.path().join("cache").join("tl");
    let (built, origin) = open(std::slice::from_ref(&p), Some(&cache));
    assert_eq!(origin, Origin::Built);
    let traces = ctf::open_all(std::slice::from_ref(&p)).unwrap();
    let file = Timeline::cache_path(&traces, &cache);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&cache), 0o700);
    }
    let (cached, origin) = open(std::slice::from_ref(&p), Some(&cache));
    assert_eq!(origin, Origin::Cached);
    let same = |a: &Timeline, b: &Timeline| {
        assert_eq!(
            serde_json::to_string(a).unwrap(),
            serde_json::to_string(b).unwrap()
        );
        for res in [1, (a.end - a.start) / 300] {
            for r in 0..a.rows.len() as u32 {
                assert_eq!(
                    a.states(r, a.start, a.end, res),
                    b.states(r, b.start, b.end, res)
                );
            }
            assert_eq!(
                a.arrows(&[], a.start, a.end, res),
                b.arrows(&[], b.start, b.end, res)
            );
        }
        assert_eq!(
            a.event_density(a.start, a.end, 100),
            b.event_density(b.start, b.end, 100)
        );
        assert_eq!(a.cpu_time(0, a.start, a.end), b.cpu_time(0, b.start, b.end));
    };
    same(&built, &cached);

    // Damaged: a flipped byte, then a file cut short, then garbage: built again each time.
    let good = std::fs::read(&file).unwrap();
    let damages: Vec<Vec<u8>> = vec![
        {
            let mut d = good.clone();
            let i = d.len() / 2;
            d[i] ^= 0x40;
            d
        },
        good[..good.len() / 3].to_vec(),
        b"not a cache".to_vec(),
        Vec::new(),
    ];
    for d in damages {
        std::fs::write(&file, d).unwrap();
        let (again, origin) = open(std::slice::from_ref(&p), Some(&cache));
        assert_eq!(origin, Origin::Built);
        same(&built, &again);
        assert_eq!(std::fs::read(&file).unwrap(), good);
    }

    // A cache that cannot be written (a file where its directory should be): the model all
    // the same, with a warning naming the file.
    let blocked = tmp.path().join("blocked");
    std::fs::write(&blocked, b"").unwrap();
    let (again, origin, diags) = Timeline::open(
        &traces,
        &BuildOptions {
            cache_dir: Some(blocked.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(origin, Origin::Built);
    same(&built, &again);
    assert!(
        diags.len() == 1
            && diags[0].is_warning()
            && diags[0].to_string().contains(&*blocked.to_string_lossy()),
        "{diags:?}"
    );

    // Stale: the trace changed (a stream file touched).
    let stream = traces[0].streams[0].files[0].clone();
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(&stream)
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let (_, origin) = open(std::slice::from_ref(&p), Some(&cache));
    assert_eq!(origin, Origin::Built);
}

#[test]
fn several_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    scenario::client_server::generate(
        tmp.path(),
        &scenario::client_server::ClientServerParams {
            requests: 40,
            ..Default::default()
        },
    )
    .unwrap();
    let traces = ctf::open_all(&[tmp.path()]).unwrap();
    let (tl, _, diags) = Timeline::open(&traces, &BuildOptions::default()).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert!(tl.hosts.len() >= 2, "{:?}", tl.hosts);
    let o = oracle(&[tmp.path().to_path_buf()]);
    assert_eq!(tl.events, o.events);
    // Each host's rows hang under its host row.
    for r in &tl.rows {
        let mut at = r.id;
        while let Some(p) = tl.rows[at as usize].parent {
            assert_eq!(tl.rows[p as usize].host, r.host);
            at = p;
        }
        assert_eq!(at, tl.hosts[r.host as usize].row);
    }
    // Checkpoints of the merged read.
    for c in &tl.checkpoints {
        assert_eq!(o.times[c.index as usize], c.ts);
        assert_eq!(
            o.times.partition_point(|&t| t < c.ts) as u64 + c.skip,
            c.index
        );
    }
    let (d, _) = tl.event_density(tl.start, tl.end, 333);
    assert_eq!(d.iter().sum::<u64>(), tl.events);
}

#[test]
fn truncated_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let p = kernel_mix(tmp.path(), 20_000);
    let (whole, _) = open(std::slice::from_ref(&p), None);
    // Cut a stream file in the middle of a packet.
    let traces = ctf::open_all(std::slice::from_ref(&p)).unwrap();
    let stream = traces[0].streams[1].files[0].clone();
    let len = std::fs::metadata(&stream).unwrap().len();
    let cut = len / 2 + 1000;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&stream)
        .unwrap();
    f.set_len(cut).unwrap();
    drop(f);
    let traces = ctf::open_all(std::slice::from_ref(&p)).unwrap();
    let (tl, _, diags) = Timeline::open(&traces, &BuildOptions::default()).unwrap();
    assert!(tl.events > 0 && tl.events < whole.events);
    // The diagnostic names the file and the offset.
    assert!(
        diags
            .iter()
            .any(|d| d.file.as_deref() == Some(stream.as_path()) && d.offset.is_some()),
        "{diags:?}"
    );
}
