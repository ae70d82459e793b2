//! `--snapshot-on RULE`: latency rules checked live on the decoded events of a flight
//! recording, with the sans-io trackers of [`latency`].

use std::collections::HashMap;

use ctf::ir::TraceClass;
use ctf::value::Value;
use latency::{ClassKind, Config, Input, Latency, Report, Tracker};
use pipeline::time::parse_duration;

use crate::Error;

/// A rule: a latency of `tracker` of at least `threshold` ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub(crate) tracker: Tracker,
    pub(crate) threshold: i64,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}>{}", self.tracker.name(), fmt_ns(self.threshold))
    }
}

/// `1.5ms`, `20us`, `2s`, `300ns`.
pub(crate) fn fmt_ns(ns: i64) -> String {
    let (v, unit) = if ns >= 1_000_000_000 {
        (ns as f64 / 1e9, "s")
    } else if ns >= 1_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if ns >= 1_000 {
        (ns as f64 / 1e3, "us")
    } else {
        return format!("{ns}ns");
    };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{unit}")
}

impl std::str::FromStr for Rule {
    type Err = Error;

    /// `TRACKER>DURATION`, e.g. `syscall>50ms`; trackers: wakeup, offcpu, syscall, block, irq.
    /// The duration needs its unit (`ns`, `us`, `ms`, `s`).
    fn from_str(s: &str) -> Result<Rule, Error> {
        let (name, dur) = s
            .split_once('>')
            .ok_or_else(|| Error::BadRule(s.to_string()))?;
        let name = name.trim();
        let tracker = Tracker::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| Error::UnknownLatency {
                rule: s.to_string(),
                name: name.to_string(),
            })?;
        let threshold = parse_duration(dur.trim_start_matches('='), None).map_err(|e| {
            Error::RuleThreshold {
                rule: s.to_string(),
                source: e,
            }
        })?;
        Ok(Rule { tracker, threshold })
    }
}

/// A rule that fired.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fired {
    pub(crate) rule: Rule,
    pub(crate) report: Report,
}

impl std::fmt::Display for Fired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.report;
        write!(
            f,
            "rule {} fired: {} latency {}",
            self.rule,
            r.tracker.name(),
            fmt_ns(r.latency)
        )?;
        if let Some(tid) = r.tid {
            write!(f, ", tid {tid}")?;
            if let Some(c) = &r.comm {
                write!(f, " ({c})")?;
            }
        }
        if let Some(cpu) = r.cpu {
            write!(f, ", CPU {cpu}")?;
        }
        if !r.detail.is_empty() {
            write!(f, ", {}", r.detail)?;
        }
        Ok(())
    }
}

/// The rules and their trackers.
pub(crate) struct Trigger {
    rules: Vec<Rule>,
    lat: Latency,
    reports: Vec<Report>,
    ignore: Vec<i32>,
}

impl Trigger {
    pub(crate) fn new(rules: &[Rule]) -> Trigger {
        let mut trackers: Vec<Tracker> = rules.iter().map(|r| r.tracker).collect();
        trackers.sort();
        trackers.dedup();
        let threshold = rules.iter().map(|r| r.threshold).min().unwrap_or(0);
        let config = Config {
            threshold,
            timeout: None,
            ..Default::default()
        };
        Trigger {
            rules: rules.to_vec(),
            lat: Latency::new(&trackers, config),
            reports: Vec::new(),
            ignore: Vec::new(),
        }
    }

    /// Latencies of this thread never fire (the recorder's own polling sleeps).
    pub(crate) fn ignore_tid(&mut self, tid: i32) {
        self.ignore.push(tid);
    }

    /// Feeds one input (in time order); returns the first rule that fired, if any.
    pub(crate) fn feed(&mut self, ts: i64, input: &Input) -> Option<Fired> {
        self.reports.clear();
        self.lat.feed(ts, input, &mut self.reports);
        let mut fired = None;
        for r in self.reports.drain(..) {
            if r.timeout || r.tid.is_some_and(|t| self.ignore.contains(&t)) {
                continue;
            }
            let Some(rule) = self
                .rules
                .iter()
                .find(|rule| rule.tracker == r.tracker && r.latency >= rule.threshold)
            else {
                continue;
            };
            fired.get_or_insert(Fired {
                rule: *rule,
                report: r,
            });
        }
        fired
    }
}

/// At most one snapshot per `interval` ns: a rule firing too early is kept (the first one)
/// and its snapshot taken when the interval has passed, so that it is not lost.
#[derive(Debug)]
pub(crate) struct Debounce {
    interval: i64,
    last: Option<i64>,
    pending: Option<Fired>,
    /// Firings merged into another snapshot.
    pub(crate) merged: u64,
}

impl Debounce {
    pub(crate) fn new(interval: i64) -> Debounce {
        Debounce {
            interval,
            last: None,
            pending: None,
            merged: 0,
        }
    }

    /// A rule fired at `now`.
    pub(crate) fn offer(&mut self, f: Fired) {
        if self.pending.is_some() {
            self.merged += 1;
        } else {
            self.pending = Some(f);
        }
    }

    /// The firing to snapshot now, if any (and the interval restarts).
    pub(crate) fn due(&mut self, now: i64) -> Option<Fired> {
        if self.pending.is_none() || self.last.is_some_and(|l| now - l < self.interval) {
            return None;
        }
        self.last = Some(now);
        self.pending.take()
    }

    /// A snapshot was taken at `now` for another reason (SIGUSR1): a pending firing is in it.
    pub(crate) fn taken(&mut self, now: i64) {
        if self.pending.take().is_some() {
            self.merged += 1;
        }
        self.last = Some(now);
    }
}

/// Builds tracker [`Input`]s from converted events (event id and payload values).
pub(crate) struct InputMaker {
    /// Per event id: what the trackers make of the class, and the payload field names.
    classes: HashMap<u64, (ClassKind, Vec<String>)>,
}

impl InputMaker {
    pub(crate) fn new(tc: &TraceClass) -> InputMaker {
        let mut classes = HashMap::new();
        for s in tc.streams.values() {
            for e in s.events.values() {
                let fields = e
                    .payload
                    .as_ref()
                    .map(|p| {
                        p.fields
                            .iter()
                            .map(|f| f.name.trim_start_matches('_').to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                classes.insert(e.id, (ClassKind::of(&e.name), fields));
            }
        }
        InputMaker { classes }
    }

    /// The input of event `id` with payload `vals` on `cpu`, if a tracker uses it.
    pub(crate) fn input(&self, id: u64, cpu: u32, vals: &[Value]) -> Option<Input> {
        let (class, fields) = self.classes.get(&id)?;
        let get = |f: &str| fields.iter().position(|n| n == f).and_then(|i| vals.get(i));
        latency::input_of_class(
            class,
            cpu,
            |f| get(f.name()).and_then(|v| v.as_int()).map(|v| v as i64),
            |f| match get(f.name()) {
                Some(Value::Str(b)) => String::from_utf8_lossy(b).as_ref().into(),
                _ => Default::default(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(cpu: u32, prev: i32, next: i32) -> Input {
        Input::Switch {
            cpu,
            prev_tid: prev,
            prev_comm: format!("t{prev}").into(),
            prev_state: 1,
            next_tid: next,
            next_comm: format!("t{next}").into(),
        }
    }

    #[test]
    fn parse_rules() {
        let r: Rule = "syscall>50ms".parse().unwrap();
        assert_eq!(
            r,
            Rule {
                tracker: Tracker::Syscall,
                threshold: 50_000_000
            }
        );
        assert_eq!(
            "wakeup>5ms".parse::<Rule>().unwrap().tracker,
            Tracker::Wakeup
        );
        assert_eq!(
            "offcpu > 100ms".parse::<Rule>().unwrap().threshold,
            100_000_000
        );
        assert_eq!(
            "block>20ms".parse::<Rule>().unwrap().tracker,
            Tracker::Block
        );
        assert_eq!("irq>1ms".parse::<Rule>().unwrap().threshold, 1_000_000);
        assert_eq!("irq>=250us".parse::<Rule>().unwrap().threshold, 250_000);
        assert_eq!(
            "syscall>1.5s".parse::<Rule>().unwrap().threshold,
            1_500_000_000
        );
        assert_eq!("syscall>10ns".parse::<Rule>().unwrap().threshold, 10);
        for bad in [
            "syscall",
            "foo>1ms",
            "syscall>",
            "syscall>5",
            "syscall>5min",
            "syscall>0ms",
            "syscall>-1ms",
        ] {
            assert!(bad.parse::<Rule>().is_err(), "{bad}");
        }
        assert_eq!(r.to_string(), "syscall>50ms");
        assert_eq!(fmt_ns(1_500_000), "1.5ms");
    }

    #[test]
    fn syscall_rule_fires() {
        let rules = ["syscall>20ms".parse().unwrap()];
        let mut t = Trigger::new(&rules);
        t.ignore_tid(99);
        let ms = 1_000_000i64;
        assert_eq!(t.feed(0, &sw(0, 0, 42)), None);
        let entry = |n: &str| Input::SyscallEntry {
            cpu: 0,
            name: n.into(),
        };
        let exit = Input::SyscallExit { cpu: 0, ret: 0 };
        // Fast syscall: nothing.
        assert_eq!(t.feed(ms, &entry("read")), None);
        assert_eq!(t.feed(2 * ms, &exit), None);
        // Slow one: fires.
        assert_eq!(t.feed(10 * ms, &entry("clock_nanosleep")), None);
        let f = t.feed(61 * ms, &exit).expect("fires");
        assert_eq!(f.rule, rules[0]);
        assert_eq!(f.report.latency, 51 * ms);
        assert_eq!(f.report.tid, Some(42));
        assert_eq!(f.report.comm.as_deref(), Some("t42"));
        let text = f.to_string();
        assert!(
            text.contains("syscall>20ms") && text.contains("tid 42") && text.contains("51ms"),
            "{text}"
        );
        // The ignored thread never fires.
        t.feed(70 * ms, &sw(0, 42, 99));
        t.feed(71 * ms, &entry("clock_nanosleep"));
        assert_eq!(t.feed(171 * ms, &exit), None);
    }

    #[test]
    fn debounce() {
        let ms = 1_000_000i64;
        let rule: Rule = "syscall>20ms".parse().unwrap();
        let fired = |lat: i64| Fired {
            rule,
            report: Report {
                tracker: Tracker::Syscall,
                begin: 0,
                end: lat,
                latency: lat,
                timeout: false,
                timed_out: false,
                tid: Some(1),
                comm: None,
                cpu: None,
                waker: None,
                detail: String::new(),
            },
        };
        let mut d = Debounce::new(1000 * ms);
        assert_eq!(d.due(0), None);
        d.offer(fired(30 * ms));
        assert_eq!(d.due(10 * ms).unwrap().report.latency, 30 * ms);
        // Within the interval: kept for later, the next ones merged.
        d.offer(fired(40 * ms));
        d.offer(fired(50 * ms));
        assert_eq!(d.due(500 * ms), None);
        assert_eq!(d.due(1009 * ms), None);
        assert_eq!(d.due(1010 * ms).unwrap().report.latency, 40 * ms);
        assert_eq!(d.merged, 1);
        assert_eq!(d.due(5000 * ms), None);
        // A SIGUSR1 snapshot takes the pending firing with it.
        d.offer(fired(60 * ms));
        d.taken(2500 * ms);
        assert_eq!(d.due(9000 * ms), None);
        assert_eq!(d.merged, 2);
    }

    #[test]
    fn only_matching_rules_fire() {
        let rules: Vec<Rule> = vec!["wakeup>5ms".parse().unwrap(), "irq>1ms".parse().unwrap()];
        let mut t = Trigger::new(&rules);
        let ms = 1_000_000i64;
        // A 3 ms wakeup latency: below the rule.
        t.feed(0, &sw(0, 0, 1));
        t.feed(
            ms,
            &Input::Waking {
                cpu: 0,
                tid: 7,
                comm: "w".into(),
            },
        );
        assert_eq!(t.feed(4 * ms, &sw(1, 0, 7)), None);
        // A 2 ms IRQ handler: fires the irq rule.
        t.feed(
            5 * ms,
            &Input::IrqEntry {
                cpu: 1,
                irq: 9,
                name: "eth0".into(),
            },
        );
        let f = t.feed(7 * ms, &Input::IrqExit { cpu: 1, irq: 9 }).unwrap();
        assert_eq!(f.rule, rules[1]);
        // A 6 ms wakeup latency: fires the wakeup rule.
        t.feed(8 * ms, &sw(1, 7, 0));
        t.feed(
            10 * ms,
            &Input::Waking {
                cpu: 0,
                tid: 7,
                comm: "w".into(),
            },
        );
        let f = t.feed(16 * ms, &sw(1, 0, 7)).unwrap();
        assert_eq!(f.rule, rules[0]);
        assert_eq!(f.report.latency, 6 * ms);
        // Syscalls are not tracked.
        t.feed(
            17 * ms,
            &Input::SyscallEntry {
                cpu: 1,
                name: "read".into(),
            },
        );
        assert_eq!(
            t.feed(900 * ms, &Input::SyscallExit { cpu: 1, ret: 0 }),
            None
        );
    }
}
