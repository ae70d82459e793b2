//! `--stacks RULE`: the records of the eBPF stacks helper (`bpf/stacks.bpf.c`) turned into
//! the stack events of [`kernel::lttng::stacks`], and the kernel symbol table that goes with
//! them. Pure: bytes in, event payloads out.

use crate::trigger::Rule;
use crate::Error;
use ctf::value::Value;
use kernel::lttng::stacks::ev;
use kernel::stacks::Symbols;
use latency::Tracker;

/// The thresholds (ns) of the `--stacks` rules, per rule kind (0: off); the smallest wins when
/// a kind is given twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackThresholds {
    /// `syscall>T`.
    pub syscall: u64,
    /// `offcpu>T`.
    pub offcpu: u64,
    /// `wakeup>T`.
    pub wakeup: u64,
    /// `block>T`.
    pub block: u64,
}

impl StackThresholds {
    /// The thresholds of some rules; `irq` has no stack to take.
    pub fn from_rules(rules: &[Rule]) -> Result<StackThresholds, Error> {
        let mut t = StackThresholds::default();
        for r in rules {
            let slot = match r.tracker {
                Tracker::Syscall => &mut t.syscall,
                Tracker::Offcpu => &mut t.offcpu,
                Tracker::Wakeup => &mut t.wakeup,
                Tracker::Block => &mut t.block,
                _ => {
                    return Err(Error::Invalid(format!(
                        "--stacks {r}: stacks are taken for syscall, offcpu, wakeup and block \
                         latencies only"
                    )))
                }
            };
            // A zero threshold would mean "off" in the kernel: 1 ns takes every occurrence.
            let ns = (r.threshold.max(1)) as u64;
            *slot = if *slot == 0 { ns } else { (*slot).min(ns) };
        }
        Ok(t)
    }

    /// Whether any rule is on.
    pub fn any(&self) -> bool {
        self.syscall + self.offcpu + self.wakeup + self.block > 0
    }
}

/// Frames per stack (the kernel's `perf_event_max_stack` default).
pub const MAX_FRAMES: usize = 127;
const HEADER: usize = 96;
/// Size of one record of the helper (`struct record` of `bpf/stacks.bpf.c`).
pub const RECORD_SIZE: usize = HEADER + 2 * 8 * MAX_FRAMES;

/// One record of the helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackRecord {
    /// CLOCK_MONOTONIC time of the record (ns).
    pub ts: u64,
    /// The latency (ns).
    pub delay: u64,
    /// When the measured interval began (CLOCK_MONOTONIC ns).
    pub start_ts: u64,
    /// System call number or sector, by kind.
    pub extra: u64,
    /// The event class id ([`kernel::lttng::stacks::ev`]).
    pub class: u64,
    /// The CPU it was taken on.
    pub cpu: u32,
    /// The thread whose stack it is.
    pub tid: i32,
    /// Its process.
    pub pid: i32,
    /// For a waker: the woken thread.
    pub other_tid: i32,
    /// For a waker: the woken thread's process.
    pub other_pid: i32,
    /// Command name.
    pub comm: Vec<u8>,
    /// For a waker: the woken thread's command name.
    pub other_comm: Vec<u8>,
    /// Kernel stack, innermost first.
    pub kstack: Vec<u64>,
    /// User stack, innermost first.
    pub ustack: Vec<u64>,
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]))
}

fn cstr(b: &[u8]) -> Vec<u8> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    b[..end].to_vec()
}

/// Reads `n` addresses from a stack area, given the byte count the helper filled (a negative
/// one is an error of the kernel's stack walk: no frames).
fn frames(area: &[u8], bytes: i32) -> Vec<u64> {
    let n = (bytes.max(0) as usize / 8).min(MAX_FRAMES);
    (0..n).map(|i| u64_at(area, i * 8)).collect()
}

impl StackRecord {
    /// Parses a record; `None` when it is too short or of an unknown kind.
    pub fn parse(b: &[u8]) -> Option<StackRecord> {
        if b.len() < RECORD_SIZE {
            return None;
        }
        let class = match u32_at(b, 32) {
            1 => ev::SYSCALL_STACK,
            2 => ev::OFFCPU_SWITCH,
            3 => ev::OFFCPU_WAKEUP,
            4 => ev::WAKEUP_STACK,
            5 => ev::BLOCK_STACK,
            _ => return None,
        };
        let kbytes = u32_at(b, 88) as i32;
        let ubytes = u32_at(b, 92) as i32;
        let kstack_at = HEADER;
        let ustack_at = HEADER + 8 * MAX_FRAMES;
        Some(StackRecord {
            ts: u64_at(b, 0),
            delay: u64_at(b, 8),
            start_ts: u64_at(b, 16),
            extra: u64_at(b, 24),
            class,
            cpu: u32_at(b, 36),
            tid: u32_at(b, 40) as i32,
            pid: u32_at(b, 44) as i32,
            other_tid: u32_at(b, 48) as i32,
            other_pid: u32_at(b, 52) as i32,
            comm: cstr(&b[56..72]),
            other_comm: cstr(&b[72..88]),
            kstack: frames(&b[kstack_at..ustack_at], kbytes),
            ustack: frames(&b[ustack_at..RECORD_SIZE], ubytes),
        })
    }

    /// The event payload, in the field order of the class; `offset` is added to `start_ts` as
    /// to the event timestamps.
    pub fn payload(&self, offset: i64, out: &mut Vec<Value>) {
        out.clear();
        out.extend([
            Value::Str(self.comm.clone()),
            Value::I64(self.tid as i64),
            Value::I64(self.pid as i64),
            Value::U64(self.start_ts.saturating_add_signed(offset)),
            Value::U64(self.delay),
        ]);
        match self.class {
            ev::SYSCALL_STACK => out.push(Value::I64(self.extra as i64)),
            ev::OFFCPU_WAKEUP => out.extend([
                Value::Str(self.other_comm.clone()),
                Value::I64(self.other_tid as i64),
                Value::I64(self.other_pid as i64),
            ]),
            ev::BLOCK_STACK => out.push(Value::U64(self.extra)),
            _ => {}
        }
        for s in [&self.kstack, &self.ustack] {
            out.push(Value::U64(s.len() as u64));
            out.push(Value::Array(s.iter().map(|&a| Value::U64(a)).collect()));
        }
    }
}

/// Drops the innermost frames of the tracing machinery that ran the helper (the BPF program,
/// the tracepoint's BPF runner and iterator), which a stack of the running task starts with.
pub fn trim_tracing_frames(kstack: &mut Vec<u64>, syms: &Symbols) {
    let n = kstack
        .iter()
        .take_while(|a| {
            syms.lookup(**a).is_some_and(|(s, _)| {
                s.name.starts_with("bpf_prog_")
                    || s.name.starts_with("bpf_trace_run")
                    || s.name.starts_with("__traceiter_")
                    || s.name.starts_with("__bpf_trace_")
                    || s.name.starts_with("bpf_trampoline_")
            })
        })
        .count();
    kstack.drain(..n);
}

/// The payload of a `tracekit_ksym` event.
pub fn ksym_payload(s: &kernel::stacks::Symbol) -> Vec<Value> {
    vec![
        Value::U64(s.address),
        Value::U64(s.size),
        Value::Str(s.name.as_bytes().to_vec()),
        Value::Str(s.module.as_bytes().to_vec()),
    ]
}

/// Reads `/proc/kallsyms`. With `kernel.kptr_restrict=2` the addresses read as zeros even for
/// root: the setting is lowered to 1 (addresses for CAP_SYSLOG only) for the read, then put
/// back. Returns the table and, when it is empty, why.
pub fn read_kallsyms() -> (Symbols, Option<String>) {
    const KPTR: &str = "/proc/sys/kernel/kptr_restrict";
    let read = || std::fs::read_to_string("/proc/kallsyms").map(|t| Symbols::parse_kallsyms(&t));
    match read() {
        Ok(s) if !s.is_empty() => return (s, None),
        Err(e) => return (Symbols::default(), Some(format!("/proc/kallsyms: {e}"))),
        Ok(_) => {}
    }
    let old = std::fs::read_to_string(KPTR).unwrap_or_default();
    if old.trim() == "2" && std::fs::write(KPTR, "1").is_ok() {
        let r = read();
        let _ = std::fs::write(KPTR, old.trim());
        if let Ok(s) = r {
            if !s.is_empty() {
                return (s, None);
            }
        }
    }
    (
        Symbols::default(),
        Some(format!(
            "/proc/kallsyms shows no addresses (kernel.kptr_restrict = {}): stacks are \
             recorded as bare addresses",
            old.trim()
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_bytes(kind: u32, kframes: &[u64], ubytes: i32) -> Vec<u8> {
        let mut b = vec![0u8; RECORD_SIZE];
        b[0..8].copy_from_slice(&1000u64.to_le_bytes());
        b[8..16].copy_from_slice(&300u64.to_le_bytes());
        b[16..24].copy_from_slice(&700u64.to_le_bytes());
        b[24..32].copy_from_slice(&35u64.to_le_bytes());
        b[32..36].copy_from_slice(&kind.to_le_bytes());
        b[36..40].copy_from_slice(&1u32.to_le_bytes());
        b[40..44].copy_from_slice(&42i32.to_le_bytes());
        b[44..48].copy_from_slice(&40i32.to_le_bytes());
        b[56..60].copy_from_slice(b"sync");
        b[88..92].copy_from_slice(&((kframes.len() * 8) as i32).to_le_bytes());
        b[92..96].copy_from_slice(&ubytes.to_le_bytes());
        for (i, f) in kframes.iter().enumerate() {
            b[HEADER + 8 * i..HEADER + 8 * i + 8].copy_from_slice(&f.to_le_bytes());
        }
        b
    }

    #[test]
    fn parses_records() {
        let b = record_bytes(1, &[0xffff_ffff_8100_0010, 0xffff_ffff_8100_0020], -14);
        let r = StackRecord::parse(&b).unwrap();
        assert_eq!(r.class, ev::SYSCALL_STACK);
        assert_eq!(
            (r.ts, r.delay, r.start_ts, r.cpu, r.tid, r.pid),
            (1000, 300, 700, 1, 42, 40)
        );
        assert_eq!(r.comm, b"sync");
        assert_eq!(r.kstack, vec![0xffff_ffff_8100_0010, 0xffff_ffff_8100_0020]);
        assert!(r.ustack.is_empty(), "a failed user walk gives no frames");
        let mut v = Vec::new();
        r.payload(5, &mut v);
        assert_eq!(v[3], Value::U64(705));
        assert_eq!(v[5], Value::I64(35));
        assert_eq!(v[6], Value::U64(2));
        assert!(StackRecord::parse(&b[..RECORD_SIZE - 1]).is_none());
        assert!(StackRecord::parse(&record_bytes(9, &[], 0)).is_none());
    }

    #[test]
    fn thresholds() {
        let rules: Vec<Rule> = ["syscall>10ms", "offcpu>5ms", "syscall>2ms"]
            .iter()
            .map(|r| r.parse().unwrap())
            .collect();
        let t = StackThresholds::from_rules(&rules).unwrap();
        assert_eq!(
            (t.syscall, t.offcpu, t.wakeup, t.block),
            (2_000_000, 5_000_000, 0, 0)
        );
        let irq: Rule = "irq>1ms".parse().unwrap();
        assert!(StackThresholds::from_rules(&[irq]).is_err());
    }
}
