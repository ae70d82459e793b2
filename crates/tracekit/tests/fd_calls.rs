//! The I/O latency analyses take only the `SyscallDone` notifications of the system calls on
//! file descriptors (`kernel::NoteKind::FdSyscallDone`), and a read of a trace that lost
//! nothing leaves the other calls out for them: every call they count must be one the kernel
//! model sees as working on descriptors. Checked over every x86-64 system call name.

use kernel::FdOp;

#[test]
fn every_call_the_io_latency_analyses_count_works_on_descriptors() {
    let mut counted = Vec::new();
    for &(_, name) in record::syscall_table::X86_64 {
        // fcntl counts only when it duplicates a descriptor (F_DUPFD, F_DUPFD_CLOEXEC).
        for cmd in [None, Some(0), Some(1030)] {
            if analysis::io::Category::of(name, cmd).is_some() {
                assert_ne!(FdOp::of(name), FdOp::None, "{name}");
                counted.push(name);
            }
        }
    }
    counted.dedup();
    // open, read, write, sync… and their variants.
    assert!(counted.len() >= 20, "{counted:?}");
    assert!(counted.contains(&"openat") && counted.contains(&"fdatasync"));
}
