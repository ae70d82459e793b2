//! The codec on bytes captured from lttng-tools 2.13 and babeltrace2 2.0.4 (see
//! tests/data/README.md), and encode → decode roundtrips of every message.

use proptest::prelude::*;
use relay_proto::control::{
    self, AddStream, ControlCommand, ControlReply, CreateSession, DataHeader, OptionalLayout,
    RelayIndex, RotationPosition,
};
use relay_proto::viewer::{
    self, Connect, SessionInfo, StreamInfo, ViewerIndex, ViewerReply, ViewerRequest,
};
use relay_proto::{index, DecodeError};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

/// Decodes `buf` to its end with `f`; every strict prefix of each message is incomplete.
fn decode_all<T: std::fmt::Debug>(
    buf: &[u8],
    mut f: impl FnMut(&[u8]) -> Result<(T, usize), DecodeError>,
) -> Vec<T> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let (m, n) = f(&buf[at..]).unwrap_or_else(|e| panic!("at byte {at}: {e}"));
        for cut in [0, 1, n / 2, n - 1] {
            if cut < n {
                assert!(
                    f(&buf[at..at + cut]).unwrap_err().is_incomplete(),
                    "prefix {cut} of {n}"
                );
            }
        }
        out.push(m);
        at += n;
    }
    out
}

#[test]
fn consumerd_2_13_control_session() {
    let c2s = data("control-2.13-c2s.bin");
    let cmds = decode_all(&c2s, ControlCommand::decode);
    // The session's life as lttng-tools 2.13 tells it.
    assert_eq!(
        cmds[0],
        ControlCommand::Version {
            major: 2,
            minor: 13
        }
    );
    assert_eq!(cmds[1], ControlCommand::GetConfiguration { query_flags: 0 });
    let ControlCommand::CreateSession(s) = &cmds[2] else {
        panic!("{:?}", cmds[2])
    };
    assert_eq!(
        (s.session_name.as_str(), s.hostname.as_str(), s.live_timer),
        ("s", "vm", 200_000)
    );
    assert!(matches!(
        cmds[3],
        ControlCommand::CreateTraceChunk {
            chunk_id: 0,
            override_name: None,
            ..
        }
    ));
    let streams: Vec<&AddStream> = cmds
        .iter()
        .filter_map(|c| match c {
            ControlCommand::AddStream(a) => Some(a),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = streams.iter().map(|a| a.channel_name.as_str()).collect();
    assert_eq!(names, ["channel0_0", "channel0_1", "metadata"]);
    assert!(streams.iter().all(|a| a.pathname == "ust/uid/0/64-bit"));
    let metadata: usize = cmds
        .iter()
        .map(|c| match c {
            ControlCommand::SendMetadata {
                payload,
                padding_size,
                ..
            } => payload.len() + *padding_size as usize,
            _ => 0,
        })
        .sum();
    assert_eq!(metadata % 4096, 0, "metadata packets are whole sub-buffers");
    let indexes = cmds
        .iter()
        .filter(|c| matches!(c, ControlCommand::SendIndex(_)))
        .count();
    assert!(indexes > 4);
    assert!(cmds.iter().any(|c| matches!(
        c,
        ControlCommand::RotateStreams {
            layout: OptionalLayout::Pad7,
            new_chunk_id: None,
            ..
        }
    )));
    assert!(matches!(
        cmds.last(),
        Some(ControlCommand::CloseStream { .. })
    ));
    // Re-encoded, each decodes to itself.
    for c in &cmds {
        let mut out = Vec::new();
        c.encode(&mut out);
        assert_eq!(&ControlCommand::decode(&out).unwrap().0, c);
    }
    // The replies, in order, each to its command.
    let s2c = data("control-2.13-s2c.bin");
    let mut at = 0;
    let mut replies = Vec::new();
    for c in cmds.iter().filter(|c| c.has_reply()) {
        let (r, n) = ControlReply::decode(c.cmd(), &s2c[at..]).unwrap();
        replies.push(r);
        at += n;
    }
    assert_eq!(at, s2c.len(), "every reply byte belongs to a command");
    assert_eq!(
        replies[0],
        ControlReply::Version {
            major: 2,
            minor: 13
        }
    );
    let ControlReply::CreateSession {
        output_path,
        ret_code,
        ..
    } = &replies[2]
    else {
        panic!()
    };
    assert_eq!(*ret_code, control::RET_OK);
    assert!(output_path.starts_with("vm/s-"), "{output_path}");
}

#[test]
fn consumerd_2_13_data_packets() {
    let buf = data("data-2.13-c2s.bin");
    let mut at = 0;
    let mut packets = 0;
    while at < buf.len() {
        let h = DataHeader::decode(&buf[at..]).unwrap();
        assert_eq!(
            (h.data_size + h.padding_size) % 4096,
            0,
            "whole sub-buffers"
        );
        // A CTF packet begins with its magic number.
        let body = &buf[at + DataHeader::SIZE..];
        assert_eq!(
            u32::from_le_bytes(body[..4].try_into().unwrap()),
            0xC1FC_1FC1
        );
        at += DataHeader::SIZE + h.data_size as usize;
        packets += 1;
    }
    assert_eq!(at, buf.len());
    assert!(packets >= 4);
}

#[test]
fn babeltrace2_live_session() {
    let c2s = data("live-bt2-c2s.bin");
    let reqs = decode_all(&c2s, ViewerRequest::decode);
    assert!(matches!(
        reqs[0],
        ViewerRequest::Connect(Connect {
            major: 2,
            minor: 4,
            conn_type: viewer::CLIENT_COMMAND,
            ..
        })
    ));
    assert_eq!(reqs[1], ViewerRequest::CreateSession);
    let s2c = data("live-bt2-s2c.bin");
    let mut at = 0;
    let mut events = Vec::new();
    for q in &reqs {
        let (r, n) =
            ViewerReply::decode(q.cmd(), &s2c[at..]).unwrap_or_else(|e| panic!("{q:?}: {e}"));
        at += n;
        let mut again = Vec::new();
        r.encode(&mut again);
        assert_eq!(again, s2c[at - n..at], "{q:?} re-encoded");
        events.push(r);
    }
    assert_eq!(at, s2c.len());
    // Attached before the streams were there: they come as new streams.
    let ViewerReply::Attach { status, .. } = &events[3] else {
        panic!("{:?}", events[3])
    };
    assert_eq!(*status, viewer::ATTACH_OK);
    let ViewerReply::NewStreams { streams, .. } = &events[4] else {
        panic!("{:?}", events[4])
    };
    assert!(streams
        .iter()
        .any(|s| s.metadata && s.channel_name == "metadata"));
    assert!(streams.iter().all(|s| s.path_name == "ust/uid/0/64-bit"));
    assert!(events.iter().any(|e| matches!(e, ViewerReply::Packet { status: viewer::PACKET_OK, data, .. } if data.len() == 4096)));
    assert!(events
        .iter()
        .any(|e| matches!(e, ViewerReply::Index(i) if i.status == viewer::INDEX_HUP)));
    for q in &reqs {
        let mut out = Vec::new();
        q.encode(&mut out);
        assert_eq!(&ViewerRequest::decode(&out).unwrap().0, q);
    }
    // Listing.
    let reqs = decode_all(&data("list-bt2-c2s.bin"), ViewerRequest::decode);
    let s2c = data("list-bt2-s2c.bin");
    let (_, n) = ViewerReply::decode(reqs[0].cmd(), &s2c).unwrap();
    let (list, m) = ViewerReply::decode(reqs[1].cmd(), &s2c[n..]).unwrap();
    assert_eq!(n + m, s2c.len());
    let ViewerReply::Sessions(list) = list else {
        panic!()
    };
    assert_eq!(
        (
            list[0].hostname.as_str(),
            list[0].session_name.as_str(),
            list[0].live_timer
        ),
        ("vm", "s", 200_000)
    );
}

#[test]
fn hostile_headers_are_refused_before_allocation() {
    let mut b = Vec::new();
    control::ControlHeader {
        circuit_id: 0,
        data_size: u64::MAX,
        cmd: 6,
        cmd_version: 0,
    }
    .encode(&mut b);
    let e = ControlCommand::decode(&b).unwrap_err();
    assert!(e.to_string().contains("data_size at byte 8"), "{e}");
    let mut d = Vec::new();
    DataHeader {
        circuit_id: 0,
        stream_id: 1,
        net_seq_num: 0,
        data_size: u32::MAX,
        padding_size: 0,
    }
    .encode(&mut d);
    assert!(DataHeader::decode(&d).is_err());
    // An unknown viewer command names itself.
    let mut v = vec![0; 16];
    v[11] = 42;
    let e = ViewerRequest::decode(&v).unwrap_err();
    assert!(e.to_string().contains("unknown viewer command 42"), "{e}");
    // A bad string in a stream addition.
    let mut a = Vec::new();
    ControlCommand::AddStream(AddStream {
        channel_name: "c".into(),
        pathname: "p".into(),
        tracefile_size: 0,
        tracefile_count: 0,
        trace_chunk_id: 0,
    })
    .encode(&mut a);
    let last = a.len() - 1;
    a[last] = b'x';
    let e = ControlCommand::decode(&a).unwrap_err();
    assert!(
        e.to_string().contains("ADD_STREAM: bad pathname at byte"),
        "{e}"
    );
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_./-]{1,40}"
}

fn command() -> impl Strategy<Value = ControlCommand> {
    let session = (
        name(),
        name(),
        "[a-z/]{0,20}",
        any::<u32>(),
        any::<bool>(),
        any::<bool>(),
        any::<[u8; 16]>(),
        any::<u64>(),
        any::<u64>(),
        any::<Option<u64>>(),
    )
        .prop_map(
            |(
                session_name,
                hostname,
                base_path,
                live_timer,
                snapshot,
                sc,
                sessiond_uuid,
                session_id,
                creation_time,
                current_chunk_id,
            )| {
                ControlCommand::CreateSession(CreateSession {
                    session_name,
                    hostname,
                    base_path,
                    live_timer,
                    snapshot,
                    session_name_contains_creation_time: sc,
                    sessiond_uuid,
                    session_id,
                    creation_time,
                    current_chunk_id,
                })
            },
        );
    let index = any::<[u64; 10]>().prop_map(|v| {
        ControlCommand::SendIndex(RelayIndex {
            relay_stream_id: v[0],
            net_seq_num: v[1],
            packet_size: v[2],
            content_size: v[3],
            timestamp_begin: v[4],
            timestamp_end: v[5],
            events_discarded: v[6],
            stream_id: v[7],
            stream_instance_id: v[8],
            packet_seq_num: v[9],
        })
    });
    let layout = prop_oneof![
        Just(OptionalLayout::Packed),
        Just(OptionalLayout::Pad3),
        Just(OptionalLayout::Pad7)
    ];
    prop_oneof![
        (any::<u32>(), any::<u32>())
            .prop_map(|(major, minor)| ControlCommand::Version { major, minor }),
        any::<u64>().prop_map(|query_flags| ControlCommand::GetConfiguration { query_flags }),
        session,
        (any::<u64>(), any::<u64>(), proptest::option::of(name())).prop_map(
            |(chunk_id, creation_timestamp, override_name)| ControlCommand::CreateTraceChunk {
                chunk_id,
                creation_timestamp,
                override_name
            }
        ),
        (name(), name(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
            |(channel_name, pathname, tracefile_size, tracefile_count, trace_chunk_id)| {
                ControlCommand::AddStream(AddStream {
                    channel_name,
                    pathname,
                    tracefile_size,
                    tracefile_count,
                    trace_chunk_id,
                })
            }
        ),
        Just(ControlCommand::StreamsSent),
        (
            any::<u64>(),
            0u32..100_000,
            proptest::collection::vec(any::<u8>(), 0..300)
        )
            .prop_map(
                |(stream_id, padding_size, payload)| ControlCommand::SendMetadata {
                    stream_id,
                    padding_size,
                    payload
                }
            ),
        index,
        (any::<u64>(), any::<u64>()).prop_map(|(stream_id, last_net_seq_num)| {
            ControlCommand::CloseStream {
                stream_id,
                last_net_seq_num,
            }
        }),
        (any::<u64>(), any::<u64>()).prop_map(|(stream_id, last_net_seq_num)| {
            ControlCommand::DataPending {
                stream_id,
                last_net_seq_num,
            }
        }),
        any::<u64>().prop_map(|stream_id| ControlCommand::QuiescentControl { stream_id }),
        any::<u64>().prop_map(|session_id| ControlCommand::BeginDataPending { session_id }),
        any::<u64>().prop_map(|session_id| ControlCommand::EndDataPending { session_id }),
        (any::<u64>(), any::<u64>())
            .prop_map(|(stream_id, version)| ControlCommand::ResetMetadata { stream_id, version }),
        (
            any::<Option<u64>>(),
            layout,
            proptest::collection::vec(any::<(u64, u64)>(), 0..5)
        )
            .prop_map(|(new_chunk_id, layout, p)| ControlCommand::RotateStreams {
                new_chunk_id,
                layout,
                positions: p
                    .into_iter()
                    .map(|(stream_id, rotate_at_seq_num)| RotationPosition {
                        stream_id,
                        rotate_at_seq_num
                    })
                    .collect(),
            }),
        (any::<u64>(), any::<u64>(), any::<Option<u32>>()).prop_map(
            |(chunk_id, close_timestamp, close_command)| ControlCommand::CloseTraceChunk {
                chunk_id,
                close_timestamp,
                close_command
            }
        ),
        any::<u64>().prop_map(|chunk_id| ControlCommand::TraceChunkExists { chunk_id }),
        (
            prop_oneof![
                Just(3u32),
                Just(4),
                Just(12),
                Just(14),
                Just(15),
                23u32..1000
            ],
            proptest::collection::vec(any::<u8>(), 0..50)
        )
            .prop_map(|(cmd, payload)| ControlCommand::Other { cmd, payload }),
    ]
}

fn reply() -> impl Strategy<Value = (u32, ControlReply)> {
    prop_oneof![
        any::<u32>()
            .prop_map(|ret_code| (control::cmd::SEND_INDEX, ControlReply::Generic { ret_code })),
        (any::<u32>(), any::<u32>()).prop_map(|(major, minor)| (
            control::cmd::VERSION,
            ControlReply::Version { major, minor }
        )),
        (any::<u64>(), any::<u32>(), name()).prop_map(|(session_id, ret_code, output_path)| (
            control::cmd::CREATE_SESSION,
            ControlReply::CreateSession {
                session_id,
                ret_code,
                output_path
            }
        )),
        (any::<u64>(), any::<u32>()).prop_map(|(handle, ret_code)| (
            control::cmd::ADD_STREAM,
            ControlReply::AddStream { handle, ret_code }
        )),
        (any::<u32>(), name()).prop_map(|(ret_code, path)| (
            control::cmd::CLOSE_TRACE_CHUNK,
            ControlReply::CloseTraceChunk { ret_code, path }
        )),
        (any::<u32>(), any::<bool>()).prop_map(|(ret_code, exists)| (
            control::cmd::TRACE_CHUNK_EXISTS,
            ControlReply::TraceChunkExists { ret_code, exists }
        )),
        (any::<u32>(), any::<u64>()).prop_map(|(ret_code, flags)| (
            control::cmd::GET_CONFIGURATION,
            ControlReply::GetConfiguration { ret_code, flags }
        )),
    ]
}

fn stream() -> impl Strategy<Value = StreamInfo> {
    (any::<u64>(), any::<u64>(), any::<bool>(), name(), name()).prop_map(
        |(id, ctf_trace_id, metadata, path_name, channel_name)| StreamInfo {
            id,
            ctf_trace_id,
            metadata,
            path_name,
            channel_name,
        },
    )
}

fn request() -> impl Strategy<Value = ViewerRequest> {
    prop_oneof![
        (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(
            |(viewer_session_id, major, minor, conn_type)| ViewerRequest::Connect(Connect {
                viewer_session_id,
                major,
                minor,
                conn_type
            })
        ),
        Just(ViewerRequest::ListSessions),
        (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(|(session_id, offset, seek)| {
            ViewerRequest::AttachSession {
                session_id,
                offset,
                seek,
            }
        }),
        any::<u64>().prop_map(|stream_id| ViewerRequest::GetNextIndex { stream_id }),
        (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(|(stream_id, offset, len)| {
            ViewerRequest::GetPacket {
                stream_id,
                offset,
                len,
            }
        }),
        any::<u64>().prop_map(|stream_id| ViewerRequest::GetMetadata { stream_id }),
        any::<u64>().prop_map(|session_id| ViewerRequest::GetNewStreams { session_id }),
        Just(ViewerRequest::CreateSession),
        any::<u64>().prop_map(|session_id| ViewerRequest::DetachSession { session_id }),
    ]
}

fn viewer_reply() -> impl Strategy<Value = (u32, ViewerReply)> {
    let session = (
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        name(),
        name(),
    )
        .prop_map(
            |(id, live_timer, clients, streams, hostname, session_name)| SessionInfo {
                id,
                live_timer,
                clients,
                streams,
                hostname,
                session_name,
            },
        );
    prop_oneof![
        (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(
            |(viewer_session_id, major, minor, conn_type)| (
                viewer::cmd::CONNECT,
                ViewerReply::Connect(Connect {
                    viewer_session_id,
                    major,
                    minor,
                    conn_type
                })
            )
        ),
        proptest::collection::vec(session, 0..4)
            .prop_map(|v| (viewer::cmd::LIST_SESSIONS, ViewerReply::Sessions(v))),
        (any::<u32>(), proptest::collection::vec(stream(), 0..3)).prop_map(|(status, streams)| (
            viewer::cmd::ATTACH_SESSION,
            ViewerReply::Attach { status, streams }
        )),
        (any::<u32>(), proptest::collection::vec(stream(), 0..3)).prop_map(|(status, streams)| (
            viewer::cmd::GET_NEW_STREAMS,
            ViewerReply::NewStreams { status, streams }
        )),
        (any::<[u64; 7]>(), any::<u32>(), any::<u32>()).prop_map(|(v, status, flags)| (
            viewer::cmd::GET_NEXT_INDEX,
            ViewerReply::Index(ViewerIndex {
                offset: v[0],
                packet_size: v[1],
                content_size: v[2],
                timestamp_begin: v[3],
                timestamp_end: v[4],
                events_discarded: v[5],
                stream_id: v[6],
                status,
                flags
            })
        )),
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..200)).prop_map(|(flags, data)| (
            viewer::cmd::GET_PACKET,
            ViewerReply::Packet {
                status: viewer::PACKET_OK,
                flags,
                data
            }
        )),
        (2u32..5, any::<u32>()).prop_map(|(status, flags)| (
            viewer::cmd::GET_PACKET,
            ViewerReply::Packet {
                status,
                flags,
                data: Vec::new()
            }
        )),
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..200)).prop_map(
            |(status, data)| (
                viewer::cmd::GET_METADATA,
                ViewerReply::Metadata { status, data }
            )
        ),
        any::<u32>().prop_map(|status| (
            viewer::cmd::CREATE_SESSION,
            ViewerReply::CreateSession { status }
        )),
        any::<u32>()
            .prop_map(|status| (viewer::cmd::DETACH_SESSION, ViewerReply::Detach { status })),
    ]
}

proptest! {
    #[test]
    fn control_commands_roundtrip(c in command()) {
        let mut out = Vec::new();
        c.encode(&mut out);
        prop_assert_eq!(ControlCommand::decode(&out), Ok((c, out.len())));
        prop_assert!(ControlCommand::decode(&out[..out.len() - 1]).unwrap_err().is_incomplete());
    }

    #[test]
    fn control_replies_roundtrip((cmd, r) in reply()) {
        let mut out = Vec::new();
        r.encode(&mut out);
        prop_assert_eq!(ControlReply::decode(cmd, &out), Ok((r, out.len())));
        prop_assert!(ControlReply::decode(cmd, &out[..out.len() - 1]).unwrap_err().is_incomplete());
    }

    #[test]
    fn data_headers_roundtrip(v in any::<(u64, u64, u64)>(), data_size in 0u32..(64 << 20), padding_size in 0u32..(64 << 20)) {
        let h = DataHeader { circuit_id: v.0, stream_id: v.1, net_seq_num: v.2, data_size, padding_size };
        let mut out = Vec::new();
        h.encode(&mut out);
        prop_assert_eq!(out.len(), DataHeader::SIZE);
        prop_assert_eq!(DataHeader::decode(&out), Ok(h));
    }

    #[test]
    fn viewer_requests_roundtrip(q in request()) {
        let mut out = Vec::new();
        q.encode(&mut out);
        prop_assert_eq!(ViewerRequest::decode(&out), Ok((q, out.len())));
        prop_assert!(ViewerRequest::decode(&out[..out.len() - 1]).unwrap_err().is_incomplete());
    }

    #[test]
    fn viewer_replies_roundtrip((cmd, r) in viewer_reply()) {
        let mut out = Vec::new();
        r.encode(&mut out);
        prop_assert_eq!(ViewerReply::decode(cmd, &out), Ok((r, out.len())));
        prop_assert!(ViewerReply::decode(cmd, &out[..out.len() - 1]).unwrap_err().is_incomplete());
    }

    #[test]
    fn index_entries_roundtrip(v in any::<[u64; 9]>()) {
        let i = index::PacketIndex { offset: v[0], packet_size: v[1], content_size: v[2], timestamp_begin: v[3], timestamp_end: v[4], events_discarded: v[5], stream_id: v[6], stream_instance_id: v[7], packet_seq_num: v[8] };
        let mut out = Vec::new();
        i.encode(&mut out);
        prop_assert_eq!(index::PacketIndex::decode(&out, index::ENTRY_SIZE), Ok((i, index::ENTRY_SIZE)));
        prop_assert_eq!(index::decode_header(&index::header()), Ok(index::ENTRY_SIZE));
    }

    #[test]
    fn garbage_never_panics(b in proptest::collection::vec(any::<u8>(), 0..600), cmd in 0u32..25) {
        let _ = ControlCommand::decode(&b);
        let _ = ControlReply::decode(cmd, &b);
        let _ = DataHeader::decode(&b);
        let _ = ViewerRequest::decode(&b);
        let _ = ViewerReply::decode(cmd, &b);
        let _ = index::decode_header(&b);
    }
}
