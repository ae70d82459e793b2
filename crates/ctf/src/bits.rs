//! Bit-level reads of CTF integers from byte slices.

/// Reads an unsigned `size`-bit integer (1..=64) at bit offset `bit` of `data`, or `None` when
/// it does not fit in `data`. Little-endian fields fill bytes from their least significant bit,
/// big-endian ones from their most significant bit, as CTF specifies.
#[inline(always)]
pub fn read_uint(data: &[u8], bit: u64, size: u32, little: bool) -> Option<u64> {
    debug_assert!((1..=64).contains(&size));
    let end = bit.checked_add(size as u64)?;
    if end > (data.len() as u64) * 8 {
        return None;
    }
    let byte = (bit / 8) as usize;
    let shift = (bit % 8) as u32;
    if shift == 0 {
        match (size, little) {
            (8, _) => return Some(data[byte] as u64),
            (16, true) => {
                return Some(u16::from_le_bytes(data[byte..byte + 2].try_into().ok()?) as u64)
            }
            (16, false) => {
                return Some(u16::from_be_bytes(data[byte..byte + 2].try_into().ok()?) as u64)
            }
            (32, true) => {
                return Some(u32::from_le_bytes(data[byte..byte + 4].try_into().ok()?) as u64)
            }
            (32, false) => {
                return Some(u32::from_be_bytes(data[byte..byte + 4].try_into().ok()?) as u64)
            }
            (64, true) => return Some(u64::from_le_bytes(data[byte..byte + 8].try_into().ok()?)),
            (64, false) => return Some(u64::from_be_bytes(data[byte..byte + 8].try_into().ok()?)),
            _ => {}
        }
    }
    let mask = if size == 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    };
    // Fast path: one unaligned 8-byte load holds the whole field.
    if shift + size <= 64 && byte + 8 <= data.len() {
        let word: [u8; 8] = data[byte..byte + 8].try_into().ok()?;
        return Some(if little {
            (u64::from_le_bytes(word) >> shift) & mask
        } else {
            (u64::from_be_bytes(word) >> (64 - shift - size)) & mask
        });
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
pub fn align_up(bit: u64, align: u32) -> u64 {
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

    #[test]
    fn sign_extension_and_alignment() {
        assert_eq!(sign_extend(0x1f, 5), -1);
        assert_eq!(sign_extend(0x0f, 5), 15);
        assert_eq!(align_up(9, 8), 16);
        assert_eq!(align_up(16, 8), 16);
        assert_eq!(align_up(3, 1), 3);
    }
}
