//! CTF 1.8 output in LTTng's layout: babeltrace2's `-o ctf` after its trimmer.
//!
//! Each input trace becomes one output trace: a `metadata` file (in LTTng's metadata packets),
//! one data stream file per input stream that has kept events (named like the input's file,
//! e.g. `chan_3`, with the same `cpu_id` and `stream_instance_id`), and LTTng packet indexes
//! (`index/chan_3.idx`). The trace class is the input's — clock, environment, stream classes,
//! event classes and their field types — with LTTng's packet header, packet context and event
//! header, which the writer produces, in place of the input's (the same for LTTng traces).
//!
//! Where the outputs go: one input trace is written in the output directory itself; several
//! are written in subdirectories named by their paths relative to the deepest directory
//! holding them all (`cs/db` and `cs/httpd` give `OUT/db` and `OUT/httpd`), so the output
//! mirrors the input tree. (babeltrace2 names them after the environment instead,
//! `HOST/TRACE_NAME-DATE/DOMAIN`, which loses the input's own layout.)
//!
//! Timestamps: the input's clock values as they are, or, when the read puts the traces on
//! one time line (`--sync`), the mapped times written back in each trace's clock, so that the
//! output is synchronized for any reader.
//!
//! Losses: discarded events reported by an input stream close the output stream's packet and
//! raise its `events_discarded` counter, so readers report the same count between the same
//! events (the loss's time bounds become the output's packet bounds). Discarded packets
//! (sequence-number gaps) are not carried: the output's packets are numbered without gaps.
//!
//! Streams without a kept event are not written; a trace without one is not either. Files
//! are 0600 in 0700 directories ([`::ctf::private_files`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::ctf::ir::{ClockClass, StructType, TraceClass};
use ::ctf::value::Value;
use ::ctf::writer::{lttng, packetize, to_tsdl, StreamParams, StreamWriter};
use ::ctf::{Event, Trace};
use pipeline::{classes_where, Diagnostic, Flow, Notice, NoticeKind, ReadOptions, Sink, Wanted};

use crate::{Error, Export, NameFilter};

/// Data packet size of the output streams when not given.
pub const DEFAULT_PACKET_SIZE: usize = 256 * 1024;

/// Options of a [`CtfSink`].
#[derive(Debug, Clone)]
pub struct CtfOptions {
    /// The output directory: absent or empty.
    pub dir: PathBuf,
    /// The event names kept.
    pub names: NameFilter,
    /// Data packet size in bytes (a multiple of 8, at least 4096).
    pub packet_size: usize,
}

impl CtfOptions {
    /// Every event, written under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CtfOptions {
            dir: dir.into(),
            names: NameFilter::default(),
            packet_size: DEFAULT_PACKET_SIZE,
        }
    }
}

/// What a [`CtfSink`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CtfReport {
    /// The trace directories written, with their event counts, in input order.
    pub traces: Vec<(PathBuf, u64)>,
    /// Events written.
    pub events: u64,
    /// Packets written.
    pub packets: u64,
    /// Bytes of data streams written.
    pub bytes: u64,
    /// The read's diagnostics (errors and warnings), as the sink was given them.
    pub diagnostics: Vec<String>,
}

/// One event class of an input trace, as written.
struct ClassOut {
    keep: bool,
    id: u64,
    common: Option<StructType>,
    context: Option<StructType>,
    payload: StructType,
}

/// One input trace's output.
struct TraceOut {
    input: PathBuf,
    dir: PathBuf,
    /// Whether this sink made `dir` (and may remove it when nothing is written in it).
    made_dir: bool,
    uuid: [u8; 16],
    class: TraceClass,
    /// By (stream class position, event class position) of the input's layout.
    classes: Vec<Vec<ClassOut>>,
    /// Per stream class position: its id and the clock its timestamps count.
    stream_classes: Vec<(u64, Option<ClockClass>)>,
    /// Per input stream: its writer, made at its first kept event.
    streams: Vec<Option<StreamWriter>>,
    /// Per input stream: events discarded before its writer was made.
    pending_discarded: Vec<u64>,
    names: Vec<String>,
    max_cycles: u64,
    events: u64,
}

/// Writes the events it is given as CTF traces (see the [module](self) documentation).
pub struct CtfSink {
    traces: Vec<TraceOut>,
    names: NameFilter,
    packet_size: usize,
    /// Times come from a time map: written back from the read's time line.
    mapped: bool,
    /// Where the first packet of every stream begins (`--begin`), on the read's time line.
    begin: Option<i64>,
    error: Option<Error>,
    diagnostics: Vec<String>,
}

impl CtfSink {
    /// A sink writing `traces` (the source's, in its order) read with `read` under
    /// `options.dir`, which is made if absent and must be empty otherwise. Each trace's
    /// directory and metadata are written here, so that an unwritable output fails before the
    /// read.
    pub fn new(
        traces: &[Arc<Trace>],
        read: &ReadOptions,
        options: CtfOptions,
    ) -> Result<Self, Error> {
        let dir = &options.dir;
        match std::fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(Error::OutputNotEmpty(dir.clone()));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ::ctf::private_files::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
        let rel = relative_dirs(traces);
        let mut outs = Vec::with_capacity(traces.len());
        for (t, rel) in traces.iter().zip(rel) {
            let out = if rel.as_os_str().is_empty() {
                dir.clone()
            } else {
                dir.join(rel)
            };
            outs.push(TraceOut::create(t, out, &options.names)?);
        }
        Ok(CtfSink {
            traces: outs,
            names: options.names,
            packet_size: options.packet_size,
            mapped: read.time_map.is_some(),
            begin: read.begin,
            error: None,
            diagnostics: Vec::new(),
        })
    }

    fn write(&mut self, ev: &Event<'_>, ts: i64) -> Result<(), Error> {
        let trace = ev.trace().index;
        let Some(out) = self.traces.get_mut(trace) else {
            return Ok(());
        };
        let (sc, ec) = ev.class_index();
        if !out
            .classes
            .get(sc)
            .and_then(|c| c.get(ec))
            .is_some_and(|c| c.keep)
        {
            return Ok(());
        }
        let stream = ev.stream_index();
        let cycles = if self.mapped {
            let clock = out.stream_classes.get(sc).and_then(|c| c.1.as_ref());
            match clock {
                Some(c) => c.ns_to_cycles(ts as i128),
                None => ev.cycles(),
            }
        } else {
            ev.cycles()
        };
        if out.streams.get(stream).is_some_and(|s| s.is_none()) {
            let w = out.open_stream(ev, sc, self.packet_size, self.begin)?;
            out.streams[stream] = Some(w);
        }
        let (Some(class), Some(Some(w))) = (out.classes[sc].get(ec), out.streams.get_mut(stream))
        else {
            return Ok(());
        };
        let common = ev.common_context().map(|v| members(v.to_value()));
        let context = ev.specific_context().map(|v| members(v.to_value()));
        let payload = ev
            .payload()
            .map(|v| members(v.to_value()))
            .unwrap_or_default();
        let mut parts: Vec<(&StructType, &[Value])> = Vec::with_capacity(3);
        if let Some(c) = &class.common {
            parts.push((c, common.as_deref().unwrap_or(&[])));
        }
        if let Some(c) = &class.context {
            parts.push((c, context.as_deref().unwrap_or(&[])));
        }
        parts.push((&class.payload, &payload));
        w.write_event(class.id, cycles, &parts)?;
        out.max_cycles = out.max_cycles.max(cycles);
        out.events += 1;
        Ok(())
    }

    fn discarded(&mut self, n: &Notice) -> Result<(), Error> {
        let Some(out) = self.traces.get_mut(n.trace) else {
            return Ok(());
        };
        match out.streams.get_mut(n.stream) {
            Some(Some(w)) => {
                // The loss falls between the packet before it and the one after, as in the
                // input: close the open packet with the count so far.
                w.flush()?;
                w.add_discarded(n.count);
            }
            Some(None) => out.pending_discarded[n.stream] += n.count,
            None => {}
        }
        Ok(())
    }
}

/// The members of a structure value.
fn members(v: Value) -> Vec<Value> {
    match v {
        Value::Struct(m) => m,
        other => vec![other],
    }
}

/// Per trace, its output directory relative to the output: empty for a single trace, else
/// its path relative to the deepest directory holding every trace.
fn relative_dirs(traces: &[Arc<Trace>]) -> Vec<PathBuf> {
    if traces.len() <= 1 {
        return vec![PathBuf::new(); traces.len()];
    }
    let paths: Vec<PathBuf> = traces
        .iter()
        .map(|t| std::fs::canonicalize(&t.path).unwrap_or_else(|_| t.path.clone()))
        .collect();
    let mut common: Vec<_> = paths[0].components().collect();
    for p in &paths[1..] {
        let n = common
            .iter()
            .zip(p.components())
            .take_while(|(a, b)| **a == *b)
            .count();
        common.truncate(n);
    }
    let mut seen = std::collections::HashSet::new();
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let rel: PathBuf = p.components().skip(common.len()).collect();
            // The same trace given twice, or a trace holding another: number them apart.
            let rel = if rel.as_os_str().is_empty() || !seen.insert(rel.clone()) {
                PathBuf::from(format!("trace{i}"))
            } else {
                rel
            };
            seen.insert(rel.clone());
            rel
        })
        .collect()
}

/// A UUID for a trace whose metadata has none: made from its path, the same on every run.
fn uuid_of(path: &Path) -> [u8; 16] {
    use std::hash::{Hash, Hasher};
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (i, path).hash(&mut h);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    out[6] = (out[6] & 0x0f) | 0x40;
    out[8] = (out[8] & 0x3f) | 0x80;
    out
}

impl TraceOut {
    /// Checks that `trace` can be written, makes its directory and writes its metadata.
    fn create(trace: &Trace, dir: PathBuf, names: &NameFilter) -> Result<Self, Error> {
        let input = trace.path.clone();
        let unsupported = |reason: String| Error::Unsupported {
            trace: input.clone(),
            reason,
        };
        let mut class = (*trace.class).clone();
        let uuid = class.uuid.unwrap_or_else(|| uuid_of(&input));
        class.uuid = Some(uuid);
        class.version = (1, 8);
        let bo = class.byte_order;
        class.packet_header = Some(lttng::packet_header(bo));
        let clocks = class.clocks.clone();
        for (id, sc) in class.streams.iter_mut() {
            // The writer stamps every event: a stream class needs a clock.
            let clock = sc
                .default_clock
                .and_then(|c| clocks.get(c))
                .map(|c| c.name.clone())
                .ok_or_else(|| unsupported(format!("stream class {id} has no clock")))?;
            let kind = lttng::header_kind_of(&trace.class, *id);
            sc.packet_context = Some(lttng::packet_context(bo, &clock));
            sc.event_header = Some(lttng::event_header(kind, bo, &clock));
        }
        let layout = &trace.layout;
        let mut classes = Vec::with_capacity(layout.streams.len());
        let mut stream_classes = Vec::with_capacity(layout.streams.len());
        for s in 0..layout.streams.len() {
            let sc_id = layout.streams.id_at(s);
            let sc = class.streams.get(&sc_id).ok_or_else(|| {
                unsupported(format!("stream class {sc_id} is not in the metadata"))
            })?;
            stream_classes.push((sc_id, sc.default_clock.and_then(|c| clocks.get(c)).cloned()));
            let events = &layout.streams.at(s).events;
            let mut row = Vec::with_capacity(events.len());
            for e in 0..events.len() {
                let id = events.id_at(e);
                let ec = sc.events.get(&id).ok_or_else(|| {
                    unsupported(format!("event class {id} is not in the metadata"))
                })?;
                row.push(ClassOut {
                    keep: names.keeps(&ec.name),
                    id,
                    common: sc.event_common_context.clone(),
                    context: ec.context.clone(),
                    payload: ec.payload.clone().unwrap_or_default(),
                });
            }
            classes.push(row);
        }
        let text = to_tsdl(&class).map_err(|e| unsupported(format!("metadata: {e}")))?;
        let made_dir = !dir.exists();
        ::ctf::private_files::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let meta = dir.join("metadata");
        ::ctf::private_files::write(&meta, &packetize(&text, &uuid, bo, 4096))
            .map_err(|e| Error::io(&meta, e))?;
        let nstreams = trace.streams.len();
        let mut used = std::collections::HashSet::new();
        let names = trace
            .streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let name = s
                    .files
                    .first()
                    .and_then(|f| f.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .filter(|n| n != "metadata" && n != "index")
                    .unwrap_or_else(|| format!("stream_{i}"));
                if used.insert(name.clone()) {
                    name
                } else {
                    format!("stream_{i}")
                }
            })
            .collect();
        Ok(TraceOut {
            input,
            dir,
            made_dir,
            uuid,
            class,
            classes,
            stream_classes,
            streams: (0..nstreams).map(|_| None).collect(),
            pending_discarded: vec![0; nstreams],
            names,
            max_cycles: 0,
            events: 0,
        })
    }

    /// The writer of `ev`'s stream: the same stream class, instance id and `cpu_id`.
    fn open_stream(
        &mut self,
        ev: &Event<'_>,
        sc: usize,
        packet_size: usize,
        begin: Option<i64>,
    ) -> Result<StreamWriter, Error> {
        let stream = ev.stream_index();
        let sc_id = self.stream_classes.get(sc).map_or(0, |c| c.0);
        let stream_class_id = u32::try_from(sc_id).map_err(|_| Error::Unsupported {
            trace: self.input.clone(),
            reason: format!("stream class id {sc_id} does not fit LTTng's packet header"),
        })?;
        let instance_id = ev
            .packet_header()
            .and_then(|h| h.field("stream_instance_id"))
            .and_then(|v| v.as_u64())
            .unwrap_or(stream as u64);
        let cpu_id = ev
            .packet_context()
            .and_then(|c| c.field("cpu_id"))
            .and_then(|v| v.as_u64())
            .map_or(stream as u32, |c| c as u32);
        let path = self.dir.join(&self.names[stream]);
        let mut w = StreamWriter::create(
            &path,
            StreamParams {
                uuid: self.uuid,
                byte_order: self.class.byte_order,
                stream_class_id,
                instance_id,
                cpu_id,
                packet_size,
                header: lttng::header_kind_of(&self.class, sc_id),
            },
        )?;
        // With --begin, every stream's first packet begins there (the writer takes the first
        // event's time when it is earlier), as babeltrace2's trimmer bounds packets.
        if let (Some(b), Some(Some(clock))) = (begin, self.stream_classes.get(sc).map(|c| &c.1)) {
            w.set_session_start(clock.ns_to_cycles(b as i128));
        }
        w.add_discarded(std::mem::take(&mut self.pending_discarded[stream]));
        Ok(w)
    }

    /// Closes the streams (each ends at the trace's last event, so they cover the same time);
    /// a trace without events is removed.
    fn finish(self, report: &mut CtfReport) -> Result<(), Error> {
        let mut any = false;
        for w in self.streams.into_iter().flatten() {
            let st = w.finish(self.max_cycles)?;
            report.packets += st.packets;
            report.bytes += st.bytes;
            any = true;
        }
        if any {
            report.traces.push((self.dir, self.events));
            return Ok(());
        }
        let meta = self.dir.join("metadata");
        std::fs::remove_file(&meta).map_err(|e| Error::io(&meta, e))?;
        if self.made_dir {
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(())
    }
}

impl Sink for CtfSink {
    fn wanted(&self, trace: &Trace) -> Wanted {
        if self.names.keeps_all() {
            return None;
        }
        Some(classes_where(trace, |name| self.names.keeps(name)))
    }

    fn wants_notices(&self) -> bool {
        true
    }

    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        match self.write(ev, ts) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }

    fn notice(&mut self, notice: &Notice) -> Flow {
        if notice.kind != NoticeKind::DiscardedEvents {
            return Flow::Continue;
        }
        match self.discarded(notice) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }

    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        self.diagnostics.push(diagnostic.to_string());
    }
}

impl Export for CtfSink {
    type Report = CtfReport;

    fn close(self) -> Result<CtfReport, Error> {
        let mut report = CtfReport {
            diagnostics: self.diagnostics,
            ..Default::default()
        };
        let mut first_error = self.error;
        for t in self.traces {
            report.events += t.events;
            if let Err(e) = t.finish(&mut report) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None if report.events == 0 => Err(Error::NothingKept),
            None => Ok(report),
        }
    }
}
