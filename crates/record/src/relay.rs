//! Streaming a recording to a relay (`lttng-relayd`, `tracekit relay`) over LTTng's
//! consumer → relay protocol, as lttng-consumerd does: a control connection (session,
//! streams, metadata, packet indexes and live beacons) and a data connection (the packets),
//! the bytes encoded by `relay_proto::control`. The packets reach it as a [`ctf::writer`]
//! [`PacketTap`]: the recorder still writes its local trace, the relay gets each packet as it
//! is closed.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use ctf::index::PacketEntry;
use ctf::writer::PacketTap;
use relay_proto::control::{
    self, AddStream, ControlCommand, ControlReply, CreateSession, DataHeader, RelayIndex,
};
use relay_proto::DecodeError;

use crate::Error;

/// Where to stream: `net://HOST[:CTRL[:DATA]]` (ports 5342 and 5343 by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayTarget {
    /// The relay's host (an IPv6 address without its brackets).
    pub host: String,
    /// Its control port.
    pub control_port: u16,
    /// Its data port.
    pub data_port: u16,
}

impl std::str::FromStr for RelayTarget {
    type Err = String;

    /// Parses `net://HOST[:CTRL[:DATA]]` (`net4://`, `net6://`, and `[IPv6]` hosts too).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("bad relay URL {s:?}: {why}");
        let rest = ["net://", "net4://", "net6://"]
            .iter()
            .find_map(|p| s.strip_prefix(p))
            .ok_or_else(|| bad("it must start with net://"))?
            .trim_end_matches('/');
        let (host, ports) = if let Some(v6) = rest.strip_prefix('[') {
            let end = v6.find(']').ok_or_else(|| bad("no closing ']'"))?;
            (&v6[..end], v6[end + 1..].strip_prefix(':').unwrap_or(""))
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, p),
                None => (rest, ""),
            }
        };
        if host.is_empty() || host.contains('/') {
            return Err(bad("expected net://HOST[:CONTROL_PORT[:DATA_PORT]]"));
        }
        let port = |p: Option<&str>, default: u16| -> Result<u16, String> {
            match p {
                None | Some("") => Ok(default),
                Some(p) => p
                    .parse::<u16>()
                    .ok()
                    .filter(|&n| n != 0)
                    .ok_or_else(|| bad(&format!("bad port {p:?}"))),
            }
        };
        let mut it = ports.splitn(2, ':');
        let control_port = port(it.next(), 5342)?;
        let data_port = port(it.next(), control_port.wrapping_add(1).max(1))?;
        Ok(RelayTarget {
            host: host.to_owned(),
            control_port,
            data_port,
        })
    }
}

/// After the relay has every byte: how long it is given to read the last packets before their
/// streams are closed (see [`RelayTap::finish`]).
const CLOSE_GRACE: Duration = Duration::from_millis(100);

/// How long the relay may take to answer.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// A recording streamed to a relay: one relay session, one relay stream per trace stream
/// plus the metadata stream.
pub struct RelayTap {
    name: String,
    control: TcpStream,
    data: TcpStream,
    /// The relay's handle of each data stream, by position.
    handles: Vec<u64>,
    metadata: u64,
    /// Per stream: the sequence number of the last packet sent.
    last_seq: Vec<Option<u64>>,
    /// The relay's id of the session.
    session_id: u64,
    buf: Vec<u8>,
}

fn connect(host: &str, port: u16) -> Result<TcpStream, std::io::Error> {
    let mut last = None;
    for a in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, REPLY_TIMEOUT) {
            Ok(s) => {
                s.set_read_timeout(Some(REPLY_TIMEOUT))?;
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address")))
}

impl RelayTap {
    /// Connects to the relay and creates session `session` of host `hostname` (live with
    /// `live_timer_us` > 0) with the data streams `channels` (file names) and a metadata
    /// stream, all under `pathname` (`kernel`) in the session's directory.
    pub fn connect(
        target: &RelayTarget,
        session: &str,
        hostname: &str,
        live_timer_us: u32,
        pathname: &str,
        channels: &[String],
    ) -> Result<RelayTap, Error> {
        let name = format!("relay {}:{}", target.host, target.control_port);
        let io = |what: &str, e: std::io::Error| Error::Invalid(format!("{name}: {what}: {e}"));
        let control = connect(&target.host, target.control_port)
            .map_err(|e| io("cannot connect to the control port", e))?;
        let data = connect(&target.host, target.data_port).map_err(|e| {
            io(
                &format!("cannot connect to the data port {}", target.data_port),
                e,
            )
        })?;
        let mut tap = RelayTap {
            name: name.clone(),
            control,
            data,
            handles: Vec::new(),
            metadata: 0,
            last_seq: vec![None; channels.len()],
            session_id: 0,
            buf: Vec::new(),
        };
        let fail = |tap: &RelayTap, what: &str, why: String| {
            Error::Invalid(format!("{}: {what}: {why}", tap.name))
        };
        let reply = tap
            .call(ControlCommand::Version {
                major: control::VERSION_MAJOR,
                minor: control::VERSION_MINOR,
            })
            .map_err(|e| io("VERSION", e))?;
        match reply {
            Some(ControlReply::Version { major, minor })
                if major == control::VERSION_MAJOR && minor >= control::MIN_MINOR => {}
            Some(ControlReply::Version { major, minor }) => {
                return Err(fail(
                    &tap,
                    "VERSION",
                    format!(
                        "the relay speaks {major}.{minor}, this recorder {}.{}-{}",
                        control::VERSION_MAJOR,
                        control::MIN_MINOR,
                        control::VERSION_MINOR
                    ),
                ))
            }
            other => return Err(fail(&tap, "VERSION", format!("unexpected reply {other:?}"))),
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut uuid = [0u8; 16];
        uuid[..8].copy_from_slice(&now.to_be_bytes());
        uuid[8..12].copy_from_slice(&std::process::id().to_be_bytes());
        let reply = tap
            .call(ControlCommand::CreateSession(CreateSession {
                session_name: session.to_owned(),
                hostname: hostname.to_owned(),
                base_path: String::new(),
                live_timer: live_timer_us,
                snapshot: false,
                session_name_contains_creation_time: false,
                sessiond_uuid: uuid,
                session_id: u64::from(std::process::id()),
                creation_time: now,
                current_chunk_id: None,
            }))
            .map_err(|e| io("CREATE_SESSION", e))?;
        match reply {
            Some(ControlReply::CreateSession {
                ret_code: control::RET_OK,
                session_id,
                ..
            }) => tap.session_id = session_id,
            other => return Err(fail(&tap, "CREATE_SESSION", format!("refused ({other:?})"))),
        }
        let reply = tap
            .call(ControlCommand::CreateTraceChunk {
                chunk_id: 0,
                creation_timestamp: now,
                override_name: None,
            })
            .map_err(|e| io("CREATE_TRACE_CHUNK", e))?;
        tap.check_ok("CREATE_TRACE_CHUNK", reply)?;
        for ch in channels.iter().map(String::as_str).chain(["metadata"]) {
            let reply = tap
                .call(ControlCommand::AddStream(AddStream {
                    channel_name: ch.to_owned(),
                    pathname: pathname.to_owned(),
                    tracefile_size: 0,
                    tracefile_count: 0,
                    trace_chunk_id: 0,
                }))
                .map_err(|e| io("ADD_STREAM", e))?;
            match reply {
                Some(ControlReply::AddStream {
                    handle,
                    ret_code: control::RET_OK,
                }) => {
                    if ch == "metadata" {
                        tap.metadata = handle;
                    } else {
                        tap.handles.push(handle);
                    }
                }
                other => {
                    return Err(fail(
                        &tap,
                        "ADD_STREAM",
                        format!("stream {ch}: refused ({other:?})"),
                    ))
                }
            }
        }
        let reply = tap
            .call(ControlCommand::StreamsSent)
            .map_err(|e| io("STREAMS_SENT", e))?;
        tap.check_ok("STREAMS_SENT", reply)?;
        Ok(tap)
    }

    fn check_ok(&self, what: &str, reply: Option<ControlReply>) -> Result<(), Error> {
        match reply {
            Some(ControlReply::Generic {
                ret_code: control::RET_OK,
            }) => Ok(()),
            other => Err(Error::Invalid(format!(
                "{}: {what}: refused ({other:?})",
                self.name
            ))),
        }
    }

    /// Sends `c` on the control connection and reads its reply (none for metadata).
    fn call(&mut self, c: ControlCommand) -> std::io::Result<Option<ControlReply>> {
        let cmd = c.cmd();
        let has_reply = c.has_reply();
        self.buf.clear();
        c.encode(&mut self.buf);
        self.control.write_all(&self.buf)?;
        if !has_reply {
            return Ok(None);
        }
        let mut got: Vec<u8> = Vec::new();
        loop {
            match ControlReply::decode(cmd, &got) {
                Ok((r, _)) => return Ok(Some(r)),
                Err(DecodeError::Incomplete { needed }) => {
                    let have = got.len();
                    got.resize(have + needed, 0);
                    self.control.read_exact(&mut got[have..]).map_err(|e| {
                        std::io::Error::new(
                            e.kind(),
                            format!("reading the reply after {have} bytes: {e}"),
                        )
                    })?;
                }
                Err(e) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        e.to_string(),
                    ))
                }
            }
        }
    }

    fn index(&mut self, i: RelayIndex) -> std::io::Result<()> {
        match self.call(ControlCommand::SendIndex(i))? {
            Some(ControlReply::Generic {
                ret_code: control::RET_OK,
            }) => Ok(()),
            other => Err(std::io::Error::other(format!(
                "the relay refused a packet index ({other:?})"
            ))),
        }
    }

    /// Waits until the relay acknowledged every byte sent on the data connection.
    fn wait_sent(&self, deadline: std::time::Instant) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        loop {
            let mut queued: libc::c_int = 0;
            // SAFETY: TIOCOUTQ writes one int, the bytes not yet acknowledged, into `queued`.
            let r = unsafe { libc::ioctl(self.data.as_raw_fd(), libc::TIOCOUTQ, &mut queued) };
            if r != 0 || queued == 0 {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("{queued} bytes still unacknowledged by the relay"),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// One round of the data-pending check: whether the relay still waits for packets sent.
    fn data_pending(&mut self) -> std::io::Result<bool> {
        let session_id = self.session_id;
        self.call(ControlCommand::BeginDataPending { session_id })?;
        let mut pending = false;
        // The relay's end of the check counts the streams not checked as still receiving:
        // the metadata stream and streams without packets are said quiescent.
        let mut quiescent = vec![self.metadata];
        for i in 0..self.handles.len() {
            let Some(last) = self.last_seq[i] else {
                quiescent.push(self.handles[i]);
                continue;
            };
            let reply = self.call(ControlCommand::DataPending {
                stream_id: self.handles[i],
                last_net_seq_num: last,
            })?;
            pending |= matches!(reply, Some(ControlReply::Generic { ret_code: 1 }));
        }
        for stream_id in quiescent {
            self.call(ControlCommand::QuiescentControl { stream_id })?;
        }
        let reply = self.call(ControlCommand::EndDataPending { session_id })?;
        pending |= matches!(reply, Some(ControlReply::Generic { ret_code: 1 }));
        Ok(pending)
    }

    fn stream(&self, stream: usize) -> std::io::Result<u64> {
        self.handles.get(stream).copied().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("no relay stream for stream {stream}"),
            )
        })
    }
}

impl PacketTap for RelayTap {
    fn name(&self) -> &str {
        &self.name
    }

    fn metadata(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.call(ControlCommand::SendMetadata {
            stream_id: self.metadata,
            padding_size: 0,
            payload: bytes.to_vec(),
        })?;
        Ok(())
    }

    fn packet(&mut self, stream: usize, bytes: &[u8], e: &PacketEntry) -> std::io::Result<()> {
        let handle = self.stream(stream)?;
        let seq = self.last_seq[stream].map_or(0, |s| s + 1);
        let mut head = Vec::with_capacity(DataHeader::SIZE);
        DataHeader {
            circuit_id: 0,
            stream_id: handle,
            net_seq_num: seq,
            data_size: bytes.len() as u32,
            padding_size: 0,
        }
        .encode(&mut head);
        self.data.write_all(&head)?;
        self.data.write_all(bytes)?;
        self.last_seq[stream] = Some(seq);
        self.index(RelayIndex {
            relay_stream_id: handle,
            net_seq_num: seq,
            packet_size: e.packet_bits,
            content_size: e.content_bits,
            timestamp_begin: e.ts_begin,
            timestamp_end: e.ts_end,
            events_discarded: e.discarded,
            stream_id: e.stream_class_id,
            stream_instance_id: e.instance_id.unwrap_or(0),
            packet_seq_num: e.seq_num.unwrap_or(seq),
        })
    }

    fn quiet(&mut self, stream: usize, e: &PacketEntry) -> std::io::Result<()> {
        let handle = self.stream(stream)?;
        // As lttng-consumerd's beacons: no packet, the last packet's sequence number, the
        // time up to which the stream is known empty.
        self.index(RelayIndex {
            relay_stream_id: handle,
            net_seq_num: self.last_seq[stream].unwrap_or(0),
            timestamp_end: e.ts_end,
            ..RelayIndex::default()
        })
    }

    fn finish(&mut self, _last_seq: &[Option<u64>]) -> std::io::Result<()> {
        // As lttng-sessiond before it destroys a session: ask until the relay has every packet
        // sent on the data connection (it pairs each with its index). A stream closed before
        // would end live readers early (its last packets not yet counted as received).
        let deadline = std::time::Instant::now() + REPLY_TIMEOUT;
        self.wait_sent(deadline)?;
        while self.data_pending()? {
            if std::time::Instant::now() > deadline {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the relay still has data pending",
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // lttng-relayd 2.13 answers "not pending" once a packet's header is in, before its
        // bytes are, and pairs the packet with its index only then: a stream closed in
        // between ends live readers before its last packet. So the data connection is first
        // drained (the relay's kernel has every byte), and the relay given a moment to read it.
        self.wait_sent(deadline)?;
        std::thread::sleep(CLOSE_GRACE);
        let metadata = self.metadata;
        let mut closes = vec![(metadata, u64::MAX)];
        for (i, &h) in self.handles.iter().enumerate() {
            closes.push((h, self.last_seq[i].unwrap_or(u64::MAX)));
        }
        for (stream_id, last_net_seq_num) in closes {
            self.call(ControlCommand::CloseStream {
                stream_id,
                last_net_seq_num,
            })?;
        }
        self.data.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t: RelayTarget = "net://127.0.0.1".parse().unwrap();
        assert_eq!((t.control_port, t.data_port), (5342, 5343));
        let t: RelayTarget = "net://h:15342:15343".parse().unwrap();
        assert_eq!(
            (t.host.as_str(), t.control_port, t.data_port),
            ("h", 15342, 15343)
        );
        let t: RelayTarget = "net6://[::1]:7000".parse().unwrap();
        assert_eq!(
            (t.host.as_str(), t.control_port, t.data_port),
            ("::1", 7000, 7001)
        );
        for bad in ["tcp://h", "net://", "net://h:0", "net://h/x"] {
            assert!(bad.parse::<RelayTarget>().is_err(), "{bad}");
        }
    }
}
