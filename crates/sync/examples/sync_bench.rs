//! Benchmark: `cargo run --release -p tracekit-sync --example sync_bench [PAIRS] [TRACE...]`.
//!
//! 1. Matching + convex hull over PAIRS (default 10 M) synthetic packet pairs between two
//!    hosts (both directions, random delays, clock offset and drift), events fed in time
//!    order as the session does.
//! 2. With trace paths: a plain decoding pass (every event's payload read) against a full
//!    `synchronize` pass over the same traces.
//!
//! Times are this thread's CPU time.

/// CPU time of this thread (s), from /proc (the machine may be shared: wall time would
/// count other processes' time slices).
fn cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or(0.0)
}

struct Instant(f64);
impl Instant {
    fn now() -> Self {
        Instant(cpu())
    }
    fn elapsed(&self) -> Secs {
        Secs(cpu() - self.0)
    }
}
struct Secs(f64);
impl Secs {
    fn as_secs_f64(&self) -> f64 {
        self.0
    }
}

use sync::graph::Synchronizer;
use sync::matching::{Dir, Matcher, NetEvent, PacketKey};

fn main() {
    let mut args = std::env::args().skip(1);
    let pairs: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let traces: Vec<String> = args.collect();

    // Synthetic events: host 1's clock = t·(1+40 ppm) + 2 h.
    let mut rng = 0x1234_5678_u64;
    let mut next = |lo: i64, hi: i64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        lo + (rng % (hi - lo) as u64) as i64
    };
    let t0: i64 = 1_709_600_000_000_000_000;
    let other = |t: i64| t + (t - t0) / 25_000 + 7_200_000_000_000;
    let mut events = Vec::with_capacity(2 * pairs as usize);
    for k in 0..pairs as i64 {
        let t = t0 + k * 20_000;
        let d = next(20_000, 400_000);
        let (sh, rh) = if k % 2 == 0 { (0u32, 1u32) } else { (1, 0) };
        let clock = |h: u32, t: i64| if h == 0 { t } else { other(t) };
        let key = PacketKey {
            seq: k as u32,
            ack_seq: (k * 7) as u32,
            flags: 0x18,
            flow: 0,
        };
        events.push((
            t,
            NetEvent {
                host: sh,
                trace: sh,
                dir: Dir::Send,
                key,
                ts: clock(sh, t),
            },
        ));
        events.push((
            t + d,
            NetEvent {
                host: rh,
                trace: rh,
                dir: Dir::Recv,
                key,
                ts: clock(rh, t + d),
            },
        ));
    }
    events.sort_unstable_by_key(|e| e.0);
    let start = Instant::now();
    let mut m = Matcher::new();
    m.set_hosts(2);
    let mut s = Synchronizer::new(vec!["a".into(), "b".into()]);
    for (_, e) in &events {
        if let Some(x) = m.push(*e) {
            s.add(&x);
        }
    }
    let res = s.finish(None);
    let el = start.elapsed().as_secs_f64();
    println!(
        "matching + hull: {} pairs ({} events) in {:.3} s = {:.1} ns/event; {} matches, quality {}",
        pairs,
        events.len(),
        el,
        el * 1e9 / events.len() as f64,
        m.stats.matches,
        res.pairs[0].quality.as_str()
    );

    if traces.is_empty() {
        return;
    }
    let t = ctf::open_all(&traces).unwrap();
    let start = Instant::now();
    let mut merger = ctf::Merger::new(&t);
    let (mut n, mut acc) = (0u64, 0u64);
    while let Some(msg) = merger.next() {
        if matches!(msg, ctf::Message::Event) {
            let ev = merger.event().unwrap();
            n += 1;
            if let Some(p) = ev.payload() {
                acc = acc.wrapping_add(p.fold_raw());
            }
        }
    }
    let dec = start.elapsed().as_secs_f64();
    println!(
        "decode: {n} events in {dec:.3} s = {:.1} ns/event (checksum {acc:x})",
        dec * 1e9 / n as f64
    );
    let start = Instant::now();
    let ses = sync::synchronize(&t, &sync::SyncOptions::default());
    let full = start.elapsed().as_secs_f64();
    println!(
        "synchronize: {full:.3} s ({} network events, {} matches): {:+.1} % over decoding",
        ses.stats.events,
        ses.stats.matches,
        (full / dec - 1.0) * 100.0
    );
}
