//! A pass whose analyses count only some system calls (the I/O analyses) leaves the others out
//! of the read while the trace has lost nothing (`driver::events_for_interest_lossless`); at the
//! first loss it reads again with every system call, and its results are those of a full read.

use std::path::Path;
use std::sync::Arc;

use analysis::driver::{events_for_interest, events_for_interest_lossless, RangeEvents};
use analysis::{Common, Options};
use kernel::Interest;
use scenario::common::{futex_entry, futex_exit, read_entry, read_exit, switch, Task};
use scenario::lttng::ev;

/// One CPU, one thread: a `futex` call, a `read` whose exit is missing, another `futex`,
/// then the exit of a `read` whose entry is missing. With `lost`, the writer counts the two
/// missing events as discarded in the second packet, as a tracer does; without, the trace
/// claims to be whole (which it is not).
fn write_trace(dir: &Path, lost: bool) {
    let mut w = testkit::small_kernel_writer(dir, 7, 1);
    let (idle, t) = (Task::swapper(0), Task::new(100, 100, "reader"));
    let futex = |ts: u64| {
        [
            (ev::SYS_FUTEX, ts, futex_entry(0x1000, 128, 0)),
            (ev::SYSX_FUTEX, ts + 100, futex_exit(0, 0x1000)),
        ]
    };
    // A reader gives out the first event of each class whatever it leaves out: hence the
    // first futex.
    let [f0, f1] = futex(1_100);
    let first = [
        (ev::SCHED_SWITCH, 1_000, switch(&idle, 0, &t)),
        f0,
        f1,
        (ev::SYS_READ, 1_500, read_entry(3, 4096)),
    ];
    let [f2, f3] = futex(2_000);
    let second = [
        f2,
        f3,
        (ev::SYSX_READ, 30_000, read_exit(4096, 0)),
        (ev::SCHED_SWITCH, 40_000, switch(&t, 1, &idle)),
    ];
    for (i, events) in [first, second].iter().enumerate() {
        if i == 1 {
            // The rest goes in a second packet.
            w.flush().unwrap();
            if lost {
                w.add_discarded(0, 2).unwrap();
            }
        }
        for (id, ts, payload) in events {
            w.write_event(0, *id, *ts, payload).unwrap();
        }
    }
    w.finish().unwrap();
}

fn open(lost: bool) -> (tempfile::TempDir, Vec<Arc<ctf::Trace>>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    write_trace(&dir, lost);
    let traces = ctf::open_all(&[dir]).unwrap();
    (tmp, traces)
}

fn interest_of(name: &str) -> Interest {
    analysis::build(name, &Common::default(), &Options::default())
        .unwrap()
        .0
        .interest()
}

/// The names of the events a read gives out, and whether it met a loss.
fn read(mut events: RangeEvents) -> (Vec<String>, bool) {
    let mut names = Vec::new();
    while let Some((ev, _)) = events.next() {
        names.push(ev.name().to_string());
    }
    (names, events.lost())
}

/// The tables of `name` from a pass over `traces` (a full read with `read_every_event`).
fn tables(traces: &[Arc<ctf::Trace>], name: &str, read_every_event: bool) -> String {
    let common = Common {
        read_every_event,
        ..Default::default()
    };
    let opts = Options::default();
    let mut make = || vec![analysis::build(name, &common, &opts).unwrap().0];
    let mut out = String::new();
    analysis::run_refresh(traces, &common, None, &mut make, &mut |r, t| {
        out.push_str(&format!("{r:?} {t:?}\n"))
    })
    .unwrap();
    out
}

#[test]
fn a_whole_trace_is_read_without_the_calls_not_counted() {
    let (_tmp, traces) = open(false);
    for name in ["iolatencystats", "iousagetop"] {
        let lossless = events_for_interest_lossless(&traces, &Common::default(), interest_of(name))
            .expect("a lossless read applies");
        let (names, lost) = read(lossless);
        assert!(!lost, "{name}");
        let futex = |names: &[String]| names.iter().filter(|n| n.contains("futex")).count();
        assert!(
            names.iter().any(|n| n == "syscall_exit_read"),
            "{name}: {names:?}"
        );
        assert_eq!(
            futex(&names),
            2,
            "{name}: only the first of each: {names:?}"
        );
        let (all, _) = read(events_for_interest(
            &traces,
            &Common::default(),
            interest_of(name),
        ));
        assert_eq!(futex(&all), 4, "{name}: {all:?}");
    }
    // Counting every call, or none: nothing more to leave out.
    for name in ["syscallstats", "cputop"] {
        assert!(
            events_for_interest_lossless(&traces, &Common::default(), interest_of(name)).is_none(),
            "{name}"
        );
    }
    // Nor where a late stream would have lost its start.
    let common = Common {
        no_intersection: true,
        ..Default::default()
    };
    assert!(
        events_for_interest_lossless(&traces, &common, interest_of("iolatencystats")).is_none()
    );
}

#[test]
fn a_lossless_read_stops_at_the_first_loss() {
    let (_tmp, traces) = open(true);
    let lossless =
        events_for_interest_lossless(&traces, &Common::default(), interest_of("iolatencystats"))
            .unwrap();
    let (names, lost) = read(lossless);
    assert!(lost);
    // Nothing after the packet that reports the loss.
    assert_eq!(
        names,
        [
            "sched_switch",
            "syscall_entry_futex",
            "syscall_exit_futex",
            "syscall_entry_read"
        ]
    );
}

#[test]
fn a_trace_that_lost_events_gives_what_a_full_read_gives() {
    let (_tmp, lossy) = open(true);
    let (_tmp2, whole) = open(false);
    for name in ["iolatencystats", "iolatencytop", "iolog", "iousagetop"] {
        assert_eq!(
            tables(&lossy, name, false),
            tables(&lossy, name, true),
            "{name}"
        );
    }
    // What the second read mends: the same events in a trace that does not say it lost two
    // are read without the second futex, and the lone read exit pairs with the lone entry
    // (one read of 28.5 µs) where a full read pairs it with nothing (the futex came between).
    let read_row =
        |t: &str| t.contains(r#"[String("Read"), Number(UInt(1)), Duration(Int(28500))"#);
    assert!(!read_row(&tables(&lossy, "iolatencystats", false)));
    assert!(!read_row(&tables(&whole, "iolatencystats", true)));
    assert!(read_row(&tables(&whole, "iolatencystats", false)));
}
