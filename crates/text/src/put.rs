//! Numbers and strings written into byte buffers the way babeltrace2 prints them: decimal
//! and hexadecimal integers, fixed-width digit groups for times, escaped strings. The bottom
//! of the crate: the class plans, the value writer and the time formatter all use it.

/// The eight decimal digits of `x` (below 10^8), zero-padded, as the bytes of a
/// little-endian word (first digit in the lowest byte), each digit's value (not yet ASCII):
/// the number is split into two 4-digit halves, then 2-digit quarters, then digits, each step
/// working on every lane of the word at once. A division by 100 (resp. 10) of a lane below
/// 10^4 (resp. 100) is a multiplication by 10486 / 2^20 (resp. 103 / 2^10), exact in that
/// range, and no lane's product reaches the next lane.
#[inline(always)]
pub(crate) fn eight_digits(x: u32) -> u64 {
    let x = x as u64;
    // 32-bit lanes: [first four digits, last four].
    let v = (x / 10_000) | ((x % 10_000) << 32);
    let hi = ((v * 10_486) >> 20) & 0x0000_007f_0000_007f;
    // 16-bit lanes: pairs of digits.
    let v = hi | (v - hi * 100) << 16;
    let hi = ((v * 103) >> 10) & 0x000f_000f_000f_000f;
    // 8-bit lanes: digits.
    hi | (v - hi * 10) << 8
}

pub(crate) const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// Writes `n` (below 10^9) as exactly nine digits, zero-padded.
#[inline]
pub(crate) fn nine_digits(out: &mut [u8], n: u32) {
    let out: &mut [u8; 9] = out.try_into().expect("nine bytes");
    out[0] = b'0' + (n / 100_000_000) as u8;
    out[1..].copy_from_slice(&(eight_digits(n % 100_000_000) + ASCII_ZEROS).to_le_bytes());
}

/// Writes a string's bytes, escaping control characters as Babeltrace does.
pub(crate) fn write_escaped(b: &mut Vec<u8>, s: &[u8]) {
    let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
    if s.iter().all(|&c| plain(c)) {
        b.extend_from_slice(s);
        return;
    }
    for &c in s {
        match c {
            b'\n' => b.extend_from_slice(b"\\n"),
            b'\t' => b.extend_from_slice(b"\\t"),
            b'\r' => b.extend_from_slice(b"\\r"),
            b'\\' => b.extend_from_slice(b"\\\\"),
            b'"' => b.extend_from_slice(b"\\\""),
            b'\'' => b.extend_from_slice(b"\\'"),
            b'?' => b.extend_from_slice(b"\\?"),
            0x07 => b.extend_from_slice(b"\\a"),
            0x08 => b.extend_from_slice(b"\\b"),
            0x0b => b.extend_from_slice(b"\\v"),
            0x0c => b.extend_from_slice(b"\\f"),
            c if c < 0x20 => {
                use std::io::Write as _;
                let _ = write!(b, "\\x{c:02x}");
            }
            c => b.push(c),
        }
    }
}

/// Writes `x` in decimal, with its sign, at `at` (room for 20 bytes).
#[inline(always)]
pub(crate) fn i64_at(b: &mut [u8], at: usize, x: i64) -> usize {
    b[at] = b'-';
    u64_at(b, at + (x < 0) as usize, x.unsigned_abs())
}

/// Writes `x` (below 10^8, at least 1) without leading zeros at `at` (room for 8 bytes).
#[inline(always)]
fn head_digits_at(b: &mut [u8], at: usize, x: u32) -> usize {
    let d = eight_digits(x);
    // Leading zero digits are the low zero bytes.
    let zeros = d.trailing_zeros() / 8;
    let w = (d + ASCII_ZEROS) >> (8 * zeros);
    b[at..at + 8].copy_from_slice(&w.to_le_bytes());
    at + 8 - zeros as usize
}

/// Writes `x` (below 10^8) as exactly eight digits at `at`.
#[inline(always)]
fn eight_digits_at(b: &mut [u8], at: usize, x: u32) -> usize {
    b[at..at + 8].copy_from_slice(&(eight_digits(x) + ASCII_ZEROS).to_le_bytes());
    at + 8
}

/// The four decimal digits of `x` (below 10,000) as a little-endian ASCII word.
#[inline(always)]
pub(crate) fn four_digits(x: usize) -> u32 {
    PAIRS[x / 100] as u32 | (PAIRS[x % 100] as u32) << 16
}

/// The two decimal digits of each number below 100, as little-endian ASCII pairs.
static PAIRS: [u16; 100] = {
    let mut t = [0u16; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = (b'0' + (i / 10) as u8) as u16 | ((b'0' + (i % 10) as u8) as u16) << 8;
        i += 1;
    }
    t
};

/// Writes `v` in decimal at `at` (room for 20 bytes); returns where it ends.
#[inline(always)]
pub(crate) fn u64_at(b: &mut [u8], at: usize, v: u64) -> usize {
    // Most values (cpus, priorities, small ids) have one digit.
    if v < 10 {
        b[at] = b'0' + v as u8;
        return at + 1;
    }
    // Two to four digits (fds, ids, sizes) are most of the rest: a table look-up per pair
    // costs less than the eight-digit conversion.
    if v < 100 {
        b[at..at + 2].copy_from_slice(&PAIRS[v as usize].to_le_bytes());
        return at + 2;
    }
    if v < 10_000 {
        // Three digits: the high pair's leading zero dropped.
        let skip = (v < 1_000) as usize;
        let w = four_digits(v as usize) >> (8 * skip);
        b[at..at + 4].copy_from_slice(&w.to_le_bytes());
        return at + 4 - skip;
    }
    if v < E8 {
        return head_digits_at(b, at, v as u32);
    }
    u64_long_at(b, at, v)
}

const E8: u64 = 100_000_000;

/// [`u64_at`] for nine digits or more (addresses, byte counts), kept out of line.
#[inline(never)]
fn u64_long_at(b: &mut [u8], at: usize, v: u64) -> usize {
    if v < E8 * E8 {
        // Sixteen digits at once, the leading zero ones (low bytes; the first half is not
        // zero) shifted out, stored as one block.
        let d = sixteen_digits((v / E8) as u32, (v % E8) as u32);
        let zeros = (d as u64).trailing_zeros() / 8;
        let ascii = (d | ASCII_ZEROS16) >> (8 * zeros);
        let w: &mut [u8; 16] = (&mut b[at..at + 16]).try_into().expect("16 bytes");
        *w = ascii.to_le_bytes();
        return at + 16 - zeros as usize;
    }
    u64_huge_at(b, at, v)
}

/// [`u64_at`] for seventeen digits or more, kept apart so that the usual long values need
/// no saved registers.
#[cold]
#[inline(never)]
fn u64_huge_at(b: &mut [u8], at: usize, v: u64) -> usize {
    // Twenty digits at most: up to four, then sixteen.
    let rest = v % (E8 * E8);
    let at = head_digits_at(b, at, (v / (E8 * E8)) as u32);
    let at = eight_digits_at(b, at, (rest / E8) as u32);
    eight_digits_at(b, at, (rest % E8) as u32)
}

/// Sixteen ASCII zeros (digits are below 16: an or adds them).
const ASCII_ZEROS16: u128 = ASCII_ZEROS as u128 * (1 + (1 << 64));

/// The sixteen decimal digits of `hi` then `lo` (each below 10^8), each zero-padded to eight,
/// as the bytes of a little-endian word (first digit in the lowest byte), each digit's value.
/// With SSE2 (always there on x86-64), [`eight_digits`]' steps on both numbers at once: each
/// split by 10^4 in a 64-bit lane (multiplied by ⌈2^40 / 10^4⌉, exact below 10^8), the four
/// parts by 100 in 16-bit lanes (× 5,243 / 2^19, exact below 10^4), the pairs by 10
/// (× 6,554 / 2^16, exact below 100).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sixteen_digits(hi: u32, lo: u32) -> u128 {
    use std::arch::x86_64::{
        __m128i, _mm_mul_epu32, _mm_mulhi_epu16, _mm_mullo_epi16, _mm_or_si128, _mm_set1_epi16,
        _mm_set1_epi64x, _mm_set_epi64x, _mm_slli_epi16, _mm_slli_epi32, _mm_slli_epi64,
        _mm_srli_epi16, _mm_srli_epi64, _mm_sub_epi16, _mm_sub_epi64,
    };
    // SAFETY: these intrinsics only need SSE2, part of the x86-64 baseline; they touch no
    // memory, and a 128-bit vector and a u128 have the same size.
    unsafe {
        let v = _mm_set_epi64x(lo as i64, hi as i64);
        let q = _mm_srli_epi64::<40>(_mm_mul_epu32(v, _mm_set1_epi64x(109_951_163)));
        let r = _mm_sub_epi64(v, _mm_mul_epu32(q, _mm_set1_epi64x(10_000)));
        // 32-bit lanes: the four groups of four digits, in order.
        let x = _mm_or_si128(q, _mm_slli_epi64::<32>(r));
        let q = _mm_srli_epi16::<3>(_mm_mulhi_epu16(x, _mm_set1_epi16(5_243)));
        let r = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(100)));
        // 16-bit lanes: the pairs, in order.
        let y = _mm_or_si128(q, _mm_slli_epi32::<16>(r));
        let q = _mm_mulhi_epu16(y, _mm_set1_epi16(6_554));
        let r = _mm_sub_epi16(y, _mm_mullo_epi16(q, _mm_set1_epi16(10)));
        std::mem::transmute::<__m128i, u128>(_mm_or_si128(q, _mm_slli_epi16::<8>(r)))
    }
}

/// [`sixteen_digits`] elsewhere: two words of eight digits.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn sixteen_digits(hi: u32, lo: u32) -> u128 {
    swar_sixteen_digits(hi, lo)
}

/// [`sixteen_digits`] with word operations (used where SSE2 is not; tested everywhere).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn swar_sixteen_digits(hi: u32, lo: u32) -> u128 {
    eight_digits(hi) as u128 | (eight_digits(lo) as u128) << 64
}

/// The eight upper-case hexadecimal digits of `x` as ASCII, most significant first, as the
/// bytes of a little-endian word: the nibbles spread to one per byte (halves, then quarters,
/// then nibbles), byte-swapped, then `0`-based or `A`-based depending on whether adding 6
/// carries into the byte's high nibble (digits 10 to 15).
#[inline(always)]
fn hex8(x: u32) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = x as u64;
    let x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    let x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    let x = ((x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f).swap_bytes();
    let letters = ((x + 6 * ONES) >> 4) & ONES;
    x + ASCII_ZEROS + letters * 7
}

/// The sixteen upper-case hexadecimal digits of `v` as ASCII, most significant first, as the
/// bytes of a little-endian word. With SSE2 (always there on x86-64): the bytes' high and low
/// nibbles interleaved in one unpack, `7` more for the letters after one compare.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hex16(v: u64) -> u128 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi64_si128, _mm_set1_epi8,
        _mm_srli_epi16, _mm_unpacklo_epi8,
    };
    // SAFETY: these intrinsics only need SSE2, part of the x86-64 baseline; they touch no
    // memory, and a 128-bit vector and a u128 have the same size.
    unsafe {
        // The most significant byte first.
        let x = _mm_cvtsi64_si128(v.swap_bytes() as i64);
        let low4 = _mm_set1_epi8(0x0f);
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), low4);
        let lo = _mm_and_si128(x, low4);
        let nibbles = _mm_unpacklo_epi8(hi, lo);
        let letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8(7));
        let ascii = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8(b'0' as i8)), letters);
        std::mem::transmute::<__m128i, u128>(ascii)
    }
}

/// [`hex16`] elsewhere: two words of eight digits.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn hex16(v: u64) -> u128 {
    swar_hex16(v)
}

/// [`hex16`] with word operations (used where SSE2 is not; tested everywhere).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn swar_hex16(v: u64) -> u128 {
    hex8((v >> 32) as u32) as u128 | (hex8(v as u32) as u128) << 64
}

/// Writes `0x` and `v` in upper-case hexadecimal at `at` (room for 18 bytes): the sixteen
/// digits made at once, the leading zero ones shifted out, stored as one block.
#[inline]
pub(crate) fn hex_at(b: &mut [u8], at: usize, v: u64) -> usize {
    let n = ((64 - v.leading_zeros() as usize).div_ceil(4)).max(1);
    let digits = hex16(v) >> (8 * (16 - n));
    let w: &mut [u8; 18] = (&mut b[at..at + 18]).try_into().expect("18 bytes");
    w[..2].copy_from_slice(b"0x");
    w[2..].copy_from_slice(&digits.to_le_bytes());
    at + 2 + n
}

/// Per byte of `v`, the high bit set when the byte is zero (exact: no carries across bytes).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
pub(crate) fn zero_bytes(v: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((v & LOW7) + LOW7) | v | LOW7)
}

/// Per byte of `v`, the high bit set when Babeltrace escapes the byte: a control character
/// (below 0x20) or one of `\ " ' ?`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
pub(crate) fn escaped_bytes(v: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // (x & 0x7f) + 0x60 reaches 0x80 exactly when x & 0x7f >= 0x20; bytes >= 0x80 are plain.
    let control = !(((v & LOW7) + 0x60 * ONES) | v) & HIGH;
    control
        | zero_bytes(v ^ (b'\\' as u64 * ONES))
        | zero_bytes(v ^ (b'"' as u64 * ONES))
        | zero_bytes(v ^ (b'\'' as u64 * ONES))
        | zero_bytes(v ^ (b'?' as u64 * ONES))
}

/// The length of the text in `blk` (up to its first NUL) when none of its bytes is escaped.
/// With SSE2 (always there on x86-64): one compare per kind of byte over the 16 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn plain_len16(blk: &[u8; 16]) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };
    let lo = i64::from_le_bytes(blk[..8].try_into().expect("8 bytes"));
    let hi = i64::from_le_bytes(blk[8..].try_into().expect("8 bytes"));
    // SAFETY: these intrinsics only need SSE2, which every x86-64 processor has (it is part
    // of the target's baseline); they touch no memory.
    let escaped_and_nul = unsafe {
        let v = _mm_set_epi64x(hi, lo);
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        // Control characters: bytes equal to their unsigned minimum with 0x1f.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let quotes = _mm_or_si128(_mm_or_si128(eq(b'"'), eq(b'\'')), eq(b'?'));
        let escaped = _mm_or_si128(_mm_or_si128(control, eq(b'\\')), quotes);
        (
            _mm_movemask_epi8(escaped) as u32,
            _mm_movemask_epi8(eq(0)) as u32,
        )
    };
    let (escaped, nul) = escaped_and_nul;
    let len = (nul | 1 << 16).trailing_zeros();
    (escaped & ((1 << len) - 1) == 0).then_some(len as usize)
}

/// [`plain_len16`] elsewhere: eight bytes at a time in a word.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn plain_len16(blk: &[u8; 16]) -> Option<usize> {
    swar_plain_len16(blk)
}

/// [`plain_len16`] with word operations (used where SSE2 is not; tested everywhere).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
pub(crate) fn swar_plain_len16(blk: &[u8; 16]) -> Option<usize> {
    let lo = u64::from_le_bytes(blk[..8].try_into().expect("8 bytes"));
    let hi = u64::from_le_bytes(blk[8..].try_into().expect("8 bytes"));
    let zeros = zero_bytes(lo) as u128 | (zero_bytes(hi) as u128) << 64;
    let len = (zeros.trailing_zeros() / 8) as usize;
    let before = if len == 16 {
        u128::MAX
    } else {
        (1u128 << (8 * len)) - 1
    };
    let escaped = escaped_bytes(lo) as u128 | (escaped_bytes(hi) as u128) << 64;
    (escaped & before == 0).then_some(len)
}

/// Writes a quoted string value, up to its first NUL, at `at` (room for 2 + max(16, 4 ×
/// length) bytes).
#[inline(always)]
pub(crate) fn str_at(b: &mut [u8], at: usize, raw: &[u8]) -> usize {
    // The usual `char comm[16]` without escapes: checked at once, copied as one block, then
    // cut at its NUL; inlined where values are written, the rest out of line.
    if let Ok(blk) = <&[u8; 16]>::try_from(raw) {
        if let Some(len) = plain_len16(blk) {
            let w: &mut [u8; 18] = (&mut b[at..at + 18]).try_into().expect("18 bytes");
            w[0] = b'"';
            w[1..17].copy_from_slice(blk);
            w[1 + len] = b'"';
            return at + len + 2;
        }
    }
    str_other_at(b, at, raw)
}

/// [`str_at`] for texts other than plain 16-byte ones: 16 bytes at a time while they need
/// no escape and hold no NUL (file names, device names), byte by byte from the first block
/// that needs an escape. Whole blocks are written: after `k` whole blocks of text, the last
/// one ends at `at + 17 + 16k`, within the room of `2 + max(16, 4 × length)` as the text
/// has at least `16k` bytes.
#[inline(never)]
fn str_other_at(b: &mut [u8], at: usize, raw: &[u8]) -> usize {
    b[at] = b'"';
    let mut o = at + 1;
    let mut rest = raw;
    loop {
        let (blk, n) = match rest.first_chunk::<16>() {
            Some(blk) => (*blk, 16),
            None => {
                // The tail, zero-padded: its own NUL or the padding ends it.
                let mut blk = [0u8; 16];
                blk[..rest.len()].copy_from_slice(rest);
                (blk, rest.len())
            }
        };
        match plain_len16(&blk) {
            Some(len) if len < n || n < 16 => {
                // The whole block, as one fixed-size copy (the room allows it: see below).
                b[o..o + 16].copy_from_slice(&blk);
                o += len.min(n);
                break;
            }
            Some(_) => {
                b[o..o + 16].copy_from_slice(&blk);
                o += 16;
                rest = &rest[16..];
            }
            None => {
                let s = rest.split(|&c| c == 0).next().unwrap_or(rest);
                o = escape_at(b, o, s);
                break;
            }
        }
    }
    b[o] = b'"';
    o + 1
}

/// Writes `s` at `at` as [`write_escaped`] does (room for 4 bytes per byte of `s`).
fn escape_at(b: &mut [u8], at: usize, s: &[u8]) -> usize {
    let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
    if s.iter().all(|&c| plain(c)) {
        b[at..at + s.len()].copy_from_slice(s);
        return at + s.len();
    }
    let mut t = Vec::with_capacity(4 * s.len());
    write_escaped(&mut t, s);
    b[at..at + t.len()].copy_from_slice(&t);
    at + t.len()
}

/// Appends what `write` writes at the end of `b` given `room` bytes there (it returns where
/// it ended): the `*_at` writers used on a growing buffer.
#[inline(always)]
fn put_with(b: &mut Vec<u8>, room: usize, write: impl FnOnce(&mut [u8], usize) -> usize) {
    let start = b.len();
    b.resize(start + room, 0);
    let end = write(b, start);
    b.truncate(end);
}

/// Appends `v` in decimal.
#[inline]
pub(crate) fn put_u64(b: &mut Vec<u8>, v: u64) {
    put_with(b, 20, |b, at| u64_at(b, at, v));
}

/// Appends `v` in decimal, with its sign.
#[inline]
pub(crate) fn put_i64(b: &mut Vec<u8>, v: i64) {
    if v < 0 {
        b.push(b'-');
    }
    put_u64(b, v.unsigned_abs());
}

/// Appends `0x` and `v` in upper-case hexadecimal.
#[inline]
pub(crate) fn put_hex(b: &mut Vec<u8>, v: u64) {
    put_with(b, 18, |b, at| hex_at(b, at, v));
}

/// Appends a quoted string value, up to its first NUL.
#[inline]
pub(crate) fn put_str(b: &mut Vec<u8>, raw: &[u8]) {
    put_with(b, 2 + (4 * raw.len()).max(16), |b, at| str_at(b, at, raw));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        let mut b = b"x".to_vec();
        for v in [
            0,
            7,
            10,
            99,
            100,
            12345,
            0xABCD_EF01,
            0x1_0000_0000,
            u64::MAX,
        ] {
            put_u64(&mut b, v);
            b.push(b' ');
            put_hex(&mut b, v);
            b.push(b' ');
        }
        put_i64(&mut b, i64::MIN);
        b.push(b' ');
        put_i64(&mut b, -7);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "x0 0x0 7 0x7 10 0xA 99 0x63 100 0x64 12345 0x3039 2882400001 0xABCDEF01 \
             4294967296 0x100000000 18446744073709551615 0xFFFFFFFFFFFFFFFF \
             -9223372036854775808 -7"
        );
    }

    #[test]
    fn every_digit_count() {
        // Each length from 1 to 20 digits, against the standard formatting.
        let mut v: u64 = 1;
        for _ in 0..20 {
            for x in [v - 1, v, v.saturating_mul(7) / 3] {
                let mut b = Vec::new();
                put_u64(&mut b, x);
                assert_eq!(String::from_utf8(b).unwrap(), x.to_string());
            }
            v = v.saturating_mul(10);
        }
    }

    #[test]
    fn hex_of_every_length() {
        // Each nibble count from 1 to 16, with every digit value, against the standard
        // formatting.
        for n in 1..=16u32 {
            for d in 1..16u64 {
                let v = (0..n).fold(0u64, |acc, i| acc << 4 | ((d + i as u64) % 16))
                    | d << (4 * (n - 1));
                let mut b = Vec::new();
                put_hex(&mut b, v);
                assert_eq!(String::from_utf8(b).unwrap(), format!("0x{v:X}"));
            }
        }
    }

    /// Values of every bit length, against the standard formatting, through the build's
    /// digits and the word version.
    #[test]
    fn hex_of_every_bit_length() {
        let mut rng = testkit::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for bits in 0..=64u32 {
            for _ in 0..50 {
                let x = rng.next_u64();
                let v = if bits == 64 {
                    x
                } else {
                    x & ((1u64 << bits) - 1)
                };
                let mut b = Vec::new();
                put_hex(&mut b, v);
                assert_eq!(String::from_utf8(b).unwrap(), format!("0x{v:X}"));
                assert_eq!(
                    swar_hex16(v).to_le_bytes(),
                    hex16(v).to_le_bytes(),
                    "{v:#x}"
                );
            }
        }
    }

    /// The SSE2 and word versions of sixteen digits agree, over every digit position.
    #[test]
    fn sixteen_digits_agree() {
        let mut rng = testkit::XorShift::new(0x2545_f491_4f6c_dd1d);
        for i in 0..20_000u32 {
            let x = rng.next_u64();
            let (hi, lo) = ((x % E8) as u32, ((x >> 32) % E8) as u32);
            // Every length of each half too.
            let (hi, lo) = (hi / 10u32.pow(i % 8), lo / 10u32.pow(i / 8 % 8));
            assert_eq!(
                sixteen_digits(hi, lo),
                swar_sixteen_digits(hi, lo),
                "{hi} {lo}"
            );
            let mut b = Vec::new();
            let v = hi as u64 * E8 + lo as u64;
            put_u64(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn strings() {
        let mut b = Vec::new();
        put_str(&mut b, b"swapper/0\0\0\0\0\0\0\0");
        put_str(&mut b, b"0123456789abcdef");
        put_str(&mut b, b"a\"b\0\0\0\0\0\0\0\0\0\0\0\0\0");
        put_str(&mut b, b"short\0x");
        // Escapes only count before the NUL.
        put_str(&mut b, b"ok\0\n?\\\"'\0\0\0\0\0\0\0\0");
        put_str(&mut b, b"tab\there\x7f\xc3\xa9?\0\0\0\0");
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "\"swapper/0\"\"0123456789abcdef\"\"a\\\"b\"\"short\"\"ok\"\"tab\\there\x7fé\\?\""
        );
    }

    /// Strings of every length up to 70, of plain bytes, with an escaped byte or a NUL (or
    /// both) somewhere: the same text as escaping up to the first NUL byte by byte.
    #[test]
    fn strings_of_every_length_and_content() {
        let mut x = testkit::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut rnd = move |n: usize| x.below(n as u64) as usize;
        for len in 0..70 {
            for _ in 0..40 {
                let mut raw: Vec<u8> = (0..len).map(|_| b' ' + rnd(95) as u8).collect();
                for special in [0u8, b'\n', b'"', 0x7f, 0xc3, b'?'] {
                    if len > 0 && rnd(3) == 0 {
                        raw[rnd(len)] = special;
                    }
                }
                let upto = raw.split(|&c| c == 0).next().unwrap();
                let mut want = b"\"".to_vec();
                write_escaped(&mut want, upto);
                want.push(b'"');
                let mut got = Vec::new();
                put_str(&mut got, &raw);
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{raw:?}"
                );
            }
        }
    }

    #[test]
    fn escape_detection_matches_bytewise() {
        // Every byte value in every position of a word, against the per-byte rule.
        let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
        for c in 0..=255u8 {
            for pos in 0..8 {
                let mut w = [b'a'; 8];
                w[pos] = c;
                let v = u64::from_le_bytes(w);
                let want = if plain(c) { 0 } else { 0x80u64 << (8 * pos) };
                assert_eq!(escaped_bytes(v), want, "byte {c:#x} at {pos}");
                let zero = if c == 0 { 0x80u64 << (8 * pos) } else { 0 };
                assert_eq!(zero_bytes(v), zero, "byte {c:#x} at {pos}");
            }
        }
    }

    #[test]
    fn plain_length_of_every_byte_in_every_place() {
        // Each byte value at each place of a 16-byte text, with and without a NUL before it,
        // against the per-byte rule; both the build's and the word version.
        let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
        for c in 0..=255u8 {
            for pos in 0..16 {
                for nul in [None, Some(3), Some(15)] {
                    let mut blk = [b'a'; 16];
                    blk[pos] = c;
                    if let Some(z) = nul {
                        blk[z] = 0;
                    }
                    let len = blk.iter().position(|&x| x == 0).unwrap_or(16);
                    let want = blk[..len].iter().all(|&x| plain(x)).then_some(len);
                    assert_eq!(plain_len16(&blk), want, "byte {c:#x} at {pos}, nul {nul:?}");
                    assert_eq!(
                        swar_plain_len16(&blk),
                        want,
                        "byte {c:#x} at {pos}, nul {nul:?}"
                    );
                }
            }
        }
    }
}
