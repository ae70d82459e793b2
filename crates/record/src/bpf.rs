//! The optional eBPF helpers (cargo feature `bpf`), compiled by `build.rs` and loaded with
//! aya; their programs are detached and unloaded when the probe is dropped.
//!
//! - [`NetProbe`]: `bpf/netheaders.bpf.c` on the `net_dev_queue` and `netif_receive_skb` raw
//!   tracepoints, the packets' headers.
//! - [`StackProbe`]: `bpf/stacks.bpf.c` on BTF tracepoints (scheduler, system calls, block
//!   requests), the stacks of `--stacks`.
//! - [`ArgProbe`]: `bpf/sysargs.bpf.c` on the `sys_enter` BTF tracepoint, the string
//!   arguments of the system calls.

use crate::netheader::HeaderStore;
use crate::stacks::StackThresholds;

#[cfg(feature = "bpf")]
mod imp {
    use super::{HeaderStore, StackThresholds};
    use aya::maps::{MapData, RingBuf};
    use aya::programs::RawTracePoint;
    use aya::Ebpf;

    static OBJECT: &[u8] =
        aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/netheaders.bpf.o"));

    pub struct NetProbe {
        ring: RingBuf<MapData>,
        // Owns the programs and their links: dropping it detaches them.
        _bpf: Ebpf,
    }

    impl NetProbe {
        pub fn start() -> Result<Self, String> {
            let mut bpf = Ebpf::load(OBJECT).map_err(|e| format!("loading the BPF object: {e}"))?;
            for (prog, tp) in [
                ("tk_net_dev_queue", "net_dev_queue"),
                ("tk_netif_receive_skb", "netif_receive_skb"),
            ] {
                let p: &mut RawTracePoint = bpf
                    .program_mut(prog)
                    .ok_or_else(|| format!("no program {prog} in the BPF object"))?
                    .try_into()
                    .map_err(|e| format!("{prog}: {e}"))?;
                p.load().map_err(|e| format!("loading {prog}: {e}"))?;
                p.attach(tp)
                    .map_err(|e| format!("attaching {prog} to {tp}: {e}"))?;
            }
            let map = bpf
                .take_map("events")
                .ok_or("no ring buffer `events` in the BPF object")?;
            let ring = RingBuf::try_from(map).map_err(|e| format!("ring buffer: {e}"))?;
            Ok(NetProbe { ring, _bpf: bpf })
        }

        pub fn poll(&mut self, store: &mut HeaderStore) -> usize {
            let mut n = 0;
            while let Some(item) = self.ring.next() {
                store.push_raw(&item);
                n += 1;
            }
            n
        }
    }

    static STACKS_OBJECT: &[u8] =
        aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/stacks.bpf.o"));

    pub struct StackProbe {
        ring: RingBuf<MapData>,
        _bpf: Ebpf,
    }

    impl StackProbe {
        pub fn start(t: &StackThresholds, self_tgid: i32, user: bool) -> Result<Self, String> {
            use aya::programs::BtfTracePoint;
            use aya::{Btf, EbpfLoader};
            let btf = Btf::from_sys_fs()
                .map_err(|e| format!("the kernel's BTF (/sys/kernel/btf/vmlinux): {e}"))?;
            let user = user as u32;
            let mut bpf = EbpfLoader::new()
                .override_global("cfg_syscall_ns", &t.syscall, true)
                .override_global("cfg_offcpu_ns", &t.offcpu, true)
                .override_global("cfg_wakeup_ns", &t.wakeup, true)
                .override_global("cfg_block_ns", &t.block, true)
                .override_global("cfg_self_tgid", &self_tgid, true)
                .override_global("cfg_user", &user, true)
                // The task-storage map (created from its BTF definition; only the programs
                // use it).
                .allow_unsupported_maps()
                .load(STACKS_OBJECT)
                .map_err(|e| format!("loading the BPF object: {e}"))?;
            // Only the tracepoints the rules need cost anything.
            let mut progs = vec![
                ("tk_stacks_switch", "sched_switch"),
                ("tk_stacks_exit", "sched_process_exit"),
            ];
            if t.offcpu > 0 || t.wakeup > 0 {
                progs.push(("tk_stacks_waking", "sched_waking"));
            }
            if t.syscall > 0 {
                progs.push(("tk_stacks_sys_enter", "sys_enter"));
                progs.push(("tk_stacks_sys_exit", "sys_exit"));
            }
            if t.block > 0 {
                progs.push(("tk_stacks_rq_issue", "block_rq_issue"));
                progs.push(("tk_stacks_rq_complete", "block_rq_complete"));
            }
            for (prog, tp) in progs {
                let p: &mut BtfTracePoint = bpf
                    .program_mut(prog)
                    .ok_or_else(|| format!("no program {prog} in the BPF object"))?
                    .try_into()
                    .map_err(|e| format!("{prog}: {e}"))?;
                p.load(tp, &btf)
                    .map_err(|e| format!("loading {prog}: {e}"))?;
                p.attach()
                    .map_err(|e| format!("attaching {prog} to {tp}: {e}"))?;
            }
            let map = bpf
                .take_map("stacks")
                .ok_or("no ring buffer `stacks` in the BPF object")?;
            let ring = RingBuf::try_from(map).map_err(|e| format!("ring buffer: {e}"))?;
            Ok(StackProbe { ring, _bpf: bpf })
        }

        /// Stacks the helper could not write (its ring buffer full), all CPUs.
        pub fn lost(&self) -> u64 {
            use aya::maps::PerCpuArray;
            let Some(map) = self._bpf.map("lost") else {
                return 0;
            };
            let Ok(arr) = PerCpuArray::<_, u64>::try_from(map) else {
                return 0;
            };
            arr.get(&0, 0).map_or(0, |v| v.iter().sum())
        }

        pub fn poll(&mut self, mut f: impl FnMut(&[u8])) -> usize {
            let mut n = 0;
            while let Some(item) = self.ring.next() {
                f(&item);
                n += 1;
            }
            n
        }
    }

    static SYSARGS_OBJECT: &[u8] =
        aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/sysargs.bpf.o"));

    pub struct ArgProbe {
        ring: RingBuf<MapData>,
        _bpf: Ebpf,
    }

    impl ArgProbe {
        /// `masks`: (system call number, a bit per string argument).
        pub fn start(masks: &[(u32, u8)], self_tgid: i32) -> Result<Self, String> {
            use aya::maps::Array;
            use aya::programs::BtfTracePoint;
            use aya::{Btf, EbpfLoader};
            let btf = Btf::from_sys_fs()
                .map_err(|e| format!("the kernel's BTF (/sys/kernel/btf/vmlinux): {e}"))?;
            let mut bpf = EbpfLoader::new()
                .override_global("cfg_self_tgid", &self_tgid, true)
                .load(SYSARGS_OBJECT)
                .map_err(|e| format!("loading the BPF object: {e}"))?;
            {
                let map = bpf
                    .map_mut("strings")
                    .ok_or("no map `strings` in the BPF object")?;
                let mut arr: Array<_, u8> =
                    Array::try_from(map).map_err(|e| format!("map `strings`: {e}"))?;
                for &(nr, m) in masks {
                    if nr < 512 && m != 0 {
                        arr.set(nr, m, 0)
                            .map_err(|e| format!("map `strings`[{nr}]: {e}"))?;
                    }
                }
            }
            let p: &mut BtfTracePoint = bpf
                .program_mut("tk_sysargs_enter")
                .ok_or("no program tk_sysargs_enter in the BPF object")?
                .try_into()
                .map_err(|e| format!("tk_sysargs_enter: {e}"))?;
            p.load("sys_enter", &btf)
                .map_err(|e| format!("loading tk_sysargs_enter: {e}"))?;
            p.attach()
                .map_err(|e| format!("attaching tk_sysargs_enter to sys_enter: {e}"))?;
            let map = bpf
                .take_map("sysargs")
                .ok_or("no ring buffer `sysargs` in the BPF object")?;
            let ring = RingBuf::try_from(map).map_err(|e| format!("ring buffer: {e}"))?;
            Ok(ArgProbe { ring, _bpf: bpf })
        }

        pub fn poll(&mut self, mut f: impl FnMut(&[u8])) -> usize {
            let mut n = 0;
            while let Some(item) = self.ring.next() {
                f(&item);
                n += 1;
            }
            n
        }
    }
}

#[cfg(not(feature = "bpf"))]
mod imp {
    use super::{HeaderStore, StackThresholds};

    /// Stand-in when the `bpf` feature is off: never starts.
    pub struct NetProbe(());

    impl NetProbe {
        pub fn start() -> Result<Self, String> {
            Err("this tracekit was built without the `bpf` cargo feature".into())
        }

        pub fn poll(&mut self, _store: &mut HeaderStore) -> usize {
            0
        }
    }

    /// Stand-in when the `bpf` feature is off: never starts.
    pub struct StackProbe(());

    impl StackProbe {
        pub fn start(_: &StackThresholds, _: i32, _: bool) -> Result<Self, String> {
            Err(
                "this tracekit was built without the `bpf` cargo feature (the stacks' \
                 latency thresholds are checked by eBPF)"
                    .into(),
            )
        }

        pub fn poll(&mut self, _f: impl FnMut(&[u8])) -> usize {
            0
        }

        pub fn lost(&self) -> u64 {
            0
        }
    }

    /// Stand-in when the `bpf` feature is off: never starts.
    pub struct ArgProbe(());

    impl ArgProbe {
        pub fn start(_: &[(u32, u8)], _: i32) -> Result<Self, String> {
            Err("this tracekit was built without the `bpf` cargo feature".into())
        }

        pub fn poll(&mut self, _f: impl FnMut(&[u8])) -> usize {
            0
        }
    }
}

pub use imp::{ArgProbe, NetProbe, StackProbe};
