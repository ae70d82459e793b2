//! One scalar field value as babeltrace2 writes it (integers in their display base,
//! enumerations with their labels, floats as `%g`, escaped strings).

use ctf::field::FieldValue;
use ctf::ir::{DisplayBase, EnumMapping};

use crate::put::{put_hex, put_i64, put_str, put_u64, write_escaped};

/// Formats a scalar as [`write_scalar`] does, with fast paths for the common kinds.
#[inline(always)]
pub(crate) fn put_value(b: &mut Vec<u8>, value: &FieldValue<'_>) {
    match *value {
        FieldValue::UInt {
            value,
            base: DisplayBase::Decimal,
            mappings: None,
        } => put_u64(b, value),
        FieldValue::SInt {
            value,
            base: DisplayBase::Decimal,
            mappings: None,
            ..
        } => put_i64(b, value),
        FieldValue::UInt {
            value,
            base: DisplayBase::Hexadecimal,
            mappings: None,
        } => put_hex(b, value),
        FieldValue::Str(s) => put_str(b, s),
        _ => write_scalar(b, value),
    }
}

fn write_int(b: &mut Vec<u8>, signed_value: Option<i64>, bits: u64, base: DisplayBase) {
    use std::io::Write as _;
    match base {
        DisplayBase::Decimal => match signed_value {
            Some(v) => put_i64(b, v),
            None => put_u64(b, bits),
        },
        DisplayBase::Hexadecimal => put_hex(b, bits),
        DisplayBase::Octal => {
            let _ = write!(b, "0{bits:o}");
        }
        DisplayBase::Binary => {
            let _ = write!(b, "0b{bits:b}");
        }
    }
}

/// Writes what precedes an enumeration's integer: its labels for value `v` (Babeltrace 2 lists
/// several matching labels in declaration order, without braces) and ` : container = `.
pub(crate) fn write_enum_open(b: &mut Vec<u8>, v: i128, mappings: &[EnumMapping]) {
    let labels = mappings
        .iter()
        .filter(|m| m.ranges.iter().any(|r| r.contains(v)))
        .map(|m| m.label.as_str());
    b.extend_from_slice(b"( ");
    let mut any = false;
    for l in labels {
        if any {
            b.extend_from_slice(b", ");
        }
        any = true;
        b.push(b'"');
        b.extend_from_slice(l.as_bytes());
        b.push(b'"');
    }
    if !any {
        b.extend_from_slice(b"<unknown>");
    }
    b.extend_from_slice(b" : container = ");
}

pub(crate) fn write_scalar(b: &mut Vec<u8>, value: &FieldValue<'_>) {
    use std::io::Write as _;
    match *value {
        FieldValue::UInt {
            value,
            base,
            mappings,
        } => {
            if let Some(m) = mappings {
                write_enum_open(b, value as i128, m);
            }
            write_int(b, None, value, base);
            if mappings.is_some() {
                b.extend_from_slice(b" )");
            }
        }
        FieldValue::SInt {
            value,
            size,
            base,
            mappings,
        } => {
            if let Some(m) = mappings {
                write_enum_open(b, value as i128, m);
            }
            let bits = if size >= 64 {
                value as u64
            } else {
                value as u64 & ((1u64 << size) - 1)
            };
            write_int(b, Some(value), bits, base);
            if mappings.is_some() {
                b.extend_from_slice(b" )");
            }
        }
        FieldValue::Bool(x) => b.extend_from_slice(if x { b"true" } else { b"false" }),
        FieldValue::Bits(x) => {
            let _ = write!(b, "0x{x:X}");
        }
        FieldValue::Float(f) => b.extend_from_slice(format_g(f, 6).as_bytes()),
        FieldValue::Str(s) => {
            b.push(b'"');
            let s = s.split(|&c| c == 0).next().unwrap_or(s);
            write_escaped(b, s);
            b.push(b'"');
        }
        FieldValue::Blob(bytes) => {
            for x in bytes {
                let _ = write!(b, "{x:02x}");
            }
        }
        // Compounds come through `enter`/`leave`.
        _ => {}
    }
}

/// Formats like C's `printf("%.{prec}g")`.
pub fn format_g(f: f64, prec: usize) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    let p = prec.max(1);
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{:.*e}", p - 1, f);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = trim_zeros(mant);
        format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{f:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}
