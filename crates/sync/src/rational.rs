//! Exact rationals over [`BigInt`], always reduced with a positive denominator.

use crate::bigint::BigInt;
use std::cmp::Ordering;

/// An exact rational number: the slopes and offsets of clock formulas, kept exact so that
/// composed and inverted transforms lose nothing to rounding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rational {
    num: BigInt,
    den: BigInt,
}

impl Rational {
    /// n / d; panics when d is zero.
    pub fn new(num: BigInt, den: BigInt) -> Self {
        assert!(!den.is_zero(), "zero denominator");
        let (num, den) = if den.is_negative() {
            (num.neg(), den.neg())
        } else {
            (num, den)
        };
        let g = num.gcd(&den);
        if g == BigInt::from(1i128) || g.is_zero() {
            return Rational { num, den };
        }
        Rational {
            num: num.divrem(&g).0,
            den: den.divrem(&g).0,
        }
    }

    /// n / d from machine integers; panics when d is zero.
    pub fn ratio(n: i128, d: i128) -> Self {
        Rational::new(BigInt::from(n), BigInt::from(d))
    }

    /// The integer n.
    pub fn int(n: i128) -> Self {
        Rational {
            num: BigInt::from(n),
            den: BigInt::from(1i128),
        }
    }

    /// Zero.
    pub fn zero() -> Self {
        Rational::int(0)
    }

    /// One.
    pub fn one() -> Self {
        Rational::int(1)
    }

    /// The numerator (carries the sign).
    pub fn numer(&self) -> &BigInt {
        &self.num
    }

    /// The denominator (always positive).
    pub fn denom(&self) -> &BigInt {
        &self.den
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// True below zero.
    pub fn is_negative(&self) -> bool {
        self.num.is_negative()
    }

    /// self + o.
    pub fn add(&self, o: &Self) -> Self {
        if self.den == o.den {
            return Rational::new(self.num.add(&o.num), self.den.clone());
        }
        Rational::new(
            self.num.mul(&o.den).add(&o.num.mul(&self.den)),
            self.den.mul(&o.den),
        )
    }

    /// self − o.
    pub fn sub(&self, o: &Self) -> Self {
        self.add(&o.neg())
    }

    /// −self.
    pub fn neg(&self) -> Self {
        Rational {
            num: self.num.neg(),
            den: self.den.clone(),
        }
    }

    /// self × o.
    pub fn mul(&self, o: &Self) -> Self {
        Rational::new(self.num.mul(&o.num), self.den.mul(&o.den))
    }

    /// self / o; panics when o is zero.
    pub fn div(&self, o: &Self) -> Self {
        Rational::new(self.num.mul(&o.den), self.den.mul(&o.num))
    }

    /// 1 / self; panics when self is zero.
    pub fn recip(&self) -> Self {
        Rational::new(self.den.clone(), self.num.clone())
    }

    /// self / 2.
    pub fn half(&self) -> Self {
        Rational::new(self.num.clone(), self.den.mul(&BigInt::from(2i128)))
    }

    /// |self|.
    pub fn abs(&self) -> Self {
        Rational {
            num: self.num.abs(),
            den: self.den.clone(),
        }
    }

    /// Largest integer ≤ self.
    pub fn floor(&self) -> BigInt {
        self.num.div_floor(&self.den)
    }

    /// Nearest integer, halves rounded up.
    pub fn round(&self) -> BigInt {
        self.add(&Rational::ratio(1, 2)).floor()
    }

    /// An `f64` approximation, for display and tolerances.
    pub fn to_f64(&self) -> f64 {
        // Scale to keep precision for huge numerators and denominators.
        let nb = self.num.decimal_len() as i32;
        let db = self.den.decimal_len() as i32;
        if nb < 300 && db < 300 {
            return self.num.to_f64() / self.den.to_f64();
        }
        let shift = (nb - 30).max(0).min(db - 30).max(0);
        let p = BigInt::from(10i128).pow(shift as u32);
        self.num.divrem(&p).0.to_f64() / self.den.divrem(&p).0.to_f64()
    }

    /// Exact decimal when it has at most `sig` significant digits, else rounded (half up in
    /// magnitude) to `sig` significant digits; no exponent, no trailing zeros.
    pub fn to_decimal(&self, sig: usize) -> String {
        let a = self.num.abs();
        let d = &self.den;
        let (ip, _) = a.divrem(d);
        let f = if !ip.is_zero() {
            sig.saturating_sub(ip.decimal_len())
        } else if a.is_zero() {
            0
        } else {
            // Leading zeros after the point: smallest z with a·10^(z+1) ≥ d.
            let mut z = 0usize;
            let mut t = a.mul(&BigInt::from(10i128));
            while t < *d {
                t = t.mul(&BigInt::from(10i128));
                z += 1;
            }
            z + sig
        };
        let scale = BigInt::from(10i128).pow(f as u32);
        let two = BigInt::from(2i128);
        let n = a
            .mul(&scale)
            .mul(&two)
            .add(d)
            .divrem(&d.mul(&two))
            .0
            .to_string();
        let mut s = if f == 0 {
            n
        } else {
            let n = format!("{n:0>width$}", width = f + 1);
            let (i, fr) = n.split_at(n.len() - f);
            let fr = fr.trim_end_matches('0');
            if fr.is_empty() {
                i.to_string()
            } else {
                format!("{i}.{fr}")
            }
        };
        if self.num.is_negative() && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
            s.insert(0, '-');
        }
        s
    }

    /// Parses a decimal string like `-123.456` (no exponent).
    pub fn parse_decimal(s: &str) -> Option<Self> {
        let s = s.trim();
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
        if ip.is_empty() && fp.is_empty() {
            return None;
        }
        if !ip.chars().chain(fp.chars()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let ten = BigInt::from(10i128);
        let mut n = BigInt::zero();
        for c in ip.chars().chain(fp.chars()) {
            n = n.mul(&ten).add(&BigInt::from((c as u8 - b'0') as i128));
        }
        let r = Rational::new(n, ten.pow(fp.len() as u32));
        Some(if neg { r.neg() } else { r })
    }
}

impl BigInt {
    /// self to the power e.
    pub fn pow(&self, e: u32) -> BigInt {
        let mut r = BigInt::from(1i128);
        for _ in 0..e {
            r = r.mul(self);
        }
        r
    }
}

impl Ord for Rational {
    fn cmp(&self, o: &Self) -> Ordering {
        self.num.mul(&o.den).cmp(&o.num.mul(&self.den))
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl std::fmt::Display for Rational {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_decimal(40))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(Rational::ratio(1, 2).to_decimal(34), "0.5");
        assert_eq!(Rational::ratio(-5, 2).to_decimal(34), "-2.5");
        assert_eq!(Rational::ratio(2, 1).to_decimal(34), "2");
        assert_eq!(Rational::ratio(0, 7).to_decimal(34), "0");
        assert_eq!(Rational::ratio(1, 3).to_decimal(5), "0.33333");
        assert_eq!(Rational::ratio(2, 3).to_decimal(5), "0.66667");
        assert_eq!(Rational::ratio(1, 300).to_decimal(3), "0.00333");
        assert_eq!(Rational::ratio(-99999, 100000).to_decimal(3), "-1");
        assert_eq!(Rational::ratio(123456789, 1000).to_decimal(4), "123457");
        let p = Rational::parse_decimal("-5119896721993.052524680").unwrap();
        assert_eq!(p.to_decimal(40), "-5119896721993.05252468");
        assert_eq!(
            Rational::parse_decimal("1.5").unwrap(),
            Rational::ratio(3, 2)
        );
        assert!(Rational::parse_decimal("1e5").is_none());
        assert_eq!(Rational::ratio(7, -2).floor().to_i128(), Some(-4));
        assert_eq!(Rational::ratio(7, 2).round().to_i128(), Some(4));
        assert!((Rational::ratio(1, 3).to_f64() - 1.0 / 3.0).abs() < 1e-15);
    }
}
