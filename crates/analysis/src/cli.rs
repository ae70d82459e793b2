//! `tracekit analyze`'s run, from the parsed command line to its output: the lttng-analyses
//! command names, the analyses' dispatch (the kernel ones in one pass, the period ones in
//! another), the text or LAMI (`--mi`) output, live and `--refresh` runs. The binary parses
//! the arguments into a [`Request`] and hands over its standard streams in an [`Env`].

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::Trace;
use pipeline::time::{parse_analyses_duration, parse_analyses_time};
use pipeline::Source;

use crate::commands::{self, Modes};
use crate::lami::{error_json, metadata_json};
use crate::period::{PeriodCmd, PeriodOptions};
use crate::{Common, Options, Progress, ProgressPoint, Range, Table};

/// What `tracekit analyze` was asked (its options, parsed; see its `--help`).
#[derive(Debug, Default)]
pub struct Request {
    /// The analyses named (before the mode flags add theirs).
    pub names: Vec<&'static str>,
    /// lttng-analyses' mode flags (`--log`, `--top`…).
    pub modes: Modes,
    /// Trace directories, or live URLs.
    pub paths: Vec<PathBuf>,
    /// `--mi`: LAMI 1.0 JSON.
    pub mi: bool,
    /// `--metadata`: the LAMI metadata of the analyses.
    pub metadata: bool,
    /// `--mi-version`.
    pub mi_version: bool,
    /// `--test-compatibility`.
    pub test_compatibility: bool,
    /// `--output-progress`: LAMI progress lines.
    pub output_progress: bool,
    /// `--no-progress`.
    pub no_progress: bool,
    /// `--begin`, `--end`, `--timerange` as given.
    pub begin: Option<String>,
    /// See [`Request::begin`].
    pub end: Option<String>,
    /// See [`Request::begin`].
    pub timerange: Option<String>,
    /// `--cpu`.
    pub cpus: Option<Vec<u32>>,
    /// `--tid`.
    pub tids: Option<Vec<i32>>,
    /// `--procname`.
    pub procnames: Option<Vec<String>>,
    /// The analyses' options; `min` and `max` are taken from [`Request::min_us`] and
    /// [`Request::max_us`].
    pub options: Options,
    /// `--min`, µs.
    pub min_us: Option<f64>,
    /// `--max`, µs.
    pub max_us: Option<f64>,
    /// `--refresh` as given.
    pub refresh: Option<String>,
    /// The period analyses' definitions and filters; `limit`, the frequency options and the
    /// reports are taken from the rest of the request, `--min`/`--max` stand in for
    /// `--min-duration`/`--max-duration`.
    pub period: PeriodOptions,
    /// `--no-intersection`.
    pub no_intersection: bool,
    /// `--sync`: see [`Env::time_map`].
    pub sync: bool,
    /// `--lttng-analyses-quirks`.
    pub lttng_analyses_quirks: bool,
    /// `--no-charts`.
    pub no_charts: bool,
    /// The width text tables are fitted to (None: no limit).
    pub width: Option<usize>,
}

/// Microseconds (as options give them) to nanoseconds.
pub fn us_to_ns(v: Option<f64>) -> Option<i64> {
    v.map(|x| (x * 1000.0).round() as i64)
}

/// Makes the progress display of a read of these traces, if any.
pub type ProgressBarFn = dyn Fn(&[Arc<Trace>]) -> Option<Arc<dyn Progress>>;

/// Makes `--sync`'s time line for these traces.
pub type TimeMapFn = dyn Fn(&[Arc<Trace>]) -> Arc<dyn TimeMap>;

/// What a run writes to and asks of the process around it.
pub struct Env<'a> {
    /// Standard output: results, LAMI errors (LAMI progress lines go to the process's
    /// standard output directly, from the reading threads).
    pub out: &'a mut dyn Write,
    /// Standard error: errors and warnings.
    pub err: &'a mut dyn Write,
    /// The progress display of a read of these traces, if any.
    pub progress_bar: &'a ProgressBarFn,
    /// `--sync`'s time line for these traces.
    pub time_map: &'a TimeMapFn,
}

/// The arguments of `tracekit analyze` for a run under one of lttng-analyses' command names
/// (`lttng-NAME` or `lttng-NAME-mi`, as `tracekit lami-links` makes them): `args` (the
/// process's, program first) with `analyze NAME [--mi]` in place of the program. None for
/// any other program name.
pub fn lttng_command_args(args: &[OsString]) -> Option<Vec<OsString>> {
    let program = std::path::Path::new(args.first()?).file_name()?.to_str()?;
    let (name, mi) = commands::lttng_command(program)?;
    let mut out: Vec<OsString> = vec!["tracekit".into(), "analyze".into(), name.into()];
    if mi {
        out.push("--mi".into());
    }
    out.extend(args[1..].iter().cloned());
    Some(out)
}

/// `--output-progress`: LAMI progress lines on standard output.
struct ProgressLines;

impl Progress for ProgressLines {
    fn at(&self, p: ProgressPoint) {
        progress_line(&format!(
            "{:.4} {}/{}; {} events read\n",
            p.fraction(),
            crate::text::fmt_ts(p.ts),
            crate::text::fmt_ts(p.end),
            p.events
        ));
    }

    fn done(&self, events: u64) {
        progress_line(&format!("1 Done: {events} events read\n"));
    }
}

/// Writes a progress line at once (a consumer that went away stops the analysis at its next
/// write of results).
fn progress_line(line: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
}

/// Writes and flushes, a closed pipe (`| head`) not being an error.
fn emit(out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Writes the LAMI results document, a closed pipe not being an error.
fn write_mi(mut out: &mut dyn Write, tables: &[Table]) -> io::Result<()> {
    match crate::lami::write_results(&mut out, tables).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// The run's failure: a LAMI error document with `--mi`, else a message on standard error.
fn fail(env: &mut Env<'_>, mi: bool, msg: &str) -> io::Result<ExitCode> {
    if mi {
        emit(env.out, format!("{}\n", error_json(msg)).as_bytes())?;
    } else {
        writeln!(env.err, "tracekit analyze: error: {msg}")?;
    }
    Ok(ExitCode::from(1))
}

/// The exit status after reporting the read errors (the results cover every readable event).
fn read_status(env: &mut Env<'_>, read_errors: &[String]) -> io::Result<ExitCode> {
    for e in read_errors {
        writeln!(env.err, "tracekit analyze: error: {e}")?;
    }
    Ok(if read_errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// A request checked and its analyses chosen, ready to read its input ([`Plan::run_files`] or
/// [`Plan::run_live`]).
pub struct Plan<'r> {
    req: &'r Request,
    names: Vec<&'static str>,
    kernel_names: Vec<&'static str>,
    period_names: Vec<&'static str>,
    refresh: Option<i64>,
}

/// Checks `req`, answers what needs no trace (`--mi-version`, `--metadata`,
/// `--test-compatibility`) and the request's errors: `Err` with the exit status then.
pub fn plan<'r>(req: &'r Request, env: &mut Env<'_>) -> io::Result<Result<Plan<'r>, ExitCode>> {
    if req.mi_version {
        writeln!(env.out, "{}", crate::lami::mi_version_string())?;
        env.out.flush()?;
        return Ok(Err(ExitCode::SUCCESS));
    }
    let names = match commands::with_modes(&req.names, req.modes) {
        Ok(n) => n,
        Err(m) => return fail(env, req.mi, &m.to_string()).map(Err),
    };
    if req.test_compatibility {
        return match commands::check_compatibility(&req.paths) {
            Ok(()) => Ok(Err(ExitCode::SUCCESS)),
            Err(m) => fail(env, req.mi, &m.to_string()).map(Err),
        };
    }
    if req.metadata {
        // One LAMI metadata document per analysis, one per line.
        for n in &names {
            if let Some(m) = commands::metadata(n) {
                writeln!(env.out, "{}", metadata_json(m))?;
            }
        }
        env.out.flush()?;
        return Ok(Err(ExitCode::SUCCESS));
    }
    let refresh = match req.refresh.as_deref().map(parse_analyses_duration) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(m)) => return fail(env, req.mi, &format!("--refresh: {m}")).map(Err),
    };
    let (period_names, kernel_names): (Vec<&str>, Vec<&str>) = names
        .iter()
        .partition(|n| commands::period_cmd(n).is_some());
    if refresh.is_some() && !period_names.is_empty() {
        // As lttng-analyses: the refresh periods and user-defined periods are exclusive.
        return fail(
            env,
            req.mi,
            "cannot use --refresh with the period* analyses",
        )
        .map(Err);
    }
    Ok(Ok(Plan {
        req,
        names,
        kernel_names,
        period_names,
        refresh,
    }))
}

impl Plan<'_> {
    /// The common options of the request's analyses.
    fn common(&self) -> Common {
        Common {
            cpus: self.req.cpus.clone(),
            tids: self.req.tids.clone(),
            procnames: self.req.procnames.clone(),
            no_intersection: self.req.no_intersection,
            lttng_analyses_quirks: self.req.lttng_analyses_quirks,
            exit_after: true,
            ..Default::default()
        }
    }

    /// The analyses of the trace files of the request's paths.
    pub fn run_files(&self, env: &mut Env<'_>) -> io::Result<ExitCode> {
        let req = self.req;
        let traces = match ctf::open_all(&req.paths) {
            Ok(t) => t,
            Err(e) => return fail(env, req.mi, &e.to_string()),
        };
        let mut common = self.common();
        common.progress = if req.output_progress {
            Some(Arc::new(ProgressLines))
        } else if req.no_progress || self.refresh.is_some() && !req.mi {
            // (Text results printed during the read would break into the bar's line.)
            None
        } else {
            (env.progress_bar)(&traces)
        };
        if req.sync {
            common.time_map = Some((env.time_map)(&traces));
        }
        if req.begin.is_some() || req.end.is_some() || req.timerange.is_some() {
            let day = crate::driver::intersection(&traces)
                .map(|r| r.0)
                .unwrap_or(0);
            let (b, e) = match &req.timerange {
                Some(r) => {
                    let r = r.trim().trim_start_matches('[').trim_end_matches(']');
                    let Some((b, e)) = r.split_once(',') else {
                        return fail(env, req.mi, "--timerange: expected [BEGIN,END]");
                    };
                    (Some(b.to_string()), Some(e.to_string()))
                }
                None => (req.begin.clone(), req.end.clone()),
            };
            for (src, dst) in [(b, &mut common.begin), (e, &mut common.end)] {
                if let Some(s) = src {
                    match parse_analyses_time(&s, day) {
                        Ok(v) => *dst = Some(v),
                        Err(m) => return fail(env, req.mi, &m.to_string()),
                    }
                }
            }
        }
        // The kernel analyses (one pass), then the period ones (another pass, the period
        // engine reading the events themselves); with --mi, all tables in one document.
        let mut mi_tables: Vec<Table> = Vec::new();
        let mut read_errors = Vec::new();
        let several = self.names.len() > 1;
        if !self.kernel_names.is_empty() {
            let run = |common: &Common, opts: &Options, report: &mut dyn FnMut(_, _)| {
                crate::run_names(
                    &traces,
                    &self.kernel_names,
                    common,
                    opts,
                    self.refresh,
                    report,
                )
            };
            match self.run_kernel(env, run, &common, several, &mut read_errors)? {
                Ok(t) => mi_tables.extend(t),
                Err(code) => return Ok(code),
            }
        }
        if !self.period_names.is_empty() {
            match self.run_periods(env, &traces, &common, several, &mut read_errors)? {
                Ok(t) => mi_tables.extend(t),
                Err(code) => return Ok(code),
            }
        }
        if req.mi {
            write_mi(env.out, &mi_tables)?;
        }
        // The process ends right after: freeing every cell one by one (a large trace's
        // syscallstats has hundreds of thousands) would be wasted work.
        std::mem::forget(mi_tables);
        // Likewise the traces' layouts (one per event class: thousands for a kernel trace).
        std::mem::forget(traces);
        read_status(env, &read_errors)
    }

    /// The analyses of a live relay's sessions, each refresh period's results printed as the
    /// period ends (without `--refresh`, once the session is destroyed); `connect` connects
    /// to them.
    pub fn run_live<S: Source>(
        &self,
        env: &mut Env<'_>,
        connect: impl FnOnce() -> Result<S, Box<dyn std::error::Error>>,
    ) -> io::Result<ExitCode> {
        let req = self.req;
        if !self.period_names.is_empty() {
            let msg = "the period* analyses are for trace files, not live inputs";
            return fail(env, req.mi, msg);
        }
        if req.begin.is_some() || req.end.is_some() || req.timerange.is_some() {
            let msg = "--begin, --end and --timerange are for trace files, not live inputs";
            return fail(env, req.mi, msg);
        }
        let source = match connect() {
            Ok(s) => s,
            Err(e) => return fail(env, req.mi, &e.to_string()),
        };
        let common = Common {
            no_intersection: true,
            ..self.common()
        };
        let mut read_errors = Vec::new();
        let several = self.kernel_names.len() > 1;
        let run = |common: &Common, opts: &Options, report: &mut dyn FnMut(_, _)| {
            crate::run_names_on(
                &source,
                &self.kernel_names,
                common,
                opts,
                self.refresh,
                report,
            )
        };
        let tables = match self.run_kernel(env, run, &common, several, &mut read_errors)? {
            Ok(t) => t,
            Err(code) => return Ok(code),
        };
        if req.mi {
            write_mi(env.out, &tables)?;
        }
        read_status(env, &read_errors)
    }

    /// Runs the kernel analyses in one pass (`run` reads the input). Text: prints each
    /// period's results as the period ends. `--mi`: returns the tables (of each analysis in
    /// turn; with several refresh periods grouped by class as lttng-analyses does, then the
    /// summary table).
    fn run_kernel(
        &self,
        env: &mut Env<'_>,
        run: impl FnOnce(
            &Common,
            &Options,
            &mut dyn FnMut(Range, Vec<Vec<Table>>),
        ) -> Result<crate::Analysed, crate::Error>,
        common: &Common,
        headings: bool,
        read_errors: &mut Vec<String>,
    ) -> io::Result<Result<Vec<Table>, ExitCode>> {
        let req = self.req;
        let names = &self.kernel_names;
        let opts = Options {
            min: us_to_ns(req.min_us),
            max: us_to_ns(req.max_us),
            freq_uniform: (req.options.freq_uniform.is_some() || req.options.freq_series)
                .then(crate::stats::Uniform::default),
            ..req.options.clone()
        };
        let text_opts = crate::text::TextOptions {
            charts: !req.no_charts,
            width: req.width,
        };
        // --mi: per analysis, each period's tables.
        let mut periods: Vec<(Range, Vec<Vec<Table>>)> = Vec::new();
        let mut io_err: Option<io::Error> = None;
        let out = &mut *env.out;
        let mut report = |range: Range, tables: Vec<Vec<Table>>| {
            if req.mi {
                periods.push((range, tables));
                return;
            }
            if io_err.is_some() {
                return;
            }
            let mut text = String::new();
            for (i, t) in tables.iter().enumerate() {
                if headings {
                    text.push_str(&format!("== {} ==\n", names[i]));
                }
                if t.is_empty() {
                    text.push_str(&format!(
                        "Timerange: [{}, {}]\nNo results in the analysed range.\n",
                        crate::text::fmt_ts(range.begin),
                        crate::text::fmt_ts(range.end)
                    ));
                } else {
                    let Some(m) = commands::metadata(names[i]) else {
                        continue;
                    };
                    text.push_str(&crate::text::render_text(m, t, &text_opts));
                }
                text.push('\n');
            }
            if let Err(e) = emit(out, text.as_bytes()) {
                io_err = Some(e);
            }
        };
        match run(common, &opts, &mut report) {
            Ok(done) => {
                for w in &done.warnings {
                    writeln!(env.err, "tracekit analyze: warning: {w}")?;
                }
                read_errors.extend(done.errors);
            }
            Err(e) => return fail(env, req.mi, &e.to_string()).map(Err),
        }
        if let Some(e) = io_err {
            return Err(e);
        }
        Ok(Ok(crate::mi_tables(names, periods)))
    }

    /// Runs the period analyses on one pass of the period engine. Text: prints each
    /// command's report; `--mi`: returns the tables.
    fn run_periods(
        &self,
        env: &mut Env<'_>,
        traces: &[Arc<Trace>],
        common: &Common,
        headings: bool,
        read_errors: &mut Vec<String>,
    ) -> io::Result<Result<Vec<Table>, ExitCode>> {
        let req = self.req;
        let cmds: Vec<PeriodCmd> = self
            .period_names
            .iter()
            .filter_map(|n| commands::period_cmd(n))
            .collect();
        let p = &req.period;
        let opts = PeriodOptions {
            min_duration: p.min_duration.or(us_to_ns(req.min_us)),
            max_duration: p.max_duration.or(us_to_ns(req.max_us)),
            limit: req.options.limit,
            freq_resolution: req.options.freq_resolution,
            freq_uniform: req.options.freq_uniform.is_some() || req.options.freq_series,
            freq_series: req.options.freq_series,
            reports: cmds.clone(),
            ..p.clone()
        };
        let res = match crate::period::run(traces, common, &opts) {
            Ok(r) => r,
            Err(e) => return fail(env, req.mi, &e.to_string()).map(Err),
        };
        read_errors.extend(res.errors.iter().cloned());
        if req.mi {
            return Ok(Ok(cmds.iter().flat_map(|c| res.tables(*c)).collect()));
        }
        let mut text = String::new();
        for (c, name) in cmds.iter().zip(&self.period_names) {
            if headings {
                text.push_str(&format!("== {name} ==\n"));
            }
            text.push_str(&res.text(*c));
        }
        emit(env.out, text.as_bytes())?;
        Ok(Ok(Vec::new()))
    }
}

/// What [`make_links`] did.
#[derive(Debug, Default)]
pub struct Links {
    /// Links made.
    pub made: usize,
    /// Links to the executable already there.
    pub kept: usize,
    /// Links elsewhere replaced (`force`).
    pub replaced: usize,
    /// The names that could not be made, each with why.
    pub failed: Vec<String>,
}

/// Makes `lttng-NAME` and `lttng-NAME-mi` symbolic links to `exe` in `dir` (created if
/// missing) for every analysis: run by such a name, tracekit is `tracekit analyze NAME
/// [--mi]` ([`lttng_command_args`]). An existing file is left alone unless it is a link and
/// `force` is given; a link to `exe` already is kept.
pub fn make_links(exe: &std::path::Path, dir: &std::path::Path, force: bool) -> io::Result<Links> {
    std::fs::create_dir_all(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("{}: cannot create the directory: {e}", dir.display()),
        )
    })?;
    let mut links = Links::default();
    for name in commands::analyses() {
        for link in [format!("lttng-{name}"), format!("lttng-{name}-mi")] {
            match make_link(exe, &dir.join(&link), force) {
                Ok(Made::New) => links.made += 1,
                Ok(Made::Kept) => links.kept += 1,
                Ok(Made::Replaced) => links.replaced += 1,
                Err(m) => links.failed.push(m),
            }
        }
    }
    Ok(links)
}

/// What became of one link.
enum Made {
    New,
    Kept,
    Replaced,
}

/// Makes `path` a symbolic link to `exe` (see [`make_links`]).
fn make_link(exe: &std::path::Path, path: &std::path::Path, force: bool) -> Result<Made, String> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if !m.file_type().is_symlink() => {
            return Err(format!("{shown}: exists and is not a link: left as it is"));
        }
        Ok(_) => {
            let target = std::fs::read_link(path).map_err(|e| format!("{shown}: {e}"))?;
            if target == exe {
                return Ok(Made::Kept);
            }
            if !force {
                return Err(format!(
                    "{shown}: a link to {} already (--force replaces it)",
                    target.display()
                ));
            }
            std::fs::remove_file(path).map_err(|e| format!("{shown}: {e}"))?;
            std::os::unix::fs::symlink(exe, path).map_err(|e| format!("{shown}: {e}"))?;
            return Ok(Made::Replaced);
        }
    }
    std::os::unix::fs::symlink(exe, path).map_err(|e| format!("{shown}: {e}"))?;
    Ok(Made::New)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lttng_command_names() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            lttng_command_args(&args(&["/usr/bin/lttng-cputop-mi", "--limit", "3"])),
            Some(args(&[
                "tracekit", "analyze", "cputop", "--mi", "--limit", "3"
            ]))
        );
        assert_eq!(
            lttng_command_args(&args(&["lttng-irqstats", "t"])),
            Some(args(&["tracekit", "analyze", "irqstats", "t"]))
        );
        assert_eq!(lttng_command_args(&args(&["tracekit", "print"])), None);
        assert_eq!(lttng_command_args(&[]), None);
    }

    #[test]
    fn microseconds() {
        assert_eq!(us_to_ns(Some(1.5)), Some(1500));
        assert_eq!(us_to_ns(Some(0.0004)), Some(0));
        assert_eq!(us_to_ns(None), None);
    }

    /// Errors of the request itself are LAMI error documents with `--mi`, messages otherwise,
    /// and the status is 1; `--mi-version` and `--metadata` need no trace.
    #[test]
    fn request_errors_and_answers() {
        let run = |req: &Request| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let mut env = Env {
                out: &mut out,
                err: &mut err,
                progress_bar: &|_| None,
                time_map: &|_| unreachable!("no --sync"),
            };
            let code = plan(req, &mut env).unwrap().err();
            (
                code,
                String::from_utf8(out).unwrap(),
                String::from_utf8(err).unwrap(),
            )
        };
        let mut req = Request {
            names: vec!["periodlog"],
            refresh: Some("1s".into()),
            ..Default::default()
        };
        let (code, out, err) = run(&req);
        assert_eq!(code, Some(ExitCode::from(1)));
        assert_eq!(out, "");
        assert!(err.contains("cannot use --refresh"), "{err}");
        req.mi = true;
        let (_, out, err) = run(&req);
        assert_eq!(err, "");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(doc["error-message"].as_str().unwrap().contains("--refresh"));
        req.refresh = Some("soon".into());
        let (_, out, _) = run(&req);
        assert!(out.contains("--refresh: "), "{out}");
        let req = Request {
            names: vec!["cputop", "irqlog"],
            metadata: true,
            ..Default::default()
        };
        let (code, out, _) = run(&req);
        assert_eq!(code, Some(ExitCode::SUCCESS));
        assert_eq!(out.lines().count(), 2);
        let ok = Request {
            names: vec!["cputop"],
            ..Default::default()
        };
        assert_eq!(run(&ok).0, None);
    }

    #[test]
    fn links_made_kept_replaced_and_files_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (exe, other) = (dir.path().join("tracekit"), dir.path().join("other"));
        let links = dir.path().join("bin");
        let n = 2 * commands::analyses().count();
        let l = make_links(&exe, &links, false).unwrap();
        assert_eq!((l.made, l.kept, l.replaced, l.failed.len()), (n, 0, 0, 0));
        assert_eq!(
            std::fs::read_link(links.join("lttng-cputop-mi")).unwrap(),
            exe
        );
        let l = make_links(&exe, &links, false).unwrap();
        assert_eq!((l.made, l.kept), (0, n));
        std::fs::remove_file(links.join("lttng-cputop")).unwrap();
        std::fs::write(links.join("lttng-cputop"), "a file").unwrap();
        let l = make_links(&other, &links, false).unwrap();
        assert_eq!(l.failed.len(), n);
        assert!(l.failed.iter().any(|m| m.contains("is not a link")));
        let l = make_links(&other, &links, true).unwrap();
        assert_eq!((l.replaced, l.failed.len()), (n - 1, 1));
    }
}
