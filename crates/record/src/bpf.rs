//! The optional eBPF helper (cargo feature `bpf`): loads `bpf/netheaders.bpf.c` (compiled by
//! `build.rs`) with aya, attaches it to the `net_dev_queue` and `netif_receive_skb` raw
//! tracepoints and reads its ring buffer. The programs are detached and unloaded when the
//! [`NetProbe`] is dropped.

use crate::netheader::HeaderStore;

#[cfg(feature = "bpf")]
mod imp {
    use super::HeaderStore;
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
}

#[cfg(not(feature = "bpf"))]
mod imp {
    use super::HeaderStore;

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
}

pub use imp::NetProbe;
