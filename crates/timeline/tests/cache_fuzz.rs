//! The cache decoder on damaged files: any change to a cache file's bytes (flipped bits, bytes
//! cut, inserted or overwritten anywhere) gives the model built again from the trace, equal to
//! the one built first — never a panic, never a model decoded from damaged bytes.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use timeline::{BuildOptions, Origin, Timeline};

struct Fixture {
    _dir: tempfile::TempDir,
    traces: Vec<Arc<ctf::Trace>>,
    cache: PathBuf,
    file: PathBuf,
    good: Vec<u8>,
    built: String,
}

/// A small trace, its model and its cache file, made once for every case.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("kmix");
        scenario::kernel_mix::generate(
            &trace,
            &scenario::kernel_mix::KernelMixParams {
                events: 3_000,
                cpus: 2,
                ..Default::default()
            },
        )
        .unwrap();
        let traces = ctf::open_all(&[&trace]).unwrap();
        let cache = dir.path().join("cache");
        let (tl, origin, _) = Timeline::open(&traces, &options(&cache)).unwrap();
        assert_eq!(origin, Origin::Built);
        let file = Timeline::cache_path(&traces, &cache);
        let good = std::fs::read(&file).unwrap();
        Fixture {
            built: summary(&tl),
            _dir: dir,
            traces,
            cache,
            file,
            good,
        }
    })
}

fn options(cache: &std::path::Path) -> BuildOptions {
    BuildOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..Default::default()
    }
}

/// What a model answers: its rows and every row's states at full resolution.
fn summary(tl: &Timeline) -> String {
    let mut s = serde_json::to_string(tl).unwrap();
    for r in 0..tl.rows.len() as u32 {
        s.push_str(&format!("{:?}", tl.states(r, tl.start, tl.end, 1)));
    }
    s
}

#[derive(Debug, Clone)]
enum Damage {
    Flip { at: usize, bit: u8 },
    Cut { at: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Overwrite { at: usize, bytes: Vec<u8> },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        any::<usize>().prop_map(|at| Damage::Cut { at }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(at, bytes)| Damage::Insert { at, bytes }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(at, bytes)| Damage::Overwrite { at, bytes }),
    ]
}

fn apply(good: &[u8], d: &Damage) -> Vec<u8> {
    let mut b = good.to_vec();
    let n = b.len().max(1);
    match d {
        Damage::Flip { at, bit } => b[at % n] ^= 1 << bit,
        Damage::Cut { at } => b.truncate(at % n),
        Damage::Insert { at, bytes } => {
            let i = at % (b.len() + 1);
            b.splice(i..i, bytes.iter().copied());
        }
        Damage::Overwrite { at, bytes } => {
            let i = at % n;
            for (k, x) in bytes.iter().enumerate() {
                if let Some(slot) = b.get_mut(i + k) {
                    *slot = *x;
                }
            }
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn damaged_cache_files_are_rebuilt(d in damage()) {
        let f = fixture();
        let bytes = apply(&f.good, &d);
        std::fs::write(&f.file, &bytes).unwrap();
        let (tl, origin, _) = Timeline::open(&f.traces, &options(&f.cache)).unwrap();
        if bytes == f.good {
            prop_assert_eq!(origin, Origin::Cached);
        } else {
            prop_assert_eq!(origin, Origin::Built, "damage {:?} was not seen", d);
        }
        prop_assert_eq!(summary(&tl), f.built.clone());
    }
}
