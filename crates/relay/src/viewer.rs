//! Live viewer connections. Each keeps its own positions in the streams of the sessions it is
//! attached to, so that any number of viewers can read one session (`lttng-relayd` allows
//! one).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use relay_proto::viewer::{
    self as v, request_payload_size, Connect, SessionInfo, StreamInfo, ViewerHeader, ViewerIndex,
    ViewerReply, ViewerRequest,
};
use relay_proto::MAX_PAYLOAD;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::log;
use crate::state::{Inner, Registry};

/// The live protocol's minor version this relay speaks.
const LIVE_MINOR: u32 = 13;

/// A viewer's position in one stream.
struct Cursor {
    /// Indexes sent (of data streams).
    index_sent: usize,
    /// The number of the file (one per trace chunk or trace file) the last index sent points
    /// into: packets are asked for by offset in it.
    seg: u32,
    /// That file when it is an earlier one, taken with the index: as lttng-relayd opens the
    /// file at the index, the packet stays readable even if trace-file rotation deletes the
    /// file in between.
    held: Option<Arc<std::fs::File>>,
    /// Metadata bytes sent (of metadata streams).
    metadata_sent: u64,
    /// "No new metadata" was answered once metadata had been sent.
    no_new_told: bool,
}

struct Viewer {
    reg: Arc<Registry>,
    id: u64,
    connected: bool,
    created: bool,
    attached: BTreeSet<u64>,
    cursors: BTreeMap<u64, Cursor>,
    /// Streams this viewer was told are over: never offered again.
    done: BTreeSet<u64>,
}

/// Serves a viewer connection until it closes.
pub(crate) async fn serve(mut sock: TcpStream, peer: SocketAddr, reg: Arc<Registry>) {
    let id = reg.new_viewer();
    let mut viewer = Viewer {
        reg: reg.clone(),
        id,
        connected: false,
        created: false,
        attached: BTreeSet::new(),
        cursors: BTreeMap::new(),
        done: BTreeSet::new(),
    };
    if let Err(e) = viewer.run(&mut sock).await {
        log(format_args!("viewer connection from {peer} closed: {e}"));
    }
    let mut inner = reg.lock();
    for s in &viewer.attached {
        if let Some(s) = inner.sessions.get_mut(s) {
            s.viewers = s.viewers.saturating_sub(1);
        }
    }
    inner.prune();
}

impl Viewer {
    async fn run(&mut self, sock: &mut TcpStream) -> Result<(), String> {
        let mut buf = [0u8; ViewerHeader::SIZE + 20];
        let mut out = Vec::new();
        loop {
            let mut got = 0;
            while got < ViewerHeader::SIZE {
                match sock.read(&mut buf[got..ViewerHeader::SIZE]).await {
                    Ok(0) if got == 0 => return Ok(()),
                    Ok(0) => return Err("closed inside a request header".into()),
                    Ok(n) => got += n,
                    Err(e) => return Err(e.to_string()),
                }
            }
            let h = ViewerHeader::decode(&buf[..ViewerHeader::SIZE]).map_err(|e| e.to_string())?;
            let size = request_payload_size(h.cmd)
                .ok_or_else(|| format!("unknown viewer command {}", h.cmd))?;
            sock.read_exact(&mut buf[ViewerHeader::SIZE..ViewerHeader::SIZE + size])
                .await
                .map_err(|e| format!("request {}: {e}", h.cmd))?;
            let (req, _) = ViewerRequest::decode(&buf[..ViewerHeader::SIZE + size])
                .map_err(|e| e.to_string())?;
            if !self.connected && !matches!(req, ViewerRequest::Connect(_)) {
                return Err(format!("command {} before the version negotiation", h.cmd));
            }
            let reply = self.handle(req)?;
            out.clear();
            reply.encode(&mut out);
            sock.write_all(&out)
                .await
                .map_err(|e| format!("reply: {e}"))?;
        }
    }

    fn handle(&mut self, req: ViewerRequest) -> Result<ViewerReply, String> {
        Ok(match req {
            ViewerRequest::Connect(c) => {
                if c.major != 2 {
                    return Err(format!("live protocol major version {}, not 2", c.major));
                }
                if c.conn_type != v::CLIENT_COMMAND {
                    return Err(format!(
                        "connection type {} is not a command connection",
                        c.conn_type
                    ));
                }
                self.connected = true;
                ViewerReply::Connect(Connect {
                    viewer_session_id: self.id,
                    major: 2,
                    minor: LIVE_MINOR,
                    conn_type: 0,
                })
            }
            ViewerRequest::ListSessions => {
                let inner = self.reg.lock();
                ViewerReply::Sessions(
                    inner
                        .sessions
                        .iter()
                        .filter(|(_, s)| !s.connection_closed)
                        .map(|(&id, s)| SessionInfo {
                            id,
                            live_timer: s.live_timer,
                            clients: s.viewers,
                            streams: s.streams.len() as u32,
                            hostname: s.hostname.clone(),
                            session_name: s.name.clone(),
                        })
                        .collect(),
                )
            }
            ViewerRequest::CreateSession => {
                self.created = true;
                ViewerReply::CreateSession {
                    status: v::CREATE_SESSION_OK,
                }
            }
            ViewerRequest::AttachSession {
                session_id, seek, ..
            } => self.attach(session_id, seek),
            ViewerRequest::GetNewStreams { session_id } => self.new_streams(session_id),
            ViewerRequest::DetachSession { session_id } => {
                let mut inner = self.reg.lock();
                let status = if !inner.sessions.contains_key(&session_id) {
                    v::DETACH_UNK
                } else if !self.attached.remove(&session_id) {
                    v::DETACH_ERR
                } else {
                    if let Some(s) = inner.sessions.get_mut(&session_id) {
                        s.viewers = s.viewers.saturating_sub(1);
                    }
                    let Inner { streams, .. } = &*inner;
                    self.cursors
                        .retain(|h, _| streams.get(h).is_some_and(|s| s.session != session_id));
                    self.done
                        .retain(|h| streams.get(h).is_some_and(|s| s.session != session_id));
                    inner.prune();
                    v::DETACH_OK
                };
                ViewerReply::Detach { status }
            }
            ViewerRequest::GetNextIndex { stream_id } => {
                ViewerReply::Index(self.next_index(stream_id))
            }
            ViewerRequest::GetPacket {
                stream_id,
                offset,
                len,
            } => self.packet(stream_id, offset, len),
            ViewerRequest::GetMetadata { stream_id } => self.metadata(stream_id),
            other => return Err(format!("unsupported viewer request {}", other.cmd())),
        })
    }

    /// Gives this viewer a cursor on every published stream of `session` it has none on
    /// (streams of traces without a metadata stream wait); the streams created.
    fn make_cursors(&mut self, inner: &Inner, session: u64, seek_last: bool) -> Vec<u64> {
        let Some(s) = inner.sessions.get(&session) else {
            return Vec::new();
        };
        let traces_with_metadata: BTreeSet<u64> = s
            .streams
            .iter()
            .filter_map(|h| inner.streams.get(h))
            .filter(|st| st.metadata && st.published)
            .map(|st| st.trace_id)
            .collect();
        let mut created = Vec::new();
        for h in &s.streams {
            let Some(st) = inner.streams.get(h) else {
                continue;
            };
            if !st.published
                || !traces_with_metadata.contains(&st.trace_id)
                || self.cursors.contains_key(h)
                || self.done.contains(h)
            {
                continue;
            }
            self.cursors.insert(
                *h,
                Cursor {
                    index_sent: if seek_last { st.indexes.len() } else { 0 },
                    seg: st.seg,
                    held: None,
                    metadata_sent: 0,
                    no_new_told: false,
                },
            );
            created.push(*h);
        }
        created
    }

    fn info(inner: &Inner, handles: &[u64]) -> Vec<StreamInfo> {
        handles
            .iter()
            .filter_map(|h| {
                inner.streams.get(h).map(|st| StreamInfo {
                    id: *h,
                    ctf_trace_id: st.trace_id,
                    metadata: st.metadata,
                    path_name: st.path_name.clone(),
                    channel_name: st.channel_name.clone(),
                })
            })
            .collect()
    }

    fn attach(&mut self, session_id: u64, seek: u32) -> ViewerReply {
        let reg = self.reg.clone();
        let mut inner = reg.lock();
        let fail = |status| ViewerReply::Attach {
            status,
            streams: Vec::new(),
        };
        if !self.created {
            return fail(v::ATTACH_NO_SESSION);
        }
        let Some(s) = inner.sessions.get(&session_id) else {
            return fail(v::ATTACH_UNK);
        };
        if s.live_timer == 0 {
            return fail(v::ATTACH_NOT_LIVE);
        }
        if seek != v::SEEK_BEGINNING && seek != v::SEEK_LAST {
            return fail(v::ATTACH_SEEK_ERR);
        }
        if s.connection_closed {
            return fail(v::ATTACH_UNK);
        }
        if self.attached.insert(session_id) {
            if let Some(s) = inner.sessions.get_mut(&session_id) {
                s.viewers += 1;
            }
        }
        self.make_cursors(&inner, session_id, seek == v::SEEK_LAST);
        let all: Vec<u64> = self
            .cursors
            .keys()
            .copied()
            .filter(|h| {
                inner
                    .streams
                    .get(h)
                    .is_some_and(|st| st.session == session_id)
            })
            .collect();
        ViewerReply::Attach {
            status: v::ATTACH_OK,
            streams: Self::info(&inner, &all),
        }
    }

    fn new_streams(&mut self, session_id: u64) -> ViewerReply {
        let reg = self.reg.clone();
        let inner = reg.lock();
        let err = ViewerReply::NewStreams {
            status: v::NEW_STREAMS_ERR,
            streams: Vec::new(),
        };
        let Some(s) = inner.sessions.get(&session_id) else {
            return err;
        };
        if !self.attached.contains(&session_id) {
            return err;
        }
        let closed = s.connection_closed;
        let created = self.make_cursors(&inner, session_id, false);
        // Streams that may still give this viewer something: a session that ended may have
        // streams this viewer has not read to their end (or not seen yet: `created`).
        let live = self
            .cursors
            .iter()
            .filter_map(|(h, c)| inner.streams.get(h).map(|st| (st, c)))
            .filter(|(st, c)| {
                st.session == session_id
                    && (!st.finished(closed)
                        || if st.metadata {
                            st.size > c.metadata_sent
                        } else {
                            st.indexes.len() > c.index_sent
                        })
            })
            .count();
        if closed && live == 0 && created.is_empty() {
            return ViewerReply::NewStreams {
                status: v::NEW_STREAMS_HUP,
                streams: Vec::new(),
            };
        }
        ViewerReply::NewStreams {
            status: v::NEW_STREAMS_OK,
            streams: Self::info(&inner, &created),
        }
    }

    fn next_index(&mut self, stream_id: u64) -> ViewerIndex {
        let reg = self.reg.clone();
        let inner = reg.lock();
        let mut index = ViewerIndex {
            status: v::INDEX_ERR,
            ..ViewerIndex::default()
        };
        let (Some(c), Some(st)) = (
            self.cursors.get_mut(&stream_id),
            inner.streams.get(&stream_id),
        ) else {
            return index;
        };
        if st.metadata {
            index.status = v::INDEX_HUP;
            return index;
        }
        let closed = inner
            .sessions
            .get(&st.session)
            .is_none_or(|s| s.connection_closed);
        let received = st.indexes.len();
        if st.finished(closed) && received <= c.index_sent {
            index.status = v::INDEX_HUP;
            self.cursors.remove(&stream_id);
            self.done.insert(stream_id);
        } else if received <= c.index_sent {
            // A beacon says the stream is empty up to a time; not while a packet of before
            // that time waits for its data, which the viewer would then get out of order.
            match st.beacon.filter(|_| st.index_waiting.is_empty()) {
                Some((ts_end, ctf_stream_id)) => {
                    index.status = v::INDEX_INACTIVE;
                    index.timestamp_end = ts_end;
                    index.stream_id = ctf_stream_id;
                }
                None => index.status = v::INDEX_RETRY,
            }
        } else if st.seg_gone(st.index_segs[c.index_sent]) {
            // Its file was deleted by trace-file rotation before this viewer got there: on
            // to the oldest packet still kept.
            while c.index_sent < received && st.seg_gone(st.index_segs[c.index_sent]) {
                c.index_sent += 1;
            }
            index.status = v::INDEX_RETRY;
        } else {
            let e = st.indexes[c.index_sent];
            c.seg = st.index_segs[c.index_sent];
            c.held = (c.seg != st.seg)
                .then(|| st.old_segs.get(c.seg as usize).and_then(|s| s.as_ref()))
                .flatten()
                .map(|(f, _)| f.clone());
            c.index_sent += 1;
            index = ViewerIndex {
                offset: e.offset,
                packet_size: e.packet_size,
                content_size: e.content_size,
                timestamp_begin: e.timestamp_begin,
                timestamp_end: e.timestamp_end,
                events_discarded: e.events_discarded,
                stream_id: e.stream_id,
                status: v::INDEX_OK,
                flags: 0,
            };
        }
        // On any answer but the end, as lttng-relayd: a viewer must learn of streams added
        // (they may hold events older than this stream's next ones) even while this one is
        // quiet.
        if index.status != v::INDEX_HUP && self.has_new_streams(&inner) {
            index.flags |= v::FLAG_NEW_STREAM;
        }
        // Whatever the answer, say when the trace's metadata grew.
        let trace = st.trace_id;
        let session = st.session;
        let new_metadata = self.cursors.iter().any(|(h, c)| {
            inner.streams.get(h).is_some_and(|m| {
                m.metadata
                    && m.session == session
                    && m.trace_id == trace
                    && ((m.size == 0 && c.metadata_sent == 0) || m.size > c.metadata_sent)
            })
        });
        if new_metadata {
            index.flags |= v::FLAG_NEW_METADATA;
        }
        index
    }

    fn has_new_streams(&self, inner: &Inner) -> bool {
        self.attached.iter().any(|sid| {
            inner.sessions.get(sid).is_some_and(|s| {
                s.streams.iter().any(|h| {
                    !self.cursors.contains_key(h)
                        && !self.done.contains(h)
                        && inner.streams.get(h).is_some_and(|st| {
                            st.published
                                && s.streams.iter().any(|m| {
                                    inner.streams.get(m).is_some_and(|m| {
                                        m.metadata && m.published && m.trace_id == st.trace_id
                                    })
                                })
                        })
                })
            })
        })
    }

    fn packet(&mut self, stream_id: u64, offset: u64, len: u32) -> ViewerReply {
        let err = ViewerReply::Packet {
            status: v::PACKET_ERR,
            flags: 0,
            data: Vec::new(),
        };
        let Some((seg, held)) = self
            .cursors
            .get(&stream_id)
            .map(|c| (c.seg, c.held.clone()))
        else {
            return err;
        };
        if u64::from(len) > MAX_PAYLOAD {
            return err;
        }
        let (file, size) = {
            let inner = self.reg.lock();
            match inner.streams.get(&stream_id) {
                Some(st) if !st.metadata && seg == st.seg => (st.file.clone(), st.size),
                Some(st) if !st.metadata => {
                    match (st.old_segs.get(seg as usize).and_then(|s| s.as_ref()), held) {
                        (Some((f, size)), _) => (f.clone(), *size),
                        // Deleted since: the file held has every packet indexed in it whole.
                        (None, Some(f)) => (f, u64::MAX),
                        (None, None) => return err,
                    }
                }
                _ => return err,
            }
        };
        // Only bytes of whole packets are served.
        if offset
            .checked_add(u64::from(len))
            .is_none_or(|end| end > size)
        {
            return err;
        }
        let mut data = vec![0u8; len as usize];
        if file.read_exact_at(&mut data, offset).is_err() {
            return err;
        }
        ViewerReply::Packet {
            status: v::PACKET_OK,
            flags: 0,
            data,
        }
    }

    fn metadata(&mut self, stream_id: u64) -> ViewerReply {
        let err = ViewerReply::Metadata {
            status: v::METADATA_ERR,
            data: Vec::new(),
        };
        let Some(c) = self.cursors.get_mut(&stream_id) else {
            return err;
        };
        let (file, size, finished) = {
            let inner = self.reg.lock();
            match inner.streams.get(&stream_id) {
                Some(st) if st.metadata => {
                    let closed = inner
                        .sessions
                        .get(&st.session)
                        .is_none_or(|s| s.connection_closed);
                    (st.file.clone(), st.size, st.finished(closed))
                }
                _ => return err,
            }
        };
        if c.metadata_sent >= size {
            // Viewers take a metadata stream for gone when asking for it fails, and end its
            // trace; they expect "no new metadata" once before (as lttng-relayd does it).
            if c.metadata_sent > 0 {
                if finished && c.no_new_told {
                    self.cursors.remove(&stream_id);
                    self.done.insert(stream_id);
                } else {
                    c.no_new_told = true;
                }
            }
            return ViewerReply::Metadata {
                status: v::METADATA_NO_NEW,
                data: Vec::new(),
            };
        }
        let len = (size - c.metadata_sent).min(MAX_PAYLOAD);
        let mut data = vec![0u8; len as usize];
        if file.read_exact_at(&mut data, c.metadata_sent).is_err() {
            return err;
        }
        c.metadata_sent += len;
        ViewerReply::Metadata {
            status: v::METADATA_OK,
            data,
        }
    }
}
