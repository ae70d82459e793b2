//! The model of every shared real kernel trace (`TRACEKIT_SHARED`): built without error, its
//! queries bounded, every event counted, the cache giving the same model.

use std::path::PathBuf;

use pipeline::{FileSource, Flow, ReadOptions, Sink, Source};
use timeline::{BuildOptions, Origin, Timeline};

struct Count(u64);

impl Sink for Count {
    fn event(&mut self, _: &ctf::Event<'_>, _: i64) -> Flow {
        self.0 += 1;
        Flow::Continue
    }
}

#[test]
fn every_shared_kernel_trace() {
    let Some(sh) = testkit::shared_or_skip("the shared-trace timeline tests") else {
        return;
    };
    let root = sh.join("traces/kernel");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    for dir in dirs {
        let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
        let opts = BuildOptions {
            cache_dir: Some(tmp.path().to_path_buf()),
            ..Default::default()
        };
        let (tl, origin, _diags) =
            Timeline::open(&traces, &opts).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(origin, Origin::Built);
        let mut count = Count(0);
        FileSource::new(
            traces.clone(),
            ReadOptions {
                no_intersection: true,
                ..Default::default()
            },
        )
        .run(&mut count);
        assert_eq!(tl.events, count.0, "{}", dir.display());
        let (d, _) = tl.event_density(tl.start, tl.end, 1000);
        assert_eq!(d.iter().sum::<u64>(), tl.events, "{}", dir.display());
        assert!(tl.rows.len() > tl.hosts.len(), "{}: no rows", dir.display());
        let res = ((tl.end - tl.start) / 1000).max(1);
        let mut spans = 0;
        for r in &tl.rows {
            let s = tl.states(r.id, tl.start, tl.end, res);
            assert!(s.len() as i64 <= (tl.end - tl.start) / res + 2);
            spans += s.len();
        }
        assert!(spans > 0, "{}: no states", dir.display());
        let (cached, origin, _) = Timeline::open(&traces, &opts).unwrap();
        assert_eq!(origin, Origin::Cached);
        assert_eq!(cached.rows.len(), tl.rows.len());
        assert_eq!(cached.intervals(), tl.intervals());
    }
}
