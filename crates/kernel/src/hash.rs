//! A fast hasher for the state's integer keys (thread ids, descriptors, devices, sectors): a
//! multiply-rotate hash in the style of rustc's FxHash. It is not DoS-resistant, which does not
//! matter for keys read from a trace being analysed.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher for small integer keys.
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl IntHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = self.0.wrapping_add(x).wrapping_mul(K);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The multiplication leaves the high bits best mixed; hashbrown takes the bucket from
        // the low bits and the tag from the top 7.
        self.0.rotate_left(26)
    }
}

/// The hasher builder of [`IntMap`] and [`IntSet`].
pub type IntBuild = BuildHasherDefault<IntHasher>;
/// A hash map with a fast multiply-rotate hasher for integer keys (not DoS-resistant, which
/// keys read from a trace do not need).
pub type IntMap<K, V> = HashMap<K, V, IntBuild>;
/// A hash set with the hasher of [`IntMap`].
pub type IntSet<K> = HashSet<K, IntBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn spreads_small_keys() {
        let b = IntBuild::default();
        let mut low: HashSet<u64> = HashSet::new();
        for tid in 0..1024i32 {
            low.insert(b.hash_one(tid) & 1023);
        }
        // Consecutive keys land in many different buckets.
        assert!(low.len() > 600, "{}", low.len());
        let mut m: IntMap<(u64, u64), u32> = IntMap::default();
        m.insert((8, 1000), 1);
        m.insert((1000, 8), 2);
        assert_eq!(m[&(8, 1000)], 1);
        assert_eq!(m[&(1000, 8)], 2);
    }
}
