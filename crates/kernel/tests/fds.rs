//! Descriptor tables from system calls, on a generated trace with the lttng-modules 2.5 layout
//! (`sys_*` entries, one `exit_syscall`): socket, connect, dup2, fcntl, pipe, close.

use ctf::ir::{ArrayType, ByteOrder, EventClass, Field, FieldType, IntType, StructType};
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
use kernel::{FdOp, Notification, StateOptions};
use scenario::common::{statedump_fd, statedump_process, switch, Task};

const LE: ByteOrder = ByteOrder::Little;

fn int(n: &str) -> Field {
    Field {
        name: n.into(),
        ty: FieldType::Int(IntType::signed(64, LE)),
    }
}

fn bytes4(n: &str) -> Field {
    Field {
        name: n.into(),
        ty: FieldType::Array(ArrayType {
            elem: Box::new(FieldType::Int(IntType::unsigned(8, LE))),
            len: 4,
            min_align: 1,
            role: None,
        }),
    }
}

fn ints2(n: &str) -> Field {
    Field {
        name: n.into(),
        ty: FieldType::Array(ArrayType {
            elem: Box::new(FieldType::Int(IntType::signed(32, LE))),
            len: 2,
            min_align: 1,
            role: None,
        }),
    }
}

const SOCKET: u64 = 100;
const CONNECT: u64 = 101;
const DUP2: u64 = 102;
const FCNTL: u64 = 103;
const PIPE: u64 = 104;
const CLOSE: u64 = 105;
const EXIT: u64 = 106;
const EXIT_PIPE: u64 = 107;

mod common;
use common::run;

#[test]
fn descriptor_syscalls_2_5_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    let host = HostInfo {
        hostname: "h".into(),
        trace_uuid: [7; 16],
        clock_uuid: [8; 16],
        clock_offset_ns: 0,
        creation: "20240305T101500+0000".into(),
        trace_name: "t".into(),
        kernel_release: "3.10".into(),
    };
    let mut tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Large);
    let classes: Vec<(u64, &str, Vec<Field>)> = vec![
        (SOCKET, "sys_socket", vec![int("family"), int("type")]),
        (
            CONNECT,
            "sys_connect",
            vec![int("fd"), int("family"), int("dport"), bytes4("v4addr")],
        ),
        (DUP2, "sys_dup2", vec![int("oldfd"), int("newfd")]),
        (FCNTL, "sys_fcntl", vec![int("fd"), int("cmd"), int("arg")]),
        (PIPE, "sys_pipe", vec![]),
        (CLOSE, "sys_close", vec![int("fd")]),
        (EXIT, "exit_syscall", vec![int("ret")]),
        (EXIT_PIPE, "exit_syscall", vec![int("ret"), ints2("fildes")]),
    ];
    let sc = tc.streams.get_mut(&0).unwrap();
    for (id, name, fields) in classes {
        sc.events.insert(
            id,
            EventClass {
                id,
                name: name.into(),
                loglevel: None,
                model_emf_uri: None,
                context: None,
                payload: Some(StructType {
                    min_align: 1,
                    fields,
                }),
            },
        );
    }
    let mut w = TraceWriter::create(&dir, &tc, 1, &WriterOptions::default()).unwrap();
    let s0 = Task::swapper(0);
    let a = Task::new(10, 10, "app");
    let i = Value::I64;
    let evs: Vec<(u64, u64, Vec<Value>)> = vec![
        (ev::STATEDUMP_PROCESS, 10, statedump_process(&a, 0)),
        (ev::STATEDUMP_FD, 11, statedump_fd(&a, 1, "/dev/pts/0")),
        // Listed again (a statedump may repeat a descriptor): not a new one.
        (ev::STATEDUMP_FD, 12, statedump_fd(&a, 1, "/dev/pts/0")),
        (ev::STATEDUMP_FD, 13, statedump_fd(&a, 2, "/dev/pts/0")),
        (ev::SCHED_SWITCH, 20, switch(&s0, 0, &a)),
        // socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC) = 3
        (SOCKET, 100, vec![i(2), i(1 | 0o2000000)]),
        (EXIT, 110, vec![i(3)]),
        // connect(3, 10.0.0.7:80) = 0
        (
            CONNECT,
            200,
            vec![
                i(3),
                i(2),
                i(80),
                Value::Array([10, 0, 0, 7].map(Value::U64).to_vec()),
            ],
        ),
        (EXIT, 210, vec![i(0)]),
        // dup2(3, 1) = 1
        (DUP2, 300, vec![i(3), i(1)]),
        (EXIT, 310, vec![i(1)]),
        // fcntl(1, F_DUPFD, 5) = 5
        (FCNTL, 400, vec![i(1), i(0), i(5)]),
        (EXIT, 410, vec![i(5)]),
        // fcntl(5, F_SETFD, FD_CLOEXEC) = 0: not an I/O call
        (FCNTL, 420, vec![i(5), i(2), i(1)]),
        (EXIT, 430, vec![i(0)]),
        // pipe() = 0, [6, 7]
        (PIPE, 500, vec![]),
        (EXIT_PIPE, 510, vec![i(0), Value::Array(vec![i(6), i(7)])]),
        // close(3) = 0
        (CLOSE, 600, vec![i(3)]),
        (EXIT, 610, vec![i(0)]),
    ];
    for (id, ts, v) in &evs {
        w.write_event(0, *id, *ts, v).unwrap();
    }
    w.finish().unwrap();

    let (m, notes) = run(std::slice::from_ref(&dir), StateOptions::default());
    let st = &m.state;
    let fds = &st.processes[&10].fds;
    let name = |fd: i64| st.file_name(fds[&fd].file).to_string();
    assert!(!fds.contains_key(&3), "closed");
    // fd 1 now refers to the connected socket (renamed to its peer), as does its copy fd 5.
    assert_eq!(name(1), "10.0.0.7:80");
    assert_eq!(fds[&1].file, fds[&5].file);
    assert!(!fds[&1].cloexec, "dup2 clears close-on-exec");
    assert!(fds[&5].cloexec, "set by F_SETFD");
    assert_eq!(name(6), "pipe");
    assert_eq!(name(7), "pipe");
    // The statedump's descriptors, each once, when first listed.
    let known: Vec<(i64, i32, i64)> = notes
        .iter()
        .filter_map(|n| match *n {
            Notification::FdKnown { ts, pid, fd } => Some((ts, pid, fd)),
            _ => None,
        })
        .collect();
    assert_eq!(known, vec![(11, 10, 1), (13, 10, 2)]);
    let io: Vec<(FdOp, Option<i64>)> = notes
        .iter()
        .filter_map(|n| match n {
            Notification::Io(d) => Some((d.op, d.fd)),
            _ => None,
        })
        .collect();
    assert_eq!(
        io,
        vec![
            (FdOp::Socket, Some(3)),
            (FdOp::Connect, Some(3)),
            (FdOp::Dup, Some(1)),
            (FdOp::Fcntl, Some(5)),
            (FdOp::Pipe, None),
            (FdOp::Close, Some(3)),
        ]
    );

    // lttng-analyses compatibility: pipes are not tracked.
    let (m, _) = run(
        &[dir],
        StateOptions {
            lttng_analyses_quirks: true,
        },
    );
    assert!(!m.state.processes[&10].fds.contains_key(&6));
}
