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
