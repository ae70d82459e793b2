//! The word reads compiled per event class ([`kernel::WordPlan`]) against the general reads
//! through the CTF field views: on random event sequences in several lttng-modules layouts
//! (2.5 and 2.13 names, both byte orders, bit-packed fields), on a generated kernel-mix trace
//! and on the shared traces, both give the same notifications and the same final state.

use std::path::{Path, PathBuf};

use ctf::ir::{
    ArrayType, ByteOrder, Encoding, EnvValue, EventClass, Field, FieldType, IntType, StringType,
    StructType,
};
use ctf::value::Value;
use ctf::writer::lttng::{monotonic_clock, skeleton};
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use kernel::{Model, Notification, State, StateOptions};

/// A payload field type.
#[derive(Clone, Copy)]
enum Ty {
    I32,
    I64,
    U16,
    U32,
    U64,
    /// A 16-byte `comm` array.
    Comm,
    /// A null-terminated string.
    Str,
}

/// One event class: its 2.13 and 2.5 names (None: absent from that version) and fields.
struct Spec {
    new: Option<&'static str>,
    old: Option<&'static str>,
    fields: &'static [(&'static str, Ty)],
}

const fn spec(
    new: Option<&'static str>,
    old: Option<&'static str>,
    fields: &'static [(&'static str, Ty)],
) -> Spec {
    Spec { new, old, fields }
}

use Ty::*;

const WAKE: &[(&str, Ty)] = &[
    ("comm", Comm),
    ("tid", I32),
    ("prio", I32),
    ("target_cpu", I32),
];
const VEC: &[(&str, Ty)] = &[("vec", U32)];
const PAGE: &[(&str, Ty)] = &[("page", U64), ("order", U32)];
const RW: &[(&str, Ty)] = &[("fd", U32), ("buf", U64), ("count", U64)];
const RET: &[(&str, Ty)] = &[("ret", I64)];
const FD_CMD_ARG: &[(&str, Ty)] = &[("fd", U32), ("cmd", U32), ("arg", U64)];

const SPECS: &[Spec] = &[
    spec(
        Some("sched_switch"),
        Some("sched_switch"),
        &[
            ("prev_comm", Comm),
            ("prev_tid", I32),
            ("prev_prio", I32),
            ("prev_state", I64),
            ("next_comm", Comm),
            ("next_tid", I32),
            ("next_prio", I32),
        ],
    ),
    spec(Some("sched_wakeup"), Some("sched_wakeup"), WAKE),
    spec(Some("sched_waking"), None, WAKE),
    spec(Some("sched_wakeup_new"), Some("sched_wakeup_new"), WAKE),
    spec(
        Some("sched_migrate_task"),
        Some("sched_migrate_task"),
        &[
            ("comm", Comm),
            ("tid", I32),
            ("prio", I32),
            ("orig_cpu", I32),
            ("dest_cpu", I32),
        ],
    ),
    spec(
        Some("sched_process_fork"),
        Some("sched_process_fork"),
        &[
            ("parent_comm", Comm),
            ("parent_tid", I32),
            ("parent_pid", I32),
            ("child_comm", Comm),
            ("child_tid", I32),
            ("child_pid", I32),
        ],
    ),
    spec(
        Some("sched_process_exec"),
        Some("sched_process_exec"),
        &[("filename", Str), ("tid", I32), ("old_tid", I32)],
    ),
    spec(
        Some("sched_pi_setprio"),
        Some("sched_pi_setprio"),
        &[
            ("comm", Comm),
            ("tid", I32),
            ("oldprio", I32),
            ("newprio", I32),
        ],
    ),
    spec(
        Some("irq_handler_entry"),
        Some("irq_handler_entry"),
        &[("irq", I32), ("name", Str)],
    ),
    spec(
        Some("irq_handler_exit"),
        Some("irq_handler_exit"),
        &[("irq", I32), ("ret", I32)],
    ),
    spec(Some("irq_softirq_raise"), Some("softirq_raise"), VEC),
    spec(Some("irq_softirq_entry"), Some("softirq_entry"), VEC),
    spec(Some("irq_softirq_exit"), Some("softirq_exit"), VEC),
    spec(Some("kmem_mm_page_alloc"), Some("mm_page_alloc"), PAGE),
    spec(Some("kmem_mm_page_free"), Some("mm_page_free"), PAGE),
    spec(
        Some("block_rq_issue"),
        Some("block_rq_issue"),
        &[
            ("dev", U32),
            ("sector", U64),
            ("nr_sector", U32),
            ("bytes", U32),
            ("tid", I32),
            ("rwbs", U32),
            ("comm", Comm),
        ],
    ),
    spec(
        Some("block_rq_complete"),
        Some("block_rq_complete"),
        &[
            ("dev", U32),
            ("sector", U64),
            ("nr_sector", U32),
            ("error", I32),
            ("rwbs", U32),
        ],
    ),
    spec(
        Some("block_bio_remap"),
        Some("block_bio_remap"),
        &[
            ("dev", U32),
            ("sector", U64),
            ("nr_sector", U32),
            ("rwbs", U32),
            ("old_dev", U32),
            ("old_sector", U64),
        ],
    ),
    spec(
        Some("net_dev_xmit"),
        Some("net_dev_xmit"),
        &[("skbaddr", U64), ("rc", I32), ("len", U32), ("name", Str)],
    ),
    spec(
        Some("netif_receive_skb"),
        Some("netif_receive_skb"),
        &[("skbaddr", U64), ("len", U32), ("name", Str)],
    ),
    spec(Some("syscall_entry_read"), Some("sys_read"), RW),
    spec(Some("syscall_exit_read"), None, RET),
    spec(Some("syscall_entry_write"), Some("sys_write"), RW),
    spec(Some("syscall_exit_write"), None, RET),
    spec(Some("compat_syscall_entry_read"), None, RW),
    spec(Some("compat_syscall_exit_read"), None, RET),
    spec(
        Some("syscall_entry_close"),
        Some("sys_close"),
        &[("fd", U32)],
    ),
    spec(Some("syscall_exit_close"), None, RET),
    spec(
        Some("syscall_entry_openat"),
        Some("sys_openat"),
        &[
            ("dfd", I32),
            ("filename", Str),
            ("flags", I32),
            ("mode", U16),
        ],
    ),
    spec(Some("syscall_exit_openat"), None, RET),
    spec(
        Some("syscall_entry_dup2"),
        Some("sys_dup2"),
        &[("oldfd", U32), ("newfd", U32)],
    ),
    spec(Some("syscall_exit_dup2"), None, RET),
    spec(Some("syscall_entry_fcntl"), Some("sys_fcntl"), FD_CMD_ARG),
    spec(Some("syscall_exit_fcntl"), None, RET),
    spec(Some("syscall_entry_ioctl"), Some("sys_ioctl"), FD_CMD_ARG),
    spec(Some("syscall_exit_ioctl"), None, RET),
    spec(
        Some("syscall_entry_socket"),
        Some("sys_socket"),
        &[("family", I32), ("type", I32), ("protocol", I32)],
    ),
    spec(Some("syscall_exit_socket"), None, RET),
    spec(Some("syscall_entry_sync"), Some("sys_sync"), &[]),
    spec(Some("syscall_exit_sync"), None, RET),
    spec(None, Some("exit_syscall"), RET),
    spec(
        Some("lttng_statedump_process_state"),
        Some("lttng_statedump_process_state"),
        &[
            ("tid", I32),
            ("pid", I32),
            ("ppid", I32),
            ("name", Comm),
            ("type", I32),
            ("prio", I32),
            ("file_table_address", U64),
        ],
    ),
    spec(
        Some("lttng_statedump_file_descriptor"),
        Some("lttng_statedump_file_descriptor"),
        &[("pid", I32), ("fd", I32), ("flags", U32), ("filename", Str)],
    ),
    spec(
        Some("lttng_statedump_block_device"),
        Some("lttng_statedump_block_device"),
        &[("dev", U32), ("diskname", Str)],
    ),
    spec(
        Some("timer_hrtimer_expire_entry"),
        Some("hrtimer_expire_entry"),
        PAGE,
    ),
    spec(Some("sched_stat_runtime"), Some("sched_stat_runtime"), WAKE),
];

/// How a trace lays its events out.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// lttng-modules 2.5 names and version (else 2.13).
    old: bool,
    bo: ByteOrder,
    /// Integers of odd bit sizes, bit-aligned, after a byte and a 3-bit field: the word reads
    /// then shift and mask.
    packed: bool,
    header: EventHeaderKind,
}

fn int_ty(ty: Ty, l: &Layout) -> FieldType {
    let (size, signed) = match ty {
        I32 => (32, true),
        I64 => (64, true),
        U16 => (16, false),
        U32 => (32, false),
        U64 => (64, false),
        _ => unreachable!(),
    };
    let size = if l.packed { size - 3 } else { size };
    let mut i = if signed {
        IntType::signed(size, l.bo)
    } else {
        IntType::unsigned(size, l.bo)
    };
    if l.packed {
        i.align = 1;
    }
    FieldType::Int(i)
}

fn field_ty(ty: Ty, l: &Layout) -> FieldType {
    match ty {
        Comm => {
            let mut c = IntType::unsigned(8, l.bo);
            c.encoding = Encoding::Utf8;
            FieldType::Array(ArrayType {
                elem: Box::new(FieldType::Int(c)),
                len: 16,
                min_align: 1,
                role: None,
            })
        }
        Str => FieldType::String(StringType {
            encoding: Encoding::Utf8,
        }),
        _ => int_ty(ty, l),
    }
}

/// The event classes of layout `l`: (id, spec) of those it has, and the trace class.
fn classes(l: &Layout) -> (Vec<(u64, &'static Spec)>, ctf::ir::TraceClass) {
    let (minor, patch) = if l.old { (5, 0) } else { (13, 11) };
    let env = vec![
        ("hostname".to_string(), EnvValue::Str("words".into())),
        ("domain".into(), EnvValue::Str("kernel".into())),
        ("tracer_name".into(), EnvValue::Str("lttng-modules".into())),
        ("tracer_major".into(), EnvValue::Int(2)),
        ("tracer_minor".into(), EnvValue::Int(minor)),
        ("tracer_patchlevel".into(), EnvValue::Int(patch)),
    ];
    let clock = monotonic_clock([9; 16], 1_700_000_000, 0);
    let mut tc = skeleton([8; 16], l.bo, clock, env, l.header);
    let mut used = Vec::new();
    let sc = tc.streams.get_mut(&0).unwrap();
    for s in SPECS {
        let Some(name) = (if l.old { s.old } else { s.new }) else {
            continue;
        };
        let id = used.len() as u64;
        let mut fields = Vec::new();
        if l.packed {
            fields.push(Field {
                name: "lead".into(),
                ty: FieldType::Int(IntType::unsigned(8, l.bo)),
            });
            let mut odd = IntType::unsigned(3, l.bo);
            odd.align = 1;
            fields.push(Field {
                name: "odd".into(),
                ty: FieldType::Int(odd),
            });
        }
        fields.extend(s.fields.iter().map(|(n, t)| Field {
            name: (*n).into(),
            ty: field_ty(*t, l),
        }));
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
        used.push((id, s));
    }
    (used, tc)
}

/// xorshift64*: the tests' deterministic randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

const COMMS: &[&[u8]] = &[
    b"",
    b"bash",
    b"bash2",
    b"kworker/0:1",
    b"exactly16bytes!!",
    b"x\xffy",
    b"swapper/1",
];

/// A random value of field `name` (drawn from small domains, so that events meet: the same
/// threads, descriptors, sectors…).
fn value(name: &str, ty: Ty, r: &mut Rng) -> Value {
    let int = match name {
        "tid" | "prev_tid" | "next_tid" | "parent_tid" | "child_tid" | "pid" | "ppid"
        | "parent_pid" | "child_pid" | "old_tid" => r.pick(&[0, 1, 2, 100, 101, 102, 103, 200]),
        "prio" | "prev_prio" | "next_prio" | "newprio" | "oldprio" => {
            r.pick(&[-1, 0, 20, 21, 100, 120, 139])
        }
        "target_cpu" | "orig_cpu" | "dest_cpu" => r.below(4) as i64,
        "fd" | "oldfd" | "newfd" | "dfd" => r.below(8) as i64,
        "cmd" => r.pick(&[0, 1, 2, 3, 1030, 0x5401]),
        "flags" | "type" => r.pick(&[0, 2, 0o2000000, 0o2000002]),
        "family" => r.pick(&[1, 2, 10]),
        "ret" => r.pick(&[-115, -11, -2, 0, 0, 1, 3, 4, 5, 4096]),
        "irq" => r.below(4) as i64,
        "vec" => r.below(3) as i64,
        "dev" | "old_dev" => r.pick(&[8, 9, 259]),
        "sector" => r.below(6) as i64 * 8,
        "nr_sector" => r.pick(&[8, 16]),
        "rwbs" => r.below(4) as i64,
        "file_table_address" => r.pick(&[0x1000, 0x2000, 0x3000]),
        "len" => r.below(2000) as i64,
        _ => r.below(1 << 20) as i64,
    };
    match ty {
        Comm => Value::Str(r.pick(COMMS).to_vec()),
        Str => Value::Str(
            r.pick(&[&b"eth0"[..], b"lo", b"/etc/passwd", b"nvme0n1", b"w\xfe"])
                .to_vec(),
        ),
        I32 | I64 => Value::I64(int),
        U16 | U32 | U64 => Value::U64(int.max(0) as u64),
    }
}

/// Writes `n` random events of layout `l` on 3 CPUs to `dir`.
fn write_random(dir: &Path, l: &Layout, seed: u64, n: usize) {
    let (used, tc) = classes(l);
    let opts = WriterOptions {
        packet_size: 4096,
        ..Default::default()
    };
    let mut w = TraceWriter::create(dir, &tc, 3, &opts).unwrap();
    let mut r = Rng(seed | 1);
    let mut ts = 1_000u64;
    for _ in 0..n {
        // Scheduling and system calls most often, as in real traces.
        let (id, s) = if r.below(3) == 0 {
            used[r.below(3) as usize]
        } else {
            used[r.below(used.len() as u64) as usize]
        };
        let mut payload = Vec::new();
        if l.packed {
            payload.push(Value::U64(r.below(256)));
            payload.push(Value::U64(r.below(8)));
        }
        payload.extend(s.fields.iter().map(|(n, t)| value(n, *t, &mut r)));
        ts += 1 + r.below(1000);
        w.write_event(r.below(3) as u32, id, ts, &payload).unwrap();
    }
    w.finish().unwrap();
}

/// The state as text, in an order that does not depend on hashing.
fn digest(s: &State) -> String {
    let mut out = format!("{:?}\n", s.threads.iter().collect::<Vec<_>>());
    let mut procs: Vec<_> = s.processes.iter().collect();
    procs.sort_by_key(|(pid, _)| **pid);
    for (pid, p) in procs {
        let mut fds: Vec<_> = p.fds.iter().collect();
        fds.sort_by_key(|(fd, _)| **fd);
        out += &format!("{pid}: {fds:?}\n");
    }
    let mut cpus: Vec<String> = s
        .known_cpus()
        .map(|c| format!("{} {:?} {:?}", c.id, c.current_tid, c.current_hard_irq))
        .collect();
    cpus.sort();
    let mut irqs: Vec<_> = s.irq_names.iter().collect();
    irqs.sort();
    let mut disks: Vec<_> = s
        .disks
        .values()
        .map(|d| {
            let mut p: Vec<_> = d.pending.iter().collect();
            p.sort_by_key(|(k, _)| **k);
            format!("{} {:?} {p:?}", d.dev, d.name)
        })
        .collect();
    disks.sort();
    out += &format!(
        "{cpus:?}\n{irqs:?}\n{disks:?}\n{:?}\n{:?}\n",
        s.files, s.netifs
    );
    out
}

/// Runs the word- and slot-reading and the generic model over `paths`; asserts they agree and
/// returns how many classes had a word plan and how many a slot plan.
fn agree(paths: &[PathBuf], quirks: bool) -> (usize, usize) {
    let opts = StateOptions {
        lttng_analyses_quirks: quirks,
    };
    let traces = ctf::open_all(paths).unwrap();
    let run = |mut m: Model| {
        let mut notes: Vec<Notification> = Vec::new();
        m.process_all(&traces, &mut notes);
        (m, notes)
    };
    let (fast, fast_notes) = run(Model::new(opts));
    let (slow, slow_notes) = run(Model::generic(opts));
    assert!(slow
        .resolver
        .classes()
        .iter()
        .all(|c| c.words.is_none() && c.slots.is_none()));
    assert_eq!(fast_notes.len(), slow_notes.len(), "{paths:?}");
    for (i, (a, b)) in fast_notes.iter().zip(&slow_notes).enumerate() {
        assert_eq!(a, b, "{paths:?}: notification {i}");
    }
    assert_eq!(digest(&fast.state), digest(&slow.state), "{paths:?}");
    let count =
        |has: fn(&kernel::Class) -> bool| fast.resolver.classes().iter().filter(|c| has(c)).count();
    (count(|c| c.words.is_some()), count(|c| c.slots.is_some()))
}

#[test]
fn random_events_in_every_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seed = 0x5eed;
    for old in [false, true] {
        for bo in [ByteOrder::Little, ByteOrder::Big] {
            for packed in [false, true] {
                for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
                    let l = Layout {
                        old,
                        bo,
                        packed,
                        header,
                    };
                    seed += 1;
                    let dir = tmp.path().join(format!("{seed}"));
                    write_random(&dir, &l, seed, 6000);
                    // Classes without a string have a fixed layout; those the state machine
                    // reads get word plans (all of them when no field straddles 8 bytes).
                    let fixed = classes(&l)
                        .0
                        .iter()
                        .filter(|(_, s)| !s.fields.iter().any(|(_, t)| matches!(t, Str)))
                        .filter(|(_, s)| s.new != Some("sched_stat_runtime"))
                        .count();
                    for quirks in [false, true] {
                        let (compiled, slotted) = agree(std::slice::from_ref(&dir), quirks);
                        eprintln!("{l:?}: {compiled} word plans of {fixed}, {slotted} slot plans");
                        // The classes with a string: irq_handler_entry, the open* entries,
                        // the network events, sched_process_exec…
                        assert!(slotted >= 3, "{l:?}: {slotted} slot plans");
                        if packed {
                            assert!(compiled >= fixed / 2, "{l:?}: {compiled} word plans");
                        } else {
                            assert_eq!(compiled, fixed, "{l:?}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn generated_kernel_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    testkit::kernel_mix(&dir, 30_000, 3, 11);
    let (words, slots) = agree(&[dir], false);
    assert!(
        words > 10 && slots >= 2,
        "{words} word plans, {slots} slot plans"
    );
}

#[test]
fn shared_traces() {
    let Some(sh) = testkit::shared_or_skip("the word-read agreement on shared traces") else {
        return;
    };
    let mut compared = 0;
    for dir in testkit::trace_dirs(&sh.join("traces/kernel")) {
        if testkit::trace_damage(&dir).is_some() {
            continue;
        }
        agree(&[dir], false);
        compared += 1;
    }
    assert!(compared > 0, "no intact shared kernel trace");
}

/// A model told to make only some notifications makes exactly those, and keeps the same state.
#[test]
fn interest_filters_notifications_only() {
    use kernel::{Interest, NoteKind};
    let tmp = tempfile::tempdir().unwrap();
    let l = Layout {
        old: false,
        bo: ByteOrder::Little,
        packed: false,
        header: EventHeaderKind::Compact,
    };
    let dir = tmp.path().join("r");
    write_random(&dir, &l, 77, 20_000);
    let traces = ctf::open_all(&[dir]).unwrap();
    let run = |interest: Interest| {
        let mut m = Model::new(StateOptions::default());
        m.state.set_interest(interest);
        let mut notes: Vec<Notification> = Vec::new();
        m.process_all(&traces, &mut notes);
        // The arguments of reads and writes in progress are kept for their Io notification
        // only.
        let ids: Vec<i32> = m.state.threads.tids().collect();
        for tid in ids {
            let t = m.state.threads.get_mut(tid).unwrap();
            if t.io_entry.as_ref().is_some_and(|e| !e.op.changes_fds()) {
                t.io_entry = None;
            }
        }
        (digest(&m.state), notes)
    };
    let (all_state, all) = run(Interest::ALL);
    use NoteKind::*;
    let kinds = NoteKind::EVERY;
    for k in kinds {
        assert!(all.iter().any(|n| n.kind() == k), "no {k:?} at all");
    }
    for set in [
        &[][..],
        &[SchedSwitch, PrioChanged, Migrate],
        &[SyscallDone],
        &[Io, BlockDone, Net],
        &[HardIrqDone, SoftIrqDone],
        &[Page, SoftIrqRaise],
        &[ThreadStatus, CpuStatus],
        &[IrqStatus, Wakeup, Lifecycle],
    ] {
        let interest = Interest::of(set);
        let (state, notes) = run(interest);
        assert!(state == all_state, "{set:?}: another state");
        let expected: Vec<_> = all
            .iter()
            .filter(|n| set.contains(&n.kind()))
            .copied()
            .collect();
        assert_eq!(notes, expected, "{set:?}");
        for k in kinds {
            assert_eq!(interest.has(k), set.contains(&k));
        }
    }
    // The system calls on descriptors only: a part of the SyscallDone notifications.
    let interest = Interest::of(&[FdSyscallDone]);
    let (state, notes) = run(interest);
    assert!(state == all_state, "FdSyscallDone: another state");
    let on_fds: Vec<_> = all
        .iter()
        .filter(|n| matches!(n, Notification::SyscallDone { on_fds: true, .. }))
        .copied()
        .collect();
    let calls = all.iter().filter(|n| n.kind() == SyscallDone).count();
    assert!(
        !on_fds.is_empty() && on_fds.len() < calls,
        "{} of {calls}",
        on_fds.len()
    );
    assert_eq!(notes, on_fds);
    assert!(notes.iter().all(|n| interest.takes(n)));
    assert!(all
        .iter()
        .filter(|n| !on_fds.contains(n))
        .all(|n| !interest.takes(n)));
}
