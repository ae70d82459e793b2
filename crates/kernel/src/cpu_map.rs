//! Tables indexed by the CPU ids a trace gives.

use std::collections::BTreeMap;

/// CPU ids below this (Linux's largest `NR_CPUS`) index a vector. Ids above, which only a
/// damaged trace gives, go in an ordered map: a wakeup's `target_cpu` of 4 billion must not
/// size a vector.
const DENSE_CPUS: u32 = 8192;

/// A value per CPU id, created on first use; iterated in id order.
#[derive(Debug, Clone)]
pub struct CpuMap<T> {
    dense: Vec<Option<T>>,
    far: BTreeMap<u32, T>,
}

impl<T> Default for CpuMap<T> {
    fn default() -> Self {
        CpuMap {
            dense: Vec::new(),
            far: BTreeMap::new(),
        }
    }
}

impl<T> CpuMap<T> {
    /// The value of CPU `id`, if made.
    pub fn get(&self, id: u32) -> Option<&T> {
        match self.dense.get(id as usize) {
            Some(v) => v.as_ref(),
            None => self.far.get(&id),
        }
    }

    /// The value of CPU `id`, mutably, if made.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        match self.dense.get_mut(id as usize) {
            Some(v) => v.as_mut(),
            None => self.far.get_mut(&id),
        }
    }

    /// The value of CPU `id`, made by `make` if there is none.
    // Always inlined: most events reach a known CPU, found here without a call.
    #[inline(always)]
    pub fn get_or_insert_with(&mut self, id: u32, make: impl FnOnce() -> T) -> &mut T {
        let i = id as usize;
        if !matches!(self.dense.get(i), Some(Some(_))) {
            return self.insert_with(id, make);
        }
        self.dense[i].get_or_insert_with(make)
    }

    /// [`Self::get_or_insert_with`] for a CPU not in the vector yet.
    #[cold]
    #[inline(never)]
    fn insert_with(&mut self, id: u32, make: impl FnOnce() -> T) -> &mut T {
        if id >= DENSE_CPUS {
            return self.far.entry(id).or_insert_with(make);
        }
        let i = id as usize;
        if self.dense.len() <= i {
            self.dense.resize_with(i + 1, || None);
        }
        self.dense[i].get_or_insert_with(make)
    }

    /// The values made, by CPU id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i as u32, v.as_ref()?)));
        dense.chain(self.far.iter().map(|(&i, v)| (i, v)))
    }

    /// The values made, mutably, by CPU id.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> {
        let dense = self
            .dense
            .iter_mut()
            .enumerate()
            .filter_map(|(i, v)| Some((i as u32, v.as_mut()?)));
        dense.chain(self.far.iter_mut().map(|(&i, v)| (i, v)))
    }

    /// The values made, by CPU id.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.iter().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_and_far_ids_in_id_order() {
        let mut m = CpuMap::default();
        for id in [u32::MAX, 3, DENSE_CPUS, 0, DENSE_CPUS - 1] {
            *m.get_or_insert_with(id, || 0u64) += id as u64 + 1;
        }
        *m.get_or_insert_with(3, || 100) += 1;
        let ids: Vec<(u32, u64)> = m.iter().map(|(i, &v)| (i, v)).collect();
        assert_eq!(
            ids,
            [
                (0, 1),
                (3, 5),
                (DENSE_CPUS - 1, DENSE_CPUS as u64),
                (DENSE_CPUS, DENSE_CPUS as u64 + 1),
                (u32::MAX, u32::MAX as u64 + 1),
            ]
        );
        // The far ids did not size the vector.
        assert_eq!(m.dense.len(), DENSE_CPUS as usize);
        assert_eq!(m.get(1), None);
        assert_eq!(m.get(u32::MAX - 1), None);
        assert_eq!(m.get_mut(u32::MAX).copied(), Some(u32::MAX as u64 + 1));
    }
}

/// The CPU that recorded the stream of `ev`, as LTTng's per-CPU kernel streams say it: their
/// packet context's `cpu_id`; None for a stream without one.
pub fn recorded_cpu(ev: &ctf::Event<'_>) -> Option<u32> {
    ev.packet_context()
        .and_then(|p| p.field("cpu_id"))
        .and_then(|f| f.as_u64())
        .map(|c| c as u32)
}

/// The CPU of each stream of some traces ([`recorded_cpu`], else the stream's index), found
/// at its first event.
#[derive(Debug, Clone, Default)]
pub struct StreamCpus(Vec<Vec<Option<u32>>>);

impl StreamCpus {
    /// The CPU of the stream of `ev`.
    #[inline]
    pub fn of(&mut self, ev: &ctf::Event<'_>) -> u32 {
        let (t, s) = (ev.trace().index, ev.stream_index());
        if let Some(&Some(cpu)) = self.0.get(t).and_then(|v| v.get(s)) {
            return cpu;
        }
        self.first_of(ev, t, s)
    }

    #[cold]
    fn first_of(&mut self, ev: &ctf::Event<'_>, t: usize, s: usize) -> u32 {
        let cpu = recorded_cpu(ev).unwrap_or(s as u32);
        if self.0.len() <= t {
            self.0.resize_with(t + 1, Vec::new);
        }
        let v = &mut self.0[t];
        if v.len() <= s {
            v.resize(s + 1, None);
        }
        v[s] = Some(cpu);
        cpu
    }
}
