//! One viewer connection to a relay: blocking request/reply over TCP.
//!
//! Blocking sockets rather than an async runtime: the protocol allows one command in flight
//! per connection and the reader's loop is sequential (it must order events across streams
//! before any sink sees one), so there is nothing to run concurrently; several relays are
//! polled in turn by the same loop. A read timeout turns a relay that stops answering into an
//! error instead of a hang.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::wire::{self, Cmd, Connected, Index, Reader, SessionInfo, StreamInfo};
use crate::Error;

/// How long a reply may take before the relay is given up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Bounds on what a reply may announce: past them it is garbage, not a reason to allocate.
const MAX_RECORDS: u32 = 1 << 16;
const MAX_PACKET: u32 = 256 << 20;
const MAX_METADATA_CHUNK: u64 = 256 << 20;

/// A viewer connection to one relay's live port.
pub struct Conn {
    stream: TcpStream,
    /// `host:port` as given, for messages.
    pub addr: String,
    /// What CONNECT agreed on.
    pub version: Connected,
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
        let targets: Vec<_> = (host, port).to_socket_addrs().map_err(connect_err)?.collect();
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
        let stream = match stream {
            Some(s) => s,
            None => {
                return Err(connect_err(last.unwrap_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
                })))
            }
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
            version: Connected {
                viewer_session_id: 0,
                major: 0,
                minor: 0,
            },
        };
        c.send(Cmd::Connect, &wire::connect())?;
        let b = c.recv(Cmd::Connect, wire::CONNECT_LEN, "the relay's version")?;
        let v = wire::connected(&b).map_err(|m| c.malformed(Cmd::Connect, m))?;
        if v.major != wire::MAJOR {
            return Err(c.refused(
                Cmd::Connect,
                format!(
                    "the relay speaks live protocol {}.{}, this viewer {}.{}",
                    v.major,
                    v.minor,
                    wire::MAJOR,
                    wire::MINOR
                ),
            ));
        }
        if v.minor < wire::MINOR {
            return Err(c.refused(
                Cmd::Connect,
                format!(
                    "the relay speaks live protocol {}.{}, older than {}.{} (no viewer sessions)",
                    v.major,
                    v.minor,
                    wire::MAJOR,
                    wire::MINOR
                ),
            ));
        }
        c.version = v;
        Ok(c)
    }

    fn send(&mut self, cmd: Cmd, bytes: &[u8]) -> Result<(), Error> {
        self.stream.write_all(bytes).map_err(|source| Error::Io {
            addr: self.addr.clone(),
            what: format!("sending {}", cmd.name()),
            source,
        })
    }

    /// Reads `n` bytes of `cmd`'s reply: `what` they are.
    fn recv(&mut self, cmd: Cmd, n: usize, what: &str) -> Result<Vec<u8>, Error> {
        let mut b = vec![0u8; n];
        let mut got = 0;
        while got < n {
            match self.stream.read(&mut b[got..]) {
                Ok(0) => {
                    return Err(Error::Protocol {
                        addr: self.addr.clone(),
                        what: format!("reply to {}", cmd.name()),
                        why: format!(
                            "the relay closed the connection after {got} of the {n} bytes of {what}"
                        ),
                    })
                }
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Io {
                        addr: self.addr.clone(),
                        what: format!("reading {what} in the reply to {}", cmd.name()),
                        source,
                    })
                }
            }
        }
        Ok(b)
    }

    fn malformed(&self, cmd: Cmd, m: wire::Malformed) -> Error {
        Error::Protocol {
            addr: self.addr.clone(),
            what: format!("reply to {}", cmd.name()),
            why: m.0,
        }
    }

    fn refused(&self, cmd: Cmd, why: String) -> Error {
        Error::Refused {
            addr: self.addr.clone(),
            what: cmd.name(),
            why,
        }
    }

    fn count(&self, cmd: Cmd, n: u32, what: &str) -> Result<usize, Error> {
        if n > MAX_RECORDS {
            return Err(self.malformed(
                cmd,
                wire::Malformed(format!("{n} {what} announced (at most {MAX_RECORDS})")),
            ));
        }
        Ok(n as usize)
    }

    /// The relay's sessions.
    pub fn list_sessions(&mut self) -> Result<Vec<SessionInfo>, Error> {
        let cmd = Cmd::ListSessions;
        self.send(cmd, &wire::command(cmd, &[]))?;
        let b = self.recv(cmd, 4, "the session count")?;
        let n = u32::from_be_bytes(b.try_into().expect("4 bytes"));
        let n = self.count(cmd, n, "sessions")?;
        let b = self.recv(cmd, n * wire::SESSION_LEN, "the session records")?;
        let mut r = Reader::new(&b);
        (0..n)
            .map(|_| wire::session(&mut r).map_err(|m| self.malformed(cmd, m)))
            .collect()
    }

    /// Makes the viewer session that attaches go to.
    pub fn create_session(&mut self) -> Result<(), Error> {
        let cmd = Cmd::CreateSession;
        self.send(cmd, &wire::command(cmd, &[]))?;
        let b = self.recv(cmd, 4, "the status")?;
        match u32::from_be_bytes(b.try_into().expect("4 bytes")) {
            1 => Ok(()),
            s => Err(self.refused(cmd, format!("status {s}"))),
        }
    }

    fn streams(&mut self, cmd: Cmd, n: u32) -> Result<Vec<StreamInfo>, Error> {
        let n = self.count(cmd, n, "streams")?;
        let b = self.recv(cmd, n * wire::STREAM_LEN, "the stream records")?;
        let mut r = Reader::new(&b);
        (0..n)
            .map(|_| wire::stream(&mut r).map_err(|m| self.malformed(cmd, m)))
            .collect()
    }

    /// Attaches to `session` from its beginning: its streams.
    pub fn attach(&mut self, session: u64) -> Result<Vec<StreamInfo>, Error> {
        let cmd = Cmd::AttachSession;
        self.send(cmd, &wire::attach(session))?;
        let b = self.recv(cmd, 8, "the status and stream count")?;
        let status = u32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
        let n = u32::from_be_bytes(b[4..].try_into().expect("4 bytes"));
        let why = match status {
            1 => return self.streams(cmd, n),
            2 => "another viewer is attached to it",
            3 => "the relay does not know it",
            4 => "it is not a live session",
            5 => "seek error",
            6 => "no viewer session",
            _ => "unknown status",
        };
        Err(self.refused(cmd, format!("session {session}: {why} (status {status})")))
    }

    /// The streams added to `session` since the last call (or attach).
    pub fn new_streams(&mut self, session: u64) -> Result<NewStreams, Error> {
        let cmd = Cmd::GetNewStreams;
        self.send(cmd, &wire::with_id(cmd, session))?;
        let b = self.recv(cmd, 8, "the status and stream count")?;
        let status = u32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
        let n = u32::from_be_bytes(b[4..].try_into().expect("4 bytes"));
        match status {
            1 => Ok(NewStreams::Streams(self.streams(cmd, n)?)),
            2 => Ok(NewStreams::Streams(Vec::new())),
            4 => Ok(NewStreams::Hup),
            s => Err(self.refused(cmd, format!("session {session}: status {s}"))),
        }
    }

    /// The next index of `stream`.
    pub fn next_index(&mut self, stream: u64) -> Result<Index, Error> {
        let cmd = Cmd::GetNextIndex;
        self.send(cmd, &wire::with_id(cmd, stream))?;
        let b = self.recv(cmd, wire::INDEX_LEN, "the index")?;
        let i = wire::index(&b).map_err(|m| self.malformed(cmd, m))?;
        if !(1..=6).contains(&i.status) {
            return Err(self.malformed(
                cmd,
                wire::Malformed(format!("unknown index status {} (stream {stream})", i.status)),
            ));
        }
        Ok(i)
    }

    /// The packet of `stream` at `offset`, of `len` bytes.
    pub fn packet(&mut self, stream: u64, offset: u64, len: u64) -> Result<Packet, Error> {
        let cmd = Cmd::GetPacket;
        let len32 = u32::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_PACKET)
            .ok_or_else(|| {
                self.malformed(
                    cmd,
                    wire::Malformed(format!(
                        "stream {stream}: packet of {len} bytes (at most {MAX_PACKET})"
                    )),
                )
            })?;
        self.send(cmd, &wire::get_packet(stream, offset, len32))?;
        let b = self.recv(cmd, 12, "the status, length and flags")?;
        let mut r = Reader::new(&b);
        let status = r.u32("status").map_err(|m| self.malformed(cmd, m))?;
        let got = r.u32("length").map_err(|m| self.malformed(cmd, m))?;
        let flags = r.u32("flags").map_err(|m| self.malformed(cmd, m))?;
        match status {
            1 => {
                if got != len32 {
                    return Err(self.malformed(
                        cmd,
                        wire::Malformed(format!(
                            "stream {stream}: {got} bytes announced for a packet of {len32} at offset {offset}"
                        )),
                    ));
                }
                Ok(Packet::Data(self.recv(cmd, got as usize, "the packet")?))
            }
            2 => Ok(Packet::Retry),
            3 if flags & wire::FLAG_NEW_METADATA != 0 => Ok(Packet::NeedMetadata),
            4 => Ok(Packet::Eof),
            s => Err(self.refused(
                cmd,
                format!("stream {stream}, offset {offset}: status {s} (flags {flags})"),
            )),
        }
    }

    /// The next chunk of metadata stream `stream` (empty: none new).
    pub fn metadata(&mut self, stream: u64) -> Result<Vec<u8>, Error> {
        let cmd = Cmd::GetMetadata;
        self.send(cmd, &wire::with_id(cmd, stream))?;
        let b = self.recv(cmd, 12, "the length and status")?;
        let mut r = Reader::new(&b);
        let len = r.u64("length").map_err(|m| self.malformed(cmd, m))?;
        let status = r.u32("status").map_err(|m| self.malformed(cmd, m))?;
        match status {
            1 => {
                if len > MAX_METADATA_CHUNK {
                    return Err(self.malformed(
                        cmd,
                        wire::Malformed(format!(
                            "metadata stream {stream}: a chunk of {len} bytes (at most {MAX_METADATA_CHUNK})"
                        )),
                    ));
                }
                self.recv(cmd, len as usize, "the metadata")
            }
            2 => Ok(Vec::new()),
            s => Err(self.refused(cmd, format!("metadata stream {stream}: status {s}"))),
        }
    }
}
