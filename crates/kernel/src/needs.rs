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

use ctf::Trace;

use crate::model::{kind_of, Kind};
use crate::state::{Facet, Interest, NoteKind};

/// Whether events of `kind` can change what a consumer with `interest` sees.
pub fn wants(interest: Interest, kind: Kind) -> bool {
    use Kind::*;
    let note = |k| interest.has(k);
    // Notifications that carry (or are attributed by) thread state read it too.
    let threads = interest.reads(Facet::Threads)
        || note(NoteKind::SchedSwitch)
        || note(NoteKind::PrioChanged)
        || note(NoteKind::Migrate)
        || note(NoteKind::SyscallDone)
        || note(NoteKind::Io)
        || note(NoteKind::Page);
    let fds = interest.reads(Facet::Fds) || note(NoteKind::Io);
    match kind {
        SchedSwitch | SchedWakeup | SchedWaking | SchedWakeupNew | SchedPiSetprio
        | SchedMigrateTask => threads,
        SchedProcessFork | SchedProcessExec | StatedumpProcessState => threads || fds,
        StatedumpFileDescriptor => fds,
        SyscallEntry(_) | SyscallExit(_) => fds || note(NoteKind::SyscallDone),
        BlockRqIssue | BlockRqComplete | BlockBioRemap => {
            interest.reads(Facet::Disks) || note(NoteKind::BlockDone)
        }
        StatedumpBlockDevice => interest.reads(Facet::Disks),
        IrqHandlerEntry => interest.reads(Facet::IrqNames) || note(NoteKind::HardIrqDone),
        IrqHandlerExit => note(NoteKind::HardIrqDone),
        SoftirqRaise | SoftirqEntry | SoftirqExit => {
            note(NoteKind::SoftIrqRaise) || note(NoteKind::SoftIrqDone)
        }
        NetDevXmit | NetifReceiveSkb => interest.reads(Facet::Netifs) || note(NoteKind::Net),
        PageAlloc | PageFree => note(NoteKind::Page),
        SchedProcessExit | SchedProcessFree | BlockBioBackmerge | HrtimerExpireEntry
        | HrtimerExpireExit | StatedumpStart | StatedumpEnd | Other => false,
    }
}

/// Per stream class position, per event class position of `trace`
/// ([`ctf::Event::class_index`]): whether a consumer with `interest` needs the class's events.
pub fn wanted_classes(trace: &Trace, interest: Interest) -> Vec<Vec<bool>> {
    let streams = &trace.layout.streams;
    (0..streams.len())
        .map(|sc| {
            let events = &streams.at(sc).events;
            (0..events.len())
                .map(|ev| wants(interest, kind_of(&events.at(ev).name)))
                .collect()
        })
        .collect()
}
