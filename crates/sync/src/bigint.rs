//! A small arbitrary-precision signed integer: just what exact rationals need (add, sub, mul,
//! division with remainder, comparison, decimal output). Magnitudes are little-endian u32 limbs
//! without trailing zeros; zero is non-negative.

use std::cmp::Ordering;

/// An arbitrary-precision signed integer: the numerators and denominators of [`Rational`]s,
/// whose products outgrow `i128` when hull formulas are composed along a path of hosts.
///
/// [`Rational`]: crate::Rational
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

fn trim(v: &mut Vec<u32>) {
    while v.last() == Some(&0) {
        v.pop();
    }
}

fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for i in (0..a.len()).rev() {
        match a[i].cmp(&b[i]) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u64;
    for (i, &x) in a.iter().enumerate() {
        let s = x as u64 + *b.get(i).unwrap_or(&0) as u64 + carry;
        out.push(s as u32);
        carry = s >> 32;
    }
    if carry != 0 {
        out.push(carry as u32);
    }
    out
}

/// a − b for |a| ≥ |b|.
fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut d = x as i64 - *b.get(i).unwrap_or(&0) as i64 - borrow;
        if d < 0 {
            d += 1 << 32;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

fn mul_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = x as u64 * y as u64 + out[i + j] as u64 + carry;
            out[i + j] = t as u32;
            carry = t >> 32;
        }
        out[i + b.len()] = carry as u32;
    }
    trim(&mut out);
    out
}

fn bits(a: &[u32]) -> usize {
    match a.last() {
        None => 0,
        Some(&top) => (a.len() - 1) * 32 + (32 - top.leading_zeros() as usize),
    }
}

fn bit(a: &[u32], i: usize) -> bool {
    a.get(i / 32).is_some_and(|w| (w >> (i % 32)) & 1 == 1)
}

fn shl1_or(a: &mut Vec<u32>, b: bool) {
    let mut carry = b as u32;
    for w in a.iter_mut() {
        let n = *w >> 31;
        *w = (*w << 1) | carry;
        carry = n;
    }
    if carry != 0 {
        a.push(carry);
    }
}

/// Magnitude division: (quotient, remainder). Short division for one-limb divisors, binary
/// long division otherwise (operands here are a few hundred bits).
fn divrem_mag(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    assert!(!b.is_empty(), "division by zero");
    if cmp_mag(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let d = b[0] as u64;
        let mut q = vec![0u32; a.len()];
        let mut r = 0u64;
        for i in (0..a.len()).rev() {
            let cur = (r << 32) | a[i] as u64;
            q[i] = (cur / d) as u32;
            r = cur % d;
        }
        trim(&mut q);
        let mut rv = vec![r as u32];
        trim(&mut rv);
        return (q, rv);
    }
    let n = bits(a);
    let mut q = vec![0u32; a.len()];
    let mut r: Vec<u32> = Vec::new();
    for i in (0..n).rev() {
        shl1_or(&mut r, bit(a, i));
        if cmp_mag(&r, b) != Ordering::Less {
            r = sub_mag(&r, b);
            q[i / 32] |= 1 << (i % 32);
        }
    }
    trim(&mut q);
    (q, r)
}

impl BigInt {
    /// Zero.
    pub fn zero() -> Self {
        BigInt {
            neg: false,
            mag: Vec::new(),
        }
    }

    fn from_parts(neg: bool, mut mag: Vec<u32>) -> Self {
        trim(&mut mag);
        let neg = neg && !mag.is_empty();
        BigInt { neg, mag }
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    /// True below zero.
    pub fn is_negative(&self) -> bool {
        self.neg
    }

    pub(crate) fn abs(&self) -> Self {
        BigInt::from_parts(false, self.mag.clone())
    }

    pub(crate) fn neg(&self) -> Self {
        BigInt::from_parts(!self.neg, self.mag.clone())
    }

    pub(crate) fn add(&self, o: &Self) -> Self {
        if self.neg == o.neg {
            return BigInt::from_parts(self.neg, add_mag(&self.mag, &o.mag));
        }
        match cmp_mag(&self.mag, &o.mag) {
            Ordering::Less => BigInt::from_parts(o.neg, sub_mag(&o.mag, &self.mag)),
            _ => BigInt::from_parts(self.neg, sub_mag(&self.mag, &o.mag)),
        }
    }

    pub(crate) fn sub(&self, o: &Self) -> Self {
        self.add(&o.neg())
    }

    pub(crate) fn mul(&self, o: &Self) -> Self {
        BigInt::from_parts(self.neg != o.neg, mul_mag(&self.mag, &o.mag))
    }

    /// Truncating division: (quotient toward zero, remainder with the dividend's sign).
    pub(crate) fn divrem(&self, o: &Self) -> (Self, Self) {
        let (q, r) = divrem_mag(&self.mag, &o.mag);
        (
            BigInt::from_parts(self.neg != o.neg, q),
            BigInt::from_parts(self.neg, r),
        )
    }

    /// Floor division.
    pub(crate) fn div_floor(&self, o: &Self) -> Self {
        let (q, r) = self.divrem(o);
        if !r.is_zero() && (r.neg != o.neg) {
            q.sub(&BigInt::from(1i128))
        } else {
            q
        }
    }

    pub(crate) fn gcd(&self, o: &Self) -> Self {
        let mut a = self.abs();
        let mut b = o.abs();
        while !b.is_zero() {
            let (_, r) = a.divrem(&b);
            a = b;
            b = r;
        }
        a
    }

    /// The value when it fits in an i128.
    pub fn to_i128(&self) -> Option<i128> {
        if bits(&self.mag) > 127 {
            return None;
        }
        let mut v: i128 = 0;
        for &w in self.mag.iter().rev() {
            v = (v << 32) | w as i128;
        }
        Some(if self.neg { -v } else { v })
    }

    /// Nearest f64 (for ordering heuristics and display only).
    pub fn to_f64(&self) -> f64 {
        let mut v = 0f64;
        for &w in self.mag.iter().rev() {
            v = v * 4294967296.0 + w as f64;
        }
        if self.neg {
            -v
        } else {
            v
        }
    }

    /// Number of decimal digits of the magnitude (0 for zero).
    pub(crate) fn decimal_len(&self) -> usize {
        if self.is_zero() {
            0
        } else {
            self.abs().to_string().len()
        }
    }
}

impl From<i128> for BigInt {
    fn from(v: i128) -> Self {
        let neg = v < 0;
        let mut m = v.unsigned_abs();
        let mut mag = Vec::new();
        while m != 0 {
            mag.push(m as u32);
            m >>= 32;
        }
        BigInt::from_parts(neg, mag)
    }
}

impl From<i64> for BigInt {
    fn from(v: i64) -> Self {
        BigInt::from(v as i128)
    }
}

impl Ord for BigInt {
    fn cmp(&self, o: &Self) -> Ordering {
        match (self.neg, o.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_mag(&self.mag, &o.mag),
            (true, true) => cmp_mag(&o.mag, &self.mag),
        }
    }
}

impl PartialOrd for BigInt {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl std::fmt::Display for BigInt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut parts = Vec::new();
        let mut m = self.mag.clone();
        let chunk = [1_000_000_000u32];
        while !m.is_empty() {
            let (q, r) = divrem_mag(&m, &chunk);
            parts.push(r.first().copied().unwrap_or(0));
            m = q;
        }
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        s.push_str(&parts.last().unwrap().to_string());
        for p in parts.iter().rev().skip(1) {
            s.push_str(&format!("{p:09}"));
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_i128() {
        let vals: [i128; 9] = [
            0,
            1,
            -1,
            7,
            -13,
            1_361_657_893_526_374_091,
            -98_765_432_109_876_543_210,
            i64::MAX as i128,
            (1i128 << 100) + 12345,
        ];
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (BigInt::from(a), BigInt::from(b));
                assert_eq!(x.add(&y).to_i128(), Some(a + b));
                assert_eq!(x.sub(&y).to_i128(), Some(a - b));
                if let Some(p) = a.checked_mul(b) {
                    assert_eq!(x.mul(&y).to_i128(), Some(p));
                }
                if b != 0 {
                    let (q, r) = x.divrem(&y);
                    assert_eq!(q.to_i128(), Some(a / b), "{a}/{b}");
                    assert_eq!(r.to_i128(), Some(a % b));
                    let fl = a / b - i128::from(a % b != 0 && ((a < 0) != (b < 0)));
                    assert_eq!(x.div_floor(&y).to_i128(), Some(fl));
                }
                assert_eq!(x.cmp(&y), a.cmp(&b));
                assert_eq!(x.to_string(), a.to_string());
            }
        }
        let big = BigInt::from(i128::MAX).mul(&BigInt::from(i128::MAX));
        let (q, r) = big.divrem(&BigInt::from(i128::MAX));
        assert_eq!(q.to_i128(), Some(i128::MAX));
        assert!(r.is_zero());
        assert_eq!(
            big.to_string(),
            "28948022309329048855892746252171976962977213799489202546401021394546514198529"
        );
    }
}
