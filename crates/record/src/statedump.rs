//! The LTTng statedump (`lttng_statedump_*` events), synthesized from /proc at the start of a
//! recording. `ProcSnapshot::read` does the reading; everything else is pure.

use ctf::value::Value;
use kernel::lttng::ev;
use std::path::Path;

/// One thread, as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadState {
    /// Thread id.
    pub tid: i32,
    /// Process id (thread group).
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// Command name.
    pub name: String,
    /// Kernel thread (`PF_KTHREAD`).
    pub kernel: bool,
    /// The state letter of `stat` (R, S, D, Z, ...).
    pub state: char,
    /// CPU it last ran on.
    pub cpu: u32,
}

/// One open file descriptor of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdState {
    /// Process id.
    pub pid: i32,
    /// File descriptor number.
    pub fd: i32,
    /// Open flags (`flags:` of fdinfo).
    pub flags: u32,
    /// What it refers to (the `/proc/PID/fd/FD` link).
    pub path: String,
}

/// What the statedump reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcSnapshot {
    /// Every thread.
    pub threads: Vec<ThreadState>,
    /// Open file descriptors of every process.
    pub fds: Vec<FdState>,
    /// `(kernel dev_t, disk name)`.
    pub block_devices: Vec<(u32, String)>,
    /// `(irq, name, action)` from /proc/interrupts.
    pub interrupts: Vec<(u32, String, String)>,
    /// One per CPU, from /proc/cpuinfo.
    pub cpus: Vec<CpuInfo>,
}

/// What the statedump says of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuInfo {
    /// `processor`.
    pub cpu_id: u16,
    /// `vendor_id`.
    pub vendor: String,
    /// `cpu family`.
    pub family: u8,
    /// `model`.
    pub model: u8,
    /// `model name`.
    pub model_name: String,
    /// `physical id`.
    pub physical_id: u16,
    /// `core id`.
    pub core_id: u16,
    /// `cpu cores`.
    pub cores: u16,
}

/// Parses /proc/interrupts: numbered lines `N: counts… chip… name[, name…]`. The action is the
/// last column (the handlers' names), the name the chip and hardware IRQ before it.
pub fn parse_interrupts(text: &str) -> Vec<(u32, String, String)> {
    let mut lines = text.lines();
    let ncpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.trim().parse().ok()?;
            let cols: Vec<&str> = rest.split_whitespace().skip(ncpus).collect();
            let action = cols.last().map(|s| s.to_string()).unwrap_or_default();
            let name = cols[..cols.len().saturating_sub(1)].join(" ");
            Some((irq, name, action))
        })
        .collect()
}

/// Parses /proc/cpuinfo (x86 keys; missing ones stay 0 or empty).
pub fn parse_cpuinfo(text: &str) -> Vec<CpuInfo> {
    let mut out = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut c = CpuInfo::default();
        for line in block.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k.trim() {
                "processor" => c.cpu_id = v.parse().unwrap_or(0),
                "vendor_id" => c.vendor = v.to_string(),
                "cpu family" => c.family = v.parse().unwrap_or(0),
                "model" => c.model = v.parse().unwrap_or(0),
                "model name" => c.model_name = v.to_string(),
                "physical id" => c.physical_id = v.parse().unwrap_or(0),
                "core id" => c.core_id = v.parse().unwrap_or(0),
                "cpu cores" => c.cores = v.parse().unwrap_or(0),
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

const PF_KTHREAD: u64 = 0x0020_0000;

/// Parses a `/proc/PID/task/TID/stat` line into (tid, name, state, ppid, flags, cpu).
pub fn parse_stat(line: &str) -> Option<(i32, String, char, i32, u64, u32)> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let tid = line[..open].trim().parse().ok()?;
    let name = line[open + 1..close].to_string();
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    // rest[0] = state (field 3), rest[1] = ppid (4), rest[6] = flags (9), rest[36] = cpu (39).
    let state = rest.first()?.chars().next()?;
    let ppid = rest.get(1)?.parse().ok()?;
    let flags = rest.get(6)?.parse().ok()?;
    let cpu = rest.get(36).and_then(|c| c.parse().ok()).unwrap_or(0);
    Some((tid, name, state, ppid, flags, cpu))
}

/// Parses `/proc/partitions` into (kernel dev_t, name). The kernel `dev_t` is
/// `major << 20 | minor`, as the block events carry it.
pub fn parse_partitions(text: &str) -> Vec<(u32, String)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 4 {
                return None;
            }
            let major: u32 = f[0].parse().ok()?;
            let minor: u32 = f[1].parse().ok()?;
            Some(((major << 20) | minor, f[3].to_string()))
        })
        .collect()
}

/// Parses the `flags:` line of `/proc/PID/fdinfo/FD` (octal).
pub fn parse_fdinfo_flags(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
}

/// LTTng's process status values.
fn lttng_status(state: char) -> i64 {
    match state {
        'R' => 6,             // LTTNG_RUN
        'S' | 'D' | 'I' => 5, // LTTNG_WAIT
        'Z' => 4,             // LTTNG_ZOMBIE
        'X' => 7,             // LTTNG_DEAD
        _ => 0,               // LTTNG_UNNAMED
    }
}

/// A stand-in for the kernel's `files_struct` address: one per process, stable within a
/// trace (the real address is not visible from user space).
fn file_table_address(pid: i32) -> u64 {
    0xffff_8000_0000_0000 | pid as u64
}

impl ProcSnapshot {
    /// Reads /proc (or another procfs root). Processes that vanish while being read are
    /// skipped.
    pub(crate) fn read(proc_root: &Path) -> std::io::Result<Self> {
        let mut snap = ProcSnapshot::default();
        let mut pids: Vec<i32> = std::fs::read_dir(proc_root)?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        pids.sort_unstable();
        for pid in pids {
            let pdir = proc_root.join(pid.to_string());
            let Ok(tasks) = std::fs::read_dir(pdir.join("task")) else {
                continue;
            };
            let mut tids: Vec<i32> = tasks
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect();
            tids.sort_unstable();
            let mut kernel = false;
            for tid in tids {
                let Ok(stat) =
                    std::fs::read_to_string(pdir.join("task").join(tid.to_string()).join("stat"))
                else {
                    continue;
                };
                if let Some((tid, name, state, ppid, flags, cpu)) = parse_stat(&stat) {
                    kernel = flags & PF_KTHREAD != 0;
                    snap.threads.push(ThreadState {
                        tid,
                        pid,
                        ppid,
                        name,
                        kernel,
                        state,
                        cpu,
                    });
                }
            }
            if kernel {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(pdir.join("fd")) else {
                continue;
            };
            let mut fdv: Vec<(i32, String)> = fds
                .filter_map(|e| {
                    let e = e.ok()?;
                    let fd = e.file_name().to_str()?.parse().ok()?;
                    let target = std::fs::read_link(e.path()).ok()?;
                    Some((fd, target.to_string_lossy().into_owned()))
                })
                .collect();
            fdv.sort();
            for (fd, path) in fdv {
                let flags = std::fs::read_to_string(pdir.join("fdinfo").join(fd.to_string()))
                    .ok()
                    .and_then(|t| parse_fdinfo_flags(&t))
                    .unwrap_or(0);
                snap.fds.push(FdState {
                    pid,
                    fd,
                    flags,
                    path,
                });
            }
        }
        if let Ok(p) = std::fs::read_to_string(proc_root.join("partitions")) {
            snap.block_devices = parse_partitions(&p);
        }
        if let Ok(p) = std::fs::read_to_string(proc_root.join("interrupts")) {
            snap.interrupts = parse_interrupts(&p);
        }
        if let Ok(p) = std::fs::read_to_string(proc_root.join("cpuinfo")) {
            snap.cpus = parse_cpuinfo(&p);
        }
        Ok(snap)
    }

    /// The statedump events, in order: `(class id, payload)`.
    pub fn events(&self) -> Vec<(u64, Vec<Value>)> {
        let mut v = vec![(ev::STATEDUMP_START, vec![])];
        for t in &self.threads {
            v.push((
                ev::STATEDUMP_PROCESS,
                vec![
                    Value::I64(t.tid as i64),
                    Value::I64(t.pid as i64),
                    Value::I64(t.ppid as i64),
                    Value::Str(t.name.as_bytes().iter().take(15).copied().collect()),
                    Value::I64(t.kernel as i64), // LTTNG_USER_THREAD 0, LTTNG_KERNEL_THREAD 1
                    Value::I64(0),               // mode: LTTNG_MODE_UNKNOWN
                    Value::I64(0),               // submode: LTTNG_UNKNOWN
                    Value::I64(lttng_status(t.state)),
                    Value::U64(t.cpu as u64),
                    Value::U64(file_table_address(t.pid)),
                ],
            ));
        }
        for f in &self.fds {
            // fmode: FMODE_READ 1, FMODE_WRITE 2, from the access mode of the flags.
            let fmode = match f.flags & 3 {
                0 => 1,
                1 => 2,
                _ => 3,
            };
            v.push((
                ev::STATEDUMP_FD,
                vec![
                    Value::U64(file_table_address(f.pid)),
                    Value::I64(f.fd as i64),
                    Value::U64(f.flags as u64),
                    Value::U64(fmode),
                    Value::str(&f.path),
                    Value::I64(f.pid as i64),
                ],
            ));
        }
        for (dev, name) in &self.block_devices {
            v.push((
                ev::STATEDUMP_BLOCK,
                vec![Value::U64(*dev as u64), Value::str(name)],
            ));
        }
        for (irq, name, action) in &self.interrupts {
            v.push((
                ev::STATEDUMP_INTERRUPT,
                vec![
                    Value::U64(*irq as u64),
                    Value::str(name),
                    Value::str(action),
                ],
            ));
        }
        for c in &self.cpus {
            v.push((
                ev::STATEDUMP_CPU,
                vec![
                    Value::str(std::env::consts::ARCH),
                    Value::U64(c.cpu_id as u64),
                    Value::str(&c.vendor),
                    Value::U64(c.family as u64),
                    Value::U64(c.model as u64),
                    Value::str(&c.model_name),
                    Value::U64(c.physical_id as u64),
                    Value::U64(c.core_id as u64),
                    Value::U64(c.cores as u64),
                ],
            ));
        }
        v.push((ev::STATEDUMP_END, vec![]));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_line() {
        let l = "19010 (cat (x)) R 18963 18963 5729 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 \
                 266984 3133440 382 18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0";
        let (tid, name, st, ppid, flags, cpu) = parse_stat(l).unwrap();
        assert_eq!(
            (tid, name.as_str(), st, ppid),
            (19010, "cat (x)", 'R', 18963)
        );
        assert_eq!(flags, 4194304);
        assert_eq!(cpu, 1);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn partitions_and_fdinfo() {
        let p = "major minor  #blocks  name\n\n 254        0  268435456 vda\n 254 1 100 vda1\n";
        assert_eq!(
            parse_partitions(p),
            vec![(254 << 20, "vda".into()), ((254 << 20) | 1, "vda1".into())]
        );
        assert_eq!(
            parse_fdinfo_flags("pos:\t0\nflags:\t0100002\n"),
            Some(0o100002)
        );
    }

    #[test]
    fn events_in_order() {
        let s = ProcSnapshot {
            threads: vec![ThreadState {
                tid: 5,
                pid: 5,
                ppid: 1,
                name: "a-very-long-thread-name".into(),
                kernel: false,
                state: 'S',
                cpu: 1,
            }],
            fds: vec![FdState {
                pid: 5,
                fd: 0,
                flags: 0o100002,
                path: "/dev/null".into(),
            }],
            block_devices: vec![(1, "vda".into())],
            interrupts: vec![(
                24,
                "PCI-MSIX-0000:00:03.0 0-edge".into(),
                "virtio0-config".into(),
            )],
            cpus: vec![CpuInfo {
                cpu_id: 0,
                vendor: "AuthenticAMD".into(),
                ..Default::default()
            }],
        };
        let evs = s.events();
        let ids: Vec<u64> = evs.iter().map(|e| e.0).collect();
        assert_eq!(
            ids,
            vec![
                ev::STATEDUMP_START,
                ev::STATEDUMP_PROCESS,
                ev::STATEDUMP_FD,
                ev::STATEDUMP_BLOCK,
                ev::STATEDUMP_INTERRUPT,
                ev::STATEDUMP_CPU,
                ev::STATEDUMP_END
            ]
        );
        assert_eq!(evs[1].1[3], Value::str("a-very-long-thr"));
        assert_eq!(evs[1].1[7], Value::I64(5));
        assert_eq!(evs[2].1[3], Value::U64(3));
    }

    #[test]
    fn parses_interrupts_and_cpuinfo() {
        let ints = "           CPU0       CPU1\n  0:         38          0   IO-APIC   2-edge      timer\n 24:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio0-config\nNMI:          0          0   Non-maskable interrupts\n";
        assert_eq!(
            parse_interrupts(ints),
            vec![
                (0, "IO-APIC 2-edge".to_string(), "timer".to_string()),
                (
                    24,
                    "PCI-MSIX-0000:00:03.0 0-edge".to_string(),
                    "virtio0-config".to_string()
                ),
            ]
        );
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 3\ncpu cores\t: 2\n\nprocessor\t: 1\n";
        let cpus = parse_cpuinfo(info);
        assert_eq!(cpus.len(), 2);
        assert_eq!(
            cpus[0],
            CpuInfo {
                cpu_id: 0,
                vendor: "AuthenticAMD".into(),
                family: 25,
                model: 1,
                model_name: "AMD EPYC".into(),
                physical_id: 0,
                core_id: 3,
                cores: 2,
            }
        );
        assert_eq!(cpus[1].cpu_id, 1);
    }

    #[test]
    fn reads_own_proc() {
        let s = ProcSnapshot::read(Path::new("/proc")).unwrap();
        let me = std::process::id() as i32;
        assert!(s.threads.iter().any(|t| t.tid == me && t.pid == me));
    }
}
