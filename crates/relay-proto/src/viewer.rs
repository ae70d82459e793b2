//! The live viewer protocol (`lttng-viewer-abi`): a viewer's requests and the relay's replies.
//!
//! A request is a [`ViewerHeader`] (16 bytes) and a fixed-size payload; a reply has no header:
//! its layout depends on the request it answers.

use crate::wire::{put_fixed, put_u32, put_u64, Reader};
use crate::{DecodeError, Decoded, MAX_PAYLOAD};

/// Request numbers (`enum lttng_viewer_command`).
pub mod cmd {
    /// Version negotiation, the first request.
    pub const CONNECT: u32 = 1;
    /// The relay's sessions.
    pub const LIST_SESSIONS: u32 = 2;
    /// Attach to a session.
    pub const ATTACH_SESSION: u32 = 3;
    /// A stream's next packet index.
    pub const GET_NEXT_INDEX: u32 = 4;
    /// Bytes of a packet.
    pub const GET_PACKET: u32 = 5;
    /// New metadata.
    pub const GET_METADATA: u32 = 6;
    /// Streams added since the attach.
    pub const GET_NEW_STREAMS: u32 = 7;
    /// Create the viewer session (before attaching).
    pub const CREATE_SESSION: u32 = 8;
    /// Detach from a session.
    pub const DETACH_SESSION: u32 = 9;
}

/// Reply flag: new metadata must be fetched before this packet can be read.
pub const FLAG_NEW_METADATA: u32 = 1;
/// Reply flag: streams were added.
pub const FLAG_NEW_STREAM: u32 = 2;

/// `LTTNG_VIEWER_CLIENT_COMMAND`, the connection type of viewers.
pub const CLIENT_COMMAND: u32 = 1;
/// Size of a hostname field.
pub const HOST_NAME_MAX: usize = 64;
/// Size of a name field.
pub const NAME_MAX: usize = 255;
/// Size of a path field.
pub const PATH_MAX: usize = 4096;

/// Attach reply status: attached.
pub const ATTACH_OK: u32 = 1;
/// Attach reply status: another viewer is attached (lttng-relayd's limit).
pub const ATTACH_ALREADY: u32 = 2;
/// Attach reply status: unknown session.
pub const ATTACH_UNK: u32 = 3;
/// Attach reply status: not a live session.
pub const ATTACH_NOT_LIVE: u32 = 4;
/// Attach reply status: bad seek.
pub const ATTACH_SEEK_ERR: u32 = 5;
/// Attach reply status: no viewer session was created.
pub const ATTACH_NO_SESSION: u32 = 6;

/// Index reply status: an index.
pub const INDEX_OK: u32 = 1;
/// Index reply status: none yet.
pub const INDEX_RETRY: u32 = 2;
/// Index reply status: the stream ended.
pub const INDEX_HUP: u32 = 3;
/// Index reply status: error.
pub const INDEX_ERR: u32 = 4;
/// Index reply status: no packet, but no events up to `timestamp_end` (a live beacon).
pub const INDEX_INACTIVE: u32 = 5;
/// Index reply status: end of the index file.
pub const INDEX_EOF: u32 = 6;

/// Packet reply status: the bytes.
pub const PACKET_OK: u32 = 1;
/// Packet reply status: not yet.
pub const PACKET_RETRY: u32 = 2;
/// Packet reply status: error.
pub const PACKET_ERR: u32 = 3;
/// Packet reply status: end of stream.
pub const PACKET_EOF: u32 = 4;

/// Metadata reply status: new metadata.
pub const METADATA_OK: u32 = 1;
/// Metadata reply status: nothing new.
pub const METADATA_NO_NEW: u32 = 2;
/// Metadata reply status: error.
pub const METADATA_ERR: u32 = 3;

/// New-streams reply status: the streams follow.
pub const NEW_STREAMS_OK: u32 = 1;
/// New-streams reply status: none.
pub const NEW_STREAMS_NO_NEW: u32 = 2;
/// New-streams reply status: error.
pub const NEW_STREAMS_ERR: u32 = 3;
/// New-streams reply status: the session ended.
pub const NEW_STREAMS_HUP: u32 = 4;

/// Create-session reply status: created.
pub const CREATE_SESSION_OK: u32 = 1;
/// Create-session reply status: error.
pub const CREATE_SESSION_ERR: u32 = 2;

/// Detach reply status: detached.
pub const DETACH_OK: u32 = 1;
/// Detach reply status: unknown session.
pub const DETACH_UNK: u32 = 2;
/// Detach reply status: error (not attached).
pub const DETACH_ERR: u32 = 3;

/// Seek mode of an attach: from the first packet.
pub const SEEK_BEGINNING: u32 = 1;
/// Seek mode of an attach: from the latest packets.
pub const SEEK_LAST: u32 = 2;

/// The header of a viewer request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewerHeader {
    /// Payload bytes after the header.
    pub data_size: u64,
    /// The request ([`cmd`]).
    pub cmd: u32,
    /// Its version (0).
    pub cmd_version: u32,
}

impl ViewerHeader {
    /// Encoded size.
    pub const SIZE: usize = 16;

    /// Decodes a header from the start of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf, 0, "viewer request header");
        // Every request payload is a small fixed struct.
        let h = r.command_header(4096)?;
        Ok(ViewerHeader {
            data_size: h.data_size,
            cmd: h.cmd,
            cmd_version: h.cmd_version,
        })
    }
}

/// A viewer's request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViewerRequest {
    /// Version negotiation (`lttng_viewer_connect`); the relay answers with the same struct.
    Connect(Connect),
    /// List the sessions.
    ListSessions,
    /// Attach to a session.
    AttachSession {
        /// The relay's session id.
        session_id: u64,
        /// Unused (0).
        offset: u64,
        /// [`SEEK_BEGINNING`] or [`SEEK_LAST`].
        seek: u32,
    },
    /// A stream's next index.
    GetNextIndex {
        /// The stream's id.
        stream_id: u64,
    },
    /// Bytes of a stream file.
    GetPacket {
        /// The stream's id.
        stream_id: u64,
        /// Offset in the stream file.
        offset: u64,
        /// How many bytes.
        len: u32,
    },
    /// New metadata of a metadata stream.
    GetMetadata {
        /// The metadata stream's id.
        stream_id: u64,
    },
    /// Streams added to a session.
    GetNewStreams {
        /// The relay's session id.
        session_id: u64,
    },
    /// Create the viewer session.
    CreateSession,
    /// Detach from a session.
    DetachSession {
        /// The relay's session id.
        session_id: u64,
    },
}

/// Version negotiation, both ways (`lttng_viewer_connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connect {
    /// The viewer session id the relay assigns (the viewer sends `u64::MAX`).
    pub viewer_session_id: u64,
    /// Major version (2).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// [`CLIENT_COMMAND`].
    pub conn_type: u32,
}

impl Connect {
    /// Encoded size.
    pub const SIZE: usize = 20;

    fn read(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Connect {
            viewer_session_id: r.u64()?,
            major: r.u32()?,
            minor: r.u32()?,
            conn_type: r.u32()?,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        put_u64(out, self.viewer_session_id);
        put_u32(out, self.major);
        put_u32(out, self.minor);
        put_u32(out, self.conn_type);
    }
}

/// The payload size of request `cmd` (every request has a fixed one), or `None` for an
/// unknown request.
pub fn request_payload_size(cmd: u32) -> Option<usize> {
    Some(match cmd {
        cmd::CONNECT | cmd::ATTACH_SESSION | cmd::GET_PACKET => 20,
        cmd::GET_NEXT_INDEX | cmd::GET_METADATA | cmd::GET_NEW_STREAMS | cmd::DETACH_SESSION => 8,
        cmd::LIST_SESSIONS | cmd::CREATE_SESSION => 0,
        _ => return None,
    })
}

impl ViewerRequest {
    /// The request number.
    pub fn cmd(&self) -> u32 {
        match self {
            ViewerRequest::Connect(_) => cmd::CONNECT,
            ViewerRequest::ListSessions => cmd::LIST_SESSIONS,
            ViewerRequest::AttachSession { .. } => cmd::ATTACH_SESSION,
            ViewerRequest::GetNextIndex { .. } => cmd::GET_NEXT_INDEX,
            ViewerRequest::GetPacket { .. } => cmd::GET_PACKET,
            ViewerRequest::GetMetadata { .. } => cmd::GET_METADATA,
            ViewerRequest::GetNewStreams { .. } => cmd::GET_NEW_STREAMS,
            ViewerRequest::CreateSession => cmd::CREATE_SESSION,
            ViewerRequest::DetachSession { .. } => cmd::DETACH_SESSION,
        }
    }

    /// Decodes one request (header and payload) from the start of `buf`. The payload is read
    /// by its fixed size, as the relay daemon does (`data_size` is not trusted); an unknown
    /// request number is an error.
    pub fn decode(buf: &[u8]) -> Decoded<Self> {
        let h = ViewerHeader::decode(buf)?;
        let mut r = Reader::new(
            &buf[ViewerHeader::SIZE..],
            ViewerHeader::SIZE,
            "viewer request",
        );
        let req = match h.cmd {
            cmd::CONNECT => ViewerRequest::Connect(Connect::read(&mut r)?),
            cmd::LIST_SESSIONS => ViewerRequest::ListSessions,
            cmd::ATTACH_SESSION => ViewerRequest::AttachSession {
                session_id: r.u64()?,
                offset: r.u64()?,
                seek: r.u32()?,
            },
            cmd::GET_NEXT_INDEX => ViewerRequest::GetNextIndex {
                stream_id: r.u64()?,
            },
            cmd::GET_PACKET => ViewerRequest::GetPacket {
                stream_id: r.u64()?,
                offset: r.u64()?,
                len: r.u32()?,
            },
            cmd::GET_METADATA => ViewerRequest::GetMetadata {
                stream_id: r.u64()?,
            },
            cmd::GET_NEW_STREAMS => ViewerRequest::GetNewStreams {
                session_id: r.u64()?,
            },
            cmd::CREATE_SESSION => ViewerRequest::CreateSession,
            cmd::DETACH_SESSION => ViewerRequest::DetachSession {
                session_id: r.u64()?,
            },
            other => {
                return Err(DecodeError::Invalid {
                    message: "viewer request header",
                    field: "cmd",
                    offset: 8,
                    reason: format!("unknown viewer command {other}"),
                })
            }
        };
        Ok((req, ViewerHeader::SIZE + r.pos()))
    }

    /// Appends the request with its header.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(24);
        match self {
            ViewerRequest::Connect(c) => c.write(&mut body),
            ViewerRequest::ListSessions | ViewerRequest::CreateSession => {}
            ViewerRequest::AttachSession {
                session_id,
                offset,
                seek,
            } => {
                put_u64(&mut body, *session_id);
                put_u64(&mut body, *offset);
                put_u32(&mut body, *seek);
            }
            ViewerRequest::GetNextIndex { stream_id: v }
            | ViewerRequest::GetMetadata { stream_id: v }
            | ViewerRequest::GetNewStreams { session_id: v }
            | ViewerRequest::DetachSession { session_id: v } => put_u64(&mut body, *v),
            ViewerRequest::GetPacket {
                stream_id,
                offset,
                len,
            } => {
                put_u64(&mut body, *stream_id);
                put_u64(&mut body, *offset);
                put_u32(&mut body, *len);
            }
        }
        put_u64(out, body.len() as u64);
        put_u32(out, self.cmd());
        put_u32(out, 0);
        out.extend_from_slice(&body);
    }
}

/// A session in a list-sessions reply (`lttng_viewer_session`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The relay's session id.
    pub id: u64,
    /// Live timer period, µs.
    pub live_timer: u32,
    /// Viewers attached.
    pub clients: u32,
    /// Streams.
    pub streams: u32,
    /// The traced host (at most 63 bytes are sent).
    pub hostname: String,
    /// The session's name (at most 254 bytes are sent).
    pub session_name: String,
}

impl SessionInfo {
    /// Encoded size.
    pub const SIZE: usize = 20 + HOST_NAME_MAX + NAME_MAX;
}

/// A stream in an attach or new-streams reply (`lttng_viewer_stream`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// The stream's id (for index, packet and metadata requests).
    pub id: u64,
    /// The id of the trace it belongs to (streams of one trace share it).
    pub ctf_trace_id: u64,
    /// A metadata stream.
    pub metadata: bool,
    /// Its directory (at most 4095 bytes are sent).
    pub path_name: String,
    /// Its file name (at most 254 bytes are sent).
    pub channel_name: String,
}

impl StreamInfo {
    /// Encoded size.
    pub const SIZE: usize = 20 + PATH_MAX + NAME_MAX;

    fn read(r: &mut Reader) -> Result<Self, DecodeError> {
        let id = r.u64()?;
        let ctf_trace_id = r.u64()?;
        let at = r.pos();
        let metadata = match r.u32()? {
            0 => false,
            1 => true,
            v => return Err(r.invalid("metadata_flag", at, format!("{v} is neither 0 nor 1"))),
        };
        Ok(StreamInfo {
            id,
            ctf_trace_id,
            metadata,
            path_name: r.fixed_string(PATH_MAX, "path_name")?,
            channel_name: r.fixed_string(NAME_MAX, "channel_name")?,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        put_u64(out, self.id);
        put_u64(out, self.ctf_trace_id);
        put_u32(out, u32::from(self.metadata));
        put_fixed(out, &self.path_name, PATH_MAX);
        put_fixed(out, &self.channel_name, NAME_MAX);
    }
}

/// A packet index in a get-next-index reply (`lttng_viewer_index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ViewerIndex {
    /// Offset of the packet in the stream file, bytes.
    pub offset: u64,
    /// Packet size, bits.
    pub packet_size: u64,
    /// Content size, bits.
    pub content_size: u64,
    /// First timestamp.
    pub timestamp_begin: u64,
    /// Last timestamp (of [`INDEX_INACTIVE`]: up to when the stream is known empty).
    pub timestamp_end: u64,
    /// Events discarded so far.
    pub events_discarded: u64,
    /// CTF stream class id.
    pub stream_id: u64,
    /// `INDEX_*`.
    pub status: u32,
    /// `FLAG_*`.
    pub flags: u32,
}

impl ViewerIndex {
    /// Encoded size.
    pub const SIZE: usize = 64;
}

/// The relay's reply to a viewer request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViewerReply {
    /// Version negotiation.
    Connect(Connect),
    /// The live sessions.
    Sessions(Vec<SessionInfo>),
    /// Attach result and the session's streams.
    Attach {
        /// `ATTACH_*`.
        status: u32,
        /// The streams.
        streams: Vec<StreamInfo>,
    },
    /// The next index.
    Index(ViewerIndex),
    /// Packet bytes.
    Packet {
        /// `PACKET_*`.
        status: u32,
        /// `FLAG_*`.
        flags: u32,
        /// The bytes (empty unless [`PACKET_OK`]).
        data: Vec<u8>,
    },
    /// Metadata bytes.
    Metadata {
        /// `METADATA_*`.
        status: u32,
        /// The bytes.
        data: Vec<u8>,
    },
    /// Streams added.
    NewStreams {
        /// `NEW_STREAMS_*`.
        status: u32,
        /// The streams.
        streams: Vec<StreamInfo>,
    },
    /// Create-session result.
    CreateSession {
        /// `CREATE_SESSION_*`.
        status: u32,
    },
    /// Detach result.
    Detach {
        /// `DETACH_*`.
        status: u32,
    },
}

/// Most sessions or streams a reply may announce before the decoder refuses it.
const MAX_ITEMS: u32 = 1 << 16;

impl ViewerReply {
    /// Decodes the reply to request `cmd` from the start of `buf`.
    pub fn decode(cmd: u32, buf: &[u8]) -> Decoded<Self> {
        let mut r = Reader::new(buf, 0, "viewer reply");
        let reply = match cmd {
            cmd::CONNECT => ViewerReply::Connect(Connect::read(&mut r)?),
            cmd::LIST_SESSIONS => {
                let n = r.count("sessions_count", MAX_ITEMS, SessionInfo::SIZE)?;
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(SessionInfo {
                        id: r.u64()?,
                        live_timer: r.u32()?,
                        clients: r.u32()?,
                        streams: r.u32()?,
                        hostname: r.fixed_string(HOST_NAME_MAX, "hostname")?,
                        session_name: r.fixed_string(NAME_MAX, "session_name")?,
                    });
                }
                ViewerReply::Sessions(v)
            }
            cmd::ATTACH_SESSION | cmd::GET_NEW_STREAMS => {
                let status = r.u32()?;
                let n = r.count("streams_count", MAX_ITEMS, StreamInfo::SIZE)?;
                let mut streams = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    streams.push(StreamInfo::read(&mut r)?);
                }
                if cmd == cmd::ATTACH_SESSION {
                    ViewerReply::Attach { status, streams }
                } else {
                    ViewerReply::NewStreams { status, streams }
                }
            }
            cmd::GET_NEXT_INDEX => ViewerReply::Index(ViewerIndex {
                offset: r.u64()?,
                packet_size: r.u64()?,
                content_size: r.u64()?,
                timestamp_begin: r.u64()?,
                timestamp_end: r.u64()?,
                events_discarded: r.u64()?,
                stream_id: r.u64()?,
                status: r.u32()?,
                flags: r.u32()?,
            }),
            cmd::GET_PACKET => {
                let status = r.u32()?;
                let len = r.size_u32("len", MAX_PAYLOAD)?;
                let flags = r.u32()?;
                // Only a packet that was read carries its bytes.
                let n = if status == PACKET_OK { len as usize } else { 0 };
                ViewerReply::Packet {
                    status,
                    flags,
                    data: r.bytes(n)?.to_vec(),
                }
            }
            cmd::GET_METADATA => {
                let len = r.size_u64("len", MAX_PAYLOAD)?;
                let status = r.u32()?;
                ViewerReply::Metadata {
                    status,
                    data: r.bytes(len as usize)?.to_vec(),
                }
            }
            cmd::CREATE_SESSION => ViewerReply::CreateSession { status: r.u32()? },
            cmd::DETACH_SESSION => ViewerReply::Detach { status: r.u32()? },
            other => {
                return Err(r.invalid(
                    "cmd",
                    0,
                    format!("no reply format for viewer command {other}"),
                ))
            }
        };
        Ok((reply, r.pos()))
    }

    /// Appends the reply.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ViewerReply::Connect(c) => c.write(out),
            ViewerReply::Sessions(v) => {
                put_u32(out, v.len() as u32);
                for s in v {
                    put_u64(out, s.id);
                    put_u32(out, s.live_timer);
                    put_u32(out, s.clients);
                    put_u32(out, s.streams);
                    put_fixed(out, &s.hostname, HOST_NAME_MAX);
                    put_fixed(out, &s.session_name, NAME_MAX);
                }
            }
            ViewerReply::Attach { status, streams }
            | ViewerReply::NewStreams { status, streams } => {
                put_u32(out, *status);
                put_u32(out, streams.len() as u32);
                for s in streams {
                    s.write(out);
                }
            }
            ViewerReply::Index(i) => {
                for v in [
                    i.offset,
                    i.packet_size,
                    i.content_size,
                    i.timestamp_begin,
                    i.timestamp_end,
                    i.events_discarded,
                    i.stream_id,
                ] {
                    put_u64(out, v);
                }
                put_u32(out, i.status);
                put_u32(out, i.flags);
            }
            ViewerReply::Packet {
                status,
                flags,
                data,
            } => {
                put_u32(out, *status);
                put_u32(out, data.len() as u32);
                put_u32(out, *flags);
                out.extend_from_slice(data);
            }
            ViewerReply::Metadata { status, data } => {
                put_u64(out, data.len() as u64);
                put_u32(out, *status);
                out.extend_from_slice(data);
            }
            ViewerReply::CreateSession { status } | ViewerReply::Detach { status } => {
                put_u32(out, *status)
            }
        }
    }
}
