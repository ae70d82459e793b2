//! Context switches the kernel did not trace, rebuilt from the records around them.
//!
//! Some kernels leave out the `sched_switch` of some tasks as `prev` (seen on 6.18 in a VM:
//! never out of the idle task, nor out of the threads of PID 1, in any tracefs instance,
//! while the switches into them are traced), and a ring buffer that overflowed loses switches
//! too. A trace would then show a CPU still running the task it last switched to while
//! another runs: the kernel analyses and the latency tracker give that task's events to the
//! wrong thread. Every ftrace record carries the running task's pid (`common_pid`, 0 for the
//! idle task), so when a CPU shows a record of another task than the one it runs, a switch
//! happened before it: this module writes the raw record of that switch, stamped with the
//! record's time, for the converter to take as any other. Its `prev_state` is 0 (running):
//! whether the task left the CPU to sleep is not known. Pure: records in, records out.
//!
//! With a PID list (`--pid`), the kernel writes only the records of the listed tasks and the
//! switches into or out of them; a switch into a listed task it did not trace is rebuilt
//! the same way from that task's own records. The switch records of the tasks not listed
//! (their switches into a listed one) are taken as they are: the CPU ran other unlisted tasks
//! before them, untraced, and rebuilding those would only invent switches.

use std::collections::{HashMap, HashSet};

use crate::format::{EventFormat, FieldDesc, FormatError};

/// The kernel priority of the idle task and of a task whose priority is not known (nice 0).
const DEFAULT_PRIO: i64 = 120;

/// A record that names a task: its event id and the fields of the task's pid, name and
/// priority (when it has one).
struct Namer {
    id: u16,
    pid: FieldDesc,
    comm: FieldDesc,
    prio: Option<FieldDesc>,
}

/// Finds the switches the kernel did not trace and writes their records.
pub(crate) struct MissingSwitches {
    switch_id: u16,
    common_pid: FieldDesc,
    prev_comm: FieldDesc,
    prev_pid: FieldDesc,
    prev_prio: FieldDesc,
    prev_state: FieldDesc,
    next_comm: FieldDesc,
    next_pid: FieldDesc,
    next_prio: FieldDesc,
    /// Per CPU: the task running when its last record was written, once known.
    current: Vec<Option<i32>>,
    /// Per task: its name and priority as its last traced switch gave them.
    tasks: HashMap<i32, (Vec<u8>, i64)>,
    /// The name of a task no switch named yet (e.g. from `/proc`).
    comm_of: Box<dyn FnMut(i32) -> Option<Vec<u8>> + Send>,
    /// Other records that name a task (`sched_wakeup*`, `sched_process_fork`): their event
    /// id, the task's pid and name fields, and its priority field when they have one.
    namers: Vec<Namer>,
    /// With a PID list: the tasks seen writing a record other than a switch, the only ones
    /// whose switch records can show a missing switch.
    listed: Option<HashSet<i32>>,
    record: Vec<u8>,
    rebuilt: u64,
}

impl MissingSwitches {
    /// For records of the `sched_switch` format `switch`; `comm_of` names a task no traced
    /// switch has named.
    pub(crate) fn new(
        switch: &EventFormat,
        comm_of: Box<dyn FnMut(i32) -> Option<Vec<u8>> + Send>,
    ) -> Result<Self, FormatError> {
        let f = |n: &str| switch.need(n).cloned();
        let fields = [
            f("common_pid")?,
            f("prev_comm")?,
            f("prev_pid")?,
            f("prev_prio")?,
            f("prev_state")?,
            f("next_comm")?,
            f("next_pid")?,
            f("next_prio")?,
        ];
        let len = fields.iter().map(|d| d.offset + d.size).max().unwrap_or(0);
        let [common_pid, prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio] =
            fields;
        Ok(MissingSwitches {
            switch_id: switch.id,
            common_pid,
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state,
            next_comm,
            next_pid,
            next_prio,
            current: Vec::new(),
            tasks: HashMap::new(),
            comm_of,
            listed: None,
            namers: Vec::new(),
            record: vec![0; len],
            rebuilt: 0,
        })
    }

    /// Also learns task names from records of `event` (its task in field `pid`, named by
    /// `comm`, with its priority in `prio` when there is one): a task that forks and runs
    /// briefly (gone from `/proc` before its first record is converted) is named by its fork
    /// or its wakeup rather than left without a name in its rebuilt switch.
    pub(crate) fn learn_names(
        &mut self,
        event: &EventFormat,
        pid: &str,
        comm: &str,
        prio: Option<&str>,
    ) -> Result<(), FormatError> {
        self.namers.push(Namer {
            id: event.id,
            pid: event.need(pid)?.clone(),
            comm: event.need(comm)?.clone(),
            prio: prio.map(|p| event.need(p).cloned()).transpose()?,
        });
        Ok(())
    }

    /// For a recording with a PID list (see the [module](self) documentation).
    pub(crate) fn with_pid_list(mut self) -> Self {
        self.listed = Some(HashSet::new());
        self
    }

    /// Switches rebuilt so far.
    pub(crate) fn rebuilt(&self) -> u64 {
        self.rebuilt
    }

    /// Takes the next record of CPU `cpu` (in its time order); returns the record of the
    /// switch to write before it, when it shows one happened untraced.
    pub(crate) fn before(&mut self, cpu: u32, rec: &[u8]) -> Option<&[u8]> {
        let ty = u16::from_le_bytes([*rec.first()?, *rec.get(1)?]);
        let pid = self.common_pid.int(rec)? as i32;
        let c = cpu as usize;
        if self.current.len() <= c {
            self.current.resize(c + 1, None);
        }
        let mut was = self.current[c];
        if ty == self.switch_id {
            if self.listed.as_ref().is_some_and(|l| !l.contains(&pid)) {
                was = None;
            }
            note(&mut self.tasks, &self.prev_comm, &self.prev_prio, rec, pid);
            let next = self.next_pid.int(rec).map(|n| n as i32);
            if let Some(n) = next {
                note(&mut self.tasks, &self.next_comm, &self.next_prio, rec, n);
            }
            self.current[c] = next;
        } else {
            self.current[c] = Some(pid);
            if let Some(n) = self.namers.iter().find(|n| n.id == ty) {
                if let Some(task) = n.pid.int(rec) {
                    let prio = n.prio.as_ref().and_then(|p| p.int(rec));
                    name(&mut self.tasks, n.comm.str(rec), prio, task as i32);
                }
            }
            if let Some(l) = &mut self.listed {
                l.insert(pid);
            }
        }
        match was {
            Some(prev) if prev != pid => {
                self.rebuilt += 1;
                Some(self.switch_record(cpu, prev, pid))
            }
            // A CPU's first record, of a task: the switch into it was not traced (out of the
            // idle task, on the kernels above: a CPU idle since the recording began shows its
            // next task first) or came before the recording. Written as from the idle task,
            // at the record's time, so that the task's events are its own from there on
            // rather than of no thread until it leaves the CPU.
            None if ty != self.switch_id && pid != 0 => {
                self.rebuilt += 1;
                Some(self.switch_record(cpu, 0, pid))
            }
            _ => None,
        }
    }

    /// The name and priority of task `pid` on CPU `cpu`.
    fn task(&mut self, cpu: u32, pid: i32) -> (Vec<u8>, i64) {
        if pid == 0 {
            return (format!("swapper/{cpu}").into_bytes(), DEFAULT_PRIO);
        }
        if let Some(t) = self.tasks.get(&pid) {
            return t.clone();
        }
        let t = ((self.comm_of)(pid).unwrap_or_default(), DEFAULT_PRIO);
        self.tasks.insert(pid, t.clone());
        t
    }

    /// The record of CPU `cpu`'s switch from task `prev` to task `next`.
    fn switch_record(&mut self, cpu: u32, prev: i32, next: i32) -> &[u8] {
        let (prev_name, prev_prio) = self.task(cpu, prev);
        let (next_name, next_prio) = self.task(cpu, next);
        let r = &mut self.record;
        r.fill(0);
        r[..2].copy_from_slice(&self.switch_id.to_le_bytes());
        put_int(r, &self.common_pid, prev as i64);
        put_str(r, &self.prev_comm, &prev_name);
        put_int(r, &self.prev_pid, prev as i64);
        put_int(r, &self.prev_prio, prev_prio);
        put_int(r, &self.prev_state, 0);
        put_str(r, &self.next_comm, &next_name);
        put_int(r, &self.next_pid, next as i64);
        put_int(r, &self.next_prio, next_prio);
        &self.record
    }
}

/// Keeps task `pid`'s name and priority as a traced switch gives them.
fn note(
    tasks: &mut HashMap<i32, (Vec<u8>, i64)>,
    comm: &FieldDesc,
    prio: &FieldDesc,
    rec: &[u8],
    pid: i32,
) {
    if let (Some(n), Some(p)) = (comm.str(rec), prio.int(rec)) {
        name(tasks, Some(n), Some(p), pid);
    }
}

/// Keeps task `pid`'s name, and its priority when given (else the one known, or the
/// default).
fn name(
    tasks: &mut HashMap<i32, (Vec<u8>, i64)>,
    comm: Option<&[u8]>,
    prio: Option<i64>,
    pid: i32,
) {
    let Some(comm) = comm.filter(|c| !c.is_empty() && pid != 0) else {
        return;
    };
    match tasks.get_mut(&pid) {
        Some((n, pr)) => {
            if n.as_slice() != comm {
                n.clear();
                n.extend_from_slice(comm);
            }
            if let Some(p) = prio {
                *pr = p;
            }
        }
        None => {
            tasks.insert(pid, (comm.to_vec(), prio.unwrap_or(DEFAULT_PRIO)));
        }
    }
}

fn put_int(rec: &mut [u8], f: &FieldDesc, v: i64) {
    if let Some(b) = rec.get_mut(f.offset..f.offset + f.size) {
        b.copy_from_slice(&v.to_le_bytes()[..f.size.min(8)]);
    }
}

/// Writes a C string into an inline `char[N]` field, cut to leave its NUL.
fn put_str(rec: &mut [u8], f: &FieldDesc, s: &[u8]) {
    if let Some(b) = rec.get_mut(f.offset..f.offset + f.size) {
        let n = s.len().min(f.size.saturating_sub(1));
        b[..n].copy_from_slice(&s[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::parse_format;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
print fmt: \"\"\n";

    fn switch(fmt: &EventFormat, prev: (&str, i32, i64), next: (&str, i32, i64)) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[..2].copy_from_slice(&fmt.id.to_le_bytes());
        let f = |n: &str| fmt.field(n).unwrap().clone();
        put_int(&mut r, &f("common_pid"), prev.1 as i64);
        put_str(&mut r, &f("prev_comm"), prev.0.as_bytes());
        put_int(&mut r, &f("prev_pid"), prev.1 as i64);
        put_int(&mut r, &f("prev_prio"), prev.2);
        put_int(&mut r, &f("prev_state"), 1);
        put_str(&mut r, &f("next_comm"), next.0.as_bytes());
        put_int(&mut r, &f("next_pid"), next.1 as i64);
        put_int(&mut r, &f("next_prio"), next.2);
        r
    }

    /// A record of another event (type 7) written while `pid` runs.
    fn other(pid: i32) -> Vec<u8> {
        let mut r = vec![0u8; 16];
        r[0] = 7;
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        r
    }

    fn decoded(fmt: &EventFormat, r: &[u8]) -> (String, i64, i64, String, i64, i64, i64) {
        let f = |n: &str| fmt.field(n).unwrap().clone();
        let s = |n: &str| String::from_utf8(f(n).str(r).unwrap().to_vec()).unwrap();
        let i = |n: &str| f(n).int(r).unwrap();
        (
            s("prev_comm"),
            i("prev_pid"),
            i("prev_state"),
            s("next_comm"),
            i("next_pid"),
            i("next_prio"),
            i("common_pid"),
        )
    }

    /// The switch `sw` rebuilds before record `rec` of CPU `cpu`, decoded (`what` names it
    /// when there is none).
    fn rebuilt(
        fmt: &EventFormat,
        sw: &mut MissingSwitches,
        cpu: u32,
        rec: &[u8],
        what: &str,
    ) -> (String, i64, i64, String, i64, i64, i64) {
        let r = sw
            .before(cpu, rec)
            .unwrap_or_else(|| panic!("{what}"))
            .to_vec();
        decoded(fmt, &r)
    }

    #[test]
    fn a_task_seen_on_an_idle_cpu_was_switched_in() {
        let fmt = parse_format(SWITCH).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| Some(b"from-proc".to_vec()))).unwrap();
        // CPU 1: task 42 sleeps (traced), then runs again (untraced) and writes an event.
        assert!(sw
            .before(1, &switch(&fmt, ("worker", 42, 110), ("swapper/1", 0, 120)))
            .is_none());
        assert!(sw.before(1, &other(0)).is_none(), "an interrupt in idle");
        assert_eq!(
            rebuilt(&fmt, &mut sw, 1, &other(42), "the switch into 42"),
            ("swapper/1".into(), 0, 0, "worker".into(), 42, 110, 0)
        );
        assert!(sw.before(1, &other(42)).is_none(), "42 runs now");
        // The untraced switch into 43 shows through 43's own traced switch out, which
        // names it.
        sw.before(1, &switch(&fmt, ("worker", 42, 110), ("swapper/1", 0, 120)));
        assert_eq!(
            rebuilt(
                &fmt,
                &mut sw,
                1,
                &switch(&fmt, ("new", 43, 100), ("worker", 42, 110)),
                "the switch into 43"
            ),
            ("swapper/1".into(), 0, 0, "new".into(), 43, 100, 0)
        );
        // Task 44, never named by a switch: named by `comm_of`, default priority.
        sw.before(1, &switch(&fmt, ("worker", 42, 110), ("swapper/1", 0, 120)));
        assert_eq!(
            rebuilt(&fmt, &mut sw, 1, &other(44), "the switch into 44"),
            ("swapper/1".into(), 0, 0, "from-proc".into(), 44, 120, 0)
        );
        assert_eq!(sw.rebuilt(), 3);
    }

    const FORK: &str = "name: sched_process_fork\nID: 300\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n\
\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n\n\
print fmt: \"\"\n";

    #[test]
    fn a_forked_task_is_named_by_its_fork() {
        let fmt = parse_format(SWITCH).unwrap();
        let fork = parse_format(FORK).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| None)).unwrap();
        sw.learn_names(&fork, "child_pid", "child_comm", None)
            .unwrap();
        // Task 42 forks 43 ("shell") on CPU 0; 43 then writes a record on CPU 1, idle.
        let mut r = vec![0u8; 40];
        r[..2].copy_from_slice(&300u16.to_le_bytes());
        r[4..8].copy_from_slice(&42i32.to_le_bytes());
        r[8..12].copy_from_slice(&((6u32 << 16) | 24).to_le_bytes());
        r[12..16].copy_from_slice(&42i32.to_le_bytes());
        r[16..20].copy_from_slice(&((6u32 << 16) | 30).to_le_bytes());
        r[20..24].copy_from_slice(&43i32.to_le_bytes());
        r[24..30].copy_from_slice(b"shell\0");
        r[30..36].copy_from_slice(b"shell\0");
        sw.before(0, &switch(&fmt, ("swapper/0", 0, 120), ("shell", 42, 120)));
        assert!(sw.before(0, &r).is_none());
        sw.before(1, &switch(&fmt, ("a", 5, 120), ("swapper/1", 0, 120)));
        assert_eq!(
            rebuilt(&fmt, &mut sw, 1, &other(43), "the switch into 43"),
            ("swapper/1".into(), 0, 0, "shell".into(), 43, 120, 0)
        );
    }

    #[test]
    fn with_a_pid_list_only_the_listed_tasks_switches_in_are_rebuilt() {
        let fmt = parse_format(SWITCH).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| None))
            .unwrap()
            .with_pid_list();
        // Unlisted 3 switches to listed 42 (traced), 42 runs, sleeps; the CPU idles
        // (untraced, out of the idle task), then 42 writes a record: its switch in is
        // rebuilt.
        assert!(sw
            .before(0, &switch(&fmt, ("init", 3, 120), ("worker", 42, 110)))
            .is_none());
        assert!(sw.before(0, &other(42)).is_none());
        sw.before(0, &switch(&fmt, ("worker", 42, 110), ("swapper/0", 0, 120)));
        assert_eq!(
            rebuilt(&fmt, &mut sw, 0, &other(42), "the switch into 42"),
            ("swapper/0".into(), 0, 0, "worker".into(), 42, 110, 0)
        );
        // 42 leaves for unlisted 7 (traced: 42 is listed); unlisted tasks then run untraced
        // until unlisted 9 switches to 42 (traced: 42 is listed). 9's switch is taken as it
        // is: no switch from 7 to 9 is invented.
        sw.before(0, &switch(&fmt, ("worker", 42, 110), ("kworker", 7, 120)));
        assert!(sw
            .before(0, &switch(&fmt, ("other", 9, 120), ("worker", 42, 110)))
            .is_none());
        assert!(sw.before(0, &other(42)).is_none(), "42 runs");
        // Without the PID list, the same records show the switch from 7 to 9.
        let mut all = MissingSwitches::new(&fmt, Box::new(|_| None)).unwrap();
        all.before(0, &switch(&fmt, ("worker", 42, 110), ("kworker", 7, 120)));
        assert!(all
            .before(0, &switch(&fmt, ("other", 9, 120), ("worker", 42, 110)))
            .is_some());
        assert_eq!(sw.rebuilt(), 1);
    }

    #[test]
    fn a_task_seen_where_another_runs_was_switched_in() {
        let fmt = parse_format(SWITCH).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| None)).unwrap();
        // CPU 0 switches to 68, whose switches out are not traced; 500 then writes records.
        sw.before(0, &switch(&fmt, ("a", 5, 120), ("agent", 68, 110)));
        assert_eq!(
            rebuilt(&fmt, &mut sw, 0, &other(500), "the switch 68 -> 500"),
            ("agent".into(), 68, 0, "".into(), 500, 120, 68)
        );
        // 500 leaves for 68 (traced); 68 leaves for the idle task (untraced), seen through
        // an interrupt in the idle task.
        sw.before(0, &switch(&fmt, ("b", 500, 120), ("agent", 68, 110)));
        assert_eq!(
            rebuilt(&fmt, &mut sw, 0, &other(0), "the switch 68 -> idle"),
            ("agent".into(), 68, 0, "swapper/0".into(), 0, 120, 68)
        );
        assert_eq!(sw.rebuilt(), 2);
    }

    #[test]
    fn a_cpus_first_record_of_a_task_switches_it_in() {
        let fmt = parse_format(SWITCH).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| Some(b"probe".to_vec()))).unwrap();
        // CPU 1 idle since the start: its first record is the next task's own.
        assert_eq!(
            rebuilt(&fmt, &mut sw, 1, &other(77), "the switch into 77"),
            ("swapper/1".into(), 0, 0, "probe".into(), 77, 120, 0)
        );
        assert!(sw.before(1, &other(77)).is_none(), "77 runs now");
        // The idle task's own record, or a traced switch, first on a CPU: nothing to add.
        assert!(sw.before(2, &other(0)).is_none());
        assert!(sw
            .before(3, &switch(&fmt, ("x", 9, 120), ("swapper/3", 0, 120)))
            .is_none());
        assert_eq!(sw.rebuilt(), 1);
    }

    #[test]
    fn nothing_is_rebuilt_while_the_switches_chain() {
        let fmt = parse_format(SWITCH).unwrap();
        let mut sw = MissingSwitches::new(&fmt, Box::new(|_| None)).unwrap();
        // CPU 0's first record: a traced switch.
        assert!(sw
            .before(0, &switch(&fmt, ("z", 4, 120), ("a", 5, 120)))
            .is_none());
        assert!(sw.before(0, &other(5)).is_none());
        // Traced switches (from the idle task too, on kernels that trace them) rebuild
        // nothing.
        sw.before(0, &switch(&fmt, ("a", 5, 120), ("swapper/0", 0, 120)));
        assert!(sw
            .before(0, &switch(&fmt, ("swapper/0", 0, 120), ("b", 6, 120)))
            .is_none());
        assert!(sw.before(0, &other(6)).is_none());
        // Another CPU's state is its own.
        assert!(sw.before(1, &other(0)).is_none());
        assert!(sw.before(0, &other(6)).is_none());
        // Garbage is not a record.
        assert!(sw.before(0, &[1]).is_none());
        assert_eq!(sw.rebuilt(), 0);
    }
}
