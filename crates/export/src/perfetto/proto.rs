//! The messages of Perfetto's trace format that the exporter writes, declared from the field
//! numbers of Perfetto's `protos/perfetto/trace` (proto2: every scalar is optional). Only the
//! fields written (and read back by the tests) are declared; a reader skips the others.

#![allow(missing_docs)]
// Each message and field is Perfetto's, documented there.
// Messages as Perfetto lays them out, built once per packet (bundles are encoded by hand).
#![allow(clippy::large_enum_variant)]

use prost::{Message, Oneof};

/// `Trace`: the whole file, a sequence of packets.
#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "98")]
    pub machine_id: Option<u32>,
    #[prost(oneof = "Data", tags = "1, 2, 6, 45")]
    pub data: Option<Data>,
}

/// `TracePacket.data`.
#[derive(Clone, PartialEq, Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "6")]
    ClockSnapshot(ClockSnapshot),
    #[prost(message, tag = "45")]
    SystemInfo(SystemInfo),
}

/// `FtraceEventBundle`: one CPU's events.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
    #[prost(bool, optional, tag = "3")]
    pub lost_events: Option<bool>,
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
}

/// `FtraceEventBundle.CompactSched`: `sched_switch` and `sched_waking` as columns, times as
/// deltas from the previous one of the kind in the bundle (the first from 0), comms as
/// indexes in `intern_table`.
#[derive(Clone, PartialEq, Message)]
pub struct CompactSched {
    #[prost(string, repeated, tag = "5")]
    pub intern_table: Vec<String>,
    #[prost(uint64, repeated, packed = "true", tag = "1")]
    pub switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, packed = "true", tag = "2")]
    pub switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, packed = "true", tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, packed = "true", tag = "4")]
    pub switch_next_prio: Vec<i32>,
    #[prost(uint32, repeated, packed = "true", tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, packed = "true", tag = "7")]
    pub waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, packed = "true", tag = "8")]
    pub waking_pid: Vec<i32>,
    #[prost(int32, repeated, packed = "true", tag = "9")]
    pub waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, packed = "true", tag = "10")]
    pub waking_prio: Vec<i32>,
    #[prost(uint32, repeated, packed = "true", tag = "11")]
    pub waking_comm_index: Vec<u32>,
}

/// Field numbers of [`FtraceEventBundle`], for the exporter's own framing.
pub mod bundle {
    /// `cpu`.
    pub const CPU: u32 = 1;
    /// `event`.
    pub const EVENT: u32 = 2;
    /// `lost_events`.
    pub const LOST_EVENTS: u32 = 3;
}

/// Field numbers of [`TracePacket`], for the exporter's own framing.
pub mod packet {
    /// `Trace.packet`.
    pub const TRACE_PACKET: u32 = 1;
    /// `ftrace_events`.
    pub const FTRACE_EVENTS: u32 = 1;
    /// `machine_id`.
    pub const MACHINE_ID: u32 = 98;
}

/// Field numbers of [`Event`]'s kinds in `FtraceEvent`, for the exporter's own encoding.
pub mod ftrace {
    /// `sched_switch`.
    pub const SCHED_SWITCH: u32 = 4;
    /// `sched_wakeup`.
    pub const SCHED_WAKEUP: u32 = 17;
    /// `sched_waking`.
    pub const SCHED_WAKING: u32 = 20;
    /// `softirq_entry`.
    pub const SOFTIRQ_ENTRY: u32 = 24;
    /// `softirq_exit`.
    pub const SOFTIRQ_EXIT: u32 = 25;
    /// `softirq_raise`.
    pub const SOFTIRQ_RAISE: u32 = 26;
    /// `irq_handler_entry`.
    pub const IRQ_HANDLER_ENTRY: u32 = 36;
    /// `irq_handler_exit`.
    pub const IRQ_HANDLER_EXIT: u32 = 37;
    /// `sched_wakeup_new`.
    pub const SCHED_WAKEUP_NEW: u32 = 114;
    /// `task_newtask`.
    pub const TASK_NEWTASK: u32 = 235;
    /// `sched_process_exec`.
    pub const SCHED_PROCESS_EXEC: u32 = 237;
    /// `sched_process_exit`.
    pub const SCHED_PROCESS_EXIT: u32 = 238;
    /// `sched_process_fork`.
    pub const SCHED_PROCESS_FORK: u32 = 239;
    /// `sched_process_free`.
    pub const SCHED_PROCESS_FREE: u32 = 240;
    /// `sys_enter`.
    pub const SYS_ENTER: u32 = 329;
    /// `sys_exit`.
    pub const SYS_EXIT: u32 = 330;
}

/// `FtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// The thread running on the CPU (the kernel's pid: a thread id).
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(
        oneof = "Event",
        tags = "4, 17, 20, 24, 25, 26, 36, 37, 114, 235, 237, 238, 239, 240, 329, 330"
    )]
    pub event: Option<Event>,
}

/// `FtraceEvent.event`: the kinds the exporter writes.
#[derive(Clone, PartialEq, Oneof)]
pub enum Event {
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "24")]
    SoftirqEntry(Softirq),
    #[prost(message, tag = "25")]
    SoftirqExit(Softirq),
    #[prost(message, tag = "26")]
    SoftirqRaise(Softirq),
    #[prost(message, tag = "36")]
    IrqHandlerEntry(IrqHandlerEntry),
    #[prost(message, tag = "37")]
    IrqHandlerExit(IrqHandlerExit),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtask),
    #[prost(message, tag = "237")]
    SchedProcessExec(SchedProcessExec),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessFork),
    #[prost(message, tag = "240")]
    SchedProcessFree(SchedProcessFree),
    #[prost(message, tag = "329")]
    SysEnter(SysEnter),
    #[prost(message, tag = "330")]
    SysExit(SysExit),
}

/// `SchedSwitchFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakeupFtraceEvent`, `SchedWakingFtraceEvent` and `SchedWakeupNewFtraceEvent`: one
/// layout.
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `SoftirqEntryFtraceEvent`, `SoftirqExitFtraceEvent`, `SoftirqRaiseFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct Softirq {
    #[prost(uint32, optional, tag = "1")]
    pub vec: Option<u32>,
}

/// `IrqHandlerEntryFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct IrqHandlerEntry {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `IrqHandlerExitFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct IrqHandlerExit {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ret: Option<i32>,
}

/// `TaskNewtaskFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct TaskNewtask {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub comm: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    pub clone_flags: Option<u64>,
}

/// `SchedProcessExecFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExec {
    #[prost(string, optional, tag = "1")]
    pub filename: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub old_pid: Option<i32>,
}

/// `SchedProcessExitFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

/// `SchedProcessForkFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFork {
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

/// `SchedProcessFreeFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFree {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
}

/// `SysEnterFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SysEnter {
    #[prost(int64, optional, tag = "1")]
    pub id: Option<i64>,
    #[prost(uint64, repeated, packed = "false", tag = "2")]
    pub args: Vec<u64>,
}

/// `SysExitFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SysExit {
    #[prost(int64, optional, tag = "1")]
    pub id: Option<i64>,
    #[prost(int64, optional, tag = "2")]
    pub ret: Option<i64>,
}

/// `ProcessTree`.
#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
    #[prost(uint64, optional, tag = "3")]
    pub collection_end_timestamp: Option<u64>,
}

/// `ProcessTree.Process`.
#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
    #[prost(bool, optional, tag = "8")]
    pub is_kthread: Option<bool>,
    #[prost(bool, optional, tag = "9")]
    pub cmdline_is_comm: Option<bool>,
}

/// `ProcessTree.Thread`.
#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// `ClockSnapshot`.
#[derive(Clone, PartialEq, Message)]
pub struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    /// A `BuiltinClock`.
    #[prost(int32, optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

/// `ClockSnapshot.Clock`.
#[derive(Clone, PartialEq, Message)]
pub struct Clock {
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
}

/// `BuiltinClock` values.
pub mod clock {
    /// `REALTIME`.
    pub const REALTIME: u32 = 1;
    /// `MONOTONIC`.
    pub const MONOTONIC: u32 = 3;
    /// `BOOTTIME`: the clock of ftrace events when the bundle names none.
    pub const BOOTTIME: u32 = 6;
}

/// `SystemInfo`.
#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
}

/// `Utsname`.
#[derive(Clone, PartialEq, Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub version: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}
