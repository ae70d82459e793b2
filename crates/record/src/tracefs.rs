//! The I/O side: tracefs files, a private instance, per-CPU raw pipes, /proc and signals.

use crate::convert::{syscall_def, tracefs_names, SyscallDef};
use crate::format::{parse_format, parse_header_page, EventFormat, PageLayout};
use crate::Error;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

/// Reads a tracefs file with large reads. Some tracefs files (`events/header_page` on 6.18)
/// end at the first short read, which `read_to_string`'s 32-byte probe would hit.
pub fn read_file(path: &Path) -> Result<String, Error> {
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(path, e)),
        }
    }
    String::from_utf8(out).map_err(|e| {
        io_err(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })
}

/// A mounted tracefs.
#[derive(Debug, Clone)]
pub struct Tracefs {
    pub root: PathBuf,
}

impl Tracefs {
    /// Finds tracefs (`/sys/kernel/tracing`, then `/sys/kernel/debug/tracing`), mounting it on
    /// `/sys/kernel/tracing` when that directory exists but is empty.
    pub fn find(explicit: Option<&Path>) -> Result<Self, Error> {
        if let Some(p) = explicit {
            return if p.join("instances").is_dir() {
                Ok(Tracefs { root: p.into() })
            } else {
                Err(Error::NoTracefs(format!(
                    "{} is not a tracefs mount (no instances/ directory)",
                    p.display()
                )))
            };
        }
        let std_root = Path::new("/sys/kernel/tracing");
        for p in [std_root, Path::new("/sys/kernel/debug/tracing")] {
            if p.join("instances").is_dir() {
                return Ok(Tracefs { root: p.into() });
            }
        }
        if std_root.is_dir()
            && mount_tracefs(std_root).is_ok()
            && std_root.join("instances").is_dir()
        {
            eprintln!("tracekit: mounted tracefs on {}", std_root.display());
            return Ok(Tracefs {
                root: std_root.into(),
            });
        }
        Err(Error::NoTracefs(
            "tracefs is not mounted and could not be mounted (try `mount -t tracefs nodev \
             /sys/kernel/tracing`; the kernel needs CONFIG_FTRACE)"
                .into(),
        ))
    }

    /// Reads a file under the tracefs root.
    pub fn read(&self, rel: &str) -> Result<String, Error> {
        read_file(&self.root.join(rel))
    }

    /// The ring-buffer page layout.
    pub fn page_layout(&self) -> Result<PageLayout, Error> {
        parse_header_page(&self.read("events/header_page")?)
            .map_err(|e| Error::Format(format!("events/header_page: {e}")))
    }

    /// The format of `system/event`; a clear error when the kernel does not have it.
    pub fn event_format(&self, system: &str, event: &str) -> Result<EventFormat, Error> {
        let rel = format!("events/{system}/{event}/format");
        if !self.root.join(&rel).exists() {
            return Err(Error::EventMissing(format!("{system}:{event}")));
        }
        parse_format(&self.read(&rel)?).map_err(|e| Error::Format(format!("{rel}: {e}")))
    }

    /// The syscall definitions: numbers from the built-in table, names and arguments from
    /// `events/syscalls/sys_enter_<name>/format`. Syscalls without a format are left out (and
    /// are recorded as `syscall_*_unknown`).
    pub fn syscall_defs(&self) -> Vec<SyscallDef> {
        let mut v = Vec::new();
        for &(nr, name) in crate::syscall_table::X86_64 {
            for n in tracefs_names(name) {
                if let Ok(f) = self.event_format("syscalls", &format!("sys_enter_{n}")) {
                    v.push(syscall_def(nr, &n, &f));
                    break;
                }
            }
        }
        v
    }
}

fn mount_tracefs(at: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    let src = CString::new("nodev").unwrap();
    let ty = CString::new("tracefs").unwrap();
    let target = CString::new(at.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: valid NUL-terminated strings; no data argument.
    let r = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            ty.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Counters of `per_cpu/cpuN/stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStats {
    pub entries: u64,
    pub overrun: u64,
    pub commit_overrun: u64,
    pub dropped: u64,
    pub read: u64,
}

impl CpuStats {
    /// Events lost, all causes: overwritten (overrun, commit overrun) or dropped when the
    /// buffer was full.
    pub fn lost(&self) -> u64 {
        self.overrun + self.commit_overrun + self.dropped
    }
}

/// Parses a `per_cpu/cpuN/stats` file.
pub fn parse_cpu_stats(text: &str) -> CpuStats {
    let mut s = CpuStats::default();
    for l in text.lines() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let Ok(v) = v.trim().parse::<u64>() else {
            continue;
        };
        match k.trim() {
            "entries" => s.entries = v,
            "overrun" => s.overrun = v,
            "commit overrun" => s.commit_overrun = v,
            "dropped events" => s.dropped = v,
            "read events" => s.read = v,
            _ => {}
        }
    }
    s
}

/// A private tracefs instance (`instances/<name>`), removed when dropped.
pub struct Instance {
    pub dir: PathBuf,
    removed: bool,
}

impl Instance {
    /// Removes `instances/tracekit-PID` left by recorders that died without cleaning up
    /// (SIGKILL). Returns the names removed.
    pub fn remove_stale(tfs: &Tracefs) -> Vec<String> {
        let mut removed = Vec::new();
        let Ok(rd) = std::fs::read_dir(tfs.root.join("instances")) else {
            return removed;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix("tracekit-") else {
                continue;
            };
            if pid.parse::<u32>().is_ok() && !owner_alive(pid, &e.path()) {
                // A flight recorder's buffers (overwrite mode) are kept for `tracekit recover`.
                let kept = std::fs::read_to_string(e.path().join("options/overwrite"))
                    .is_ok_and(|v| v.trim() == "1");
                if kept {
                    // Frozen: what it held when its recorder died stays for the recovery.
                    let _ = std::fs::write(e.path().join("tracing_on"), "0");
                    eprintln!(
                        "tracekit: kept the tracefs instance {name} of a dead flight recorder \
                         (`tracekit recover` its output directory to get its buffers)"
                    );
                    continue;
                }
                let _ = std::fs::write(e.path().join("tracing_on"), "0");
                if std::fs::remove_dir(e.path()).is_ok() {
                    removed.push(name);
                }
            }
        }
        removed
    }

    /// Creates the instance, with tracing off.
    pub fn create(tfs: &Tracefs, name: &str) -> Result<Self, Error> {
        let dir = tfs.root.join("instances").join(name);
        std::fs::create_dir(&dir).map_err(|e| io_err(&dir, e))?;
        let inst = Instance {
            dir,
            removed: false,
        };
        inst.write("tracing_on", "0")?;
        Ok(inst)
    }

    /// An instance left by a recorder that died (a flight recorder's, for recovery).
    pub fn open_existing(dir: &Path) -> Result<Self, Error> {
        if !dir.join("per_cpu").is_dir() {
            return Err(Error::Invalid(format!(
                "{}: no such tracefs instance (removed, or the machine rebooted: the buffers \
                 are gone)",
                dir.display()
            )));
        }
        Ok(Instance {
            dir: dir.to_path_buf(),
            removed: false,
        })
    }

    /// Writes a value to a file of the instance.
    pub fn write(&self, rel: &str, value: &str) -> Result<(), Error> {
        let p = self.dir.join(rel);
        std::fs::write(&p, value).map_err(|e| io_err(&p, e))
    }

    /// Reads a file of the instance.
    pub fn read(&self, rel: &str) -> Result<String, Error> {
        read_file(&self.dir.join(rel))
    }

    /// Sets the filter of `system/event`; a refused filter is reported with the kernel's
    /// explanation (the instance's `error_log`).
    pub fn set_filter(&self, system: &str, event: &str, filter: &str) -> Result<(), Error> {
        let rel = format!("events/{system}/{event}/filter");
        if let Err(e) = self.write(&rel, filter) {
            let log = self.read("error_log").unwrap_or_default();
            let last: Vec<&str> = log.lines().rev().take(3).collect();
            let why = last.into_iter().rev().collect::<Vec<_>>().join(" | ");
            return Err(Error::Invalid(format!(
                "the kernel refused the filter `{filter}` of {system}:{event} ({e}){}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                }
            )));
        }
        Ok(())
    }

    /// Enables `system/event` and checks that it reads back as enabled.
    pub fn enable_event(&self, system: &str, event: &str) -> Result<(), Error> {
        let rel = format!("events/{system}/{event}/enable");
        if !self.dir.join(&rel).exists() {
            return Err(Error::EventMissing(format!("{system}:{event}")));
        }
        self.write(&rel, "1")?;
        let back = self.read(&rel)?;
        if !back.trim_start().starts_with('1') {
            return Err(Error::Invalid(format!(
                "{system}:{event} did not stay enabled (reads back {:?})",
                back.trim()
            )));
        }
        Ok(())
    }

    /// The CPUs with a per-CPU buffer.
    pub fn cpus(&self) -> Result<Vec<u32>, Error> {
        let p = self.dir.join("per_cpu");
        let mut v: Vec<u32> = std::fs::read_dir(&p)
            .map_err(|e| io_err(&p, e))?
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("cpu")?
                    .parse()
                    .ok()
            })
            .collect();
        v.sort_unstable();
        Ok(v)
    }

    /// Opens `per_cpu/cpuN/trace_pipe_raw`, non-blocking.
    pub fn open_pipe(&self, cpu: u32) -> Result<RawPipe, Error> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = self.dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .map_err(|e| io_err(&p, e))?;
        Ok(RawPipe { file: f, path: p })
    }

    /// The counters of one CPU buffer.
    pub fn stats(&self, cpu: u32) -> Result<CpuStats, Error> {
        Ok(parse_cpu_stats(
            &self.read(&format!("per_cpu/cpu{cpu}/stats"))?,
        ))
    }

    /// Leaves the instance in place (its buffers kept for another try).
    pub fn keep(mut self) {
        self.removed = true;
    }

    /// Stops tracing and removes the instance (also done on drop).
    pub fn remove(mut self) -> Result<(), Error> {
        self.do_remove()
    }

    fn do_remove(&mut self) -> Result<(), Error> {
        if self.removed {
            return Ok(());
        }
        let _ = self.write("tracing_on", "0");
        let _ = self.write("events/enable", "0");
        let mut last = None;
        for _ in 0..50 {
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) => {
                    last = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        }
        Err(io_err(&self.dir, last.unwrap()))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.do_remove() {
            eprintln!("tracekit: could not remove the tracefs instance: {e}");
        }
    }
}

/// Whether the process `pid` that named a tracefs instance (or probe group) created at
/// `created` is still the one that created it: the pid exists and that process started before
/// the instance was made (after a recorder dies, its pid can go to another process, which
/// must not keep the dead recorder's instance tracing).
fn owner_started_before(pid: &str, created: Option<std::time::SystemTime>) -> bool {
    let Ok(stat) = std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")) else {
        return false;
    };
    let (Some(created), Some(start)) = (created, process_start(&stat)) else {
        // Cannot tell: an existing pid keeps its instance.
        return true;
    };
    // Start times are known to a clock tick and the boot time to a second.
    start <= created + std::time::Duration::from_secs(2)
}

/// The start time of a process from its `/proc/PID/stat` text (field 22, in clock ticks since
/// boot, and the boot time of `/proc/stat`).
fn process_start(stat: &str) -> Option<std::time::SystemTime> {
    // The command name (field 2) may hold spaces and parentheses: fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: plain sysconf query.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as u64 } else { 100 };
    Some(
        std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(btime)
            + std::time::Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / hz),
    )
}

/// Whether the recorder that made the instance directory `dir` (named after its pid) lives.
fn owner_alive(pid: &str, dir: &Path) -> bool {
    let created = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
    owner_started_before(pid, created)
}

/// Cleans up after the recorder if it is killed (SIGKILL cannot be caught): a shell waiting
/// on a pipe from the recorder. When the recorder ends normally it says so and the shell
/// exits; when the recorder dies the pipe closes and the shell turns tracing off, and for a
/// streaming recording removes the instance and the run's dynamic probes (a flight
/// recorder's instance is kept, frozen, for `tracekit recover`).
pub struct Watchdog {
    child: Option<(std::process::Child, std::process::ChildStdin)>,
}

impl Watchdog {
    /// Starts the watchdog of `inst`; `remove` says whether to remove the instance (and the
    /// probes `probes`: (file, `group/event`)) or only stop its tracing. A watchdog that
    /// cannot start is reported and left out (the next run removes what is left).
    pub fn start(tfs: &Tracefs, inst: &Instance, remove: bool, probes: &[(&str, String)]) -> Self {
        use std::os::unix::process::CommandExt;
        let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
        let mut script =
            String::from("trap '' INT TERM HUP QUIT; read -r x; [ \"$x\" = done ] && exit 0; ");
        script.push_str(&format!("echo 0 > {}; ", q(&inst.dir.join("tracing_on"))));
        if remove {
            script.push_str(&format!(
                "echo 0 > {} 2>/dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do rmdir {} \
                 2>/dev/null && break; sleep 0.1; done; ",
                q(&inst.dir.join("events/enable")),
                q(&inst.dir)
            ));
            for (file, ev) in probes {
                script.push_str(&format!(
                    "echo '-:{ev}' >> {} 2>/dev/null; ",
                    q(&tfs.root.join(file))
                ));
            }
        }
        script.push_str("exit 0");
        let spawned = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Out of the terminal's process group: Ctrl-C reaches the recorder only.
            .process_group(0)
            .spawn();
        match spawned {
            Ok(mut c) => {
                let stdin = c.stdin.take();
                Watchdog {
                    child: stdin.map(|s| (c, s)),
                }
            }
            Err(e) => {
                eprintln!(
                    "tracekit: no cleanup watchdog (/bin/sh: {e}): a killed recorder leaves \
                     its tracefs instance until the next run"
                );
                Watchdog { child: None }
            }
        }
    }

    /// The recorder ends normally: the watchdog exits without touching anything.
    pub fn done(&mut self) {
        if let Some((mut c, mut stdin)) = self.child.take() {
            use std::io::Write;
            let _ = stdin.write_all(b"done\n");
            drop(stdin);
            let _ = c.wait();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done();
    }
}

/// Dynamic events (`kprobe_events`, `uprobe_events` lines) defined for a run, removed when
/// dropped (after the instance using them: an enabled event cannot be removed).
pub struct DynamicEvents {
    root: PathBuf,
    /// (file, event `group/name`).
    defined: Vec<(&'static str, String)>,
}

impl DynamicEvents {
    /// None defined yet.
    pub fn new(tfs: &Tracefs) -> Self {
        DynamicEvents {
            root: tfs.root.clone(),
            defined: Vec::new(),
        }
    }

    /// Defines an event: `p:GROUP/NAME PLACE` (or `r:`), in `kprobe_events` when `kernel`,
    /// else `uprobe_events`.
    pub fn define(&mut self, kernel: bool, line: &str) -> Result<(), Error> {
        let file = if kernel {
            "kprobe_events"
        } else {
            "uprobe_events"
        };
        let p = self.root.join(file);
        if !p.exists() {
            return Err(Error::Invalid(format!(
                "{}: missing: this kernel has no {} (CONFIG_{}_EVENTS)",
                p.display(),
                if kernel {
                    "kprobe events"
                } else {
                    "uprobe events"
                },
                if kernel { "KPROBE" } else { "UPROBE" }
            )));
        }
        use std::io::Write;
        let r = std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = r {
            let log = read_file(&self.root.join("error_log")).unwrap_or_default();
            let why: Vec<&str> = log.lines().rev().take(3).collect();
            let why = why.into_iter().rev().collect::<Vec<_>>().join(" | ");
            return Err(Error::Invalid(format!(
                "the kernel refused the probe `{line}` ({e}){}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                }
            )));
        }
        let ev = line
            .split_whitespace()
            .next()
            .and_then(|h| h.split_once(':'))
            .map(|(_, e)| e.to_string())
            .unwrap_or_default();
        self.defined.push((file, ev));
        Ok(())
    }

    /// Removes the probe groups `tkprobe_PID` of recorders that died without cleaning up.
    /// Returns the groups removed.
    pub fn remove_stale(tfs: &Tracefs) -> Vec<String> {
        let mut removed = Vec::new();
        for file in ["kprobe_events", "uprobe_events"] {
            let p = tfs.root.join(file);
            let Ok(text) = read_file(&p) else { continue };
            for l in text.lines() {
                let Some((_, ev)) = l.split_whitespace().next().and_then(|h| h.split_once(':'))
                else {
                    continue;
                };
                let Some(pid) = ev
                    .strip_prefix("tkprobe_")
                    .and_then(|r| r.split('/').next())
                else {
                    continue;
                };
                // No creation time for a probe: a live pid keeps its probes.
                if pid.parse::<u32>().is_ok() && !owner_started_before(pid, None) {
                    use std::io::Write;
                    let ok = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&p)
                        .and_then(|mut f| f.write_all(format!("-:{ev}\n").as_bytes()))
                        .is_ok();
                    if ok {
                        removed.push(ev.to_string());
                    }
                }
            }
        }
        removed
    }
}

impl DynamicEvents {
    /// The events defined: (file, `group/event`).
    pub fn defined(&self) -> &[(&'static str, String)] {
        &self.defined
    }
}

impl Drop for DynamicEvents {
    fn drop(&mut self) {
        use std::io::Write;
        for (file, ev) in self.defined.drain(..).rev() {
            let p = self.root.join(file);
            let r = std::fs::OpenOptions::new()
                .append(true)
                .open(&p)
                .and_then(|mut f| f.write_all(format!("-:{ev}\n").as_bytes()));
            if let Err(e) = r {
                eprintln!("tracekit: could not remove the probe {ev}: {e}");
            }
        }
    }
}

/// A per-CPU `trace_pipe_raw`, read one page at a time.
pub struct RawPipe {
    file: File,
    pub path: PathBuf,
}

impl RawPipe {
    /// Reads one page into `buf`: `Ok(None)` when nothing is ready.
    pub fn read_page(&mut self, buf: &mut [u8]) -> Result<Option<usize>, Error> {
        loop {
            match self.file.read(buf) {
                Ok(0) => return Ok(None),
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_err(&self.path, e)),
            }
        }
    }
}

/// Signals the recorder reacts to.
pub mod signals {
    use std::sync::atomic::{AtomicBool, Ordering};

    pub static STOP: AtomicBool = AtomicBool::new(false);
    pub static SNAPSHOT: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_stop(_: libc::c_int) {
        STOP.store(true, Ordering::SeqCst);
    }

    extern "C" fn on_snapshot(_: libc::c_int) {
        SNAPSHOT.store(true, Ordering::SeqCst);
    }

    fn install(sig: libc::c_int, h: extern "C" fn(libc::c_int)) {
        // SAFETY: the handlers only store to atomics (async-signal-safe).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = h as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }

    /// SIGINT and SIGTERM request a clean stop; SIGUSR1 a flight-recorder snapshot.
    pub fn install_handlers() {
        STOP.store(false, Ordering::SeqCst);
        SNAPSHOT.store(false, Ordering::SeqCst);
        install(libc::SIGINT, on_stop);
        install(libc::SIGTERM, on_stop);
        install(libc::SIGUSR1, on_snapshot);
    }

    pub fn stop_requested() -> bool {
        STOP.load(Ordering::SeqCst)
    }

    pub fn take_snapshot_request() -> bool {
        SNAPSHOT.swap(false, Ordering::SeqCst)
    }
}

/// CLOCK_MONOTONIC and CLOCK_REALTIME now, in ns.
pub fn clocks_ns() -> (u64, i128) {
    let get = |c| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid pointer to a timespec.
        unsafe { libc::clock_gettime(c, &mut ts) };
        ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
    };
    let r1 = get(libc::CLOCK_REALTIME);
    let m = get(libc::CLOCK_MONOTONIC);
    let r2 = get(libc::CLOCK_REALTIME);
    (m as u64, (r1 + r2) / 2)
}

/// Whether the process runs as root.
pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Sets the file-creation mask, returning the previous one.
pub fn set_umask(mask: u32) -> u32 {
    // SAFETY: plain syscall.
    unsafe { libc::umask(mask as libc::mode_t) as u32 }
}

/// The thread-group id of a live thread, from /proc.
pub fn proc_tgid(tid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A task's name (`/proc/TID/comm`), while it lives.
pub fn proc_comm(tid: i32) -> Option<Vec<u8>> {
    let mut s = std::fs::read(format!("/proc/{tid}/comm")).ok()?;
    if s.last() == Some(&b'\n') {
        s.pop();
    }
    Some(s)
}

/// Random bytes for UUIDs.
pub fn random16() -> [u8; 16] {
    let mut b = [0u8; 16];
    if File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        let (m, r) = clocks_ns();
        b[..8].copy_from_slice(&m.to_le_bytes());
        b[8..].copy_from_slice(&(r as u64 ^ std::process::id() as u64).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_file() {
        let t = "entries: 5\noverrun: 7\ncommit overrun: 1\nbytes: 100\noldest event ts:     \
                 0.000000\nnow ts:  2404.291355\ndropped events: 3\nread events: 9\n";
        let s = parse_cpu_stats(t);
        assert_eq!(s.entries, 5);
        assert_eq!(s.lost(), 11);
        assert_eq!(s.read, 9);
    }
}
