//! `client-server`: clients → httpd → db over TCP, one trace per host, each host with its own
//! drifting clock, and ground truth (clock formulas, critical path of a marked request).
//!
//! The simulation runs in true time (ns since the Unix epoch); requests are processed one at a
//! time so that every CPU's event sequence is coherent. CPU 0 of each host takes the NIC and
//! disk interrupts, CPU 1 runs the application threads, CPUs 2+ run background noise.
//! Host clocks: `host_ns = floor(slope × true_ns + offset)` with `slope = 1 + drift`.

use crate::common::*;
use crate::rng::Rng;
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriteError, WriterOptions};
use kernel::lttng::{
    ev, net_payload, trace_class, HostInfo, NetLayout, TcpSeg, TCP_ACK, TCP_PSH, TCP_SYN,
};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::path::PathBuf;

/// Parameters of `client-server`.
#[derive(Debug, Clone)]
pub struct ClientServerParams {
    /// Seed of everything random: the same seed writes the same traces.
    pub seed: u64,
    /// 2..=8 hosts: N−2 clients, httpd, db (2 hosts: one client and httpd).
    pub hosts: u32,
    /// Maximum clock offset between a host and true time, seconds.
    pub max_offset_s: u64,
    /// Maximum clock drift, ppm (≤ 100).
    pub max_drift_ppm: u32,
    /// HTTP requests, spread over the clients.
    pub requests: u32,
    /// TCP connections per client.
    pub connections: u32,
    /// CPUs per host.
    pub cpus: u32,
    /// Layout of the net events' payloads.
    pub net: NetLayout,
}

impl Default for ClientServerParams {
    fn default() -> Self {
        ClientServerParams {
            seed: 1,
            hosts: 3,
            max_offset_s: 3600,
            max_drift_ppm: 50,
            requests: 40,
            connections: 3,
            cpus: 4,
            net: NetLayout::NetworkHeader,
        }
    }
}

struct Rec {
    t: i128,
    cpu: u32,
    id: u64,
    pl: Vec<Value>,
}

struct Host {
    name: String,
    role: &'static str,
    ip: [u8; 4],
    ppb: i64,
    offset_ns: i64,
    uptime_ns: i64,
    trace_uuid: [u8; 16],
    clock_uuid: [u8; 16],
    recs: Vec<Rec>,
    cur: Vec<Task>,
    next_tid: i32,
}

/// One segment of a critical path.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub host: String,
    pub tid: i32,
    pub comm: String,
    pub state: &'static str,
    pub begin: i128,
    pub end: i128,
}

struct Sim {
    rng: Rng,
    hosts: Vec<Host>,
    net: NetLayout,
    min_delay: i128,
    path: Option<Vec<Segment>>,
}

#[derive(Clone)]
struct Conn {
    a: usize,
    b: usize,
    sport: u16,
    dport: u16,
    seq_a: u32,
    seq_b: u32,
    fd_a: i32,
    fd_b: i32,
    task_a: Task,
    task_b: Task,
}

const APP_CPU: u32 = 1;
const NIC_IRQ: i32 = 25;

impl Sim {
    fn emit(&mut self, h: usize, cpu: u32, t: i128, id: u64, pl: Vec<Value>) {
        self.hosts[h].recs.push(Rec { t, cpu, id, pl });
    }

    fn seg(&mut self, h: usize, task: &Task, state: &'static str, begin: i128, end: i128) {
        let host = self.hosts[h].name.clone();
        if let Some(p) = &mut self.path {
            if end > begin {
                p.push(Segment {
                    host,
                    tid: task.tid,
                    comm: task.comm.clone(),
                    state,
                    begin,
                    end,
                });
            }
        }
    }

    fn switch_to(&mut self, h: usize, cpu: u32, t: i128, state: i64, next: Task) {
        let prev = std::mem::replace(&mut self.hosts[h].cur[cpu as usize], next.clone());
        self.emit(h, cpu, t, ev::SCHED_SWITCH, switch(&prev, state, &next));
    }

    fn block(&mut self, h: usize, t: i128, state: i64) {
        self.switch_to(h, APP_CPU, t, state, Task::swapper(APP_CPU));
    }

    fn delay(&mut self) -> i128 {
        let d = self.rng.range(50_000, 500_000) as i128;
        self.min_delay = self.min_delay.min(d);
        d
    }

    fn seg_of(&mut self, c: &Conn, from_a: bool, flags: u16, len: u32) -> TcpSeg {
        let (src, dst, sp, dp) = if from_a {
            (c.a, c.b, c.sport, c.dport)
        } else {
            (c.b, c.a, c.dport, c.sport)
        };
        let (seq, ack) = if from_a {
            (c.seq_a, c.seq_b)
        } else {
            (c.seq_b, c.seq_a)
        };
        TcpSeg {
            saddr: self.hosts[src].ip,
            daddr: self.hosts[dst].ip,
            sport: sp,
            dport: dp,
            seq,
            ack,
            flags,
            len,
            skbaddr: 0xffff_8881_0000_0000 | (self.rng.range(0, 1 << 24) << 8),
            sk: 0xffff_8881_4000_0000 | ((sp as u64) << 12),
            ip_id: self.rng.next_u64() as u16,
        }
    }

    /// Data from one end of a connection to the other: sendto on the sender (running), the
    /// packet, and the receiver (blocked in recvfrom/epoll_wait) woken and running its exit.
    /// Returns when the receiver has its data.
    fn send(&mut self, c: &mut Conn, from_a: bool, t: i128, len: u32) -> i128 {
        let (src, dst) = if from_a { (c.a, c.b) } else { (c.b, c.a) };
        let (stask, dtask) = if from_a {
            (c.task_a.clone(), c.task_b.clone())
        } else {
            (c.task_b.clone(), c.task_a.clone())
        };
        let sfd = if from_a { c.fd_a } else { c.fd_b };
        let buf = 0x55d0_0000_0000 + self.rng.range(0, 1 << 20) * 64;
        self.emit(
            src,
            APP_CPU,
            t,
            ev::SYS_SENDTO,
            sendto_entry(sfd, buf, len as u64),
        );
        let tq = t + self.rng.range(2000, 8000) as i128;
        let seg = self.seg_of(c, from_a, TCP_PSH | TCP_ACK, len);
        if from_a {
            c.seq_a = c.seq_a.wrapping_add(len);
        } else {
            c.seq_b = c.seq_b.wrapping_add(len);
        }
        self.seg(src, &stask, "running", t, tq);
        let d = self.delay();
        // Sender side: packet out, syscall exit, then it blocks waiting for the reply.
        self.emit(
            src,
            APP_CPU,
            tq,
            ev::NET_OUT,
            net_payload(self.net, &seg, "eth0"),
        );
        let tx = tq + self.rng.range(1000, 3000) as i128;
        self.emit(src, APP_CPU, tx, ev::SYSX_SENDTO, ret(len as i64));
        let sfd2 = sfd;
        self.emit(
            src,
            APP_CPU,
            tx + 800,
            ev::SYS_RECVFROM,
            recvfrom_entry(sfd2, 65536),
        );
        self.block(src, tx + 2500, STATE_INTERRUPTIBLE);
        // Receiver side.
        let ta = tq + d;
        self.seg(dst, &dtask, "network", tq, ta);
        let ts = self.receive(dst, ta, &seg, &dtask);
        let dfd = if from_a { c.fd_b } else { c.fd_a };
        let _ = dfd;
        let t2 = ts + self.rng.range(1000, 4000) as i128;
        self.emit(
            dst,
            APP_CPU,
            t2,
            ev::SYSX_RECVFROM,
            recvfrom_exit(len as i64, buf),
        );
        self.seg(dst, &dtask, "running", ts, t2);
        t2
    }

    /// The receive path at `ta` on host `h`: IRQ, softirq, wake of `task`, switch to it.
    fn receive(&mut self, h: usize, ta: i128, seg: &TcpSeg, task: &Task) -> i128 {
        let r = &mut self.rng;
        let (d1, d2, d3, d4, d5) = (
            r.range(300, 900) as i128,
            r.range(200, 600) as i128,
            r.range(300, 800) as i128,
            r.range(500, 2000) as i128,
            r.range(500, 1500) as i128,
        );
        self.emit(
            h,
            0,
            ta,
            ev::IRQ_ENTRY,
            irq_entry(NIC_IRQ, "virtio0-input.0"),
        );
        self.emit(h, 0, ta + d1, ev::SOFTIRQ_RAISE, vec1(SOFTIRQ_NET_RX));
        self.emit(h, 0, ta + d1 + d2, ev::IRQ_EXIT, irq_exit(NIC_IRQ));
        let mut t = ta + d1 + d2 + d3;
        self.emit(h, 0, t, ev::SOFTIRQ_ENTRY, vec1(SOFTIRQ_NET_RX));
        t += d3;
        self.emit(h, 0, t, ev::NET_IN, net_payload(self.net, seg, "eth0"));
        t += d4;
        self.emit(h, 0, t, ev::SCHED_WAKING, wake(task, APP_CPU));
        self.seg(h, task, "interrupted", ta, t);
        let tw = t;
        self.emit(h, 0, t + d5, ev::SOFTIRQ_EXIT, vec1(SOFTIRQ_NET_RX));
        let tu = tw + self.rng.range(1000, 3000) as i128;
        self.emit(h, APP_CPU, tu, ev::SCHED_WAKEUP, wake(task, APP_CPU));
        let ts = tu + self.rng.range(1000, 6000) as i128;
        self.switch_to(h, APP_CPU, ts, STATE_RUNNING, task.clone());
        self.seg(h, task, "preempted", tw, ts);
        ts
    }

    /// Maybe a preemption of the running application task by a kworker.
    fn maybe_preempt(&mut self, h: usize, task: &Task, t: i128) -> i128 {
        if !self.rng.chance(0.35) {
            return t;
        }
        let kw = Task::new(200 + h as i32, 200 + h as i32, "kworker/1:2");
        self.emit(h, APP_CPU, t, ev::SCHED_WAKING, wake(&kw, APP_CPU));
        let t1 = t + 1500;
        self.switch_to(h, APP_CPU, t1, STATE_PREEMPTED, kw.clone());
        let mut tt = t1;
        for _ in 0..self.rng.range(1, 4) {
            tt += self.rng.range(5_000, 40_000) as i128;
            let (id, pl) = page(ev::PAGE_ALLOC, self.rng.range(100_000, 900_000), true);
            self.emit(h, APP_CPU, tt, id, pl);
        }
        tt += self.rng.range(5_000, 30_000) as i128;
        self.switch_to(h, APP_CPU, tt, STATE_INTERRUPTIBLE, task.clone());
        self.seg(h, task, "running", t, t1);
        self.seg(h, task, "preempted", t1, tt);
        tt
    }

    /// Disk read on the db: issue, block (D), completion IRQ, wake. Returns when it runs.
    fn disk_read(&mut self, h: usize, task: &Task, t: i128) -> i128 {
        let sector = self.rng.range(0, 1 << 28) * 8;
        let nr = 8 * self.rng.range(1, 16) as u32;
        self.emit(h, APP_CPU, t, ev::SYS_READ, read_entry(7, nr as u64 * 512));
        let ti = t + self.rng.range(3000, 9000) as i128;
        self.emit(
            h,
            APP_CPU,
            ti,
            ev::BLOCK_ISSUE,
            block_issue(8388608, sector, nr, false, task),
        );
        self.seg(h, task, "running", t, ti);
        self.block(h, ti + 2000, STATE_UNINTERRUPTIBLE);
        let tc = ti + self.rng.range(100_000, 2_000_000) as i128;
        self.seg(h, task, "block_device", ti, tc);
        self.emit(h, 0, tc, ev::IRQ_ENTRY, irq_entry(40, "nvme0q1"));
        self.emit(
            h,
            0,
            tc + 700,
            ev::BLOCK_COMPLETE,
            block_complete(8388608, sector, nr, false),
        );
        let tw = tc + 1800;
        self.emit(h, 0, tw, ev::SCHED_WAKING, wake(task, APP_CPU));
        self.emit(h, 0, tw + 900, ev::IRQ_EXIT, irq_exit(40));
        self.seg(h, task, "interrupted", tc, tw);
        let tu = tw + self.rng.range(1000, 3000) as i128;
        self.emit(h, APP_CPU, tu, ev::SCHED_WAKEUP, wake(task, APP_CPU));
        let ts = tu + self.rng.range(1000, 5000) as i128;
        self.switch_to(h, APP_CPU, ts, STATE_RUNNING, task.clone());
        self.seg(h, task, "preempted", tw, ts);
        let tx = ts + self.rng.range(2000, 6000) as i128;
        self.emit(
            h,
            APP_CPU,
            tx,
            ev::SYSX_READ,
            read_exit(nr as i64 * 512, 0x55d0_1000_0000),
        );
        self.seg(h, task, "running", ts, tx);
        tx
    }

    /// TCP handshake between `a` (connecting, running on the app CPU at `t`) and `b`
    /// (blocked in epoll_wait). Returns when both are done.
    fn connect(&mut self, c: &mut Conn, t: i128) -> i128 {
        let (a, b) = (c.a, c.b);
        let mut pl = vec![
            Value::I64(c.fd_a as i64),
            Value::U64(0x7ffc_9a10_0000),
            Value::I64(16),
            Value::U64(2),
            Value::U64(c.dport as u64),
            Value::U64(4),
        ];
        pl.push(Value::Array(
            self.hosts[b]
                .ip
                .iter()
                .map(|&x| Value::U64(x as u64))
                .collect(),
        ));
        pl.push(Value::U64(0));
        pl.push(Value::Array(vec![]));
        self.emit(a, APP_CPU, t, ev::SYS_CONNECT, pl);
        let syn = self.seg_of(c, true, TCP_SYN, 0);
        self.emit(
            a,
            APP_CPU,
            t + 4000,
            ev::NET_OUT,
            net_payload(self.net, &syn, "eth0"),
        );
        self.block(a, t + 7000, STATE_INTERRUPTIBLE);
        c.seq_a = c.seq_a.wrapping_add(1);
        // b's kernel answers SYN-ACK from the softirq, without waking anyone.
        let ta = t + 4000 + self.delay();
        self.emit(
            b,
            0,
            ta,
            ev::IRQ_ENTRY,
            irq_entry(NIC_IRQ, "virtio0-input.0"),
        );
        self.emit(b, 0, ta + 600, ev::SOFTIRQ_RAISE, vec1(SOFTIRQ_NET_RX));
        self.emit(b, 0, ta + 1000, ev::IRQ_EXIT, irq_exit(NIC_IRQ));
        self.emit(b, 0, ta + 1500, ev::SOFTIRQ_ENTRY, vec1(SOFTIRQ_NET_RX));
        self.emit(
            b,
            0,
            ta + 2000,
            ev::NET_IN,
            net_payload(self.net, &syn, "eth0"),
        );
        let synack = self.seg_of(c, false, TCP_SYN | TCP_ACK, 0);
        self.emit(
            b,
            0,
            ta + 5000,
            ev::NET_OUT,
            net_payload(self.net, &synack, "eth0"),
        );
        self.emit(b, 0, ta + 6000, ev::SOFTIRQ_EXIT, vec1(SOFTIRQ_NET_RX));
        c.seq_b = c.seq_b.wrapping_add(1);
        let tb = ta + 5000 + self.delay();
        let ta_task = c.task_a.clone();
        let ts = self.receive(a, tb, &synack, &ta_task);
        self.emit(a, APP_CPU, ts + 2000, ev::SYSX_CONNECT, ret(0));
        let ack = self.seg_of(c, true, TCP_ACK, 0);
        self.emit(
            a,
            APP_CPU,
            ts + 1000,
            ev::NET_OUT,
            net_payload(self.net, &ack, "eth0"),
        );
        self.emit(
            a,
            APP_CPU,
            ts + 5000,
            ev::SYS_EPOLL_WAIT,
            epoll_entry(3, -1),
        );
        self.block(a, ts + 7000, STATE_INTERRUPTIBLE);
        let tb2 = ts + 1000 + self.delay();
        let tb_task = c.task_b.clone();
        let tr = self.receive(b, tb2, &ack, &tb_task);
        self.emit(b, APP_CPU, tr + 1000, ev::SYSX_EPOLL_WAIT, epoll_exit(&[3]));
        self.emit(
            b,
            APP_CPU,
            tr + 3000,
            ev::SYS_ACCEPT4,
            vec![
                Value::I64(3),
                Value::U64(0x7ffd_1200_0000),
                Value::I64(16),
                Value::I64(0x800),
            ],
        );
        let mut x = vec![
            Value::I64(c.fd_b as i64),
            Value::I64(16),
            Value::U64(2),
            Value::U64(c.sport as u64),
            Value::U64(4),
        ];
        x.push(Value::Array(
            self.hosts[a]
                .ip
                .iter()
                .map(|&v| Value::U64(v as u64))
                .collect(),
        ));
        x.push(Value::U64(0));
        x.push(Value::Array(vec![]));
        self.emit(b, APP_CPU, tr + 9000, ev::SYSX_ACCEPT4, x);
        self.emit(
            b,
            APP_CPU,
            tr + 12000,
            ev::SYS_EPOLL_WAIT,
            epoll_entry(3, -1),
        );
        self.block(b, tr + 14000, STATE_INTERRUPTIBLE);
        tr + 20000
    }
}

fn decimal(num: i128, scale_digits: u32) -> String {
    let scale = 10i128.pow(scale_digits);
    let sign = if num < 0 { "-" } else { "" };
    let a = num.abs();
    format!(
        "{sign}{}.{:0w$}",
        a / scale,
        a % scale,
        w = scale_digits as usize
    )
}

/// What [`generate`] produced.
#[derive(Debug, Clone)]
pub struct ClientServerOutput {
    /// One trace directory per host.
    pub dirs: Vec<PathBuf>,
    /// Events written (all hosts).
    pub events: u64,
    /// The ground-truth file (`ground-truth.json`).
    pub ground_truth: PathBuf,
}

/// Simulates and writes `OUT/<host>/` traces and `OUT/ground-truth.json`.
pub fn generate(out: &Path, p: &ClientServerParams) -> Result<ClientServerOutput, WriteError> {
    if !(2..=8).contains(&p.hosts) {
        return Err(WriteError::Invalid(format!(
            "--hosts must be 2..=8, got {}",
            p.hosts
        )));
    }
    if p.max_drift_ppm > 100 {
        return Err(WriteError::Invalid(
            "--max-drift-ppm must be at most 100".into(),
        ));
    }
    let mut rng = Rng::new(p.seed ^ 0x636c_6965_6e74);
    let t0: i128 = 1_709_600_000_000_000_000 + rng.range(0, 86_400_000_000_000) as i128;
    let n = p.hosts as usize;
    let nclients = if n == 2 { 1 } else { n - 2 };
    let mut hosts = Vec::new();
    for i in 0..n {
        let (name, role) = if i < nclients {
            (format!("client{}", i + 1), "client")
        } else if i == nclients {
            ("httpd".to_string(), "front-end")
        } else {
            ("db".to_string(), "back-end")
        };
        let maxp = p.max_drift_ppm as i64 * 1000;
        let maxo = p.max_offset_s as i64 * 1_000_000_000;
        hosts.push(Host {
            name,
            role,
            ip: [10, 0, 0, i as u8 + 1],
            ppb: rng.range_i(-maxp, maxp),
            offset_ns: rng.range_i(-maxo, maxo),
            uptime_ns: rng.range(300_000_000_000, 50_000_000_000_000) as i64,
            trace_uuid: rng.uuid(),
            clock_uuid: rng.uuid(),
            recs: Vec::new(),
            cur: (0..p.cpus).map(Task::swapper).collect(),
            next_tid: 1000 + rng.range(0, 3000) as i32,
        });
    }
    let mut sim = Sim {
        rng: rng.fork(1),
        hosts,
        net: p.net,
        min_delay: i128::MAX,
        path: None,
    };
    let srv = nclients;
    let db = if n > 2 { Some(n - 1) } else { None };
    let tid = |sim: &mut Sim, h: usize, comm: &str| {
        sim.hosts[h].next_tid += sim.rng.range(1, 50) as i32;
        let t = sim.hosts[h].next_tid;
        Task::new(t, t, comm)
    };
    let httpd = tid(&mut sim, srv, "httpd");
    let pg = db.map(|d| tid(&mut sim, d, "postgres"));
    let mut client_tasks = Vec::new();
    for c in 0..nclients {
        let mut v = Vec::new();
        for _ in 0..p.connections {
            v.push(tid(&mut sim, c, "wrk"));
        }
        client_tasks.push(v);
    }
    // Statedump on every host.
    let mut t = t0 + 1_000_000;
    #[allow(clippy::needless_range_loop)]
    for h in 0..n {
        let mut tt = t + sim.rng.range(0, 50_000) as i128;
        sim.emit(h, 0, tt, ev::STATEDUMP_START, vec![]);
        let mut tasks: Vec<Task> = (0..p.cpus).map(Task::swapper).collect();
        if h == srv {
            tasks.push(httpd.clone());
        }
        if Some(h) == db {
            tasks.push(pg.clone().unwrap());
        }
        if h < nclients {
            tasks.extend(client_tasks[h].iter().cloned());
        }
        for (k, task) in tasks.iter().enumerate() {
            tt += 1200;
            let cpu = if task.tid == 0 { k as u32 } else { APP_CPU };
            sim.emit(
                h,
                0,
                tt,
                ev::STATEDUMP_PROCESS,
                statedump_process(task, cpu),
            );
        }
        tt += 800;
        sim.emit(
            h,
            0,
            tt,
            ev::STATEDUMP_BLOCK,
            vec![Value::U64(8388608), Value::str("nvme0n1")],
        );
        sim.emit(h, 0, tt + 900, ev::STATEDUMP_END, vec![]);
    }
    t += 2_000_000;
    // Connections: httpd → db, then every client connection → httpd.
    let mut port = 40000u16;
    let mut mk = |sim: &mut Sim, a: usize, b: usize, ta: &Task, tb: &Task, dport: u16, fd: i32| {
        port += 1 + sim.rng.range(0, 30) as u16;
        Conn {
            a,
            b,
            sport: port,
            dport,
            seq_a: sim.rng.next_u64() as u32,
            seq_b: sim.rng.next_u64() as u32,
            fd_a: fd,
            fd_b: fd + 1,
            task_a: ta.clone(),
            task_b: tb.clone(),
        }
    };
    let mut dbconn = None;
    if let (Some(d), Some(pgt)) = (db, pg.clone()) {
        sim.switch_to(srv, APP_CPU, t, STATE_RUNNING, httpd.clone());
        // postgres waits in epoll_wait.
        let mut c = mk(&mut sim, srv, d, &httpd, &pgt, 5432, 9);
        t = sim.connect(&mut c, t + 5000);
        dbconn = Some(c);
    }
    let mut conns = Vec::new();
    for (ci, tasks) in client_tasks.iter().enumerate() {
        for (k, task) in tasks.iter().enumerate() {
            sim.switch_to(ci, APP_CPU, t, STATE_RUNNING, task.clone());
            let mut c = mk(&mut sim, ci, srv, task, &httpd, 80, 5 + k as i32);
            c.fd_b = 20 + conns.len() as i32;
            t = sim.connect(&mut c, t + 5000);
            conns.push(c);
        }
    }
    // Requests, one at a time.
    let marked = p.requests / 2;
    let mut marked_info = json!(null);
    for r in 0..p.requests {
        let ci = (r as usize) % conns.len();
        let mut c = conns[ci].clone();
        let client = c.a;
        let task = c.task_a.clone();
        // Think time then the client's timer fires (it sleeps in epoll_wait with a timeout).
        t += sim.rng.range(1_000_000, 5_000_000) as i128;
        // Background noise on CPU 2 of every host.
        for h in 0..n {
            let kw = Task::new(150 + h as i32, 150 + h as i32, "kworker/2:1");
            let tn = t - 800_000 + sim.rng.range(0, 300_000) as i128;
            sim.switch_to(h, 2 % p.cpus, tn, STATE_RUNNING, kw.clone());
            let (id, pl) = page(ev::PAGE_ALLOC, sim.rng.range(100_000, 900_000), true);
            sim.emit(h, 2 % p.cpus, tn + 20_000, id, pl);
            sim.emit(
                h,
                2 % p.cpus,
                tn + 30_000,
                ev::SYS_WRITE,
                write_entry(2, 0x55aa_0000_0000, 120),
            );
            sim.emit(h, 2 % p.cpus, tn + 34_000, ev::SYSX_WRITE, ret(120));
            sim.switch_to(
                h,
                2 % p.cpus,
                tn + 60_000,
                STATE_INTERRUPTIBLE,
                Task::swapper(2 % p.cpus),
            );
        }
        sim.emit(
            client,
            APP_CPU,
            t,
            ev::HRTIMER_ENTRY,
            hrtimer_entry(0xffff_9c3e_4bd7_fe60, t as i64, 0xffff_ffff_9a12_3450),
        );
        sim.emit(
            client,
            APP_CPU,
            t + 1000,
            ev::SCHED_WAKING,
            wake(&task, APP_CPU),
        );
        sim.emit(
            client,
            APP_CPU,
            t + 1800,
            ev::SCHED_WAKEUP,
            wake(&task, APP_CPU),
        );
        sim.emit(
            client,
            APP_CPU,
            t + 2500,
            ev::HRTIMER_EXIT,
            vec![Value::U64(0xffff_9c3e_4bd7_fe60)],
        );
        sim.switch_to(client, APP_CPU, t + 4000, STATE_RUNNING, task.clone());
        sim.emit(
            client,
            APP_CPU,
            t + 6000,
            ev::SYSX_EPOLL_WAIT,
            epoll_exit(&[]),
        );
        let start = t + 9000;
        if r == marked {
            sim.path = Some(Vec::new());
        }
        let len = sim.rng.range(100, 900) as u32;
        // Client → httpd.
        let mut tt = sim.send(&mut c, true, start, len);
        tt = sim.maybe_preempt(srv, &httpd, tt);
        if let (Some(d), Some(dbc)) = (db, dbconn.as_mut()) {
            let pgt = pg.clone().unwrap();
            let q = sim.rng.range(60, 300) as u32;
            tt = sim.send(dbc, true, tt, q);
            tt = sim.disk_read(d, &pgt, tt);
            tt = sim.maybe_preempt(d, &pgt, tt);
            let rl = sim.rng.range(200, 1400) as u32;
            tt = sim.send(dbc, false, tt, rl);
            // postgres went back to recvfrom; httpd resumes.
        }
        let resp = sim.rng.range(300, 1400) as u32;
        tt = sim.send(&mut c, false, tt, resp);
        let end = tt;
        // The client hands the reply to its other thread: an uncontended FUTEX_WAKE_PRIVATE.
        let uaddr = 0x7f00_0000_1000 + 64 * ci as u64;
        sim.emit(
            client,
            APP_CPU,
            tt + 1000,
            ev::SYS_FUTEX,
            futex_entry(uaddr, 129, 1),
        );
        sim.emit(
            client,
            APP_CPU,
            tt + 1500,
            ev::SYSX_FUTEX,
            futex_exit(0, uaddr),
        );
        // The client finishes: back to epoll_wait with a timeout.
        sim.emit(
            client,
            APP_CPU,
            tt + 2000,
            ev::SYS_EPOLL_WAIT,
            epoll_entry(4, 10),
        );
        sim.block(client, tt + 4000, STATE_INTERRUPTIBLE);
        if let Some(path) = sim.path.take() {
            let segs: Vec<Json> = path.iter().map(|s| json!({"host": s.host, "tid": s.tid, "comm": s.comm, "state": s.state, "begin": s.begin.to_string(), "end": s.end.to_string()})).collect();
            marked_info = json!({"index": r, "client": sim.hosts[client].name, "tid": task.tid, "connection": {"sport": c.sport, "dport": c.dport}, "begin": start.to_string(), "end": end.to_string(), "critical_path": segs});
        }
        conns[ci] = c;
        t = tt + 10_000;
    }
    let t_end = t + 1_000_000;
    // Write every host.
    ctf::private_files::create_dir_all(out).map_err(|e| WriteError::Io {
        path: out.to_path_buf(),
        source: e,
    })?;
    let mut dirs = Vec::new();
    let mut hosts_json = Vec::new();
    let mut total = 0u64;
    let min_delay = sim.min_delay;
    for h in sim.hosts.iter_mut() {
        let host_abs = |t: i128| {
            t + (h.ppb as i128 * (t - t0)).div_euclid(1_000_000_000) + h.offset_ns as i128
        };
        let clock_offset = host_abs(t0) - h.uptime_ns as i128;
        let info = HostInfo {
            hostname: h.name.clone(),
            trace_uuid: h.trace_uuid,
            clock_uuid: h.clock_uuid,
            clock_offset_ns: clock_offset,
            creation: "20240305T101500+0000".into(),
            trace_name: format!("client-server-{}", h.name),
            kernel_release: "6.1.0-18-amd64".into(),
        };
        let tc = trace_class(&info, p.net, EventHeaderKind::Compact);
        let dir = out.join(&h.name);
        let mut w = TraceWriter::create(&dir, &tc, p.cpus, &WriterOptions::default())?;
        h.recs.sort_by_key(|r| r.t);
        if let Some(first) = h.recs.first() {
            w.set_session_start((host_abs(first.t) - clock_offset) as u64);
        }
        for r in &h.recs {
            let cyc = host_abs(r.t) - clock_offset;
            w.write_event(r.cpu, r.id, cyc as u64, &r.pl)?;
        }
        let _ = t_end;
        let st = w.finish()?;
        total += st.events;
        // host = slope·t + b with slope = 1 + ppb·1e-9, b = offset − ppb·t0·1e-9 (exact).
        let slope_num = 1_000_000_000i128 + h.ppb as i128;
        let b_num = h.offset_ns as i128 * 1_000_000_000 - h.ppb as i128 * t0;
        let inv_slope_num = 10i128.pow(36) / slope_num; // scale 1e27
        let inv_off = -(b_num as f64 / 1e9) / (slope_num as f64 / 1e9);
        hosts_json.push(json!({
            "name": h.name, "role": h.role, "dir": h.name, "ip": format!("{}.{}.{}.{}", h.ip[0], h.ip[1], h.ip[2], h.ip[3]),
            "trace_uuid": ctf::writer::tsdl::uuid_string(&h.trace_uuid),
            "clock_uuid": ctf::writer::tsdl::uuid_string(&h.clock_uuid),
            "cpus": p.cpus,
            "drift_ppb": h.ppb,
            "slope": decimal(slope_num, 9),
            "offset_ns": decimal(b_num, 9),
            "formula": "host_ns = floor(slope * true_ns + offset_ns); host_ns = clock offset + cycles (ns since the Unix epoch)",
            "inverse": {"slope": decimal(inv_slope_num, 27), "offset_ns": format!("{inv_off:.3}"), "formula": "true_ns = (host_ns - offset_ns) / slope ~= inverse.slope * host_ns + inverse.offset_ns (approximate)"},
            "clock_offset_ns": clock_offset.to_string(),
            "events": st.events,
        }));
        dirs.push(dir);
    }
    let gt = json!({
        "scenario": "client-server",
        "seed": p.seed,
        "time_unit": "true time, ns since the Unix epoch (as decimal strings)",
        "true_time_start": t0.to_string(),
        "hosts": hosts_json,
        "events": total,
        "requests": p.requests,
        "min_one_way_delay_ns": min_delay as u64,
        "network_model": "one-way delay uniform in [50, 500] us per packet",
        "path_semantics": "Giraldeau & Dagenais: segments follow the thread the request waits for; network segments are attributed to the receiving host and thread",
        "marked_request": marked_info,
    });
    let gpath = out.join("ground-truth.json");
    ctf::private_files::write(
        &gpath,
        serde_json::to_string_pretty(&gt).unwrap().as_bytes(),
    )
    .map_err(|e| WriteError::Io {
        path: gpath.clone(),
        source: e,
    })?;
    Ok(ClientServerOutput {
        dirs,
        events: total,
        ground_truth: gpath,
    })
}
