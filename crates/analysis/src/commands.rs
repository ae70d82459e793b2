//! lttng-analyses' command line as tools call it: its command names (`lttng-NAME` and
//! `lttng-NAME-mi`), the families its mode flags (`--log`, `--top`, `--stats`, `--freq`,
//! `--usage`) choose in, and the LAMI compatibility check.

use std::path::PathBuf;

use crate::period::PeriodCmd;
use crate::{Error, Metadata, NAMES};

/// lttng-analyses' mode flags: each adds the analysis of its mode in the families of the
/// analyses named.
#[derive(Debug, Default, Clone, Copy)]
pub struct Modes {
    /// The log of the family (irqlog, schedlog, iolog, periodlog).
    pub log: bool,
    /// The top of the family (cputop, memtop, schedtop, iolatencytop, periodtop).
    pub top: bool,
    /// The statistics of the family (irqstats, schedstats, iolatencystats, periodstats).
    pub stats: bool,
    /// The frequency distribution of the family (irqfreq, schedfreq, iolatencyfreq,
    /// periodfreq).
    pub freq: bool,
    /// iousagetop (I/O analyses).
    pub usage: bool,
}

/// lttng-analyses' command families: the analysis of each mode (log, top, stats, freq,
/// usage), which are also the family's members.
const FAMILIES: &[[Option<&str>; 5]] = &[
    [None, Some("cputop"), None, None, None],
    [None, Some("memtop"), None, None, None],
    [
        Some("irqlog"),
        None,
        Some("irqstats"),
        Some("irqfreq"),
        None,
    ],
    [
        Some("schedlog"),
        Some("schedtop"),
        Some("schedstats"),
        Some("schedfreq"),
        None,
    ],
    [
        Some("iolog"),
        Some("iolatencytop"),
        Some("iolatencystats"),
        Some("iolatencyfreq"),
        Some("iousagetop"),
    ],
    [
        Some("periodlog"),
        Some("periodtop"),
        Some("periodstats"),
        Some("periodfreq"),
        None,
    ],
];

/// The period analyses (run by the period engine, not the kernel model).
const PERIOD_ANALYSES: &[&str] = &["periodlog", "periodtop", "periodstats", "periodfreq"];

/// Every analysis, as `tracekit analyze` and lttng-analyses' command names spell them: those
/// of the kernel model ([`NAMES`]) with the period analyses after the I/O latency ones.
pub fn analyses() -> impl Iterator<Item = &'static str> {
    let at = NAMES
        .iter()
        .position(|n| *n == "iolatencyfreq")
        .map_or(NAMES.len(), |i| i + 1);
    let (before, after) = NAMES.split_at(at);
    before.iter().chain(PERIOD_ANALYSES).chain(after).copied()
}

/// The analysis `s` names (case-insensitively), as [`analyses`] spells it.
pub fn name(s: &str) -> Option<&'static str> {
    analyses().find(|n| n.eq_ignore_ascii_case(s))
}

/// `names` and, after them, the analyses `modes` add; an error names a mode that no named
/// analysis has (as lttng-analyses rejects `lttng-cputop --stats`).
pub fn with_modes(names: &[&'static str], modes: Modes) -> Result<Vec<&'static str>, Error> {
    let flags = [
        ("--log", modes.log),
        ("--top", modes.top),
        ("--stats", modes.stats),
        ("--freq", modes.freq),
        ("--usage", modes.usage),
    ];
    let mut out: Vec<&'static str> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n);
        }
    }
    for (mode, (flag, set)) in flags.into_iter().enumerate() {
        if !set {
            continue;
        }
        let added: Vec<&'static str> = FAMILIES
            .iter()
            .filter(|family| names.iter().any(|n| family.contains(&Some(*n))))
            .filter_map(|family| family[mode])
            .collect();
        if added.is_empty() {
            return Err(Error::NotAMode {
                flag,
                names: names.join(", "),
            });
        }
        for n in added {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// The analysis and whether it is the `-mi` form, of one of lttng-analyses' command names
/// (`lttng-NAME` or `lttng-NAME-mi`, as `tracekit lami-links` makes them); None for any other
/// program name.
pub fn lttng_command(program: &str) -> Option<(&'static str, bool)> {
    let command = program.strip_prefix("lttng-")?;
    let (n, mi) = match command.strip_suffix("-mi") {
        Some(n) => (n, true),
        None => (command, false),
    };
    analyses().find(|x| *x == n).map(|x| (x, mi))
}

/// The LAMI metadata of analysis `name`.
pub fn metadata(name: &str) -> Option<&'static Metadata> {
    Some(match name {
        "cputop" => &crate::cputop::METADATA,
        "memtop" => &crate::memtop::METADATA,
        "syscallstats" => &crate::syscallstats::METADATA,
        "irqstats" | "irqlog" | "irqfreq" => &crate::irq::METADATA,
        "iolatencystats" | "iolatencyfreq" | "iolatencytop" | "iolog" | "iousagetop" => {
            &crate::io::METADATA
        }
        "schedlog" | "schedtop" | "schedstats" | "schedfreq" => &crate::sched::METADATA,
        "periodlog" | "periodtop" | "periodstats" | "periodfreq" => &crate::period::METADATA,
        _ => return None,
    })
}

/// The period command of an analysis name, if it is one of the period analyses.
pub fn period_cmd(name: &str) -> Option<PeriodCmd> {
    Some(match name {
        "periodlog" => PeriodCmd::Log,
        "periodtop" => PeriodCmd::Top,
        "periodstats" => PeriodCmd::Stats,
        "periodfreq" => PeriodCmd::Freq,
        _ => return None,
    })
}

/// LAMI's `--test-compatibility`: whether `paths` can be analysed (they open, and one of them
/// is a kernel trace).
pub fn check_compatibility(paths: &[PathBuf]) -> Result<(), Error> {
    let traces = ctf::open_all(paths).map_err(pipeline::Error::from)?;
    let kernel = traces.iter().any(|t| {
        t.class.env_str("domain") == Some("kernel")
            || t.class
                .streams
                .values()
                .any(|s| s.events.values().any(|e| e.name == "sched_switch"))
    });
    if kernel {
        Ok(())
    } else {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        Err(Error::NoKernelTrace(shown.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lttng_command_names() {
        assert_eq!(
            lttng_command("lttng-iolatencystats-mi"),
            Some(("iolatencystats", true))
        );
        assert_eq!(lttng_command("lttng-periodlog"), Some(("periodlog", false)));
        for other in [
            "tracekit",
            "lttng-analyses-record",
            "lttng-track-process",
            "lttng-",
            "lttng--mi",
            "lttng-CPUTOP",
            "my-lttng-cputop",
        ] {
            assert_eq!(lttng_command(other), None, "{other}");
        }
    }

    #[test]
    fn modes_add_the_family_members() {
        let stats = Modes {
            stats: true,
            ..Default::default()
        };
        assert_eq!(
            with_modes(&["irqlog"], stats).unwrap(),
            ["irqlog", "irqstats"]
        );
        assert_eq!(
            with_modes(&["cputop"], stats).unwrap_err().to_string(),
            "--stats: not an output mode of cputop"
        );
        let top = Modes {
            top: true,
            ..Default::default()
        };
        assert_eq!(
            with_modes(&["iolog", "schedlog"], top).unwrap(),
            ["iolog", "schedlog", "schedtop", "iolatencytop"]
        );
        for n in analyses() {
            assert!(metadata(n).is_some(), "{n}");
            assert_eq!(name(&n.to_uppercase()), Some(n));
        }
        // The kernel model's analyses and the period ones, each once.
        for n in NAMES {
            assert!(period_cmd(n).is_none(), "{n}");
        }
        let periods = analyses().filter(|n| period_cmd(n).is_some()).count();
        assert_eq!(periods, 4);
        assert_eq!(NAMES.len() + periods, analyses().count());
    }
}
