//! tracekit's kernel trace analyses: equivalents of every lttng-analyses command, sharing one
//! pass over the trace through the [`kernel`] model, with LAMI 1.0 (`--mi`) and text output.

#![deny(missing_docs)]

pub mod cli;
pub mod commands;
pub mod cputop;
pub mod driver;
pub mod io;
mod iotop;
pub mod irq;
pub mod lami;
pub mod memtop;
pub mod period;
pub mod period_expr;
pub mod sched;
pub mod stats;
pub mod syscallstats;
pub mod text;

pub use driver::{
    intersection, run_refresh, Analysed, Analysis, Common, Progress, ProgressPoint, Range,
    RefreshSink,
};
pub use lami::{Metadata, Table};

/// Errors of the analyses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The traces could not be opened, or hold no readable event in the analysed range.
    #[error(transparent)]
    Read(#[from] pipeline::Error),
    /// A `--period` or `--period-captures` definition does not parse.
    #[error("Cannot parse period definition expression: {0}")]
    PeriodParse(#[from] period_expr::ParseError),
    /// A period names a parent no `--period` defines.
    #[error("unknown parent period '{parent}' of '{name}'")]
    UnknownParent {
        /// The period defined.
        name: String,
        /// The parent it names.
        parent: String,
    },
    /// Two `--period` definitions have the same name.
    #[error("duplicate period '{0}'")]
    Duplicate(String),
    /// `--period-captures` of a period no `--period` defines.
    #[error("captures for unknown period '{0}'")]
    UnknownCaptured(String),
    /// The parents of the periods form a cycle.
    #[error("the periods form a cycle through '{0}'")]
    Cycle(String),
    /// `--select`, `--aggregate-by` or `--group-by` names a period no `--period` defines.
    #[error("unknown period '{0}' (in --select, --aggregate-by or --group-by)")]
    UnknownPeriod(String),
    /// A `--group-by` that is not `PERIOD.CAPTURE`.
    #[error("--group-by expects PERIOD.CAPTURE, got '{0}'")]
    BadGroup(String),
    /// A mode flag (`--stats`…) that none of the analyses named has.
    #[error("{flag}: not an output mode of {names}")]
    NotAMode {
        /// The flag.
        flag: &'static str,
        /// The analyses named, comma-separated.
        names: String,
    },
    /// None of the traces is a kernel trace (`--test-compatibility`).
    #[error("{0}: no kernel trace (the analyses read LTTng kernel events)")]
    NoKernelTrace(String),
}

/// Linux errno names (x86-64 / generic numbering), for return values.
pub(crate) fn errno_name(e: i64) -> Option<&'static str> {
    const NAMES: &[&str] = &[
        "",
        "EPERM",
        "ENOENT",
        "ESRCH",
        "EINTR",
        "EIO",
        "ENXIO",
        "E2BIG",
        "ENOEXEC",
        "EBADF",
        "ECHILD",
        "EAGAIN",
        "ENOMEM",
        "EACCES",
        "EFAULT",
        "ENOTBLK",
        "EBUSY",
        "EEXIST",
        "EXDEV",
        "ENODEV",
        "ENOTDIR",
        "EISDIR",
        "EINVAL",
        "ENFILE",
        "EMFILE",
        "ENOTTY",
        "ETXTBSY",
        "EFBIG",
        "ENOSPC",
        "ESPIPE",
        "EROFS",
        "EMLINK",
        "EPIPE",
        "EDOM",
        "ERANGE",
        "EDEADLK",
        "ENAMETOOLONG",
        "ENOLCK",
        "ENOSYS",
        "ENOTEMPTY",
        "ELOOP",
        "",
        "ENOMSG",
        "EIDRM",
        "ECHRNG",
        "EL2NSYNC",
        "EL3HLT",
        "EL3RST",
        "ELNRNG",
        "EUNATCH",
        "ENOCSI",
        "EL2HLT",
        "EBADE",
        "EBADR",
        "EXFULL",
        "ENOANO",
        "EBADRQC",
        "EBADSLT",
        "",
        "EBFONT",
        "ENOSTR",
        "ENODATA",
        "ETIME",
        "ENOSR",
        "ENONET",
        "ENOPKG",
        "EREMOTE",
        "ENOLINK",
        "EADV",
        "ESRMNT",
        "ECOMM",
        "EPROTO",
        "EMULTIHOP",
        "EDOTDOT",
        "EBADMSG",
        "EOVERFLOW",
        "ENOTUNIQ",
        "EBADFD",
        "EREMCHG",
        "ELIBACC",
        "ELIBBAD",
        "ELIBSCN",
        "ELIBMAX",
        "ELIBEXEC",
        "EILSEQ",
        "ERESTART",
        "ESTRPIPE",
        "EUSERS",
        "ENOTSOCK",
        "EDESTADDRREQ",
        "EMSGSIZE",
        "EPROTOTYPE",
        "ENOPROTOOPT",
        "EPROTONOSUPPORT",
        "ESOCKTNOSUPPORT",
        "EOPNOTSUPP",
        "EPFNOSUPPORT",
        "EAFNOSUPPORT",
        "EADDRINUSE",
        "EADDRNOTAVAIL",
        "ENETDOWN",
        "ENETUNREACH",
        "ENETRESET",
        "ECONNABORTED",
        "ECONNRESET",
        "ENOBUFS",
        "EISCONN",
        "ENOTCONN",
        "ESHUTDOWN",
        "ETOOMANYREFS",
        "ETIMEDOUT",
        "ECONNREFUSED",
        "EHOSTDOWN",
        "EHOSTUNREACH",
        "EALREADY",
        "EINPROGRESS",
        "ESTALE",
        "EUCLEAN",
        "ENOTNAM",
        "ENAVAIL",
        "EISNAM",
        "EREMOTEIO",
        "EDQUOT",
        "ENOMEDIUM",
        "EMEDIUMTYPE",
        "ECANCELED",
        "ENOKEY",
        "EKEYEXPIRED",
        "EKEYREVOKED",
        "EKEYREJECTED",
        "EOWNERDEAD",
        "ENOTRECOVERABLE",
        "ERFKILL",
        "EHWPOISON",
    ];
    match e {
        512 => Some("ERESTARTSYS"),
        513 => Some("ERESTARTNOINTR"),
        514 => Some("ERESTARTNOHAND"),
        515 => Some("ENOIOCTLCMD"),
        516 => Some("ERESTART_RESTARTBLOCK"),
        _ => NAMES.get(e as usize).copied().filter(|s| !s.is_empty()),
    }
}

/// Options specific to some analyses.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows of top tables (0: all).
    pub limit: usize,
    /// Only durations at least this long, ns (`--min`).
    pub min: Option<i64>,
    /// Only durations at most this long, ns (`--max`).
    pub max: Option<i64>,
    /// Only these hard IRQs (`--irq`).
    pub irqs: Option<Vec<i64>>,
    /// Only these soft IRQ vectors (`--softirq`).
    pub softirqs: Option<Vec<u64>>,
    /// Histogram bins (`--freq-resolution`).
    pub freq_resolution: usize,
    /// `--freq-uniform`: the same bins for every histogram of an analysis (shared by the
    /// analyses built with these options, so across `--refresh` periods too).
    pub freq_uniform: Option<stats::Uniform>,
    /// `--freq-series`: the histograms as one table of series (implies `--freq-uniform`).
    pub freq_series: bool,
    /// schedstats: statistics of all threads together (`--total`).
    pub total: bool,
    /// schedstats: per-thread statistics (`--per-tid`).
    pub per_tid: bool,
    /// schedstats: per-priority statistics (`--per-prio`).
    pub per_prio: bool,
    /// I/O analyses: only reads and writes of at least this many bytes (`--minsize`).
    pub minsize: Option<i64>,
    /// I/O analyses: only reads and writes of at most this many bytes (`--maxsize`).
    pub maxsize: Option<i64>,
}

impl Options {
    /// The shared bounds of `--freq-uniform` (also on with `--freq-series`).
    fn uniform(&self) -> Option<stats::Uniform> {
        match (&self.freq_uniform, self.freq_series) {
            (Some(u), _) => Some(u.clone()),
            (None, true) => Some(stats::Uniform::default()),
            (None, false) => None,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limit: 10,
            min: None,
            max: None,
            irqs: None,
            softirqs: None,
            freq_resolution: 20,
            freq_uniform: None,
            freq_series: false,
            total: false,
            per_tid: false,
            per_prio: false,
            minsize: None,
            maxsize: None,
        }
    }
}

/// Names of the available analyses.
pub const NAMES: &[&str] = &[
    "cputop",
    "memtop",
    "syscallstats",
    "irqstats",
    "irqlog",
    "irqfreq",
    "schedlog",
    "schedfreq",
    "schedtop",
    "schedstats",
    "iolatencystats",
    "iolatencyfreq",
    "iolatencytop",
    "iolog",
    "iousagetop",
];

/// Builds the analysis called `name` (see [`NAMES`]) and returns it with its metadata.
pub fn build(
    name: &str,
    common: &Common,
    opts: &Options,
) -> Option<(Box<dyn Analysis>, &'static Metadata)> {
    Some(match name {
        "cputop" => (
            Box::new(cputop::CpuTop::new(common.clone(), opts.limit)),
            &cputop::METADATA,
        ),
        "memtop" => (
            Box::new(memtop::MemTop::new(common.clone(), opts.limit)),
            &memtop::METADATA,
        ),
        "schedlog" | "schedtop" | "schedstats" | "schedfreq" => {
            let mode = match name {
                "schedlog" => sched::SchedMode::Log,
                "schedfreq" => sched::SchedMode::Freq(opts.freq_resolution),
                "schedtop" => sched::SchedMode::Top,
                _ => sched::SchedMode::Stats {
                    total: opts.total,
                    per_tid: opts.per_tid,
                    per_prio: opts.per_prio,
                },
            };
            let mut a = sched::Sched::new(common.clone(), mode);
            a.limit = opts.limit;
            a.min = opts.min;
            a.max = opts.max;
            a.uniform = opts.uniform();
            a.series = opts.freq_series;
            (Box::new(a), &sched::METADATA)
        }
        "iolatencystats" | "iolatencyfreq" => {
            let mode = if name == "iolatencyfreq" {
                io::IoMode::Freq(opts.freq_resolution)
            } else {
                io::IoMode::Stats
            };
            let mut a = io::IoLatency::new(common.clone(), mode);
            a.min = opts.min;
            a.max = opts.max;
            a.uniform = opts.uniform();
            a.series = opts.freq_series;
            (Box::new(a), &io::METADATA)
        }
        "iolatencytop" | "iolog" | "iousagetop" => {
            let mode = match name {
                "iolatencytop" => iotop::IoTopMode::LatencyTop,
                "iolog" => iotop::IoTopMode::Log,
                _ => iotop::IoTopMode::Usage,
            };
            let mut a = iotop::IoTop::new(common.clone(), mode);
            a.limit = opts.limit;
            a.filter = iotop::IoFilter {
                min: opts.min,
                max: opts.max,
                minsize: opts.minsize,
                maxsize: opts.maxsize,
            };
            (Box::new(a), &io::METADATA)
        }
        "syscallstats" => (
            Box::new(syscallstats::SyscallStats::new(common.clone())),
            &syscallstats::METADATA,
        ),
        "irqstats" | "irqlog" | "irqfreq" => {
            let mut a = irq::Irq::new(common.clone());
            a.mode = match name {
                "irqlog" => irq::IrqMode::Log,
                "irqfreq" => irq::IrqMode::Freq(opts.freq_resolution),
                _ => irq::IrqMode::Stats,
            };
            a.keep_log = a.mode != irq::IrqMode::Stats;
            a.uniform = opts.uniform();
            a.series = opts.freq_series;
            a.min = opts.min;
            a.max = opts.max;
            // Giving only one of the filters selects that kind alone (as lttng-analyses does).
            match (&opts.irqs, &opts.softirqs) {
                (Some(i), None) => {
                    a.irqs = Some(i.clone());
                    a.softirqs = Some(Vec::new());
                }
                (None, Some(s)) => {
                    a.softirqs = Some(s.clone());
                    a.irqs = Some(Vec::new());
                }
                (i, s) => {
                    a.irqs = i.clone();
                    a.softirqs = s.clone();
                }
            }
            (Box::new(a), &irq::METADATA)
        }
        _ => return None,
    })
}

/// Runs the analysis `name` over the traces at `paths` and returns its result tables.
pub fn run_named(
    name: &str,
    paths: &[std::path::PathBuf],
    common: &Common,
    opts: &Options,
) -> Result<Vec<Table>, Error> {
    let traces = ctf::open_all(paths).map_err(pipeline::Error::from)?;
    let mut tables = Vec::new();
    run_names(&traces, &[name], common, opts, None, &mut |_, mut t| {
        tables = t.remove(0)
    })?;
    Ok(tables)
}

/// The summary lttng-analyses makes of several `--refresh` periods of analysis `name`, from
/// their tables (`(period range, tables)`): one row per period (cputop, memtop: the total
/// table; syscallstats: each process of the total table; irqstats: each interrupt's count).
/// None for the other analyses, or with fewer than two periods.
pub fn summary(name: &str, periods: &[(Range, &[Table])]) -> Option<Table> {
    let src: &[&str] = match name {
        "cputop" | "memtop" | "syscallstats" => &["total"],
        "irqstats" => &["hard-stats", "soft-stats"],
        _ => return None,
    };
    if periods.len() < 2 {
        return None;
    }
    let (first, last) = (periods.first()?.0, periods.last()?.0);
    let mut t = Table::new("summary", first.begin, last.end);
    for (range, tables) in periods {
        for table in tables.iter().filter(|t| src.contains(&t.class)) {
            let rows = match name {
                "cputop" | "memtop" => &table.rows[..table.rows.len().min(1)],
                _ => &table.rows[..],
            };
            for r in rows {
                let mut row = vec![lami::cell::time_range(range.begin, range.end)];
                // irqstats: the interrupt count alone.
                match name {
                    "irqstats" => row.extend(r.get(1).cloned()),
                    _ => row.extend(r.iter().cloned()),
                }
                t.rows.push(row);
            }
        }
    }
    Some(t)
}

/// Orders the tables of several `--refresh` periods of one analysis as lttng-analyses prints
/// them: grouped by table class, classes in order of first appearance, periods in order within
/// a class (a stable sort).
pub fn group_by_class(tables: &mut [Table]) {
    let mut order: Vec<String> = Vec::new();
    let key = |t: &Table| match &t.inline {
        Some(_) => String::new(),
        None => t.class.to_string(),
    };
    for t in tables.iter() {
        let k = key(t);
        if !order.contains(&k) {
            order.push(k);
        }
    }
    tables.sort_by_key(|t| order.iter().position(|k| *k == key(t)));
}

/// Runs the analyses `names` (see [`NAMES`]) over `traces` in one pass, in `refresh` ns
/// periods ([`run_refresh`]); `report` gets each period's range and each analysis' tables.
pub fn run_names(
    traces: &[std::sync::Arc<ctf::Trace>],
    names: &[&str],
    common: &Common,
    opts: &Options,
    refresh: Option<i64>,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
) -> Result<Analysed, Error> {
    let mut make = || {
        names
            .iter()
            .map(|n| build(n, common, opts).expect("known analysis").0)
            .collect()
    };
    run_refresh(traces, common, refresh, &mut make, report)
}

/// [`run_names`] over any source, such as a live relay's sessions (see
/// [`driver::run_refresh_on`]).
pub fn run_names_on<S: pipeline::Source>(
    source: &S,
    names: &[&str],
    common: &Common,
    opts: &Options,
    refresh: Option<i64>,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
) -> Result<Analysed, Error> {
    let mut make = || {
        names
            .iter()
            .map(|n| build(n, common, opts).expect("known analysis").0)
            .collect()
    };
    driver::run_refresh_on(source, common, refresh, &mut make, report)
}

/// The `--mi` result tables of the analyses `names` run together over `periods` (each
/// period's range and tables per analysis, as [`run_names`] reports them): each analysis' tables
/// in turn; with several periods, grouped by class ([`group_by_class`]) and followed by the
/// [`summary`] table.
pub fn mi_tables(names: &[&str], mut periods: Vec<(Range, Vec<Vec<Table>>)>) -> Vec<Table> {
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let summary = if periods.len() > 1 {
            let per: Vec<_> = periods.iter().map(|p| (p.0, p.1[i].as_slice())).collect();
            summary(name, &per)
        } else {
            None
        };
        let mut tables: Vec<Table> = periods
            .iter_mut()
            .flat_map(|p| std::mem::take(&mut p.1[i]))
            .collect();
        if periods.len() > 1 {
            group_by_class(&mut tables);
        }
        out.extend(tables);
        out.extend(summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_class_grouping() {
        let r1 = Range { begin: 0, end: 10 };
        let r2 = Range { begin: 10, end: 20 };
        let total = |v: f64, r: Range| {
            let mut t = Table::new("total", r.begin, r.end);
            t.rows.push(vec![lami::cell::ratio(v)]);
            t
        };
        let p1 = vec![Table::new("per-cpu", 0, 10), total(0.25, r1)];
        let p2 = vec![Table::new("per-cpu", 10, 20), total(0.5, r2)];
        let s = summary("cputop", &[(r1, &p1), (r2, &p2)]).unwrap();
        assert_eq!((s.begin, s.end, s.rows.len()), (0, 20, 2));
        assert_eq!(s.rows[1][1], lami::cell::ratio(0.5));
        assert!(summary("cputop", &[(r1, &p1)]).is_none());
        assert!(summary("schedlog", &[(r1, &p1), (r2, &p2)]).is_none());
        let tables = mi_tables(&["cputop"], vec![(r1, vec![p1]), (r2, vec![p2])]);
        let classes: Vec<&str> = tables.iter().map(|t| t.class).collect();
        assert_eq!(classes, ["per-cpu", "per-cpu", "total", "total", "summary"]);
    }
}
