//! Reading the stacks `tracekit record --stacks` writes: the stack events
//! ([`crate::lttng::stacks`]), the kernel symbol table that comes with them, symbolization,
//! the collapsed-stack ("folded") format of flame graphs, and the function a blocked thread
//! waited in.

use crate::lttng::stacks::{ev, KSYM_NAME, STACK_CLASSES};
use std::collections::BTreeMap;

/// Which rule produced a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum StackKind {
    /// A thread blocked in a slow system call (its stack where the call blocked).
    Syscall,
    /// A thread switched back in after a long time off the CPU (its stack as it stopped).
    OffCpu,
    /// The waker of a thread off the CPU for long (the waker's stack).
    Waker,
    /// A thread switched in long after its wakeup.
    Wakeup,
    /// The issuer of a slow block request (its stack where it waited).
    Block,
}

impl StackKind {
    /// The kind of a stack event class, by name.
    pub fn from_event_name(name: &str) -> Option<StackKind> {
        let id = STACK_CLASSES.iter().find(|(_, n)| *n == name)?.0;
        Some(match id {
            ev::SYSCALL_STACK => StackKind::Syscall,
            ev::OFFCPU_SWITCH => StackKind::OffCpu,
            ev::OFFCPU_WAKEUP => StackKind::Waker,
            ev::WAKEUP_STACK => StackKind::Wakeup,
            _ => StackKind::Block,
        })
    }

    /// A short name (`syscall`, `offcpu`, `waker`, `wakeup`, `block`).
    pub fn as_str(self) -> &'static str {
        match self {
            StackKind::Syscall => "syscall",
            StackKind::OffCpu => "offcpu",
            StackKind::Waker => "waker",
            StackKind::Wakeup => "wakeup",
            StackKind::Block => "block",
        }
    }
}

/// One stack event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackSample {
    /// The rule that fired.
    pub kind: StackKind,
    /// Event time (ns from the clock's origin, as the reader gives it).
    pub ts: i64,
    /// The CPU (stream) it was recorded on, when known.
    pub cpu: Option<u32>,
    /// The host (the trace's `hostname`), when known.
    pub host: Option<String>,
    /// Thread whose stack it is.
    pub tid: i32,
    /// Its process.
    pub pid: i32,
    /// Its command name.
    pub comm: String,
    /// The latency that fired the rule (ns).
    pub delay: u64,
    /// For [`StackKind::Waker`]: the woken thread (tid, command).
    pub wakee: Option<(i32, String)>,
    /// For [`StackKind::Syscall`]: the system call number.
    pub syscall: Option<i64>,
    /// Kernel stack, innermost frame first.
    pub kstack: Vec<u64>,
    /// User stack, innermost frame first (empty when it could not be walked).
    pub ustack: Vec<u64>,
}

impl StackSample {
    /// Reads a stack event (`None` for any other event).
    pub fn from_event(ev: &ctf::Event<'_>, ts: i64, cpu: Option<u32>) -> Option<StackSample> {
        let kind = StackKind::from_event_name(ev.name())?;
        let int = |f: &str| ev.field(f).and_then(|v| v.as_i64());
        let string = |f: &str| {
            ev.field(f)
                .and_then(|v| v.as_str().map(|s| s.into_owned()))
                .unwrap_or_default()
        };
        let addrs = |f: &str| -> Vec<u64> {
            match ev.field(f).map(|v| v.value()) {
                Some(ctf::FieldValue::Array(e)) => e.filter_map(|v| v.as_u64()).collect(),
                _ => Vec::new(),
            }
        };
        Some(StackSample {
            kind,
            ts,
            cpu,
            host: None,
            tid: int("tid")? as i32,
            pid: int("pid").unwrap_or(0) as i32,
            comm: string("comm"),
            delay: int("delay").unwrap_or(0) as u64,
            wakee: (kind == StackKind::Waker)
                .then(|| (int("wakee_tid").unwrap_or(0) as i32, string("wakee_comm"))),
            syscall: (kind == StackKind::Syscall).then(|| int("id")).flatten(),
            kstack: addrs("kstack"),
            ustack: addrs("ustack"),
        })
    }
}

/// One kernel symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Start address.
    pub address: u64,
    /// Size in bytes (to the next symbol), 0 when unknown.
    pub size: u64,
    /// Name.
    pub name: String,
    /// Module (empty for the kernel image).
    pub module: String,
}

/// A kernel symbol table (sorted by address).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Symbols {
    syms: Vec<Symbol>,
}

impl Symbols {
    /// Parses `/proc/kallsyms` (`ADDRESS TYPE NAME [MODULE]`), keeping the text symbols. Sizes
    /// run to the next symbol. All-zero addresses (kptr_restrict hides them) give an empty
    /// table.
    pub fn parse_kallsyms(text: &str) -> Symbols {
        let mut all: Vec<(u64, bool, &str, &str)> = Vec::new();
        for line in text.lines() {
            let mut it = line.split_whitespace();
            let (Some(a), Some(t), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(a, 16) else {
                continue;
            };
            if addr == 0 {
                continue;
            }
            let module = it
                .next()
                .map(|m| m.trim_start_matches('[').trim_end_matches(']'))
                .unwrap_or("");
            let text_sym = matches!(t, "t" | "T" | "w" | "W");
            all.push((addr, text_sym, name, module));
        }
        all.sort_by_key(|s| s.0);
        let mut syms = Vec::new();
        for (i, &(addr, text_sym, name, module)) in all.iter().enumerate() {
            if !text_sym {
                continue;
            }
            let next = all[i + 1..]
                .iter()
                .find(|s| s.0 > addr)
                .map_or(0, |s| s.0 - addr);
            syms.push(Symbol {
                address: addr,
                size: next,
                name: name.to_string(),
                module: module.to_string(),
            });
        }
        syms.dedup_by_key(|s| s.address);
        Symbols { syms }
    }

    /// A table from symbols (e.g. the `tracekit_ksym` events of a trace).
    pub fn from_symbols(mut syms: Vec<Symbol>) -> Symbols {
        syms.sort_by_key(|s| s.address);
        syms.dedup_by_key(|s| s.address);
        Symbols { syms }
    }

    /// The symbols.
    pub fn symbols(&self) -> &[Symbol] {
        &self.syms
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The symbol an address falls in, and the offset in it.
    pub fn lookup(&self, addr: u64) -> Option<(&Symbol, u64)> {
        let i = self.syms.partition_point(|s| s.address <= addr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        let off = addr - s.address;
        (s.size == 0 || off < s.size).then_some((s, off))
    }

    /// The symbols the addresses fall in, each once, by address.
    pub fn subset<'a>(&self, addrs: impl IntoIterator<Item = &'a u64>) -> Vec<Symbol> {
        let mut v: Vec<Symbol> = addrs
            .into_iter()
            .filter_map(|a| self.lookup(*a).map(|(s, _)| s.clone()))
            .collect();
        v.sort_by_key(|s| s.address);
        v.dedup_by_key(|s| s.address);
        v
    }

    /// The function name of an address, or the address in hex.
    pub fn name(&self, addr: u64) -> String {
        match self.lookup(addr) {
            Some((s, _)) => s.name.clone(),
            None => format!("{addr:#x}"),
        }
    }

    /// `function+0xOFF [module]`, or the address in hex.
    pub fn describe(&self, addr: u64) -> String {
        match self.lookup(addr) {
            Some((s, off)) if s.module.is_empty() => format!("{}+{off:#x}", s.name),
            Some((s, off)) => format!("{}+{off:#x} [{}]", s.name, s.module),
            None => format!("{addr:#x}"),
        }
    }
}

/// Whether a kernel function is part of the scheduler's own path of a sleeping thread (not
/// what it waited for).
fn is_scheduler_frame(name: &str) -> bool {
    name.starts_with("__schedule")
        || name.starts_with("schedule")
        || name.starts_with("__switch_to")
        || name.starts_with("preempt_schedule")
        || name.starts_with("io_schedule")
        || name == "context_switch"
        || name == "finish_task_switch"
        || name.starts_with("finish_task_switch.")
}

/// The kernel function a blocked thread waited in: the innermost frame of its stack that is
/// not the scheduler's (as Perfetto's `blocked_function`).
pub fn blocked_function<'a>(kstack: &[u64], syms: &'a Symbols) -> Option<&'a str> {
    kstack
        .iter()
        .filter_map(|a| syms.lookup(*a).map(|(s, _)| s.name.as_str()))
        .find(|n| !is_scheduler_frame(n))
}

/// Collapsed stacks ("folded", as flamegraph.pl and inferno read): one line per distinct
/// stack, `comm;outermost;…;innermost WEIGHT`, user frames (hex) before kernel frames, the
/// weight the sum of `weight(sample)` over the samples with that stack. Lines are sorted.
pub fn folded(
    samples: &[StackSample],
    syms: &Symbols,
    weight: impl Fn(&StackSample) -> u64,
) -> Vec<String> {
    let mut acc: BTreeMap<String, u64> = BTreeMap::new();
    for s in samples {
        let mut frames: Vec<String> = vec![fold_safe(&s.comm)];
        frames.extend(s.ustack.iter().rev().map(|a| format!("{a:#x}")));
        frames.extend(s.kstack.iter().rev().map(|a| fold_safe(&syms.name(*a))));
        let w = acc.entry(frames.join(";")).or_insert(0);
        // Saturating: the weights come from a trace (any value).
        *w = w.saturating_add(weight(s));
    }
    acc.into_iter().map(|(k, w)| format!("{k} {w}")).collect()
}

/// A frame name without the separators of the folded format (`;`, spaces, newlines).
fn fold_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ';' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The stacks and symbols of some traces (read in full, in the readers' order).
#[derive(Debug, Clone, Default)]
pub struct TraceStacks {
    /// Stack events, by time.
    pub samples: Vec<StackSample>,
    /// The traces' `tracekit_ksym` symbols.
    pub symbols: Symbols,
}

/// Reads the stack events and the symbol table of traces. Traces without stack events give
/// an empty result; only the stack and symbol classes are decoded. A stream that cannot be
/// decoded to its end gives the stacks before the problem (the analyses that read the trace
/// report it).
pub fn read_stacks(traces: &[std::sync::Arc<ctf::Trace>]) -> Result<TraceStacks, ctf::Error> {
    let mut samples = Vec::new();
    let mut syms = Vec::new();
    for t in traces {
        let has = t.class.streams.values().any(|sc| {
            sc.events
                .values()
                .any(|e| e.name == KSYM_NAME || StackKind::from_event_name(&e.name).is_some())
        });
        if !has {
            continue;
        }
        for mut r in t.readers() {
            while let Some(m) = r.next() {
                match m {
                    Ok(ctf::Message::Event) => {}
                    Ok(_) => continue,
                    // The stream's readers report its problems; its stacks stop here.
                    Err(_) => break,
                }
                let ev = r.event();
                let name = ev.name();
                if name == KSYM_NAME {
                    let int = |f: &str| ev.field(f).and_then(|v| v.as_u64()).unwrap_or(0);
                    let string = |f: &str| {
                        ev.field(f)
                            .and_then(|v| v.as_str().map(|s| s.into_owned()))
                            .unwrap_or_default()
                    };
                    syms.push(Symbol {
                        address: int("address"),
                        size: int("size"),
                        name: string("name"),
                        module: string("module"),
                    });
                } else if StackKind::from_event_name(name).is_some() {
                    let ts = ev.time_ns().unwrap_or(0);
                    if let Some(mut s) = StackSample::from_event(&ev, ts, crate::recorded_cpu(&ev))
                    {
                        s.host = t.hostname().map(str::to_string);
                        samples.push(s);
                    }
                }
            }
        }
    }
    samples.sort_by_key(|s| (s.ts, s.tid));
    Ok(TraceStacks {
        samples,
        symbols: Symbols::from_symbols(syms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
        ffffffff81000100 t do_nanosleep\n\
        ffffffff81000180 d some_data\n\
        ffffffff81000200 T __schedule\n\
        ffffffff81000300 T schedule\n\
        ffffffffc0000000 t ext4_sync_fs\t[ext4]\n\
        ffffffffc0000400 T ext4_end\t[ext4]\n";

    #[test]
    fn kallsyms_lookup() {
        let s = Symbols::parse_kallsyms(KALLSYMS);
        assert_eq!(s.describe(0xffffffff81000110), "do_nanosleep+0x10");
        // Sizes run to the next symbol, data included.
        assert_eq!(s.lookup(0xffffffff81000100).unwrap().0.size, 0x80);
        assert_eq!(s.describe(0xffffffff81000190), "0xffffffff81000190");
        assert_eq!(s.describe(0xffffffffc0000008), "ext4_sync_fs+0x8 [ext4]");
        assert_eq!(s.describe(0x10), "0x10");
        let hidden = "0000000000000000 T _stext\n0000000000000000 t do_nanosleep\n";
        assert!(Symbols::parse_kallsyms(hidden).is_empty());
    }

    #[test]
    fn blocked_in_and_folded() {
        let syms = Symbols::parse_kallsyms(KALLSYMS);
        let k = vec![0xffffffff81000210, 0xffffffff81000310, 0xffffffff81000120];
        assert_eq!(blocked_function(&k, &syms), Some("do_nanosleep"));
        let sample = StackSample {
            kind: StackKind::OffCpu,
            ts: 0,
            cpu: None,
            host: None,
            tid: 1,
            pid: 1,
            comm: "my prog".into(),
            delay: 5,
            wakee: None,
            syscall: None,
            kstack: k,
            ustack: vec![0x400010, 0x400020],
        };
        let f = folded(&[sample.clone(), sample.clone()], &syms, |s| s.delay);
        assert_eq!(
            f,
            vec!["my_prog;0x400020;0x400010;do_nanosleep;schedule;__schedule 10".to_string()]
        );
        // Weights from a trace may be anything: they saturate.
        let f = folded(&[sample.clone(), sample.clone()], &syms, |_| u64::MAX);
        assert!(f[0].ends_with(&format!(" {}", u64::MAX)), "{f:?}");
    }
}
