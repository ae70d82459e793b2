//! Sessions and streams, shared by every connection.

use std::collections::{BTreeMap, HashMap};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use relay_proto::control::{AddStream, CreateSession, RelayIndex};
use relay_proto::index::{self, PacketIndex};

/// Most packets of a stream whose index or data is waiting for the other half; a peer
/// sending more is not a consumer daemon.
const MAX_WAITING: usize = 1 << 16;

/// Makes `dir` and its missing parents, 0700.
pub(crate) fn make_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

fn create_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// `p` if it is a relative path going nowhere above its start, else why not.
pub(crate) fn relative(p: &str, what: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "{what} {p:?} is not a relative path below the output"
                ))
            }
        }
    }
    Ok(out)
}

/// A file name: no slash, not `.` or `..`, not empty.
fn file_name(n: &str, what: &str) -> Result<(), String> {
    if n.is_empty() || n == "." || n == ".." || n.contains('/') {
        return Err(format!("{what} {n:?} is not a file name"));
    }
    Ok(())
}

/// Everything the relay knows; one lock, held briefly (no I/O but index entries under it).
pub struct Registry {
    output: PathBuf,
    inner: Mutex<Inner>,
}

pub(crate) struct Inner {
    pub(crate) sessions: BTreeMap<u64, Session>,
    pub(crate) streams: BTreeMap<u64, Stream>,
    next_session: u64,
    next_stream: u64,
    next_trace: u64,
    next_viewer: u64,
}

/// A session a consumer created.
pub(crate) struct Session {
    pub(crate) name: String,
    pub(crate) hostname: String,
    pub(crate) live_timer: u32,
    pub(crate) dir: PathBuf,
    /// `dir` below the output directory.
    pub(crate) rel_dir: String,
    /// Its control connection is gone.
    pub(crate) connection_closed: bool,
    /// Streams, in the order they were added.
    pub(crate) streams: Vec<u64>,
    /// Trace ids by stream path.
    pub(crate) traces: HashMap<String, u64>,
    /// Viewers attached.
    pub(crate) viewers: u32,
    pub(crate) chunks: Vec<u64>,
}

/// A stream: a data stream or a metadata stream.
pub(crate) struct Stream {
    pub(crate) session: u64,
    pub(crate) trace_id: u64,
    pub(crate) channel_name: String,
    pub(crate) path_name: String,
    pub(crate) metadata: bool,
    pub(crate) file: Arc<File>,
    pub(crate) file_path: PathBuf,
    index_file: Option<File>,
    /// Bytes of complete packets (or metadata) in the file.
    pub(crate) size: u64,
    /// A data connection is writing a packet.
    pub(crate) writing: bool,
    /// The data connection that sent its first packet: the only one it takes packets from
    /// (a consumer daemon sends a stream's packets on one connection), so that another
    /// connection cannot interleave bytes into it or hold it half-written.
    pub(crate) writer: Option<u64>,
    /// Sequence number of the last packet written (`u64::MAX`: none).
    pub(crate) last_data_seq: u64,
    /// Packets written whose index has not come, by sequence number: their offset and size.
    data_waiting: HashMap<u64, u64>,
    /// Indexes whose packet has not come, by sequence number.
    pub(crate) index_waiting: HashMap<u64, RelayIndex>,
    /// Index entries of the packets written and indexed, in file order.
    pub(crate) indexes: Vec<PacketIndex>,
    /// The last live beacon: no events up to this timestamp; and the CTF stream id.
    pub(crate) beacon: Option<(u64, u64)>,
    /// From close-stream: the sequence number of the last packet.
    close_at: Option<u64>,
    /// Added to the session and announced (streams-sent).
    pub(crate) published: bool,
    /// The last data-pending check found data missing.
    pub(crate) pending: bool,
    /// Packets lost to a producer disconnecting in their middle.
    pub(crate) lost_packets: u64,
}

impl Stream {
    /// Closed by its producer and every packet up to its last one written (or its control
    /// connection gone).
    pub(crate) fn finished(&self, session_closed: bool) -> bool {
        session_closed
            || match self.close_at {
                None => false,
                Some(last) => self.metadata || seq_reached(self.last_data_seq, last),
            }
    }
}

/// Whether sequence number `have` is at or after `want` (`u64::MAX`: before 0), as the
/// relay daemon compares them.
pub(crate) fn seq_reached(have: u64, want: u64) -> bool {
    (have.wrapping_sub(want) as i64) >= 0
}

impl Registry {
    /// An empty registry writing below `output`.
    pub fn new(output: PathBuf) -> Self {
        Registry {
            output,
            inner: Mutex::new(Inner {
                sessions: BTreeMap::new(),
                streams: BTreeMap::new(),
                next_session: 1,
                next_stream: 1,
                next_trace: 1,
                next_viewer: 1,
            }),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A task that panicked while holding the lock left consistent data: every update
        // under it is a few field writes.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sessions known: (id, hostname, name, directory), for tests and logs.
    pub fn sessions(&self) -> Vec<(u64, String, String, PathBuf)> {
        self.lock()
            .sessions
            .iter()
            .map(|(id, s)| (*id, s.hostname.clone(), s.name.clone(), s.dir.clone()))
            .collect()
    }

    /// Creates a session and its directory; its id and directory below the output.
    pub(crate) fn create_session(&self, c: &CreateSession) -> Result<(u64, String), String> {
        file_name(&c.session_name, "session name")?;
        file_name(&c.hostname, "hostname")?;
        let sub = if !c.base_path.is_empty() {
            relative(&c.base_path, "base path")?
        } else if c.session_name_contains_creation_time {
            PathBuf::from(&c.session_name)
        } else {
            let when = i64::try_from(c.creation_time)
                .ok()
                .and_then(|t| jiff::Timestamp::from_second(t).ok())
                .ok_or_else(|| format!("creation time {} is out of range", c.creation_time))?;
            let local = when.to_zoned(jiff::tz::TimeZone::system());
            PathBuf::from(format!(
                "{}-{}",
                c.session_name,
                local.strftime("%Y%m%d-%H%M%S")
            ))
        };
        let mut rel = Path::new(&c.hostname).join(sub);
        let mut inner = self.lock();
        // Two sessions of one name created in the same second: the second gets a suffix
        // rather than the first one's files.
        let base = rel.clone();
        let mut n = 1;
        while inner
            .sessions
            .values()
            .any(|s| s.dir == self.output.join(&rel))
        {
            rel = PathBuf::from(format!("{}-{n}", base.display()));
            n += 1;
        }
        let dir = self.output.join(&rel);
        make_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let id = inner.next_session;
        inner.next_session += 1;
        let rel_dir = rel.to_string_lossy().into_owned();
        inner.sessions.insert(
            id,
            Session {
                name: c.session_name.clone(),
                hostname: c.hostname.clone(),
                live_timer: c.live_timer,
                dir,
                rel_dir: rel_dir.clone(),
                connection_closed: false,
                streams: Vec::new(),
                traces: HashMap::new(),
                viewers: 0,
                chunks: c.current_chunk_id.into_iter().collect(),
            },
        );
        Ok((id, rel_dir))
    }

    /// Adds a stream to a session, creating its files; its handle.
    pub(crate) fn add_stream(&self, session: u64, a: &AddStream) -> Result<u64, String> {
        file_name(&a.channel_name, "channel name")?;
        let rel = relative(&a.pathname, "stream path")?;
        if a.tracefile_size != 0 || a.tracefile_count != 0 {
            crate::log(format_args!(
                "stream {}/{}: trace file rotation (size {}, count {}) is not supported: one file per stream",
                a.pathname, a.channel_name, a.tracefile_size, a.tracefile_count
            ));
        }
        let mut inner = self.lock();
        let Inner {
            sessions,
            streams,
            next_stream,
            next_trace,
            ..
        } = &mut *inner;
        let s = sessions
            .get_mut(&session)
            .ok_or_else(|| format!("no session {session}"))?;
        let dir = s.dir.join(&rel);
        let metadata = a.channel_name == "metadata";
        let file_path = dir.join(&a.channel_name);
        if streams.values().any(|st| st.file_path == file_path) {
            return Err(format!("stream {} added twice", file_path.display()));
        }
        make_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let file = create_file(&file_path).map_err(|e| format!("{}: {e}", file_path.display()))?;
        let index_file = if metadata {
            None
        } else {
            let idir = dir.join("index");
            make_dir(&idir).map_err(|e| format!("{}: {e}", idir.display()))?;
            let p = idir.join(format!("{}.idx", a.channel_name));
            let f = create_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            f.write_all_at(&index::header(), 0)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            Some(f)
        };
        let trace_id = *s.traces.entry(a.pathname.clone()).or_insert_with(|| {
            *next_trace += 1;
            *next_trace - 1
        });
        let handle = *next_stream;
        *next_stream += 1;
        s.streams.push(handle);
        streams.insert(
            handle,
            Stream {
                session,
                trace_id,
                channel_name: a.channel_name.clone(),
                path_name: rel.to_string_lossy().into_owned(),
                metadata,
                file: Arc::new(file),
                file_path,
                index_file,
                size: 0,
                writing: false,
                writer: None,
                last_data_seq: u64::MAX,
                data_waiting: HashMap::new(),
                index_waiting: HashMap::new(),
                indexes: Vec::new(),
                beacon: None,
                close_at: None,
                published: false,
                pending: false,
                lost_packets: 0,
            },
        );
        Ok(handle)
    }

    /// A new viewer connection's id.
    pub(crate) fn new_viewer(&self) -> u64 {
        let mut inner = self.lock();
        inner.next_viewer += 1;
        inner.next_viewer - 1
    }
}

impl Inner {
    /// The stream `handle` of a session created on connection `owner`'s sessions.
    pub(crate) fn owned_stream(
        &mut self,
        handle: u64,
        owned: &[u64],
    ) -> Result<&mut Stream, String> {
        match self.streams.get_mut(&handle) {
            Some(s) if owned.contains(&s.session) => Ok(s),
            Some(_) => Err(format!(
                "stream {handle} belongs to another connection's session"
            )),
            None => Err(format!("no stream {handle}")),
        }
    }

    /// Records a packet's index; written once its packet is.
    pub(crate) fn add_index(&mut self, i: &RelayIndex, owned: &[u64]) -> Result<(), String> {
        let s = self.owned_stream(i.relay_stream_id, owned)?;
        if s.metadata {
            return Err(format!("index for metadata stream {}", i.relay_stream_id));
        }
        if i.packet_size == 0 {
            // A live beacon: the stream had no packet to send up to this time.
            s.beacon = Some((i.timestamp_end, i.stream_id));
            return Ok(());
        }
        // A packet came after the last beacon: the beacon's "nothing until" no longer holds.
        s.beacon = None;
        if let Some(offset) = s.data_waiting.remove(&i.net_seq_num) {
            return write_index(s, i, offset);
        }
        if s.index_waiting.len() >= MAX_WAITING {
            return Err(format!(
                "stream {}: {MAX_WAITING} indexes without their packet",
                i.relay_stream_id
            ));
        }
        s.index_waiting.insert(i.net_seq_num, *i);
        Ok(())
    }

    /// Records that packet `seq` of `s` was written at `offset` (`size` bytes with padding).
    pub(crate) fn packet_written(
        &mut self,
        handle: u64,
        seq: u64,
        offset: u64,
        size: u64,
    ) -> Result<(), String> {
        let s = self
            .streams
            .get_mut(&handle)
            .ok_or_else(|| format!("no stream {handle}"))?;
        s.writing = false;
        s.size = offset + size;
        if s.last_data_seq == u64::MAX || seq_reached(seq, s.last_data_seq) {
            s.last_data_seq = seq;
        }
        if let Some(i) = s.index_waiting.remove(&seq) {
            return write_index(s, &i, offset);
        }
        if s.data_waiting.len() >= MAX_WAITING {
            // Not a protocol error: a session without indexes. Forget the oldest pairing
            // chances rather than grow.
            s.data_waiting.clear();
        }
        s.data_waiting.insert(seq, offset);
        Ok(())
    }

    /// Closes stream `handle` after packet `last`.
    pub(crate) fn close_stream(
        &mut self,
        handle: u64,
        last: u64,
        owned: &[u64],
    ) -> Result<(), String> {
        let s = self.owned_stream(handle, owned)?;
        s.close_at = Some(last);
        Ok(())
    }

    /// The control connection of sessions `owned` is gone.
    pub(crate) fn connection_closed(&mut self, owned: &[u64]) {
        for id in owned {
            if let Some(s) = self.sessions.get_mut(id) {
                s.connection_closed = true;
            }
        }
        self.prune();
    }

    /// Forgets the sessions that ended and that no viewer reads any more (a viewer cannot
    /// attach to an ended session), closing their files: a relay collecting traces for
    /// months must not keep a descriptor per stream it ever received.
    pub(crate) fn prune(&mut self) {
        let gone: Vec<u64> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.connection_closed && s.viewers == 0)
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            if let Some(s) = self.sessions.remove(&id) {
                for h in s.streams {
                    self.streams.remove(&h);
                }
            }
        }
    }
}

fn write_index(s: &mut Stream, i: &RelayIndex, offset: u64) -> Result<(), String> {
    let entry = PacketIndex {
        offset,
        packet_size: i.packet_size,
        content_size: i.content_size,
        timestamp_begin: i.timestamp_begin,
        timestamp_end: i.timestamp_end,
        events_discarded: i.events_discarded,
        stream_id: i.stream_id,
        stream_instance_id: i.stream_instance_id,
        packet_seq_num: i.packet_seq_num,
    };
    if let Some(f) = &s.index_file {
        let mut b = Vec::with_capacity(index::ENTRY_SIZE);
        entry.encode(&mut b);
        let at = (index::HEADER_SIZE + s.indexes.len() * index::ENTRY_SIZE) as u64;
        f.write_all_at(&b, at)
            .map_err(|e| format!("{}: index: {e}", s.file_path.display()))?;
    }
    s.indexes.push(entry);
    Ok(())
}
