//! CTF 2 (JSON text sequence) metadata front end.
//!
//! The metadata stream is an RFC 7464 JSON text sequence: fragments separated by 0x1E. This
//! module reads the fragments of CTF2-SPEC-2.0 (`preamble`, `trace-class`, `clock-class`,
//! `data-stream-class`, `event-record-class`, `field-class-alias`) into the resolved
//! [`TraceClass`] model, and accepts the pre-final draft written by Trace Compass 7.0-era tools
//! (trace-class `uuid`, clock-class `name`/`uuid`, `default-clock-class-name`, `user-attributes`,
//! `*-enumeration` field class types, field locations as `[origin, name…]` arrays…).
//!
//! Errors carry the 1-based text line where the offending fragment starts (the exact line for
//! JSON syntax errors) and name the fragment number, its type and the property involved.

mod field;
mod json;

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;

use crate::error::MetadataError;
use crate::ir::{
    ByteOrder, ClockClass, EnvValue, EventClass, Scope, StreamClass, StructType, TraceClass,
};
use field::{show, to_u64, Alias, Builder, Fc, Resolver, MAX_FC_NODES, MAX_WALK_STEPS};
use json::Json;

/// Parses a CTF 2 metadata stream (RFC 7464 JSON text sequence) into a resolved trace class.
pub fn parse(text: &str) -> Result<TraceClass, MetadataError> {
    let mut st = State::new();
    let mut line = 1usize;
    let mut number = 0usize;
    for record in text.split('\u{1e}') {
        let start_line = line;
        line += record.bytes().filter(|&b| b == b'\n').count();
        if record.trim().is_empty() {
            continue;
        }
        number += 1;
        let json = json::parse(record).map_err(|e| {
            let before = record.get(..e.offset).unwrap_or(record);
            let l = start_line + before.bytes().filter(|&b| b == b'\n').count();
            MetadataError::new(Some(l), format!("fragment {number}: invalid JSON: {e}"))
        })?;
        let ty = match json.get("type") {
            Some(Json::Str(s)) => s.clone(),
            Some(v) => {
                return Err(MetadataError::new(
                    Some(start_line),
                    format!(
                        "fragment {number}: `type` must be a string, found {}",
                        v.kind()
                    ),
                ))
            }
            None if matches!(json, Json::Obj(_)) => {
                return Err(MetadataError::new(
                    Some(start_line),
                    format!("fragment {number}: missing required property `type`"),
                ))
            }
            None => {
                return Err(MetadataError::new(
                    Some(start_line),
                    format!(
                        "fragment {number}: a fragment must be a JSON object, found {}",
                        json.kind()
                    ),
                ))
            }
        };
        let cx = Cx {
            number,
            line: start_line,
            ty: &ty,
        };
        st.fragment(&cx, &json)?;
    }
    st.finish()
}

/// Where a fragment is, for error messages.
struct Cx<'a> {
    number: usize,
    line: usize,
    ty: &'a str,
}

impl Cx<'_> {
    fn err(&self, msg: impl Display) -> MetadataError {
        MetadataError::new(
            Some(self.line),
            format!("fragment {} ({}): {msg}", self.number, self.ty),
        )
    }

    /// Wraps a property error.
    fn prop(&self, key: &str) -> impl Fn(String) -> MetadataError + '_ {
        let key = key.to_string();
        move |e| self.err(format_args!("{key}: {e}"))
    }
}

struct StreamState {
    class: StreamClass,
    clock_name: Option<String>,
    packet_context: Option<Fc>,
    event_header: Option<Fc>,
    event_common_context: Option<Fc>,
}

struct State {
    preamble: bool,
    uuid: Option<[u8; 16]>,
    trace_class: bool,
    packet_header_fc: Option<Fc>,
    packet_header: Option<StructType>,
    env: Vec<(String, EnvValue)>,
    clocks: Vec<ClockClass>,
    clock_ids: Vec<String>,
    aliases: HashMap<String, Alias>,
    streams: BTreeMap<u64, StreamState>,
    budget: usize,
    steps: Cell<usize>,
}

/// A UUID: an array of 16 bytes, or (lenient) the canonical textual form.
fn uuid(v: &Json) -> Result<[u8; 16], String> {
    let mut out = [0u8; 16];
    match v {
        Json::Arr(a) if a.len() == 16 => {
            for (o, b) in out.iter_mut().zip(a) {
                *o = b
                    .as_int()
                    .and_then(|i| u8::try_from(i).ok())
                    .ok_or_else(|| {
                        format!("UUID bytes must be integers in 0..=255, found {}", show(b))
                    })?;
            }
            Ok(out)
        }
        Json::Str(s) => {
            let hex: Vec<u8> = s.bytes().filter(|&c| c != b'-').collect();
            let well_formed = s.len() == 36
                && [8, 13, 18, 23].iter().all(|&i| s.as_bytes()[i] == b'-')
                && hex.len() == 32
                && hex.iter().all(u8::is_ascii_hexdigit);
            if !well_formed {
                return Err(format!("invalid UUID string {}", show(v)));
            }
            for (i, o) in out.iter_mut().enumerate() {
                let pair =
                    std::str::from_utf8(&hex[2 * i..2 * i + 2]).map_err(|e| e.to_string())?;
                *o = u8::from_str_radix(pair, 16).map_err(|e| e.to_string())?;
            }
            Ok(out)
        }
        _ => Err(format!(
            "a UUID must be an array of 16 bytes, found {}",
            v.kind()
        )),
    }
}

/// Babeltrace 2 log level names (`babeltrace.org,2020` attribute) to the numeric LTTng/syslog
/// scale used by CTF 1.8 `loglevel`.
fn loglevel_number(name: &str) -> Option<i64> {
    Some(match name {
        "emergency" => 0,
        "alert" => 1,
        "critical" => 2,
        "error" => 3,
        "warning" => 4,
        "notice" => 5,
        "info" => 6,
        "debug:system" => 7,
        "debug:program" => 8,
        "debug:process" => 9,
        "debug:module" => 10,
        "debug:unit" => 11,
        "debug:function" => 12,
        "debug:line" => 13,
        "debug" => 14,
        _ => return None,
    })
}

/// Searches `attributes`/`user-attributes` (any namespace, or top level) for one of `keys`.
fn attribute<'a>(j: &'a Json, keys: &[&'static str]) -> Option<&'a Json> {
    for attrs in ["attributes", "user-attributes"] {
        let Some(a) = j.get(attrs) else { continue };
        if let Some((_, v)) = a.get_any(keys) {
            return Some(v);
        }
        if let Some(o) = a.as_obj() {
            if let Some(v) = o
                .iter()
                .find_map(|(_, ns)| ns.get_any(keys).map(|(_, v)| v))
            {
                return Some(v);
            }
        }
    }
    None
}

fn opt_string(cx: &Cx, j: &Json, key: &str) -> Result<Option<String>, MetadataError> {
    match j.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Str(s)) => Ok(Some(s.clone())),
        Some(v) => Err(cx.err(format_args!("`{key}` must be a string, found {}", v.kind()))),
    }
}

fn opt_u64(cx: &Cx, j: &Json, key: &str, default: u64) -> Result<u64, MetadataError> {
    match j.get(key) {
        None => Ok(default),
        Some(v) => to_u64(v, key).map_err(|e| cx.err(e)),
    }
}

impl State {
    fn new() -> Self {
        State {
            preamble: false,
            uuid: None,
            trace_class: false,
            packet_header_fc: None,
            packet_header: None,
            env: Vec::new(),
            clocks: Vec::new(),
            clock_ids: Vec::new(),
            aliases: HashMap::new(),
            streams: BTreeMap::new(),
            budget: MAX_FC_NODES,
            steps: Cell::new(MAX_WALK_STEPS),
        }
    }

    /// Builds the (unresolved) field class of property `key`, if present.
    fn field_class(&mut self, cx: &Cx, j: &Json, key: &str) -> Result<Option<Fc>, MetadataError> {
        let Some(v) = j.get(key) else { return Ok(None) };
        if matches!(v, Json::Null) {
            return Ok(None);
        }
        let mut b = Builder {
            aliases: &self.aliases,
            budget: &mut self.budget,
        };
        let fc = b.build(v, 0).map_err(cx.prop(key))?;
        if !matches!(fc, Fc::Struct { .. }) {
            return Err(cx.err(format_args!(
                "{key}: a scope field class must be a structure"
            )));
        }
        Ok(Some(fc))
    }

    fn fragment(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        if !self.preamble && cx.ty != "preamble" {
            return Err(cx.err("the first fragment must be a `preamble`"));
        }
        match cx.ty {
            "preamble" => self.preamble(cx, j),
            "trace-class" => self.trace_class(cx, j),
            "clock-class" => self.clock_class(cx, j),
            "data-stream-class" => self.stream_class(cx, j),
            "event-record-class" => self.event_class(cx, j),
            "field-class-alias" => self.alias(cx, j),
            other => Err(cx.err(format_args!(
                "unknown fragment type {}",
                show(&Json::Str(other.to_string()))
            ))),
        }
    }

    fn preamble(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        if self.preamble {
            return Err(cx.err("duplicate preamble"));
        }
        self.preamble = true;
        match j.get("version").and_then(Json::as_int) {
            Some(2) => {}
            Some(v) => {
                return Err(cx.err(format_args!(
                    "version: unsupported CTF version {v} (expected 2)"
                )))
            }
            None => return Err(cx.err("version: missing or not an integer")),
        }
        if let Some(v) = j.get("uuid") {
            self.uuid = Some(uuid(v).map_err(cx.prop("uuid"))?);
        }
        Ok(())
    }

    fn trace_class(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        if self.trace_class {
            return Err(cx.err("duplicate trace class"));
        }
        if !self.streams.is_empty() {
            return Err(cx.err("the trace class must precede every data stream class"));
        }
        self.trace_class = true;
        // Draft: the metadata stream UUID is the trace class's `uuid` (the final spec puts it in
        // the preamble; the trace class's `uid` is a free-form string identifier).
        if let Some(v) = j.get("uuid") {
            let u = uuid(v).map_err(cx.prop("uuid"))?;
            self.uuid.get_or_insert(u);
        }
        if let Some((key, env)) = j.get_any(&["environment", "env"]) {
            let o = env.as_obj().ok_or_else(|| {
                cx.err(format_args!(
                    "{key}: must be an object, found {}",
                    env.kind()
                ))
            })?;
            for (k, v) in o {
                let value = match v {
                    Json::Str(s) => EnvValue::Str(s.clone()),
                    _ => match v.as_int().and_then(|i| i64::try_from(i).ok()) {
                        Some(i) => EnvValue::Int(i),
                        None => {
                            return Err(cx.err(format_args!(
                                "{key}: entry `{k}` must be a string or a 64-bit integer, found {}",
                                v.kind()
                            )))
                        }
                    },
                };
                self.env.push((k.clone(), value));
            }
        }
        if let Some(fc) = self.field_class(cx, j, "packet-header-field-class")? {
            let r = Resolver {
                roots: [Some(&fc), None, None, None, None, None],
                clock: None,
                steps: &self.steps,
            };
            self.packet_header = Some(
                r.scope(&fc, Scope::PacketHeader)
                    .map_err(cx.prop("packet-header-field-class"))?,
            );
            self.packet_header_fc = Some(fc);
        }
        Ok(())
    }

    fn clock_class(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        let id = opt_string(cx, j, "id")?;
        let name = opt_string(cx, j, "name")?;
        let key = id
            .clone()
            .or_else(|| name.clone())
            .ok_or_else(|| cx.err("missing required property `id` (or draft `name`)"))?;
        if self.clock_ids.contains(&key) {
            return Err(cx.err(format_args!("duplicate clock class id `{key}`")));
        }
        let freq = match j.get("frequency") {
            Some(v) => to_u64(v, "frequency").map_err(|e| cx.err(e))?,
            None => return Err(cx.err("missing required property `frequency`")),
        };
        if freq == 0 {
            return Err(cx.err("frequency: must be greater than 0"));
        }
        let (mut offset_s, mut offset_cycles) = (0i64, 0i64);
        if let Some((okey, off)) = j.get_any(&["offset-from-origin", "offset"]) {
            if !matches!(off, Json::Obj(_)) {
                return Err(cx.err(format_args!(
                    "{okey}: must be an object, found {}",
                    off.kind()
                )));
            }
            if let Some(s) = off.get("seconds") {
                offset_s = s
                    .as_int()
                    .and_then(|i| i64::try_from(i).ok())
                    .ok_or_else(|| {
                        cx.err(format_args!(
                            "{okey}.seconds: must be a 64-bit integer, found {}",
                            show(s)
                        ))
                    })?;
            }
            if let Some(c) = off.get("cycles") {
                offset_cycles = c
                    .as_int()
                    .and_then(|i| u64::try_from(i).ok())
                    .and_then(|i| i64::try_from(i).ok())
                    .ok_or_else(|| {
                        cx.err(format_args!(
                            "{okey}.cycles: must be a non-negative 63-bit integer, found {}",
                            show(c)
                        ))
                    })?;
            }
        }
        let absolute = match j.get("origin") {
            None | Some(Json::Null) => false,
            Some(Json::Str(s)) if s == "unix-epoch" => true,
            Some(Json::Obj(_)) => false,
            Some(v) => {
                return Err(cx.err(format_args!(
                    "origin: must be `unix-epoch` or an object, found {}",
                    show(v)
                )))
            }
        };
        let precision = opt_u64(cx, j, "precision", 0)?;
        let uuid = match j.get_any(&["uuid", "uid"]) {
            Some(("uuid", v)) => Some(uuid(v).map_err(cx.prop("uuid"))?),
            // The final spec's `uid` is free-form: keep it only when it is a UUID.
            Some((_, v)) => uuid(v).ok(),
            None => None,
        };
        let description = opt_string(cx, j, "description")?;
        self.clocks.push(ClockClass {
            name: name.unwrap_or_else(|| key.clone()),
            freq,
            offset_s,
            offset_cycles,
            precision,
            uuid,
            absolute,
            description,
        });
        self.clock_ids.push(key);
        Ok(())
    }

    fn stream_class(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        let id = opt_u64(cx, j, "id", 0)?;
        if self.streams.contains_key(&id) {
            return Err(cx.err(format_args!("duplicate data stream class id {id}")));
        }
        let default_clock = match j.get_any(&[
            "default-clock-class-id",
            "default-clock-class-name",
            "$default-clock-class-id",
        ]) {
            None | Some((_, Json::Null)) => None,
            Some((key, v)) => {
                let s = v.as_str().ok_or_else(|| {
                    cx.err(format_args!("{key}: must be a string, found {}", v.kind()))
                })?;
                let idx = self
                    .clock_ids
                    .iter()
                    .position(|c| c == s)
                    .or_else(|| self.clocks.iter().position(|c| c.name == s))
                    .ok_or_else(|| cx.err(format_args!("{key}: no clock class {}", show(v))))?;
                Some(idx)
            }
        };
        let clock_name = default_clock.map(|i| self.clocks[i].name.clone());
        let pc = self.field_class(cx, j, "packet-context-field-class")?;
        let eh = self.field_class(cx, j, "event-record-header-field-class")?;
        let ecc = self.field_class(cx, j, "event-record-common-context-field-class")?;
        let r = Resolver {
            roots: [
                self.packet_header_fc.as_ref(),
                pc.as_ref(),
                eh.as_ref(),
                ecc.as_ref(),
                None,
                None,
            ],
            clock: clock_name.as_deref(),
            steps: &self.steps,
        };
        let resolve = |fc: &Option<Fc>,
                       scope: Scope,
                       key: &str|
         -> Result<Option<StructType>, MetadataError> {
            fc.as_ref()
                .map(|fc| r.scope(fc, scope).map_err(cx.prop(key)))
                .transpose()
        };
        let class = StreamClass {
            id,
            packet_context: resolve(&pc, Scope::PacketContext, "packet-context-field-class")?,
            event_header: resolve(&eh, Scope::EventHeader, "event-record-header-field-class")?,
            event_common_context: resolve(
                &ecc,
                Scope::EventCommonContext,
                "event-record-common-context-field-class",
            )?,
            default_clock,
            events: BTreeMap::new(),
        };
        self.streams.insert(
            id,
            StreamState {
                class,
                clock_name,
                packet_context: pc,
                event_header: eh,
                event_common_context: ecc,
            },
        );
        Ok(())
    }

    fn event_class(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        let id = opt_u64(cx, j, "id", 0)?;
        let sid = opt_u64(cx, j, "data-stream-class-id", 0)?;
        let name = opt_string(cx, j, "name")?.unwrap_or_default();
        let loglevel = match attribute(j, &["log-level", "loglevel"]) {
            None => None,
            Some(Json::Str(s)) => loglevel_number(s),
            Some(v) => v.as_int().and_then(|i| i64::try_from(i).ok()),
        };
        let model_emf_uri = match attribute(j, &["emf-uri", "model.emf.uri"]) {
            Some(Json::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let sc = self.field_class(cx, j, "specific-context-field-class")?;
        let payload = self.field_class(cx, j, "payload-field-class")?;
        let ph = self.packet_header_fc.as_ref();
        let steps = &self.steps;
        let stream = self.streams.get_mut(&sid).ok_or_else(|| {
            cx.err(format_args!(
                "data-stream-class-id: no data stream class {sid}"
            ))
        })?;
        if stream.class.events.contains_key(&id) {
            return Err(cx.err(format_args!(
                "duplicate event record class id {id} in data stream class {sid}"
            )));
        }
        let r = Resolver {
            roots: [
                ph,
                stream.packet_context.as_ref(),
                stream.event_header.as_ref(),
                stream.event_common_context.as_ref(),
                sc.as_ref(),
                payload.as_ref(),
            ],
            clock: stream.clock_name.as_deref(),
            steps,
        };
        let context = sc
            .as_ref()
            .map(|fc| r.scope(fc, Scope::EventSpecificContext))
            .transpose()
            .map_err(cx.prop("specific-context-field-class"))?;
        let payload = payload
            .as_ref()
            .map(|fc| r.scope(fc, Scope::EventPayload))
            .transpose()
            .map_err(cx.prop("payload-field-class"))?;
        stream.class.events.insert(
            id,
            EventClass {
                id,
                name,
                loglevel,
                model_emf_uri,
                context,
                payload,
            },
        );
        Ok(())
    }

    fn alias(&mut self, cx: &Cx, j: &Json) -> Result<(), MetadataError> {
        let name =
            opt_string(cx, j, "name")?.ok_or_else(|| cx.err("missing required property `name`"))?;
        if self.aliases.contains_key(&name) {
            return Err(cx.err(format_args!(
                "duplicate field-class alias {}",
                show(&Json::Str(name))
            )));
        }
        let fcj = j
            .get("field-class")
            .ok_or_else(|| cx.err("missing required property `field-class`"))?;
        let mut b = Builder {
            aliases: &self.aliases,
            budget: &mut self.budget,
        };
        let alias = b.alias(fcj).map_err(cx.prop("field-class"))?;
        self.aliases.insert(name, alias);
        Ok(())
    }

    fn finish(self) -> Result<TraceClass, MetadataError> {
        if !self.preamble {
            return Err(MetadataError::new(
                None,
                "no CTF 2 fragment (a preamble is required)",
            ));
        }
        Ok(TraceClass {
            version: (2, 0),
            uuid: self.uuid,
            byte_order: ByteOrder::Little,
            packet_header: self.packet_header,
            env: self.env,
            clocks: self.clocks,
            streams: self
                .streams
                .into_iter()
                .map(|(id, s)| (id, s.class))
                .collect(),
        })
    }
}
