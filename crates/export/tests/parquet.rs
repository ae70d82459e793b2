//! The Parquet export through the library API: the schema is pinned, the tables hold what the
//! read gave (every event, a slice per switch, the time map, the losses), and a damaged trace
//! exports its readable part and says what was damaged.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    Array, BooleanArray, Float64Array, Int32Array, Int64Array, MapArray, RecordBatch, StringArray,
};
use ctf::merge::TimeMap;
use export::parquet::{export_traces, tables, ParquetOptions, ParquetReport};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use pipeline::{FileSource, Notice, ReadOptions, Sink, Source};

/// The files of `table` for the only partition of the export in `dir`, sorted.
fn files_of(dir: &Path, table: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.join(table)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// The rows of `table` (of all its files: `event` has one per stream).
fn table(dir: &Path, table: &str) -> Vec<RecordBatch> {
    let files = files_of(dir, table);
    if table != "event" {
        assert_eq!(files.len(), 1, "{table}: {files:?}");
    }
    files
        .iter()
        .flat_map(|p| {
            let f = std::fs::File::open(p).unwrap();
            ParquetRecordBatchReaderBuilder::try_new(f)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
        })
        .collect()
}

/// The value of `key` in row `r` of a map column, if there.
fn map_value<'a, T: 'static>(m: &'a MapArray, r: usize, key: &str) -> Option<(&'a T, usize)> {
    let keys = m.keys().as_any().downcast_ref::<StringArray>().unwrap();
    let values = m.values().as_any().downcast_ref::<T>().unwrap();
    let offsets = m.value_offsets();
    (offsets[r] as usize..offsets[r + 1] as usize)
        .find(|&i| keys.value(i) == key)
        .map(|i| (values, i))
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("{name}: another type"))
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

/// An event as the tests compare it: time, name, `next_tid` and `next_comm` if any.
type Plain = (i64, String, Option<i64>, Option<String>);

/// The events of `dir`, and the discarded events and lost packets.
fn plain_read(dir: &Path, options: ReadOptions) -> (Vec<Plain>, u64, u64) {
    struct All(Vec<Plain>, u64, u64);
    impl Sink for All {
        fn wants_notices(&self) -> bool {
            true
        }
        fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> pipeline::Flow {
            let field = |n: &str| ev.payload().and_then(|p| p.field(n));
            let next = field("next_tid").and_then(|f| f.as_i64());
            let comm = field("next_comm").and_then(|f| {
                f.as_bytes().map(|b| {
                    String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap_or(b)).into_owned()
                })
            });
            self.0.push((ts, ev.name().to_string(), next, comm));
            pipeline::Flow::Continue
        }
        fn notice(&mut self, n: &Notice) -> pipeline::Flow {
            match n.kind {
                pipeline::NoticeKind::DiscardedEvents => self.1 += n.count,
                pipeline::NoticeKind::DiscardedPackets => self.2 += n.count,
            }
            pipeline::Flow::Continue
        }
    }
    let source = FileSource::open(&[dir], options).unwrap();
    let mut all = All(Vec::new(), 0, 0);
    source.run(&mut all);
    (all.0, all.1, all.2)
}

fn export(input: &Path, out: &Path, read: &ReadOptions) -> ParquetReport {
    let traces = ctf::open_all(&[input]).unwrap();
    export_traces(&traces, read, &ParquetOptions::new(out)).unwrap()
}

/// The schema of every table, pinned; `docs/parquet-schema.md` is the same text.
#[test]
fn schema_is_pinned() {
    let md = tables::schema_markdown();
    insta::assert_snapshot!("parquet_schema", md);
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/parquet-schema.md");
    let on_disk = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        on_disk == md,
        "{} is not the schema: regenerate it (TRACEKIT_WRITE_SCHEMA=1 cargo test -p tracekit-export --features parquet --test parquet)",
        doc.display()
    );
}

/// Regenerates `docs/parquet-schema.md` when asked.
#[test]
fn write_schema_doc_when_asked() {
    if std::env::var_os("TRACEKIT_WRITE_SCHEMA").is_some() {
        let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/parquet-schema.md");
        std::fs::write(doc, tables::schema_markdown()).unwrap();
    }
}

#[test]
fn every_event_and_a_slice_per_switch() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 30_000, 3, 5);
    let out = tmp.path().join("out");
    let read = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    let report = export(&input, &out, &read);
    let (events, discarded, lost) = plain_read(&input, read);
    assert_eq!(report.events(), events.len() as u64);
    assert_eq!((discarded, lost), (0, 0));

    // `event`: every event (in the order `event_rows_clustered_by_class` checks), its
    // payload's fields in the typed maps.
    let ev = table(&out, "event");
    assert_eq!(rows(&ev), events.len());
    let mut got: Vec<Plain> = Vec::new();
    for b in &ev {
        let (ts, name) = (col::<Int64Array>(b, "ts"), col::<StringArray>(b, "name"));
        let (ints, strs) = (
            col::<MapArray>(b, "payload_int"),
            col::<MapArray>(b, "payload_str"),
        );
        let ctx = col::<MapArray>(b, "context_int");
        for r in 0..b.num_rows() {
            assert!(ctx.is_null(r), "kernel-mix has no context");
            let next = map_value::<Int64Array>(ints, r, "next_tid").map(|(v, i)| v.value(i));
            let comm =
                map_value::<StringArray>(strs, r, "next_comm").map(|(v, i)| v.value(i).to_string());
            got.push((ts.value(r), name.value(r).to_string(), next, comm));
        }
    }
    let mut want = events.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);

    // `sched_slice`: one slice per switch in, plus each CPU's thread before its first switch;
    // back to back on each CPU, covering the range.
    let switches: Vec<&Plain> = events.iter().filter(|e| e.1 == "sched_switch").collect();
    let sl = table(&out, "sched_slice");
    let mut slices: Vec<(i32, i64, i64, i32)> = Vec::new();
    for b in &sl {
        let (cpu, ts, dur, tid) = (
            col::<Int32Array>(b, "cpu"),
            col::<Int64Array>(b, "ts"),
            col::<Int64Array>(b, "dur"),
            col::<Int32Array>(b, "tid"),
        );
        for r in 0..b.num_rows() {
            slices.push((cpu.value(r), ts.value(r), dur.value(r), tid.value(r)));
        }
    }
    let cpus: std::collections::BTreeSet<i32> = slices.iter().map(|s| s.0).collect();
    assert_eq!(slices.len(), switches.len() + cpus.len());
    slices.sort();
    let (first, last) = (events[0].0, events[events.len() - 1].0);
    for cpu in &cpus {
        let on: Vec<_> = slices.iter().filter(|s| s.0 == *cpu).collect();
        assert_eq!(on[0].1, first, "cpu {cpu} starts at the range's begin");
        for w in on.windows(2) {
            assert_eq!(w[0].1 + w[0].2, w[1].1, "cpu {cpu}: back to back");
        }
        let l = on[on.len() - 1];
        assert_eq!(l.1 + l.2, last, "cpu {cpu} ends at the range's end");
    }
    for s in &switches {
        assert!(
            slices.iter().any(|x| x.1 == s.0 && Some(x.3 as i64) == s.2),
            "a slice of next_tid at each switch"
        );
    }

    // The derived tables have rows, and `trace` says what was read.
    for t in [
        "thread_state",
        "syscall",
        "irq",
        "block_io",
        "disk",
        "thread",
        "process",
    ] {
        assert!(rows(&table(&out, t)) > 0, "{t} is empty");
    }
    let tr = table(&out, "trace");
    let b = &tr[0];
    assert_eq!(col::<Int64Array>(b, "events").value(0), events.len() as i64);
    assert_eq!(col::<Int64Array>(b, "begin_ns").value(0), first);
    assert_eq!(col::<Int64Array>(b, "end_ns").value(0), last);
    assert_eq!(col::<Int32Array>(b, "cpus").value(0), cpus.len() as i32);
    assert_eq!(
        col::<Int32Array>(b, "schema_version").value(0),
        tables::SCHEMA_VERSION as i32
    );
    assert!(!col::<BooleanArray>(b, "synced").value(0));
    assert_eq!(col::<StringArray>(b, "errors").value(0), "");

    // The output directory must be empty.
    let traces = ctf::open_all(&[&input]).unwrap();
    let again = export_traces(&traces, &ReadOptions::default(), &ParquetOptions::new(&out));
    assert!(matches!(again, Err(export::Error::OutputNotEmpty(_))));
}

struct Shift(i64);

impl TimeMap for Shift {
    fn map(&self, _trace: usize, ns: i64) -> i64 {
        ns + self.0
    }
}

/// Under a time map (`--sync`) every time is mapped and `trace` holds the transform.
#[test]
fn times_on_the_mapped_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 5_000, 2, 9);
    let shift = -2_500_000_123;
    let plain = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    let mapped = ReadOptions {
        time_map: Some(Arc::new(Shift(shift))),
        ..plain.clone()
    };
    let out = tmp.path().join("out");
    export(&input, &out, &mapped);
    let (events, ..) = plain_read(&input, plain);
    let ev = table(&out, "event");
    let first = ev
        .iter()
        .flat_map(|b| col::<Int64Array>(b, "ts").values().iter().copied())
        .min();
    assert_eq!(first, Some(events[0].0 + shift));
    let tr = table(&out, "trace");
    assert_eq!(col::<Int64Array>(&tr[0], "clock_offset_ns").value(0), shift);
    assert_eq!(col::<Float64Array>(&tr[0], "clock_rate").value(0), 1.0);
    assert!(col::<BooleanArray>(&tr[0], "synced").value(0));
    assert_eq!(
        col::<Int64Array>(&tr[0], "begin_ns").value(0),
        events[0].0 + shift
    );
}

/// Discarded events are counted in `trace`, per stream, never silent.
#[test]
fn losses_are_in_the_trace_table() {
    let tmp = tempfile::tempdir().unwrap();
    // A chaos trace with discarded events (half the seeds count some).
    let mut found = false;
    for seed in 1..8 {
        let input = tmp.path().join(format!("chaos{seed}"));
        scenario::chaos::write_chaos_trace(
            &input,
            &mut scenario::rng::Rng::new(seed),
            &scenario::chaos::ChaosOptions::events(3_000),
        )
        .unwrap();
        let read = ReadOptions {
            no_intersection: true,
            ..Default::default()
        };
        let (_, discarded, lost) = plain_read(&input, read.clone());
        if discarded == 0 {
            continue;
        }
        let out = tmp.path().join(format!("out{seed}"));
        let report = export(&input, &out, &read);
        assert_eq!(report.traces[0].discarded_events, discarded);
        let tr = read_trace(&out);
        assert_eq!(
            col::<Int64Array>(&tr, "discarded_events").value(0),
            discarded as i64
        );
        assert_eq!(col::<Int64Array>(&tr, "lost_packets").value(0), lost as i64);
        let losses = col::<StringArray>(&tr, "losses").value(0);
        assert!(losses.contains("discarded events"), "{losses}");
        found = true;
        break;
    }
    assert!(found, "no chaos seed gave discarded events");
}

fn read_trace(out: &Path) -> RecordBatch {
    table(out, "trace").remove(0)
}

/// A trace cut in the middle of a stream exports what could be read, and the `trace` table
/// and the report name the damage.
#[test]
fn a_damaged_trace_exports_its_readable_part() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 20_000, 2, 3);
    let read = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    let (whole, ..) = plain_read(&input, read.clone());
    // Damage the first data stream: garbage in the middle of its second packet.
    let stream = std::fs::read_dir(&input)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().unwrap() != "metadata")
        .min()
        .unwrap();
    let mut bytes = std::fs::read(&stream).unwrap();
    let at = bytes.len() / 2;
    for b in &mut bytes[at..at + 64] {
        *b = 0xff;
    }
    std::fs::write(&stream, &bytes).unwrap();
    let _ = std::fs::remove_dir_all(input.join("index"));
    let out = tmp.path().join("out");
    let report = export(&input, &out, &read);
    let t = &report.traces[0];
    assert!(!t.errors.is_empty(), "the damage is reported");
    assert!(
        t.errors
            .iter()
            .any(|e| e.contains(&*stream.file_name().unwrap().to_string_lossy())),
        "{:?}",
        t.errors
    );
    let ev = rows(&table(&out, "event"));
    assert!(ev > 0 && ev < whole.len(), "{ev} of {}", whole.len());
    let tr = read_trace(&out);
    assert!(!col::<StringArray>(&tr, "errors").value(0).is_empty());
    assert_eq!(col::<Int64Array>(&tr, "events").value(0), ev as i64);
}

/// `--tables` names tables; an unknown name is an error naming it and the tables there are.
#[test]
fn tables_by_name() {
    use export::parquet::Tables;
    let t = Tables::parse(&["sched_slice".to_string(), "disk".to_string()]).unwrap();
    assert!(t.sched_slice && t.block_io && !t.event && !t.syscall);
    let e = Tables::parse(&["sched_slice".to_string(), "slices".to_string()]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("`slices`") && msg.contains("thread_state"),
        "{msg}"
    );
}

/// A value as the `_str` maps' JSON text holds it (structures are not compared: a [`ctf::value::Value`]
/// has no member names).
fn json_of(v: &ctf::value::Value) -> Option<serde_json::Value> {
    Some(match v {
        ctf::value::Value::U64(x) => (*x).into(),
        ctf::value::Value::I64(x) => (*x).into(),
        ctf::value::Value::Str(b) => {
            String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap_or(b)).into()
        }
        ctf::value::Value::Array(a) => a.iter().map(json_of).collect::<Option<Vec<_>>>()?.into(),
        ctf::value::Value::Variant(_, v) => json_of(v)?,
        _ => return None,
    })
}

/// The names of a structure's members, as a walk gives them.
struct TopNames(u32, Vec<String>);

impl ctf::field::FieldVisitor for TopNames {
    fn value(&mut self, name: Option<&str>, _: Option<ctf::ir::Role>, _: &ctf::FieldValue<'_>) {
        if let (1, Some(n)) = (self.0, name) {
            self.1.push(n.to_string());
        }
    }
    fn enter(&mut self, name: Option<&str>, _: ctf::field::Compound<'_>) {
        if let (1, Some(n)) = (self.0, name) {
            self.1.push(n.to_string());
        }
        self.0 += 1;
    }
    fn leave(&mut self) {
        self.0 -= 1;
    }
}

/// A real LTTng-UST trace (contexts, a sequence): every payload member of every event is in the
/// maps under its name, with the value the trace holds, and the contexts too.
#[test]
fn fields_of_a_real_trace() {
    let Some(shared) = testkit::shared_or_skip("the UST trace of fields_of_a_real_trace") else {
        return;
    };
    let Some(input) =
        testkit::intact_trace(&shared, "traces/ust/hello-lttng-2.13/ust/uid/0/64-bit")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let read = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    export(&input, &out, &read);
    // The events of the plain read, by (time, name): their payload and context members.
    type Members = Vec<(String, ctf::value::Value)>;
    let mut plain: std::collections::BTreeMap<(i64, String), Vec<(Members, Members)>> =
        Default::default();
    struct All<'a>(&'a mut std::collections::BTreeMap<(i64, String), Vec<(Members, Members)>>);
    impl Sink for All<'_> {
        fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> pipeline::Flow {
            let members = |v: Option<ctf::FieldView<'_>>| -> Members {
                let Some(v) = v else { return Vec::new() };
                let mut names = TopNames(0, Vec::new());
                v.walk(&mut names);
                names
                    .1
                    .iter()
                    .filter_map(|n| Some((n.clone(), v.field(n)?.to_value())))
                    .collect()
            };
            let payload = members(ev.payload());
            let mut context = members(ev.common_context());
            context.extend(members(ev.specific_context()));
            self.0
                .entry((ts, ev.name().to_string()))
                .or_default()
                .push((payload, context));
            pipeline::Flow::Continue
        }
    }
    FileSource::open(&[&input], read)
        .unwrap()
        .run(&mut All(&mut plain));
    let mut seen = 0;
    let mut arrays = 0;
    for b in table(&out, "event") {
        let (ts, name) = (col::<Int64Array>(&b, "ts"), col::<StringArray>(&b, "name"));
        for r in 0..b.num_rows() {
            let key = (ts.value(r), name.value(r).to_string());
            let cands = plain
                .get(&key)
                .unwrap_or_else(|| panic!("{key:?} not read"));
            // The maps of this row, as (name, JSON value).
            let row_members = |int: &str, str: &str| -> Vec<(String, serde_json::Value)> {
                let mut m = Vec::new();
                let ints = col::<MapArray>(&b, int);
                let strs = col::<MapArray>(&b, str);
                if ints.is_null(r) {
                    return m;
                }
                let (o, k, v) = (
                    ints.value_offsets(),
                    ints.keys().as_any().downcast_ref::<StringArray>().unwrap(),
                    ints.values().as_any().downcast_ref::<Int64Array>().unwrap(),
                );
                for i in o[r] as usize..o[r + 1] as usize {
                    m.push((k.value(i).to_string(), v.value(i).into()));
                }
                let (o, k, v) = (
                    strs.value_offsets(),
                    strs.keys().as_any().downcast_ref::<StringArray>().unwrap(),
                    strs.values()
                        .as_any()
                        .downcast_ref::<StringArray>()
                        .unwrap(),
                );
                for i in o[r] as usize..o[r + 1] as usize {
                    let text = v.value(i);
                    // A sequence's JSON text, or a string.
                    let value = match serde_json::from_str::<serde_json::Value>(text) {
                        Ok(v) if v.is_array() => v,
                        _ => text.into(),
                    };
                    m.push((k.value(i).to_string(), value));
                }
                m.sort_by(|a, b| a.0.cmp(&b.0));
                m
            };
            let want = |ms: &Members| -> Vec<(String, serde_json::Value)> {
                let mut m: Vec<_> = ms
                    .iter()
                    .map(|(n, v)| {
                        let j = match v {
                            ctf::value::Value::U64(x) => (*x as i64).into(),
                            // A float is JSON text in the `_str` map.
                            ctf::value::Value::Float(f) => {
                                let text = f.to_string();
                                let back: f64 = text.parse().unwrap();
                                assert_eq!(back, *f, "{n}");
                                text.into()
                            }
                            v => json_of(v).unwrap_or_else(|| panic!("{n}: {v:?}")),
                        };
                        (n.clone(), j)
                    })
                    .collect();
                m.sort_by(|a, b| a.0.cmp(&b.0));
                m
            };
            let got = (
                row_members("payload_int", "payload_str"),
                row_members("context_int", "context_str"),
            );
            assert!(!got.1.is_empty(), "{key:?}: the trace has contexts");
            arrays += got.0.iter().filter(|m| m.1.is_array()).count();
            assert!(
                cands.iter().any(|(p, c)| (want(p), want(c)) == got),
                "{key:?}: {got:?} is none of {cands:?}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, plain.values().map(Vec::len).sum::<usize>());
    assert!(arrays > 0, "the trace's build_id sequences are in the maps");
}

/// The `event` table's row order (schema version 3): each file's row groups follow each other
/// in time (a group holds the next rows of the stream), and inside a group the rows of one
/// class are together, the classes by name, each class's rows in time order; every event is
/// there once. The same for the one file of a [`export::parquet::ParquetSink`] used alone.
#[test]
fn event_rows_clustered_by_class() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 40_000, 2, 7);
    let out = tmp.path().join("out");
    let read = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    // Small groups: several per file.
    let group = 4096;
    let traces = ctf::open_all(&[&input]).unwrap();
    let options = ParquetOptions {
        row_group_rows: group,
        ..ParquetOptions::new(&out)
    };
    export_traces(&traces, &read, &options).unwrap();
    let (events, _, _) = plain_read(&input, read.clone());
    let mut want: std::collections::BTreeMap<String, usize> = Default::default();
    for e in &events {
        *want.entry(e.1.clone()).or_default() += 1;
    }
    // Every event once: the counts per class are the read's.
    assert_eq!(clustered_counts(&out, group, 2), want);

    // The sink's own `event` file (one, of the merged read, written by a thread) too.
    let sink_out = tmp.path().join("sink");
    let mut sink = export::parquet::ParquetSink::new(
        &traces,
        &export::parquet::partitions(&traces),
        &read,
        ParquetOptions {
            row_group_rows: group,
            tables: export::parquet::Tables::parse(&["event".to_string()]).unwrap(),
            ..ParquetOptions::new(&sink_out)
        },
        true,
    )
    .unwrap();
    FileSource::new(traces, read).run(&mut sink);
    export::Export::close(sink).unwrap();
    assert_eq!(clustered_counts(&sink_out, group, 1), want);
}

/// The rows per class name of the `event` files under `out` (`files` of them), checking
/// their order: full groups of `group` rows following each other in time, each grouped by
/// class in name order, each class in time order.
fn clustered_counts(
    out: &Path,
    group: usize,
    files: usize,
) -> std::collections::BTreeMap<String, usize> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::statistics::Statistics;
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    let found = files_of(out, "event");
    assert_eq!(found.len(), files, "{found:?}");
    for file in &found {
        let meta = SerializedFileReader::new(std::fs::File::open(file).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let groups = meta.num_row_groups();
        assert!(groups > 2, "{}: {groups} row groups", file.display());
        let mut last_of_group: Option<i64> = None;
        for g in 0..groups {
            let rg = meta.row_group(g);
            if g + 1 < groups {
                assert_eq!(rg.num_rows() as usize, group, "group {g} is full");
            }
            let batches: Vec<RecordBatch> =
                ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap())
                    .unwrap()
                    .with_row_groups(vec![g])
                    .build()
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
            let mut rows: Vec<(String, i64)> = Vec::new();
            for b in &batches {
                let (ts, name) = (col::<Int64Array>(b, "ts"), col::<StringArray>(b, "name"));
                rows.extend((0..b.num_rows()).map(|r| (name.value(r).to_string(), ts.value(r))));
            }
            assert_eq!(rows.len(), rg.num_rows() as usize);
            // Runs of one name, in name order, each in time order: the rows sorted by (name,
            // time) are the rows as written.
            let mut sorted = rows.clone();
            sorted.sort();
            assert!(
                sorted == rows,
                "{} group {g}: rows not grouped by class in name then time order",
                file.display()
            );
            let runs = rows.windows(2).filter(|w| w[0].0 != w[1].0).count() + 1;
            let names: std::collections::BTreeSet<&str> =
                rows.iter().map(|r| r.0.as_str()).collect();
            assert_eq!(runs, names.len(), "group {g}: one run per class");
            assert!(names.len() > 5, "group {g}: {} classes", names.len());
            // The groups follow each other in time: a group's rows are the stream's next ones.
            let (lo, hi) = (
                rows.iter().map(|r| r.1).min().unwrap(),
                rows.iter().map(|r| r.1).max().unwrap(),
            );
            if let Some(prev) = last_of_group {
                assert!(prev <= lo, "group {g} starts before the last one ended");
            }
            last_of_group = Some(hi);
            // The `name` column's statistics bound its runs (what lets an engine skip).
            let name_col = rg
                .columns()
                .iter()
                .find(|c| c.column_path().string() == "name")
                .unwrap();
            match name_col.statistics() {
                Some(Statistics::ByteArray(st)) => {
                    assert_eq!(
                        st.min_opt().map(|v| v.as_utf8().unwrap()),
                        Some(rows[0].0.as_str())
                    );
                    assert_eq!(
                        st.max_opt().map(|v| v.as_utf8().unwrap()),
                        Some(rows[rows.len() - 1].0.as_str())
                    );
                }
                other => panic!("name statistics: {other:?}"),
            }
            assert!(
                name_col.column_index_offset().is_some(),
                "name has page statistics"
            );
            for (n, _) in rows {
                *counts.entry(n).or_default() += 1;
            }
        }
    }
    counts
}

/// Each column is written with the encoding its definition names, and the tables that sort
/// their batches have their rows in `ts` order within each block of `BATCH_ROWS`.
#[test]
fn encodings_and_order_as_defined() {
    use parquet::basic::Encoding as Pq;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 30_000, 2, 11);
    let out = tmp.path().join("out");
    export(&input, &out, &ReadOptions::default());
    let mut blocks_out_of_order = 0;
    for def in tables::TABLES {
        for file in files_of(&out, def.name) {
            let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
            for rg in reader.metadata().row_groups() {
                for c in rg.columns() {
                    let path = c.column_path().parts();
                    let Some(col) = def.columns.iter().find(|d| d.name == path[0]) else {
                        panic!("{}: column {path:?} not in the definition", def.name);
                    };
                    // A map's keys keep their dictionary; its values follow the column's.
                    if path.last().is_some_and(|p| p == "key") {
                        continue;
                    }
                    let encs: Vec<Pq> = c.encodings().collect();
                    let dict = encs.contains(&Pq::RLE_DICTIONARY);
                    match col.encoding {
                        tables::Encoding::Delta => {
                            assert!(
                                encs.contains(&Pq::DELTA_BINARY_PACKED) && !dict,
                                "{}.{path:?}: {encs:?}",
                                def.name
                            )
                        }
                        tables::Encoding::Plain => {
                            assert!(
                                !dict && !encs.contains(&Pq::DELTA_BINARY_PACKED),
                                "{}.{path:?}: {encs:?}",
                                def.name
                            )
                        }
                        tables::Encoding::Dictionary => {
                            assert!(
                                dict || c.num_values() == 0,
                                "{}.{path:?}: {encs:?}",
                                def.name
                            )
                        }
                        _ => {}
                    }
                }
            }
        }
        if !def.sort_batches || def.columns[0].name != "ts" {
            continue;
        }
        let ts: Vec<i64> = table(&out, def.name)
            .iter()
            .flat_map(|b| col::<Int64Array>(b, "ts").values().to_vec())
            .collect();
        for block in ts.chunks(tables::BATCH_ROWS) {
            assert!(
                block.is_sorted(),
                "{}: a block of {} rows out of time order",
                def.name,
                tables::BATCH_ROWS
            );
        }
        // The rows are made when their intervals end: without the sort, the blocks of
        // `thread_state` (long blocked intervals end late) would not be in order.
        if def.name == "thread_state" {
            blocks_out_of_order += usize::from(!ts.is_sorted());
        }
    }
    assert_eq!(
        blocks_out_of_order, 1,
        "thread_state is sorted per block, not whole"
    );
}
