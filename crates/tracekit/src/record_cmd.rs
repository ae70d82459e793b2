//! `tracekit record`: record a kernel trace through tracefs, written as LTTng 2.13 CTF.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Trace directory to create (written as `.NAME.partial`, renamed when complete). Name it
    /// `.../kernel` for lttng-analyses. With --flight-recorder, snapshots go to
    /// `DIR/snapshot-N/kernel`.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Stop after this many seconds (default: until Ctrl-C / SIGTERM).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Flight-recorder mode: in-memory ring buffers of SIZE in total (e.g. 64M), overwritten;
    /// each SIGUSR1 writes a snapshot.
    #[arg(long, value_name = "SIZE", value_parser = record::cli::parse_size)]
    pub flight_recorder: Option<u64>,
    /// With --flight-recorder: also write a snapshot when a latency rule fires, e.g.
    /// `syscall>50ms`, `wakeup>5ms`, `offcpu>100ms`, `block>20ms`, `irq>1ms` (repeatable).
    /// The events are then read live and kept in memory (SIZE in total).
    #[arg(
        long = "snapshot-on",
        value_name = "RULE",
        requires = "flight_recorder"
    )]
    pub snapshot_on: Vec<record::trigger::Rule>,
    /// At most one rule-triggered snapshot per this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub snapshot_debounce_ms: u64,
    /// Events: groups (sched, irq, timer, syscalls, block, kmem, net, all) or names
    /// (sched_switch, sched:sched_switch), star-globs allowed (sched_*), and system calls by
    /// name (syscall:open*), comma-separated. Default: sched,irq,timer,syscalls,block,net.
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// Record only these system calls (names, star-globs allowed; comma-separated,
    /// repeatable), as LTTng's `--syscall`.
    #[arg(long = "syscall", value_name = "NAME", value_delimiter = ',')]
    pub syscall: Vec<String>,
    /// Keep only the events an LTTng filter expression admits, evaluated in the kernel:
    /// `EXPR` for every event, `EVENTS=EXPR` for a selection (e.g.
    /// `sched_switch=prev_tid == 42`, `$ctx.procname == "ba*" && fd > 2`). Repeatable.
    #[arg(long = "filter", value_name = "[EVENTS=]EXPR")]
    pub filter: Vec<record::filter::EventFilter>,
    /// Keep the recorder's own system calls (left out by default).
    #[arg(long)]
    pub trace_self: bool,
    /// Take kernel (and user, where frame pointers allow) stacks where a latency rule fires:
    /// `syscall>10ms` (a thread blocked in a slow system call), `offcpu>5ms` (the sleeper's
    /// stack and its waker's), `wakeup>1ms`, `block>20ms`; repeatable. The thresholds are
    /// checked in the kernel by eBPF (built with the `bpf` feature); the trace gets
    /// `latency_tracker_*` stack events and a `tracekit_ksym` symbol table.
    #[arg(long = "stacks", value_name = "RULE")]
    pub stacks: Vec<record::trigger::Rule>,
    /// With --stacks: kernel stacks only (no user-stack walks).
    #[arg(long)]
    pub no_user_stacks: bool,
    /// A kprobe on a kernel function (`SYMBOL[+OFFSET]`) or address (`0xADDR`), as LTTng's
    /// `--probe`: an event named after it with the probed `ip`. Repeatable.
    #[arg(long = "probe", value_name = "SYMBOL[+OFF]|ADDR", value_parser = record::probes::ProbeSpec::kprobe)]
    pub probe: Vec<record::probes::ProbeSpec>,
    /// A kretprobe pair on a kernel function, as LTTng's `--function`: `SYMBOL_entry` and
    /// `SYMBOL_exit` events (`ip`, `parent_ip`). Repeatable.
    #[arg(long = "function", value_name = "SYMBOL", value_parser = record::probes::ProbeSpec::function)]
    pub function: Vec<record::probes::ProbeSpec>,
    /// A uprobe, as LTTng's `--userspace-probe`: `elf:PATH:SYMBOL` (a function of a binary)
    /// or `sdt:PATH:PROVIDER:NAME` (a USDT probe site, its semaphore handled): events of
    /// every process running that binary, in the same trace as the kernel's. Repeatable.
    #[arg(long = "userspace-probe", value_name = "elf:PATH:SYMBOL|sdt:PATH:PROVIDER:NAME", value_parser = record::probes::ProbeSpec::userspace)]
    pub userspace_probe: Vec<record::probes::ProbeSpec>,
    /// A uprobe and a uretprobe pair on a function of a binary (`elf:PATH:SYMBOL`), as
    /// `--function` for the kernel's: `SYMBOL_entry` and `SYMBOL_exit` events (`ip`,
    /// `parent_ip`) that `tracekit latency --tracker function` pairs. Repeatable.
    #[arg(long = "userspace-function", value_name = "elf:PATH:SYMBOL", value_parser = record::probes::ProbeSpec::userspace_function)]
    pub userspace_function: Vec<record::probes::ProbeSpec>,
    /// Do not read the system calls' string arguments (file names of openat, execve…) with the
    /// eBPF helper (built with the `bpf` feature only); they are then left empty.
    #[arg(long)]
    pub no_syscall_strings: bool,
    /// Record only these processes and their children (repeatable).
    #[arg(long)]
    pub pid: Vec<i32>,
    /// Add this offset (ns, may be negative) to every timestamp, to simulate another clock.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub clock_offset_ns: i64,
    /// `hostname` written in the trace environment.
    #[arg(long)]
    pub hostname: Option<String>,
    /// Per-CPU ring-buffer size in KiB.
    #[arg(long, default_value_t = 8192)]
    pub buffer_size_kb: u64,
    /// Record only the net events of this network device (repeatable).
    #[arg(long = "netdev", value_name = "NAME")]
    pub netdev: Vec<String>,
    /// Do not add IP/TCP headers to the net events with the eBPF helper (built with the `bpf`
    /// feature only).
    #[arg(long)]
    pub no_net_headers: bool,
    /// Leave out the statedump's file descriptors (`lttng_statedump_file_descriptor`): their
    /// LTTng 2.13 layout makes lttng-analyses 0.6.1 fail ("Cannot run analysis: 'pid'").
    #[arg(long)]
    pub no_statedump_fds: bool,
    /// Also stream the trace to a relay (`lttng-relayd`, `tracekit relay`) as it is recorded:
    /// `net://HOST[:CONTROL_PORT[:DATA_PORT]]` (5342 and 5343 by default); a live session,
    /// readable with `tracekit print net://HOST/host/HOSTNAME/SESSION` or babeltrace2's
    /// lttng-live while it records. The local trace is written too.
    #[arg(long, value_name = "URL", conflicts_with = "flight_recorder")]
    pub url: Option<record::relay::RelayTarget>,
    /// With --url: the relay session's name (default: the output directory's name).
    #[arg(long, value_name = "NAME", requires = "url")]
    pub session: Option<String>,
    /// With --url: the live timer in µs: how often open packets are sent and idle CPUs said
    /// quiet, bounding how late a live reader sees an event (LTTng's default, 1 s).
    #[arg(long, value_name = "US", default_value_t = 1_000_000, requires = "url")]
    pub live_timer: u64,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: &RecordArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let opts = record::RecordOptions {
        output: args.output.clone(),
        duration: record::cli::duration(args.duration)?,
        flight_recorder: args.flight_recorder,
        events: args.events.clone(),
        pids: args.pid.clone(),
        clock_offset_ns: args.clock_offset_ns,
        hostname: args.hostname.clone(),
        buffer_size_kb: args.buffer_size_kb,
        verbose: !args.quiet,
        net_headers: !args.no_net_headers,
        netdevs: args.netdev.clone(),
        snapshot_on: args.snapshot_on.clone(),
        statedump_fds: !args.no_statedump_fds,
        snapshot_debounce: Duration::from_millis(args.snapshot_debounce_ms),
        relay: args.url.clone(),
        session_name: args.session.clone(),
        live_timer: Duration::from_micros(args.live_timer),
        filters: args.filter.clone(),
        syscalls: args.syscall.clone(),
        trace_self: args.trace_self,
        stacks: args.stacks.clone(),
        user_stacks: !args.no_user_stacks,
        syscall_strings: !args.no_syscall_strings,
        probes: args
            .probe
            .iter()
            .chain(&args.function)
            .chain(&args.userspace_probe)
            .chain(&args.userspace_function)
            .cloned()
            .collect(),
        ..Default::default()
    };
    if !args.quiet {
        eprint!("{}", record::cli::banner(&opts));
    }
    let s = record::record(&opts)?;
    if !args.quiet {
        print!("{}", record::cli::summary_text(&s, !args.stacks.is_empty()));
    }
    Ok(ExitCode::SUCCESS)
}
