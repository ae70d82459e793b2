//! Generated client-server scenarios (2, 3 and 8 hosts, offsets of hours, drifts up to
//! ±100 ppm): every host's true formula lies within the reported bounds, and the error of the
//! chosen formula over the trace is below the scenario's smallest one-way delay.

use scenario::client_server::{generate, ClientServerParams};
use scenario::lttng::NetLayout;
use serde_json::Value;
use sync::{synchronize, Linear, Quality, Rational, SyncOptions, Transform};

fn dec(v: &Value) -> Rational {
    Rational::parse_decimal(v.as_str().unwrap()).unwrap()
}

/// Returns the largest error (ns) over all hosts and the scenario's min one-way delay.
fn run(
    hosts: u32,
    offset_s: u64,
    ppm: u32,
    seed: u64,
    net: NetLayout,
    requests: u32,
) -> (f64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let p = ClientServerParams {
        seed,
        hosts,
        max_offset_s: offset_s,
        max_drift_ppm: ppm,
        requests,
        net,
        ..ClientServerParams::default()
    };
    let out = generate(dir.path(), &p).unwrap();
    let gt: Value =
        serde_json::from_str(&std::fs::read_to_string(&out.ground_truth).unwrap()).unwrap();
    let traces = ctf::open_all(&out.dirs).unwrap();
    let s = synchronize(&traces, &SyncOptions::default());
    let min_delay = gt["min_one_way_delay_ns"].as_u64().unwrap();
    let ghosts = gt["hosts"].as_array().unwrap();
    let truth = |i: usize| (dec(&ghosts[i]["slope"]), dec(&ghosts[i]["offset_ns"]));
    let r = s.reference_trace();
    let (sr, br) = truth(r);
    let mut worst = 0f64;
    for (i, t) in s.traces.iter().enumerate() {
        let h = &s.result.hosts[t.host as usize];
        assert!(h.connected, "host {i} not connected");
        assert_eq!(
            h.quality,
            if i == r { Quality::Accurate } else { h.quality }
        );
        assert!(
            matches!(h.quality, Quality::Accurate),
            "host {i}: {:?}",
            h.quality
        );
        // host = s·true + b  ⇒  t_ref = (sr/s)·t + (br − sr·b/s).
        let (sh, bh) = truth(i);
        let true_lin = Linear::new(sr.div(&sh), br.sub(&sr.mul(&bh).div(&sh)));
        let Transform::Linear(l) = &h.transform else {
            panic!("linear expected")
        };
        let b = h.bounds.as_ref().expect("bounds");
        assert!(
            b.contains(&true_lin),
            "host {i}: true {} {} outside [{}, {}] [{}, {}]",
            true_lin.slope,
            true_lin.offset,
            b.slope.0,
            b.slope.1,
            b.offset.0,
            b.offset.1
        );
        for ts in [t.first_ns.unwrap(), t.last_ns.unwrap()] {
            let err = l.apply_ns(ts).sub(&true_lin.apply_ns(ts)).abs().to_f64();
            worst = worst.max(err);
        }
    }
    eprintln!(
        "{hosts} hosts, ±{offset_s} s, ±{ppm} ppm, seed {seed}, {requests} requests: {} matches, max error {worst:.0} ns, min one-way delay {min_delay} ns",
        s.stats.matches
    );
    (worst, min_delay)
}

#[test]
fn two_hosts() {
    let (e, d) = run(2, 3600, 100, 2, NetLayout::NetworkHeader, 200);
    assert!(e < d as f64);
    let (e, d) = run(2, 5 * 3600, 100, 11, NetLayout::InetSock, 200);
    assert!(e < d as f64);
}

#[test]
fn three_hosts() {
    let (e, d) = run(3, 7200, 100, 2, NetLayout::NetworkHeader, 400);
    assert!(e < d as f64);
    let (e, d) = run(3, 3600, 50, 12, NetLayout::InetSock, 400);
    assert!(e < d as f64);
}

#[test]
fn eight_hosts() {
    let (e, d) = run(8, 10 * 3600, 100, 3, NetLayout::NetworkHeader, 400);
    assert!(e < d as f64);
    // Bounds always hold, whatever the density of packets.
    run(8, 3600, 100, 13, NetLayout::InetSock, 40);
}
