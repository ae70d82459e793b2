//! Sessions and streams, shared by every connection.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::Component::Normal;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use relay_proto::control::{close_command, AddStream, CreateSession, RelayIndex, RotationPosition};
use relay_proto::index::{self, PacketIndex};

use crate::chunk::{Chunk, TMP_NEW, TMP_OLD};

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

/// Everything the relay knows; one lock, held briefly: the I/O under it is index entries,
/// creating a stream's files, and a rotation's renames (and a clear's deletion, rare).
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
    /// Trace chunks not completed yet, by id.
    pub(crate) chunks: BTreeMap<u64, Chunk>,
    /// The chunk new streams and rotated streams write to.
    current_chunk: Option<u64>,
    /// The chunk a CREATE_TRACE_CHUNK replaced, until its CLOSE_TRACE_CHUNK.
    pending_closure: Option<u64>,
    /// A chunk was moved to `archives/`: later chunks are named directories too.
    has_rotated: bool,
    snapshot: bool,
}

/// A stream: a data stream or a metadata stream.
pub(crate) struct Stream {
    pub(crate) session: u64,
    pub(crate) trace_id: u64,
    pub(crate) channel_name: String,
    pub(crate) path_name: String,
    pub(crate) metadata: bool,
    /// Its path below a chunk's directory (`ust/uid/0/64-bit`).
    rel: PathBuf,
    /// The trace chunk it writes to (none after a rotation to no chunk).
    chunk: Option<u64>,
    /// A rotation to another chunk asked for and not done yet.
    rotation: Option<Rotation>,
    /// The last index received: its packet's CTF sequence number and network sequence number.
    last_index: Option<(u64, u64)>,
    /// The file written now, and its number: 0, then one more at each rotation.
    pub(crate) file: Arc<File>,
    pub(crate) seg: u32,
    /// The files of earlier rotations with their sizes, by number, for live viewers still
    /// reading them (kept for live sessions only).
    pub(crate) old_segs: Vec<Option<(Arc<File>, u64)>>,
    pub(crate) file_path: PathBuf,
    index_file: Option<File>,
    /// Entries in `index_file`.
    index_entries: usize,
    /// The index files of the last few files before the current one, with their file
    /// number and entries: a packet's index may come after the next packet started a new
    /// file.
    old_index_files: Vec<(u32, File, usize)>,
    /// Trace-file rotation (`--tracefile-size`, `--tracefile-count`): the most bytes of a
    /// file (0: one file) and the most files kept (0: all).
    tracefile_size: u64,
    tracefile_count: u64,
    /// The trace file written now (`CHANNEL_K`), and which stream file number (`seg`) holds
    /// each trace file of the current chunk.
    tracefile: u64,
    tracefile_segs: HashMap<u64, u32>,
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
    /// Packets written whose index has not come, by sequence number: their file's number and
    /// offset.
    data_waiting: HashMap<u64, (u32, u64)>,
    /// Indexes whose packet has not come, by sequence number.
    pub(crate) index_waiting: HashMap<u64, RelayIndex>,
    /// Index entries of the packets written and indexed, in file order, and each one's file
    /// number.
    pub(crate) indexes: Vec<PacketIndex>,
    pub(crate) index_segs: Vec<u32>,
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
    /// Whether the file of number `seg` is gone (deleted by trace-file rotation, or not kept
    /// for viewers): its packets cannot be served.
    pub(crate) fn seg_gone(&self, seg: u32) -> bool {
        seg != self.seg && self.old_segs.get(seg as usize).is_none_or(|s| s.is_none())
    }

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

/// A stream's move to another trace chunk (ROTATE_STREAMS).
struct Rotation {
    /// The chunk it moves to.
    to: Option<u64>,
    /// The CTF sequence number of the first packet to go to the new chunk.
    at_packet_seq: u64,
    /// Which packets stay in the old chunk, by network sequence number, once known.
    boundary: Boundary,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Boundary {
    /// Not known yet: the index of the last packet of the old chunk has not come.
    Unknown,
    /// Every packet from now on goes to the new chunk.
    AllNew,
    /// Packets up to this network sequence number stay in the old chunk.
    After(u64),
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
                // A chunk created earlier (on another connection of the session daemon) is
                // the session's first; its files go into the session directory.
                chunks: c
                    .current_chunk_id
                    .map(|id| (id, Chunk::new(id, c.creation_time, String::new())))
                    .into_iter()
                    .collect(),
                current_chunk: c.current_chunk_id,
                pending_closure: None,
                has_rotated: false,
                snapshot: c.snapshot,
            },
        );
        Ok((id, rel_dir))
    }

    /// Adds a stream to a session, creating its files; its handle.
    pub(crate) fn add_stream(&self, session: u64, a: &AddStream) -> Result<u64, String> {
        file_name(&a.channel_name, "channel name")?;
        let rel = relative(&a.pathname, "stream path")?;
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
        let metadata = a.channel_name == "metadata";
        // Metadata is never split: lttng-relayd splits data streams only.
        let tracefile_size = if metadata { 0 } else { a.tracefile_size };
        if streams
            .values()
            .any(|st| st.session == session && st.rel == rel && st.channel_name == a.channel_name)
        {
            return Err(format!(
                "stream {}/{} added twice",
                rel.display(),
                a.channel_name
            ));
        }
        // A peer that creates no chunk (or names one it did not create) writes to the
        // session directory, as a relay without chunks would.
        let chunk = s
            .chunks
            .entry(a.trace_chunk_id)
            .or_insert_with(|| Chunk::new(a.trace_chunk_id, 0, String::new()));
        let (file_path, file, index_file) = stream_files(
            &s.dir,
            chunk,
            &rel,
            &data_file_name(&a.channel_name, tracefile_size, 0),
            metadata,
        )?;
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
                rel,
                chunk: Some(a.trace_chunk_id),
                rotation: None,
                last_index: None,
                file: Arc::new(file),
                seg: 0,
                old_segs: Vec::new(),
                file_path,
                index_file,
                index_entries: 0,
                old_index_files: Vec::new(),
                tracefile_size,
                tracefile_count: a.tracefile_count,
                tracefile: 0,
                tracefile_segs: HashMap::from([(0, 0)]),
                size: 0,
                writing: false,
                writer: None,
                last_data_seq: u64::MAX,
                data_waiting: HashMap::new(),
                index_waiting: HashMap::new(),
                indexes: Vec::new(),
                index_segs: Vec::new(),
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
        s.last_index = Some((i.packet_seq_num, i.net_seq_num));
        if let Some(r) = &mut s.rotation {
            if r.boundary == Boundary::Unknown
                && i.packet_seq_num.wrapping_add(1) >= r.at_packet_seq
            {
                r.boundary = boundary_from(i.packet_seq_num, i.net_seq_num, r.at_packet_seq);
            }
        }
        if let Some((seg, offset)) = s.data_waiting.remove(&i.net_seq_num) {
            write_index(s, i, seg, offset)?;
        } else {
            if s.index_waiting.len() >= MAX_WAITING {
                return Err(format!(
                    "stream {}: {MAX_WAITING} indexes without their packet",
                    i.relay_stream_id
                ));
            }
            s.index_waiting.insert(i.net_seq_num, *i);
        }
        self.try_rotate(i.relay_stream_id)
    }

    /// Where packet `seq` of stream `handle`, about to be written (`size` bytes with
    /// padding), goes: a pending rotation whose first packet it is happens now, and a packet
    /// that would take the trace file past its size limit starts the next one.
    pub(crate) fn packet_starts(&mut self, handle: u64, seq: u64, size: u64) -> Result<(), String> {
        let Some(s) = self.streams.get(&handle) else {
            return Ok(());
        };
        let new = match s.rotation.as_ref().map(|r| r.boundary) {
            // The index of the packet before it came with its reply before the consumer sent
            // this packet: still unknown, the last packet of the old chunk is still to come.
            None | Some(Boundary::Unknown) => false,
            Some(Boundary::AllNew) => true,
            Some(Boundary::After(b)) => !seq_reached(b, seq),
        };
        if new {
            self.rotate_now(handle)?;
        }
        let Some(s) = self.streams.get_mut(&handle) else {
            return Ok(());
        };
        // As lttng-relayd, a file holds at least one packet, even one larger than the limit.
        if s.tracefile_size > 0
            && s.chunk.is_some()
            && s.size > 0
            && s.size.saturating_add(size) > s.tracefile_size
        {
            let live = self
                .sessions
                .get(&s.session)
                .is_some_and(|se| se.live_timer != 0);
            next_tracefile(s, live)?;
        }
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
            let seg = s.seg;
            write_index(s, &i, seg, offset)?;
        } else {
            if s.data_waiting.len() >= MAX_WAITING {
                // Not a protocol error: a session without indexes. Forget the oldest pairing
                // chances rather than grow.
                s.data_waiting.clear();
            }
            let seg = s.seg;
            s.data_waiting.insert(seq, (seg, offset));
        }
        self.try_rotate(handle)?;
        let session = self.streams.get(&handle).map(|s| s.session);
        if let Some(id) = session {
            self.settle(id);
        }
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
        let session = s.session;
        self.settle(session);
        Ok(())
    }

    /// CREATE_TRACE_CHUNK: the session's next chunk; the current one is set aside until it
    /// is closed.
    pub(crate) fn create_chunk(
        &mut self,
        session: u64,
        id: u64,
        creation: u64,
        override_name: Option<String>,
    ) -> Result<(), String> {
        let s = self
            .sessions
            .get_mut(&session)
            .ok_or_else(|| format!("no session {session}"))?;
        if s.chunks.contains_key(&id) {
            if s.current_chunk == Some(id) {
                // Announced at session creation already.
                return Ok(());
            }
            return Err(format!("trace chunk {id} created twice"));
        }
        if let Some(n) = &override_name {
            if n.is_empty() || n == "." || n == ".." || n.contains('/') {
                return Err(format!("trace chunk name {n:?} is not a file name"));
            }
        }
        if s.pending_closure.is_some() {
            return Err(format!(
                "trace chunk {id} created before the previous one was closed"
            ));
        }
        let dir = s.dir.clone();
        if let Some(cur) = s.current_chunk.and_then(|c| s.chunks.get_mut(&c)) {
            if cur.override_name.is_none() {
                cur.rename(&dir, TMP_OLD)
                    .map_err(|e| format!("{}: set aside: {e}", dir.display()))?;
            }
        }
        let mut chunk = Chunk::new(id, creation, String::new());
        chunk.override_name = override_name;
        chunk.path = match s.current_chunk {
            Some(_) => TMP_NEW.to_owned(),
            None if !s.has_rotated => String::new(),
            None => chunk.name(),
        };
        s.chunks.insert(id, chunk);
        s.pending_closure = s.current_chunk;
        s.current_chunk = Some(id);
        Ok(())
    }

    /// ROTATE_STREAMS: each stream moves to chunk `to` from its packet `rotate_at_seq_num`
    /// on (metadata at once: it is sent whole again in the new chunk).
    pub(crate) fn rotate_streams(
        &mut self,
        to: Option<u64>,
        positions: &[RotationPosition],
        owned: &[u64],
    ) -> Result<(), String> {
        for p in positions {
            let s = self.owned_stream(p.stream_id, owned)?;
            if let Some(c) = to {
                let session = s.session;
                if !self
                    .sessions
                    .get(&session)
                    .is_some_and(|se| se.chunks.contains_key(&c))
                {
                    return Err(format!("rotation to trace chunk {c}, which does not exist"));
                }
            }
            let s = self.owned_stream(p.stream_id, owned)?;
            let boundary = if s.metadata || p.rotate_at_seq_num == 0 {
                Boundary::AllNew
            } else {
                match s.last_index {
                    Some((pseq, net)) if pseq.wrapping_add(1) >= p.rotate_at_seq_num => {
                        boundary_from(pseq, net, p.rotate_at_seq_num)
                    }
                    _ => Boundary::Unknown,
                }
            };
            s.rotation = Some(Rotation {
                to,
                at_packet_seq: p.rotate_at_seq_num,
                boundary,
            });
            self.try_rotate(p.stream_id)?;
        }
        let sessions: BTreeSet<u64> = positions
            .iter()
            .filter_map(|p| self.streams.get(&p.stream_id).map(|s| s.session))
            .collect();
        for id in sessions {
            self.settle(id);
        }
        Ok(())
    }

    /// CLOSE_TRACE_CHUNK: the path of the chunk's trace as the session daemon reports it.
    pub(crate) fn close_chunk(
        &mut self,
        session: u64,
        id: u64,
        close_ts: u64,
        command: Option<u32>,
    ) -> Result<String, String> {
        let s = self
            .sessions
            .get_mut(&session)
            .ok_or_else(|| format!("no session {session}"))?;
        if !s.chunks.contains_key(&id) {
            return Err(format!("close of trace chunk {id}, which does not exist"));
        }
        if let Some(c) = command {
            if c > close_command::DELETE {
                return Err(format!("trace chunk {id}: unknown close command {c}"));
            }
        }
        if s.pending_closure.is_some_and(|p| p != id) {
            return Err(format!(
                "close of trace chunk {id}, not of the one replaced ({:?})",
                s.pending_closure
            ));
        }
        let dir = s.dir.clone();
        let has_rotated = s.has_rotated;
        // The new chunk takes its place.
        if let Some(cur) = s
            .current_chunk
            .filter(|&c| c != id)
            .and_then(|c| s.chunks.get_mut(&c))
        {
            if cur.override_name.is_none() {
                let to = if command == Some(close_command::DELETE) && !has_rotated {
                    String::new()
                } else {
                    cur.name()
                };
                cur.rename(&dir, &to)
                    .map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
        let chunk = s.chunks.get_mut(&id).expect("checked above");
        if command.is_none_or(|c| c == close_command::NO_OPERATION) && chunk.override_name.is_none()
        {
            // Kept: back where it was.
            let to = if has_rotated {
                chunk.name()
            } else {
                String::new()
            };
            chunk
                .rename(&dir, &to)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        chunk.close = Some((close_ts, command));
        let name = chunk.name();
        let path = if s.snapshot {
            format!("{}/{name}", s.rel_dir)
        } else if !has_rotated {
            s.rel_dir.clone()
        } else {
            format!("{}/{}/{name}", s.rel_dir, crate::chunk::ARCHIVES)
        };
        if command == Some(close_command::MOVE_TO_COMPLETED) {
            s.has_rotated = true;
        }
        if s.current_chunk == Some(id) {
            s.current_chunk = None;
        }
        s.pending_closure = None;
        self.settle(session);
        Ok(path)
    }

    /// Whether trace chunk `id` of `session` exists (created and not completed).
    pub(crate) fn chunk_exists(&self, session: u64, id: u64) -> bool {
        self.sessions
            .get(&session)
            .is_some_and(|s| s.chunks.contains_key(&id))
    }

    /// Rotates stream `handle` if every packet of its old chunk is written.
    fn try_rotate(&mut self, handle: u64) -> Result<(), String> {
        let Some(s) = self.streams.get(&handle) else {
            return Ok(());
        };
        let ready = !s.writing
            && match s.rotation.as_ref().map(|r| r.boundary) {
                None | Some(Boundary::Unknown) => false,
                Some(Boundary::AllNew) => true,
                Some(Boundary::After(b)) => {
                    s.last_data_seq != u64::MAX && seq_reached(s.last_data_seq, b)
                }
            };
        if ready {
            self.rotate_now(handle)?;
        }
        Ok(())
    }

    /// Moves stream `handle` to the chunk of its pending rotation: new files there.
    fn rotate_now(&mut self, handle: u64) -> Result<(), String> {
        let Inner {
            sessions, streams, ..
        } = self;
        let Some(st) = streams.get_mut(&handle) else {
            return Ok(());
        };
        let Some(r) = st.rotation.take() else {
            return Ok(());
        };
        let Some(session) = sessions.get_mut(&st.session) else {
            return Ok(());
        };
        let Some(to) = r.to else {
            // Rotated to no chunk (the session ends): the stream leaves its chunk.
            st.chunk = None;
            return Ok(());
        };
        let Some(chunk) = session.chunks.get_mut(&to) else {
            return Err(format!("rotation to trace chunk {to}, which is gone"));
        };
        let (file_path, file, index_file) = stream_files(
            &session.dir,
            chunk,
            &st.rel,
            &data_file_name(&st.channel_name, st.tracefile_size, 0),
            st.metadata,
        )?;
        // The new chunk's trace files start again at 0; the old chunk's are not deleted.
        st.tracefile = 0;
        st.tracefile_segs.clear();
        st.tracefile_segs.insert(0, st.seg + 1);
        switch_file(st, session.live_timer != 0, file_path, file, index_file);
        st.chunk = Some(to);
        let sid = st.session;
        self.settle(sid);
        Ok(())
    }

    /// Runs the close command of every closed chunk of `session` no stream writes to any more.
    fn settle(&mut self, session: u64) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        let closed = s.connection_closed;
        let done: Vec<u64> = s
            .chunks
            .values()
            .filter(|c| c.close.is_some() && s.current_chunk != Some(c.id))
            .map(|c| c.id)
            .filter(|&id| {
                !s.streams.iter().any(|h| {
                    self.streams
                        .get(h)
                        .is_some_and(|st| st.chunk == Some(id) && !st.finished(closed))
                })
            })
            .collect();
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        for id in done {
            if let Some(mut c) = s.chunks.remove(&id) {
                if let Err(e) = c.complete(&s.dir) {
                    crate::log(format_args!(
                        "session {}/{}: trace chunk {}: {e}",
                        s.hostname,
                        s.name,
                        c.name()
                    ));
                }
            }
        }
    }

    /// The control connection of sessions `owned` is gone.
    pub(crate) fn connection_closed(&mut self, owned: &[u64]) {
        for id in owned {
            if let Some(s) = self.sessions.get_mut(id) {
                s.connection_closed = true;
            }
            self.settle(*id);
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

/// Which packets stay in the old chunk, from the index of packet `pseq` (network sequence
/// number `net`) when the new chunk starts at packet `at` (`pseq + 1 >= at`): network
/// sequence numbers count packets one by one.
fn boundary_from(pseq: u64, net: u64, at: u64) -> Boundary {
    let ahead = pseq.wrapping_add(1).wrapping_sub(at);
    Boundary::After(net.wrapping_sub(ahead))
}

/// The name of trace file `n` of a stream of channel (stream name) `channel`: `channel`
/// alone without trace-file rotation, `channel_N` with it, as lttng-relayd names them.
fn data_file_name(channel: &str, tracefile_size: u64, n: u64) -> String {
    if tracefile_size > 0 {
        format!("{channel}_{n}")
    } else {
        channel.to_owned()
    }
}

/// Makes stream file `file` the one written from now on, as file number `seg + 1`; the
/// current one is kept for live viewers (`live`), and its index file for late indexes.
fn switch_file(
    st: &mut Stream,
    live: bool,
    file_path: PathBuf,
    file: File,
    index_file: Option<File>,
) {
    let old = (st.file.clone(), st.size);
    st.old_segs.push(live.then_some(old));
    if let Some(f) = st.index_file.take() {
        // A few are enough: indexes come a packet or two behind their data at most.
        if st.old_index_files.len() >= 4 {
            st.old_index_files.remove(0);
        }
        st.old_index_files.push((st.seg, f, st.index_entries));
    }
    st.file = Arc::new(file);
    st.seg += 1;
    st.file_path = file_path;
    st.index_file = index_file;
    st.index_entries = 0;
    st.size = 0;
}

/// Trace-file rotation: stream `st` goes on in its next trace file, in the same directory;
/// with a file count, the file of that number written before (and its index) is deleted
/// first. Deleting rather than truncating leaves its data to a live viewer reading it.
fn next_tracefile(st: &mut Stream, live: bool) -> Result<(), String> {
    let n = match st.tracefile_count {
        0 => st.tracefile + 1,
        c => (st.tracefile + 1) % c,
    };
    let dir = st
        .file_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let name = data_file_name(&st.channel_name, st.tracefile_size, n);
    if let Some(gone) = st.tracefile_segs.remove(&n) {
        for p in [
            dir.join(&name),
            dir.join("index").join(format!("{name}.idx")),
        ] {
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(format!("{}: {e}", p.display()))
                }
                _ => {}
            }
        }
        // Its packets cannot be served any more, nor its late indexes written.
        if let Some(s) = st.old_segs.get_mut(gone as usize) {
            *s = None;
        }
        st.old_index_files.retain(|(seg, _, _)| *seg != gone);
    }
    let (file_path, file, index_file) = new_files(&dir, &name, st.metadata)?;
    st.tracefile = n;
    st.tracefile_segs.insert(n, st.seg + 1);
    switch_file(st, live, file_path, file, index_file);
    Ok(())
}

/// Makes a stream's directory in `chunk` and creates its file `name` and, for a data
/// stream, its index file: their paths and handles.
fn stream_files(
    session_dir: &Path,
    chunk: &mut Chunk,
    rel: &Path,
    name: &str,
    metadata: bool,
) -> Result<(PathBuf, File, Option<File>), String> {
    if let Some(Normal(top)) = rel.components().next() {
        chunk.tops.insert(top.to_string_lossy().into_owned());
    }
    let dir = session_dir.join(&chunk.path).join(rel);
    make_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    new_files(&dir, name, metadata)
}

/// Creates stream file `name` in `dir` and, for a data stream, its index file in
/// `dir/index`: their paths and handles.
fn new_files(
    dir: &Path,
    name: &str,
    metadata: bool,
) -> Result<(PathBuf, File, Option<File>), String> {
    let file_path = dir.join(name);
    let file = create_file(&file_path).map_err(|e| format!("{}: {e}", file_path.display()))?;
    let index_file = if metadata {
        None
    } else {
        let idir = dir.join("index");
        make_dir(&idir).map_err(|e| format!("{}: {e}", idir.display()))?;
        let p = idir.join(format!("{name}.idx"));
        let f = create_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        f.write_all_at(&index::header(), 0)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        Some(f)
    };
    Ok((file_path, file, index_file))
}

/// Records index `i` of a packet written at `offset` of file number `seg`; it goes to the
/// index file when that file is the one written now.
fn write_index(s: &mut Stream, i: &RelayIndex, seg: u32, offset: u64) -> Result<(), String> {
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
    let target = if seg == s.seg {
        s.index_file.as_ref().map(|f| (f, &mut s.index_entries))
    } else {
        s.old_index_files
            .iter_mut()
            .find(|(n, _, _)| *n == seg)
            .map(|(_, f, entries)| (&*f, entries))
    };
    if let Some((f, entries)) = target {
        let mut b = Vec::with_capacity(index::ENTRY_SIZE);
        entry.encode(&mut b);
        let at = (index::HEADER_SIZE + *entries * index::ENTRY_SIZE) as u64;
        f.write_all_at(&b, at)
            .map_err(|e| format!("{}: index: {e}", s.file_path.display()))?;
        *entries += 1;
    }
    s.indexes.push(entry);
    s.index_segs.push(seg);
    Ok(())
}
