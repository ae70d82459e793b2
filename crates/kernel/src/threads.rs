//! The thread table: threads in a `Vec` (a thread's slot never changes, threads are never
//! removed) found by tid through a paged direct index, so that the per-event lookups are a
//! couple of loads instead of a hash, and CPUs can keep their current thread's slot.

use crate::hash::IntMap;
use crate::state::Thread;

/// tids per index page (4 KiB of `u32`).
const PAGE_BITS: u32 = 10;
const PAGE: usize = 1 << PAGE_BITS;
/// tids below this (Linux's largest `pid_max`, 2^22) are indexed directly; others (negative
/// or corrupt values) go to a hash map.
const DIRECT: u32 = 1 << 22;
const NO_SLOT: u32 = u32::MAX;
/// Threads the list has room for from its first insertion. Room the list does not use costs
/// address space only (the pages are never touched), whereas regrowing copies every thread
/// and touches twice their memory: on traces of thousands of threads, regrowth made a large
/// share of an analysis's page faults. Blocks instead of one vector would cost an extra load
/// per access, which shows even on traces with few threads.
const RESERVED: usize = 1 << 16;

/// Threads by slot and by tid.
#[derive(Debug, Default, Clone)]
pub struct Threads {
    list: Vec<Thread>,
    /// Slot of tid `t` at `pages[t >> PAGE_BITS][t % PAGE]` (`NO_SLOT`: unknown); pages are
    /// allocated when a tid in their range first appears (tids cluster, so few are).
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    other: IntMap<i32, u32>,
}

impl Threads {
    /// The slot of thread `tid`, if known.
    #[inline]
    pub(crate) fn slot(&self, tid: i32) -> Option<u32> {
        let t = tid as u32;
        if t < DIRECT {
            let page = self.pages.get((t >> PAGE_BITS) as usize)?.as_deref()?;
            let s = page[t as usize % PAGE];
            (s != NO_SLOT).then_some(s)
        } else {
            self.other.get(&tid).copied()
        }
    }

    /// The slot of thread `tid`, which is created (with only its tid set) if unknown.
    #[inline]
    pub(crate) fn slot_or_insert(&mut self, tid: i32) -> u32 {
        match self.slot(tid) {
            Some(s) => s,
            None => self.insert(tid),
        }
    }

    #[cold]
    fn insert(&mut self, tid: i32) -> u32 {
        let s = self.list.len() as u32;
        if self.list.capacity() == 0 {
            self.list.reserve_exact(RESERVED);
        }
        self.list.push(Thread {
            tid,
            ..Default::default()
        });
        let t = tid as u32;
        if t < DIRECT {
            let p = (t >> PAGE_BITS) as usize;
            if self.pages.len() <= p {
                self.pages.resize_with(p + 1, || None);
            }
            self.pages[p].get_or_insert_with(|| Box::new([NO_SLOT; PAGE]))[t as usize % PAGE] = s;
        } else {
            self.other.insert(tid, s);
        }
        s
    }

    /// The thread `tid`.
    #[inline]
    pub fn get(&self, tid: i32) -> Option<&Thread> {
        self.slot(tid).map(|s| &self.list[s as usize])
    }

    /// The thread `tid`, mutably.
    #[inline]
    pub fn get_mut(&mut self, tid: i32) -> Option<&mut Thread> {
        self.slot(tid).map(|s| &mut self.list[s as usize])
    }

    /// The thread in slot `slot` (from [`Threads::slot`]).
    #[inline]
    pub(crate) fn at(&self, slot: u32) -> &Thread {
        &self.list[slot as usize]
    }

    /// The thread in slot `slot`, mutably.
    #[inline]
    pub(crate) fn at_mut(&mut self, slot: u32) -> &mut Thread {
        &mut self.list[slot as usize]
    }

    /// Whether thread `tid` was seen.
    pub fn contains(&self, tid: i32) -> bool {
        self.slot(tid).is_some()
    }

    /// How many threads were seen.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no thread was seen.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The threads, in the order they were first seen.
    pub fn iter(&self) -> std::slice::Iter<'_, Thread> {
        self.list.iter()
    }

    /// The tids, in the order they were first seen.
    pub fn tids(&self) -> impl Iterator<Item = i32> + '_ {
        self.iter().map(|t| t.tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_tid_by_slot() {
        let mut t = Threads::default();
        // Small, page-crossing, the largest direct, negative and out-of-range tids.
        let tids = [
            0,
            1,
            1023,
            1024,
            4_194_303,
            -1,
            4_194_304,
            i32::MAX,
            i32::MIN,
            77,
        ];
        let slots: Vec<u32> = tids.iter().map(|&x| t.slot_or_insert(x)).collect();
        assert_eq!(slots, (0..tids.len() as u32).collect::<Vec<_>>());
        for (&x, &s) in tids.iter().zip(&slots) {
            assert_eq!(t.slot(x), Some(s));
            assert_eq!(t.slot_or_insert(x), s, "no second insertion");
            assert_eq!(t.at(s).tid, x);
            assert_eq!(t.get(x).map(|t| t.tid), Some(x));
        }
        assert_eq!(t.len(), tids.len());
        for x in [2, 1022, 1025, 4_194_302, -2, 5_000_000] {
            assert_eq!(t.slot(x), None, "{x}");
            assert!(!t.contains(x));
        }
        assert_eq!(t.tids().collect::<Vec<_>>(), tids);
        t.get_mut(1024).unwrap().comm.push_str("kworker");
        assert_eq!(t.at(3).comm, "kworker");
    }

    #[test]
    fn slots_stay_past_the_reserved_room() {
        let mut t = Threads::default();
        let n = RESERVED + 5;
        // Scattered tids over many index pages.
        let tids: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 4_000_000).collect();
        for (i, &x) in tids.iter().enumerate() {
            assert_eq!(t.slot_or_insert(x), i as u32);
            t.at_mut(i as u32).pid = Some(x / 2);
        }
        assert_eq!(t.len(), n);
        for (i, &x) in tids.iter().enumerate() {
            assert_eq!(t.slot(x), Some(i as u32));
            assert_eq!(t.at(i as u32).tid, x);
            assert_eq!(t.get(x).and_then(|th| th.pid), Some(x / 2));
        }
        assert_eq!(t.tids().collect::<Vec<_>>(), tids);
        assert_eq!(t.iter().count(), n);
    }
}
