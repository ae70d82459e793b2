//! The kernel trace classes of lttng-modules, for everything that writes LTTng-layout CTF:
//! the scenario generator, the recorder and the converters.
//!
//! * [`trace_class`]: the whole trace class of a kernel trace as lttng-modules 2.13.11 declares
//!   it on x86-64, with the network events of 2.9+ or of the older versions ([`NetLayout`]);
//!   [`ev`] the ids of its event classes.
//! * [`with_byte_order`]: the same trace class in the other byte order.
//! * [`net`]: payloads of the network events.
//! * [`stacks`]: the classes of the stack events of `tracekit record --stacks` and of their
//!   kernel symbol table.
//! * [`syscall_numbers`]: the x86-64 system call numbers, for formats that number system calls
//!   (tracefs, Perfetto).
//! * [`syscalls`]: the classes of the system calls the fixed set does not declare, typed the
//!   way lttng-modules types them, and where each of their payload values comes from.
//!
//! Ids below 31 go to the most frequent events so that they get compact event headers.

#![deny(missing_docs)]

pub mod net;
pub mod stacks;
pub mod syscall_numbers;
pub mod syscalls;

pub use net::{net_payload, TcpSeg, TCP_ACK, TCP_FIN, TCP_PSH, TCP_SYN};

use ctf::ir::{
    ArrayType, ByteOrder, DisplayBase, Encoding, EnumMapping, EnumType, EnvValue, EventClass,
    Field, FieldPath, FieldType, IntRange, IntType, Scope, SequenceType, StringType, StructType,
    TraceClass, VariantOption, VariantType,
};
use ctf::writer::lttng::{monotonic_clock, skeleton};
use ctf::writer::{to_tsdl, EventHeaderKind, WriteError};

/// The lttng-modules version (major, minor, patch level) whose classes [`trace_class`] writes.
pub(crate) const TRACER_VERSION: (i64, i64, i64) = (2, 13, 11);

/// Event class ids.
pub mod ev {
    /// `sched_switch`.
    pub const SCHED_SWITCH: u64 = 0;
    /// `sched_waking`.
    pub const SCHED_WAKING: u64 = 1;
    /// `sched_wakeup`.
    pub const SCHED_WAKEUP: u64 = 2;
    /// `syscall_entry_read`.
    pub const SYS_READ: u64 = 3;
    /// `syscall_exit_read`.
    pub const SYSX_READ: u64 = 4;
    /// `syscall_entry_write`.
    pub const SYS_WRITE: u64 = 5;
    /// `syscall_exit_write`.
    pub const SYSX_WRITE: u64 = 6;
    /// `syscall_entry_recvfrom`.
    pub const SYS_RECVFROM: u64 = 7;
    /// `syscall_exit_recvfrom`.
    pub const SYSX_RECVFROM: u64 = 8;
    /// `syscall_entry_sendto`.
    pub const SYS_SENDTO: u64 = 9;
    /// `syscall_exit_sendto`.
    pub const SYSX_SENDTO: u64 = 10;
    /// `syscall_entry_epoll_wait`.
    pub const SYS_EPOLL_WAIT: u64 = 11;
    /// `syscall_exit_epoll_wait`.
    pub const SYSX_EPOLL_WAIT: u64 = 12;
    /// `syscall_entry_futex`.
    pub const SYS_FUTEX: u64 = 13;
    /// `syscall_exit_futex`.
    pub const SYSX_FUTEX: u64 = 14;
    /// `irq_handler_entry`.
    pub const IRQ_ENTRY: u64 = 15;
    /// `irq_handler_exit`.
    pub const IRQ_EXIT: u64 = 16;
    /// `irq_softirq_raise`.
    pub const SOFTIRQ_RAISE: u64 = 17;
    /// `irq_softirq_entry`.
    pub const SOFTIRQ_ENTRY: u64 = 18;
    /// `irq_softirq_exit`.
    pub const SOFTIRQ_EXIT: u64 = 19;
    /// `timer_hrtimer_expire_entry`.
    pub const HRTIMER_ENTRY: u64 = 20;
    /// `timer_hrtimer_expire_exit`.
    pub const HRTIMER_EXIT: u64 = 21;
    /// `net_dev_queue`, or `inet_sock_local_out` in the old layout.
    pub const NET_OUT: u64 = 22;
    /// `net_if_receive_skb`, or `inet_sock_local_in` in the old layout.
    pub const NET_IN: u64 = 23;
    /// `kmem_mm_page_alloc`.
    pub const PAGE_ALLOC: u64 = 24;
    /// `kmem_mm_page_free`.
    pub const PAGE_FREE: u64 = 25;
    /// `block_rq_issue`.
    pub const BLOCK_ISSUE: u64 = 26;
    /// `block_rq_complete`.
    pub const BLOCK_COMPLETE: u64 = 27;
    /// `syscall_entry_openat`.
    pub const SYS_OPENAT: u64 = 28;
    /// `syscall_exit_openat`.
    pub const SYSX_OPENAT: u64 = 29;
    /// `syscall_entry_close`.
    pub const SYS_CLOSE: u64 = 30;
    /// `syscall_exit_close`.
    pub const SYSX_CLOSE: u64 = 31;
    /// `syscall_entry_connect`.
    pub const SYS_CONNECT: u64 = 32;
    /// `syscall_exit_connect`.
    pub const SYSX_CONNECT: u64 = 33;
    /// `syscall_entry_accept4`.
    pub const SYS_ACCEPT4: u64 = 34;
    /// `syscall_exit_accept4`.
    pub const SYSX_ACCEPT4: u64 = 35;
    /// `sched_wakeup_new`.
    pub const SCHED_WAKEUP_NEW: u64 = 36;
    /// `sched_process_fork`.
    pub const SCHED_FORK: u64 = 37;
    /// `sched_process_exec`.
    pub const SCHED_EXEC: u64 = 38;
    /// `sched_process_exit`.
    pub const SCHED_EXIT: u64 = 39;
    /// `lttng_statedump_start`.
    pub const STATEDUMP_START: u64 = 40;
    /// `lttng_statedump_end`.
    pub const STATEDUMP_END: u64 = 41;
    /// `lttng_statedump_process_state`.
    pub const STATEDUMP_PROCESS: u64 = 42;
    /// `lttng_statedump_file_descriptor`.
    pub const STATEDUMP_FD: u64 = 43;
    /// `lttng_statedump_block_device`.
    pub const STATEDUMP_BLOCK: u64 = 44;
    /// `lttng_statedump_interrupt`: far above the ids a recorder generates for other system
    /// calls ([`super::syscalls`]).
    pub const STATEDUMP_INTERRUPT: u64 = 2000;
    /// `lttng_statedump_cpu_topology`.
    pub const STATEDUMP_CPU: u64 = 2001;
}

/// Which network events the trace has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetLayout {
    /// `net_dev_queue` / `net_if_receive_skb` with the parsed `network_header` (2.9+).
    #[default]
    NetworkHeader,
    /// The older `inet_sock_local_out` / `inet_sock_local_in` with top-level TCP fields.
    InetSock,
}

fn int(size: u32, signed: bool, base: DisplayBase, bo: ByteOrder) -> FieldType {
    let mut i = if signed {
        IntType::signed(size, bo)
    } else {
        IntType::unsigned(size, bo)
    };
    i.base = base;
    if !size.is_multiple_of(8) {
        i.align = 1;
    }
    FieldType::Int(i)
}

const LE: ByteOrder = ByteOrder::Little;
const BE: ByteOrder = ByteOrder::Big;
const D: DisplayBase = DisplayBase::Decimal;
const H: DisplayBase = DisplayBase::Hexadecimal;

fn fld(name: &str, ty: FieldType) -> Field {
    Field {
        name: name.into(),
        ty,
    }
}
fn i32f(n: &str) -> Field {
    fld(n, int(32, true, D, LE))
}
fn u32f(n: &str) -> Field {
    fld(n, int(32, false, D, LE))
}
fn i64f(n: &str) -> Field {
    fld(n, int(64, true, D, LE))
}
fn u64f(n: &str) -> Field {
    fld(n, int(64, false, D, LE))
}
fn hex64(n: &str) -> Field {
    fld(n, int(64, false, H, LE))
}
fn string(n: &str) -> Field {
    fld(
        n,
        FieldType::String(StringType {
            encoding: Encoding::Utf8,
        }),
    )
}
fn comm(n: &str) -> Field {
    let mut c = IntType::unsigned(8, LE);
    c.encoding = Encoding::Utf8;
    fld(
        n,
        FieldType::Array(ArrayType {
            elem: Box::new(FieldType::Int(c)),
            len: 16,
            min_align: 1,
            role: None,
        }),
    )
}
fn seq(n: &str, elem: FieldType, len_index: usize, parent: &[usize]) -> Field {
    let mut indices = parent.to_vec();
    indices.push(len_index);
    fld(
        n,
        FieldType::Sequence(SequenceType {
            elem: Box::new(elem),
            length: FieldPath {
                scope: Scope::EventPayload,
                indices,
            },
            min_align: 1,
        }),
    )
}
fn st(fields: Vec<Field>) -> StructType {
    StructType {
        min_align: 1,
        fields,
    }
}
fn enum8(n: &str, bo: ByteOrder, labels: &[(&str, i128)]) -> Field {
    let mut i = IntType::unsigned(8, bo);
    i.base = D;
    fld(
        n,
        FieldType::Enum(EnumType {
            int: i,
            mappings: labels
                .iter()
                .map(|(l, v)| EnumMapping {
                    label: l.to_string(),
                    ranges: vec![IntRange {
                        lower: *v,
                        upper: *v,
                    }],
                })
                .collect(),
        }),
    )
}
fn variant(n: &str, tag: Vec<usize>, opts: Vec<(&str, i128, StructType)>) -> Field {
    fld(
        n,
        FieldType::Variant(VariantType {
            tag: FieldPath {
                scope: Scope::EventPayload,
                indices: tag,
            },
            options: opts
                .into_iter()
                .map(|(name, v, s)| VariantOption {
                    name: name.into(),
                    ty: FieldType::Struct(s),
                    ranges: vec![IntRange { lower: v, upper: v }],
                })
                .collect(),
        }),
    )
}

const PROTO: &[(&str, i128)] = &[("_icmp", 1), ("_tcp", 6), ("_udp", 17)];
const TRANSPORT: &[(&str, i128)] = &[("_unknown", 0), ("_tcp", 1), ("_udp", 2), ("_icmp", 3)];

/// The transport header variant at `at` (indices of the variant's parent) with its tag at
/// index `tag` of that parent.
fn transport(at: &[usize], tag: usize) -> Field {
    let mut t = at.to_vec();
    t.push(tag);
    let tcp = st(vec![
        fld("source_port", int(16, false, D, BE)),
        fld("dest_port", int(16, false, D, BE)),
        fld("seq", int(32, false, D, BE)),
        fld("ack_seq", int(32, false, D, BE)),
        fld("data_offset", int(4, false, D, BE)),
        fld("reserved", int(3, false, D, BE)),
        fld("flags", int(9, false, H, BE)),
        fld("window_size", int(16, false, D, BE)),
        fld("checksum", int(16, false, H, BE)),
        fld("urg_ptr", int(16, false, D, BE)),
    ]);
    let udp = st(vec![
        fld("source_port", int(16, false, D, BE)),
        fld("dest_port", int(16, false, D, BE)),
        fld("len", int(16, false, D, BE)),
        fld("check", int(16, false, H, BE)),
    ]);
    let icmp = st(vec![
        fld("type", int(8, false, D, BE)),
        fld("code", int(8, false, D, BE)),
        fld("checksum", int(16, false, H, BE)),
        fld("gateway", int(32, false, H, BE)),
    ]);
    let mut tcp = tcp;
    tcp.min_align = 32;
    let mut udp = udp;
    udp.min_align = 32;
    let mut icmp = icmp;
    icmp.min_align = 32;
    variant(
        "transport_header",
        t,
        vec![
            ("unknown", 0, st(vec![])),
            ("tcp", 1, tcp),
            ("udp", 2, udp),
            ("icmp", 3, icmp),
        ],
    )
}

fn u8_array(n: &str, len: u64, bo: ByteOrder) -> Field {
    fld(
        n,
        FieldType::Array(ArrayType {
            elem: Box::new(int(8, false, D, bo)),
            len,
            min_align: 1,
            role: None,
        }),
    )
}

fn net_fields() -> Vec<Field> {
    // Payload: skbaddr, len, name, network_header_type (3), network_header (4).
    let ipv4 = StructType {
        min_align: 16,
        fields: vec![
            fld("version", int(4, false, D, BE)),
            fld("ihl", int(4, false, D, BE)),
            fld("tos", int(8, false, D, BE)),
            fld("tot_len", int(16, false, D, BE)),
            fld("id", int(16, false, H, BE)),
            fld("frag_off", int(16, false, D, BE)),
            fld("ttl", int(8, false, D, BE)),
            enum8("protocol", BE, PROTO),
            fld("checksum", int(16, false, H, BE)),
            u8_array("saddr", 4, BE),
            u8_array("daddr", 4, BE),
            enum8("transport_header_type", LE, TRANSPORT),
            transport(&[4, 1], 11),
        ],
    };
    let mut flow = u8_array("flow_lbl", 3, BE);
    if let FieldType::Array(a) = &mut flow.ty {
        a.len = 3;
    }
    let addr6 = |n: &str| {
        fld(
            n,
            FieldType::Array(ArrayType {
                elem: Box::new(int(16, false, H, BE)),
                len: 8,
                min_align: 1,
                role: None,
            }),
        )
    };
    let ipv6 = StructType {
        min_align: 16,
        fields: vec![
            fld("version", int(4, false, D, BE)),
            fld("prio", int(4, false, D, BE)),
            flow,
            fld("payload_len", int(16, false, D, BE)),
            enum8("nexthdr", BE, PROTO),
            fld("hop_limit", int(8, false, D, BE)),
            addr6("saddr"),
            addr6("daddr"),
            enum8("transport_header_type", LE, TRANSPORT),
            transport(&[4, 2], 8),
        ],
    };
    vec![
        hex64("skbaddr"),
        u32f("len"),
        string("name"),
        enum8(
            "network_header_type",
            LE,
            &[("_unknown", 0), ("_ipv4", 1), ("_ipv6", 2)],
        ),
        variant(
            "network_header",
            vec![3],
            vec![
                ("unknown", 0, st(vec![])),
                ("ipv4", 1, ipv4),
                ("ipv6", 2, ipv6),
            ],
        ),
    ]
}

fn inet_sock_fields() -> Vec<Field> {
    vec![
        hex64("sk"),
        fld("saddr", int(32, false, H, BE)),
        fld("daddr", int(32, false, H, BE)),
        fld("sport", int(16, false, D, BE)),
        fld("dport", int(16, false, D, BE)),
        fld("seq", int(32, false, D, BE)),
        fld("ack_seq", int(32, false, D, BE)),
        fld("check", int(16, false, H, BE)),
        fld("window", int(16, false, D, BE)),
        fld("flags", int(16, false, H, BE)),
    ]
}

fn sockaddr_fields(port: &str, base: usize) -> Vec<Field> {
    vec![
        fld("family", int(16, false, D, LE)),
        fld(port, int(16, false, D, BE)),
        u32f("_v4addr_length"),
        seq("v4addr", int(8, false, D, BE), base + 2, &[]),
        u32f("_v6addr_length"),
        seq("v6addr", int(16, false, D, BE), base + 4, &[]),
    ]
}

/// All event classes of the layout, ids from [`ev`].
pub(crate) fn event_classes(net: NetLayout) -> Vec<EventClass> {
    use ev::*;
    let sched = || vec![comm("comm"), i32f("tid"), i32f("prio"), i32f("target_cpu")];
    let ret = || vec![i64f("ret")];
    let epoll_fd = {
        let mut bits = Vec::new();
        for n in ["EPOLLIN", "EPOLLPRI", "EPOLLOUT", "EPOLLERR"] {
            bits.push(fld(n, int(1, false, D, LE)));
        }
        bits.push(fld("padding", int(4, false, D, LE)));
        FieldType::Struct(st(vec![
            fld(
                "data_union",
                FieldType::Struct(st(vec![hex64("u64"), u32f("fd")])),
            ),
            fld("raw_events", int(32, false, H, LE)),
            fld("events", FieldType::Struct(st(bits))),
        ]))
    };
    let (out_name, in_name, netf) = match net {
        NetLayout::NetworkHeader => ("net_dev_queue", "net_if_receive_skb", net_fields()),
        NetLayout::InetSock => (
            "inet_sock_local_out",
            "inet_sock_local_in",
            inet_sock_fields(),
        ),
    };
    let mut connect = vec![
        i32f("fd"),
        hex64("uservaddr"),
        fld("addrlen", int(32, true, H, LE)),
    ];
    connect.extend(sockaddr_fields("dport", 3));
    let mut accept_x = vec![i64f("ret"), i32f("upeer_addrlen")];
    accept_x.extend(sockaddr_fields("sport", 2));
    let mut octal = IntType::unsigned(32, LE);
    octal.base = DisplayBase::Octal;
    let list: Vec<(u64, &str, Vec<Field>)> = vec![
        (
            SCHED_SWITCH,
            "sched_switch",
            vec![
                comm("prev_comm"),
                i32f("prev_tid"),
                i32f("prev_prio"),
                i64f("prev_state"),
                comm("next_comm"),
                i32f("next_tid"),
                i32f("next_prio"),
            ],
        ),
        (SCHED_WAKING, "sched_waking", sched()),
        (SCHED_WAKEUP, "sched_wakeup", sched()),
        (
            SYS_READ,
            "syscall_entry_read",
            vec![u32f("fd"), u64f("count")],
        ),
        (
            SYSX_READ,
            "syscall_exit_read",
            vec![i64f("ret"), u64f("buf")],
        ),
        (
            SYS_WRITE,
            "syscall_entry_write",
            vec![u32f("fd"), u64f("buf"), u64f("count")],
        ),
        (SYSX_WRITE, "syscall_exit_write", ret()),
        (
            SYS_RECVFROM,
            "syscall_entry_recvfrom",
            vec![i32f("fd"), u64f("size"), u32f("flags"), u64f("addr_len")],
        ),
        (
            SYSX_RECVFROM,
            "syscall_exit_recvfrom",
            vec![i64f("ret"), u64f("ubuf"), u64f("addr"), u64f("addr_len")],
        ),
        (
            SYS_SENDTO,
            "syscall_entry_sendto",
            vec![
                i32f("fd"),
                u64f("buff"),
                u64f("len"),
                u32f("flags"),
                u64f("addr"),
                i32f("addr_len"),
            ],
        ),
        (SYSX_SENDTO, "syscall_exit_sendto", ret()),
        (
            SYS_EPOLL_WAIT,
            "syscall_entry_epoll_wait",
            vec![i32f("epfd"), i32f("maxevents"), i32f("timeout")],
        ),
        (
            SYSX_EPOLL_WAIT,
            "syscall_exit_epoll_wait",
            vec![
                i64f("ret"),
                u32f("fds_length"),
                fld("overflow", int(8, false, D, LE)),
                seq("fds", epoll_fd, 1, &[]),
            ],
        ),
        (
            SYS_FUTEX,
            "syscall_entry_futex",
            vec![
                u64f("uaddr"),
                i32f("op"),
                u32f("val"),
                u64f("utime"),
                u64f("uaddr2"),
                u32f("val3"),
            ],
        ),
        (
            SYSX_FUTEX,
            "syscall_exit_futex",
            vec![i64f("ret"), u64f("uaddr"), u64f("uaddr2")],
        ),
        (
            IRQ_ENTRY,
            "irq_handler_entry",
            vec![i32f("irq"), string("name")],
        ),
        (IRQ_EXIT, "irq_handler_exit", vec![i32f("irq"), i32f("ret")]),
        (SOFTIRQ_RAISE, "irq_softirq_raise", vec![u32f("vec")]),
        (SOFTIRQ_ENTRY, "irq_softirq_entry", vec![u32f("vec")]),
        (SOFTIRQ_EXIT, "irq_softirq_exit", vec![u32f("vec")]),
        (
            HRTIMER_ENTRY,
            "timer_hrtimer_expire_entry",
            vec![hex64("hrtimer"), i64f("now"), hex64("function")],
        ),
        (
            HRTIMER_EXIT,
            "timer_hrtimer_expire_exit",
            vec![hex64("hrtimer")],
        ),
        (NET_OUT, out_name, netf.clone()),
        (NET_IN, in_name, netf),
        (
            PAGE_ALLOC,
            "kmem_mm_page_alloc",
            vec![
                hex64("page"),
                u64f("pfn"),
                u32f("order"),
                u32f("gfp_flags"),
                i32f("migratetype"),
            ],
        ),
        (
            PAGE_FREE,
            "kmem_mm_page_free",
            vec![hex64("page"), u64f("pfn"), u32f("order")],
        ),
        (
            BLOCK_ISSUE,
            "block_rq_issue",
            vec![
                u32f("dev"),
                u64f("sector"),
                u32f("nr_sector"),
                u32f("bytes"),
                i32f("tid"),
                u32f("rwbs"),
                comm("comm"),
            ],
        ),
        (
            BLOCK_COMPLETE,
            "block_rq_complete",
            vec![
                u32f("dev"),
                u64f("sector"),
                u32f("nr_sector"),
                i32f("error"),
                u32f("rwbs"),
            ],
        ),
        (
            SYS_OPENAT,
            "syscall_entry_openat",
            vec![
                i32f("dfd"),
                string("filename"),
                i32f("flags"),
                fld("mode", int(16, false, D, LE)),
            ],
        ),
        (SYSX_OPENAT, "syscall_exit_openat", ret()),
        (SYS_CLOSE, "syscall_entry_close", vec![u32f("fd")]),
        (SYSX_CLOSE, "syscall_exit_close", ret()),
        (SYS_CONNECT, "syscall_entry_connect", connect),
        (SYSX_CONNECT, "syscall_exit_connect", ret()),
        (
            SYS_ACCEPT4,
            "syscall_entry_accept4",
            vec![
                i32f("fd"),
                hex64("upeer_sockaddr"),
                i32f("upeer_addrlen"),
                fld("flags", int(32, true, H, LE)),
            ],
        ),
        (SYSX_ACCEPT4, "syscall_exit_accept4", accept_x),
        (SCHED_WAKEUP_NEW, "sched_wakeup_new", sched()),
        (
            SCHED_FORK,
            "sched_process_fork",
            vec![
                comm("parent_comm"),
                i32f("parent_tid"),
                i32f("parent_pid"),
                u32f("parent_ns_inum"),
                comm("child_comm"),
                i32f("child_tid"),
                fld("_vtids_length", int(8, false, D, LE)),
                seq("vtids", int(32, true, D, LE), 6, &[]),
                i32f("child_pid"),
                u32f("child_ns_inum"),
            ],
        ),
        (
            SCHED_EXEC,
            "sched_process_exec",
            vec![string("filename"), i32f("tid"), i32f("old_tid")],
        ),
        (
            SCHED_EXIT,
            "sched_process_exit",
            vec![comm("comm"), i32f("tid"), i32f("prio")],
        ),
        (STATEDUMP_START, "lttng_statedump_start", vec![]),
        (STATEDUMP_END, "lttng_statedump_end", vec![]),
        (
            STATEDUMP_PROCESS,
            "lttng_statedump_process_state",
            vec![
                i32f("tid"),
                i32f("pid"),
                i32f("ppid"),
                comm("name"),
                i32f("type"),
                i32f("mode"),
                i32f("submode"),
                i32f("status"),
                u32f("cpu"),
                hex64("file_table_address"),
            ],
        ),
        (
            STATEDUMP_FD,
            "lttng_statedump_file_descriptor",
            // The 2.13 fields, plus the owner's `pid` that lttng-modules wrote up to 2.10:
            // lttng-analyses 0.6.1 requires it ("Cannot run analysis: 'pid'" otherwise), and
            // readers of the 2.13 layout ignore a field they do not know.
            vec![
                hex64("file_table_address"),
                i32f("fd"),
                fld("flags", FieldType::Int(octal)),
                fld("fmode", int(32, false, H, LE)),
                string("filename"),
                i32f("pid"),
            ],
        ),
        (
            STATEDUMP_BLOCK,
            "lttng_statedump_block_device",
            vec![u32f("dev"), string("diskname")],
        ),
        (
            STATEDUMP_INTERRUPT,
            "lttng_statedump_interrupt",
            vec![u32f("irq"), string("name"), string("action")],
        ),
        (
            STATEDUMP_CPU,
            "lttng_statedump_cpu_topology",
            vec![
                string("architecture"),
                fld("cpu_id", int(16, false, D, LE)),
                string("vendor"),
                fld("family", int(8, false, D, LE)),
                fld("model", int(8, false, D, LE)),
                string("model_name"),
                fld("physical_id", int(16, false, D, LE)),
                fld("core_id", int(16, false, D, LE)),
                fld("cores", int(16, false, D, LE)),
            ],
        ),
    ];
    list.into_iter()
        .map(|(id, name, fields)| event_class(id, name.to_string(), fields))
        .collect()
}

/// The first event class id of the dynamic probes (`tracekit record --probe`…).
pub const FIRST_PROBE_ID: u64 = 4000;

/// Adds the class of a dynamic probe to stream class 0 of `tc`, in lttng-modules' layouts:
/// a kprobe or uprobe has `ip`; a kretprobe's exit has `ip` and `parent_ip`.
pub fn add_probe_class(tc: &mut TraceClass, id: u64, name: &str, ret: bool) {
    let mut f = vec![hex64("ip")];
    if ret {
        f.push(hex64("parent_ip"));
    }
    tc.streams
        .get_mut(&0)
        .expect("stream class 0")
        .events
        .insert(id, event_class(id, name.to_string(), f));
}

/// An event class as lttng-modules declares a kernel event (log level 4, the payload only).
pub(crate) fn event_class(id: u64, name: String, fields: Vec<Field>) -> EventClass {
    EventClass {
        id,
        name,
        loglevel: Some(4),
        model_emf_uri: None,
        context: None,
        payload: Some(st(fields)),
    }
}

/// What identifies one traced host.
#[derive(Debug, Clone)]
pub struct HostInfo {
    /// `hostname` of the environment.
    pub hostname: String,
    /// The trace's UUID (packet headers and metadata).
    pub trace_uuid: [u8; 16],
    /// The monotonic clock's UUID.
    pub clock_uuid: [u8; 16],
    /// Clock offset: Unix-epoch time of monotonic zero, in ns.
    pub clock_offset_ns: i128,
    /// `trace_creation_datetime`, e.g. `20240305T101500+0000`.
    pub creation: String,
    /// `trace_name` of the environment.
    pub trace_name: String,
    /// `kernel_release` of the environment, e.g. `6.1.0-18-amd64`.
    pub kernel_release: String,
}

/// The whole trace class of an LTTng 2.13 kernel trace of host `h`, stream class 0 holding
/// the event classes of [`ev`], with the event headers `header`.
pub fn trace_class(h: &HostInfo, net: NetLayout, header: EventHeaderKind) -> TraceClass {
    let env = vec![
        ("hostname".to_string(), EnvValue::Str(h.hostname.clone())),
        ("domain".into(), EnvValue::Str("kernel".into())),
        ("sysname".into(), EnvValue::Str("Linux".into())),
        (
            "kernel_release".into(),
            EnvValue::Str(h.kernel_release.clone()),
        ),
        (
            "kernel_version".into(),
            EnvValue::Str("#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)".into()),
        ),
        ("tracer_name".into(), EnvValue::Str("lttng-modules".into())),
        ("tracer_major".into(), EnvValue::Int(TRACER_VERSION.0)),
        ("tracer_minor".into(), EnvValue::Int(TRACER_VERSION.1)),
        ("tracer_patchlevel".into(), EnvValue::Int(TRACER_VERSION.2)),
        (
            "trace_buffering_scheme".into(),
            EnvValue::Str("global".into()),
        ),
        ("trace_name".into(), EnvValue::Str(h.trace_name.clone())),
        (
            "trace_creation_datetime".into(),
            EnvValue::Str(h.creation.clone()),
        ),
    ];
    let off = h.clock_offset_ns;
    let clock = monotonic_clock(
        h.clock_uuid,
        off.div_euclid(1_000_000_000) as i64,
        off.rem_euclid(1_000_000_000) as i64,
    );
    let mut tc = skeleton(h.trace_uuid, LE, clock, env, header);
    let sc = tc
        .streams
        .get_mut(&0)
        .expect("the LTTng skeleton has stream class 0");
    for e in event_classes(net) {
        sc.events.insert(e.id, e);
    }
    tc
}

/// `tc` with the trace byte order `bo`. Fields in the trace's byte order are written without
/// their own `byte_order`, so changing the trace's changes them all (fixed big-endian fields
/// such as the network headers' stay big-endian).
pub fn with_byte_order(tc: &TraceClass, bo: ByteOrder) -> Result<TraceClass, WriteError> {
    let name = |bo| match bo {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    };
    let text = to_tsdl(tc)?;
    let from = format!("byte_order = {};", name(tc.byte_order));
    let to = format!("byte_order = {};", name(bo));
    ctf::tsdl::parse(&text.replacen(&from, &to, 1))
        .map_err(|e| WriteError::Invalid(format!("trace class in another byte order: {e}")))
}
