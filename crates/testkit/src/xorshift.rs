//! Reproducible pseudo-random numbers for property-style tests, without a dependency.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): the same seed gives the same numbers on every
/// machine, so a failing case can be replayed.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed`, which must not be 0 (xorshift stays at 0).
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "a xorshift seed of 0 gives only zeros");
        XorShift(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// The next number modulo `n` (not 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
