//! The real two-host trace pair `traces/kernel/synctraces/{scp_src,scp_dest}` (set
//! `TRACEKIT_SHARED` to the shared data directory): the match count, the reference and
//! scp_src's transform agree with what Trace Compass's own tests assert for these traces
//! (46 matches; scp_dest is the reference; scp_src: slope 0.9999413783703139011056845831168394,
//! offset 79796507913179.33347660124688298171 ns).

use std::path::PathBuf;

use sync::{synchronize, FormulaKind, Quality, Rational, SyncOptions, Transform};

fn shared() -> Option<PathBuf> {
    std::env::var_os("TRACEKIT_SHARED").map(PathBuf::from)
}

/// |a − b| ≤ 10^-digits·|b|.
fn agree(a: &Rational, b: &str, digits: u32) -> bool {
    let b = Rational::parse_decimal(b).unwrap();
    let tol = b.abs().mul(&Rational::new(
        1i128.into(),
        sync::bigint::BigInt::from(10i128).pow(digits),
    ));
    a.sub(&b).abs() <= tol
}

#[test]
fn synctraces_agree_with_trace_compass() {
    let Some(shared) = shared() else {
        eprintln!("TRACEKIT_SHARED unset: skipping the synctraces test");
        return;
    };
    let dir = shared.join("traces/kernel/synctraces");
    let traces = ctf::open_all(&[dir.join("scp_src"), dir.join("scp_dest")]).unwrap();
    let s = synchronize(
        &traces,
        &SyncOptions {
            formula: FormulaKind::Bisector,
            ..SyncOptions::default()
        },
    );
    assert_eq!(s.stats.matches, 46, "{:?}", s.stats);
    assert_eq!(s.reference_trace(), 1, "scp_dest is the reference");
    assert!(s.trace_transform(1).is_identity());
    let pair = &s.result.pairs[0];
    assert_eq!(pair.quality, Quality::Accurate);
    let Transform::Linear(l) = s.trace_transform(0) else {
        panic!("linear expected")
    };
    eprintln!(
        "scp_src: slope {} offset {}",
        l.slope.to_decimal(34),
        l.offset.to_decimal(34)
    );
    // Trace Compass rounds every product and quotient to 34 digits (DECIMAL128); the formula
    // here is exact, so the two agree to ~33 digits for the slope and ~26 for the offset.
    assert!(agree(&l.slope, "0.9999413783703139011056845831168394", 30));
    assert!(agree(&l.offset, "79796507913179.33347660124688298171", 24));
    // The reported bounds hold the formula.
    let b = s.result.hosts[s.traces[0].host as usize]
        .bounds
        .clone()
        .unwrap();
    assert!(b.contains(l));
}
