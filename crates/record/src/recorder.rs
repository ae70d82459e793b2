//! The recording loop: set up a private tracefs instance, read the per-CPU raw pipes, convert
//! and write the CTF trace, account for losses, and clean up on every exit path.

use crate::bpf::{ArgProbe, NetProbe, StackProbe};
use crate::convert::{select, Converter, KnownEvent, DEFAULT_GROUPS};
use crate::filter::EventFilter;
use crate::format::PageLayout;
use crate::netheader::{Dir, HeaderStore, MergeStats};
use crate::page::decode_page;
use crate::stacks::{StackRecord, StackThresholds};
use crate::statedump::ProcSnapshot;
use crate::tracefs::{self, signals, Instance, RawPipe, Tracefs};
use crate::Error;
use ctf::ir::{EnvValue, TraceClass};
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use kernel::lttng::{HostInfo, NetLayout};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to record and where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Trace directory (written as `.NAME.partial` next to it, renamed at the end). In flight
    /// recorder mode, the directory that receives `snapshot-N/kernel` traces.
    pub output: PathBuf,
    /// Stop after this long (otherwise on SIGINT/SIGTERM).
    pub duration: Option<Duration>,
    /// Flight-recorder mode: ring buffers of this many bytes in total, overwritten; a
    /// snapshot is written on each SIGUSR1.
    pub flight_recorder: Option<u64>,
    /// Event groups or names; empty = the default groups.
    pub events: Vec<String>,
    /// Record only these processes (and their children).
    pub pids: Vec<i32>,
    /// Added to every timestamp (simulates another host's clock).
    pub clock_offset_ns: i64,
    /// `hostname` of the trace environment (default: this host's).
    pub hostname: Option<String>,
    /// Per-CPU buffer size in KiB (streaming mode).
    pub buffer_size_kb: u64,
    /// tracefs mount point (default: found automatically).
    pub tracefs: Option<PathBuf>,
    /// How long to sleep when every CPU buffer had only a partial page.
    pub poll: Duration,
    /// Print progress and the summary to stderr.
    pub verbose: bool,
    /// Add the IP/TCP headers to the net events with the eBPF helper (feature `bpf`; streaming
    /// mode). When it cannot start, the net events are recorded without headers.
    pub net_headers: bool,
    /// Record only the net events of these network devices (empty: all).
    pub netdevs: Vec<String>,
    /// Flight-recorder mode: also write a snapshot when one of these latency rules fires
    /// (the events are then read and decoded live, kept in memory up to `flight_recorder`
    /// bytes).
    pub snapshot_on: Vec<crate::trigger::Rule>,
    /// At most one rule-triggered snapshot per this long.
    pub snapshot_debounce: Duration,
    /// Write the `lttng_statedump_file_descriptor` events. Their LTTng 2.13 layout
    /// (`file_table_address` instead of `pid`) makes lttng-analyses 0.6.1 fail.
    pub statedump_fds: bool,
    /// Streaming mode: after each write-out of the open packets (every second), set to the
    /// time (ns since the Unix epoch, on the trace's time line) up to which every event is in
    /// the files, so that a reader can follow the trace while it is written
    /// (`pipeline::follow`).
    pub on_disk: Option<Arc<AtomicI64>>,
    /// Also stream the trace to this relay as it is recorded (streaming mode), as session
    /// `session_name` (default: the output directory's name).
    pub relay: Option<crate::relay::RelayTarget>,
    /// The relay session's name.
    pub session_name: Option<String>,
    /// With a relay: how often the open packets are sent and idle streams said quiet (LTTng's
    /// live timer); zero makes a non-live relay session.
    pub live_timer: Duration,
    /// `--filter`: LTTng filter expressions, evaluated in the kernel (tracefs filters); an
    /// event gets every filter whose selection includes it, all of which must admit it.
    pub filters: Vec<EventFilter>,
    /// `--syscall`: record only these system calls (names, star-globs allowed).
    pub syscalls: Vec<String>,
    /// Keep the recorder's own system calls (left out by default, by a kernel filter).
    pub trace_self: bool,
    /// `--stacks`: take kernel (and user) stacks where these latency rules fire, the
    /// thresholds checked in the kernel by the eBPF stacks helper (streaming mode).
    pub stacks: Vec<crate::trigger::Rule>,
    /// With `stacks`: also walk the user stacks (frame pointers).
    pub user_stacks: bool,
    /// Dynamic probes: kprobes, kretprobe pairs, uprobes.
    pub probes: Vec<crate::probes::ProbeSpec>,
    /// Put the system calls' string arguments (file names…) in their entry events, read by
    /// the eBPF helper (feature `bpf`; streaming mode). When it cannot start they stay empty.
    pub syscall_strings: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            output: PathBuf::from("kernel"),
            duration: None,
            flight_recorder: None,
            events: Vec::new(),
            pids: Vec::new(),
            clock_offset_ns: 0,
            hostname: None,
            buffer_size_kb: 8192,
            tracefs: None,
            poll: Duration::from_millis(20),
            verbose: false,
            net_headers: true,
            netdevs: Vec::new(),
            snapshot_on: Vec::new(),
            snapshot_debounce: Duration::from_secs(1),
            statedump_fds: true,
            on_disk: None,
            relay: None,
            session_name: None,
            live_timer: Duration::from_secs(1),
            filters: Vec::new(),
            syscalls: Vec::new(),
            trace_self: false,
            stacks: Vec::new(),
            user_stacks: true,
            syscall_strings: true,
            probes: Vec::new(),
        }
    }
}

/// What a recording produced.
#[derive(Debug, Clone, Default)]
pub struct RecordSummary {
    /// Trace directories written (one, or one per flight-recorder snapshot).
    pub traces: Vec<PathBuf>,
    /// Events written (all traces).
    pub events: u64,
    /// Events written per CPU.
    pub per_cpu: Vec<u64>,
    /// `(LTTng event name, count)`, most frequent first.
    pub per_class: Vec<(String, u64)>,
    /// Events lost in the kernel ring buffers (from the per-CPU `stats` files).
    pub discarded: u64,
    /// Pages flagged as following lost events.
    pub missed_pages: u64,
    /// The lost-event counts those pages stored.
    pub missed_stored: u64,
    /// `lttng_statedump_*` events written.
    pub statedump_events: u64,
    /// System calls with no name in the table (`syscall_*_unknown`).
    pub unknown_syscalls: u64,
    /// Records too short for their format (left out).
    pub malformed: u64,
    /// Context switches rebuilt: the kernel did not trace them (see README's recorder
    /// section).
    pub rebuilt_switches: u64,
    /// Bytes of trace written.
    pub bytes: u64,
    /// Recording time (from tracing on to the end of the trace).
    pub elapsed: Duration,
    /// The eBPF header merge, when it ran.
    pub net_headers: Option<MergeStats>,
    /// Why the net events have no headers (net events recorded, helper not running).
    pub net_headers_off: Option<String>,
    /// Stack events written (`--stacks`).
    pub stacks: u64,
    /// Stacks the eBPF helper could not hand over (its ring buffer was full).
    pub stacks_lost: u64,
    /// Kernel symbols written with them.
    pub stack_symbols: u64,
    /// Why the stacks have no symbols, when they have none.
    pub stack_symbols_off: Option<String>,
    /// System-call string arguments put in events (eBPF helper), when it ran.
    pub syscall_strings: Option<u64>,
    /// Why the system calls' string arguments are empty (syscalls recorded, helper not
    /// running).
    pub syscall_strings_off: Option<String>,
}

/// The LTTng trace environment and trace class for this host.
fn build_trace_class(opts: &RecordOptions, name: &str) -> TraceClass {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let (mono, real) = tracefs::clocks_ns();
    let host = HostInfo {
        hostname: opts
            .hostname
            .clone()
            .unwrap_or_else(|| read("/proc/sys/kernel/hostname")),
        trace_uuid: tracefs::random16(),
        clock_uuid: tracefs::random16(),
        clock_offset_ns: real - mono as i128,
        creation: datetime_utc((real / 1_000_000_000) as i64),
        trace_name: name.to_string(),
        kernel_release: read("/proc/sys/kernel/osrelease"),
    };
    let mut tc =
        kernel::lttng::trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let version = read("/proc/sys/kernel/version");
    for (k, v) in &mut tc.env {
        if k == "kernel_version" {
            *v = EnvValue::Str(version.clone());
        }
    }
    tc
}

/// `YYYYMMDDTHHMMSS+0000` for a Unix time.
pub(crate) fn datetime_utc(secs: i64) -> String {
    let (y, m, d) = pipeline::time::civil_from_days(secs.div_euclid(86400));
    let rem = secs.rem_euclid(86400);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}+0000",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Per-trace conversion state: the writer, the converter and the counters.
/// How often the open packets are written out while recording.
const FLUSH_PERIOD: Duration = Duration::from_secs(1);

struct Sink {
    writer: TraceWriter,
    conv: Converter,
    offset: i64,
    last_ts: Vec<u64>,
    per_class: Vec<u64>,
    vals: Vec<Value>,
    missed_pages: u64,
    missed_stored: u64,
    statedump_events: u64,
    net: Option<NetMerge>,
    stacks: Option<StackMerge>,
    /// Rebuilds the context switches the kernel did not trace.
    switches: Option<crate::missing_switch::MissingSwitches>,
    statedump_fds: bool,
    /// The trace clock's offset (ns): a written time plus it is on the read's time line.
    clock_ns: i128,
}

/// The eBPF stacks helper and its records waiting for their place in the CPU streams.
struct StackMerge {
    /// The helper, when records are taken from it as the pages are read (streaming mode); a
    /// flight recorder hands its snapshot the records it kept.
    probe: Option<StackProbe>,
    /// Per CPU, by time.
    pending: Vec<std::collections::VecDeque<StackRecord>>,
    npending: usize,
    /// Kernel addresses seen (for the symbol table).
    kaddrs: std::collections::HashSet<u64>,
    written: u64,
    vals: Vec<Value>,
    symbols: Arc<kernel::stacks::Symbols>,
}

impl StackMerge {
    /// Takes the records the helper has ready.
    fn poll(&mut self) {
        let (pending, npending, kaddrs) = (&mut self.pending, &mut self.npending, &mut self.kaddrs);
        let syms = &self.symbols;
        let Some(probe) = &mut self.probe else {
            return;
        };
        probe.poll(|b| {
            let Some(mut r) = StackRecord::parse(b) else {
                return;
            };
            crate::stacks::trim_tracing_frames(&mut r.kstack, syms);
            kaddrs.extend(r.kstack.iter().copied());
            let c = (r.cpu as usize).min(pending.len().saturating_sub(1));
            let q = &mut pending[c];
            // The ring buffer is shared by the CPUs: keep each CPU's queue in time order.
            let at = q.partition_point(|x| x.ts <= r.ts);
            q.insert(at, r);
            *npending += 1;
        });
    }

    /// A merge of records kept by a flight recorder (no helper to poll).
    fn kept(
        records: Vec<StackRecord>,
        nstreams: u32,
        symbols: Arc<kernel::stacks::Symbols>,
    ) -> Self {
        let mut pending: Vec<std::collections::VecDeque<StackRecord>> =
            (0..nstreams.max(1)).map(|_| Default::default()).collect();
        let mut kaddrs = std::collections::HashSet::new();
        let npending = records.len();
        for r in records {
            kaddrs.extend(r.kstack.iter().copied());
            let c = (r.cpu as usize).min(pending.len() - 1);
            pending[c].push_back(r);
        }
        for q in &mut pending {
            q.make_contiguous().sort_by_key(|r| r.ts);
        }
        StackMerge {
            probe: None,
            pending,
            npending,
            kaddrs,
            written: 0,
            vals: Vec::new(),
            symbols,
        }
    }
}

/// The eBPF helper and the records waiting for their ftrace event.
struct NetMerge {
    probe: NetProbe,
    store: HeaderStore,
}

impl NetMerge {
    /// Fills the header fields (3, 4) of a net event payload, if its record is there.
    fn fill(&mut self, id: u64, raw_ts: u64, vals: &mut [Value]) {
        let dir = if id == kernel::lttng::ev::NET_OUT {
            Dir::Tx
        } else {
            Dir::Rx
        };
        let (Some(skb), Some(len)) = (vals[0].as_int(), vals[1].as_int()) else {
            return;
        };
        let (skb, len) = (skb as u64, len as u32);
        let mut hit = self.store.take(dir, skb, len, raw_ts);
        if hit.is_none() {
            // Both probes run in the same tracepoint call: the record may just not have been
            // read yet.
            self.probe.poll(&mut self.store);
            hit = self.store.take(dir, skb, len, raw_ts);
        }
        match hit {
            Some((t, h)) => {
                vals[3] = t;
                vals[4] = h;
                self.store.stats.matched += 1;
            }
            None => self.store.stats.unmatched += 1,
        }
    }
}

impl Sink {
    fn ts(&self, raw: u64) -> u64 {
        raw.saturating_add_signed(self.offset)
    }

    fn count(&mut self, id: u64) {
        let i = id as usize;
        if self.per_class.len() <= i {
            self.per_class.resize(i + 1, 0);
        }
        self.per_class[i] += 1;
    }

    fn statedump(&mut self, snap: &ProcSnapshot, raw_ts: u64) -> Result<(), Error> {
        for t in &snap.threads {
            self.conv.add_tgid(t.tid, t.pid);
        }
        let ts = self.ts(raw_ts).max(self.last_ts[0]);
        // The statedump opens the session: every CPU's stream starts here, as in LTTng.
        self.writer.set_session_start(ts);
        for (id, vals) in snap.events() {
            if !self.statedump_fds && id == kernel::lttng::ev::STATEDUMP_FD {
                continue;
            }
            self.writer.write_event(0, id, ts, &vals)?;
            self.count(id);
            self.statedump_events += 1;
        }
        self.last_ts[0] = ts;
        Ok(())
    }

    /// Writes the stack records of `cpu` up to raw time `upto` (all CPUs: `None`).
    fn flush_stacks(&mut self, cpu: Option<u32>, upto: u64) -> Result<(), Error> {
        let Some(sm) = &mut self.stacks else {
            return Ok(());
        };
        let cpus: Vec<usize> = match cpu {
            Some(c) => vec![c as usize],
            None => (0..sm.pending.len()).collect(),
        };
        for c in cpus {
            let Some(q) = sm.pending.get_mut(c) else {
                continue;
            };
            while q.front().is_some_and(|r| r.ts <= upto) {
                let Some(r) = q.pop_front() else { break };
                sm.npending -= 1;
                r.payload(self.offset, &mut sm.vals);
                let t = r.ts.saturating_add_signed(self.offset).max(self.last_ts[c]);
                self.last_ts[c] = t;
                self.writer.write_event(c as u32, r.class, t, &sm.vals)?;
                sm.written += 1;
                let i = r.class as usize;
                if self.per_class.len() <= i {
                    self.per_class.resize(i + 1, 0);
                }
                self.per_class[i] += 1;
            }
        }
        Ok(())
    }

    /// Writes the remaining stack records and the symbols their kernel addresses fall in.
    fn finish_stacks(&mut self) -> Result<u64, Error> {
        let Some(sm) = &mut self.stacks else {
            return Ok(0);
        };
        sm.poll();
        self.flush_stacks(None, u64::MAX)?;
        let Some(sm) = &mut self.stacks else {
            return Ok(0);
        };
        let subset = sm.symbols.subset(sm.kaddrs.iter());
        // After every event: a reader has the table once it has read the trace.
        let t = self.last_ts.iter().copied().max().unwrap_or(0);
        for s in &subset {
            let vals = crate::stacks::ksym_payload(s);
            self.writer
                .write_event(0, kernel::lttng::stacks::ev::KSYM, t, &vals)?;
            self.count(kernel::lttng::stacks::ev::KSYM);
        }
        self.last_ts[0] = t;
        Ok(subset.len() as u64)
    }

    /// Context switches rebuilt so far.
    fn rebuilt_switches(&self) -> u64 {
        self.switches.as_ref().map_or(0, |i| i.rebuilt())
    }

    /// Converts and writes one ftrace record of CPU `cpu`, stamped `ts` (ftrace time).
    #[inline]
    fn record(&mut self, cpu: u32, ts: u64, rec: &[u8]) -> Result<(), Error> {
        self.conv.set_time(ts);
        let Some(id) = self.conv.convert(rec, &mut self.vals) else {
            return Ok(());
        };
        if let Some(net) = &mut self.net {
            if id == kernel::lttng::ev::NET_OUT || id == kernel::lttng::ev::NET_IN {
                net.fill(id, ts, &mut self.vals);
            }
        }
        let c = cpu as usize;
        // Per-CPU ftrace time never goes back; clamp to be safe with the writer's rule.
        let t = self.ts(ts).max(self.last_ts[c]);
        self.last_ts[c] = t;
        self.writer.write_event(cpu, id, t, &self.vals)?;
        let i = id as usize;
        if self.per_class.len() <= i {
            self.per_class.resize(i + 1, 0);
        }
        self.per_class[i] += 1;
        Ok(())
    }

    /// Decodes one page of `cpu` and writes its events. Returns whether the page was full.
    fn page(&mut self, layout: &PageLayout, cpu: u32, page: &[u8]) -> Result<bool, Error> {
        let mut err = None;
        let info = decode_page(layout, page, |ts, rec| {
            if err.is_some() {
                return;
            }
            if self.stacks.as_ref().is_some_and(|s| s.npending > 0) {
                if let Err(e) = self.flush_stacks(Some(cpu), ts) {
                    err = Some(e);
                    return;
                }
            }
            let rebuilt = self
                .switches
                .as_mut()
                .and_then(|i| i.before(cpu, rec))
                .map(<[u8]>::to_vec);
            let r = match rebuilt {
                Some(switch) => self
                    .record(cpu, ts, &switch)
                    .and_then(|()| self.record(cpu, ts, rec)),
                None => self.record(cpu, ts, rec),
            };
            if let Err(e) = r {
                err = Some(e);
            }
        })
        .map_err(|e| Error::Invalid(format!("CPU {cpu}: {e}")))?;
        if let Some(e) = err {
            return Err(e);
        }
        if info.missed {
            self.missed_pages += 1;
            self.missed_stored += info.missed_count.unwrap_or(0);
        }
        Ok(info.full)
    }
}

struct Setup {
    tfs: Tracefs,
    layout: PageLayout,
    known: Vec<(KnownEvent, crate::format::EventFormat)>,
    syscalls: Vec<crate::convert::SyscallDef>,
    /// Per event of `known`: the tracefs filter it gets (`None`: no filter), or `Err(())`
    /// when a filter admits none of its events (the event is not enabled).
    filters: Vec<Result<Option<String>, ()>>,
    /// The dynamic probes' events (defined while the setup lives).
    probes: Vec<ProbeEvent>,
    _dynamic: Option<tracefs::DynamicEvents>,
}

impl Setup {
    /// The dynamic probe events defined for the run: (file, `group/event`).
    fn probe_events(&self) -> &[(&'static str, String)] {
        self._dynamic.as_ref().map_or(&[], |d| d.defined())
    }
}

/// One event of a dynamic probe.
struct ProbeEvent {
    /// LTTng event name.
    name: String,
    /// tracefs system (the run's probe group) and event.
    system: String,
    event: String,
    format: crate::format::EventFormat,
    ret: bool,
}

fn setup(opts: &RecordOptions) -> Result<Setup, Error> {
    if !tracefs::is_root() {
        return Err(Error::NotRoot);
    }
    if opts.output.exists() && opts.flight_recorder.is_none() {
        return Err(Error::Invalid(format!(
            "{}: already exists",
            opts.output.display()
        )));
    }
    let tfs = Tracefs::find(opts.tracefs.as_deref())?;
    let layout = tfs.page_layout()?;
    let mut spec = if opts.events.is_empty() {
        // `--syscall` alone: the default groups with only those system calls.
        let groups = DEFAULT_GROUPS
            .iter()
            .filter(|g| opts.syscalls.is_empty() || **g != "syscalls");
        vec![groups.copied().collect::<Vec<_>>().join(",")]
    } else {
        opts.events.clone()
    };
    spec.extend(opts.syscalls.iter().map(|n| format!("syscall:{n}")));
    let sel = select(&spec)?;
    let mut known = Vec::new();
    for k in sel.events {
        known.push((k, tfs.event_format(k.system, k.event)?));
    }
    let syscalls = if known.iter().any(|(k, _)| k.group == "syscalls") {
        tfs.syscall_defs()
    } else {
        Vec::new()
    };
    let filters = event_filters(&known, opts, sel.syscalls.as_deref())?;
    let (probes, dynamic) = define_probes(&tfs, opts)?;
    if opts.verbose {
        for ((k, _), f) in known.iter().zip(&filters) {
            match f {
                Ok(Some(f)) => eprintln!("tracekit: {}:{} filter: {f}", k.system, k.event),
                Ok(None) => {}
                Err(()) => eprintln!(
                    "tracekit: {}:{} has no field a --filter names: none of its events are \
                     recorded",
                    k.system, k.event
                ),
            }
        }
    }
    Ok(Setup {
        tfs,
        layout,
        known,
        syscalls,
        filters,
        probes,
        _dynamic: dynamic,
    })
}

/// Defines the `--probe`/`--function`/`--userspace-probe` events in the group
/// `tkprobe_PID` (removed when the returned guard is dropped).
fn define_probes(
    tfs: &Tracefs,
    opts: &RecordOptions,
) -> Result<(Vec<ProbeEvent>, Option<tracefs::DynamicEvents>), Error> {
    if opts.probes.is_empty() {
        return Ok((Vec::new(), None));
    }
    for g in tracefs::DynamicEvents::remove_stale(tfs) {
        eprintln!("tracekit: removed the probes {g} of a dead recorder");
    }
    let group = format!("tkprobe_{}", std::process::id());
    let mut dynamic = tracefs::DynamicEvents::new(tfs);
    let mut events = Vec::new();
    for spec in &opts.probes {
        let names = spec.event_names();
        let defs = spec
            .definitions(&group)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        for (i, (line, ev, ret)) in defs.into_iter().enumerate() {
            dynamic.define(spec.is_kernel(), &line)?;
            let format = tfs.event_format(&group, &ev)?;
            events.push(ProbeEvent {
                name: names.get(i).cloned().unwrap_or_else(|| ev.clone()),
                system: group.clone(),
                event: ev,
                format,
                ret,
            });
        }
    }
    Ok((events, Some(dynamic)))
}

/// The tracefs filter of each selected event: the `--filter`s that apply to it, the selected
/// system calls and the network devices, all of which must hold.
fn event_filters(
    known: &[(KnownEvent, crate::format::EventFormat)],
    opts: &RecordOptions,
    syscalls: Option<&[u32]>,
) -> Result<Vec<Result<Option<String>, ()>>, Error> {
    // Which events each filter applies to.
    let mut applies: Vec<Vec<bool>> = Vec::new();
    for f in &opts.filters {
        let v: Vec<bool> = match &f.events {
            None => vec![true; known.len()],
            Some(items) => {
                let mut v = vec![false; known.len()];
                for item in items {
                    for (_, e) in crate::convert::known_matching(item) {
                        if let Some(i) = known.iter().position(|(k, _)| k == e) {
                            v[i] = true;
                        }
                    }
                }
                v
            }
        };
        if !v.iter().any(|b| *b) {
            return Err(Error::FilterSelection(
                f.events.clone().unwrap_or_default().join(","),
            ));
        }
        applies.push(v);
    }
    let mut out = Vec::with_capacity(known.len());
    for (i, (k, fmt)) in known.iter().enumerate() {
        let mut parts: Vec<String> = Vec::new();
        let mut admits = true;
        for (f, a) in opts.filters.iter().zip(&applies) {
            if !a[i] {
                continue;
            }
            match f
                .filter
                .to_tracefs(&format!("{}:{}", k.system, k.event), fmt)?
            {
                Some(t) => parts.push(t),
                None => admits = false,
            }
        }
        if k.group == "syscalls" {
            if let Some(nrs) = syscalls {
                let alts: Vec<String> = nrs.iter().map(|n| format!("id == {n}")).collect();
                parts.push(alts.join(" || "));
            }
        }
        if k.group == "net" && !opts.netdevs.is_empty() {
            let alts: Vec<String> = opts
                .netdevs
                .iter()
                .map(|d| format!("name == \"{d}\""))
                .collect();
            parts.push(alts.join(" || "));
        }
        out.push(if !admits {
            Err(())
        } else if parts.is_empty() {
            Ok(None)
        } else if parts.len() == 1 {
            Ok(Some(parts.pop().unwrap_or_default()))
        } else {
            Ok(Some(
                parts
                    .iter()
                    .map(|p| format!("({p})"))
                    .collect::<Vec<_>>()
                    .join(" && "),
            ))
        });
    }
    Ok(out)
}

/// The recorder's own threads (left out of the system-call events unless `--trace-self`).
fn own_threads() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_else(|_| vec![std::process::id() as i32])
}

fn configure(s: &Setup, opts: &RecordOptions, ncpus_hint: usize) -> Result<Instance, Error> {
    for n in Instance::remove_stale(&s.tfs) {
        eprintln!("tracekit: removed the stale tracefs instance {n} of a dead recorder");
    }
    let name = format!("tracekit-{}", std::process::id());
    let inst = Instance::create(&s.tfs, &name)?;
    inst.write("trace_clock", "mono")?;
    let overwrite = opts.flight_recorder.is_some() && opts.snapshot_on.is_empty();
    let kb = match opts.flight_recorder {
        Some(total) if overwrite => (total / 1024 / ncpus_hint.max(1) as u64).max(64),
        _ => opts.buffer_size_kb.max(64),
    };
    inst.write("buffer_size_kb", &kb.to_string())?;
    inst.write("options/overwrite", if overwrite { "1" } else { "0" })?;
    // Every knob the recording relies on is set, not assumed from the kernel's defaults:
    // nothing enabled yet, no PID lists but ours, children followed only with `--pid`.
    inst.write("events/enable", "0")?;
    if inst.dir.join("set_event_notrace_pid").exists() {
        inst.write("set_event_notrace_pid", "")?;
    }
    let list: Vec<String> = opts.pids.iter().map(|p| p.to_string()).collect();
    inst.write("set_event_pid", &list.join(" "))?;
    if inst.dir.join("options/event-fork").exists() {
        inst.write(
            "options/event-fork",
            if opts.pids.is_empty() { "0" } else { "1" },
        )?;
    } else if !opts.pids.is_empty() {
        eprintln!(
            "tracekit: this kernel has no options/event-fork: the children of --pid processes \
             are not followed"
        );
    }
    let own: Vec<String> = if opts.trace_self {
        Vec::new()
    } else {
        own_threads()
            .iter()
            .map(|t| format!("common_pid != {t}"))
            .collect()
    };
    for ((k, _), f) in s.known.iter().zip(&s.filters) {
        let Ok(f) = f else { continue };
        let mut filter = f.clone();
        if k.group == "syscalls" && !own.is_empty() {
            // The recorder's reads of trace_pipe_raw and writes of the trace would top the
            // I/O analyses.
            let me = own.join(" && ");
            filter = Some(match filter {
                Some(f) => format!("({f}) && {me}"),
                None => me,
            });
        }
        if let Some(f) = filter {
            inst.set_filter(k.system, k.event, &f)?;
        }
        inst.enable_event(k.system, k.event)?;
    }
    for p in &s.probes {
        inst.enable_event(&p.system, &p.event)?;
    }
    Ok(inst)
}

/// The converter of a run's events (the known events, the system calls, the probes), its
/// classes added to `tc`.
fn converter(s: &Setup, tc: &mut TraceClass) -> Result<Converter, Error> {
    let mut conv =
        Converter::new(tc, &s.known, &s.syscalls).map_err(|e| Error::Format(e.to_string()))?;
    for (i, p) in s.probes.iter().enumerate() {
        conv.add_probe(
            tc,
            &p.format,
            &p.name,
            kernel::lttng::FIRST_PROBE_ID + i as u64,
            p.ret,
        )
        .map_err(|e| Error::Format(e.to_string()))?;
    }
    Ok(conv)
}

fn new_sink(s: &Setup, opts: &RecordOptions, dir: &Path, cpus: u32) -> Result<Sink, Error> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kernel".into());
    let mut tc = build_trace_class(opts, &name);
    let clock_ns = tc.clocks.first().map_or(0, |c| c.cycles_to_ns(0));
    let mut conv = converter(s, &mut tc)?;
    if !opts.stacks.is_empty() {
        kernel::lttng::stacks::add_stack_classes(&mut tc);
    }
    conv.set_tgid_lookup(Box::new(tracefs::proc_tgid));
    if let Ok(l) = std::fs::read_link("/proc/self/ns/pid") {
        // "pid:[4026531836]"
        let t = l.to_string_lossy();
        if let Some(n) = t
            .split(['[', ']'])
            .nth(1)
            .and_then(|n| n.parse::<u64>().ok())
        {
            conv.set_ns_inum(n);
        }
    }
    // A filter on the switches leaves some out on purpose: nothing to rebuild then. A PID
    // list leaves out those between unlisted tasks, which the rebuild knows of.
    let switches = s
        .known
        .iter()
        .zip(&s.filters)
        .find(|((k, _), filter)| {
            k.system == "sched" && k.event == "sched_switch" && matches!(filter, Ok(None))
        })
        .map(|((_, f), _)| {
            let mut m =
                crate::missing_switch::MissingSwitches::new(f, Box::new(tracefs::proc_comm))?;
            for (k, f) in &s.known {
                match (k.system, k.event) {
                    ("sched", "sched_wakeup" | "sched_wakeup_new") => {
                        m.learn_names(f, "pid", "comm", Some("prio"))?
                    }
                    ("sched", "sched_process_fork") => {
                        m.learn_names(f, "child_pid", "child_comm", None)?
                    }
                    _ => {}
                }
            }
            Ok::<_, crate::format::FormatError>(if opts.pids.is_empty() {
                m
            } else {
                m.with_pid_list()
            })
        })
        .transpose()
        .map_err(|e| Error::Format(e.to_string()))?;
    let writer = TraceWriter::create(dir, &tc, cpus, &WriterOptions::default())?;
    Ok(Sink {
        writer,
        conv,
        offset: opts.clock_offset_ns,
        last_ts: vec![0; cpus as usize],
        per_class: Vec::new(),
        vals: Vec::with_capacity(16),
        missed_pages: 0,
        missed_stored: 0,
        statedump_events: 0,
        net: None,
        stacks: None,
        switches,
        statedump_fds: opts.statedump_fds,
        clock_ns,
    })
}

/// Streams `sink`'s trace to the relay `target` too ([`crate::relay::RelayTap`]).
fn stream_to(
    sink: &mut Sink,
    opts: &RecordOptions,
    target: &crate::relay::RelayTarget,
    nstreams: u32,
) -> Result<(), Error> {
    let hostname = opts.hostname.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    });
    let session = opts.session_name.clone().unwrap_or_else(|| {
        opts.output
            .file_name()
            .map_or_else(|| "kernel".into(), |n| n.to_string_lossy().into_owned())
    });
    let prefix = WriterOptions::default().stream_prefix;
    let channels: Vec<String> = (0..nstreams).map(|c| format!("{prefix}_{c}")).collect();
    let live_us = u32::try_from(opts.live_timer.as_micros()).unwrap_or(u32::MAX);
    let tap =
        crate::relay::RelayTap::connect(target, &session, &hostname, live_us, "kernel", &channels)?;
    sink.writer
        .set_tap(std::sync::Arc::new(std::sync::Mutex::new(tap)))?;
    Ok(())
}

fn partial_dir(dir: &Path) -> PathBuf {
    ctf::writer::partial_dir(dir)
}

fn class_names(tc_names: &[(u64, String)], per_class: &[u64]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = tc_names
        .iter()
        .filter_map(|(id, n)| {
            let c = *per_class.get(*id as usize)?;
            (c > 0).then(|| (n.clone(), c))
        })
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// Records a kernel trace. The tracefs instance is removed on every exit path; the trace
/// directory only appears (renamed from `.NAME.partial`) when it is complete.
pub fn record(opts: &RecordOptions) -> Result<RecordSummary, Error> {
    let s = setup(opts)?;
    signals::install_handlers();
    let old_mask = tracefs::set_umask(0o077);
    let r = if opts.flight_recorder.is_some() {
        run_flight(&s, opts)
    } else {
        run_stream(&s, opts)
    };
    tracefs::set_umask(old_mask);
    r
}

fn event_names(s: &Setup, opts: &RecordOptions) -> Vec<(u64, String)> {
    // The class set is the same for every trace of a run: build it once for the names.
    let mut tc = build_trace_class(opts, "x");
    let _ = converter(s, &mut tc);
    if !opts.stacks.is_empty() {
        kernel::lttng::stacks::add_stack_classes(&mut tc);
    }
    tc.streams[&0]
        .events
        .values()
        .map(|e| (e.id, e.name.clone()))
        .collect()
}

/// Reads every page available now (at most `max_pages` per CPU); returns whether some CPU
/// gave a full page. With `read_until` (one per pipe), also notes for each CPU a time before
/// which all its events have been read (on the written time line): when its buffer was found
/// empty, the time just before it was read; otherwise the time of its last event read (a
/// CPU's events come in time order; a page that is not full may still be followed by others,
/// when it was the rest of a page read in part before).
fn drain_once(
    pipes: &mut [(u32, RawPipe)],
    buf: &mut [u8],
    sink: &mut Sink,
    layout: &PageLayout,
    max_pages: usize,
    mut read_until: Option<&mut [u64]>,
) -> Result<bool, Error> {
    let mut any_full = false;
    for (i, (cpu, pipe)) in pipes.iter_mut().enumerate() {
        let before = read_until.as_ref().map(|_| sink.ts(tracefs::clocks_ns().0));
        let mut empty = false;
        for _ in 0..max_pages {
            let Some(n) = pipe.read_page(buf)? else {
                empty = true;
                break;
            };
            // The helper's records of the events on this page were committed before the page
            // was read: take them now, so that they go in at their own times.
            if let Some(st) = &mut sink.stacks {
                st.poll();
            }
            let full = sink.page(layout, *cpu, &buf[..n])?;
            if !full {
                break;
            }
            any_full = true;
        }
        if let (Some(marks), Some(before)) = (read_until.as_deref_mut(), before) {
            let last = sink.last_ts.get(*cpu as usize).copied().unwrap_or(0);
            let mark = if empty { before.max(last) } else { last };
            marks[i] = marks[i].max(mark);
        }
    }
    Ok(any_full)
}

/// How much earlier than the time the buffers were read (by [`drain_once`]'s marks, or
/// emptied for a live beacon) the events are taken to be all read: an event is stamped when
/// its writer reserves its place and seen once it commits it, and a virtual CPU can be
/// stopped by its host in between.
const ON_DISK_MARGIN_NS: u64 = 50_000_000;
/// Reads every CPU's buffer until the kernel has nothing more (partial pages included), at
/// most [`EMPTY_PAGES`] pages per CPU; whether every buffer was read empty.
fn drain_empty(
    pipes: &mut [(u32, RawPipe)],
    buf: &mut [u8],
    sink: &mut Sink,
    layout: &PageLayout,
) -> Result<bool, Error> {
    let mut empty = true;
    for (cpu, pipe) in pipes.iter_mut() {
        let mut pages = 0;
        loop {
            if pages == EMPTY_PAGES {
                empty = false;
                break;
            }
            let Some(n) = pipe.read_page(buf)? else {
                break;
            };
            sink.page(layout, *cpu, &buf[..n])?;
            pages += 1;
        }
    }
    Ok(empty)
}

/// The most pages [`drain_empty`] reads per CPU before it gives up on emptying it.
const EMPTY_PAGES: usize = 1024;

fn run_stream(s: &Setup, opts: &RecordOptions) -> Result<RecordSummary, Error> {
    let ncpus_online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let inst = configure(s, opts, ncpus_online)?;
    let _watchdog = tracefs::Watchdog::start(&s.tfs, &inst, true, s.probe_events());
    let cpus = inst.cpus()?;
    let nstreams = cpus.iter().max().map_or(1, |m| m + 1);
    let mut pipes = cpus
        .iter()
        .map(|&c| Ok((c, inst.open_pipe(c)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut sink = new_sink(s, opts, &opts.output, nstreams)?;
    if let Some(target) = &opts.relay {
        stream_to(&mut sink, opts, target, nstreams)
            .map_err(|e| annotate_partial(e, &opts.output))?;
    }
    let mut net_off = None;
    if s.known.iter().any(|(k, _)| k.group == "net") {
        let why = if opts.net_headers {
            NetProbe::start().map(|probe| {
                sink.net = Some(NetMerge {
                    probe,
                    store: HeaderStore::new(),
                })
            })
        } else {
            Err("disabled".to_string())
        };
        if let Err(e) = why {
            eprintln!(
                "tracekit: network headers unavailable ({e}): net events are recorded \
                 without them (network_header_type = _unknown)"
            );
            net_off = Some(e);
        } else if opts.verbose {
            eprintln!("tracekit: eBPF network-header helper attached");
        }
    }
    let mut strings_off = None;
    let strings_matched = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    if !s.syscalls.is_empty() {
        match string_probe(s, opts) {
            Ok(mut probe) => {
                let mut store = crate::sysargs::ArgStore::new();
                let matched = strings_matched.clone();
                sink.conv
                    .set_user_strings(Box::new(move |tid, nr, arg, ts| {
                        let mut r = store.take(tid, nr, arg, ts);
                        if r.is_none() {
                            // The helper's record is written right after the ftrace event: it
                            // may not have been read yet.
                            probe.poll(|b| {
                                if let Some(a) = crate::sysargs::ArgRecord::parse(b) {
                                    store.push(a);
                                }
                            });
                            r = store.take(tid, nr, arg, ts);
                        }
                        matched.store(store.matched, std::sync::atomic::Ordering::Relaxed);
                        r
                    }));
                if opts.verbose {
                    eprintln!("tracekit: eBPF system-call string helper attached");
                }
            }
            Err(e) => {
                if opts.syscall_strings && opts.verbose {
                    eprintln!(
                        "tracekit: system-call string arguments unavailable ({e}): file names \
                         in syscall_entry_* events are left empty"
                    );
                }
                strings_off = Some(e);
            }
        }
    }
    let mut symbols_off = None;
    if !opts.stacks.is_empty() {
        let t = StackThresholds::from_rules(&opts.stacks)?;
        let (symbols, why) = crate::stacks::read_kallsyms();
        if let Some(w) = &why {
            eprintln!("tracekit: {w}");
        }
        symbols_off = why;
        let probe = StackProbe::start(&t, std::process::id() as i32, opts.user_stacks)
            .map_err(|e| Error::Invalid(format!("--stacks: the eBPF stacks helper: {e}")))?;
        sink.stacks = Some(StackMerge {
            probe: Some(probe),
            pending: (0..nstreams).map(|_| Default::default()).collect(),
            npending: 0,
            kaddrs: Default::default(),
            written: 0,
            vals: Vec::new(),
            symbols: Arc::new(symbols),
        });
    }
    let mut start = Instant::now();
    let result = (|| -> Result<(), Error> {
        let base: Vec<u64> = cpus
            .iter()
            .map(|&c| inst.stats(c).map(|st| st.lost()))
            .collect::<Result<_, _>>()?;
        let (t0, _) = tracefs::clocks_ns();
        start = Instant::now();
        inst.write("tracing_on", "1")?;
        let snap = ProcSnapshot::read(Path::new("/proc")).map_err(|e| Error::Io {
            path: "/proc".into(),
            source: e,
        })?;
        sink.statedump(&snap, t0)?;
        let deadline = opts.duration.map(|d| Instant::now() + d);
        let mut buf = vec![0u8; s.layout.page_size()];
        let mut lost_seen = base.clone();
        let mut last_flush = Instant::now();
        // Per CPU, a time before which every event has been read (see `drain_once`).
        let mut read_until = vec![sink.ts(t0); pipes.len()];
        let mut last_tick = Instant::now();
        let mut account = |sink: &mut Sink| -> Result<(), Error> {
            for (i, &c) in cpus.iter().enumerate() {
                let lost = inst.stats(c)?.lost();
                if lost > lost_seen[i] {
                    sink.writer.add_discarded(c, lost - lost_seen[i])?;
                    lost_seen[i] = lost;
                }
            }
            Ok(())
        };
        loop {
            let stop = signals::stop_requested() || deadline.is_some_and(|d| Instant::now() >= d);
            if let Some(net) = &mut sink.net {
                net.probe.poll(&mut net.store);
            }
            if let Some(st) = &mut sink.stacks {
                st.poll();
            }
            if stop {
                inst.write("tracing_on", "0")?;
                if let Some(st) = &mut sink.stacks {
                    st.poll();
                }
                // Everything left, partial pages included.
                while drain_once(&mut pipes, &mut buf, &mut sink, &s.layout, usize::MAX, None)? {}
                drain_once(&mut pipes, &mut buf, &mut sink, &s.layout, usize::MAX, None)?;
                account(&mut sink)?;
                return Ok(());
            }
            let marks = opts.on_disk.as_ref().map(|_| &mut read_until[..]);
            let full = drain_once(&mut pipes, &mut buf, &mut sink, &s.layout, 256, marks)?;
            account(&mut sink)?;
            if opts.relay.is_some()
                && !opts.live_timer.is_zero()
                && last_tick.elapsed() >= opts.live_timer
            {
                // Every event stamped before `before` is in the buffers: once they are read
                // empty, an idle stream can be said quiet up to it (a reader then releases
                // the other streams' events before it).
                let before = tracefs::clocks_ns().0;
                let empty = drain_empty(&mut pipes, &mut buf, &mut sink, &s.layout)?;
                let quiet_until = sink.ts(before.saturating_sub(ON_DISK_MARGIN_NS));
                if empty {
                    sink.writer.live_tick(quiet_until)?;
                } else {
                    sink.writer.flush()?;
                }
                last_tick = Instant::now();
            }
            // Like LTTng's switch timer: write out the open packets every second, so that a
            // crash (kill -9) leaves at most a second of events unwritten.
            if last_flush.elapsed() >= FLUSH_PERIOD {
                sink.writer.flush()?;
                last_flush = Instant::now();
                if let Some(on_disk) = &opts.on_disk {
                    let until = read_until.iter().min().copied().unwrap_or(0);
                    let t = until.saturating_sub(ON_DISK_MARGIN_NS) as i128 + sink.clock_ns;
                    on_disk.fetch_max(t.clamp(0, i64::MAX as i128) as i64, Ordering::Release);
                }
            }
            if !full {
                let wait = deadline
                    .map(|d| d.saturating_duration_since(Instant::now()))
                    .unwrap_or(opts.poll)
                    .min(opts.poll);
                std::thread::sleep(wait);
            }
        }
    })();
    drop(pipes);
    if let Err(e) = result {
        drop(inst);
        return Err(annotate_partial(e, &opts.output));
    }
    let stack_symbols = match sink.finish_stacks() {
        Ok(n) => n,
        Err(e) => {
            drop(inst);
            return Err(annotate_partial(e, &opts.output));
        }
    };
    let (stacks_written, stacks_lost) = sink
        .stacks
        .take()
        .map_or((0, 0), |s| (s.written, s.probe.map_or(0, |p| p.lost())));
    let removed = inst.remove();
    let net_stats = sink.net.take().map(|n| n.store.stats);
    let names = event_names(s, opts);
    let per_class = class_names(&names, &sink.per_class);
    let conv_stats = sink.conv.stats.clone();
    let rebuilt_switches = sink.rebuilt_switches();
    let (missed_pages, missed_stored, sd) =
        (sink.missed_pages, sink.missed_stored, sink.statedump_events);
    let lost_total = sink.writer.discarded();
    let stats = sink
        .writer
        .finish()
        .map_err(|e| annotate_partial(e.into(), &opts.output))?;
    removed?;
    Ok(RecordSummary {
        traces: vec![stats.dir.clone()],
        events: stats.events,
        per_cpu: stats.per_cpu,
        per_class,
        discarded: lost_total,
        missed_pages,
        missed_stored,
        statedump_events: sd,
        unknown_syscalls: conv_stats.unknown_syscalls,
        malformed: conv_stats.malformed,
        rebuilt_switches,
        bytes: stats.bytes,
        elapsed: start.elapsed(),
        net_headers: net_stats,
        net_headers_off: net_off,
        stacks: stacks_written,
        stacks_lost,
        stack_symbols,
        stack_symbols_off: symbols_off.filter(|_| stacks_written > 0),
        syscall_strings: (strings_off.is_none() && !s.syscalls.is_empty())
            .then(|| strings_matched.load(std::sync::atomic::Ordering::Relaxed)),
        syscall_strings_off: strings_off,
    })
}

fn annotate_partial(e: Error, dir: &Path) -> Error {
    let p = partial_dir(dir);
    if p.exists() {
        Error::Invalid(format!(
            "{e} (the incomplete trace is left in {})",
            p.display()
        ))
    } else {
        e
    }
}

/// The records a flight recorder keeps at most from each eBPF helper between snapshots (the
/// oldest dropped): as many as its kernel buffers could need.
const FLIGHT_ARGS: usize = 1 << 18;
const FLIGHT_STACKS: usize = 1 << 14;

/// A flight recorder's eBPF helpers (system-call strings, `--stacks`): their records are
/// taken as they come and kept, within a budget, for the snapshots whose pages they go with.
#[derive(Default)]
struct FlightHelpers {
    args: Option<(ArgProbe, Arc<std::sync::Mutex<crate::sysargs::ArgStore>>)>,
    strings_off: Option<String>,
    stacks: Option<(StackProbe, std::collections::VecDeque<StackRecord>)>,
    symbols: Arc<kernel::stacks::Symbols>,
    symbols_off: Option<String>,
}

/// The system calls' string helper, when the options ask for it (else why not).
fn string_probe(s: &Setup, opts: &RecordOptions) -> Result<ArgProbe, String> {
    if !opts.syscall_strings {
        return Err("disabled".into());
    }
    ArgProbe::start(&string_masks(s), std::process::id() as i32)
}

impl FlightHelpers {
    /// Starts the helpers the options ask for; an unavailable string helper is reported and
    /// left out, an unavailable stacks helper is an error (as in streaming mode).
    fn start(s: &Setup, opts: &RecordOptions) -> Result<Self, Error> {
        let mut h = FlightHelpers::default();
        if !s.syscalls.is_empty() {
            match string_probe(s, opts) {
                Ok(p) => h.args = Some((p, Default::default())),
                Err(e) => {
                    if opts.syscall_strings && opts.verbose {
                        eprintln!(
                            "tracekit: system-call string arguments unavailable ({e}): file \
                             names in syscall_entry_* events are left empty"
                        );
                    }
                    h.strings_off = Some(e);
                }
            }
        }
        if !opts.stacks.is_empty() {
            let t = StackThresholds::from_rules(&opts.stacks)?;
            let (symbols, why) = crate::stacks::read_kallsyms();
            if let Some(w) = &why {
                eprintln!("tracekit: {w}");
            }
            h.symbols = Arc::new(symbols);
            h.symbols_off = why;
            let probe = StackProbe::start(&t, std::process::id() as i32, opts.user_stacks)
                .map_err(|e| Error::Invalid(format!("--stacks: the eBPF stacks helper: {e}")))?;
            h.stacks = Some((probe, Default::default()));
        }
        Ok(h)
    }

    /// Takes the helpers' new records, dropping the oldest beyond the budgets.
    fn poll(&mut self) {
        if let Some((probe, store)) = &mut self.args {
            let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
            probe.poll(|b| {
                if let Some(a) = crate::sysargs::ArgRecord::parse(b) {
                    st.push(a);
                }
            });
            st.bound(FLIGHT_ARGS);
        }
        if let Some((probe, kept)) = &mut self.stacks {
            let syms = &self.symbols;
            probe.poll(|b| {
                if let Some(mut r) = StackRecord::parse(b) {
                    crate::stacks::trim_tracing_frames(&mut r.kstack, syms);
                    kept.push_back(r);
                }
            });
            while kept.len() > FLIGHT_STACKS {
                kept.pop_front();
            }
        }
    }

    /// Gives a snapshot's sink the strings and the stacks of its pages' time span
    /// (`from..=to`, raw times); `consume`: the pages are gone after it (overwrite mode), so
    /// are their stacks.
    fn attach(&mut self, sink: &mut Sink, nstreams: u32, from: u64, to: u64, consume: bool) {
        self.poll();
        if let Some((_, store)) = &self.args {
            let store = store.clone();
            sink.conv
                .set_user_strings(Box::new(move |tid, nr, arg, ts| {
                    store
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .take(tid, nr, arg, ts)
                }));
        }
        if let Some((_, kept)) = &mut self.stacks {
            let records: Vec<StackRecord> = kept
                .iter()
                .filter(|r| (from..=to).contains(&r.ts))
                .cloned()
                .collect();
            if consume {
                kept.retain(|r| r.ts > to);
            } else {
                kept.retain(|r| r.ts >= from);
            }
            sink.stacks = Some(StackMerge::kept(records, nstreams, self.symbols.clone()));
        }
    }

    /// The system-call strings put in events so far, when the helper runs.
    fn strings_matched(&self) -> Option<u64> {
        self.args
            .as_ref()
            .map(|(_, st)| st.lock().unwrap_or_else(|e| e.into_inner()).matched)
    }
}

/// Per system call number with string arguments, a bit per such argument.
fn string_masks(s: &Setup) -> Vec<(u32, u8)> {
    s.syscalls
        .iter()
        .map(|d| {
            let mut m = kernel::lttng::syscalls::user_string_mask(d);
            if d.name == "connect" {
                // Its `uservaddr`, decoded as lttng-modules does.
                m |= crate::sysargs::SOCKADDR_ARG as u8;
            }
            (d.nr, m)
        })
        .filter(|(_, m)| *m != 0)
        .collect()
}

/// What the flight recorder keeps between snapshots.
struct Flight<'a> {
    s: &'a Setup,
    opts: &'a RecordOptions,
    inst: &'a Instance,
    cpus: Vec<u32>,
    nstreams: u32,
    lost_seen: Vec<u64>,
    summary: RecordSummary,
    all_counts: Vec<u64>,
    n: u32,
    helpers: FlightHelpers,
}

impl Flight<'_> {
    /// Writes the pages as `snapshot-N/kernel`.
    fn snapshot(&mut self, pages: &[(u32, Vec<u8>)]) -> Result<PathBuf, Error> {
        let (s, opts) = (self.s, self.opts);
        self.n += 1;
        let n = self.n;
        let (mut first, mut last) = (u64::MAX, 0);
        for (_, p) in pages {
            let _ = decode_page(&s.layout, p, |ts, _| {
                first = first.min(ts);
                last = last.max(ts);
            });
        }
        if first == u64::MAX {
            first = tracefs::clocks_ns().0;
            last = first;
        }
        let dir = opts.output.join(format!("snapshot-{n}")).join("kernel");
        let mut sink = new_sink(s, opts, &dir, self.nstreams)?;
        // Overwrite mode hands its pages over once; with `--snapshot-on` they stay for the
        // next snapshot.
        let consume = opts.snapshot_on.is_empty();
        self.helpers
            .attach(&mut sink, self.nstreams, first, last, consume);
        let snap = ProcSnapshot::read(Path::new("/proc")).map_err(|e| Error::Io {
            path: "/proc".into(),
            source: e,
        })?;
        sink.statedump(&snap, first)?;
        // Pages of a CPU are in time order; a page may start before the statedump.
        for (cpu, p) in pages {
            sink.page(&s.layout, *cpu, p)?;
        }
        let stack_symbols = sink.finish_stacks()?;
        if let Some(sm) = sink.stacks.take() {
            self.summary.stacks += sm.written;
            self.summary.stack_symbols += stack_symbols;
        }
        for (i, &c) in self.cpus.iter().enumerate() {
            let lost = self.inst.stats(c)?.lost();
            sink.writer
                .add_discarded(c, lost.saturating_sub(self.lost_seen[i]))?;
            self.lost_seen[i] = lost;
        }
        let summary = &mut self.summary;
        summary.discarded += sink.writer.discarded();
        summary.missed_pages += sink.missed_pages;
        summary.missed_stored += sink.missed_stored;
        summary.statedump_events += sink.statedump_events;
        summary.unknown_syscalls += sink.conv.stats.unknown_syscalls;
        summary.malformed += sink.conv.stats.malformed;
        summary.rebuilt_switches += sink.rebuilt_switches();
        for (i, c) in sink.per_class.iter().enumerate() {
            if self.all_counts.len() <= i {
                self.all_counts.resize(i + 1, 0);
            }
            self.all_counts[i] += c;
        }
        let st = sink
            .writer
            .finish()
            .map_err(|e| annotate_partial(e.into(), &dir))?;
        if opts.verbose {
            eprintln!(
                "tracekit: snapshot {n}: {} events in {}",
                st.events,
                st.dir.display()
            );
        }
        summary.events += st.events;
        summary.bytes += st.bytes;
        for (i, e) in st.per_cpu.iter().enumerate() {
            summary.per_cpu[i] += e;
        }
        summary.traces.push(st.dir.clone());
        Ok(st.dir)
    }
}

fn run_flight(s: &Setup, opts: &RecordOptions) -> Result<RecordSummary, Error> {
    let start = Instant::now();
    let ncpus_online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let inst = configure(s, opts, ncpus_online)?;
    // A killed flight recorder's buffers are kept (frozen) for `tracekit recover`; with
    // `--snapshot-on` its pages are in the recorder's memory and its instance goes.
    let _watchdog = tracefs::Watchdog::start(
        &s.tfs,
        &inst,
        !opts.snapshot_on.is_empty(),
        s.probe_events(),
    );
    let cpus = inst.cpus()?;
    let nstreams = cpus.iter().max().map_or(1, |m| m + 1);
    let mut pipes = cpus
        .iter()
        .map(|&c| Ok((c, inst.open_pipe(c)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    std::fs::create_dir_all(&opts.output).map_err(|e| Error::Io {
        path: opts.output.clone(),
        source: e,
    })?;
    let names = event_names(s, opts);
    let helpers = FlightHelpers::start(s, opts)?;
    let mut net_off = None;
    if s.known.iter().any(|(k, _)| k.group == "net") && opts.net_headers {
        eprintln!(
            "tracekit: flight-recorder mode records the net events without their network \
             headers (network_header_type = _unknown)"
        );
        net_off = Some("flight-recorder mode".into());
    }
    // The kernel's ring buffers outlive a recorder killed with SIGKILL: say where they are and
    // how to decode them, for `tracekit recover`.
    let recovery = opts.snapshot_on.is_empty().then(|| Recovery {
        path: opts.output.join(RECOVERY_FILE),
        instance: inst.dir.clone(),
        tracefs: s.tfs.root.clone(),
        events: opts.events.clone(),
        syscalls: opts.syscalls.clone(),
        hostname: opts.hostname.clone(),
        clock_offset_ns: opts.clock_offset_ns,
        statedump_fds: opts.statedump_fds,
        lost: Vec::new(),
    });
    let mut fl = Flight {
        s,
        opts,
        inst: &inst,
        cpus: cpus.clone(),
        nstreams,
        lost_seen: Vec::new(),
        summary: RecordSummary {
            per_cpu: vec![0; nstreams as usize],
            net_headers_off: net_off,
            ..Default::default()
        },
        all_counts: Vec::new(),
        n: 0,
        helpers,
    };
    let result = (|| -> Result<(), Error> {
        fl.lost_seen = cpus
            .iter()
            .map(|&c| inst.stats(c).map(|st| st.lost()))
            .collect::<Result<_, _>>()?;
        if let Some(r) = &recovery {
            r.write(&cpus, &fl.lost_seen)?;
        }
        inst.write("tracing_on", "1")?;
        let deadline = opts.duration.map(|d| Instant::now() + d);
        if !opts.snapshot_on.is_empty() {
            return run_live(&mut fl, &mut pipes, deadline);
        }
        loop {
            if signals::stop_requested() || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
            fl.helpers.poll();
            if !signals::take_snapshot_request() {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            // Take the pages out of the ring buffers first, then write them.
            let mut pages: Vec<(u32, Vec<u8>)> = Vec::new();
            let mut buf = vec![0u8; s.layout.page_size()];
            for (cpu, pipe) in pipes.iter_mut() {
                while let Some(len) = pipe.read_page(&mut buf)? {
                    pages.push((*cpu, buf[..len].to_vec()));
                }
            }
            fl.snapshot(&pages)?;
            if let Some(r) = &recovery {
                r.write(&cpus, &fl.lost_seen)?;
            }
        }
    })();
    if let Some(r) = &recovery {
        let _ = std::fs::remove_file(&r.path);
    }
    drop(pipes);
    let mut summary = std::mem::take(&mut fl.summary);
    summary.syscall_strings = fl.helpers.strings_matched();
    summary.syscall_strings_off = fl.helpers.strings_off.take();
    if let Some((p, _)) = &fl.helpers.stacks {
        summary.stacks_lost = p.lost();
    }
    summary.stack_symbols_off = fl.helpers.symbols_off.take().filter(|_| summary.stacks > 0);
    let all_counts = std::mem::take(&mut fl.all_counts);
    drop(fl);
    let removed = inst.remove();
    result?;
    removed?;
    summary.per_class = class_names(&names, &all_counts);
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// The file of a flight recorder's output directory that says how to recover its buffers.
const RECOVERY_FILE: &str = ".tracekit-flight";

/// What `tracekit recover` needs to decode a dead flight recorder's buffers.
#[derive(Debug, Clone, PartialEq)]
struct Recovery {
    path: PathBuf,
    instance: PathBuf,
    tracefs: PathBuf,
    events: Vec<String>,
    syscalls: Vec<String>,
    hostname: Option<String>,
    clock_offset_ns: i64,
    statedump_fds: bool,
    /// Per CPU: the events lost before what the buffers hold (written by snapshots).
    lost: Vec<(u32, u64)>,
}

impl Recovery {
    /// Writes the file (replaced atomically), with the loss counts so far.
    fn write(&self, cpus: &[u32], lost: &[u64]) -> Result<(), Error> {
        let lost: Vec<String> = cpus
            .iter()
            .zip(lost)
            .map(|(c, l)| format!("{c}:{l}"))
            .collect();
        let text = format!(
            "# tracekit flight recorder: `tracekit recover DIR -o TRACE` decodes its buffers\n\
             instance={}\ntracefs={}\nevents={}\nsyscalls={}\nhostname={}\n\
             clock_offset_ns={}\nstatedump_fds={}\nlost={}\n",
            self.instance.display(),
            self.tracefs.display(),
            self.events.join(","),
            self.syscalls.join(","),
            self.hostname.as_deref().unwrap_or(""),
            self.clock_offset_ns,
            self.statedump_fds as u8,
            lost.join(",")
        );
        let tmp = self.path.with_extension("new");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| Error::Io {
                path: self.path.clone(),
                source: e,
            })
    }

    /// Reads the file of a flight recorder's output directory.
    fn read(dir: &Path) -> Result<Recovery, Error> {
        let path = dir.join(RECOVERY_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Invalid(format!(
                "{}: {e} (not the output directory of a flight recorder that died, or it \
                 was already recovered)",
                path.display()
            ))
        })?;
        let bad = |what: &str| Error::Invalid(format!("{}: bad `{what}`", path.display()));
        let mut r = Recovery {
            path: path.clone(),
            instance: PathBuf::new(),
            tracefs: PathBuf::new(),
            events: Vec::new(),
            syscalls: Vec::new(),
            hostname: None,
            clock_offset_ns: 0,
            statedump_fds: true,
            lost: Vec::new(),
        };
        let list = |v: &str| -> Vec<String> {
            v.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((k, v)) = l.split_once('=') else {
                continue;
            };
            match k {
                "instance" => r.instance = v.into(),
                "tracefs" => r.tracefs = v.into(),
                "events" => r.events = list(v),
                "syscalls" => r.syscalls = list(v),
                "hostname" => r.hostname = (!v.is_empty()).then(|| v.to_string()),
                "clock_offset_ns" => r.clock_offset_ns = v.parse().map_err(|_| bad(k))?,
                "statedump_fds" => r.statedump_fds = v == "1",
                "lost" => {
                    for item in list(v) {
                        let (c, n) = item.split_once(':').ok_or_else(|| bad(k))?;
                        r.lost.push((
                            c.parse().map_err(|_| bad(k))?,
                            n.parse().map_err(|_| bad(k))?,
                        ));
                    }
                }
                _ => {}
            }
        }
        if r.instance.as_os_str().is_empty() {
            return Err(bad("instance"));
        }
        Ok(r)
    }
}

/// `tracekit recover`: turns the kernel buffers a flight recorder killed (SIGKILL, a crash of
/// the recorder) left in its tracefs instance into a trace at `output`, with every page they
/// hold and the events lost counted (overwritten since the last snapshot); then removes the
/// instance. `dir` is the flight recorder's output directory.
pub fn recover(dir: &Path, output: &Path, verbose: bool) -> Result<RecordSummary, Error> {
    let rec = Recovery::read(dir)?;
    let pid = rec
        .instance
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("tracekit-"))
        .unwrap_or("");
    if !pid.is_empty() && Path::new("/proc").join(pid).exists() {
        return Err(Error::Invalid(format!(
            "the flight recorder (pid {pid}) is still running: `kill -USR1 {pid}` writes a \
             snapshot"
        )));
    }
    let opts = RecordOptions {
        output: output.to_path_buf(),
        events: rec.events.clone(),
        syscalls: rec.syscalls.clone(),
        hostname: rec.hostname.clone(),
        clock_offset_ns: rec.clock_offset_ns,
        statedump_fds: rec.statedump_fds,
        tracefs: Some(rec.tracefs.clone()),
        verbose,
        ..Default::default()
    };
    let s = setup(&opts)?;
    let inst = Instance::open_existing(&rec.instance)?;
    inst.write("tracing_on", "0")?;
    let start = Instant::now();
    let cpus = inst.cpus()?;
    let nstreams = cpus.iter().max().map_or(1, |m| m + 1);
    let old_mask = tracefs::set_umask(0o077);
    let result = (|| -> Result<RecordSummary, Error> {
        let mut pages: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut buf = vec![0u8; s.layout.page_size()];
        for &c in &cpus {
            let mut pipe = inst.open_pipe(c)?;
            while let Some(n) = pipe.read_page(&mut buf)? {
                pages.push((c, buf[..n].to_vec()));
            }
        }
        let mut first = u64::MAX;
        for (_, p) in &pages {
            let _ = decode_page(&s.layout, p, |ts, _| first = first.min(ts));
        }
        if first == u64::MAX {
            first = tracefs::clocks_ns().0;
        }
        let mut sink = new_sink(&s, &opts, output, nstreams)?;
        let snap = ProcSnapshot::read(Path::new("/proc")).map_err(|e| Error::Io {
            path: "/proc".into(),
            source: e,
        })?;
        sink.statedump(&snap, first)?;
        for (cpu, p) in &pages {
            sink.page(&s.layout, *cpu, p)?;
        }
        for &c in &cpus {
            let lost = inst.stats(c)?.lost();
            let before = rec
                .lost
                .iter()
                .find(|(x, _)| *x == c)
                .map_or(0, |(_, n)| *n);
            sink.writer.add_discarded(c, lost.saturating_sub(before))?;
        }
        let names = event_names(&s, &opts);
        let per_class = class_names(&names, &sink.per_class);
        let (missed_pages, missed_stored, sd) =
            (sink.missed_pages, sink.missed_stored, sink.statedump_events);
        let discarded = sink.writer.discarded();
        let conv = sink.conv.stats.clone();
        let rebuilt_switches = sink.rebuilt_switches();
        let st = sink
            .writer
            .finish()
            .map_err(|e| annotate_partial(e.into(), output))?;
        Ok(RecordSummary {
            traces: vec![st.dir.clone()],
            events: st.events,
            per_cpu: st.per_cpu,
            per_class,
            discarded,
            missed_pages,
            missed_stored,
            statedump_events: sd,
            unknown_syscalls: conv.unknown_syscalls,
            malformed: conv.malformed,
            rebuilt_switches,
            bytes: st.bytes,
            elapsed: start.elapsed(),
            ..Default::default()
        })
    })();
    tracefs::set_umask(old_mask);
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            // The buffers stay for another try.
            inst.keep();
            return Err(e);
        }
    };
    inst.remove()?;
    let _ = std::fs::remove_file(&rec.path);
    Ok(summary)
}

/// Flight recorder with `--snapshot-on`: the pages are read as they fill, decoded for the
/// latency rules and kept in memory (`flight_recorder` bytes in total, the oldest dropped);
/// a snapshot writes the pages kept (and forgets them).
fn run_live(
    fl: &mut Flight<'_>,
    pipes: &mut [(u32, RawPipe)],
    deadline: Option<Instant>,
) -> Result<(), Error> {
    use std::collections::VecDeque;
    let (s, opts) = (fl.s, fl.opts);
    let ncpus = pipes.len().max(1);
    let budget =
        (opts.flight_recorder.unwrap_or(64 << 20) as usize / ncpus).max(2 * s.layout.page_size());
    let mut kept: Vec<(VecDeque<Vec<u8>>, usize)> =
        (0..pipes.len()).map(|_| (VecDeque::new(), 0)).collect();
    let mut tc = build_trace_class(opts, "live");
    let mut conv = converter(s, &mut tc)?;
    let maker = crate::trigger::InputMaker::new(&tc);
    let mut trigger = crate::trigger::Trigger::new(&opts.snapshot_on);
    trigger.ignore_tid(std::process::id() as i32);
    let mut debounce = crate::trigger::Debounce::new(
        opts.snapshot_debounce.as_nanos().min(i64::MAX as u128) as i64,
    );
    let t0 = Instant::now();
    let mut merged_mark = 0;
    let mut buf = vec![0u8; s.layout.page_size()];
    let mut vals: Vec<Value> = Vec::new();
    let mut inputs: Vec<(u64, u32, latency::Input)> = Vec::new();
    loop {
        let stop = signals::stop_requested() || deadline.is_some_and(|d| Instant::now() >= d);
        if stop {
            return Ok(());
        }
        fl.helpers.poll();
        let mut any_full = false;
        inputs.clear();
        for (i, (cpu, pipe)) in pipes.iter_mut().enumerate() {
            for _ in 0..256 {
                let Some(n) = pipe.read_page(&mut buf)? else {
                    break;
                };
                let page = buf[..n].to_vec();
                let info = decode_page(&s.layout, &page, |ts, rec| {
                    if let Some(id) = conv.convert(rec, &mut vals) {
                        if let Some(inp) = maker.input(id, *cpu, &vals) {
                            inputs.push((ts, *cpu, inp));
                        }
                    }
                })
                .map_err(|e| Error::Invalid(format!("CPU {cpu}: {e}")))?;
                let (q, bytes) = &mut kept[i];
                *bytes += page.len();
                q.push_back(page);
                while *bytes > budget && q.len() > 1 {
                    *bytes -= q.pop_front().map_or(0, |p| p.len());
                }
                if !info.full {
                    break;
                }
                any_full = true;
            }
        }
        inputs.sort_by_key(|(ts, cpu, _)| (*ts, *cpu));
        for (ts, _, inp) in &inputs {
            if let Some(f) = trigger.feed(*ts as i64, inp) {
                debounce.offer(f);
            }
        }
        let now = t0.elapsed().as_nanos() as i64;
        let by_signal = signals::take_snapshot_request();
        let fired = if by_signal {
            debounce.taken(now);
            None
        } else {
            debounce.due(now)
        };
        if fired.is_some() || by_signal {
            // The pages stay: a later snapshot holds the latest `flight_recorder` bytes too.
            let pages: Vec<(u32, Vec<u8>)> = pipes
                .iter()
                .zip(&kept)
                .flat_map(|((cpu, _), (q, _))| q.iter().map(|p| (*cpu, p.clone())))
                .collect();
            let dir = fl.snapshot(&pages)?;
            let more = debounce.merged - std::mem::replace(&mut merged_mark, debounce.merged);
            if let Some(f) = fired.as_ref().filter(|_| opts.verbose) {
                eprintln!(
                    "tracekit: snapshot {} ({}): {f}{}",
                    fl.n,
                    dir.display(),
                    if more > 0 {
                        format!(" (and {more} more firings within the debounce)")
                    } else {
                        String::new()
                    }
                );
            }
        }
        if !any_full {
            std::thread::sleep(opts.poll);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime() {
        assert_eq!(datetime_utc(0), "19700101T000000+0000");
        assert_eq!(datetime_utc(1_709_633_700), "20240305T101500+0000");
    }

    #[test]
    fn partial_name() {
        assert_eq!(
            partial_dir(Path::new("/a/b/kernel")),
            PathBuf::from("/a/b/.kernel.partial")
        );
    }
}
