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

use std::hash::Hasher;

use ctf::{Event, FieldValue, FieldView, Trace};
use kernel::PacketDir;

use crate::matching::{Dir, FastHasher, NetEvent, PacketKey};

/// Direction of a network event class by name (the kernel model's
/// [`kernel::Kind::packet_direction`]).
pub(crate) fn direction(name: &str) -> Option<Dir> {
    match kernel::classify_unnumbered(name).kind.packet_direction()? {
        PacketDir::Send => Some(Dir::Send),
        PacketDir::Recv => Some(Dir::Recv),
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

/// Where the TCP fields of an event class are: the names leading to the structure holding
/// `seq`/`ack_seq`/`flags` (variants on the way are stepped through), and to the one holding
/// `saddr`/`daddr`. Found on the class's first TCP event, then followed directly.
#[derive(Clone, Debug)]
struct Plan {
    tcp: Vec<String>,
    addr: Option<Vec<String>>,
}

fn through_variants<'a>(mut v: FieldView<'a>) -> Option<FieldView<'a>> {
    loop {
        match v.value() {
            FieldValue::Variant(opt, inner) => {
                if opt.contains("unknown") {
                    return None;
                }
                v = inner;
            }
            _ => return Some(v),
        }
    }
}

fn follow<'a>(root: &FieldView<'a>, path: &[String]) -> Option<FieldView<'a>> {
    let mut v = through_variants(*root)?;
    for name in path {
        v = through_variants(v.field(name)?)?;
    }
    Some(v)
}

fn discover(
    v: &FieldView<'_>,
    path: &mut Vec<String>,
    addr: &mut Option<Vec<String>>,
    depth: u32,
) -> Option<Vec<String>> {
    if depth > 6 {
        return None;
    }
    let v = through_variants(*v)?;
    let FieldValue::Struct(members) = v.value() else {
        return None;
    };
    let (mut seq, mut ack, mut flags, mut sa, mut da) = (false, false, false, false, false);
    let mut inner = Vec::new();
    for (name, m) in members {
        match name {
            "seq" => seq = true,
            "ack_seq" => ack = true,
            "flags" => flags = true,
            "saddr" => sa = true,
            "daddr" => da = true,
            _ => {
                if matches!(m.value(), FieldValue::Struct(_) | FieldValue::Variant(..)) {
                    inner.push((name, m));
                }
            }
        }
    }
    if sa && da {
        *addr = Some(path.clone());
    }
    if seq && ack && flags {
        return Some(path.clone());
    }
    for (name, m) in inner {
        path.push(name.to_string());
        if let Some(p) = discover(&m, path, addr, depth + 1) {
            return Some(p);
        }
        path.pop();
    }
    None
}

/// Extracts network events from one trace's events, caching per event class its direction and
/// where its TCP fields are.
pub(crate) struct Extractor {
    host: u32,
    trace: u32,
    classes: crate::matching::FastMap<(u64, u64), Option<Dir>>,
    plans: crate::matching::FastMap<(u64, u64), Plan>,
}

impl Extractor {
    pub(crate) fn new(host: u32, trace: u32) -> Self {
        Extractor {
            host,
            trace,
            classes: Default::default(),
            plans: Default::default(),
        }
    }

    /// The network event of `ev`, if it is one with TCP fields and a timestamp.
    pub(crate) fn event(&mut self, ev: &Event<'_>) -> Option<NetEvent> {
        let class = (ev.stream_class_id(), ev.class_id());
        let dir = *self
            .classes
            .entry(class)
            .or_insert_with(|| direction(ev.name()))
            .as_ref()?;
        let payload = ev.payload()?;
        let key = match self.plans.get(&class) {
            Some(plan) => key_by_plan(&payload, plan)?,
            None => {
                let mut addr = None;
                let tcp = discover(&payload, &mut Vec::new(), &mut addr, 0)?;
                let plan = Plan { tcp, addr };
                let k = key_by_plan(&payload, &plan)?;
                self.plans.insert(class, plan);
                k
            }
        };
        Some(NetEvent {
            host: self.host,
            trace: self.trace,
            dir,
            key,
            ts: ev.time_ns()?,
        })
    }
}

fn key_by_plan(payload: &FieldView<'_>, plan: &Plan) -> Option<PacketKey> {
    let tcp = follow(payload, &plan.tcp)?;
    let FieldValue::Struct(members) = tcp.value() else {
        return None;
    };
    let (mut seq, mut ack, mut flags) = (None, None, None);
    let mut ctx = FlowParts::default();
    for (name, m) in members {
        match name {
            "seq" => seq = m.as_u64(),
            "ack_seq" => ack = m.as_u64(),
            "flags" => flags = m.as_u64(),
            "sport" | "source_port" => ctx.sport = m.as_u64(),
            "dport" | "dest_port" => ctx.dport = m.as_u64(),
            "saddr" => ctx.saddr = addr_hash(&m),
            "daddr" => ctx.daddr = addr_hash(&m),
            _ => {}
        }
    }
    if let Some(ap) = &plan.addr {
        if *ap != plan.tcp {
            if let Some(FieldValue::Struct(members)) = follow(payload, ap).map(|v| v.value()) {
                for (name, m) in members {
                    match name {
                        "saddr" => ctx.saddr = addr_hash(&m),
                        "daddr" => ctx.daddr = addr_hash(&m),
                        _ => {}
                    }
                }
            }
        }
    }
    Some(PacketKey {
        seq: seq? as u32,
        ack_seq: ack? as u32,
        flags: flags? as u32,
        flow: ctx.flow(),
    })
}

fn collect_names(ty: &ctf::ir::FieldType, out: &mut Vec<String>, depth: u32) {
    if depth > 8 {
        return;
    }
    match ty {
        ctf::ir::FieldType::Struct(s) => {
            for f in &s.fields {
                out.push(f.name.to_string());
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
                names.push(f.name.to_string());
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
