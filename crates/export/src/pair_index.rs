//! An index found by a pair of small indexes (a trace and its stream, a stream class and its
//! event class), filled as the pairs are first met: one look-up per event in the exporters'
//! hot loops, no hashing.

/// Pair `(a, b)` to an index, for the pairs set so far.
#[derive(Debug, Default)]
pub(crate) struct PairIndex(Vec<Vec<u32>>);

/// A pair not set.
const UNSET: u32 = u32::MAX;

impl PairIndex {
    /// The index of `(a, b)`, if set.
    #[inline]
    pub(crate) fn get(&self, a: usize, b: usize) -> Option<usize> {
        match self.0.get(a).and_then(|v| v.get(b)) {
            Some(&i) if i != UNSET => Some(i as usize),
            _ => None,
        }
    }

    /// Sets the index of `(a, b)` to `i`.
    pub(crate) fn set(&mut self, a: usize, b: usize, i: usize) {
        if self.0.len() <= a {
            self.0.resize_with(a + 1, Vec::new);
        }
        let v = &mut self.0[a];
        if v.len() <= b {
            v.resize(b + 1, UNSET);
        }
        v[b] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::PairIndex;

    #[test]
    fn set_pairs_are_found_and_others_not() {
        let mut p = PairIndex::default();
        assert_eq!(p.get(0, 0), None);
        p.set(2, 5, 7);
        p.set(0, 1, 0);
        assert_eq!(p.get(2, 5), Some(7));
        assert_eq!(p.get(0, 1), Some(0));
        assert_eq!(
            (p.get(2, 4), p.get(1, 0), p.get(0, 0), p.get(9, 9)),
            (None, None, None, None)
        );
    }
}
