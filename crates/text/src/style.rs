//! babeltrace2's `text.pretty` options: which names and fields a line shows, how its time
//! is written, and terminal colours; and the writing of what they change (the stamp, the
//! part before the event's scopes, the scopes themselves when names or colours differ).
//!
//! The default style is the one [`crate::printer`]'s fast paths write: a printer only takes
//! the styled paths when a [`Style`] differs from it, chosen once per stream.

use ctf::field::{Compound, FieldValue, FieldVisitor};
use ctf::ir::{EnvValue, Role};
use ctf::stream::Event;

use crate::put::put_u64;
use crate::timefmt::{write_delta, TimeFormatter};
use crate::value::{put_value, write_enum_open};

/// Errors of the option lists ([`Names::parse`], [`Fields::parse`]), worded as babeltrace2's.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum StyleError {
    /// A `--names` item that is not one of babeltrace2's.
    #[error("unknown name `{0}` in --names (payload, context, scope, header, all or none)")]
    UnknownName(String),
    /// A `--fields` item that is not one of babeltrace2's.
    #[error("unknown field `{0}` in --fields (trace, trace:hostname, trace:domain, trace:procname, trace:vpid, loglevel, emf, callsite or all)")]
    UnknownField(String),
    /// `--names` holding both `all` and `none`.
    #[error("only either `all` or `none` can be given to --names, not both")]
    AllAndNone,
}

/// Which names a line shows (`--names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    /// Member names (and array indexes) in the payload.
    pub payload: bool,
    /// Member names in the packet, stream event and event contexts.
    pub context: bool,
    /// Scope names (`stream.packet.context = `, `event.fields = `…).
    pub scope: bool,
    /// Header names (`timestamp = `, `delta = `, `name = `…) instead of brackets.
    pub header: bool,
}

impl Default for Names {
    /// babeltrace2's: payload and context names.
    fn default() -> Names {
        Names {
            payload: true,
            context: true,
            scope: false,
            header: false,
        }
    }
}

impl Names {
    /// A comma-separated `--names` list as babeltrace2 reads it: `all` shows every name,
    /// `none` hides them, and any other item (`payload`/`args`/`arg`, `context`/`ctx`,
    /// `scope`, `header`) shows that one, the others hidden unless `all` is also given. An
    /// empty list leaves the defaults.
    pub fn parse(list: &str) -> Result<Names, StyleError> {
        let (mut all, mut none, mut items) = (false, false, Vec::new());
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item {
                "all" => all = true,
                "none" => none = true,
                "payload" | "args" | "arg" => items.push(0),
                "context" | "ctx" => items.push(1),
                "scope" => items.push(2),
                "header" => items.push(3),
                _ => return Err(StyleError::UnknownName(item.to_string())),
            }
        }
        if all && none {
            return Err(StyleError::AllAndNone);
        }
        let mut n = if all {
            Names {
                payload: true,
                context: true,
                scope: true,
                header: true,
            }
        } else if none || !items.is_empty() {
            Names {
                payload: false,
                context: false,
                scope: false,
                header: false,
            }
        } else {
            Names::default()
        };
        for i in items {
            *[&mut n.payload, &mut n.context, &mut n.scope, &mut n.header][i] = true;
        }
        Ok(n)
    }
}

/// Which fields a line shows before the event name (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// The trace's name (its hostname and path below the input).
    pub trace: bool,
    /// The `hostname` environment entry.
    pub hostname: bool,
    /// The `domain` environment entry.
    pub domain: bool,
    /// The `procname` environment entry.
    pub procname: bool,
    /// The `vpid` environment entry.
    pub vpid: bool,
    /// The event class's log level.
    pub loglevel: bool,
    /// The event class's EMF URI.
    pub emf: bool,
    /// Accepted, and shows nothing, as in babeltrace2 2.0.
    pub callsite: bool,
}

impl Default for Fields {
    /// babeltrace2's: hostname, procname and vpid.
    fn default() -> Fields {
        Fields {
            trace: false,
            hostname: true,
            domain: false,
            procname: true,
            vpid: true,
            loglevel: false,
            emf: false,
            callsite: false,
        }
    }
}

impl Fields {
    /// A comma-separated `--fields` list as babeltrace2 reads it: `all` shows every field;
    /// otherwise the listed ones only. An empty list leaves the defaults.
    pub fn parse(list: &str) -> Result<Fields, StyleError> {
        let mut f = Fields::default();
        let mut all = false;
        let mut listed = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let i = match item {
                "all" => {
                    all = true;
                    continue;
                }
                "trace" => 0,
                "trace:hostname" => 1,
                "trace:domain" => 2,
                "trace:procname" => 3,
                "trace:vpid" => 4,
                "loglevel" => 5,
                "emf" => 6,
                "callsite" => 7,
                _ => return Err(StyleError::UnknownField(item.to_string())),
            };
            listed.push(i);
        }
        if all || !listed.is_empty() {
            let v = all;
            f = Fields {
                trace: v,
                hostname: v,
                domain: v,
                procname: v,
                vpid: v,
                loglevel: v,
                emf: v,
                callsite: v,
            };
        }
        for i in listed {
            *[
                &mut f.trace,
                &mut f.hostname,
                &mut f.domain,
                &mut f.procname,
                &mut f.vpid,
                &mut f.loglevel,
                &mut f.emf,
                &mut f.callsite,
            ][i] = true;
        }
        Ok(f)
    }
}

/// How lines look: the `text.pretty` parameters babeltrace2's command line sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Which names show (`--names`).
    pub names: Names,
    /// Which fields show (`--fields`).
    pub fields: Fields,
    /// The time since the previous line (off with `--no-delta`).
    pub delta: bool,
    /// Times as the clock's cycle count (`--clock-cycles`), before `seconds` and `date`.
    pub cycles: bool,
    /// Times as seconds since the epoch (`--clock-seconds`), before `date`.
    pub seconds: bool,
    /// Times with their date (`--clock-date`).
    pub date: bool,
    /// Terminal colour codes in event lines (`--color`, resolved: see [`colors_supported`]).
    pub colors: bool,
}

impl Default for Style {
    /// babeltrace2's default text output.
    fn default() -> Style {
        Style {
            names: Names::default(),
            fields: Fields::default(),
            delta: true,
            cycles: false,
            seconds: false,
            date: false,
            colors: false,
        }
    }
}

impl Style {
    /// Whether this is babeltrace2's default style, which the fast paths write.
    pub fn is_default(&self) -> bool {
        *self == Style::default()
    }

    /// Whether the class plans can write the scopes: they follow the default names, without
    /// colours (what precedes the scopes is made per class, whatever the style).
    pub(crate) fn plans_write_scopes(&self) -> bool {
        self.names.payload && self.names.context && !self.names.scope && !self.colors
    }
}

/// `--color`'s choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colours when the terminal supports them and the text goes to the standard output.
    #[default]
    Auto,
    /// Colours when the terminal supports them.
    Always,
    /// No colours in event lines.
    Never,
}

impl ColorChoice {
    /// Whether event lines get colour codes, as babeltrace2 decides: its codes are empty
    /// unless [`colors_supported`], so `always` only colours a terminal that supports them;
    /// `auto` also needs the text to go to the standard output (not `--output FILE`).
    pub fn event_colors(self, supported: bool, to_stdout: bool) -> bool {
        supported
            && match self {
                ColorChoice::Always => true,
                ColorChoice::Auto => to_stdout,
                ColorChoice::Never => false,
            }
    }
}

/// Whether the terminal takes colour codes, as babeltrace2 finds it: `BABELTRACE_TERM_COLOR`
/// (`always`, `never`) decides when set; otherwise `TERM` must name a known colour terminal
/// and both the standard output and error must be terminals.
pub fn colors_supported() -> bool {
    use std::io::IsTerminal;
    match std::env::var("BABELTRACE_TERM_COLOR") {
        Ok(v) if v.eq_ignore_ascii_case("always") => return true,
        Ok(v) if v.eq_ignore_ascii_case("never") => return false,
        _ => {}
    }
    let Ok(term) = std::env::var("TERM") else {
        return false;
    };
    let known = [
        "xterm", "rxvt", "konsole", "gnome", "screen", "tmux", "putty",
    ];
    known.iter().any(|k| term.starts_with(k))
        && std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal()
}

/// babeltrace2's colour codes: bright colours as bold ones unless
/// `BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD=0`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Palette {
    name: String,
    field_name: String,
    value: String,
    unknown: String,
    event_name: String,
    timestamp: String,
    reset: String,
}

impl Palette {
    fn new() -> Palette {
        let bold_bright =
            std::env::var("BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD").map_or(true, |v| v != "0");
        let bright = |code: u8| {
            if bold_bright {
                format!("\x1b[1m\x1b[{code}m")
            } else {
                format!("\x1b[{}m", code + 60)
            }
        };
        let bold = "\x1b[1m".to_string();
        Palette {
            name: bold.clone(),
            field_name: "\x1b[36m".into(),
            value: bold.clone(),
            unknown: format!("{bold}{}", bright(31)),
            event_name: format!("{bold}{}", bright(35)),
            timestamp: format!("{bold}{}", bright(33)),
            reset: "\x1b[0m".into(),
        }
    }
}

/// What a printer needs to write a non-default style: the style, its colours, the trace
/// names, and the time zone's formatter settings (dates).
#[derive(Debug, Clone)]
pub struct Styled {
    pub(crate) style: Style,
    pal: Palette,
    /// Per trace index: its name (`--fields=trace`).
    trace_names: Vec<String>,
    /// Colour codes in the loss warnings.
    pub(crate) warning_colors: bool,
    /// Where the cycle count starts in a stamp (`--clock-cycles`).
    pub(crate) cycles_at: usize,
}

/// The placeholder of the first line's delta, in ns and in cycles.
pub(crate) const DELTA_NS_PLACEHOLDER: &[u8] = b"+?.?????????";
pub(crate) const DELTA_CYCLES_PLACEHOLDER: &[u8] = b"+????????????";

impl Styled {
    /// The setup of `style` for traces named `trace_names` (by index), loss warnings in
    /// colour when `warning_colors`.
    pub fn new(style: Style, trace_names: Vec<String>, warning_colors: bool) -> Styled {
        let pal = if style.colors {
            Palette::new()
        } else {
            Palette::default()
        };
        let mut s = Styled {
            style,
            pal,
            trace_names,
            warning_colors,
            cycles_at: 0,
        };
        let mut b = Vec::new();
        if style.names.header {
            s.name_eq(&mut b, "timestamp");
        } else {
            b.push(b'[');
        }
        b.extend_from_slice(s.pal.timestamp.as_bytes());
        s.cycles_at = b.len();
        s
    }

    fn name_eq(&self, b: &mut Vec<u8>, name: &str) {
        b.extend_from_slice(self.pal.name.as_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(self.pal.reset.as_bytes());
        b.extend_from_slice(b" = ");
    }

    /// The delta's placeholder in this style's stamps.
    pub(crate) fn placeholder(&self) -> &'static [u8] {
        if self.style.cycles {
            DELTA_CYCLES_PLACEHOLDER
        } else {
            DELTA_NS_PLACEHOLDER
        }
    }

    /// Appends the stamp of an event at `ns` (`cycles` on its clock): its time and, unless
    /// `--no-delta`, the first line's delta placeholder, which the merging thread replaces.
    pub(crate) fn stamp(&self, b: &mut Vec<u8>, times: &mut TimeFormatter, ns: i64, cycles: u64) {
        let header = self.style.names.header;
        if header {
            self.name_eq(b, "timestamp");
        } else {
            b.push(b'[');
        }
        b.extend_from_slice(self.pal.timestamp.as_bytes());
        if self.style.cycles {
            b.extend_from_slice(format!("{cycles:020}").as_bytes());
        } else {
            self.wall(b, times, ns);
        }
        b.extend_from_slice(self.pal.reset.as_bytes());
        if !header {
            b.extend_from_slice(b"] ");
        }
        if self.style.delta {
            if header {
                b.extend_from_slice(b", ");
                self.name_eq(b, "delta");
            } else {
                b.push(b'(');
            }
            b.extend_from_slice(self.placeholder());
            if !header {
                b.extend_from_slice(b") ");
            }
        }
    }

    /// Appends the wall-clock time `ns` in this style (seconds, or time of day with or
    /// without the date).
    pub(crate) fn wall(&self, b: &mut Vec<u8>, times: &mut TimeFormatter, ns: i64) {
        if self.style.seconds {
            if ns < 0 {
                b.push(b'-');
            }
            let abs = ns.unsigned_abs();
            put_u64(b, abs / 1_000_000_000);
            b.extend_from_slice(format!(".{:09}", abs % 1_000_000_000).as_bytes());
            return;
        }
        if self.style.date {
            times.write_date(b, ns);
            b.push(b' ');
        }
        times.write_time(b, ns);
    }

    /// The delta from the previous line at `last` to this one at `now`: in ns (as the
    /// default style writes it), or in cycles (wrapping, as babeltrace2's unsigned
    /// difference).
    pub(crate) fn delta(&self, b: &mut Vec<u8>, now: i64, last: i64) {
        if self.style.cycles {
            let d = (now as u64).wrapping_sub(last as u64);
            b.extend_from_slice(format!("+{d:012}").as_bytes());
        } else {
            write_delta(b, now.wrapping_sub(last));
            // Without its `) `.
            b.truncate(b.len() - 2);
        }
    }

    /// What precedes the scopes of `ev`'s line, after its stamp (`stamped`: the line has
    /// one): the fields, the event name and its separator, as babeltrace2 lays them out
    /// (including its separators where a field follows the trace name).
    pub fn head(&self, ev: &Event<'_>, stamped: bool) -> Vec<u8> {
        let f = &self.style.fields;
        let pn = self.style.names.header;
        let t = ev.trace();
        let env = &t.class;
        let mut b = Vec::new();
        // babeltrace2's `start_line`: a field follows a comma only after a named stamp.
        let start_line = !(stamped && pn);
        let mut dom = false;
        let sep = |b: &mut Vec<u8>| {
            if !start_line {
                b.extend_from_slice(b", ");
            }
        };
        if f.trace {
            sep(&mut b);
            if pn {
                self.name_eq(&mut b, "trace");
            }
            let name = self.trace_names.get(t.index).map_or("", String::as_str);
            b.extend_from_slice(name.as_bytes());
            if pn {
                b.extend_from_slice(b", ");
            }
        }
        let mut field = |b: &mut Vec<u8>, on: bool, label: &str, value: Option<String>| {
            let (true, Some(v)) = (on, value) else {
                return;
            };
            sep(b);
            if pn {
                self.name_eq(b, label);
            } else if dom {
                b.push(b':');
            }
            b.extend_from_slice(v.as_bytes());
            dom = true;
        };
        let text = |k: &str| env.env_str(k).map(str::to_string);
        field(&mut b, f.hostname, "trace:hostname", text("hostname"));
        field(&mut b, f.domain, "trace:domain", text("domain"));
        field(&mut b, f.procname, "trace:procname", text("procname"));
        let vpid = match env.env("vpid") {
            Some(EnvValue::Int(v)) => Some(format!("({v})")),
            Some(EnvValue::Str(v)) => Some(format!("({v})")),
            None => None,
        };
        field(&mut b, f.vpid, "trace:vpid", vpid);
        let class = env
            .streams
            .get(&ev.stream_class_id())
            .and_then(|s| s.events.get(&ev.class_id()));
        let level = class.and_then(|c| {
            let l = c.loglevel?;
            Some(format!(
                "{} ({l})",
                LOG_LEVELS.get(usize::try_from(l).ok()?)?
            ))
        });
        field(&mut b, f.loglevel, "loglevel", level);
        let emf = class.and_then(|c| c.model_emf_uri.clone());
        field(&mut b, f.emf, "model.emf.uri", emf);
        if dom && !pn {
            b.push(b' ');
        }
        sep(&mut b);
        if pn {
            self.name_eq(&mut b, "name");
        }
        b.extend_from_slice(self.pal.event_name.as_bytes());
        b.extend_from_slice(ev.name().as_bytes());
        b.extend_from_slice(self.pal.reset.as_bytes());
        b.extend_from_slice(if pn { b", " } else { b": " });
        b
    }

    /// Appends the scopes of `ev` after its head, and the newline, the general way:
    /// `packet` is the rendered packet context ([`Self::packet`]), if it shows.
    pub(crate) fn scopes(
        &self,
        b: &mut Vec<u8>,
        ev: &Event<'_>,
        packet: Option<&[u8]>,
        stack: &mut Vec<(usize, Frame)>,
    ) {
        let mut start_line = true;
        let mut scope = |b: &mut Vec<u8>, name: &str| {
            if !start_line {
                b.extend_from_slice(b", ");
            }
            start_line = false;
            if self.style.names.scope {
                self.name_eq(b, name);
            }
        };
        if let Some(p) = packet {
            scope(b, "stream.packet.context");
            b.extend_from_slice(p);
        }
        let names = self.style.names;
        let scopes = [
            (ev.common_context(), "stream.event.context", names.context),
            (ev.specific_context(), "event.context", names.context),
            (ev.payload(), "event.fields", names.payload),
        ];
        for (v, name, named) in scopes {
            let Some(v) = v else { continue };
            scope(b, name);
            let mut w = FieldWriter {
                s: Some(self),
                b,
                stack,
                skip_roles: false,
                visible: 0,
                names: named,
            };
            v.walk(&mut w);
        }
        b.push(b'\n');
    }

    /// The rendered packet context of `ev`, None when none of its fields shows.
    pub(crate) fn packet(
        &self,
        ev: &Event<'_>,
        stack: &mut Vec<(usize, Frame)>,
    ) -> Option<Vec<u8>> {
        let v = ev.packet_context()?;
        let mut t = Vec::new();
        let mut w = FieldWriter {
            s: Some(self),
            b: &mut t,
            stack,
            skip_roles: true,
            visible: 0,
            names: self.style.names.context,
        };
        v.walk(&mut w);
        (w.visible > 0).then_some(t)
    }

    /// Appends a scalar value in colour (or plain).
    fn value(&self, b: &mut Vec<u8>, value: &FieldValue<'_>) {
        if !self.style.colors {
            put_value(b, value);
            return;
        }
        let (v, mappings) = match *value {
            FieldValue::UInt {
                value: v,
                mappings: Some(m),
                base,
            } => (
                v as i128,
                (
                    m,
                    FieldValue::UInt {
                        value: v,
                        base,
                        mappings: None,
                    },
                ),
            ),
            FieldValue::SInt {
                value: v,
                size,
                base,
                mappings: Some(m),
            } => (
                v as i128,
                (
                    m,
                    FieldValue::SInt {
                        value: v,
                        size,
                        base,
                        mappings: None,
                    },
                ),
            ),
            _ => {
                b.extend_from_slice(self.pal.value.as_bytes());
                put_value(b, value);
                b.extend_from_slice(self.pal.reset.as_bytes());
                return;
            }
        };
        let (m, int) = mappings;
        // Labels in their own colour: rendered plain, then coloured label by label.
        let mut plain = Vec::new();
        write_enum_open(&mut plain, v, m);
        let labels: Vec<&str> = m
            .iter()
            .filter(|x| x.ranges.iter().any(|r| r.contains(v)))
            .map(|x| x.label.as_str())
            .collect();
        b.extend_from_slice(b"( ");
        if labels.is_empty() {
            b.extend_from_slice(self.pal.unknown.as_bytes());
            b.extend_from_slice(b"<unknown>");
            b.extend_from_slice(self.pal.reset.as_bytes());
        }
        for (k, l) in labels.iter().enumerate() {
            if k > 0 {
                b.extend_from_slice(b", ");
            }
            b.extend_from_slice(self.pal.value.as_bytes());
            b.push(b'"');
            b.extend_from_slice(l.as_bytes());
            b.push(b'"');
            b.extend_from_slice(self.pal.reset.as_bytes());
        }
        b.extend_from_slice(b" : container = ");
        b.extend_from_slice(self.pal.value.as_bytes());
        put_value(b, &int);
        b.extend_from_slice(self.pal.reset.as_bytes());
        b.extend_from_slice(b" )");
    }
}

/// babeltrace2's log level names, by CTF `loglevel` value.
const LOG_LEVELS: [&str; 15] = [
    "TRACE_EMERG",
    "TRACE_ALERT",
    "TRACE_CRIT",
    "TRACE_ERR",
    "TRACE_WARNING",
    "TRACE_NOTICE",
    "TRACE_INFO",
    "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",
    "TRACE_DEBUG_PROCESS",
    "TRACE_DEBUG_MODULE",
    "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION",
    "TRACE_DEBUG_LINE",
    "TRACE_DEBUG",
];

/// An open compound of a field walk being written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frame {
    Braces,
    Array,
    /// An optional's value is written bare.
    Optional,
}

/// Opens a compound as babeltrace2 writes it (`[`, `{`, nothing for an optional) and notes
/// it on `stack`; its fields' count starts at 0.
pub(crate) fn open_compound(b: &mut Vec<u8>, stack: &mut Vec<(usize, Frame)>, kind: Compound<'_>) {
    let frame = match kind {
        Compound::Array(_) => {
            b.push(b'[');
            Frame::Array
        }
        Compound::Optional(_) => Frame::Optional,
        _ => {
            b.push(b'{');
            Frame::Braces
        }
    };
    stack.push((0, frame));
}

/// Closes the compound on top of `stack` (`<none>` for an optional without a value).
pub(crate) fn close_compound(b: &mut Vec<u8>, stack: &mut Vec<(usize, Frame)>) {
    match stack.pop() {
        Some((_, Frame::Array)) => b.extend_from_slice(b" ]"),
        Some((_, Frame::Braces)) => b.extend_from_slice(b" }"),
        Some((0, Frame::Optional)) => b.extend_from_slice(b"<none>"),
        _ => {}
    }
}

/// Renders a field walk in babeltrace2's syntax, `{ a = 1, b = [ [0] = 2 ], c = { "x" } }`:
/// in the default style, or in a printer's non-default one (names shown or not, values in
/// colour or not).
pub(crate) struct FieldWriter<'b> {
    /// The non-default style; None for the default (names shown, no colour).
    s: Option<&'b Styled>,
    b: &'b mut Vec<u8>,
    /// Per open compound: items written so far, and its kind.
    stack: &'b mut Vec<(usize, Frame)>,
    /// At the top level of the scope, leave out fields that have a role.
    skip_roles: bool,
    /// Top-level items written.
    pub(crate) visible: usize,
    /// Member names and array indexes shown.
    names: bool,
}

impl<'b> FieldWriter<'b> {
    /// A writer in the default style.
    pub(crate) fn plain(
        b: &'b mut Vec<u8>,
        stack: &'b mut Vec<(usize, Frame)>,
        skip_roles: bool,
    ) -> Self {
        FieldWriter {
            s: None,
            b,
            stack,
            skip_roles,
            visible: 0,
            names: true,
        }
    }

    #[inline]
    fn prefix(&mut self, name: Option<&str>) {
        let depth = self.stack.len();
        let Some((count, frame)) = self.stack.last_mut() else {
            return;
        };
        if *frame == Frame::Optional {
            *count += 1;
            return;
        }
        if *count > 0 {
            self.b.push(b',');
        }
        self.b.push(b' ');
        if self.names {
            if *frame == Frame::Array {
                self.b.push(b'[');
                put_u64(self.b, *count as u64);
                self.b.extend_from_slice(b"] = ");
            } else if let Some(n) = name {
                match self.s {
                    Some(s) => {
                        self.b.extend_from_slice(s.pal.field_name.as_bytes());
                        self.b.extend_from_slice(n.as_bytes());
                        self.b.extend_from_slice(s.pal.reset.as_bytes());
                    }
                    None => self.b.extend_from_slice(n.as_bytes()),
                }
                self.b.extend_from_slice(b" = ");
            }
        }
        *count += 1;
        if depth == 1 {
            self.visible += 1;
        }
    }
}

impl FieldVisitor for FieldWriter<'_> {
    fn value(&mut self, name: Option<&str>, role: Option<Role>, value: &FieldValue<'_>) {
        if self.skip_roles && role.is_some() && self.stack.len() == 1 {
            return;
        }
        self.prefix(name);
        match self.s {
            Some(s) => s.value(self.b, value),
            None => put_value(self.b, value),
        }
    }

    fn enter(&mut self, name: Option<&str>, kind: Compound<'_>) {
        self.prefix(name);
        open_compound(self.b, self.stack, kind);
    }

    fn leave(&mut self) {
        close_compound(self.b, self.stack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lists_read_as_babeltrace2() {
        let n = |s: &str| Names::parse(s).unwrap();
        assert_eq!(n(""), Names::default());
        assert_eq!(
            n("payload"),
            Names {
                payload: true,
                context: false,
                scope: false,
                header: false
            }
        );
        assert_eq!(n("none,args"), n("arg"));
        assert!(n("ctx,scope").context);
        assert!(!n("none").payload && !n("none").context);
        let all = n("all,payload");
        assert!(all.payload && all.context && all.scope && all.header);
        assert_eq!(Names::parse("all,none"), Err(StyleError::AllAndNone));
        assert!(matches!(
            Names::parse("foo"),
            Err(StyleError::UnknownName(_))
        ));
    }

    #[test]
    fn fields_lists_read_as_babeltrace2() {
        let f = |s: &str| Fields::parse(s).unwrap();
        assert_eq!(f(""), Fields::default());
        let t = f("trace");
        assert!(t.trace && !t.hostname && !t.procname && !t.vpid);
        let a = f("all");
        assert!(a.trace && a.domain && a.loglevel && a.emf && a.callsite);
        assert!(f("loglevel,emf").emf && !f("loglevel,emf").hostname);
        // `none` is not a field in babeltrace2.
        assert!(matches!(
            Fields::parse("none"),
            Err(StyleError::UnknownField(_))
        ));
    }

    #[test]
    fn colors_follow_babeltrace2s_choice() {
        use ColorChoice::*;
        assert!(!Always.event_colors(false, true));
        assert!(Always.event_colors(true, false));
        assert!(Auto.event_colors(true, true) && !Auto.event_colors(true, false));
        assert!(!Never.event_colors(true, true));
    }
}
