//! Writing CTF 1.8 traces laid out as LTTng writes them.
//!
//! - [`tsdl`]: a [`TraceClass`] to TSDL text, plain or in metadata packets.
//! - [`encode`]: bit-level encoding of [`Value`]s against their field types.
//! - [`stream`]: one data stream file of fixed-size packets, in constant memory, and its
//!   LTTng packet index.
//! - [`lttng`]: the LTTng packet header, packet context and event headers.
//! - [`TraceWriter`]: a trace directory with one stream per CPU (`chan_0`, `chan_1`…) and
//!   their indexes (`index/chan_0.idx`…), written under a temporary name and renamed by
//!   [`TraceWriter::finish`].

// `is_multiple_of` needs Rust 1.87; the workspace supports 1.80.

mod chunked;
pub mod encode;
pub mod lttng;
pub mod stream;
pub mod tsdl;

pub use encode::{BitBuf, EncodeError};
pub use lttng::EventHeaderKind;
pub use stream::{StreamParams, StreamStats, StreamWriter};
pub use tsdl::{packetize, to_tsdl, TsdlError};

use crate::ir::{StructType, TraceClass};
use crate::value::Value;
use std::path::{Path, PathBuf};

/// Errors of the writer. Each names the file or directory involved.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An event's values do not fit its class's payload.
    #[error("{}: event class {event_id}: {message}", path.display())]
    Encode {
        /// The stream file.
        path: PathBuf,
        /// The event class.
        event_id: u64,
        /// What does not fit.
        message: String,
    },
    /// Events must come in time order within a stream.
    #[error("{}: timestamp {ts} is before the previous one ({last})", path.display())]
    Timestamp {
        /// The stream file.
        path: PathBuf,
        /// The previous event's timestamp.
        last: u64,
        /// The rejected one.
        ts: u64,
    },
    /// The trace class cannot be written as TSDL.
    #[error("metadata: {0}")]
    Tsdl(#[from] TsdlError),
    /// A trace class or arguments the writer cannot use (no stream class 0, no UUID, no CPU…).
    #[error("{0}")]
    Invalid(String),
}

impl WriteError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        WriteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where a [`TraceWriter`]'s closed packets also go, besides its stream files: a relay the
/// trace is streamed to as it is recorded (`tracekit record --url`).
pub trait PacketTap: Send {
    /// Where the packets go, for messages (`relay 127.0.0.1:5342`).
    fn name(&self) -> &str;
    /// The trace's metadata, once, before any packet.
    fn metadata(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// A closed packet of stream `stream` (its position among the trace's streams), and its
    /// index entry.
    fn packet(
        &mut self,
        stream: usize,
        bytes: &[u8],
        entry: &crate::index::PacketEntry,
    ) -> std::io::Result<()>;
    /// Stream `stream` holds nothing new up to `entry.ts_end` (a live timer's beacon: its
    /// entry describes no packet, its sequence number is the next packet's).
    fn quiet(&mut self, stream: usize, entry: &crate::index::PacketEntry) -> std::io::Result<()>;
    /// The trace is complete: `last_seq` is, per stream, the sequence number of its last
    /// packet (None: it has none).
    fn finish(&mut self, last_seq: &[Option<u64>]) -> std::io::Result<()>;
}

/// A [`PacketTap`] shared by a trace's streams.
pub type SharedTap = std::sync::Arc<std::sync::Mutex<dyn PacketTap>>;

/// How the metadata file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetadataMode {
    /// In 4 KiB metadata packets, as LTTng does.
    #[default]
    Packetized,
    /// Plain TSDL text.
    Text,
}

/// Options of a [`TraceWriter`].
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Data packet size in bytes.
    pub packet_size: usize,
    /// How the metadata file is written.
    pub metadata: MetadataMode,
    /// Stream file name prefix; files are `{prefix}_{cpu}`.
    pub stream_prefix: String,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            packet_size: 256 * 1024,
            metadata: MetadataMode::Packetized,
            stream_prefix: "chan".into(),
        }
    }
}

/// Totals of a finished trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// The trace directory.
    pub dir: PathBuf,
    /// Events written.
    pub events: u64,
    /// Packets written.
    pub packets: u64,
    /// Bytes of stream data written.
    pub bytes: u64,
    /// Events per CPU stream.
    pub per_cpu: Vec<u64>,
}

/// Writes a trace directory: a metadata file, one data stream per CPU and the streams' packet
/// indexes (`index/NAME.idx`).
///
/// The trace class must use the LTTng skeleton ([`lttng::skeleton`]) with stream class 0.
/// Everything is written in `.NAME.partial` next to the final directory, which is renamed on
/// [`finish`](TraceWriter::finish); a failed or abandoned trace never looks complete.
pub struct TraceWriter {
    dir: PathBuf,
    tmp: PathBuf,
    /// Per event class id: (common context, specific context, payload) structures.
    classes: Vec<Option<EventLayout>>,
    streams: Vec<StreamWriter>,
    max_ts: u64,
    tap: Option<SharedTap>,
}

/// Where a [`TraceWriter`] writes the trace of directory `dir` until it is complete:
/// `.NAME.partial` beside it.
pub fn partial_dir(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(format!(".{name}.partial"))
}

#[derive(Clone)]
struct EventLayout {
    common: Option<StructType>,
    context: Option<StructType>,
    payload: StructType,
}

impl TraceWriter {
    /// Creates the (temporary) trace directory, the metadata, `ncpus` stream files and their
    /// index files.
    pub fn create(
        dir: &Path,
        class: &TraceClass,
        ncpus: u32,
        opts: &WriterOptions,
    ) -> Result<Self, WriteError> {
        let sc = class
            .streams
            .get(&0)
            .ok_or_else(|| WriteError::Invalid("the trace class has no stream class 0".into()))?;
        let uuid = class
            .uuid
            .ok_or_else(|| WriteError::Invalid("the trace class has no UUID".into()))?;
        if ncpus == 0 {
            return Err(WriteError::Invalid("a trace needs at least one CPU".into()));
        }
        if dir.exists() {
            return Err(WriteError::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "already exists"),
            ));
        }
        if dir.file_name().is_none() {
            return Err(WriteError::Invalid(format!(
                "{}: not a directory name",
                dir.display()
            )));
        }
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(p) = parent {
            crate::private_files::create_dir_all(p).map_err(|e| WriteError::io(p, e))?;
        }
        let tmp = partial_dir(dir);
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| WriteError::io(&tmp, e))?;
        }
        crate::private_files::create_dir(&tmp).map_err(|e| WriteError::io(&tmp, e))?;

        let text = to_tsdl(class)?;
        let meta = match opts.metadata {
            MetadataMode::Packetized => packetize(&text, &uuid, class.byte_order, 4096),
            MetadataMode::Text => text.into_bytes(),
        };
        let mpath = tmp.join("metadata");
        crate::private_files::write(&mpath, &meta).map_err(|e| WriteError::io(&mpath, e))?;

        let max_id = sc.events.keys().next_back().copied().unwrap_or(0);
        if max_id > 1 << 20 {
            return Err(WriteError::Invalid(format!(
                "event class id {max_id} is too large"
            )));
        }
        let mut classes = vec![None; max_id as usize + 1];
        for (id, ev) in &sc.events {
            classes[*id as usize] = Some(EventLayout {
                common: sc.event_common_context.clone(),
                context: ev.context.clone(),
                payload: ev.payload.clone().unwrap_or_default(),
            });
        }
        let header = lttng::header_kind_of(class, 0);
        let mut streams = Vec::with_capacity(ncpus as usize);
        for cpu in 0..ncpus {
            let path = tmp.join(format!("{}_{cpu}", opts.stream_prefix));
            streams.push(StreamWriter::create(
                &path,
                StreamParams {
                    uuid,
                    byte_order: class.byte_order,
                    stream_class_id: 0,
                    instance_id: cpu as u64,
                    cpu_id: cpu,
                    packet_size: opts.packet_size,
                    header,
                },
            )?);
        }
        Ok(TraceWriter {
            dir: dir.to_path_buf(),
            tmp,
            classes,
            streams,
            max_ts: 0,
            tap: None,
        })
    }

    /// Number of CPU streams.
    pub fn cpus(&self) -> u32 {
        self.streams.len() as u32
    }

    /// Counts `n` events lost on `cpu` before they reached the writer; the cumulative count goes
    /// into the `events_discarded` field of that stream's packets closed from now on.
    pub fn add_discarded(&mut self, cpu: u32, n: u64) -> Result<(), WriteError> {
        self.streams
            .get_mut(cpu as usize)
            .ok_or_else(|| WriteError::Invalid(format!("no stream for CPU {cpu}")))?
            .add_discarded(n);
        Ok(())
    }

    /// Events counted as discarded so far, all streams.
    pub fn discarded(&self) -> u64 {
        self.streams.iter().map(|s| s.discarded()).sum()
    }

    /// Writes an event without contexts. Timestamps are clock cycles, non-decreasing per CPU.
    #[inline]
    pub fn write_event(
        &mut self,
        cpu: u32,
        class_id: u64,
        ts: u64,
        payload: &[Value],
    ) -> Result<(), WriteError> {
        self.write_event_with_context(cpu, class_id, ts, &[], &[], payload)
    }

    /// Writes an event with its stream-common and class-specific context values (empty slices
    /// when the trace class has none).
    pub fn write_event_with_context(
        &mut self,
        cpu: u32,
        class_id: u64,
        ts: u64,
        common: &[Value],
        context: &[Value],
        payload: &[Value],
    ) -> Result<(), WriteError> {
        let layout = self
            .classes
            .get(class_id as usize)
            .and_then(|c| c.as_ref())
            .ok_or_else(|| WriteError::Invalid(format!("no event class with id {class_id}")))?;
        let stream = self
            .streams
            .get_mut(cpu as usize)
            .ok_or_else(|| WriteError::Invalid(format!("no stream for CPU {cpu}")))?;
        let mut parts: [(&StructType, &[Value]); 3] = [(&layout.payload, payload); 3];
        let mut n = 0;
        if let Some(c) = &layout.common {
            parts[n] = (c, common);
            n += 1;
        }
        if let Some(c) = &layout.context {
            parts[n] = (c, context);
            n += 1;
        }
        parts[n] = (&layout.payload, payload);
        n += 1;
        stream.write_event(class_id, ts, &parts[..n])?;
        self.max_ts = self.max_ts.max(ts);
        Ok(())
    }

    /// Declares when the tracing session started (before any event is written): every
    /// stream's first packet then begins there, and a stream without events spans the whole
    /// session, as in LTTng traces (stream-intersecting readers such as lttng-analyses need it).
    pub fn set_session_start(&mut self, ts: u64) {
        for s in &mut self.streams {
            s.set_session_start(ts);
        }
    }

    /// Writes out every stream's open packet (see [`StreamWriter::flush`]): called
    /// periodically by a recorder, it bounds what a crash can lose.
    pub fn flush(&mut self) -> Result<(), WriteError> {
        for s in &mut self.streams {
            s.flush()?;
        }
        Ok(())
    }

    /// Sends the trace to `tap` too: its metadata now, then each packet as it is closed.
    pub fn set_tap(&mut self, tap: SharedTap) -> Result<(), WriteError> {
        let mpath = self.tmp.join("metadata");
        let meta = std::fs::read(&mpath).map_err(|e| WriteError::io(&mpath, e))?;
        {
            let mut t = tap.lock().unwrap_or_else(|p| p.into_inner());
            t.metadata(&meta)
                .map_err(|e| WriteError::io(Path::new(t.name()), e))?;
        }
        for (i, s) in self.streams.iter_mut().enumerate() {
            s.set_tap(i, tap.clone());
        }
        self.tap = Some(tap);
        Ok(())
    }

    /// The live timer's work on every stream ([`StreamWriter::live_tick`]): packets with
    /// events are closed and sent, the other streams said quiet up to `now` (clock cycles).
    pub fn live_tick(&mut self, now: u64) -> Result<(), WriteError> {
        for s in &mut self.streams {
            s.live_tick(now)?;
        }
        Ok(())
    }

    /// Closes every stream, then renames the temporary directory to the final one.
    pub fn finish(self) -> Result<TraceStats, WriteError> {
        let mut stats = TraceStats {
            dir: self.dir.clone(),
            ..Default::default()
        };
        let mut last_seq = Vec::with_capacity(self.streams.len());
        for s in self.streams {
            let st = s.finish(self.max_ts)?;
            last_seq.push(st.packets.checked_sub(1));
            stats.events += st.events;
            stats.packets += st.packets;
            stats.bytes += st.bytes;
            stats.per_cpu.push(st.events);
        }
        std::fs::rename(&self.tmp, &self.dir).map_err(|e| WriteError::io(&self.dir, e))?;
        if let Some(tap) = self.tap {
            let mut t = tap.lock().unwrap_or_else(|p| p.into_inner());
            t.finish(&last_seq)
                .map_err(|e| WriteError::io(Path::new(t.name()), e))?;
        }
        Ok(stats)
    }
}
