//! Consumer daemon connections: control (commands and replies) and data (packets).

use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use relay_proto::control::{
    cmd, ControlCommand, ControlHeader, ControlReply, DataHeader, MetadataPrefix,
    CONFIGURATION_FLAG_CLEAR_ALLOWED, MIN_MINOR, RET_ERR_UNK, RET_OK, VERSION_MAJOR, VERSION_MINOR,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::state::{seq_reached, Registry};
use crate::{log, CHUNK};

/// The largest payload of a command other than metadata (names are at most a path long).
const MAX_COMMAND: u64 = 64 << 10;

/// Reads exactly `buf.len()` bytes; `Ok(false)` when the peer closed before the first one.
async fn read_or_eof(sock: &mut TcpStream, buf: &mut [u8]) -> Result<bool, String> {
    let mut got = 0;
    while got < buf.len() {
        match sock.read(&mut buf[got..]).await {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(format!(
                    "connection closed {got} bytes into a {}-byte header",
                    buf.len()
                ))
            }
            Ok(n) => got += n,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

/// Serves a control connection until it closes; its sessions are then marked closed.
pub(crate) async fn control(mut sock: TcpStream, peer: SocketAddr, reg: Arc<Registry>) {
    let mut conn = Control {
        reg: reg.clone(),
        owned: Vec::new(),
        version: None,
    };
    if let Err(e) = conn.run(&mut sock).await {
        log(format_args!("control connection from {peer} closed: {e}"));
    }
    let mut inner = reg.lock();
    for id in &conn.owned {
        let Some(s) = inner.sessions.get(id) else {
            continue;
        };
        let open = s
            .streams
            .iter()
            .filter(|h| inner.streams.get(h).is_some_and(|st| !st.finished(false)))
            .count();
        let lost: u64 = s
            .streams
            .iter()
            .filter_map(|h| inner.streams.get(h))
            .map(|st| st.lost_packets)
            .sum();
        if open > 0 || lost > 0 {
            log(format_args!(
                "session {}/{}: its producer is gone with {open} stream(s) still open; {lost} packet(s) lost",
                s.hostname, s.name
            ));
        } else {
            log(format_args!("session {}/{} ended", s.hostname, s.name));
        }
    }
    inner.connection_closed(&conn.owned);
}

struct Control {
    reg: Arc<Registry>,
    /// Sessions created on this connection (the last one is the current one).
    owned: Vec<u64>,
    version: Option<(u32, u32)>,
}

impl Control {
    async fn run(&mut self, sock: &mut TcpStream) -> Result<(), String> {
        let mut hbuf = [0u8; ControlHeader::SIZE];
        let mut payload = Vec::new();
        let mut out = Vec::new();
        loop {
            if !read_or_eof(sock, &mut hbuf).await? {
                return Ok(());
            }
            let h = ControlHeader::decode(&hbuf).map_err(|e| e.to_string())?;
            if self.version.is_none() && h.cmd != cmd::VERSION {
                return Err(format!("command {} before the version negotiation", h.cmd));
            }
            if h.cmd == cmd::SEND_METADATA {
                self.metadata(sock, &h).await?;
                continue;
            }
            if h.data_size > MAX_COMMAND {
                return Err(format!("command {} announces {} bytes", h.cmd, h.data_size));
            }
            payload.resize(h.data_size as usize, 0);
            sock.read_exact(&mut payload)
                .await
                .map_err(|e| format!("command {}: payload: {e}", h.cmd))?;
            let c = ControlCommand::decode_payload(&h, &payload).map_err(|e| e.to_string())?;
            let (reply, fatal) = self.handle(c);
            out.clear();
            reply.encode(&mut out);
            sock.write_all(&out)
                .await
                .map_err(|e| format!("reply: {e}"))?;
            if let Some(why) = fatal {
                return Err(why);
            }
        }
    }

    fn current(&self) -> Result<u64, String> {
        self.owned
            .last()
            .copied()
            .ok_or_else(|| "command before any session was created".to_owned())
    }

    /// The reply to a command, and why the connection must close after it, if it must.
    fn handle(&mut self, c: ControlCommand) -> (ControlReply, Option<String>) {
        let ok = ControlReply::Generic { ret_code: RET_OK };
        let err = ControlReply::Generic {
            ret_code: RET_ERR_UNK,
        };
        let r: Result<ControlReply, String> = match c {
            ControlCommand::Version { major, minor } => {
                let reply = ControlReply::Version {
                    major: VERSION_MAJOR,
                    minor: VERSION_MINOR,
                };
                if major != VERSION_MAJOR {
                    return (
                        reply,
                        Some(format!(
                            "protocol major version {major}, not {VERSION_MAJOR}"
                        )),
                    );
                }
                let minor = minor.min(VERSION_MINOR);
                if minor < MIN_MINOR {
                    return (
                        reply,
                        Some(format!("protocol 2.{minor} is older than 2.{MIN_MINOR}")),
                    );
                }
                self.version = Some((major, minor));
                Ok(reply)
            }
            // Clearing is allowed, as lttng-relayd allows it unless told not to.
            ControlCommand::GetConfiguration { .. } => Ok(ControlReply::GetConfiguration {
                ret_code: RET_OK,
                flags: CONFIGURATION_FLAG_CLEAR_ALLOWED,
            }),
            ControlCommand::CreateSession(s) => match self.reg.create_session(&s) {
                Ok((session_id, output_path)) => {
                    log(format_args!(
                        "session {}/{} (live timer {} µs) → {}",
                        s.hostname, s.session_name, s.live_timer, output_path
                    ));
                    self.owned.push(session_id);
                    Ok(ControlReply::CreateSession {
                        session_id,
                        ret_code: RET_OK,
                        output_path,
                    })
                }
                Err(e) => {
                    let reply = ControlReply::CreateSession {
                        session_id: 0,
                        ret_code: RET_ERR_UNK,
                        output_path: String::new(),
                    };
                    return (reply, Some(format!("create session: {e}")));
                }
            },
            ControlCommand::CreateTraceChunk {
                chunk_id,
                creation_timestamp,
                override_name,
            } => self.current().and_then(|id| {
                self.reg
                    .lock()
                    .create_chunk(id, chunk_id, creation_timestamp, override_name)
                    .map(|()| ok.clone())
            }),
            ControlCommand::AddStream(a) => self
                .current()
                .and_then(|id| self.reg.add_stream(id, &a))
                .map(|handle| ControlReply::AddStream {
                    handle,
                    ret_code: RET_OK,
                }),
            ControlCommand::StreamsSent => self.current().map(|id| {
                let mut inner = self.reg.lock();
                let handles = inner
                    .sessions
                    .get(&id)
                    .map(|s| s.streams.clone())
                    .unwrap_or_default();
                for h in handles {
                    if let Some(st) = inner.streams.get_mut(&h) {
                        st.published = true;
                    }
                }
                ok.clone()
            }),
            ControlCommand::SendIndex(i) => self
                .reg
                .lock()
                .add_index(&i, &self.owned)
                .map(|()| ok.clone()),
            ControlCommand::CloseStream {
                stream_id,
                last_net_seq_num,
            } => self
                .reg
                .lock()
                .close_stream(stream_id, last_net_seq_num, &self.owned)
                .map(|()| ok.clone()),
            ControlCommand::DataPending {
                stream_id,
                last_net_seq_num,
            } => {
                let mut inner = self.reg.lock();
                inner.owned_stream(stream_id, &self.owned).map(|s| {
                    s.pending = !seq_reached(s.last_data_seq, last_net_seq_num);
                    ControlReply::Generic {
                        ret_code: u32::from(s.pending),
                    }
                })
            }
            ControlCommand::QuiescentControl { stream_id } => self
                .reg
                .lock()
                .owned_stream(stream_id, &self.owned)
                .map(|_| ok.clone()),
            ControlCommand::BeginDataPending { session_id }
            | ControlCommand::EndDataPending { session_id }
                if !self.owned.contains(&session_id) =>
            {
                Err(format!(
                    "data pending check of session {session_id}, not one of this connection's"
                ))
            }
            ControlCommand::BeginDataPending { session_id } => {
                let mut inner = self.reg.lock();
                let handles = inner
                    .sessions
                    .get(&session_id)
                    .map(|s| s.streams.clone())
                    .unwrap_or_default();
                for h in handles {
                    if let Some(st) = inner.streams.get_mut(&h) {
                        st.pending = false;
                    }
                }
                Ok(ok.clone())
            }
            ControlCommand::EndDataPending { session_id } => {
                let inner = self.reg.lock();
                let pending = inner.sessions.get(&session_id).is_some_and(|s| {
                    s.streams
                        .iter()
                        .any(|h| inner.streams.get(h).is_some_and(|st| st.pending))
                });
                Ok(ControlReply::Generic {
                    ret_code: u32::from(pending),
                })
            }
            ControlCommand::ResetMetadata { stream_id, .. } => {
                let mut inner = self.reg.lock();
                inner.owned_stream(stream_id, &self.owned).and_then(|s| {
                    if !s.metadata {
                        return Err(format!("metadata reset of data stream {stream_id}"));
                    }
                    s.file
                        .set_len(0)
                        .map_err(|e| format!("{}: {e}", s.file_path.display()))?;
                    s.size = 0;
                    Ok(ok.clone())
                })
            }
            ControlCommand::RotateStreams {
                new_chunk_id,
                positions,
                ..
            } => self
                .reg
                .lock()
                .rotate_streams(new_chunk_id, &positions, &self.owned)
                .map(|()| ok.clone()),
            ControlCommand::CloseTraceChunk {
                chunk_id,
                close_timestamp,
                close_command,
            } => self.current().and_then(|id| {
                let path =
                    self.reg
                        .lock()
                        .close_chunk(id, chunk_id, close_timestamp, close_command)?;
                Ok(ControlReply::CloseTraceChunk {
                    ret_code: RET_OK,
                    path,
                })
            }),
            ControlCommand::TraceChunkExists { chunk_id } => {
                self.current().map(|id| ControlReply::TraceChunkExists {
                    ret_code: RET_OK,
                    exists: self.reg.lock().chunk_exists(id, chunk_id),
                })
            }
            ControlCommand::Other {
                cmd: cmd::START_DATA,
                ..
            } => Ok(ok.clone()),
            other => Err(format!("unsupported command {}", other.cmd())),
        };
        match r {
            Ok(reply) => (reply, None),
            Err(why) => (err, Some(why)),
        }
    }

    /// Appends a metadata chunk to its stream's file as it arrives.
    async fn metadata(&mut self, sock: &mut TcpStream, h: &ControlHeader) -> Result<(), String> {
        let mut pbuf = [0u8; MetadataPrefix::SIZE];
        if h.data_size < MetadataPrefix::SIZE as u64 {
            return Err(format!("SEND_METADATA of {} bytes", h.data_size));
        }
        sock.read_exact(&mut pbuf)
            .await
            .map_err(|e| format!("SEND_METADATA: {e}"))?;
        let p = MetadataPrefix::decode(&pbuf).map_err(|e| e.to_string())?;
        let (file, offset, path) = {
            let mut inner = self.reg.lock();
            let s = inner.owned_stream(p.stream_id, &self.owned)?;
            if !s.metadata {
                return Err(format!("metadata for data stream {}", p.stream_id));
            }
            (s.file.clone(), s.size, s.file_path.clone())
        };
        let len = h.data_size - MetadataPrefix::SIZE as u64;
        if let Err(e) = copy_in(sock, &file, offset, len, p.padding_size).await {
            // Metadata cut short is unusable: the file ends at the last whole chunk.
            let _ = file.set_len(offset);
            return Err(format!("{}: metadata chunk lost: {e}", path.display()));
        }
        let mut inner = self.reg.lock();
        if let Some(s) = inner.streams.get_mut(&p.stream_id) {
            s.size = offset + len + u64::from(p.padding_size);
        }
        Ok(())
    }
}

/// Copies `len` bytes from the socket to `file` at `offset`, then `padding` zero bytes;
/// at most [`CHUNK`] bytes are held at once.
async fn copy_in(
    sock: &mut TcpStream,
    file: &std::fs::File,
    offset: u64,
    len: u64,
    padding: u32,
) -> Result<(), String> {
    let mut buf = vec![0u8; CHUNK.min(len.max(u64::from(padding)) as usize)];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        let got = sock.read(&mut buf[..n]).await.map_err(|e| e.to_string())?;
        if got == 0 {
            return Err(format!("producer disconnected after {done} of {len} bytes"));
        }
        file.write_all_at(&buf[..got], offset + done)
            .map_err(|e| format!("write: {e}"))?;
        done += got as u64;
    }
    if padding > 0 {
        // Extending the file leaves zeros, as writing them would, without the writes.
        file.set_len(offset + len + u64::from(padding))
            .map_err(|e| format!("write: {e}"))?;
    }
    Ok(())
}

/// Serves a data connection: packets, each written to its stream's file as it arrives.
pub(crate) async fn data(mut sock: TcpStream, peer: SocketAddr, reg: Arc<Registry>) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Err(e) = data_loop(&mut sock, &reg, id).await {
        log(format_args!("data connection from {peer} closed: {e}"));
    }
}

async fn data_loop(sock: &mut TcpStream, reg: &Registry, id: u64) -> Result<(), String> {
    let mut hbuf = [0u8; DataHeader::SIZE];
    loop {
        if !read_or_eof(sock, &mut hbuf).await? {
            return Ok(());
        }
        let h = DataHeader::decode(&hbuf).map_err(|e| e.to_string())?;
        let (file, offset, path) = {
            let mut inner = reg.lock();
            if inner
                .streams
                .get(&h.stream_id)
                .is_some_and(|s| !s.metadata && !s.writing && s.writer.is_none_or(|w| w == id))
            {
                inner.packet_starts(
                    h.stream_id,
                    h.net_seq_num,
                    u64::from(h.data_size) + u64::from(h.padding_size),
                )?;
            }
            let s = inner
                .streams
                .get_mut(&h.stream_id)
                .ok_or_else(|| format!("packet for unknown stream {}", h.stream_id))?;
            if s.metadata {
                return Err(format!("packet for metadata stream {}", h.stream_id));
            }
            if *s.writer.get_or_insert(id) != id || s.writing {
                return Err(format!(
                    "stream {} takes packets from another connection",
                    h.stream_id
                ));
            }
            s.writing = true;
            (s.file.clone(), s.size, s.file_path.clone())
        };
        let copied = copy_in(sock, &file, offset, u64::from(h.data_size), h.padding_size).await;
        let mut inner = reg.lock();
        match copied {
            Ok(()) => {
                inner.packet_written(
                    h.stream_id,
                    h.net_seq_num,
                    offset,
                    u64::from(h.data_size) + u64::from(h.padding_size),
                )?;
            }
            Err(e) => {
                // The stream file ends at its last whole packet: readers never see a torn one.
                let _ = file.set_len(offset);
                if let Some(s) = inner.streams.get_mut(&h.stream_id) {
                    s.writing = false;
                    s.lost_packets += 1;
                }
                return Err(format!(
                    "{}: packet {} lost: {e}",
                    path.display(),
                    h.net_seq_num
                ));
            }
        }
    }
}
