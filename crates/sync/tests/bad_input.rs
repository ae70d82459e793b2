//! Traces that cannot be synchronized give a clear verdict, never a panic.

use scenario::client_server::{generate, ClientServerParams};
use scenario::kernel_mix::{self, KernelMixParams};
use sync::{synchronize, Quality, SyncOptions};

#[test]
fn receive_only_hosts_are_reported_not_connected() {
    let dir = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (seed, host) in [(1, "alpha"), (2, "beta")] {
        let d = dir.path().join(host);
        let p = KernelMixParams {
            seed,
            events: 20_000,
            hostname: host.into(),
            ..KernelMixParams::default()
        };
        kernel_mix::generate(&d, &p).unwrap();
        dirs.push(d);
    }
    let traces = ctf::open_all(&dirs).unwrap();
    let s = synchronize(&traces, &SyncOptions::default());
    assert_eq!(s.stats.matches, 0);
    assert!(s.result.pairs.is_empty());
    let other = 1 - s.reference_trace();
    let h = &s.result.hosts[s.traces[other].host as usize];
    assert!(!h.connected);
    assert_eq!(h.quality, Quality::Absent);
    assert!(h.transform.is_identity());
}

#[test]
fn a_single_trace_is_its_own_reference() {
    let dir = tempfile::tempdir().unwrap();
    let out = generate(
        dir.path(),
        &ClientServerParams {
            hosts: 2,
            requests: 5,
            ..ClientServerParams::default()
        },
    )
    .unwrap();
    let traces = ctf::open_all(&out.dirs[..1]).unwrap();
    let s = synchronize(&traces, &SyncOptions::default());
    assert_eq!(s.stats.matches, 0);
    assert!(s.stats.events > 0);
    assert_eq!(s.reference_trace(), 0);
    assert!(s.trace_transform(0).is_identity());
}

#[test]
fn explicit_reference_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let out = generate(
        dir.path(),
        &ClientServerParams {
            hosts: 3,
            requests: 30,
            ..ClientServerParams::default()
        },
    )
    .unwrap();
    let traces = ctf::open_all(&out.dirs).unwrap();
    for r in 0..3 {
        let s = synchronize(
            &traces,
            &SyncOptions {
                reference: Some(r),
                ..SyncOptions::default()
            },
        );
        assert_eq!(s.reference_trace(), r);
        assert!(s.trace_transform(r).is_identity());
        assert!(s.result.hosts.iter().all(|h| h.connected));
    }
}

/// Matches with any times (the extremes of i64 included, in any order, contradicting each
/// other) between up to four hosts, for both formulas: the synchronizer reports, and every
/// transform it gives maps every time without panicking.
#[test]
fn arbitrary_matches_never_panic() {
    use sync::matching::{End, Match, PacketKey};
    use sync::FormulaKind;
    let mut rng = scenario::rng::Rng::new(7);
    let time = |rng: &mut scenario::rng::Rng| -> i64 {
        match rng.range(0, 9) {
            0 => i64::MAX - rng.range(0, 1000) as i64,
            1 => i64::MIN + rng.range(0, 1000) as i64,
            2 => 0,
            3..=5 => 1_700_000_000_000_000_000 + rng.range(0, 1_000_000_000) as i64,
            _ => rng.range(0, 1_000_000) as i64,
        }
    };
    let mut runs = 0;
    for case in 0..300u64 {
        let hosts = 2 + (case % 3) as u32;
        for formula in [FormulaKind::Bisector, FormulaKind::Centre] {
            let ids = (0..hosts).map(|h| format!("host-{h}")).collect();
            let mut s = sync::Synchronizer::new(ids).with_formula(formula);
            let n = rng.range(0, 40);
            for i in 0..n {
                let a = rng.range(0, hosts as u64 - 1) as u32;
                let b = rng.range(0, hosts as u64 - 1) as u32;
                s.add(&Match {
                    send: End {
                        host: a,
                        trace: a,
                        ts: time(&mut rng),
                    },
                    recv: End {
                        host: b,
                        trace: b,
                        ts: time(&mut rng),
                    },
                    key: PacketKey {
                        seq: i as u32,
                        ack_seq: 0,
                        flags: 0,
                        flow: 0,
                    },
                });
            }
            let reference = (rng.range(0, 1) == 0).then_some(0);
            let r = s.finish(reference);
            assert_eq!(r.hosts.len(), hosts as usize, "case {case}");
            for h in &r.hosts {
                for t in [i64::MIN, -1, 0, 1, 1_700_000_000_000_000_000, i64::MAX] {
                    h.transform.apply_ns(t).round().to_i128();
                }
            }
            runs += 1;
        }
    }
    assert_eq!(runs, 600);
}
