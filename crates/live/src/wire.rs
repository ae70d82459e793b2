//! The viewer side of LTTng's live protocol, as bytes: the commands a viewer sends and the
//! replies it reads (all integers big-endian, structures packed; lttng-tools'
//! `lttng-viewer-abi.h` and `doc/live-reading-protocol.md`). Sans-io: the connection reads
//! and writes; this module only encodes and checks.

/// The protocol version this viewer speaks (babeltrace2's, which lttng-relayd 2.13 serves).
pub const MAJOR: u32 = 2;
/// The minor version: 4 has CREATE_SESSION and GET_NEW_STREAMS.
pub const MINOR: u32 = 4;

/// Viewer commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Connect = 1,
    ListSessions = 2,
    AttachSession = 3,
    GetNextIndex = 4,
    GetPacket = 5,
    GetMetadata = 6,
    GetNewStreams = 7,
    CreateSession = 8,
}

impl Cmd {
    /// The command's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Connect => "CONNECT",
            Cmd::ListSessions => "LIST_SESSIONS",
            Cmd::AttachSession => "ATTACH_SESSION",
            Cmd::GetNextIndex => "GET_NEXT_INDEX",
            Cmd::GetPacket => "GET_PACKET",
            Cmd::GetMetadata => "GET_METADATA",
            Cmd::GetNewStreams => "GET_NEW_STREAMS",
            Cmd::CreateSession => "CREATE_SESSION",
        }
    }
}

/// A command with its payload, ready to send.
pub fn command(cmd: Cmd, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + payload.len());
    b.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    b.extend_from_slice(&(cmd as u32).to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(payload);
    b
}

/// CONNECT's payload (and reply): viewer session id, major, minor, connection type.
pub fn connect() -> Vec<u8> {
    let mut p = Vec::with_capacity(CONNECT_LEN);
    p.extend_from_slice(&0u64.to_be_bytes());
    p.extend_from_slice(&MAJOR.to_be_bytes());
    p.extend_from_slice(&MINOR.to_be_bytes());
    // LTTNG_VIEWER_CLIENT_COMMAND
    p.extend_from_slice(&1u32.to_be_bytes());
    command(Cmd::Connect, &p)
}

/// Bytes of CONNECT's reply.
pub const CONNECT_LEN: usize = 20;
/// Bytes of one session record of LIST_SESSIONS.
pub const SESSION_LEN: usize = 8 + 4 + 4 + 4 + HOST_NAME_MAX + NAME_MAX;
/// Bytes of one stream record of ATTACH_SESSION and GET_NEW_STREAMS.
pub const STREAM_LEN: usize = 8 + 8 + 4 + PATH_MAX + NAME_MAX;
/// Bytes of GET_NEXT_INDEX's reply.
pub const INDEX_LEN: usize = 7 * 8 + 4 + 4;
const HOST_NAME_MAX: usize = 64;
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// A big-endian reader over a reply, whose shortness is an error naming what was read.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// A reply too short or out of bounds: what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.at..end];
                self.at = end;
                Ok(s)
            }
            None => Err(Malformed(format!(
                "{what} at byte {} needs {n} bytes, the reply has {}",
                self.at,
                self.bytes.len() - self.at
            ))),
        }
    }

    /// A u64.
    pub fn u64(&mut self, what: &str) -> Result<u64, Malformed> {
        let b = self.take(8, what)?;
        Ok(u64::from_be_bytes(b.try_into().expect("8 bytes")))
    }

    /// A u32.
    pub fn u32(&mut self, what: &str) -> Result<u32, Malformed> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")))
    }

    /// A NUL-padded string field of `n` bytes (lossy UTF-8, up to its first NUL).
    pub fn text(&mut self, n: usize, what: &str) -> Result<String, Malformed> {
        let b = self.take(n, what)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }
}

/// CONNECT's reply: the relay's viewer session id and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connected {
    /// The id the relay gave this connection.
    pub viewer_session_id: u64,
    /// The relay's major version.
    pub major: u32,
    /// The relay's minor version.
    pub minor: u32,
}

/// Reads CONNECT's reply.
pub fn connected(b: &[u8]) -> Result<Connected, Malformed> {
    let mut r = Reader::new(b);
    Ok(Connected {
        viewer_session_id: r.u64("viewer session id")?,
        major: r.u32("major version")?,
        minor: r.u32("minor version")?,
    })
}

/// One session of LIST_SESSIONS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The relay's id of the session.
    pub id: u64,
    /// The live timer, in µs (0: not a live session).
    pub live_timer: u32,
    /// Viewers attached.
    pub clients: u32,
    /// Streams.
    pub streams: u32,
    /// The traced host's name.
    pub hostname: String,
    /// The session's name.
    pub name: String,
}

/// Reads one session record.
pub fn session(r: &mut Reader<'_>) -> Result<SessionInfo, Malformed> {
    Ok(SessionInfo {
        id: r.u64("session id")?,
        live_timer: r.u32("live timer")?,
        clients: r.u32("client count")?,
        streams: r.u32("stream count")?,
        hostname: r.text(HOST_NAME_MAX, "host name")?,
        name: r.text(NAME_MAX, "session name")?,
    })
}

/// One stream of ATTACH_SESSION or GET_NEW_STREAMS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// The relay's id of the stream.
    pub id: u64,
    /// The trace it belongs to (its streams and metadata share it).
    pub ctf_trace_id: u64,
    /// Whether this is the trace's metadata stream.
    pub metadata: bool,
    /// The trace's path below the relay's output directory.
    pub path: String,
    /// The channel (stream file) name.
    pub channel: String,
}

/// Reads one stream record.
pub fn stream(r: &mut Reader<'_>) -> Result<StreamInfo, Malformed> {
    Ok(StreamInfo {
        id: r.u64("stream id")?,
        ctf_trace_id: r.u64("CTF trace id")?,
        metadata: r.u32("metadata flag")? != 0,
        path: r.text(PATH_MAX, "path name")?,
        channel: r.text(NAME_MAX, "channel name")?,
    })
}

/// ATTACH_SESSION's payload: the session, from its beginning.
pub fn attach(session: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(20);
    p.extend_from_slice(&session.to_be_bytes());
    p.extend_from_slice(&0u64.to_be_bytes());
    // LTTNG_VIEWER_SEEK_BEGINNING
    p.extend_from_slice(&1u32.to_be_bytes());
    command(Cmd::AttachSession, &p)
}

/// A command whose payload is one u64 (a stream or session id).
pub fn with_id(cmd: Cmd, id: u64) -> Vec<u8> {
    command(cmd, &id.to_be_bytes())
}

/// GET_PACKET's payload.
pub fn get_packet(stream: u64, offset: u64, len: u32) -> Vec<u8> {
    let mut p = Vec::with_capacity(20);
    p.extend_from_slice(&stream.to_be_bytes());
    p.extend_from_slice(&offset.to_be_bytes());
    p.extend_from_slice(&len.to_be_bytes());
    command(Cmd::GetPacket, &p)
}

/// A flag of GET_NEXT_INDEX's and GET_PACKET's replies: new metadata must be fetched first.
pub const FLAG_NEW_METADATA: u32 = 1;
/// A flag of GET_NEXT_INDEX's and GET_PACKET's replies: the session has new streams.
pub const FLAG_NEW_STREAM: u32 = 2;

/// GET_NEXT_INDEX's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index {
    /// The packet's offset in the stream.
    pub offset: u64,
    /// Its size in bits.
    pub packet_size: u64,
    /// Its content in bits.
    pub content_size: u64,
    /// Its first time, in the stream clock's cycles.
    pub timestamp_begin: u64,
    /// Its last time (an inactive stream's: up to when it is known to be quiet).
    pub timestamp_end: u64,
    /// Events discarded so far.
    pub events_discarded: u64,
    /// The stream instance id.
    pub stream_id: u64,
    /// OK 1, RETRY 2, HUP 3, ERR 4, INACTIVE 5, EOF 6.
    pub status: u32,
    /// `FLAG_*`.
    pub flags: u32,
}

/// Index statuses.
pub mod index_status {
    /// A packet is there.
    pub const OK: u32 = 1;
    /// Nothing yet.
    pub const RETRY: u32 = 2;
    /// The stream is closed and read to its end.
    pub const HUP: u32 = 3;
    /// No packet, but the stream is known quiet up to `timestamp_end`.
    pub const INACTIVE: u32 = 5;
    /// The end of the stream's index.
    pub const EOF: u32 = 6;
}

/// Reads GET_NEXT_INDEX's reply.
pub fn index(b: &[u8]) -> Result<Index, Malformed> {
    let mut r = Reader::new(b);
    Ok(Index {
        offset: r.u64("packet offset")?,
        packet_size: r.u64("packet size")?,
        content_size: r.u64("content size")?,
        timestamp_begin: r.u64("begin timestamp")?,
        timestamp_end: r.u64("end timestamp")?,
        events_discarded: r.u64("discarded event count")?,
        stream_id: r.u64("stream id")?,
        status: r.u32("status")?,
        flags: r.u32("flags")?,
    })
}
