//! LAMI 1.0 (LTTng Analyses Machine Interface) output: result tables of typed cells.
//!
//! Cells are a typed enum ([`Cell`]) written straight as JSON ([`write_results`]): the results
//! of a large trace (syscallstats of many threads: a row per thread and system call) used to be
//! a `serde_json::Value` tree, one map per cell, which cost more memory and time than the
//! analysis itself. The bytes
//! written are those `serde_json` writes for the same cell as a `Value` (keys in `BTreeMap`
//! order, numbers and strings formatted and escaped by `serde_json`); `tests::cells_as_values`
//! holds the two together.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

/// The value of a LAMI number or duration: an integer, or a float (a float that is not finite is
/// `null` in JSON, as `serde_json` writes it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float.
    Float(f64),
}

macro_rules! num_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Num {
            fn from(v: $t) -> Num {
                Num::$v(v.into())
            }
        }
    )*};
}
num_from!(i64 => Int, i32 => Int, u64 => UInt, u32 => UInt);

impl From<usize> for Num {
    fn from(v: usize) -> Num {
        Num::UInt(v as u64)
    }
}

impl Num {
    /// The value as a float; None for a float that is not finite (`null` in JSON).
    pub(crate) fn as_f64(self) -> Option<f64> {
        match self {
            Num::Int(v) => Some(v as f64),
            Num::UInt(v) => Some(v as f64),
            Num::Float(v) => v.is_finite().then_some(v),
        }
    }

    fn write(self, w: &mut impl Write) -> io::Result<()> {
        match self {
            Num::Int(v) => write_int(w, v),
            Num::UInt(v) => write_uint(w, v),
            // serde_json's float formatting (and `null` for NaN and infinities).
            Num::Float(v) => serde_json::to_writer(w, &v).map_err(io::Error::from),
        }
    }
}

impl std::fmt::Display for Num {
    /// As the JSON value (`null` for a float that is not finite).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut b = Vec::new();
        self.write(&mut b).map_err(|_| std::fmt::Error)?;
        f.write_str(std::str::from_utf8(&b).map_err(|_| std::fmt::Error)?)
    }
}

/// A typed LAMI cell. `Null` is a missing value (JSON `null`, lttng-analyses's `None`).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No value.
    Null,
    /// A process (thread): `process`.
    Process {
        /// Its command name.
        name: Box<str>,
        /// Its thread id.
        tid: i32,
        /// Its process id, when known.
        pid: Option<i32>,
    },
    /// `number`.
    Number(Num),
    /// `ratio`: a fraction (1.0 is the whole).
    Ratio(f64),
    /// `duration`, ns.
    Duration(Num),
    /// `timestamp`, ns since the epoch.
    Timestamp(i64),
    /// `time-range`: begin and end, ns since the epoch.
    TimeRange(i64, i64),
    /// `size`, bytes.
    Size(i64),
    /// `string`.
    String(Box<str>),
    /// `cpu`: a CPU id.
    Cpu(u32),
    /// A system call name: shared with the kernel model's name table (syscallstats has one
    /// per row, and a row per thread and call).
    Syscall(std::sync::Arc<str>),
    /// `irq`: a hard IRQ line or a soft IRQ vector.
    Irq {
        /// A hard IRQ (else a soft IRQ).
        hard: bool,
        /// Its number.
        nr: i64,
        /// Its handler's (hard) or vector's (soft) name.
        name: Box<str>,
    },
    /// `disk`: a disk or partition name.
    Disk(Box<str>),
    /// `netif`: a network interface name.
    Netif(Box<str>),
    /// `path`: a file path.
    Path(Box<str>),
    /// `fd`: a file descriptor.
    Fd(i64),
    /// `bool`; None: unknown.
    Bool(Option<bool>),
    /// `unknown`: a value that could not be determined.
    Unknown,
    /// `empty`: a cell left blank on purpose.
    Empty,
}

/// Writes the decimal digits of `v` (without `fmt`'s machinery: a large document is mostly
/// integers).
fn write_uint(w: &mut impl Write, v: u64) -> io::Result<()> {
    w.write_all(itoa::Buffer::new().format(v).as_bytes())
}

fn write_int(w: &mut impl Write, v: i64) -> io::Result<()> {
    w.write_all(itoa::Buffer::new().format(v).as_bytes())
}

/// Writes `s` as a JSON string, escaped as `serde_json` escapes it. Names and paths rarely
/// hold a character to escape (a quote, a backslash, a control character): those are
/// written as they are, without a serializer per string.
fn write_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    if !needs_escape(s.as_bytes()) {
        w.write_all(b"\"")?;
        w.write_all(s.as_bytes())?;
        return w.write_all(b"\"");
    }
    serde_json::to_writer(w, s).map_err(io::Error::from)
}

/// Whether `s` holds a byte JSON escapes: a quote, a backslash or a control character.
/// Eight bytes at a time (long cells such as syscallstats' return-value counts made a byte
/// loop a third of the writer's cost): `x - n` per byte, masked by the bytes' clear high
/// bits, sets a byte's high bit iff some byte is below `n` (for `n` up to 128), and a byte
/// equal to `c` is a zero byte of `x ^ c`.
fn needs_escape(s: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * n as u64) & !x & HIGH != 0;
    let mut words = s.chunks_exact(8);
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().unwrap_or_default());
        if below(x, 0x20)
            || below(x ^ (ONES * b'"' as u64), 1)
            || below(x ^ (ONES * b'\\' as u64), 1)
        {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// `{"class":"CLASS"`: the start of a cell object.
fn open(w: &mut impl Write, class: &str) -> io::Result<()> {
    w.write_all(b"{\"class\":\"")?;
    w.write_all(class.as_bytes())?;
    w.write_all(b"\"")
}

/// `,KEY` (`key` holds the comma, quotes and colon) and the JSON string `s`.
fn named(w: &mut impl Write, key: &[u8], s: &str) -> io::Result<()> {
    w.write_all(key)?;
    write_str(w, s)
}

impl Cell {
    /// The LAMI class name.
    pub(crate) fn class(&self) -> &'static str {
        match self {
            Cell::Null => "",
            Cell::Process { .. } => "process",
            Cell::Number(_) => "number",
            Cell::Ratio(_) => "ratio",
            Cell::Duration(_) => "duration",
            Cell::Timestamp(_) => "timestamp",
            Cell::TimeRange(..) => "time-range",
            Cell::Size(_) => "size",
            Cell::String(_) => "string",
            Cell::Cpu(_) => "cpu",
            Cell::Syscall(_) => "syscall",
            Cell::Irq { .. } => "irq",
            Cell::Disk(_) => "disk",
            Cell::Netif(_) => "netif",
            Cell::Path(_) => "path",
            Cell::Fd(_) => "fd",
            Cell::Bool(_) => "bool",
            Cell::Unknown => "unknown",
            Cell::Empty => "empty",
        }
    }

    /// The `value` of a number, ratio, duration, size or timestamp cell as a float (None for
    /// other cells and for floats that are not finite).
    pub(crate) fn value_f64(&self) -> Option<f64> {
        match *self {
            Cell::Number(n) | Cell::Duration(n) => n.as_f64(),
            Cell::Ratio(v) => v.is_finite().then_some(v),
            Cell::Timestamp(v) | Cell::Size(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The `value` of a timestamp, size or integer number or duration cell.
    pub(crate) fn value_i64(&self) -> Option<i64> {
        match *self {
            Cell::Timestamp(v) | Cell::Size(v) => Some(v),
            Cell::Number(Num::Int(v)) | Cell::Duration(Num::Int(v)) => Some(v),
            Cell::Number(Num::UInt(v)) | Cell::Duration(Num::UInt(v)) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The text of a string cell.
    pub(crate) fn value_str(&self) -> Option<&str> {
        match self {
            Cell::String(s) => Some(s),
            _ => None,
        }
    }

    /// Writes the cell as JSON: an object with its members in name order (as `serde_json`
    /// writes a `Value` object).
    pub(crate) fn write_json(&self, w: &mut impl Write) -> io::Result<()> {
        // `open` writes `{"class":"NAME"`, then each arm the members after `class`; the only
        // member sorting before `class` (`begin`) is written by its arm before `open`.
        match self {
            Cell::Null => return w.write_all(b"null"),
            Cell::TimeRange(b, e) => {
                w.write_all(b"{\"begin\":")?;
                Cell::Timestamp(*b).write_json(w)?;
                w.write_all(b",\"class\":\"time-range\",\"end\":")?;
                Cell::Timestamp(*e).write_json(w)?;
            }
            Cell::Process { name, tid, pid } => {
                open(w, "process")?;
                named(w, b",\"name\":", name)?;
                if let Some(p) = pid {
                    w.write_all(b",\"pid\":")?;
                    write_int(w, (*p).into())?;
                }
                w.write_all(b",\"tid\":")?;
                write_int(w, (*tid).into())?;
            }
            Cell::Irq { hard, nr, name } => {
                open(w, "irq")?;
                write!(w, ",\"hard\":{hard}")?;
                named(w, b",\"name\":", name)?;
                w.write_all(b",\"nr\":")?;
                write_int(w, *nr)?;
            }
            // The common cells: their start as one constant (most of a large document).
            Cell::Number(n) => {
                w.write_all(b"{\"class\":\"number\",\"value\":")?;
                n.write(w)?;
            }
            Cell::Duration(n) => {
                w.write_all(b"{\"class\":\"duration\",\"value\":")?;
                n.write(w)?;
            }
            Cell::Ratio(v) => {
                open(w, "ratio")?;
                w.write_all(b",\"value\":")?;
                Num::Float(*v).write(w)?;
            }
            Cell::Timestamp(v) => {
                w.write_all(b"{\"class\":\"timestamp\",\"value\":")?;
                write_int(w, *v)?;
            }
            Cell::Size(v) => {
                w.write_all(b"{\"class\":\"size\",\"value\":")?;
                write_int(w, *v)?;
            }
            Cell::String(s) => named(w, b"{\"class\":\"string\",\"value\":", s)?,
            Cell::Syscall(s) => named(w, b"{\"class\":\"syscall\",\"name\":", s)?,
            Cell::Disk(s) | Cell::Netif(s) => {
                open(w, self.class())?;
                named(w, b",\"name\":", s)?;
            }
            Cell::Path(s) => {
                open(w, "path")?;
                named(w, b",\"path\":", s)?;
            }
            Cell::Cpu(id) => {
                open(w, "cpu")?;
                w.write_all(b",\"id\":")?;
                write_uint(w, (*id).into())?;
            }
            Cell::Fd(fd) => {
                open(w, "fd")?;
                w.write_all(b",\"fd\":")?;
                write_int(w, *fd)?;
            }
            Cell::Bool(v) => {
                open(w, "bool")?;
                match v {
                    Some(v) => write!(w, ",\"value\":{v}")?,
                    None => w.write_all(b",\"value\":null")?,
                }
            }
            Cell::Unknown | Cell::Empty => open(w, self.class())?,
        }
        w.write_all(b"}")
    }

    /// The cell as a JSON value (what [`Cell::write_json`] writes, parsed).
    #[cfg(test)]
    pub(crate) fn to_value(&self) -> Value {
        let mut b = Vec::new();
        self.write_json(&mut b).expect("writing to memory");
        serde_json::from_slice(&b).expect("valid JSON")
    }
}

/// Constructors of typed LAMI cells.
pub mod cell {
    use super::{Cell, Num};

    pub(crate) fn process(name: &str, tid: i32, pid: Option<i32>) -> Cell {
        Cell::Process {
            name: name.into(),
            tid,
            pid,
        }
    }
    pub(crate) fn number(v: impl Into<Num>) -> Cell {
        Cell::Number(v.into())
    }
    /// A number cell of a float.
    pub(crate) fn number_f(v: f64) -> Cell {
        Cell::Number(Num::Float(v))
    }
    /// A ratio cell (1.0 is the whole).
    pub fn ratio(v: f64) -> Cell {
        Cell::Ratio(v)
    }
    pub(crate) fn duration_int(v: i64) -> Cell {
        Cell::Duration(Num::Int(v))
    }
    pub(crate) fn duration(v: f64) -> Cell {
        Cell::Duration(Num::Float(v))
    }
    pub(crate) fn size(v: i64) -> Cell {
        Cell::Size(v)
    }
    pub(crate) fn string(v: impl Into<String>) -> Cell {
        Cell::String(v.into().into_boxed_str())
    }
    /// A CPU cell of CPU `id`.
    pub fn cpu(id: u32) -> Cell {
        Cell::Cpu(id)
    }
    pub(crate) fn syscall(name: &str) -> Cell {
        Cell::Syscall(name.into())
    }
    /// [`syscall`] of a name already shared.
    pub(crate) fn syscall_shared(name: std::sync::Arc<str>) -> Cell {
        Cell::Syscall(name)
    }
    pub(crate) fn irq(hard: bool, nr: i64, name: &str) -> Cell {
        Cell::Irq {
            hard,
            nr,
            name: name.into(),
        }
    }
    pub(crate) fn timestamp(ns: i64) -> Cell {
        Cell::Timestamp(ns)
    }
    pub(crate) fn time_range(begin: i64, end: i64) -> Cell {
        Cell::TimeRange(begin, end)
    }
    pub(crate) fn disk(name: &str) -> Cell {
        Cell::Disk(name.into())
    }
    pub(crate) fn netif(name: &str) -> Cell {
        Cell::Netif(name.into())
    }
    pub(crate) fn path(path: &str) -> Cell {
        Cell::Path(path.into())
    }
    pub(crate) fn fd(fd: i64) -> Cell {
        Cell::Fd(fd)
    }
    /// A boolean cell; None: unknown (`"value": null`).
    pub(crate) fn boolean(v: Option<bool>) -> Cell {
        Cell::Bool(v)
    }
    pub(crate) fn unknown() -> Cell {
        Cell::Unknown
    }
    #[cfg(test)]
    pub(crate) fn empty() -> Cell {
        Cell::Empty
    }
}

/// A column of a table class.
#[derive(Debug, Clone)]
pub struct Column {
    /// The column title.
    pub title: &'static str,
    /// The LAMI class of its cells.
    pub class: &'static str,
    /// The unit of its values, if any.
    pub unit: Option<&'static str>,
}

pub(crate) const fn col(title: &'static str, class: &'static str) -> Column {
    Column {
        title,
        class,
        unit: None,
    }
}

pub(crate) const fn colu(title: &'static str, class: &'static str, unit: &'static str) -> Column {
    Column {
        title,
        class,
        unit: Some(unit),
    }
}

/// A table class: its name, title and columns.
#[derive(Debug, Clone)]
pub struct TableClass {
    /// The name tables refer to it by ([`Table::class`]).
    pub name: &'static str,
    /// The title of its tables.
    pub title: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
}

/// What an analysis declares in `--metadata`.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// The analysis title.
    pub title: &'static str,
    /// What it computes.
    pub description: &'static str,
    /// LAMI tags.
    pub tags: &'static [&'static str],
    /// The classes of its result tables.
    pub table_classes: &'static [TableClass],
}

/// A column of a table whose class is declared in the table itself (see [`Table::inline`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InlineColumn {
    /// The column title.
    pub title: String,
    /// The LAMI class of its cells.
    pub class: &'static str,
    /// The unit of its values, if any.
    pub unit: Option<&'static str>,
}

/// One result table.
#[derive(Debug, Clone)]
pub struct Table {
    /// The table class name.
    pub class: &'static str,
    /// A title replacing the class's (a LAMI "inherit" class), e.g. per-TID tables.
    pub title: Option<String>,
    /// Columns of a table of an anonymous class, declared in the table (LAMI allows a class
    /// object in place of a class name): `--freq-series` tables, whose columns depend on the
    /// histograms. The table's `title` is then the class title; `class` is only a key for
    /// text rendering and ordering.
    pub inline: Option<Vec<InlineColumn>>,
    /// Begin of the time range the table covers, ns since the epoch.
    pub begin: i64,
    /// End of that time range.
    pub end: i64,
    /// The rows, each a cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table of class `class` over `begin`..`end`.
    pub(crate) fn new(class: &'static str, begin: i64, end: i64) -> Self {
        Table {
            class,
            title: None,
            inline: None,
            begin,
            end,
            rows: Vec::new(),
        }
    }

    /// The `class` member of the table's LAMI object: the class name, an inheriting class
    /// with the table's title, or a whole anonymous class.
    pub(crate) fn class_json(&self) -> Value {
        if let Some(cols) = &self.inline {
            let cols: Vec<Value> = cols
                .iter()
                .map(|c| {
                    let mut o = Map::new();
                    o.insert("title".into(), json!(c.title));
                    o.insert("class".into(), json!(c.class));
                    if let Some(u) = c.unit {
                        o.insert("unit".into(), json!(u));
                    }
                    Value::Object(o)
                })
                .collect();
            return json!({"title": self.title.as_deref().unwrap_or(""), "column-descriptions": cols});
        }
        match &self.title {
            Some(t) => json!({"inherit": self.class, "title": t}),
            None => json!(self.class),
        }
    }

    /// The text between the brackets ending the title of an inheriting table
    /// (`Title [subtitle]`), as lttng-analyses names the series of `--freq-series`.
    pub(crate) fn subtitle(&self) -> Option<&str> {
        let t = self.title.as_deref()?.strip_suffix(']')?;
        Some(&t[t.rfind(" [")? + 2..])
    }

    /// Writes the table's LAMI object: `class`, `time-range`, `data` (in that order).
    pub(crate) fn write_json(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(b"{\"class\":")?;
        match (&self.inline, &self.title) {
            // Small, once per table: through a `Value`.
            (Some(_), _) => serde_json::to_writer(&mut *w, &self.class_json())?,
            (None, Some(t)) => {
                w.write_all(b"{\"inherit\":")?;
                write_str(w, self.class)?;
                w.write_all(b",\"title\":")?;
                write_str(w, t)?;
                w.write_all(b"}")?;
            }
            (None, None) => write_str(w, self.class)?,
        }
        w.write_all(b",\"time-range\":")?;
        cell::time_range(self.begin, self.end).write_json(w)?;
        w.write_all(b",\"data\":[")?;
        for (i, r) in self.rows.iter().enumerate() {
            w.write_all(if i > 0 { b",[" } else { b"[" })?;
            for (j, c) in r.iter().enumerate() {
                if j > 0 {
                    w.write_all(b",")?;
                }
                c.write_json(w)?;
            }
            w.write_all(b"]")?;
        }
        w.write_all(b"]}")
    }
}

/// The `--mi` document of a set of results, as a JSON value: what [`write_results`] writes,
/// parsed (so that tests comparing documents check the written bytes).
pub fn results_json(tables: &[Table]) -> Value {
    let mut b = Vec::new();
    write_results(&mut b, tables).expect("writing to memory");
    serde_json::from_slice(&b).expect("valid JSON")
}

/// Writes the `--mi` document of a set of results to `w`, cell by cell (no intermediate
/// document: the results of large traces are big).
pub fn write_results(w: &mut impl Write, tables: &[Table]) -> io::Result<()> {
    // Cells are written in small pieces: through a buffer of this concrete type (inlined
    // copies), `w` getting large blocks (it may be a `dyn Write`: one indirect call a piece).
    let mut w = io::BufWriter::with_capacity(1 << 16, w);
    w.write_all(b"{\"results\":[")?;
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        t.write_json(&mut w)?;
    }
    w.write_all(b"]}\n")?;
    w.flush()
}

/// A `freq` table titled `title`: the histogram of the durations `values` (ns) in `bins` bins
/// between `lo` and `hi` (see [`crate::stats::histogram`]), one row `[lower, upper, count]` per
/// bin.
pub(crate) fn duration_freq_table(
    title: String,
    values: &[i64],
    bins: usize,
    (lo, hi): (Option<i64>, Option<i64>),
    (begin, end): (i64, i64),
) -> Table {
    let mut t = Table::new("freq", begin, end);
    t.title = Some(title);
    for (lo, hi, n) in crate::stats::histogram(values, bins, lo, hi) {
        t.rows.push(vec![
            cell::duration(lo),
            cell::duration(hi),
            cell::number(n),
        ]);
    }
    t
}

/// Puts histograms with the same bins (`--freq-uniform`) side by side, as lttng-analyses's
/// `--freq-series` does: one table of an anonymous class titled `title`, whose columns are the
/// bounds (`lower`, `upper`, of the class `bound_class`) and one count column per histogram,
/// titled with the histogram's subtitle and with the unit `unit`. `freqs` are tables of rows
/// `[lower, upper, count]`; the bounds are those of the first; a histogram without rows
/// (a single value and no uniform bounds) counts zero everywhere. None without histograms.
pub(crate) fn series_table(
    title: &str,
    (lower, upper, bound_class): (&str, &str, &'static str),
    unit: &'static str,
    freqs: &[Table],
) -> Option<Table> {
    let first = freqs
        .iter()
        .find(|t| !t.rows.is_empty())
        .or(freqs.first())?;
    let mut t = Table::new("freq-series", first.begin, first.end);
    t.title = Some(title.to_string());
    let mut cols = vec![
        InlineColumn {
            title: lower.to_string(),
            class: bound_class,
            unit: None,
        },
        InlineColumn {
            title: upper.to_string(),
            class: bound_class,
            unit: None,
        },
    ];
    for f in freqs {
        cols.push(InlineColumn {
            title: f.subtitle().unwrap_or(f.class).to_string(),
            class: "number",
            unit: Some(unit),
        });
    }
    t.inline = Some(cols);
    for (i, r) in first.rows.iter().enumerate() {
        let mut row = vec![r[0].clone(), r[1].clone()];
        for f in freqs {
            row.push(
                f.rows
                    .get(i)
                    .map(|x| x[2].clone())
                    .unwrap_or_else(|| cell::number(0)),
            );
        }
        t.rows.push(row);
    }
    Some(t)
}

/// The LAMI version this crate's documents follow (`--mi-version` prints it as `1.0`).
pub(crate) const MI_VERSION: (u32, u32) = (1, 0);

/// The `--mi-version` answer: `MAJOR.MINOR`.
pub fn mi_version_string() -> String {
    format!("{}.{}", MI_VERSION.0, MI_VERSION.1)
}

/// This build's version as LAMI writes one (`{"major", "minor", "patch", "extra"}`).
fn tracekit_version() -> Value {
    let part = |v: &str| v.parse::<u64>().unwrap_or(0);
    json!({
        "major": part(env!("CARGO_PKG_VERSION_MAJOR")),
        "minor": part(env!("CARGO_PKG_VERSION_MINOR")),
        "patch": part(env!("CARGO_PKG_VERSION_PATCH")),
        "extra": "tracekit",
    })
}

/// The `--metadata` document of an analysis.
pub fn metadata_json(m: &Metadata) -> Value {
    let mut classes = Map::new();
    for tc in m.table_classes {
        let cols: Vec<Value> = tc
            .columns
            .iter()
            .map(|c| {
                let mut o = Map::new();
                o.insert("title".into(), json!(c.title));
                o.insert("class".into(), json!(c.class));
                if let Some(u) = c.unit {
                    o.insert("unit".into(), json!(u));
                }
                Value::Object(o)
            })
            .collect();
        classes.insert(
            tc.name.into(),
            json!({"title": tc.title, "column-descriptions": cols}),
        );
    }
    json!({
        "mi-version": {"major": MI_VERSION.0, "minor": MI_VERSION.1},
        "version": tracekit_version(),
        "title": m.title,
        "description": m.description,
        // (LAMI's optional `url` is left out: the project has no published address.)
        "authors": ["tracekit developers"],
        "tags": m.tags,
        "table-classes": Value::Object(classes),
    })
}

/// An error document (`{"error-message": ...}`), as LAMI specifies.
pub fn error_json(msg: &str) -> Value {
    json!({"error-message": msg})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_integers_as_serde_json_writes_them() {
        let texts = [
            "",
            "plain",
            "swapper/0",
            "é ü 日本",
            "quote \" inside",
            "back\\slash",
            "tab\tnew\nline\r",
            "\u{1}\u{1f}\u{7f} del",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "{'success': 3, 'ENOENT': 1}",
            "twelve bytes\"",
            "sixteen bytes ok\\",
            "a longer name, 31 bytes\u{1b}[0m",
            "ABCDEFGH\u{0}",
            "~~~~~~~~\u{80}\u{ff}\u{1f}",
        ];
        for t in texts {
            let mut ours = Vec::new();
            write_str(&mut ours, t).unwrap();
            assert_eq!(ours, serde_json::to_vec(t).unwrap(), "{t:?}");
        }
        // Each position of each escaped byte in a word, and bytes next to them.
        for len in 1..20 {
            for at in 0..len {
                for b in [0u8, 0x1f, 0x20, b'"', b'#', b'\\', b'[', b']', 0x7f] {
                    let mut t = vec![b'a'; len];
                    t[at] = b;
                    let expected = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(needs_escape(&t), expected, "{t:?}");
                }
            }
        }
        for v in [
            0i64,
            1,
            -1,
            9,
            10,
            42,
            -42,
            i64::MAX,
            i64::MIN,
            1_000_000_007,
        ] {
            let mut ours = Vec::new();
            write_int(&mut ours, v).unwrap();
            assert_eq!(ours, serde_json::to_vec(&v).unwrap());
        }
        for v in [0u64, 7, 10, 99, 100, u64::MAX] {
            let mut ours = Vec::new();
            write_uint(&mut ours, v).unwrap();
            assert_eq!(ours, serde_json::to_vec(&v).unwrap());
        }
    }

    /// Every kind of cell is written as `serde_json` writes the same cell as a `Value` (the
    /// output of the `Value`-built cells this model replaced), byte for byte.
    #[test]
    fn cells_as_values() {
        let cases: Vec<(Cell, Value)> = vec![
            (Cell::Null, Value::Null),
            (
                cell::process("a\"b\\c\u{1}é", 12, Some(-3)),
                json!({"class": "process", "name": "a\"b\\c\u{1}é", "pid": -3, "tid": 12}),
            ),
            (
                cell::process("x", -1, None),
                json!({"class": "process", "name": "x", "tid": -1}),
            ),
            (cell::number(7u64), json!({"class": "number", "value": 7})),
            (
                cell::number(u64::MAX),
                json!({"class": "number", "value": u64::MAX}),
            ),
            (cell::number(-7i64), json!({"class": "number", "value": -7})),
            (
                cell::number_f(0.1),
                json!({"class": "number", "value": 0.1}),
            ),
            (
                cell::number_f(f64::NAN),
                json!({"class": "number", "value": f64::NAN}),
            ),
            (
                cell::ratio(1.0 / 3.0),
                json!({"class": "ratio", "value": 1.0 / 3.0}),
            ),
            (
                cell::ratio(f64::INFINITY),
                json!({"class": "ratio", "value": f64::INFINITY}),
            ),
            (
                cell::duration(1e21),
                json!({"class": "duration", "value": 1e21}),
            ),
            (
                cell::duration(2.0),
                json!({"class": "duration", "value": 2.0}),
            ),
            (
                cell::duration_int(i64::MIN),
                json!({"class": "duration", "value": i64::MIN}),
            ),
            (cell::size(4096), json!({"class": "size", "value": 4096})),
            (
                cell::string("{'success': 1}\n\t"),
                json!({"class": "string", "value": "{'success': 1}\n\t"}),
            ),
            (cell::cpu(3), json!({"class": "cpu", "id": 3})),
            (
                cell::syscall("read"),
                json!({"class": "syscall", "name": "read"}),
            ),
            (
                cell::irq(true, 41, "eth0"),
                json!({"class": "irq", "hard": true, "nr": 41, "name": "eth0"}),
            ),
            (
                cell::irq(false, 1, "TIMER_SOFTIRQ"),
                json!({"class": "irq", "hard": false, "nr": 1, "name": "TIMER_SOFTIRQ"}),
            ),
            (
                cell::timestamp(-5),
                json!({"class": "timestamp", "value": -5}),
            ),
            (
                cell::time_range(1, 2),
                json!({"class": "time-range", "begin": {"class": "timestamp", "value": 1},
                       "end": {"class": "timestamp", "value": 2}}),
            ),
            (cell::disk("sda1"), json!({"class": "disk", "name": "sda1"})),
            (
                cell::netif("eth0"),
                json!({"class": "netif", "name": "eth0"}),
            ),
            (cell::path("/a/b"), json!({"class": "path", "path": "/a/b"})),
            (cell::fd(-1), json!({"class": "fd", "fd": -1})),
            (cell::boolean(None), json!({"class": "bool", "value": null})),
            (
                cell::boolean(Some(true)),
                json!({"class": "bool", "value": true}),
            ),
            (cell::unknown(), json!({"class": "unknown"})),
            (cell::empty(), json!({"class": "empty"})),
        ];
        for (c, v) in cases {
            let mut b = Vec::new();
            c.write_json(&mut b).unwrap();
            assert_eq!(
                String::from_utf8(b).unwrap(),
                serde_json::to_string(&v).unwrap(),
                "{c:?}"
            );
            assert_eq!(c.to_value(), v);
        }
    }

    /// Tables too: the class (a name, an inheriting class, an anonymous class), the time range
    /// and the rows, as `serde_json` writes them, in the order `class`, `time-range`, `data`.
    #[test]
    fn tables_as_values() {
        let mut t = Table::new("per-tid", 1, 2);
        t.title = Some("T \"q\"".into());
        t.rows.push(vec![cell::number(3), cell::unknown()]);
        t.rows.push(vec![cell::string("s")]);
        let u = Table::new("total", 1, 2);
        let mut s = Table::new("freq-series", 3, 4);
        s.title = Some("Series".into());
        s.inline = Some(vec![InlineColumn {
            title: "n".into(),
            class: "number",
            unit: Some("calls"),
        }]);
        s.rows.push(vec![cell::number(1)]);
        let mut buf = Vec::new();
        write_results(&mut buf, &[t.clone(), u.clone(), s.clone()]).unwrap();
        let expected = |t: &Table| {
            let time = json!({"class": "time-range", "begin": {"class": "timestamp", "value": t.begin},
                              "end": {"class": "timestamp", "value": t.end}});
            let rows: Vec<Vec<Value>> = t
                .rows
                .iter()
                .map(|r| r.iter().map(Cell::to_value).collect())
                .collect();
            format!(
                "{{\"class\":{},\"time-range\":{},\"data\":{}}}",
                serde_json::to_string(&t.class_json()).unwrap(),
                serde_json::to_string(&time).unwrap(),
                serde_json::to_string(&rows).unwrap()
            )
        };
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            format!(
                "{{\"results\":[{},{},{}]}}\n",
                expected(&t),
                expected(&u),
                expected(&s)
            )
        );
        assert_eq!(
            results_json(&[t.clone()])["results"][0]["class"],
            json!({"inherit": "per-tid", "title": "T \"q\""})
        );
    }
}
