//! The classes of the stack events `tracekit record --stacks` writes, and of the kernel symbol
//! table that comes with them.
//!
//! The stack events are named after the latency tracker's
//! (`latency_tracker_syscall_stack`, `latency_tracker_offcpu_sched_switch`,
//! `latency_tracker_offcpu_sched_wakeup`, …), but the stacks are whole binary address arrays
//! (`kstack`, `ustack`: sequences of 64-bit addresses, innermost frame first) instead of
//! 256-character text. Every class starts with the same fields — `comm`, `tid`, `pid` (of the
//! task whose stack it is), `start_ts` (when the measured interval began, in the trace
//! clock's cycles), `delay` (ns) — then its own ones, then the stacks.
//! `tracekit_ksym` events (`address`, `size`, `name`, `module`) carry the `/proc/kallsyms`
//! entries the stacks' kernel addresses fall in, so the trace symbolizes anywhere.

use super::{event_class, hex64, i32f, i64f, seq, string, u32f, u64f, H, LE};
use ctf::ir::{Field, TraceClass};

/// Event class ids of the stack events (after every other kernel class).
pub mod ev {
    /// `latency_tracker_syscall_stack`: a thread blocked in a system call over the threshold.
    pub const SYSCALL_STACK: u64 = 3000;
    /// `latency_tracker_offcpu_sched_switch`: a thread switched in after being off the CPU
    /// over the threshold (its stack as it stopped).
    pub const OFFCPU_SWITCH: u64 = 3001;
    /// `latency_tracker_offcpu_sched_wakeup`: the waker of a thread off the CPU over the
    /// threshold (the waker's stack).
    pub const OFFCPU_WAKEUP: u64 = 3002;
    /// `latency_tracker_wakeup_stack`: a thread switched in over the threshold after its
    /// wakeup.
    pub const WAKEUP_STACK: u64 = 3003;
    /// `latency_tracker_block_stack`: the issuer of a block request over the threshold.
    pub const BLOCK_STACK: u64 = 3004;
    /// `tracekit_ksym`: one kernel symbol.
    pub const KSYM: u64 = 3005;
}

/// `(id, name)` of the stack event classes.
pub const STACK_CLASSES: &[(u64, &str)] = &[
    (ev::SYSCALL_STACK, "latency_tracker_syscall_stack"),
    (ev::OFFCPU_SWITCH, "latency_tracker_offcpu_sched_switch"),
    (ev::OFFCPU_WAKEUP, "latency_tracker_offcpu_sched_wakeup"),
    (ev::WAKEUP_STACK, "latency_tracker_wakeup_stack"),
    (ev::BLOCK_STACK, "latency_tracker_block_stack"),
];

/// Name of the symbol-table event class.
pub const KSYM_NAME: &str = "tracekit_ksym";

/// Adds the stack and symbol classes to stream class 0 of `tc`.
pub fn add_stack_classes(tc: &mut TraceClass) {
    let sc = tc.streams.get_mut(&0).expect("stream class 0");
    for &(id, name) in STACK_CLASSES {
        let mut f: Vec<Field> = vec![
            string("comm"),
            i32f("tid"),
            i32f("pid"),
            u64f("start_ts"),
            u64f("delay"),
        ];
        match id {
            ev::SYSCALL_STACK => f.push(i64f("id")),
            ev::OFFCPU_WAKEUP => {
                f.extend([string("wakee_comm"), i32f("wakee_tid"), i32f("wakee_pid")]);
            }
            ev::BLOCK_STACK => f.push(u64f("sector")),
            _ => {}
        }
        let addr = super::int(64, false, H, LE);
        let n = f.len();
        f.push(u32f("_kstack_length"));
        f.push(seq("kstack", addr.clone(), n, &[]));
        f.push(u32f("_ustack_length"));
        f.push(seq("ustack", addr, n + 2, &[]));
        sc.events.insert(id, event_class(id, name.into(), f));
    }
    sc.events.insert(
        ev::KSYM,
        event_class(
            ev::KSYM,
            KSYM_NAME.into(),
            vec![
                hex64("address"),
                u64f("size"),
                string("name"),
                string("module"),
            ],
        ),
    );
}
