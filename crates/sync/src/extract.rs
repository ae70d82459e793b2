//! Network events of `ctf::Event`s, in every LTTng layout:
//! - `inet_sock_local_out` / `inet_sock_local_in` (lttng addons): `seq`, `ack_seq`, `flags` at
//!   the top level (with `saddr`, `daddr`, `sport`, `dport` when present);
//! - `net_dev_queue` / `netif_receive_skb` or `net_if_receive_skb`, lttng-modules < 2.7 and
//!   2.7/2.8 (`transport_fields`/`thtype_tcp`/…) and 2.9+ (`network_header`/<ipv4|ipv6>/
//!   `transport_header`/`tcp`/…).
//!
//! The TCP fields are found by a depth-first walk through structures and variants (skipping
//! `unknown` variant options) to the first structure with `seq`, `ack_seq` and `flags`, so every
//! layout above is handled by one rule. Events without TCP fields give nothing.

use std::collections::HashMap;
use std::hash::Hasher;

use ctf::{Event, FieldValue, FieldView, Trace};

use crate::matching::{Dir, FastHasher, NetEvent, PacketKey};

/// Direction of a network event class by name.
pub fn direction(name: &str) -> Option<Dir> {
    match name {
        "inet_sock_local_out" | "net_dev_queue" => Some(Dir::Send),
        "inet_sock_local_in" | "netif_receive_skb" | "net_if_receive_skb" => Some(Dir::Recv),
        _ => None,
    }
}

/// True when the trace declares at least one network event class (Trace Compass's gate).
pub fn can_match(trace: &Trace) -> bool {
    trace
        .class
        .streams
        .values()
        .flat_map(|s| s.events.values())
        .any(|e| direction(&e.name).is_some())
}

/// The host identity of a trace: its default clock's UUID (as Trace Compass), else the
/// `hostname` environment entry, else the trace path.
pub fn host_id(trace: &Trace) -> String {
    let clock = trace
        .class
        .streams
        .values()
        .find_map(|s| s.default_clock)
        .or(if trace.class.clocks.is_empty() {
            None
        } else {
            Some(0)
        })
        .and_then(|i| trace.class.clocks.get(i));
    if let Some(u) = clock.and_then(|c| c.uuid) {
        return ctf::writer::tsdl::uuid_string(&u);
    }
    if let Some(h) = trace.hostname() {
        return format!("hostname:{h}");
    }
    format!("path:{}", trace.path.display())
}

/// The TCP key of a network event payload (`flow` = 0 when the layout has no 4-tuple).
pub fn packet_key(payload: &FieldView<'_>) -> Option<PacketKey> {
    let mut ctx = FlowParts::default();
    let tcp = find_tcp(payload, &mut ctx, 0)?;
    let get = |n: &str| tcp.field(n).and_then(|v| v.as_u64());
    let seq = get("seq")?;
    let ack_seq = get("ack_seq")?;
    let flags = get("flags")?;
    Some(PacketKey {
        seq: seq as u32,
        ack_seq: ack_seq as u32,
        flags: flags as u32,
        flow: ctx.flow(),
    })
}

#[derive(Default)]
struct FlowParts {
    saddr: Option<u64>,
    daddr: Option<u64>,
    sport: Option<u64>,
    dport: Option<u64>,
}

impl FlowParts {
    fn flow(&self) -> u64 {
        match (self.saddr, self.daddr, self.sport, self.dport) {
            (Some(a), Some(b), Some(c), Some(d)) => {
                let mut h = FastHasher::default();
                for v in [a, b, c, d] {
                    h.write_u64(v);
                }
                h.finish() | 1
            }
            _ => 0,
        }
    }
}

/// A hash of an address field: an integer or an array of integers (IPv4 bytes, IPv6 words).
fn addr_hash(v: &FieldView<'_>) -> Option<u64> {
    match v.value() {
        FieldValue::Array(elems) => {
            let mut h = FastHasher::default();
            let mut n = 0;
            for e in elems {
                h.write_u64(e.as_u64()?);
                n += 1;
            }
            h.write_u64(n);
            Some(h.finish())
        }
        _ => v.as_u64().map(|x| x ^ 0x4000_0000_0000_0000),
    }
}

fn find_tcp<'a>(v: &FieldView<'a>, ctx: &mut FlowParts, depth: u32) -> Option<FieldView<'a>> {
    if depth > 6 {
        return None;
    }
    match v.value() {
        FieldValue::Struct(members) => {
            let (mut seq, mut ack, mut flags) = (false, false, false);
            let mut inner = Vec::new();
            for (name, m) in members {
                match name {
                    "seq" => seq = true,
                    "ack_seq" => ack = true,
                    "flags" => flags = true,
                    "saddr" => ctx.saddr = addr_hash(&m),
                    "daddr" => ctx.daddr = addr_hash(&m),
                    "sport" | "source_port" => ctx.sport = m.as_u64(),
                    "dport" | "dest_port" => ctx.dport = m.as_u64(),
                    _ => {
                        if matches!(m.value(), FieldValue::Struct(_) | FieldValue::Variant(..)) {
                            inner.push(m);
                        }
                    }
                }
            }
            if seq && ack && flags {
                return Some(*v);
            }
            inner.iter().find_map(|m| find_tcp(m, ctx, depth + 1))
        }
        FieldValue::Variant(opt, inner) => {
            if opt.contains("unknown") {
                None
            } else {
                find_tcp(&inner, ctx, depth + 1)
            }
        }
        _ => None,
    }
}

/// Extracts network events from one trace's events, caching the direction per event class.
pub struct Extractor {
    host: u32,
    trace: u32,
    classes: HashMap<(u64, u64), Option<Dir>>,
}

impl Extractor {
    pub fn new(host: u32, trace: u32) -> Self {
        Extractor {
            host,
            trace,
            classes: HashMap::new(),
        }
    }

    /// The network event of `ev`, if it is one with TCP fields and a timestamp.
    pub fn event(&mut self, ev: &Event<'_>) -> Option<NetEvent> {
        let dir = *self
            .classes
            .entry((ev.stream_class_id(), ev.class_id()))
            .or_insert_with(|| direction(ev.name()))
            .as_ref()?;
        let key = packet_key(&ev.payload()?)?;
        Some(NetEvent {
            host: self.host,
            trace: self.trace,
            dir,
            key,
            ts: ev.time_ns()?,
        })
    }
}

fn collect_names(ty: &ctf::ir::FieldType, out: &mut Vec<String>, depth: u32) {
    if depth > 8 {
        return;
    }
    match ty {
        ctf::ir::FieldType::Struct(s) => {
            for f in &s.fields {
                out.push(f.name.clone());
                collect_names(&f.ty, out, depth + 1);
            }
        }
        ctf::ir::FieldType::Variant(v) => {
            for o in &v.options {
                collect_names(&o.ty, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// True when every network event class of the trace carries the address/port 4-tuple, so
/// that keys can include the flow. None when the trace has no network event class.
pub fn has_flow_fields(trace: &Trace) -> Option<bool> {
    let mut any = false;
    let mut all = true;
    for e in trace.class.streams.values().flat_map(|s| s.events.values()) {
        if direction(&e.name).is_none() {
            continue;
        }
        any = true;
        let mut names = Vec::new();
        if let Some(p) = &e.payload {
            for f in &p.fields {
                names.push(f.name.clone());
                collect_names(&f.ty, &mut names, 1);
            }
        }
        let has = |a: &str, b: &str| names.iter().any(|n| n == a || n == b);
        all &= has("saddr", "saddr")
            && has("daddr", "daddr")
            && has("sport", "source_port")
            && has("dport", "dest_port");
    }
    any.then_some(all)
}
