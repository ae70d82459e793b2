//! Bit-level binary encoding of [`Value`]s against their [`FieldType`]s.
//!
//! Integers follow the CTF 1.8 bit-packing rules: a little-endian field fills each byte from its
//! least significant bit, a big-endian field from its most significant bit. Byte-aligned
//! integers whose size is a multiple of 8 take a fast path.

use crate::ir::{ByteOrder, FieldType, IntType, Length, StructType};
use crate::value::Value;

/// Why a value could not be encoded against its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(pub String);

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

fn err<T>(msg: impl Into<String>) -> Result<T, EncodeError> {
    Err(EncodeError(msg.into()))
}

/// A growable byte buffer written at bit granularity.
///
/// Bit positions are absolute from the start of the buffer, which is the start of a packet, so
/// that alignment is computed as the format requires (relative to the packet start).
#[derive(Debug, Default, Clone)]
pub struct BitBuf {
    buf: Vec<u8>,
    /// Current position in bits.
    pos: u64,
}

impl BitBuf {
    /// An empty buffer with `cap` bytes reserved.
    pub fn with_capacity(cap: usize) -> Self {
        BitBuf {
            buf: Vec::with_capacity(cap),
            pos: 0,
        }
    }

    /// Current position in bits.
    #[inline]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The bytes written so far (the last one may be partial).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Mutable access to the bytes written so far (for patching).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }

    /// Goes back to an earlier position, discarding what follows.
    pub fn truncate_bits(&mut self, pos: u64) {
        debug_assert!(pos <= self.pos);
        self.pos = pos;
        // Bits after `pos` in a partial last byte were never written by what is discarded when
        // that started by aligning to a byte (events do), so they are still zero.
        self.buf.truncate(pos.div_ceil(8) as usize);
    }

    #[inline]
    fn ensure(&mut self, end_bit: u64) {
        let need = end_bit.div_ceil(8) as usize;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
    }

    /// Moves forward to a multiple of `align` bits (padding is zero).
    #[inline]
    pub fn align(&mut self, align: u32) {
        if align > 1 {
            let a = align as u64;
            let new = self.pos.div_ceil(a) * a;
            if new != self.pos {
                self.ensure(new);
                self.pos = new;
            }
        }
    }

    /// Writes the low `size` bits of `v` (1..=64) at the current position, without aligning.
    #[inline]
    pub fn write_bits(&mut self, v: u64, size: u32, bo: ByteOrder) {
        debug_assert!((1..=64).contains(&size));
        let v = if size == 64 {
            v
        } else {
            v & ((1u64 << size) - 1)
        };
        if self.pos.is_multiple_of(8) && size.is_multiple_of(8) {
            let n = (size / 8) as usize;
            match bo {
                ByteOrder::Little => self.buf.extend_from_slice(&v.to_le_bytes()[..n]),
                ByteOrder::Big => self.buf.extend_from_slice(&v.to_be_bytes()[8 - n..]),
            }
            self.pos += size as u64;
            return;
        }
        let end = self.pos + size as u64;
        self.ensure(end);
        match bo {
            ByteOrder::Little => {
                let mut done = 0u32;
                while done < size {
                    let bit = self.pos + done as u64;
                    let byte = (bit / 8) as usize;
                    let off = (bit % 8) as u32;
                    let n = (8 - off).min(size - done);
                    let chunk = ((v >> done) & ((1u64 << n) - 1)) as u8;
                    self.buf[byte] |= chunk << off;
                    done += n;
                }
            }
            ByteOrder::Big => {
                // Most significant bits first, each byte filled from its MSB.
                let mut left = size;
                while left > 0 {
                    let bit = end - left as u64;
                    let byte = (bit / 8) as usize;
                    let off = (bit % 8) as u32;
                    let n = (8 - off).min(left);
                    let chunk = ((v >> (left - n)) & ((1u64 << n) - 1)) as u8;
                    self.buf[byte] |= chunk << (8 - off - n);
                    left -= n;
                }
            }
        }
        self.pos = end;
    }

    /// Aligns then writes an integer of the given type.
    #[inline]
    pub fn write_int(&mut self, ty: &IntType, v: u64) {
        self.align(ty.align);
        self.write_bits(v, ty.size, ty.byte_order);
    }

    /// Writes raw bytes at a byte-aligned position.
    pub fn write_bytes(&mut self, b: &[u8]) {
        debug_assert!(self.pos.is_multiple_of(8));
        self.buf.extend_from_slice(b);
        self.pos += 8 * b.len() as u64;
    }

    /// Pads with zero bytes up to `bits` (a multiple of 8).
    pub fn pad_to(&mut self, bits: u64) {
        self.ensure(bits);
        self.pos = self.pos.max(bits);
    }

    /// Overwrites an aligned 64/32-bit field at byte offset `at`.
    pub fn patch(&mut self, at: usize, v: u64, size: u32, bo: ByteOrder) {
        let n = (size / 8) as usize;
        let bytes = match bo {
            ByteOrder::Little => v.to_le_bytes()[..n].to_vec(),
            ByteOrder::Big => v.to_be_bytes()[8 - n..].to_vec(),
        };
        self.buf[at..at + n].copy_from_slice(&bytes);
    }
}

/// Alignment in bits of a field type, as the CTF rules compute it.
pub fn type_align(ty: &FieldType) -> u32 {
    match ty {
        FieldType::Int(i) => i.align,
        FieldType::Enum(e) => e.int.align,
        FieldType::BitArray(b) => b.int.align,
        FieldType::Float(f) => f.align,
        FieldType::VarInt(_) | FieldType::String(_) | FieldType::SizedString(_) => 8,
        FieldType::Blob(_) => 8,
        FieldType::Struct(s) => struct_align(s),
        // A variant has no alignment of its own: the selected option's applies.
        FieldType::Variant(_) => 1,
        FieldType::Array(a) => a.min_align.max(type_align(&a.elem)),
        FieldType::Sequence(s) => s.min_align.max(type_align(&s.elem)),
        FieldType::Optional(_) => 1,
    }
}

/// Alignment of a structure: its minimum alignment and its members'.
pub fn struct_align(s: &StructType) -> u32 {
    s.fields
        .iter()
        .map(|f| type_align(&f.ty))
        .fold(s.min_align.max(1), u32::max)
}

fn int_value(v: &Value, what: &str) -> Result<u64, EncodeError> {
    match *v {
        Value::U64(x) => Ok(x),
        Value::I64(x) => Ok(x as u64),
        _ => err(format!("{what}: expected an integer, got {v:?}")),
    }
}

fn is_byte_int(ty: &FieldType) -> bool {
    matches!(ty, FieldType::Int(i) if i.size == 8 && i.align <= 8)
}

/// Encodes the members of a structure (aligning the structure first).
pub fn encode_struct(buf: &mut BitBuf, s: &StructType, vals: &[Value]) -> Result<(), EncodeError> {
    if vals.len() != s.fields.len() {
        return err(format!(
            "structure has {} members, got {} values",
            s.fields.len(),
            vals.len()
        ));
    }
    buf.align(struct_align(s));
    for (f, v) in s.fields.iter().zip(vals) {
        encode(buf, &f.ty, v).map_err(|e| EncodeError(format!("{}: {}", f.name, e.0)))?;
    }
    Ok(())
}

fn encode_elems(
    buf: &mut BitBuf,
    elem: &FieldType,
    v: &Value,
    len: Option<u64>,
) -> Result<(), EncodeError> {
    match v {
        // Text or bytes for an array/sequence of bytes: padded with zeros to a static length.
        Value::Str(b) | Value::Bytes(b) if is_byte_int(elem) => {
            buf.align(type_align(elem));
            let n = len.unwrap_or(b.len() as u64) as usize;
            if b.len() > n {
                return err(format!("{} bytes for an array of {n}", b.len()));
            }
            if buf.pos().is_multiple_of(8) {
                buf.write_bytes(b);
                for _ in b.len()..n {
                    buf.write_bits(0, 8, ByteOrder::Little);
                }
            } else {
                let bo = match elem {
                    FieldType::Int(i) => i.byte_order,
                    _ => ByteOrder::Little,
                };
                for i in 0..n {
                    buf.write_bits(*b.get(i).unwrap_or(&0) as u64, 8, bo);
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(n) = len {
                if n != items.len() as u64 {
                    return err(format!("{} elements for an array of {n}", items.len()));
                }
            }
            buf.align(type_align(elem));
            for it in items {
                encode(buf, elem, it)?;
            }
            Ok(())
        }
        _ => err(format!("expected an array, got {v:?}")),
    }
}

/// Encodes one value against its type at the current position.
pub fn encode(buf: &mut BitBuf, ty: &FieldType, v: &Value) -> Result<(), EncodeError> {
    match ty {
        FieldType::Int(i) => {
            let x = int_value(v, "integer")?;
            buf.write_int(i, x);
        }
        FieldType::Enum(e) => {
            let x = int_value(v, "enumeration")?;
            buf.write_int(&e.int, x);
        }
        FieldType::BitArray(b) => {
            let x = int_value(v, "bit array")?;
            buf.write_int(&b.int, x);
        }
        FieldType::Float(f) => {
            let x = match *v {
                Value::Float(x) => x,
                Value::U64(x) => x as f64,
                Value::I64(x) => x as f64,
                _ => return err(format!("expected a float, got {v:?}")),
            };
            buf.align(f.align);
            match f.size() {
                32 => buf.write_bits((x as f32).to_bits() as u64, 32, f.byte_order),
                64 => buf.write_bits(x.to_bits(), 64, f.byte_order),
                n => return err(format!("unsupported float size {n}")),
            }
        }
        FieldType::VarInt(vt) => {
            buf.align(8);
            let mut out = Vec::with_capacity(10);
            if vt.signed {
                let mut x = int_value(v, "varint")? as i64;
                loop {
                    let byte = (x & 0x7f) as u8;
                    x >>= 7;
                    let done = (x == 0 && byte & 0x40 == 0) || (x == -1 && byte & 0x40 != 0);
                    out.push(if done { byte } else { byte | 0x80 });
                    if done {
                        break;
                    }
                }
            } else {
                let mut x = int_value(v, "varint")?;
                loop {
                    let byte = (x & 0x7f) as u8;
                    x >>= 7;
                    out.push(if x == 0 { byte } else { byte | 0x80 });
                    if x == 0 {
                        break;
                    }
                }
            }
            buf.write_bytes(&out);
        }
        FieldType::String(_) => {
            let Value::Str(s) = v else {
                return err(format!("expected a string, got {v:?}"));
            };
            if s.contains(&0) {
                return err("string holds a NUL byte");
            }
            buf.align(8);
            buf.write_bytes(s);
            buf.write_bytes(&[0]);
        }
        FieldType::SizedString(st) => {
            let (Value::Str(s) | Value::Bytes(s)) = v else {
                return err(format!("expected a string, got {v:?}"));
            };
            buf.align(8);
            match st.length {
                Length::Static(n) => {
                    let n = n as usize;
                    if s.len() > n {
                        return err(format!("{} bytes for a string of {n}", s.len()));
                    }
                    buf.write_bytes(s);
                    buf.write_bytes(&vec![0; n - s.len()]);
                }
                Length::Dynamic(_) => buf.write_bytes(s),
            }
        }
        FieldType::Blob(b) => {
            let (Value::Str(s) | Value::Bytes(s)) = v else {
                return err(format!("expected bytes, got {v:?}"));
            };
            buf.align(8);
            if let Length::Static(n) = b.length {
                if n as usize != s.len() {
                    return err(format!("{} bytes for a BLOB of {n}", s.len()));
                }
            }
            buf.write_bytes(s);
        }
        FieldType::Struct(s) => {
            let Value::Struct(vals) = v else {
                return err(format!("expected a structure, got {v:?}"));
            };
            encode_struct(buf, s, vals)?;
        }
        FieldType::Variant(var) => {
            let Value::Variant(idx, inner) = v else {
                return err(format!("expected a variant, got {v:?}"));
            };
            let Some(opt) = var.options.get(*idx) else {
                return err(format!("variant has no option {idx}"));
            };
            encode(buf, &opt.ty, inner)
                .map_err(|e| EncodeError(format!("{}: {}", opt.name, e.0)))?;
        }
        FieldType::Array(a) => {
            buf.align(a.min_align);
            encode_elems(buf, &a.elem, v, Some(a.len))?;
        }
        FieldType::Sequence(s) => {
            buf.align(s.min_align);
            encode_elems(buf, &s.elem, v, None)?;
        }
        FieldType::Optional(o) => {
            if !matches!(v, Value::Absent) {
                encode(buf, &o.ty, v)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::*;

    fn bits(size: u32, align: u32, bo: ByteOrder) -> IntType {
        IntType {
            align,
            ..IntType::unsigned(size, bo)
        }
    }

    #[test]
    fn byte_aligned_ints() {
        let mut b = BitBuf::default();
        b.write_int(&bits(8, 8, ByteOrder::Little), 0xAB);
        b.write_int(&bits(32, 32, ByteOrder::Little), 0x11223344);
        b.write_int(&bits(16, 8, ByteOrder::Big), 0xBEEF);
        assert_eq!(
            b.bytes(),
            &[0xAB, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 0xBE, 0xEF]
        );
    }

    #[test]
    fn little_endian_bitfields() {
        // uint5 id = 31 then uint27 ts = 0x123_4567 (LTTng compact header).
        let mut b = BitBuf::default();
        b.write_bits(31, 5, ByteOrder::Little);
        b.write_bits(0x123_4567, 27, ByteOrder::Little);
        let word = (0x123_4567u32 << 5) | 31;
        assert_eq!(b.bytes(), &word.to_le_bytes());
        // 3 bits then a 16-bit field aligned to 1 crossing three bytes.
        let mut b = BitBuf::default();
        b.write_bits(0b101, 3, ByteOrder::Little);
        b.write_bits(0xFFFF, 16, ByteOrder::Little);
        assert_eq!(b.bytes(), &[0b1111_1101, 0xFF, 0b0000_0111]);
        assert_eq!(b.pos(), 19);
    }

    #[test]
    fn big_endian_bitfields() {
        // IPv4 version:4 = 4, ihl:4 = 5 -> 0x45.
        let mut b = BitBuf::default();
        b.write_bits(4, 4, ByteOrder::Big);
        b.write_bits(5, 4, ByteOrder::Big);
        assert_eq!(b.bytes(), &[0x45]);
        // TCP data_offset:4 = 5, reserved:3 = 0, flags:9 = 0x012 (SYN|ACK).
        let mut b = BitBuf::default();
        b.write_bits(5, 4, ByteOrder::Big);
        b.write_bits(0, 3, ByteOrder::Big);
        b.write_bits(0x012, 9, ByteOrder::Big);
        assert_eq!(b.bytes(), &[0x50, 0x12]);
        // A 12-bit value at bit 2.
        let mut b = BitBuf::default();
        b.write_bits(0b11, 2, ByteOrder::Big);
        b.write_bits(0xABC, 12, ByteOrder::Big);
        // 11 1010 1011 1100 (+ 2 zero bits) -> 1110 1010 | 1111 0000
        assert_eq!(b.bytes(), &[0b1110_1010, 0b1111_0000]);
    }

    #[test]
    fn alignment_and_compound() {
        let st = StructType {
            min_align: 8,
            fields: vec![
                Field {
                    name: "a".into(),
                    ty: FieldType::Int(bits(8, 8, ByteOrder::Little)),
                },
                Field {
                    name: "s".into(),
                    ty: FieldType::String(StringType {
                        encoding: Encoding::Utf8,
                    }),
                },
                Field {
                    name: "b".into(),
                    ty: FieldType::Int(IntType::signed(64, ByteOrder::Little)),
                },
                Field {
                    name: "c".into(),
                    ty: FieldType::Array(ArrayType {
                        elem: Box::new(FieldType::Int(bits(8, 8, ByteOrder::Little))),
                        len: 4,
                        min_align: 1,
                        role: None,
                    }),
                },
                Field {
                    name: "d".into(),
                    ty: FieldType::Int(bits(16, 16, ByteOrder::Big)),
                },
            ],
        };
        let mut b = BitBuf::default();
        b.write_bits(1, 1, ByteOrder::Little); // misalign first
        encode_struct(
            &mut b,
            &st,
            &[
                Value::U64(7),
                Value::str("hi"),
                Value::I64(-2),
                Value::str("ab"),
                Value::U64(0x0102),
            ],
        )
        .unwrap();
        assert_eq!(
            b.bytes(),
            &[
                // The structure aligns to 16 bits (member d): byte 0 holds the bit, byte 1 pads.
                1, 0, 7, b'h', b'i', 0, // a, "hi\0"
                0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // b (byte-aligned only)
                b'a', b'b', 0, 0, // c
                0x01, 0x02 // d at offset 18, already 16-bit aligned
            ][..]
        );
    }

    #[test]
    fn errors_name_the_field() {
        let st = StructType {
            min_align: 8,
            fields: vec![Field {
                name: "x".into(),
                ty: FieldType::Int(IntType::unsigned(8, ByteOrder::Little)),
            }],
        };
        let mut b = BitBuf::default();
        let e = encode_struct(&mut b, &st, &[Value::str("no")]).unwrap_err();
        assert!(e.0.starts_with("x:"), "{e}");
    }
}
