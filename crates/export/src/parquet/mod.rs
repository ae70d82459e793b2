//! Parquet output (`tracekit export --format parquet`): tables a user queries without knowing
//! CTF, for Spark, DuckDB or any engine that reads Parquet.
//!
//! Each table ([`tables::TABLES`]) is a dataset directory under the output directory,
//! partitioned Hive-style by host and trace: `DIR/sched_slice/host=web1/trace=kernel/
//! part-0.parquet`, zstd-compressed. `event` holds every event (payload and context fields
//! as typed maps; each row group's rows grouped by class, see `fields::EventFile`); the others derive from the kernel model's notifications, the state machine
//! `tracekit analyze` runs: `sched_slice`, `thread_state`, `syscall`, `irq`, `block_io`,
//! `net_packet`, `thread`, `process`; `trace` says where each trace came from, its clock
//! transform under `--sync`, and what it lost. The schema is [`tables::schema_markdown`]
//! (`docs/parquet-schema.md`), versioned by [`tables::SCHEMA_VERSION`].
//!
//! Memory stays constant while streaming: rows go to the Parquet writer in batches, which
//! closes a row group every [`ParquetOptions::row_group_rows`] rows (the `event` table's
//! writers hold up to 64 Ki rows, a row group, to order them by class); the state kept is the
//! kernel model's and one open interval per thread and CPU. [`export_traces`] reads the
//! traces one after another, so the number of traces does not matter either.

mod derive;
mod events;
mod fields;
mod json;
pub mod tables;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::ctf::{Event, Trace};
use pipeline::{
    classes_where, union_wanted, Diagnostic, FileSource, Flow, Notice, NoticeKind, ReadOptions,
    Sink, Source, Summary, Wanted,
};

use self::derive::TraceOut;
use self::tables::{row, TableOut};
use crate::streams::Range;
use crate::{Error, Export, NameFilter};

/// Which tables to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tables {
    /// `event`: every event (the largest table by far).
    pub event: bool,
    /// `sched_slice`.
    pub sched_slice: bool,
    /// `thread_state`.
    pub thread_state: bool,
    /// `syscall`.
    pub syscall: bool,
    /// `irq`.
    pub irq: bool,
    /// `block_io`.
    pub block_io: bool,
    /// `net_packet`.
    pub net_packet: bool,
    /// `thread`.
    pub thread: bool,
    /// `process`.
    pub process: bool,
}

impl Tables {
    /// Every table.
    pub const ALL: Tables = Tables {
        event: true,
        sched_slice: true,
        thread_state: true,
        syscall: true,
        irq: true,
        block_io: true,
        net_packet: true,
        thread: true,
        process: true,
    };

    /// The tables named (`trace` is always written): an unknown name is an error naming it.
    pub fn parse(names: &[String]) -> Result<Tables, Error> {
        let mut t = Tables {
            event: false,
            sched_slice: false,
            thread_state: false,
            syscall: false,
            irq: false,
            block_io: false,
            net_packet: false,
            thread: false,
            process: false,
        };
        for n in names {
            let flag = match n.as_str() {
                "event" => &mut t.event,
                "sched_slice" => &mut t.sched_slice,
                "thread_state" => &mut t.thread_state,
                "syscall" => &mut t.syscall,
                "irq" => &mut t.irq,
                "block_io" | "disk" => &mut t.block_io,
                "net_packet" => &mut t.net_packet,
                "thread" => &mut t.thread,
                "process" => &mut t.process,
                "trace" => continue,
                _ => {
                    return Err(Error::UnknownTable {
                        name: n.clone(),
                        known: tables::TABLES.map(|t| t.name).join(", "),
                    })
                }
            };
            *flag = true;
        }
        Ok(t)
    }
}

impl Default for Tables {
    fn default() -> Self {
        Tables::ALL
    }
}

/// Options of a Parquet export.
#[derive(Debug, Clone)]
pub struct ParquetOptions {
    /// The output directory: absent or empty.
    pub dir: PathBuf,
    /// The tables written.
    pub tables: Tables,
    /// The events the `event` table keeps (the derived tables see every event).
    pub names: NameFilter,
    /// Rows per row group (the writer's memory bound per table; the `event` table's groups are
    /// at most 64 Ki rows, which its writers hold to order them by class).
    pub row_group_rows: usize,
    /// The zstd level of every column (1–22): higher levels write smaller files, slower. None:
    /// each table's own ([`tables::TableDef::zstd_level`]: 3 for `event`, 1 for the others;
    /// bench/README.md has the size and time of others).
    pub zstd_level: Option<i32>,
}

impl ParquetOptions {
    fn file_props(&self) -> tables::FileProps {
        tables::FileProps {
            row_group_rows: self.row_group_rows,
            zstd_level: self.zstd_level,
        }
    }

    /// Every table, every event, under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ParquetOptions {
            dir: dir.into(),
            tables: Tables::ALL,
            names: NameFilter::default(),
            row_group_rows: 256 * 1024,
            zstd_level: None,
        }
    }
}

/// What was written for one trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceReport {
    /// The trace directory read.
    pub path: PathBuf,
    /// Its partition: `host=…/trace=…`.
    pub partition: PathBuf,
    /// Events read.
    pub events: u64,
    /// CPUs the kernel model saw.
    pub cpus: i32,
    /// Discarded events and lost packets (never silent: also in the `trace` table).
    pub discarded_events: u64,
    /// Lost packets.
    pub lost_packets: u64,
    /// Read errors: what could be read was exported.
    pub errors: Vec<String>,
    /// Per table: name, rows, file bytes.
    pub tables: Vec<(&'static str, u64, u64)>,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParquetReport {
    /// Per trace, in input order.
    pub traces: Vec<TraceReport>,
}

impl ParquetReport {
    /// Bytes of Parquet written.
    pub fn bytes(&self) -> u64 {
        self.traces
            .iter()
            .flat_map(|t| &t.tables)
            .map(|t| t.2)
            .sum()
    }

    /// Events read.
    pub fn events(&self) -> u64 {
        self.traces.iter().map(|t| t.events).sum()
    }

    /// Whether a trace could not be read whole (its readable part was exported).
    pub fn damaged(&self) -> bool {
        self.traces.iter().any(|t| !t.errors.is_empty())
    }

    /// What to tell the user, trace by trace: each read error (`error: …`), then the trace's
    /// losses (`warning: …`).
    pub fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.traces {
            out.extend(t.errors.iter().map(|e| format!("error: {e}")));
            if t.discarded_events > 0 || t.lost_packets > 0 {
                out.push(format!(
                    "warning: {}: {} discarded events, {} lost packets (in the `trace` table)",
                    t.path.display(),
                    t.discarded_events,
                    t.lost_packets
                ));
            }
        }
        out
    }

    /// One line on what was written to `output` in `secs` seconds: traces, events, bytes,
    /// bytes per event, events per second.
    pub fn summary(&self, output: &std::path::Path, secs: f64) -> String {
        let events = self.events();
        format!(
            "Exported {} trace(s), {events} events, to Parquet in `{}`: {} bytes ({:.1} bytes/event) in {secs:.2} s ({:.2} M events/s).",
            self.traces.len(),
            output.display(),
            self.bytes(),
            self.bytes() as f64 / events.max(1) as f64,
            events as f64 / secs.max(1e-9) / 1e6,
        )
    }
}

/// A [`pipeline::Sink`] writing the tables of the traces it is given events of.
pub struct ParquetSink {
    options: ParquetOptions,
    /// Per trace index: its position in `outs`.
    slot: Vec<usize>,
    outs: Vec<TraceOut>,
    /// The time map of the read, for the `trace` table.
    read: ReadOptions,
    last_in_range: Option<i64>,
    diagnostics: Vec<Diagnostic>,
}

/// Keeps `[A-Za-z0-9._-]` of a partition value, `_` for anything else (a path separator, `=`,
/// `%`: what Hive-style readers would split or unescape).
fn partition_value(s: &str) -> String {
    let v: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if v.is_empty() {
        "unknown".to_string()
    } else {
        v
    }
}

/// The partitions of `traces`: `host=HOSTNAME/trace=PATH`, the path relative to the deepest
/// directory holding them all (the directory's own name for one trace), made unique.
pub fn partitions(traces: &[Arc<Trace>]) -> Vec<PathBuf> {
    let paths: Vec<&Path> = traces.iter().map(|t| t.path.as_path()).collect();
    let common = paths.iter().skip(1).fold(
        paths
            .first()
            .and_then(|p| p.parent())
            .map(Path::to_path_buf),
        |acc, p| {
            let mut a = acc?;
            while !p.starts_with(&a) {
                a = a.parent()?.to_path_buf();
            }
            Some(a)
        },
    );
    let mut seen = std::collections::HashSet::new();
    traces
        .iter()
        .map(|t| {
            let rel = common
                .as_ref()
                .and_then(|c| t.path.strip_prefix(c).ok())
                .filter(|r| !r.as_os_str().is_empty())
                .unwrap_or(&t.path);
            let host = partition_value(t.hostname().unwrap_or("unknown"));
            let base = partition_value(&rel.to_string_lossy());
            let mut name = base.clone();
            let mut n = 1;
            while !seen.insert((host.clone(), name.clone())) {
                n += 1;
                name = format!("{base}-{n}");
            }
            PathBuf::from(format!("host={host}")).join(format!("trace={name}"))
        })
        .collect()
}

impl ParquetSink {
    /// A sink writing the tables of `traces` (with their `partitions`) as `options` says;
    /// `read` is the read's options (its time map goes into the `trace` table). The output
    /// directory must be absent or empty unless `fresh` is false (a later trace of the same
    /// export).
    pub fn new(
        traces: &[Arc<Trace>],
        partitions: &[PathBuf],
        read: &ReadOptions,
        options: ParquetOptions,
        fresh: bool,
    ) -> Result<Self, Error> {
        let dir = &options.dir;
        if fresh {
            if let Ok(mut entries) = std::fs::read_dir(dir) {
                if entries.next().is_some() {
                    return Err(Error::OutputNotEmpty(dir.clone()));
                }
            }
        }
        ::ctf::private_files::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut slot = Vec::new();
        let mut outs = Vec::new();
        for (t, part) in traces.iter().zip(partitions) {
            if slot.len() <= t.index {
                slot.resize(t.index + 1, usize::MAX);
            }
            slot[t.index] = outs.len();
            outs.push(TraceOut::new(
                t.clone(),
                dir,
                part.clone(),
                &options.tables,
                options.names.clone(),
                options.file_props(),
            )?);
        }
        Ok(ParquetSink {
            options,
            slot,
            outs,
            read: read.clone(),
            last_in_range: None,
            diagnostics: Vec::new(),
        })
    }

    fn out_of(&mut self, trace: usize) -> Option<&mut TraceOut> {
        let i = *self.slot.get(trace)?;
        self.outs.get_mut(i)
    }
}

impl Sink for ParquetSink {
    fn wanted(&self, trace: &Trace) -> Wanted {
        let t = &self.options.tables;
        if t.event {
            return None;
        }
        let model = Some(kernel::needs::wanted_classes(trace, derive::interest(t)));
        if !t.net_packet {
            return model;
        }
        let net = Some(classes_where(trace, |n| {
            kernel::classify_unnumbered(n)
                .kind
                .packet_direction()
                .is_some()
        }));
        union_wanted(model, net)
    }

    fn wants_notices(&self) -> bool {
        true
    }

    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        if let Some(o) = self.out_of(ev.trace().index) {
            o.event(ev, ts);
        }
        Flow::Continue
    }

    fn notice(&mut self, n: &Notice) -> Flow {
        if let Some(o) = self.out_of(n.trace) {
            let e = o.losses.entry(n.stream).or_default();
            match n.kind {
                NoticeKind::DiscardedEvents => e.0 += n.count,
                NoticeKind::DiscardedPackets => e.1 += n.count,
            }
        }
        Flow::Continue
    }

    fn diagnostic(&mut self, d: &Diagnostic) {
        self.diagnostics.push(d.clone());
    }

    fn finish(&mut self, summary: &Summary) {
        self.last_in_range = summary.last_in_range;
    }
}

impl Export for ParquetSink {
    type Report = ParquetReport;

    fn close(self) -> Result<ParquetReport, Error> {
        let ParquetSink {
            options,
            outs,
            read,
            last_in_range,
            diagnostics,
            ..
        } = self;
        let mut report = ParquetReport::default();
        let mut trace_table = None;
        let mut first_error = None;
        let one = outs.len() == 1;
        for mut o in outs {
            // A diagnostic belongs to the trace whose directory holds its file (all of them
            // when it names none).
            let path = o.trace_path().to_path_buf();
            for d in &diagnostics {
                if d.is_warning() {
                    continue;
                }
                if d.file.as_ref().is_none_or(|f| f.starts_with(&path)) {
                    o.errors.push(d.to_string());
                }
            }
            let end = if one {
                last_in_range.or(o.last)
            } else {
                o.last
            };
            let mut tr = TraceReport {
                path: path.clone(),
                partition: o.partition.clone(),
                events: o.events,
                discarded_events: o.losses.values().map(|l| l.0).sum(),
                lost_packets: o.losses.values().map(|l| l.1).sum(),
                errors: o.errors.clone(),
                ..Default::default()
            };
            let losses = o.loss_lines();
            let row = TraceRow {
                trace: o.trace().clone(),
                begin: o.first,
                end,
                events: o.events,
                losses,
            };
            let partition = o.partition.clone();
            match o.close(end, &mut tr) {
                Ok(()) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            }
            let result = (|| {
                let mut out = match trace_table.take() {
                    Some(t) => t,
                    None => TableOut::create(
                        &tables::TRACE,
                        &options.dir.join("trace").join(&partition),
                        options.file_props(),
                    )?,
                };
                trace_row(&mut out, &row, &tr, &read)?;
                let (_, bytes) = out.close()?;
                tr.tables.insert(0, ("trace", 1, bytes));
                Ok::<_, Error>(())
            })();
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
            report.traces.push(tr);
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }
}

/// What the `trace` row of a trace says, besides the report.
struct TraceRow {
    trace: Arc<Trace>,
    begin: Option<i64>,
    end: Option<i64>,
    events: u64,
    losses: String,
}

fn trace_row(
    out: &mut TableOut,
    r: &TraceRow,
    tr: &TraceReport,
    read: &ReadOptions,
) -> Result<(), Error> {
    let t = &r.trace;
    let env = |n: &str| -> Option<String> {
        use ::ctf::ir::EnvValue;
        match t.class.env(n)? {
            EnvValue::Int(v) => Some(v.to_string()),
            EnvValue::Str(s) => Some(s.clone()),
        }
    };
    let tracer = env("tracer_name").map(|n| {
        match (
            env("tracer_major"),
            env("tracer_minor"),
            env("tracer_patchlevel"),
        ) {
            (Some(a), Some(b), Some(c)) => format!("{n} {a}.{b}.{c}"),
            (Some(a), Some(b), None) => format!("{n} {a}.{b}"),
            _ => n,
        }
    });
    // The transform, measured on the trace's own clock from its first event: offset there
    // and rate over one second.
    let (offset, rate) = match (&read.time_map, r.begin) {
        (Some(m), Some(b)) => {
            // `begin` is mapped already; the map is monotonic and near the identity, so the
            // raw time is found by one correction step, good to the nanosecond for rates
            // within a few hundred ppm.
            let guess = b.saturating_sub(m.map(t.index, b).saturating_sub(b));
            let raw = guess.saturating_sub(m.map(t.index, guess).saturating_sub(b));
            let at = m.map(t.index, raw);
            let later = m.map(t.index, raw.saturating_add(1_000_000_000));
            (
                at.saturating_sub(raw),
                later.saturating_sub(at) as f64 / 1e9,
            )
        }
        _ => (0, 1.0),
    };
    row!(
        out,
        tables::SCHEMA_VERSION as i32,
        t.path.to_string_lossy().as_ref(),
        t.hostname(),
        tracer.as_deref(),
        env("domain").as_deref(),
        r.begin,
        r.end,
        r.events as i64,
        tr.cpus,
        tr.discarded_events as i64,
        tr.lost_packets as i64,
        r.losses.as_str(),
        tr.errors.join("\n").as_str(),
        offset,
        rate,
        read.time_map.is_some()
    )
}

/// Exports `traces` read with `read` into `options.dir`, one trace after another (the
/// memory of one trace's export, however many), each with its own read: the same time range
/// and time map. The derived tables come from one ordered read of the events the kernel
/// model needs; meanwhile the `event` table is written a stream at a time on each core
/// (`event/…/part-N.parquet` for stream N). A trace that gives no event is reported and
/// skipped; read errors are in the report and the `trace` table (what could be read is
/// exported).
pub fn export_traces(
    traces: &[Arc<Trace>],
    read: &ReadOptions,
    options: &ParquetOptions,
) -> Result<ParquetReport, Error> {
    let parts = partitions(traces);
    let mut report = ParquetReport::default();
    let mut last_error = None;
    let mut ordered = options.clone();
    ordered.tables.event = false;
    for (i, (t, part)) in traces.iter().zip(&parts).enumerate() {
        let source = FileSource::new(vec![t.clone()], read.clone());
        let mut sink = ParquetSink::new(
            std::slice::from_ref(t),
            std::slice::from_ref(part),
            read,
            ordered.clone(),
            i == 0,
        )?;
        let range = Range::of_read(std::slice::from_ref(t), read);
        if let Some(o) = sink.outs.first_mut() {
            o.first = events::first_time(&range, t);
        }
        let run = |sink: &mut ParquetSink| {
            let mut counted = crate::Counted { sink, events: 0 };
            let summary = source.run(&mut counted);
            (counted.events, summary)
        };
        let ((given, summary), written) = if options.tables.event {
            let dir = options.dir.join(tables::EVENT.name).join(part);
            std::thread::scope(|scope| {
                let (range, dir) = (&range, &dir);
                let workers = scope.spawn(move || {
                    events::write(range, t, dir, &options.names, options.file_props())
                });
                let read = run(&mut sink);
                let written = workers
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
                (read, Some(written))
            })
        } else {
            (run(&mut sink), None)
        };
        let written = written.transpose()?;
        let any = given > 0 || written.as_ref().is_some_and(|w| w.events > 0);
        if let (Some(w), Some(o)) = (&written, sink.outs.first_mut()) {
            o.set_events(w);
        }
        let closed = sink.close();
        if !any {
            let p = t.path.display().to_string();
            last_error = Some(format!("{p}: {}", summary.nothing_read()));
            // The empty files of a trace without events say nothing: removed.
            for def in tables::TABLES {
                let _ = std::fs::remove_dir_all(options.dir.join(def.name).join(part));
            }
            continue;
        }
        report.traces.extend(closed?.traces);
    }
    if report.traces.is_empty() {
        return Err(Error::Unsupported {
            trace: traces.first().map(|t| t.path.clone()).unwrap_or_default(),
            reason: last_error.unwrap_or_else(|| "no trace to export".to_string()),
        });
    }
    Ok(report)
}

impl TraceOut {
    fn loss_lines(&self) -> String {
        let t = self.trace();
        let mut s = String::new();
        for (stream, (ev, pk)) in &self.losses {
            let name = t
                .streams
                .get(*stream)
                .and_then(|s| s.files.first())
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| format!("stream {stream}"));
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&format!("{name}: {ev} discarded events, {pk} lost packets"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_tells_errors_then_losses_per_trace() {
        let report = ParquetReport {
            traces: vec![
                TraceReport {
                    path: "a".into(),
                    events: 10,
                    discarded_events: 3,
                    tables: vec![("event", 10, 400)],
                    ..Default::default()
                },
                TraceReport {
                    path: "b".into(),
                    events: 5,
                    errors: vec!["b/chan_0 at byte 8: truncated".into()],
                    tables: vec![("event", 5, 100)],
                    ..Default::default()
                },
            ],
        };
        assert!(report.damaged());
        assert_eq!(
            report.diagnostics(),
            [
                "warning: a: 3 discarded events, 0 lost packets (in the `trace` table)",
                "error: b/chan_0 at byte 8: truncated",
            ]
        );
        assert_eq!(
            report.summary(Path::new("out"), 0.5),
            "Exported 2 trace(s), 15 events, to Parquet in `out`: 500 bytes (33.3 bytes/event) \
             in 0.50 s (0.00 M events/s)."
        );
        // Losses alone are told, not damage.
        let lossy = ParquetReport {
            traces: report.traces[..1].to_vec(),
        };
        assert!(!lossy.damaged());
    }
}
