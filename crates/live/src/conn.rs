//! One viewer connection to a relay: blocking request/reply over TCP, the bytes encoded and
//! checked by `relay_proto::viewer`.
//!
//! Blocking sockets rather than an async runtime: the protocol allows one command in flight
//! per connection and the reader's loop is sequential (it must order events across streams
//! before any sink sees one), so there is nothing to run concurrently; several relays are
//! polled in turn by the same loop. A read timeout turns a relay that stops answering into an
//! error instead of a hang.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use relay_proto::viewer::{self as v, ViewerReply, ViewerRequest};
use relay_proto::DecodeError;

pub use relay_proto::viewer::{SessionInfo, StreamInfo, ViewerIndex};

use crate::Error;

/// How long a reply may take before the relay is given up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The live protocol version this viewer speaks (babeltrace2 2.0's; 2.4 has viewer sessions
/// and new-stream notices).
const MAJOR: u32 = 2;
const MINOR: u32 = 4;

/// A viewer connection to one relay's live port.
pub struct Conn {
    stream: TcpStream,
    /// `host:port`, for messages.
    pub addr: String,
    /// Bytes read past the last reply (none, as the relay answers one request at a time).
    buf: Vec<u8>,
}

/// A packet's reply.
pub enum Packet {
    /// The packet's bytes.
    Data(Vec<u8>),
    /// Not there yet.
    Retry,
    /// New metadata (flags) must be fetched before the packet can be had.
    NeedMetadata,
    /// The stream ended.
    Eof,
}

/// GET_NEW_STREAMS's reply.
pub enum NewStreams {
    /// Streams added (maybe none).
    Streams(Vec<StreamInfo>),
    /// The session is closed: no more streams will come.
    Hup,
}

fn name(cmd: u32) -> &'static str {
    match cmd {
        v::cmd::CONNECT => "CONNECT",
        v::cmd::LIST_SESSIONS => "LIST_SESSIONS",
        v::cmd::ATTACH_SESSION => "ATTACH_SESSION",
        v::cmd::GET_NEXT_INDEX => "GET_NEXT_INDEX",
        v::cmd::GET_PACKET => "GET_PACKET",
        v::cmd::GET_METADATA => "GET_METADATA",
        v::cmd::GET_NEW_STREAMS => "GET_NEW_STREAMS",
        v::cmd::CREATE_SESSION => "CREATE_SESSION",
        _ => "DETACH_SESSION",
    }
}

impl Conn {
    /// Connects to `host:port` and agrees on the protocol version.
    pub fn open(host: &str, port: u16) -> Result<Conn, Error> {
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let connect_err = |source| Error::Connect {
            addr: addr.clone(),
            source,
        };
        let targets: Vec<_> = (host, port)
            .to_socket_addrs()
            .map_err(connect_err)?
            .collect();
        let mut last = None;
        let mut stream = None;
        for t in targets {
            match TcpStream::connect_timeout(&t, REPLY_TIMEOUT) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(stream) = stream else {
            return Err(connect_err(last.unwrap_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
            })));
        };
        let io = |source| Error::Io {
            addr: addr.clone(),
            what: "setting up the connection".into(),
            source,
        };
        stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let mut c = Conn {
            stream,
            addr,
            buf: Vec::new(),
        };
        let ours = v::Connect {
            viewer_session_id: u64::MAX,
            major: MAJOR,
            minor: MINOR,
            conn_type: v::CLIENT_COMMAND,
        };
        let ViewerReply::Connect(theirs) = c.request(ViewerRequest::Connect(ours))? else {
            unreachable!("decoded as CONNECT's reply")
        };
        if theirs.major != MAJOR || theirs.minor < MINOR {
            return Err(c.refused(
                v::cmd::CONNECT,
                format!(
                    "the relay speaks live protocol {}.{}, this viewer {MAJOR}.{MINOR} (the same \
                     major and at least this minor are needed)",
                    theirs.major, theirs.minor
                ),
            ));
        }
        Ok(c)
    }

    /// Sends `req` and reads its reply, whole.
    fn request(&mut self, req: ViewerRequest) -> Result<ViewerReply, Error> {
        let cmd = req.cmd();
        let mut bytes = Vec::with_capacity(40);
        req.encode(&mut bytes);
        self.stream.write_all(&bytes).map_err(|source| Error::Io {
            addr: self.addr.clone(),
            what: format!("sending {}", name(cmd)),
            source,
        })?;
        loop {
            let needed = match ViewerReply::decode(cmd, &self.buf) {
                Ok((reply, used)) => {
                    self.buf.drain(..used);
                    return Ok(reply);
                }
                Err(DecodeError::Incomplete { needed }) => needed,
                Err(e) => {
                    return Err(Error::Protocol {
                        addr: self.addr.clone(),
                        what: format!("reply to {}", name(cmd)),
                        why: e.to_string(),
                    })
                }
            };
            let have = self.buf.len();
            self.buf.resize(have + needed.max(1), 0);
            let got = loop {
                match self.stream.read(&mut self.buf[have..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    other => break other,
                }
            };
            match got {
                Ok(0) => {
                    return Err(Error::Protocol {
                        addr: self.addr.clone(),
                        what: format!("reply to {}", name(cmd)),
                        why: format!(
                            "the relay closed the connection after {have} bytes of the reply \
                             (at least {needed} more were due)"
                        ),
                    })
                }
                Ok(n) => self.buf.truncate(have + n),
                Err(source) => {
                    return Err(Error::Io {
                        addr: self.addr.clone(),
                        what: format!("reading the reply to {} (after {have} bytes)", name(cmd)),
                        source,
                    })
                }
            }
        }
    }

    fn refused(&self, cmd: u32, why: String) -> Error {
        Error::Refused {
            addr: self.addr.clone(),
            what: name(cmd),
            why,
        }
    }

    /// The relay's sessions.
    pub fn list_sessions(&mut self) -> Result<Vec<SessionInfo>, Error> {
        match self.request(ViewerRequest::ListSessions)? {
            ViewerReply::Sessions(s) => Ok(s),
            _ => unreachable!("decoded as LIST_SESSIONS' reply"),
        }
    }

    /// Makes the viewer session that attaches go to.
    pub fn create_session(&mut self) -> Result<(), Error> {
        match self.request(ViewerRequest::CreateSession)? {
            ViewerReply::CreateSession {
                status: v::CREATE_SESSION_OK,
            } => Ok(()),
            ViewerReply::CreateSession { status } => {
                Err(self.refused(v::cmd::CREATE_SESSION, format!("status {status}")))
            }
            _ => unreachable!("decoded as CREATE_SESSION's reply"),
        }
    }

    /// Attaches to `session` from its beginning: its streams.
    pub fn attach(&mut self, session: u64) -> Result<Vec<StreamInfo>, Error> {
        let req = ViewerRequest::AttachSession {
            session_id: session,
            offset: 0,
            seek: v::SEEK_BEGINNING,
        };
        let ViewerReply::Attach { status, streams } = self.request(req)? else {
            unreachable!("decoded as ATTACH_SESSION's reply")
        };
        let why = match status {
            v::ATTACH_OK => return Ok(streams),
            v::ATTACH_ALREADY => "another viewer is attached to it",
            v::ATTACH_UNK => "the relay does not know it",
            v::ATTACH_NOT_LIVE => "it is not a live session",
            v::ATTACH_SEEK_ERR => "seek error",
            v::ATTACH_NO_SESSION => "no viewer session",
            _ => "unknown status",
        };
        Err(self.refused(
            v::cmd::ATTACH_SESSION,
            format!("session {session}: {why} (status {status})"),
        ))
    }

    /// The streams added to `session` since the last call (or attach).
    pub fn new_streams(&mut self, session: u64) -> Result<NewStreams, Error> {
        let req = ViewerRequest::GetNewStreams {
            session_id: session,
        };
        let ViewerReply::NewStreams { status, streams } = self.request(req)? else {
            unreachable!("decoded as GET_NEW_STREAMS' reply")
        };
        match status {
            v::NEW_STREAMS_OK => Ok(NewStreams::Streams(streams)),
            v::NEW_STREAMS_NO_NEW => Ok(NewStreams::Streams(Vec::new())),
            v::NEW_STREAMS_HUP => Ok(NewStreams::Hup),
            s => Err(self.refused(
                v::cmd::GET_NEW_STREAMS,
                format!("session {session}: status {s}"),
            )),
        }
    }

    /// The next index of `stream`.
    pub fn next_index(&mut self, stream: u64) -> Result<ViewerIndex, Error> {
        let req = ViewerRequest::GetNextIndex { stream_id: stream };
        let ViewerReply::Index(i) = self.request(req)? else {
            unreachable!("decoded as GET_NEXT_INDEX's reply")
        };
        if !(v::INDEX_OK..=v::INDEX_EOF).contains(&i.status) {
            return Err(Error::Protocol {
                addr: self.addr.clone(),
                what: "reply to GET_NEXT_INDEX".into(),
                why: format!("unknown index status {} (stream {stream})", i.status),
            });
        }
        Ok(i)
    }

    /// The packet of `stream` at `offset`, of `len` bytes.
    pub fn packet(&mut self, stream: u64, offset: u64, len: u64) -> Result<Packet, Error> {
        let len32 = u32::try_from(len)
            .ok()
            .filter(|&l| u64::from(l) <= relay_proto::MAX_PAYLOAD)
            .ok_or_else(|| Error::Protocol {
                addr: self.addr.clone(),
                what: "reply to GET_NEXT_INDEX".into(),
                why: format!(
                    "stream {stream}: an index of a packet of {len} bytes (at most {})",
                    relay_proto::MAX_PAYLOAD
                ),
            })?;
        let req = ViewerRequest::GetPacket {
            stream_id: stream,
            offset,
            len: len32,
        };
        let ViewerReply::Packet {
            status,
            flags,
            data,
        } = self.request(req)?
        else {
            unreachable!("decoded as GET_PACKET's reply")
        };
        match status {
            v::PACKET_OK => {
                if data.len() != len32 as usize {
                    return Err(Error::Protocol {
                        addr: self.addr.clone(),
                        what: "reply to GET_PACKET".into(),
                        why: format!(
                            "stream {stream}: {} bytes for the packet of {len32} at offset {offset}",
                            data.len()
                        ),
                    });
                }
                Ok(Packet::Data(data))
            }
            v::PACKET_RETRY => Ok(Packet::Retry),
            v::PACKET_ERR if flags & v::FLAG_NEW_METADATA != 0 => Ok(Packet::NeedMetadata),
            v::PACKET_EOF => Ok(Packet::Eof),
            s => Err(self.refused(
                v::cmd::GET_PACKET,
                format!("stream {stream}, offset {offset}: status {s} (flags {flags})"),
            )),
        }
    }

    /// The next chunk of metadata stream `stream` (empty: none new).
    pub fn metadata(&mut self, stream: u64) -> Result<Vec<u8>, Error> {
        let req = ViewerRequest::GetMetadata { stream_id: stream };
        let ViewerReply::Metadata { status, data } = self.request(req)? else {
            unreachable!("decoded as GET_METADATA's reply")
        };
        match status {
            v::METADATA_OK => Ok(data),
            v::METADATA_NO_NEW => Ok(Vec::new()),
            s => Err(self.refused(
                v::cmd::GET_METADATA,
                format!("metadata stream {stream}: status {s}"),
            )),
        }
    }
}
