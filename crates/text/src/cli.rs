//! `tracekit print` and `tracekit count` runs, from the parsed command line to their output:
//! the style the options ask for, clock offsets, the output file, live printing, `-o dummy`
//! and `-o ctf-metadata`, the count's table. The binary parses the arguments into a
//! [`PrintRequest`].

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::Trace;
use pipeline::Source;

use crate::progress::Progress;
use crate::{ColorChoice, Counts, Fields, Names, PrintOptions, Style, StyleError, TextSink};

/// Errors of a `print` run (what it could print was printed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `--names` or `--fields` does not parse.
    #[error(transparent)]
    Style(#[from] StyleError),
    /// The traces could not be opened.
    #[error(transparent)]
    Open(#[from] ctf::Error),
    /// Printing failed (a bad `--begin`/`--end`, a write error).
    #[error(transparent)]
    Print(#[from] crate::Error),
    /// The output file could not be created.
    #[error("cannot create {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Options that do not go together.
    #[error("{0}")]
    Options(&'static str),
    /// The metadata of `-o ctf-metadata` could not be read.
    #[error("{path}: {why}")]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The live source could not be connected.
    #[error("{0}")]
    Live(String),
}

/// Makes `--sync`'s time line for these traces.
pub type TimeMapFn = dyn Fn(&[Arc<Trace>]) -> Arc<dyn TimeMap>;

/// `print`'s output formats (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// babeltrace2's text.
    #[default]
    Text,
    /// Read and decode everything, print nothing but errors.
    Dummy,
    /// The metadata text of one trace.
    CtfMetadata,
}

/// What `tracekit print` was asked (its options, parsed; see its `--help`).
#[derive(Debug, Clone, Default)]
pub struct PrintRequest {
    /// Trace directories (or live URLs: see [`PrintRequest::run_live`]).
    pub paths: Vec<PathBuf>,
    /// `--begin` as given.
    pub begin: Option<String>,
    /// `--end` as given.
    pub end: Option<String>,
    /// `--clock-gmt`.
    pub gmt: bool,
    /// `--names` as given.
    pub names: Option<String>,
    /// `--fields` as given.
    pub fields: Option<String>,
    /// `--no-delta`.
    pub no_delta: bool,
    /// `--clock-cycles`.
    pub clock_cycles: bool,
    /// `--clock-seconds`.
    pub clock_seconds: bool,
    /// `--clock-date`.
    pub clock_date: bool,
    /// `--clock-offset`, s.
    pub clock_offset: Option<i64>,
    /// `--clock-offset-ns`.
    pub clock_offset_ns: Option<i64>,
    /// `--color`.
    pub color: ColorChoice,
    /// `--output-format`.
    pub format: Format,
    /// `--output`: a file instead of the standard output.
    pub output: Option<PathBuf>,
}

impl PrintRequest {
    /// The text style the options ask for, colours if `colors_supported`.
    pub fn style(&self, colors_supported: bool) -> Result<Style, StyleError> {
        let list = |s: &Option<String>| s.as_deref().unwrap_or("").to_string();
        Ok(Style {
            names: Names::parse(&list(&self.names))?,
            fields: Fields::parse(&list(&self.fields))?,
            delta: !self.no_delta,
            cycles: self.clock_cycles,
            seconds: self.clock_seconds,
            date: self.clock_date,
            colors: self
                .color
                .event_colors(colors_supported, self.output.is_none()),
        })
    }

    /// Prints the traces of the request's paths (`time_map` for `--sync`); `-o dummy` and
    /// `-o ctf-metadata` too. The exit status is 1 when some events could not be read.
    pub fn run_files(&self, time_map: Option<&TimeMapFn>) -> Result<ExitCode, Error> {
        if self.format == Format::CtfMetadata {
            return self.ctf_metadata();
        }
        if !self.gmt {
            // The local time zone's first look-up reads the whole zoneinfo directory
            // (jiff's name index): done on a thread of its own while the traces open, it is
            // no longer a serial step before the printing threads start. jiff keeps it once
            // made (a `OnceLock`): the printer's own look-up waits for it or finds it.
            // Without a thread (none to be had), the printer looks it up itself.
            let _ = std::thread::Builder::new().spawn(crate::timefmt::local_time_zone_warm_up);
        }
        let colors_supported = crate::colors_supported();
        let style = self.style(colors_supported)?;
        let mut traces = ctf::open_all(&self.paths)?;
        if self.clock_offset.is_some() || self.clock_offset_ns.is_some() {
            let (s, ns) = (
                self.clock_offset.unwrap_or(0),
                self.clock_offset_ns.unwrap_or(0),
            );
            for t in &mut traces {
                // Just opened: no one else holds the trace.
                if let Some(t) = Arc::get_mut(t) {
                    for c in &mut Arc::make_mut(&mut t.class).clocks {
                        c.shift_offset(s, ns);
                    }
                }
            }
        }
        for t in &traces {
            for e in &t.errors {
                eprintln!("tracekit: warning: {e}");
            }
        }
        if self.format == Format::Dummy {
            return Ok(dummy(traces));
        }
        let progress = Arc::new(Progress::for_traces(&traces));
        let options = PrintOptions {
            gmt: self.gmt,
            begin: self.begin.clone(),
            end: self.end.clone(),
            time_map: time_map.map(|m| m(&traces)),
            // Only a shown line is told: the read then finds the streams' extent too.
            progress: progress.shown().then(|| progress.clone() as _),
            style,
            warning_colors: colors_supported,
        };
        let outcome = match &self.output {
            None => {
                // Straight to the descriptor (a duplicate of it): the printer gathers its
                // output itself, and `Stdout`'s line buffering would look for the last newline
                // of each vectored write, then go through a second buffer. Whatever is in
                // `Stdout`'s buffer goes first.
                let stdout = io::stdout();
                let _ = stdout.lock().flush();
                match stdout.as_fd().try_clone_to_owned() {
                    Ok(fd) => write_text(&traces, &options, std::fs::File::from(fd))?,
                    Err(_) => write_text(&traces, &options, stdout.lock())?,
                }
            }
            Some(path) => write_text(&traces, &options, create(path)?)?,
        };
        progress.finish();
        // babeltrace2 ends by resetting a colour terminal, whatever it printed.
        if colors_supported {
            print!("\x1b[0m");
            let _ = io::stdout().flush();
            eprint!("\x1b[0m");
        }
        // The process ends right after: the layouts need not be freed one by one.
        std::mem::forget(traces);
        Ok(status(outcome.errors == 0))
    }

    /// Prints the events of a live session as they come; `connect` connects to it.
    pub fn run_live<S: Source, E: std::fmt::Display>(
        &self,
        connect: impl FnOnce() -> Result<S, E>,
    ) -> Result<ExitCode, Error> {
        let colors_supported = crate::colors_supported();
        let style = self.style(colors_supported)?;
        if self.begin.is_some()
            || self.end.is_some()
            || self.clock_offset.is_some()
            || self.clock_offset_ns.is_some()
            || self.format != Format::Text
        {
            return Err(Error::Options(
                "--begin, --end, --clock-offset and --output-format are for trace files, not \
                 live inputs",
            ));
        }
        let source = connect().map_err(|e| Error::Live(e.to_string()))?;
        let options = PrintOptions {
            gmt: self.gmt,
            style,
            warning_colors: colors_supported,
            ..Default::default()
        };
        let outcome = match &self.output {
            None => print_source(&source, &options, &mut io::stdout().lock())?,
            Some(path) => print_source(&source, &options, &mut create(path)?)?,
        };
        Ok(status(outcome.errors == 0))
    }

    /// `--output-format=ctf-metadata`: the metadata text of the trace directory PATH (packets
    /// unwrapped), then a new line, as babeltrace2 prints it.
    fn ctf_metadata(&self) -> Result<ExitCode, Error> {
        let [dir] = self.paths.as_slice() else {
            return Err(Error::Options(
                "-o ctf-metadata takes exactly one trace directory",
            ));
        };
        let path = dir.join("metadata");
        let bad = |why: String| Error::Metadata {
            path: path.clone(),
            why,
        };
        let bytes = std::fs::read(&path).map_err(|e| bad(e.to_string()))?;
        let (_, text) = ctf::metadata::metadata_text(&bytes).map_err(|e| bad(e.to_string()))?;
        if text.trim().is_empty() {
            return Err(bad("the metadata holds no text".into()));
        }
        let mut out: Box<dyn Write> = match &self.output {
            Some(p) => {
                Box::new(
                    ctf::private_files::create_file(p).map_err(|e| Error::Metadata {
                        path: p.clone(),
                        why: e.to_string(),
                    })?,
                )
            }
            None => Box::new(io::stdout().lock()),
        };
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(ExitCode::SUCCESS)
    }
}

/// 0 or 1.
fn status(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Creates the output file, 0600 ([`ctf::private_files`]).
fn create(path: &Path) -> Result<std::fs::File, Error> {
    ctf::private_files::create_file(path).map_err(|source| Error::Create {
        path: path.to_owned(),
        source,
    })
}

/// The events of `source` printed to `out` as they come.
fn print_source<S: Source, W: Write>(
    source: &S,
    options: &PrintOptions,
    out: &mut W,
) -> Result<crate::Outcome, Error> {
    let mut err = io::stderr().lock();
    let mut sink = TextSink::new(source.traces(), options, out, &mut err);
    source.run(&mut sink);
    Ok(sink.finish()?)
}

/// Prints `traces` to `out` (unbuffered: [`crate::print`] gathers its output and writes it
/// in large vectored writes); a closed output ends printing quietly.
fn write_text<W: Write>(
    traces: &[Arc<Trace>],
    options: &PrintOptions,
    mut out: W,
) -> Result<crate::Outcome, Error> {
    let outcome = crate::print(traces, options, &mut out, &mut io::stderr().lock())?;
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(outcome)
}

/// `--output-format=dummy`: every event decoded, nothing printed but the readers' warnings
/// and decoding errors (babeltrace2's dummy sink prints nothing, loss warnings included).
fn dummy(traces: Vec<Arc<Trace>>) -> ExitCode {
    let c = crate::count_traces(&traces, &|_| {});
    std::mem::forget(traces);
    report_diagnostics(&c);
    status(c.errors.is_empty())
}

/// Writes a count's warnings and decoding errors to the standard error.
pub fn report_diagnostics(c: &Counts) {
    for w in &c.warnings {
        eprintln!("tracekit: warning: {w}");
    }
    for e in &c.errors {
        eprintln!("tracekit: error: {e}");
    }
}

/// `tracekit count PATHS`: every event decoded (a progress line on a terminal), the counts
/// printed as a table or (`json`) a JSON document. The exit status is 1 when some events
/// could not be read.
pub fn count(paths: &[PathBuf], json: bool) -> Result<ExitCode, Error> {
    let traces = ctf::open_all(paths)?;
    let progress = Progress::for_traces(&traces);
    let c = crate::count_traces(&traces, &|n| progress.add(n));
    progress.finish();
    // The process ends right after: freeing the layouts of a kernel trace's event
    // classes one by one is a sizeable part of a count (as `analyze` does).
    std::mem::forget(traces);
    report_diagnostics(&c);
    let text = if json {
        format!("{}\n", count_json(&c))
    } else {
        count_table(&c)
    };
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(status(c.errors.is_empty()))
}

/// A count as `tracekit count --json` prints it.
pub fn count_json(c: &Counts) -> String {
    let v = serde_json::json!({
        "events": c.events,
        "discarded": c.discarded,
        "lost_packets": c.lost_packets,
        "classes": c.classes,
        "begin_ns": c.begin_ns,
        "end_ns": c.end_ns,
        "errors": c.errors,
    });
    serde_json::to_string_pretty(&v).expect("JSON of counts")
}

/// A count as `tracekit count` prints it: a row per class, then the totals and time range.
pub fn count_table(c: &Counts) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    // The widest of the class names and the row labels below them.
    let labels = ["total", "discarded", "lost packets"];
    let width = c
        .classes
        .keys()
        .map(|k| k.chars().count())
        .chain(labels.iter().map(|l| l.len()))
        .max()
        .unwrap_or(0);
    for (name, n) in &c.classes {
        let _ = writeln!(s, "{name:<width$}  {n:>12}");
    }
    let _ = writeln!(s, "{:-<w$}", "", w = width + 14);
    for (label, n) in labels.iter().zip([c.events, c.discarded, c.lost_packets]) {
        let _ = writeln!(s, "{label:<width$}  {n:>12}");
    }
    if let (Some(b), Some(e)) = (c.begin_ns, c.end_ns) {
        let _ = writeln!(
            s,
            "time range: {b} .. {e} ns ({}.{:09} s)",
            (e - b) / 1_000_000_000,
            (e - b) % 1_000_000_000
        );
    }
    s
}

/// One line about `trace` (every event decoded): its host, events, CPUs (streams), time span
/// and most frequent event classes, as `tracekit demo` lists the traces.
pub fn trace_line(t: &Arc<Trace>) -> String {
    let host = t.hostname().unwrap_or("?");
    let c = crate::count_traces(std::slice::from_ref(t), &|_| {});
    let mut top: Vec<(&String, &u64)> = c.classes.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let dur = match (c.begin_ns, c.end_ns) {
        (Some(a), Some(b)) => format!("{:.3} s", (b - a) as f64 / 1e9),
        _ => "?".into(),
    };
    format!(
        "{host:<10} {:>7} events on {} CPUs over {dur}; most frequent: {}",
        c.events,
        t.streams.len(),
        top.iter()
            .take(4)
            .map(|(n, c)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_table_aligns_short_names_with_the_labels() {
        let mut c = Counts {
            events: 3,
            lost_packets: 1,
            begin_ns: Some(1_000_000_000),
            end_ns: Some(2_500_000_001),
            ..Default::default()
        };
        c.classes.insert("ab".into(), 3);
        let t = count_table(&c);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], format!("ab{}{:>12}", " ".repeat(12), 3));
        assert_eq!(lines[1], "-".repeat(26));
        assert!(lines[4].starts_with("lost packets  "));
        assert!(lines.iter().all(|l| l.len() == 26 || l.starts_with("time")));
        assert_eq!(
            lines[5],
            "time range: 1000000000 .. 2500000001 ns (1.500000001 s)"
        );
        let j: serde_json::Value = serde_json::from_str(&count_json(&c)).unwrap();
        assert_eq!(
            (j["events"].as_u64(), j["classes"]["ab"].as_u64()),
            (Some(3), Some(3))
        );
    }

    #[test]
    fn style_of_the_options() {
        let req = PrintRequest {
            names: Some("all".into()),
            no_delta: true,
            ..Default::default()
        };
        let s = req.style(false).unwrap();
        assert!(!s.delta);
        assert!(PrintRequest {
            fields: Some("nonsense".into()),
            ..Default::default()
        }
        .style(false)
        .is_err());
    }
}
