//! `pipeline::FollowSource` on a trace whose packets appear as a writer would write them: the
//! packets of a generated trace are copied into its `.NAME.partial` directory bound by bound,
//! then the directory is renamed. The follower must give every event at or before each bound
//! once the bound is said (and none after it), and in the end exactly the finished trace's
//! events in the finished trace's order.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctf::Event;
use pipeline::{FileSource, Flow, FollowSource, ReadOptions, Sink, Source, Summary, Written};

/// Collects (time, class name) of every event, shared with the test's thread.
struct Collect(Arc<Mutex<Vec<(i64, String)>>>, Arc<AtomicBool>);

impl Sink for Collect {
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.0.lock().unwrap().push((ts, ev.name().to_string()));
        Flow::Continue
    }
    fn finish(&mut self, _summary: &Summary) {
        self.1.store(true, Ordering::SeqCst);
    }
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn follows_packets_as_written_and_ends_with_the_finished_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    scenario::kernel_mix::generate(
        &full,
        &scenario::kernel_mix::KernelMixParams {
            events: 40_000,
            cpus: 3,
            packet_size: 16 * 1024,
            ..Default::default()
        },
    )
    .unwrap();
    // What a read of the finished trace gives (every stream whole, as the follower reads).
    let all_options = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    let expected = {
        let done = Arc::new(AtomicBool::new(false));
        let got = Arc::new(Mutex::new(Vec::new()));
        FileSource::open(&[&full], all_options)
            .unwrap()
            .run(&mut Collect(got.clone(), done));
        let v = got.lock().unwrap().clone();
        v
    };
    assert!(expected.len() > 40_000, "the statedump and the events");

    // The finished trace's packets, per stream file: (begin ns, bytes, index entry).
    let trace = &ctf::open_all(&[&full]).unwrap()[0];
    let clock = trace.class.clocks[0].clone();
    let mut streams = Vec::new();
    for s in &trace.streams {
        for (i, f) in s.files.iter().enumerate() {
            let data = fs::read(f).unwrap();
            let entries = s.index(i).expect("an index").to_vec();
            let packets: Vec<(i64, Vec<u8>, ctf::index::PacketEntry)> = entries
                .iter()
                .map(|e| {
                    let bytes = data[e.offset as usize..][..(e.packet_bits / 8) as usize].to_vec();
                    (clock.cycles_to_ns(e.ts_begin) as i64, bytes, *e)
                })
                .collect();
            streams.push((f.file_name().unwrap().to_owned(), packets));
        }
    }
    assert!(
        streams.iter().all(|(_, p)| p.len() >= 4),
        "several packets per stream"
    );

    // The trace being written: its metadata and empty streams and indexes.
    let dir = tmp.path().join("followed").join("kernel");
    let partial = ctf::writer::partial_dir(&dir);
    fs::create_dir_all(partial.join("index")).unwrap();
    fs::copy(full.join("metadata"), partial.join("metadata")).unwrap();
    for (name, _) in &streams {
        fs::File::create(partial.join(name)).unwrap();
        let mut idx = fs::File::create(
            partial
                .join("index")
                .join(format!("{}.idx", name.to_string_lossy())),
        )
        .unwrap();
        idx.write_all(&ctf::index::header()).unwrap();
    }
    let bound = Arc::new(AtomicI64::new(i64::MIN));
    let done = Arc::new(AtomicBool::new(false));
    let written: pipeline::follow::WrittenFn = {
        let (bound, done) = (bound.clone(), done.clone());
        Arc::new(move || {
            if done.load(Ordering::SeqCst) {
                Written::Done
            } else {
                Written::Until(bound.load(Ordering::SeqCst))
            }
        })
    };
    let source = FollowSource::open(
        &dir,
        written,
        ReadOptions::default(),
        Duration::from_millis(5),
    )
    .unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let finished = Arc::new(AtomicBool::new(false));
    let reader = {
        let (got, finished) = (got.clone(), finished.clone());
        std::thread::spawn(move || source.run(&mut Collect(got, finished)))
    };

    let (first, last) = (expected[0].0, expected.last().unwrap().0);
    let mut copied = vec![0usize; streams.len()];
    for k in 1..=5 {
        let b = first + (last - first) * k / 6;
        // Every packet that begins by the bound is written (with its index entry) first.
        for ((name, packets), n) in streams.iter().zip(copied.iter_mut()) {
            while *n < packets.len() && packets[*n].0 <= b {
                let (_, bytes, entry) = &packets[*n];
                let mut f = OpenOptions::new()
                    .append(true)
                    .open(partial.join(name))
                    .unwrap();
                f.write_all(bytes).unwrap();
                let mut idx = OpenOptions::new()
                    .append(true)
                    .open(
                        partial
                            .join("index")
                            .join(format!("{}.idx", name.to_string_lossy())),
                    )
                    .unwrap();
                idx.write_all(&ctf::index::encode(entry)).unwrap();
                *n += 1;
            }
        }
        bound.store(b, Ordering::SeqCst);
        let want = expected.iter().filter(|e| e.0 <= b).count();
        wait_for(&format!("the events up to bound {k}"), || {
            got.lock().unwrap().len() >= want
        });
        // Nothing past the bound, though the packets written hold some.
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(got.lock().unwrap().len(), want, "bound {k}");
        assert!(!finished.load(Ordering::SeqCst));
    }
    // The writer finishes: the rest of the packets, the rename, done.
    for ((name, packets), n) in streams.iter().zip(copied.iter()) {
        let mut f = OpenOptions::new()
            .append(true)
            .open(partial.join(name))
            .unwrap();
        for (_, bytes, _) in &packets[*n..] {
            f.write_all(bytes).unwrap();
        }
    }
    fs::remove_dir_all(partial.join("index")).unwrap();
    fs::rename(&partial, &dir).unwrap();
    done.store(true, Ordering::SeqCst);
    let summary = reader.join().unwrap();
    assert!(finished.load(Ordering::SeqCst));
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    assert_eq!(*got.lock().unwrap(), expected);
    assert!(Path::new(&dir).join("metadata").exists());
}
