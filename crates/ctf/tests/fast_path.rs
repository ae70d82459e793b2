//! The straight-line paths (compiled LTTng headers, fixed-layout event bodies, plan reads,
//! arrays of scalars read on access)
//! must decode exactly what the general decoder does: every event of generated kernel traces,
//! compact and large headers, is read twice, once with the compiled plans removed from the
//! layout, and compared scope by scope.

use std::sync::Arc;

use ctf::layout::Layout;
use ctf::writer::EventHeaderKind;
use ctf::{Message, StreamReader, Trace};
use scenario::kernel_mix::{generate, KernelMixParams};

/// The same trace with every compiled shortcut removed: the general decoder does it all.
fn without_shortcuts(t: &Trace) -> Arc<Trace> {
    let mut layout: Layout = (*t.layout).clone();
    let mut streams = std::mem::take(&mut layout.streams);
    for (_, sl) in streams.iter_mut() {
        sl.compiled_header = None;
        for (_, el) in sl.events.iter_mut() {
            el.fixed_body = None;
        }
    }
    layout.streams = streams;
    for n in &mut layout.nodes {
        n.stride = 0;
    }
    Arc::new(Trace {
        path: t.path.clone(),
        class: t.class.clone(),
        layout: Arc::new(layout),
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
        .filter(|(_, el)| el.fixed_body.is_some())
        .count();
    assert!(fast_classes > 10, "only {fast_classes} fixed-body classes");
    assert!(fast
        .layout
        .streams
        .iter()
        .all(|(_, sl)| sl.compiled_header.is_some()));
    let slow = without_shortcuts(&fast);
    let mut events = 0;
    for (mut a, mut b) in fast.readers().into_iter().zip(slow.readers()) {
        loop {
            match (a.next(), b.next()) {
                (None, None) => break,
                (Some(Ok(Message::Event)), Some(Ok(Message::Event))) => {
                    events += 1;
                    assert_eq!(describe(&a), describe(&b));
                    let (ea, eb) = (a.event(), b.event());
                    assert_eq!(ea.fold_fields(), eb.fold_fields(), "{}", ea.name());
                }
                (x, y) => assert_eq!(format!("{x:?}"), format!("{y:?}")),
            }
        }
    }
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
