//! The string arguments of system calls (`openat`'s `filename`, `execve`'s `filename`…) as
//! the eBPF helper `bpf/sysargs.bpf.c` copies them at the calls' entries, waiting for the
//! `sys_enter` events they belong to. Pure: records in, strings out.

use std::collections::{HashMap, VecDeque};

/// Bytes before the string in a record (`struct record` of `bpf/sysargs.bpf.c`).
const HDR: usize = 24;

/// Added to an argument index: the record holds the bytes of a `struct sockaddr` (connect's
/// `uservaddr`, as long as its `addrlen` says, at most a `sockaddr_in6`), not a string.
pub const SOCKADDR_ARG: usize = 0x80;

/// The fields lttng-modules 2.13 gives a socket address (`syscall_entry_connect`): `family`,
/// the port (host order), and the IPv4 bytes or the IPv6 16-bit groups (one of them empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SockAddr {
    /// `sa_family` (2: AF_INET, 10: AF_INET6, others: no address).
    pub family: u16,
    /// The port.
    pub port: u16,
    /// IPv4 address bytes (empty unless AF_INET).
    pub v4: Vec<u8>,
    /// IPv6 address, eight 16-bit groups (empty unless AF_INET6).
    pub v6: Vec<u16>,
}

impl SockAddr {
    /// Decodes the bytes of a `struct sockaddr` as lttng-modules does: the family when there
    /// are 2 bytes, the port and address when the length covers a `sockaddr_in` (16 bytes)
    /// or a `sockaddr_in6` (28 bytes).
    pub fn parse(b: &[u8]) -> Option<SockAddr> {
        let family = u16::from_le_bytes(b.get(0..2)?.try_into().ok()?);
        let mut a = SockAddr {
            family,
            port: 0,
            v4: Vec::new(),
            v6: Vec::new(),
        };
        match family {
            2 if b.len() >= 16 => {
                a.port = u16::from_be_bytes([b[2], b[3]]);
                a.v4 = b[4..8].to_vec();
            }
            10 if b.len() >= 28 => {
                a.port = u16::from_be_bytes([b[2], b[3]]);
                a.v6 = b[8..24]
                    .chunks(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect();
            }
            _ => {}
        }
        Some(a)
    }
}

/// One string argument of one system call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgRecord {
    /// CLOCK_MONOTONIC time of the call's entry (ns).
    pub ts: u64,
    /// The calling thread.
    pub tid: i32,
    /// The system call number.
    pub nr: i64,
    /// The argument's index.
    pub arg: usize,
    /// The string, without its NUL.
    pub text: Vec<u8>,
}

impl ArgRecord {
    /// Parses a record; `None` when it is too short for its header or its length.
    pub fn parse(b: &[u8]) -> Option<ArgRecord> {
        let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
        let ts = u64::from_le_bytes(b.get(0..8)?.try_into().ok()?);
        let len = u32_at(20)? as usize;
        let s = b.get(HDR..HDR + len)?;
        let arg = u32_at(16)? as usize;
        // A sockaddr (argument flagged with SOCKADDR_ARG) is bytes; the rest NUL-ended text.
        let end = if arg & SOCKADDR_ARG != 0 {
            s.len()
        } else {
            s.iter().position(|&c| c == 0).unwrap_or(s.len())
        };
        Some(ArgRecord {
            ts,
            tid: u32_at(8)? as i32,
            nr: u32_at(12)? as i64,
            arg,
            text: s[..end].to_vec(),
        })
    }
}

/// Per thread, the strings read at its latest system calls' entries, oldest first.
#[derive(Debug, Default)]
pub struct ArgStore {
    by_tid: HashMap<i32, VecDeque<ArgRecord>>,
    newest: u64,
    /// Strings put in events.
    pub matched: u64,
    /// String arguments of recorded calls that had no string (a read that failed, or a
    /// record lost).
    pub missing: u64,
}

/// Records kept per thread (a backlog of calls not yet converted, and leftovers of calls
/// whose events were not recorded).
const PER_THREAD: usize = 4096;
/// Records older than this, relative to the call being converted, are leftovers.
const STALE_NS: u64 = 1_000_000_000;
/// How far a record's time may be from its `sys_enter` event's (both are written by the same
/// tracepoint call, one probe after the other).
const MATCH_NS: u64 = 1_000_000;

impl ArgStore {
    /// A new, empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a record.
    pub fn push(&mut self, r: ArgRecord) {
        self.newest = self.newest.max(r.ts);
        let q = self.by_tid.entry(r.tid).or_default();
        q.push_back(r);
        if q.len() > PER_THREAD {
            q.pop_front();
        }
        if self.by_tid.len() > 4096 {
            let cutoff = self.newest.saturating_sub(STALE_NS);
            self.by_tid
                .retain(|_, q| q.back().is_some_and(|r| r.ts >= cutoff));
        }
    }

    /// Keeps at most `max` records (all threads together), dropping the oldest: a flight
    /// recorder keeps the strings of the calls its kernel buffers may still hold.
    pub fn bound(&mut self, max: usize) {
        let mut total: usize = self.by_tid.values().map(VecDeque::len).sum();
        while total > max {
            // Drop the older half of the time the store covers.
            let oldest = self
                .by_tid
                .values()
                .filter_map(|q| q.front().map(|r| r.ts))
                .min()
                .unwrap_or(self.newest);
            let cutoff = oldest + (self.newest.saturating_sub(oldest)) / 2 + 1;
            for q in self.by_tid.values_mut() {
                while q.front().is_some_and(|r| r.ts < cutoff) {
                    q.pop_front();
                    total -= 1;
                }
            }
            self.by_tid.retain(|_, q| !q.is_empty());
        }
    }

    /// Takes the string of argument `arg` of the call `nr` thread `tid` entered at `ts` (the
    /// time of its `sys_enter` event): the record of that call closest in time. A thread's
    /// calls may be converted out of order (each CPU's events are converted in turn), so
    /// records are matched by time, not by position; leftovers a second older go.
    pub fn take(&mut self, tid: i32, nr: i64, arg: usize, ts: u64) -> Option<Vec<u8>> {
        let q = self.by_tid.get_mut(&tid)?;
        let cutoff = ts.saturating_sub(STALE_NS);
        while q.front().is_some_and(|r| r.ts < cutoff) {
            q.pop_front();
        }
        let (i, _) = q
            .iter()
            .enumerate()
            .filter(|(_, r)| r.nr == nr && r.arg == arg && r.ts.abs_diff(ts) <= MATCH_NS)
            .min_by_key(|(_, r)| r.ts.abs_diff(ts))?;
        let r = q.remove(i)?;
        self.matched += 1;
        Some(r.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts: u64, tid: i32, nr: u32, arg: u32, s: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(ts.to_le_bytes());
        b.extend(tid.to_le_bytes());
        b.extend(nr.to_le_bytes());
        b.extend(arg.to_le_bytes());
        b.extend(((s.len() + 1) as u32).to_le_bytes());
        b.extend(s);
        b.push(0);
        b
    }

    #[test]
    fn parse_and_match() {
        let r = ArgRecord::parse(&rec(5, 7, 257, 1, b"/etc/hosts")).unwrap();
        assert_eq!((r.ts, r.tid, r.nr, r.arg), (5, 7, 257, 1));
        assert_eq!(r.text, b"/etc/hosts");
        assert!(ArgRecord::parse(&rec(5, 7, 257, 1, b"/etc/hosts")[..30]).is_none());

        let mut st = ArgStore::new();
        // A call whose event was not recorded, then rename(old, new), then openat on another
        // CPU converted first.
        st.push(ArgRecord::parse(&rec(1_000, 7, 2, 0, b"/skipped")).unwrap());
        st.push(ArgRecord::parse(&rec(2_000, 7, 82, 0, b"/a")).unwrap());
        st.push(ArgRecord::parse(&rec(2_000, 7, 82, 1, b"/b")).unwrap());
        st.push(ArgRecord::parse(&rec(3_000, 7, 257, 1, b"/c")).unwrap());
        assert_eq!(st.take(7, 257, 1, 2_990), Some(b"/c".to_vec()));
        assert_eq!(st.take(7, 82, 0, 1_995), Some(b"/a".to_vec()));
        assert_eq!(st.take(7, 82, 1, 1_995), Some(b"/b".to_vec()));
        assert_eq!(st.take(8, 257, 1, 2_990), None, "another thread");
        assert_eq!(st.take(7, 257, 1, 2_990), None, "taken once");
        assert_eq!(st.take(7, 2, 0, 5_000_000), None, "too far in time");
        // Leftovers over a second old go.
        st.take(7, 2, 0, 3_000_000_000);
        assert!(st.by_tid[&7].is_empty());
        assert_eq!(st.matched, 3);
    }

    #[test]
    fn socket_addresses() {
        let mut v4 = vec![2, 0, 0x1f, 0x90, 127, 0, 0, 1];
        v4.extend([0; 8]);
        let a = SockAddr::parse(&v4).unwrap();
        assert_eq!(
            (a.family, a.port, a.v4.as_slice()),
            (2, 8080, &[127, 0, 0, 1][..])
        );
        assert!(a.v6.is_empty());
        let mut v6 = vec![10, 0, 0, 80, 0, 0, 0, 0];
        v6.extend([0; 15]);
        v6.push(1);
        v6.extend([0; 4]);
        let a = SockAddr::parse(&v6).unwrap();
        assert_eq!((a.family, a.port), (10, 80));
        assert_eq!(a.v6, vec![0, 0, 0, 0, 0, 0, 0, 1]);
        // Too short for its family: the family only, as lttng-modules.
        let a = SockAddr::parse(&v4[..8]).unwrap();
        assert_eq!((a.family, a.port, a.v4.len()), (2, 0, 0));
        assert!(SockAddr::parse(&[1]).is_none());
        // Binary records keep their NUL bytes.
        let r = ArgRecord::parse(&rec(5, 7, 42, (SOCKADDR_ARG | 1) as u32, &v4)[..24 + 17]);
        assert_eq!(r.map(|r| r.text.len()), Some(17));
    }

    #[test]
    fn bounded_store_drops_the_oldest() {
        let mut st = ArgStore::new();
        for i in 0..100u64 {
            // 10 ms apart: one record per match window.
            st.push(ArgRecord::parse(&rec(i * 10_000_000, (i % 3) as i32, 2, 0, b"/f")).unwrap());
        }
        st.bound(40);
        let left: usize = st.by_tid.values().map(VecDeque::len).sum();
        assert!(left <= 40 && left > 0, "{left}");
        // The newest are kept, the oldest gone.
        assert_eq!(st.take(0, 2, 0, 990_000_000), Some(b"/f".to_vec()));
        assert_eq!(st.take(0, 2, 0, 0), None);
    }
}
