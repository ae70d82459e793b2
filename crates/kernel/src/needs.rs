//! Which events the state machine needs for a given [`Interest`].
//!
//! Each event kind changes some parts of the [`crate::State`] and makes some notifications
//! (see `State::apply`). A kind none of whose effects reaches a wanted notification or a read
//! facet can be left out of the read ([`ctf::SkipRule`]) without changing anything a consumer
//! sees: an analysis of CPU usage reads no system call, IRQ or block event.
//!
//! What each kind touches:
//! - threads (names, pids, priorities, last wakeup) and the thread running on each CPU:
//!   `sched_switch`, the wakeups, `sched_pi_setprio`, `sched_migrate_task`, fork, exec and the
//!   statedump's processes; the CPUs are created by these, by IRQ and soft IRQ events, and by
//!   wakeup targets (a reader gives out the first event of every class anyway, which keeps the
//!   set of CPUs seen);
//! - descriptor tables: fork, exec, the statedump's processes and descriptors, system calls;
//! - disks: block requests and remaps, the statedump's block devices;
//! - IRQ names: `irq_handler_entry`; network interface names: the network events.
//! - the status notifications of a state model (thread and CPU statuses, IRQ and soft IRQ
//!   steps, wakeups, thread lifecycle): the scheduler events, system calls, IRQs and soft IRQs
//!   (a wakeup in one is the interrupt's), fork, exec, `sched_process_free` and the statedump.
//!
//! System calls are read whole by a consumer of any of them ([`wanted_classes`]): a call's
//! exit pairs with the last entry of its thread, so where an exit was lost the entry of any
//! other call stands in between. In a trace that lost nothing (no discarded event or packet,
//! no unreadable data, over the streams' common time range), every exit follows its own entry
//! and the calls a consumer does not count can be left out too
//! ([`wanted_classes_lossless`]): for the descriptor tables, the calls that change none; for
//! the I/O notifications and [`NoteKind::FdSyscallDone`], the calls that work on no
//! descriptor. (An analysis of I/O then skips the frequent calls on no descriptor: `clone`,
//! `futex`, `mmap`…)

use ctf::Trace;
use pipeline::classes_where;

use crate::model::{classify_unnumbered, FdOp, Kind};
use crate::state::{Facet, Interest, NoteKind};

/// Whether events of `kind` can change what a consumer with `interest` sees.
pub(crate) fn wants(interest: Interest, kind: Kind) -> bool {
    use Kind::*;
    let note = |k| interest.has(k);
    // Notifications that carry (or are attributed by) thread state read it too.
    let threads = interest.reads(Facet::Threads)
        || note(NoteKind::SchedSwitch)
        || note(NoteKind::PrioChanged)
        || note(NoteKind::Migrate)
        || note(NoteKind::SyscallDone)
        || note(NoteKind::FdSyscallDone)
        || note(NoteKind::Io)
        || note(NoteKind::Page)
        || note(NoteKind::ThreadStatus)
        || note(NoteKind::CpuStatus)
        || note(NoteKind::Wakeup)
        || note(NoteKind::Lifecycle);
    // The statuses follow system calls and interrupts too.
    let status = note(NoteKind::ThreadStatus) || note(NoteKind::CpuStatus);
    let fds = interest.reads(Facet::Fds) || note(NoteKind::Io);
    match kind {
        SchedSwitch | SchedWakeup | SchedWaking | SchedWakeupNew | SchedPiSetprio
        | SchedMigrateTask => threads,
        SchedProcessFork | SchedProcessExec | StatedumpProcessState => threads || fds,
        StatedumpFileDescriptor => fds,
        SyscallEntry(_) | SyscallExit(_) => {
            fds || status || note(NoteKind::SyscallDone) || note(NoteKind::FdSyscallDone)
        }
        BlockRqIssue | BlockRqComplete | BlockBioRemap => {
            interest.reads(Facet::Disks) || note(NoteKind::BlockDone)
        }
        StatedumpBlockDevice => interest.reads(Facet::Disks),
        IrqHandlerEntry => {
            interest.reads(Facet::IrqNames)
                || note(NoteKind::HardIrqDone)
                || status
                || note(NoteKind::IrqStatus)
                || note(NoteKind::Wakeup)
        }
        IrqHandlerExit => {
            note(NoteKind::HardIrqDone)
                || status
                || note(NoteKind::IrqStatus)
                || note(NoteKind::Wakeup)
        }
        // (A wakeup tells whether an interrupt made it.)
        SoftirqRaise | SoftirqEntry | SoftirqExit => {
            note(NoteKind::SoftIrqRaise)
                || note(NoteKind::SoftIrqDone)
                || status
                || note(NoteKind::IrqStatus)
                || note(NoteKind::Wakeup)
        }
        NetDevXmit | NetifReceiveSkb => interest.reads(Facet::Netifs) || note(NoteKind::Net),
        PageAlloc | PageFree => note(NoteKind::Page),
        SchedProcessFree => note(NoteKind::Lifecycle),
        SchedProcessExit | BlockBioBackmerge | HrtimerExpireEntry | HrtimerExpireExit
        | StatedumpStart | StatedumpEnd => false,
        // Not read by the state machine ([`Kind::is_modelled`]).
        SchedTtwu | NetDevQueue | InetSockLocalOut | InetSockLocalIn | IpiEntry | IpiExit
        | DoIrqEntry | DoIrqReturn | PacketRxEntry | PacketRxReturn | IrqVectorEntry
        | IrqVectorExit | LocalTimerEntry | LocalTimerExit | Other => false,
    }
}

/// In a trace that lost nothing: whether the entries and exits of a system call that does
/// `op` to file descriptors can change what a consumer with `interest` sees (see the module
/// documentation).
pub(crate) fn wants_call(interest: Interest, op: FdOp) -> bool {
    interest.has(NoteKind::SyscallDone)
        || interest.has(NoteKind::ThreadStatus)
        || interest.has(NoteKind::CpuStatus)
        || op != FdOp::None
            && (interest.has(NoteKind::FdSyscallDone)
                || interest.has(NoteKind::Io)
                || interest.reads(Facet::Fds) && op.changes_fds())
}

/// Whether [`wanted_classes_lossless`] leaves out more than [`wanted_classes`] for
/// `interest`: it reads some system calls, not all.
pub fn narrower_when_lossless(interest: Interest) -> bool {
    !interest.has(NoteKind::SyscallDone)
        && !interest.has(NoteKind::ThreadStatus)
        && !interest.has(NoteKind::CpuStatus)
        && (interest.has(NoteKind::FdSyscallDone)
            || interest.has(NoteKind::Io)
            || interest.reads(Facet::Fds))
}

/// Per stream class position, per event class position of `trace`
/// ([`ctf::Event::class_index`]): whether a consumer with `interest` needs the class's events.
pub fn wanted_classes(trace: &Trace, interest: Interest) -> Vec<Vec<bool>> {
    classes_where(trace, |name| {
        wants(interest, classify_unnumbered(name).kind)
    })
}

/// [`wanted_classes`] for a read that lost nothing: without the system calls `interest` does
/// not count (see the module documentation). A reader that meets a loss must read again with
/// [`wanted_classes`].
pub fn wanted_classes_lossless(trace: &Trace, interest: Interest) -> Vec<Vec<bool>> {
    classes_where(trace, |name| {
        let r = classify_unnumbered(name);
        wants(interest, r.kind)
            && match r.kind {
                // `exit_syscall` (lttng-modules < 2.7) ends every call.
                Kind::SyscallEntry(_) | Kind::SyscallExit(Some(_)) => wants_call(interest, r.fdop),
                _ => true,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_kept_in_a_lossless_read() {
        let of = |kinds: &[NoteKind]| Interest::of(kinds);
        let fds = Interest::NONE.reading(&[Facet::Fds]);
        let ops = [FdOp::None, FdOp::Open, FdOp::Read, FdOp::Close, FdOp::Sync];
        let kept = |i: Interest| -> Vec<bool> { ops.iter().map(|&op| wants_call(i, op)).collect() };
        // Every call counts for SyscallDone, whatever else is wanted.
        assert_eq!(kept(of(&[NoteKind::SyscallDone])), [true; 5]);
        assert_eq!(kept(of(&[NoteKind::SyscallDone, NoteKind::Io])), [true; 5]);
        // The calls on descriptors for their notifications.
        assert_eq!(
            kept(of(&[NoteKind::FdSyscallDone])),
            [false, true, true, true, true]
        );
        assert_eq!(kept(of(&[NoteKind::Io])), [false, true, true, true, true]);
        // Only those that change the tables for the tables alone.
        assert_eq!(kept(fds), [false, true, false, true, false]);
        assert!(kept(of(&[NoteKind::SchedSwitch])).iter().all(|k| !k));

        assert!(narrower_when_lossless(of(&[NoteKind::FdSyscallDone])));
        assert!(narrower_when_lossless(of(&[NoteKind::Io, NoteKind::Net])));
        assert!(narrower_when_lossless(fds));
        assert!(!narrower_when_lossless(
            of(&[NoteKind::SyscallDone]).reading(&[Facet::Fds])
        ));
        assert!(!narrower_when_lossless(of(&[NoteKind::SchedSwitch])));
        assert!(!narrower_when_lossless(Interest::ALL));
    }
}
