//! tracekit's kernel trace analyses: equivalents of every lttng-analyses command, sharing one
//! pass over the trace through the [`kernel`] model, with LAMI 1.0 (`--mi`) and text output.

pub mod cputop;
pub mod driver;
pub mod io;
pub mod iotop;
pub mod irq;
pub mod lami;
pub mod latency;
pub mod memtop;
pub mod period;
pub mod period_expr;
pub mod sched;
pub mod stats;
pub mod syscallstats;
pub mod text;

pub use driver::{run, Analysis, Common, Range, RunError};
pub use lami::{Metadata, Table};

/// Linux errno names (x86-64 / generic numbering), for return values.
pub fn errno_name(e: i64) -> Option<&'static str> {
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
    /// Duration bounds, ns.
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// Only these hard IRQs / soft IRQ vectors.
    pub irqs: Option<Vec<i64>>,
    pub softirqs: Option<Vec<u64>>,
    /// Histogram bins (`--freq-resolution`).
    pub freq_resolution: usize,
    /// schedstats tables.
    pub total: bool,
    pub per_tid: bool,
    pub per_prio: bool,
    /// I/O size bounds, bytes.
    pub minsize: Option<i64>,
    pub maxsize: Option<i64>,
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
) -> Result<Vec<Table>, RunError> {
    let traces = ctf::open_all(paths)?;
    let (mut a, _) = build(name, common, opts).expect("known analysis");
    let (mut tables, _) = run(&traces, common, &mut [a.as_mut()])?;
    Ok(tables.remove(0))
}
