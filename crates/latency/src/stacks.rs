//! The stacks of an occurrence: the stack events `tracekit record --stacks` wrote
//! ([`kernel::stacks`]) matched to the reports of the trackers, shown symbolized or folded.

use crate::{Report, Tracker};
use kernel::stacks::{StackKind, StackSample, Symbols, TraceStacks};
use std::collections::HashMap;

/// Stack samples indexed by the thread they concern.
#[derive(Debug, Default)]
pub struct StackIndex {
    stacks: TraceStacks,
    /// Sample indices by thread (the stack's owner, and a waker's wakee), by time.
    by_tid: HashMap<i32, Vec<usize>>,
}

/// How far after its occurrence a block request's stack may come: it is taken at the issuer's
/// next switch-in after the completion.
const BLOCK_SLACK_NS: i64 = 1_000_000_000;

/// How far a stack's interval may be from its occurrence's: the helper and the ftrace event
/// are written by the same tracepoint, but a record that reached the recorder late was written
/// at the time of its CPU's last event.
const MATCH_SLACK_NS: i64 = 1_000_000;

impl StackIndex {
    /// Indexes the stacks of some traces.
    pub fn new(stacks: TraceStacks) -> StackIndex {
        let mut by_tid: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, s) in stacks.samples.iter().enumerate() {
            by_tid.entry(s.tid).or_default().push(i);
            if let Some((w, _)) = &s.wakee {
                if *w != s.tid {
                    by_tid.entry(*w).or_default().push(i);
                }
            }
        }
        StackIndex { stacks, by_tid }
    }

    /// Whether there are no stacks.
    pub fn is_empty(&self) -> bool {
        self.stacks.samples.is_empty()
    }

    /// The symbol table.
    pub fn symbols(&self) -> &Symbols {
        &self.stacks.symbols
    }

    /// Every sample.
    pub fn samples(&self) -> &[StackSample] {
        &self.stacks.samples
    }

    /// The samples taken for an occurrence: of its thread, by the rule of its tracker, within
    /// its interval (a waker's: for the thread it woke).
    pub fn for_report(&self, r: &Report) -> Vec<&StackSample> {
        let Some(tid) = r.tid else {
            return Vec::new();
        };
        let Some(idx) = self.by_tid.get(&tid) else {
            return Vec::new();
        };
        idx.iter()
            .map(|&i| &self.stacks.samples[i])
            .filter(|s| {
                let of_thread = s.tid == tid;
                let woke_thread = s.wakee.as_ref().is_some_and(|(w, _)| *w == tid);
                // The interval the rule measured starts where the occurrence does (the same
                // clock, the same tracepoints) and ends within it.
                // Saturating: a recorded delay may be anything (a trace is input).
                let from = s.ts.saturating_sub(s.delay.min(i64::MAX as u64) as i64);
                let within = from.saturating_sub(r.begin).saturating_abs() <= MATCH_SLACK_NS
                    && s.ts >= r.begin
                    && s.ts <= r.end.saturating_add(MATCH_SLACK_NS);
                match (r.tracker, s.kind) {
                    (Tracker::Syscall, StackKind::Syscall) => of_thread && within,
                    (Tracker::Offcpu, StackKind::OffCpu) => of_thread && within,
                    (Tracker::Offcpu, StackKind::Waker) => woke_thread && within,
                    (Tracker::Wakeup, StackKind::Wakeup) => of_thread && within,
                    (Tracker::Block, StackKind::Block) => {
                        of_thread && s.ts >= r.end && s.ts <= r.end + BLOCK_SLACK_NS
                    }
                    _ => false,
                }
            })
            .collect()
    }

    /// The text of some samples under a report line: each stack, innermost frame first,
    /// symbolized.
    pub fn text(&self, samples: &[&StackSample]) -> String {
        let syms = &self.stacks.symbols;
        let mut o = String::new();
        for s in samples {
            let whose = match s.kind {
                StackKind::Waker => format!(
                    "waker {} ({}) of {}",
                    s.comm,
                    s.tid,
                    s.wakee
                        .as_ref()
                        .map_or(String::new(), |(t, c)| format!("{c} ({t})"))
                ),
                _ => format!("{} ({})", s.comm, s.tid),
            };
            o.push_str(&format!(
                "    {} stack of {whose}, {}:\n",
                s.kind.as_str(),
                crate::report::fmt_ns(s.delay as i64)
            ));
            for a in &s.kstack {
                o.push_str(&format!("        {}\n", syms.describe(*a)));
            }
            for a in &s.ustack {
                o.push_str(&format!("        {a:#x} (user)\n"));
            }
        }
        o
    }

    /// The samples as JSON (for `--json`): symbolized kernel frames, hex user frames.
    pub fn json(&self, samples: &[&StackSample]) -> serde_json::Value {
        let syms = &self.stacks.symbols;
        serde_json::Value::Array(
            samples
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "kind": s.kind.as_str(),
                        "tid": s.tid,
                        "comm": s.comm,
                        "delay_ns": s.delay,
                        "wakee_tid": s.wakee.as_ref().map(|w| w.0),
                        "kernel": s.kstack.iter().map(|a| syms.describe(*a)).collect::<Vec<_>>(),
                        "user": s.ustack.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
    }
}
