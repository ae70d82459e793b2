//! The live reader's order against the file reader's, through `tracekit relay` fed by a
//! scripted consumer daemon (the consumer protocol, packets of a generated two-CPU trace):
//!
//! - events of the same nanosecond on two CPUs come out in the order a read of the written
//!   trace gives them, whichever stream the relay announced first;
//! - a stream announced after the reader attached, holding events older than ones another
//!   stream already delivered, holds them back until it is read;
//! - a stream announced too late for that (after newer events were given) is reported.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use ctf::stream::Event;
use live::{LiveOptions, LiveSource, Url};
use pipeline::{Diagnostic, FileSource, Flow, ReadOptions, Sink, Source};
use relay_proto::control::{
    AddStream, ControlCommand, ControlReply, CreateSession, DataHeader, RelayIndex, RET_OK,
};

/// Events as (time, CPU stream instance), and the warnings.
#[derive(Default)]
struct Collect {
    events: Vec<(i64, u64)>,
    warnings: Vec<String>,
    /// Told each event's time as it is given.
    tell: Option<mpsc::Sender<i64>>,
}

impl Sink for Collect {
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        let instance = ev
            .packet_header()
            .and_then(|h| h.field("stream_instance_id"))
            .and_then(|f| f.as_u64())
            .expect("stream_instance_id");
        self.events.push((ts, instance));
        if let Some(t) = &self.tell {
            let _ = t.send(ts);
        }
        Flow::Continue
    }

    fn diagnostic(&mut self, d: &Diagnostic) {
        self.warnings.push(d.message.clone());
    }
}

/// A two-CPU kernel-like trace in `dir` with events at these cycle times (1 GHz clock) on
/// CPU 0 and CPU 1, one packet per CPU.
fn write_trace(dir: &Path, cpu0: &[u64], cpu1: &[u64]) {
    use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
    use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
    use scenario::common::read_entry;
    let host = HostInfo {
        hostname: "box".into(),
        trace_uuid: [3; 16],
        clock_uuid: [7; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "t".into(),
        kernel_release: "6.1.0".into(),
    };
    let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let opts = WriterOptions {
        packet_size: 4096,
        ..WriterOptions::default()
    };
    let mut w = TraceWriter::create(dir, &tc, 2, &opts).unwrap();
    for (cpu, times) in [(0, cpu0), (1, cpu1)] {
        for (k, &ts) in times.iter().enumerate() {
            w.write_event(cpu, ev::SYS_READ, ts, &read_entry(k as u32, 10))
                .unwrap();
        }
    }
    w.finish().unwrap();
}

/// A consumer daemon, scripted: one live session streaming a generated trace's files.
struct Consumer {
    control: TcpStream,
    data: TcpStream,
    trace: PathBuf,
    handles: Vec<u64>,
}

impl Consumer {
    fn call(&mut self, c: ControlCommand) -> ControlReply {
        let mut out = Vec::new();
        c.encode(&mut out);
        self.control.write_all(&out).unwrap();
        let mut buf = Vec::new();
        let mut b = [0u8; 256];
        loop {
            match ControlReply::decode(c.cmd(), &buf) {
                Ok((r, _)) => return r,
                Err(e) if e.is_incomplete() => {
                    let n = self.control.read(&mut b).unwrap();
                    assert!(n > 0, "the relay closed the control connection");
                    buf.extend_from_slice(&b[..n]);
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    fn ok(&mut self, c: ControlCommand) {
        let r = self.call(c);
        assert!(
            matches!(
                r,
                ControlReply::Generic { ret_code: RET_OK }
                    | ControlReply::AddStream {
                        ret_code: RET_OK,
                        ..
                    }
            ),
            "{r:?}"
        );
    }

    fn start(relay: [SocketAddr; 3], trace: &Path) -> Consumer {
        let mut c = Consumer {
            control: TcpStream::connect(relay[0]).unwrap(),
            data: TcpStream::connect(relay[1]).unwrap(),
            trace: trace.to_path_buf(),
            handles: Vec::new(),
        };
        c.call(ControlCommand::Version {
            major: 2,
            minor: 13,
        });
        let r = c.call(ControlCommand::CreateSession(CreateSession {
            session_name: "s".into(),
            hostname: "box".into(),
            base_path: String::new(),
            live_timer: 100_000,
            snapshot: false,
            session_name_contains_creation_time: false,
            sessiond_uuid: [1; 16],
            session_id: 1,
            creation_time: 1_700_000_000,
            current_chunk_id: Some(0),
        }));
        assert!(matches!(r, ControlReply::CreateSession { .. }), "{r:?}");
        c
    }

    /// Adds stream `name` (`metadata` or `chan_N`) and announces it; its handle.
    fn add(&mut self, name: &str) -> u64 {
        let r = self.call(ControlCommand::AddStream(AddStream {
            channel_name: name.into(),
            pathname: "kernel".into(),
            tracefile_size: 0,
            tracefile_count: 0,
            trace_chunk_id: 0,
        }));
        let ControlReply::AddStream { handle, .. } = r else {
            panic!("{r:?}")
        };
        self.ok(ControlCommand::StreamsSent);
        if name == "metadata" {
            let mut out = Vec::new();
            ControlCommand::SendMetadata {
                stream_id: handle,
                padding_size: 0,
                payload: std::fs::read(self.trace.join("metadata")).unwrap(),
            }
            .encode(&mut out);
            self.control.write_all(&out).unwrap();
        }
        self.handles.push(handle);
        handle
    }

    /// Sends the (only) packet of CPU `cpu`'s stream file on stream `handle`, and its index.
    fn packet(&mut self, handle: u64, cpu: u32) {
        let file = std::fs::read(self.trace.join(format!("chan_{cpu}"))).unwrap();
        let idx = std::fs::read(self.trace.join(format!("index/chan_{cpu}.idx"))).unwrap();
        let entries = ctf::index::parse(&idx).unwrap();
        assert_eq!(entries.len(), 1);
        let e = entries[0];
        let bytes = &file[e.offset as usize..(e.offset + e.packet_bits / 8) as usize];
        let mut out = Vec::new();
        DataHeader {
            circuit_id: 0,
            stream_id: handle,
            net_seq_num: 0,
            data_size: bytes.len() as u32,
            padding_size: 0,
        }
        .encode(&mut out);
        out.extend_from_slice(bytes);
        self.data.write_all(&out).unwrap();
        self.ok(ControlCommand::SendIndex(RelayIndex {
            relay_stream_id: handle,
            net_seq_num: 0,
            packet_size: e.packet_bits,
            content_size: e.content_bits,
            timestamp_begin: e.ts_begin,
            timestamp_end: e.ts_end,
            events_discarded: e.discarded,
            stream_id: e.stream_class_id,
            stream_instance_id: e.instance_id.unwrap_or(u64::from(cpu)),
            packet_seq_num: 0,
        }));
    }

    /// Closes every data stream after its packet, and the session (the connection).
    fn end(mut self) {
        for h in self.handles.clone() {
            self.ok(ControlCommand::CloseStream {
                stream_id: h,
                last_net_seq_num: 0,
            });
        }
    }
}

/// Runs a relay writing below `out` on free loopback ports until the test process ends.
fn relay(out: &Path) -> [SocketAddr; 3] {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut cfg = relay::Config::new(out.to_path_buf());
    (cfg.control_port, cfg.data_port, cfg.live_port) = (0, 0, 0);
    let r = rt.block_on(relay::Relay::bind(&cfg)).unwrap();
    let addrs = r.local_addrs();
    std::thread::spawn(move || rt.block_on(r.serve(std::future::pending())));
    addrs
}

/// What the file reader gives for the trace the relay wrote below `out`.
fn file_read(out: &Path) -> Vec<(i64, u64)> {
    let opts = ReadOptions {
        no_intersection: true,
        ..ReadOptions::default()
    };
    let src = FileSource::open(&[out], opts).unwrap();
    let mut sink = Collect::default();
    src.run(&mut sink);
    sink.events
}

/// Reads session `box/s` live from the relay while `script` drives the consumer in another
/// thread (after the reader attached), telling it each event's time as it comes.
fn live_read(
    relay: [SocketAddr; 3],
    trace: &Path,
    script: impl FnOnce(Consumer, mpsc::Receiver<i64>) + Send + 'static,
) -> Collect {
    let mut c = Consumer::start(relay, trace);
    c.add("metadata");
    c.add("chan_1");
    let url = Url::parse(&format!("net://127.0.0.1:{}/host/box/s", relay[2].port())).unwrap();
    let src = LiveSource::connect(&[url], LiveOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let driver = std::thread::spawn(move || script(c, rx));
    let mut sink = Collect {
        tell: Some(tx),
        ..Collect::default()
    };
    src.run(&mut sink);
    driver.join().unwrap();
    sink
}

#[test]
fn same_nanosecond_and_late_streams_in_file_order() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace");
    // CPU 0's stream is announced last and holds the oldest event; both CPUs have one at 300.
    write_trace(&trace, &[120, 300, 400], &[150, 300, 350]);
    let out = tmp.path().join("out");
    let addrs = relay(&out);
    let live = live_read(addrs, &trace, |mut c, _| {
        let cpu0 = c.add("chan_0");
        c.packet(c.handles[1], 1);
        // The reader has CPU 1's packet and must wait for CPU 0's.
        std::thread::sleep(Duration::from_millis(300));
        c.packet(cpu0, 0);
        c.end();
    });
    let file = file_read(&out);
    assert_eq!(
        file.iter().map(|e| e.1).collect::<Vec<_>>(),
        [0, 1, 0, 1, 1, 0],
        "{file:?}"
    );
    assert_eq!(live.events, file);
    assert!(live.warnings.is_empty(), "{:?}", live.warnings);
}

#[test]
fn a_stream_announced_too_late_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace");
    write_trace(&trace, &[120], &[150, 300]);
    let out = tmp.path().join("out");
    let addrs = relay(&out);
    let live = live_read(addrs, &trace, |mut c, told| {
        c.packet(c.handles[1], 1);
        // CPU 1's events are given before CPU 0's stream exists.
        for _ in 0..2 {
            told.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        let cpu0 = c.add("chan_0");
        c.packet(cpu0, 0);
        c.end();
    });
    assert_eq!(
        live.events.iter().map(|e| e.1).collect::<Vec<_>>(),
        [1, 1, 0]
    );
    assert!(
        live.warnings
            .iter()
            .any(|w| w.contains("kernel/chan_0 gives events older than ones already read")),
        "{:?}",
        live.warnings
    );
}
