//! The relay against peers made of the codec (a consumer daemon, live viewers, garbage): a
//! packet torn by its producer's disconnection is lost alone, several viewers read one
//! session, bytes that are not the protocol close their connection only, and trace-file
//! rotation wraps as lttng-relayd's does.

use std::net::SocketAddr;
use std::path::Path;

use relay::{Config, Relay};
use relay_proto::control::{
    self, AddStream, ControlCommand, ControlReply, CreateSession, DataHeader, RelayIndex,
};
use relay_proto::viewer::{self, Connect, ViewerReply, ViewerRequest};
use relay_proto::DecodeError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start(dir: &Path) -> [SocketAddr; 3] {
    start_with_registry(dir).await.0
}

async fn start_with_registry(dir: &Path) -> ([SocketAddr; 3], std::sync::Arc<relay::Registry>) {
    let mut config = Config::new(dir.to_path_buf());
    (config.control_port, config.data_port, config.live_port) = (0, 0, 0);
    let relay = Relay::bind(&config).await.unwrap();
    let addrs = relay.local_addrs();
    // Localhost unless asked otherwise.
    assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    let registry = relay.registry();
    tokio::spawn(relay.serve(std::future::pending()));
    (addrs, registry)
}

/// Reads from `sock` until `decode` accepts the bytes.
async fn read_reply<T>(
    sock: &mut TcpStream,
    decode: impl Fn(&[u8]) -> Result<(T, usize), DecodeError>,
) -> T {
    let mut buf = Vec::new();
    loop {
        match decode(&buf) {
            Ok((r, n)) => {
                assert_eq!(n, buf.len(), "one reply at a time");
                return r;
            }
            Err(e) if e.is_incomplete() => {
                let mut b = vec![0; 65536];
                let n = sock.read(&mut b).await.unwrap();
                assert!(n > 0, "the relay closed the connection");
                buf.extend_from_slice(&b[..n]);
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// Whether the relay closed `sock` (reading gives EOF or a reset, after any reply).
async fn closed(sock: &mut TcpStream) -> bool {
    let mut b = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, sock.read(&mut b)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

struct Consumer {
    control: TcpStream,
    data: TcpStream,
    session: u64,
    stream: u64,
    metadata: u64,
}

impl Consumer {
    async fn call(&mut self, c: ControlCommand) -> ControlReply {
        let mut out = Vec::new();
        c.encode(&mut out);
        self.control.write_all(&out).await.unwrap();
        let cmd = c.cmd();
        read_reply(&mut self.control, |b| ControlReply::decode(cmd, b)).await
    }

    /// A live session `name` with one data stream and its metadata.
    async fn new(addrs: &[SocketAddr; 3], name: &str) -> Consumer {
        Consumer::with_tracefiles(addrs, name, 0, 0).await
    }

    /// [`Consumer::new`] with trace-file rotation: files of `size` bytes, `count` kept.
    async fn with_tracefiles(
        addrs: &[SocketAddr; 3],
        name: &str,
        size: u64,
        count: u64,
    ) -> Consumer {
        let mut c = Consumer {
            control: TcpStream::connect(addrs[0]).await.unwrap(),
            data: TcpStream::connect(addrs[1]).await.unwrap(),
            session: 0,
            stream: 0,
            metadata: 0,
        };
        let v = c
            .call(ControlCommand::Version {
                major: 2,
                minor: 13,
            })
            .await;
        assert_eq!(
            v,
            ControlReply::Version {
                major: 2,
                minor: 13
            }
        );
        let r = c
            .call(ControlCommand::CreateSession(CreateSession {
                session_name: name.into(),
                hostname: "host".into(),
                base_path: String::new(),
                live_timer: 100_000,
                snapshot: false,
                session_name_contains_creation_time: false,
                sessiond_uuid: [7; 16],
                session_id: 1,
                creation_time: 1_700_000_000,
                current_chunk_id: Some(0),
            }))
            .await;
        let ControlReply::CreateSession {
            session_id,
            ret_code: control::RET_OK,
            output_path,
        } = r
        else {
            panic!("{r:?}")
        };
        assert!(
            output_path.starts_with(&format!("host/{name}-2023")),
            "{output_path}"
        );
        c.session = session_id;
        for (name, slot) in [("chan_0", 0), ("metadata", 1)] {
            let r = c
                .call(ControlCommand::AddStream(AddStream {
                    channel_name: name.into(),
                    pathname: "ust/uid/0/64-bit".into(),
                    tracefile_size: size,
                    tracefile_count: count,
                    trace_chunk_id: 0,
                }))
                .await;
            let ControlReply::AddStream {
                handle,
                ret_code: control::RET_OK,
            } = r
            else {
                panic!("{r:?}")
            };
            if slot == 0 {
                c.stream = handle;
            } else {
                c.metadata = handle;
            }
        }
        assert_eq!(
            c.call(ControlCommand::StreamsSent).await,
            ControlReply::Generic {
                ret_code: control::RET_OK
            }
        );
        let mut out = Vec::new();
        ControlCommand::SendMetadata {
            stream_id: c.metadata,
            padding_size: 10,
            payload: b"/* CTF 1.8 */".to_vec(),
        }
        .encode(&mut out);
        c.control.write_all(&out).await.unwrap();
        c
    }

    /// Packet `seq` (`size` bytes of `seq`) and its index.
    async fn packet(&mut self, seq: u64, size: u32) {
        self.data_only(seq, size).await;
        self.index_only(seq, size).await;
    }

    /// Packet `seq` without its index.
    async fn data_only(&mut self, seq: u64, size: u32) {
        let mut out = Vec::new();
        DataHeader {
            circuit_id: 0,
            stream_id: self.stream,
            net_seq_num: seq,
            data_size: size - 16,
            padding_size: 16,
        }
        .encode(&mut out);
        out.extend(std::iter::repeat_n(seq as u8, size as usize - 16));
        self.data.write_all(&out).await.unwrap();
    }

    /// The index of packet `seq`.
    async fn index_only(&mut self, seq: u64, size: u32) {
        let i = RelayIndex {
            relay_stream_id: self.stream,
            net_seq_num: seq,
            packet_size: u64::from(size) * 8,
            content_size: u64::from(size - 16) * 8,
            timestamp_begin: seq * 10,
            timestamp_end: seq * 10 + 9,
            packet_seq_num: seq,
            ..RelayIndex::default()
        };
        assert_eq!(
            self.call(ControlCommand::SendIndex(i)).await,
            ControlReply::Generic {
                ret_code: control::RET_OK
            }
        );
    }
}

struct Viewer(TcpStream);

impl Viewer {
    async fn call(&mut self, q: ViewerRequest) -> ViewerReply {
        let mut out = Vec::new();
        q.encode(&mut out);
        self.0.write_all(&out).await.unwrap();
        let cmd = q.cmd();
        read_reply(&mut self.0, |b| ViewerReply::decode(cmd, b)).await
    }

    /// Connected, attached to `session` from its beginning; the streams' ids (data, metadata).
    async fn attach(addrs: &[SocketAddr; 3], session: u64) -> (Viewer, u64, u64) {
        let mut v = Viewer(TcpStream::connect(addrs[2]).await.unwrap());
        let r = v
            .call(ViewerRequest::Connect(Connect {
                viewer_session_id: u64::MAX,
                major: 2,
                minor: 4,
                conn_type: 1,
            }))
            .await;
        assert!(
            matches!(r, ViewerReply::Connect(Connect { major: 2, .. })),
            "{r:?}"
        );
        assert_eq!(
            v.call(ViewerRequest::CreateSession).await,
            ViewerReply::CreateSession {
                status: viewer::CREATE_SESSION_OK
            }
        );
        let r = v
            .call(ViewerRequest::AttachSession {
                session_id: session,
                offset: 0,
                seek: viewer::SEEK_BEGINNING,
            })
            .await;
        let ViewerReply::Attach {
            status: viewer::ATTACH_OK,
            streams,
        } = r
        else {
            panic!("{r:?}")
        };
        let data = streams.iter().find(|s| !s.metadata).unwrap().id;
        let meta = streams.iter().find(|s| s.metadata).unwrap().id;
        let r = v.call(ViewerRequest::GetMetadata { stream_id: meta }).await;
        assert_eq!(
            r,
            ViewerReply::Metadata {
                status: viewer::METADATA_OK,
                data: [&b"/* CTF 1.8 */"[..], &[0; 10]].concat()
            }
        );
        (v, data, meta)
    }

    /// The next index, waiting while the relay says to retry.
    async fn next(&mut self, stream_id: u64) -> viewer::ViewerIndex {
        for _ in 0..200 {
            let ViewerReply::Index(i) = self.call(ViewerRequest::GetNextIndex { stream_id }).await
            else {
                panic!()
            };
            if i.status != viewer::INDEX_RETRY {
                return i;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("no index");
    }

    /// Packet bytes of index `i`.
    async fn packet(&mut self, stream_id: u64, i: &viewer::ViewerIndex) -> Vec<u8> {
        let r = self
            .call(ViewerRequest::GetPacket {
                stream_id,
                offset: i.offset,
                len: (i.packet_size / 8) as u32,
            })
            .await;
        let ViewerReply::Packet {
            status: viewer::PACKET_OK,
            data,
            ..
        } = r
        else {
            panic!("{r:?}")
        };
        data
    }
}

#[tokio::test]
async fn a_torn_packet_is_lost_alone_and_two_viewers_read_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (addrs, registry) = start_with_registry(dir.path()).await;
    let mut a = Consumer::new(&addrs, "a").await;
    let (mut v1, d1, _) = Viewer::attach(&addrs, a.session).await;
    let (mut v2, d2, _) = Viewer::attach(&addrs, a.session).await;
    a.packet(0, 4096).await;
    a.packet(1, 8192).await;
    // Packet 2: its header and half its bytes, then the producer dies.
    let mut out = Vec::new();
    DataHeader {
        circuit_id: 0,
        stream_id: a.stream,
        net_seq_num: 2,
        data_size: 4000,
        padding_size: 96,
    }
    .encode(&mut out);
    out.extend(std::iter::repeat_n(2u8, 2000));
    a.data.write_all(&out).await.unwrap();
    drop(a.data);
    // Another session keeps streaming meanwhile.
    let mut b = Consumer::new(&addrs, "b").await;
    b.packet(0, 4096).await;
    let (mut vb, db, _) = Viewer::attach(&addrs, b.session).await;
    let i = vb.next(db).await;
    assert_eq!(vb.packet(db, &i).await[..4080], [0u8; 4080][..]);
    // Both viewers of session a get both whole packets, then the end once its control
    // connection is gone.
    drop(a.control);
    for (v, d) in [(&mut v1, d1), (&mut v2, d2)] {
        for (seq, size) in [(0u8, 4096usize), (1, 8192)] {
            let i = v.next(d).await;
            assert_eq!(i.status, viewer::INDEX_OK);
            let bytes = v.packet(d, &i).await;
            assert_eq!(bytes.len(), size);
            assert!(
                bytes[..size - 16].iter().all(|&x| x == seq)
                    && bytes[size - 16..].iter().all(|&x| x == 0)
            );
        }
        assert_eq!(v.next(d).await.status, viewer::INDEX_HUP);
    }
    // The ended session is forgotten (its files closed) once its viewers are gone; the
    // other one stays.
    let names = |r: &relay::Registry| r.sessions().into_iter().map(|s| s.2).collect::<Vec<_>>();
    assert_eq!(names(&registry), ["a", "b"]);
    drop((v1, v2));
    for _ in 0..100 {
        if names(&registry) == ["b"] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(names(&registry), ["b"]);
    // On disk: the two whole packets, indexed; the torn one cut off.
    let out_dir = std::fs::read_dir(dir.path().join("host"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("a-"))
        .unwrap()
        .path();
    let stream = out_dir.join("ust/uid/0/64-bit/chan_0");
    assert_eq!(std::fs::metadata(&stream).unwrap().len(), 4096 + 8192);
    let idx = std::fs::read(out_dir.join("ust/uid/0/64-bit/index/chan_0.idx")).unwrap();
    assert_eq!(relay_proto::index::decode_header(&idx), Ok(72));
    assert_eq!(idx.len(), 16 + 2 * 72);
    let (second, _) = relay_proto::index::PacketIndex::decode(&idx[16 + 72..], 72).unwrap();
    assert_eq!(
        (second.offset, second.packet_size, second.packet_seq_num),
        (4096, 8192 * 8, 1)
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&stream).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&out_dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[tokio::test]
async fn garbage_on_each_port_closes_that_connection_only() {
    let dir = tempfile::tempdir().unwrap();
    let addrs = start(dir.path()).await;
    let mut a = Consumer::new(&addrs, "a").await;
    let (mut v, d, _) = Viewer::attach(&addrs, a.session).await;
    a.packet(0, 4096).await;
    let mut version = Vec::new();
    ControlCommand::Version {
        major: 2,
        minor: 13,
    }
    .encode(&mut version);
    let mut huge = Vec::new();
    control::ControlHeader {
        circuit_id: 0,
        data_size: u64::MAX / 2,
        cmd: control::cmd::CREATE_SESSION,
        cmd_version: 0,
    }
    .encode(&mut huge);
    let mut unknown_stream = Vec::new();
    DataHeader {
        circuit_id: 0,
        stream_id: 999,
        net_seq_num: 0,
        data_size: 10,
        padding_size: 0,
    }
    .encode(&mut unknown_stream);
    let mut viewer_first = Vec::new();
    ViewerRequest::GetNextIndex { stream_id: d }.encode(&mut viewer_first);
    let noise: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: Vec<(usize, Vec<u8>)> = vec![
        (0, noise.clone()),
        (0, [&version[..], &huge[..]].concat()),
        // Another connection's stream.
        (0, {
            let mut b = version.clone();
            ControlCommand::CloseStream {
                stream_id: a.stream,
                last_net_seq_num: 0,
            }
            .encode(&mut b);
            b
        }),
        (1, noise.clone()),
        (1, unknown_stream),
        // Another connection's stream, half a packet: refused, the stream untouched.
        (1, {
            let mut b = Vec::new();
            DataHeader {
                circuit_id: 0,
                stream_id: a.stream,
                net_seq_num: 1,
                data_size: 4000,
                padding_size: 96,
            }
            .encode(&mut b);
            b.extend([9u8; 100]);
            b
        }),
        (2, noise.clone()),
        (2, viewer_first),
        (2, vec![0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 77, 0, 0, 0, 0]),
    ];
    for (port, bytes) in cases {
        let mut s = TcpStream::connect(addrs[port]).await.unwrap();
        s.write_all(&bytes).await.unwrap();
        assert!(
            closed(&mut s).await,
            "port {port}: {:?}…",
            &bytes[..bytes.len().min(16)]
        );
    }
    // Truncated: half a header, then the peer leaves.
    for addr in addrs {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&[0, 0, 0]).await.unwrap();
        drop(s);
    }
    // Nothing else noticed: the session streams on, its viewer reads it.
    a.packet(1, 4096).await;
    for seq in [0u8, 1] {
        let i = v.next(d).await;
        assert_eq!(v.packet(d, &i).await[0], seq);
    }
    let b = Consumer::new(&addrs, "b").await;
    assert_ne!(b.session, a.session);
}

/// Rotation, as a session daemon drives it: a new chunk, the streams moved to it from a
/// packet on (the one before still to come), the old chunk closed: it is archived once every
/// packet of it is written, and a viewer reads on across the two files.
#[tokio::test]
async fn a_rotation_archives_the_old_chunk_and_viewers_read_across_it() {
    let dir = tempfile::tempdir().unwrap();
    let addrs = start(dir.path()).await;
    let mut a = Consumer::new(&addrs, "a").await;
    let (mut v, d, _) = Viewer::attach(&addrs, a.session).await;
    a.packet(0, 4096).await;
    let ok = ControlReply::Generic {
        ret_code: control::RET_OK,
    };
    let r = a
        .call(ControlCommand::CreateTraceChunk {
            chunk_id: 1,
            creation_timestamp: 1_700_000_100,
            override_name: None,
        })
        .await;
    assert_eq!(r, ok);
    let r = a
        .call(ControlCommand::RotateStreams {
            new_chunk_id: Some(1),
            layout: control::OptionalLayout::Pad7,
            positions: vec![
                control::RotationPosition {
                    stream_id: a.stream,
                    rotate_at_seq_num: 2,
                },
                control::RotationPosition {
                    stream_id: a.metadata,
                    rotate_at_seq_num: 0,
                },
            ],
        })
        .await;
    assert_eq!(r, ok);
    let exists = |c| ControlCommand::TraceChunkExists { chunk_id: c };
    a.packet(1, 4096).await;
    a.packet(2, 8192).await;
    let r = a
        .call(ControlCommand::CloseTraceChunk {
            chunk_id: 0,
            close_timestamp: 1_700_000_200,
            close_command: Some(control::close_command::MOVE_TO_COMPLETED),
        })
        .await;
    let ControlReply::CloseTraceChunk {
        ret_code: control::RET_OK,
        path,
    } = r
    else {
        panic!("{r:?}")
    };
    // As lttng-relayd: the session's path for the first chunk closed.
    assert!(path.starts_with("host/a-2023"), "{path}");
    assert_eq!(
        a.call(exists(0)).await,
        ControlReply::TraceChunkExists {
            ret_code: control::RET_OK,
            exists: false
        }
    );
    assert_eq!(
        a.call(exists(1)).await,
        ControlReply::TraceChunkExists {
            ret_code: control::RET_OK,
            exists: true
        }
    );
    // On disk: chunk 0 in archives/BEGIN-END-0 with packets 0 and 1, chunk 1 in its own
    // directory, named BEGIN-1, with packet 2; nothing else.
    let session = dir.path().join(&path);
    let mut top: Vec<String> = std::fs::read_dir(&session)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top.len(), 2, "{top:?}");
    assert_eq!(top[1], "archives");
    let chunk1 = top[0].clone();
    assert!(chunk1.ends_with("-1") && chunk1.len() == "20231114T221500+0000-1".len());
    let archived: Vec<_> = std::fs::read_dir(session.join("archives"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(archived.len(), 1);
    assert!(archived[0].to_string_lossy().ends_with("-0"));
    let len = |p: &Path| {
        std::fs::metadata(p.join("ust/uid/0/64-bit/chan_0"))
            .unwrap()
            .len()
    };
    assert_eq!(len(&archived[0]), 2 * 4096);
    assert_eq!(len(&session.join(&chunk1)), 8192);
    let idx = std::fs::read(
        session
            .join(&chunk1)
            .join("ust/uid/0/64-bit/index/chan_0.idx"),
    )
    .unwrap();
    let (first, _) = relay_proto::index::PacketIndex::decode(&idx[16..], 72).unwrap();
    assert_eq!((first.offset, first.packet_seq_num), (0, 2));
    // The viewer reads the three packets, the last one from the new file.
    for (seq, size) in [(0u8, 4096usize), (1, 4096), (2, 8192)] {
        let i = v.next(d).await;
        assert_eq!(i.status, viewer::INDEX_OK);
        let bytes = v.packet(d, &i).await;
        assert_eq!(bytes.len(), size);
        assert!(bytes[..size - 16].iter().all(|&x| x == seq), "packet {seq}");
    }
}

/// Index entries of `idx`: (offset, packet sequence number).
fn index_entries(idx: &Path) -> Vec<(u64, u64)> {
    let b = std::fs::read(idx).unwrap_or_else(|e| panic!("{}: {e}", idx.display()));
    b[16..]
        .chunks(72)
        .map(|e| {
            let (i, _) = relay_proto::index::PacketIndex::decode(e, 72).unwrap();
            (i.offset, i.packet_seq_num)
        })
        .collect()
}

#[tokio::test]
async fn tracefile_rotation_wraps_deletes_the_oldest_and_viewers_follow() {
    let dir = tempfile::tempdir().unwrap();
    let (addrs, reg) = start_with_registry(dir.path()).await;
    // Files of 8 KiB, 2 kept; packets of 4 KiB: two per file.
    let mut a = Consumer::with_tracefiles(&addrs, "t", 8192, 2).await;
    let (mut v, d, _) = Viewer::attach(&addrs, a.session).await;
    a.packet(0, 4096).await;
    let i = v.next(d).await;
    assert_eq!(i.status, viewer::INDEX_OK);
    assert!(v.packet(d, &i).await[..4080].iter().all(|&x| x == 0));
    // Packet 2 starts the second file before packet 1's index comes: that index is still
    // packet 1's file's.
    a.data_only(1, 4096).await;
    a.data_only(2, 4096).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    a.index_only(1, 4096).await;
    a.index_only(2, 4096).await;
    let session = dir.path().join(&reg.sessions()[0].3);
    let stream_dir = session.join("ust/uid/0/64-bit");
    let idx = |n: &str| stream_dir.join("index").join(format!("chan_0_{n}.idx"));
    assert_eq!(index_entries(&idx("0")), [(0, 0), (4096, 1)]);
    assert_eq!(index_entries(&idx("1")), [(0, 2)]);
    // The viewer takes packet 1's index; packet 4 then wraps to file 0, deleting the first
    // file: the packet indexed stays readable, as lttng-relayd keeps the file opened at the
    // index.
    let i = v.next(d).await;
    assert_eq!(i.status, viewer::INDEX_OK);
    a.packet(3, 4096).await;
    a.packet(4, 4096).await;
    assert!(v.packet(d, &i).await[..4080].iter().all(|&x| x == 1));
    // Packet 6 deletes the second file, with packets 2 and 3 the viewer has not read: the
    // viewer goes on from the oldest packet kept.
    a.packet(5, 4096).await;
    a.packet(6, 4096).await;
    for seq in [4u8, 5, 6] {
        let i = v.next(d).await;
        assert_eq!(i.status, viewer::INDEX_OK);
        let bytes = v.packet(d, &i).await;
        assert!(bytes[..4080].iter().all(|&x| x == seq), "packet {seq}");
    }
    let mut files: Vec<String> = std::fs::read_dir(&stream_dir)
        .unwrap()
        .chain(std::fs::read_dir(stream_dir.join("index")).unwrap())
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "chan_0_0",
            "chan_0_0.idx",
            "chan_0_1",
            "chan_0_1.idx",
            "metadata"
        ]
    );
    assert_eq!(index_entries(&idx("0")), [(0, 4), (4096, 5)]);
    assert_eq!(index_entries(&idx("1")), [(0, 6)]);
    let data = std::fs::read(stream_dir.join("chan_0_1")).unwrap();
    assert_eq!(data.len(), 4096);
    assert!(data[..4080].iter().all(|&x| x == 6));
}

/// A consumer daemon of lttng-tools before 2.11 (other session and stream formats) is told
/// the relay's version, then its connection is closed.
#[tokio::test]
async fn protocols_older_than_2_11_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let addrs = start(dir.path()).await;
    let mut sock = TcpStream::connect(addrs[0]).await.unwrap();
    let mut out = Vec::new();
    ControlCommand::Version {
        major: 2,
        minor: 10,
    }
    .encode(&mut out);
    sock.write_all(&out).await.unwrap();
    let r = read_reply(&mut sock, |b| {
        ControlReply::decode(control::cmd::VERSION, b)
    })
    .await;
    assert_eq!(
        r,
        ControlReply::Version {
            major: 2,
            minor: 13
        }
    );
    assert!(closed(&mut sock).await);
}
