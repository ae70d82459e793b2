//! Protobuf's wire encoding for the events' hot path: fields appended straight from the
//! payload, without a message value in between (the messages of [`super::proto`] describe the
//! same fields, and decode what this writes in the tests).

/// Wire type of varints.
pub const VARINT: u32 = 0;
/// Wire type of length-delimited fields.
pub const LEN: u32 = 2;

/// Appends `v` as a varint.
#[inline(always)]
pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
    // Byte by byte: a copy of a few bytes of run-time length would be a call to memmove.
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `v` as a varint, quicker for values of 2^56 to 2^63 (times since the epoch in ns,
/// which take 9 bytes): their bytes are made at once and appended as one fixed-size copy,
/// rather than pushed one at a time.
#[inline(always)]
pub fn varint_time(buf: &mut Vec<u8>, v: u64) {
    if v >> 56 == 0 || v >> 63 != 0 {
        return varint(buf, v);
    }
    let mut b = [0x80u8; 9];
    for (i, x) in b.iter_mut().enumerate().take(8) {
        *x |= (v >> (7 * i)) as u8;
    }
    b[8] = (v >> 56) as u8;
    buf.extend_from_slice(&b);
}

/// The bytes of `v` as a varint.
#[inline(always)]
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends the key of field `field` of wire type `wire`.
#[inline(always)]
pub fn key(buf: &mut Vec<u8>, field: u32, wire: u32) {
    varint(buf, u64::from(field << 3 | wire));
}

/// Appends a `uint64`/`uint32` field.
#[inline(always)]
pub fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    key(buf, field, VARINT);
    varint(buf, v);
}

/// Appends an `int64` field, if there is a value.
#[inline(always)]
pub fn int64(buf: &mut Vec<u8>, field: u32, v: Option<i64>) {
    if let Some(v) = v {
        uint(buf, field, v as u64);
    }
}

/// Appends an `int32` field, if there is a value (truncated to 32 bits, then sign-extended as
/// protobuf encodes a negative `int32`).
#[inline(always)]
pub fn int32(buf: &mut Vec<u8>, field: u32, v: Option<i64>) {
    if let Some(v) = v {
        uint(buf, field, v as i32 as i64 as u64);
    }
}

/// Appends a `uint32` field, if there is a value (truncated to 32 bits).
#[inline(always)]
pub fn uint32(buf: &mut Vec<u8>, field: u32, v: Option<i64>) {
    if let Some(v) = v {
        uint(buf, field, u64::from(v as u32));
    }
}

/// Appends a `bytes` field, or a message already encoded.
#[inline(always)]
pub fn bytes(buf: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(buf, field, LEN);
    varint(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// Appends a `string` field holding `b`, if there is one (lossy for invalid UTF-8: protobuf
/// strings are UTF-8).
#[inline(always)]
pub fn string(buf: &mut Vec<u8>, field: u32, b: Option<&[u8]>) {
    let Some(b) = b else { return };
    // ASCII first: the comms almost always are, and the check is inlined where the UTF-8
    // validation is a call.
    if b.is_ascii() || std::str::from_utf8(b).is_ok() {
        bytes(buf, field, b);
    } else {
        bytes(buf, field, String::from_utf8_lossy(b).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn varints_as_prost_writes_them() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
            1 << 63,
            1 << 56,
            (1 << 56) - 1,
            (1 << 63) - 1,
            1_764_000_000_123_456_789,
        ] {
            let mut ours = Vec::new();
            varint(&mut ours, v);
            let mut theirs = Vec::new();
            prost::encoding::encode_varint(v, &mut theirs);
            assert_eq!(ours, theirs, "{v}");
            assert_eq!(varint_len(v), theirs.len(), "{v}");
            let mut time = Vec::new();
            varint_time(&mut time, v);
            assert_eq!(time, theirs, "{v}");
        }
    }

    #[test]
    fn fields_decode_as_their_messages() {
        let mut buf = Vec::new();
        string(&mut buf, 1, Some(b"bash\xff"));
        int32(&mut buf, 2, Some(-5));
        int32(&mut buf, 3, Some(1 << 33 | 7));
        int64(&mut buf, 4, Some(-1));
        int32(&mut buf, 6, None);
        let m = super::super::proto::SchedSwitch::decode(buf.as_slice()).unwrap();
        assert_eq!(m.prev_comm.as_deref(), Some("bash\u{fffd}"));
        assert_eq!(m.prev_pid, Some(-5));
        assert_eq!(m.prev_prio, Some(7));
        assert_eq!(m.prev_state, Some(-1));
        assert_eq!(m.next_pid, None);
    }
}
