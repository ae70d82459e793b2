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
