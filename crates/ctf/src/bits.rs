//! Bit-level reads of CTF integers from byte slices.

/// Reads an unsigned `size`-bit integer (1..=64) at bit offset `bit` of `data`, or `None` when
/// it does not fit in `data`. Little-endian fields fill bytes from their least significant bit,
/// big-endian ones from their most significant bit, as CTF specifies.
#[inline(always)]
pub fn read_uint(data: &[u8], bit: u64, size: u32, little: bool) -> Option<u64> {
    debug_assert!((1..=64).contains(&size));
    let byte = (bit / 8) as usize;
    let shift = (bit % 8) as u32;
    let mask = u64::MAX >> (64 - size.clamp(1, 64));
    // Fast path: one unaligned 8-byte load holds the whole field (and proves it in bounds).
    if shift + size <= 64 {
        if let Some(w) = data.get(byte..byte.wrapping_add(8)) {
            let word: [u8; 8] = w.try_into().ok()?;
            return Some(if little {
                (u64::from_le_bytes(word) >> shift) & mask
            } else {
                (u64::from_be_bytes(word) >> (64 - shift - size)) & mask
            });
        }
    }
    let end = bit.checked_add(size as u64)?;
    if end > (data.len() as u64) * 8 {
        return None;
    }
    let nbytes = (shift + size).div_ceil(8) as usize;
    let bytes = &data[byte..byte + nbytes];
    if little {
        let mut x: u128 = 0;
        for (i, b) in bytes.iter().enumerate() {
            x |= (*b as u128) << (8 * i);
        }
        Some(((x >> shift) as u64) & mask)
    } else {
        let mut x: u128 = 0;
        for b in bytes {
            x = (x << 8) | *b as u128;
        }
        let low = nbytes as u32 * 8 - shift - size;
        Some(((x >> low) as u64) & mask)
    }
}

/// A read of a `size`-bit integer at a constant bit offset from a base position, with the
/// shifts and mask worked out once: from a byte-aligned base it is one 8-byte load, a shift and
/// a mask.
#[derive(Debug, Clone, Copy)]
pub struct BitRead {
    /// Bit offset from the base.
    pub off: u64,
    /// Size in bits (1 to 64).
    pub size: u32,
    /// Little-endian byte order.
    pub little: bool,
    byte: u64,
    shift: u32,
    mask: u64,
    /// The one-load path applies (the field fits in 8 bytes from its first byte).
    one_load: bool,
}

impl BitRead {
    /// A read of `size` bits (clamped to 1..=64) at `off` bits from the base.
    pub fn new(off: u64, size: u32, little: bool) -> BitRead {
        let size = size.clamp(1, 64);
        let bit_in_byte = (off % 8) as u32;
        let one_load = bit_in_byte + size <= 64;
        BitRead {
            off,
            size,
            little,
            byte: off / 8,
            shift: if little {
                bit_in_byte
            } else {
                64u32.saturating_sub(bit_in_byte + size)
            },
            mask: u64::MAX >> (64 - size),
            one_load,
        }
    }

    /// The mask of the value's `size` low bits.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// The value at `base + off` in `data`, None when it does not fit.
    #[inline(always)]
    pub fn read(&self, data: &[u8], base: u64) -> Option<u64> {
        if self.one_load && base.is_multiple_of(8) {
            let at = (base / 8 + self.byte) as usize;
            if let Some(w) = data.get(at..at.wrapping_add(8)) {
                let word: [u8; 8] = w.try_into().ok()?;
                let w = if self.little {
                    u64::from_le_bytes(word)
                } else {
                    u64::from_be_bytes(word)
                };
                return Some((w >> self.shift) & self.mask);
            }
        }
        read_uint(data, base + self.off, self.size, self.little)
    }
}

/// Sign-extends the low `size` bits of `v`.
#[inline]
pub fn sign_extend(v: u64, size: u32) -> i64 {
    if size >= 64 {
        v as i64
    } else {
        let s = 64 - size;
        ((v << s) as i64) >> s
    }
}

/// Rounds `bit` up to a multiple of `align` (a power of two, in bits).
#[inline]
pub(crate) fn align_up(bit: u64, align: u32) -> u64 {
    if align <= 1 {
        bit
    } else {
        let a = align as u64;
        (bit + a - 1) & !(a - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_reads_agree_with_read_uint() {
        let d: Vec<u8> = (0..24u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for little in [true, false] {
            for size in [1, 5, 8, 13, 16, 27, 32, 57, 63, 64] {
                for off in 0..40 {
                    for base in [0, 8, 3, 16] {
                        let r = BitRead::new(off, size, little);
                        assert_eq!(
                            r.read(&d, base),
                            read_uint(&d, base + off, size, little),
                            "size {size} off {off} base {base} little {little}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn aligned_reads() {
        let d = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(read_uint(&d, 0, 32, true), Some(0x04030201));
        assert_eq!(read_uint(&d, 0, 32, false), Some(0x01020304));
        assert_eq!(read_uint(&d, 0, 64, true), Some(0x0807060504030201));
        assert_eq!(read_uint(&d, 8, 16, false), Some(0x0203));
        assert_eq!(read_uint(&d, 8, 64, true), None);
    }

    #[test]
    fn bitfields_little_endian() {
        // LTTng compact header: 5-bit id then 27-bit timestamp in one LE u32.
        let word: u32 = (12345 << 5) | 17;
        let d = word.to_le_bytes();
        assert_eq!(read_uint(&d, 0, 5, true), Some(17));
        assert_eq!(read_uint(&d, 5, 27, true), Some(12345));
    }

    #[test]
    fn bitfields_big_endian() {
        // Same header written big-endian: the id occupies the 5 most significant bits.
        let word: u32 = (17 << 27) | 12345;
        let d = word.to_be_bytes();
        assert_eq!(read_uint(&d, 0, 5, false), Some(17));
        assert_eq!(read_uint(&d, 5, 27, false), Some(12345));
        assert_eq!(read_uint(&[0b1010_0000], 0, 3, false), Some(0b101));
    }

    /// Bit-by-bit reading, straight from the CTF definition.
    fn reference(data: &[u8], bit: u64, size: u32, little: bool) -> Option<u64> {
        if bit + size as u64 > data.len() as u64 * 8 {
            return None;
        }
        let mut v = 0u64;
        for i in 0..size as u64 {
            let b = bit + i;
            let byte = data[(b / 8) as usize];
            if little {
                v |= (((byte >> (b % 8)) & 1) as u64) << i;
            } else {
                v = (v << 1) | ((byte >> (7 - b % 8)) & 1) as u64;
            }
        }
        Some(v)
    }

    #[test]
    fn every_offset_size_and_order_matches_the_definition() {
        let data: Vec<u8> = (0..24u32).map(|i| (i * 151 + 7) as u8 ^ 0xA5).collect();
        for little in [true, false] {
            for size in 1..=64 {
                for bit in 0..(data.len() as u64 * 8 + 8) {
                    assert_eq!(
                        read_uint(&data, bit, size, little),
                        reference(&data, bit, size, little),
                        "bit {bit} size {size} little {little}"
                    );
                }
            }
        }
    }

    #[test]
    fn sign_extension_and_alignment() {
        assert_eq!(sign_extend(0x1f, 5), -1);
        assert_eq!(sign_extend(0x0f, 5), 15);
        assert_eq!(align_up(9, 8), 16);
        assert_eq!(align_up(16, 8), 16);
        assert_eq!(align_up(3, 1), 3);
    }
}
