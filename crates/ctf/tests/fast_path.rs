//! The straight-line paths (compiled LTTng headers, fixed-layout event bodies, the programs of
//! the other bodies, plan reads, arrays of scalars read on access), on generated traces and,
//! with `TRACEKIT_SHARED`, on every real trace of the shared data, must decode exactly what
//! the general decoder does: every event of generated kernel traces,
//! compact and large headers, is read twice, once with the compiled plans removed from the
//! layout, and compared scope by scope.

use std::sync::Arc;

use ctf::writer::EventHeaderKind;
use ctf::{Message, StreamReader, Trace};
use scenario::kernel_mix::{generate, KernelMixParams};

/// The same trace with every compiled shortcut removed: the general decoder does it all.
fn without_shortcuts(t: &Trace) -> Arc<Trace> {
    Arc::new(Trace {
        path: t.path.clone(),
        name: t.name.clone(),
        class: t.class.clone(),
        layout: Arc::new(t.layout.without_shortcuts()),
        streams: t.streams.clone(),
        index: t.index,
        errors: t.errors.clone(),
    })
}

/// Everything an event exposes, as comparable text.
fn describe(r: &StreamReader) -> String {
    let ev = r.event();
    let scope = |v: Option<ctf::FieldView>| v.map(|v| format!("{:?}", v.to_value()));
    format!(
        "{} id={} cycles={} ns={:?} header={:?} common={:?} specific={:?} payload={:?}",
        ev.name(),
        ev.class_id(),
        ev.cycles(),
        ev.time_ns(),
        scope(ev.header()),
        scope(ev.common_context()),
        scope(ev.specific_context()),
        scope(ev.payload()),
    )
}

/// Reads `fast` and its twin without shortcuts stream by stream (at most `limit` events each)
/// and compares every event; returns the number of events compared.
fn compare(fast: &Arc<Trace>, limit: u64) -> u64 {
    let slow = without_shortcuts(fast);
    let mut events = 0;
    for (mut a, mut b) in fast.readers().into_iter().zip(slow.readers()) {
        let mut n = 0;
        loop {
            match (a.next(), b.next()) {
                (None, None) => break,
                (Some(Ok(Message::Event)), Some(Ok(Message::Event))) => {
                    events += 1;
                    n += 1;
                    assert_eq!(describe(&a), describe(&b), "{}", fast.path.display());
                    let (ea, eb) = (a.event(), b.event());
                    assert_eq!(ea.fold_fields(), eb.fold_fields(), "{}", ea.name());
                    if let (Some(pa), Some(pb)) = (ea.payload(), eb.payload()) {
                        for i in 0.. {
                            let Some(m) = pb.member_at(i) else { break };
                            assert_eq!(pa.int_member(i), m.as_i128(), "{} member {i}", ea.name());
                        }
                    }
                    if n >= limit {
                        break;
                    }
                }
                (x, y) => assert_eq!(format!("{x:?}"), format!("{y:?}")),
            }
        }
    }
    events
}

#[test]
fn shared_traces_decode_as_the_general_path() {
    let Some(shared) = testkit::shared_or_skip("the fast-path comparison on real traces") else {
        return;
    };
    let mut dirs = Vec::new();
    for sub in ["kernel", "ust", "ctf"] {
        let root = shared.join("traces").join(sub);
        if let Ok(found) = ctf::trace::discover(&root) {
            dirs.extend(found);
        }
    }
    let (mut traces, mut events) = (0, 0);
    for d in &dirs {
        // Traces the reader rejects (or damaged ones) are other tests' business.
        let Ok(t) = Trace::open(d) else { continue };
        let n = compare(&Arc::new(t), 20_000);
        traces += 1;
        events += n;
    }
    assert!(
        traces > 30 && events > 100_000,
        "{traces} traces, {events} events"
    );
}

fn check(header: EventHeaderKind) {
    let dir = tempfile::tempdir().unwrap();
    let params = KernelMixParams {
        events: 20_000,
        cpus: 2,
        header,
        ..Default::default()
    };
    let trace_dir = dir.path().join("kernel");
    generate(&trace_dir, &params).unwrap();
    let fast = Arc::new(Trace::open(&trace_dir).unwrap());
    let fast_classes = fast
        .layout
        .streams
        .iter()
        .flat_map(|(_, sl)| sl.events.iter())
        .filter(|(_, el)| el.has_fixed_body())
        .count();
    assert!(fast_classes > 10, "only {fast_classes} fixed-body classes");
    // Strings, sequences of structures and variants (`irq_handler_entry`, `epoll_wait`,
    // `net_if_receive_skb`): compiled into programs, which these events go through.
    let programs = fast
        .layout
        .streams
        .iter()
        .flat_map(|(_, sl)| sl.events.iter().map(move |e| (sl, e)))
        .filter(|(sl, (_, el))| el.has_program(&fast.layout, sl))
        .map(|(_, (_, el))| el.name.to_string())
        .collect::<Vec<_>>();
    for name in [
        "irq_handler_entry",
        "syscall_exit_epoll_wait",
        "net_if_receive_skb",
    ] {
        assert!(programs.iter().any(|p| p == name), "no program for {name}");
    }
    assert!(fast
        .layout
        .streams
        .iter()
        .all(|(_, sl)| sl.has_compiled_header()));
    let events = compare(&fast, u64::MAX);
    // The generator adds statedump events to the requested count.
    assert!(events >= 20_000, "{events} events");
}

#[test]
fn compact_headers_decode_as_the_general_path() {
    check(EventHeaderKind::Compact);
}

#[test]
fn large_headers_decode_as_the_general_path() {
    check(EventHeaderKind::Large);
}
