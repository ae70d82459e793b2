//! A cheap hasher for the metadata front end's and the layout compiler's tables.
//!
//! Their keys are short names and small integers coming from the trace's own metadata; the
//! tables live only while a trace is opened. SipHash's per-key set-up cost more than the rest
//! of a lookup there, and flooding resistance buys nothing against a file the user chose to
//! open (the parser bounds its work independently of hashing).

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing one machine word at a time.
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl WordHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // Tables index buckets by the low bits, which the multiplication leaves depending on
        // the low bits of the last word only: fold the high half in.
        self.0 ^ (self.0 >> 32)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
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
}

/// Builds [`WordHasher`]s for `HashMap`/`HashSet`.
pub(crate) type BuildWordHasher = BuildHasherDefault<WordHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn distinguishes_close_keys() {
        // Strings differing only in their last byte, or in length (str hashing appends a
        // terminator), and word-sized integers differing in one bit.
        let mut m: HashMap<String, usize, BuildWordHasher> = HashMap::default();
        let keys = [
            "",
            "a",
            "b",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "abcdefghX",
            "_ret",
            "ret",
        ];
        for (i, k) in keys.iter().enumerate() {
            m.insert(k.to_string(), i);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(*k), Some(&i));
        }
        let hash = |v: u64| {
            let mut h = WordHasher::default();
            h.write_u64(v);
            h.finish()
        };
        let hs: std::collections::HashSet<u64> = (0..64).map(|b| hash(1 << b)).collect();
        assert_eq!(hs.len(), 64);
    }
}
