//! Per-event-class print plans: the text of an event whose scopes are flat structures of
//! scalars is a fixed sequence of literals (name, braces, `member = ` separators) with one
//! value between each two. The literals are rendered once per class; an event then only
//! costs its values, formatted straight into the output without intermediate buffers.
//!
//! The plan is checked against each event's walk (scope presence, one level of structures,
//! number of values); anything unexpected sends the event back to the general writer, so the
//! output is always the one [`crate::text`] gives.

use ctf::field::{Compound, FieldValue, FieldVisitor};
use ctf::ir::{DisplayBase, Role};
use ctf::layout::{Layout, NodeId, NodeKind};
use ctf::stream::Event;

use crate::text::{write_escaped, write_scalar};
use crate::timefmt::PAIRS;

/// A literal stored padded to whole 16-byte blocks, copied block by block: fixed-size copies
/// compile to a few moves where a variable-length copy is a `memcpy` call.
pub struct Lit {
    padded: Box<[u8]>,
    len: usize,
}

impl Lit {
    fn new(bytes: &[u8]) -> Lit {
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().div_ceil(16) * 16, 0);
        Lit {
            padded: padded.into_boxed_slice(),
            len: bytes.len(),
        }
    }

    #[inline(always)]
    pub fn put(&self, b: &mut Vec<u8>) {
        let start = b.len();
        b.reserve(self.padded.len());
        for blk in self.padded.chunks_exact(16) {
            let blk: &[u8; 16] = blk.try_into().expect("16-byte block");
            b.extend_from_slice(blk);
        }
        b.truncate(start + self.len);
    }
}

/// The compiled text of one event class.
pub struct ClassPlan {
    /// `label name: `.
    pub head: Lit,
    /// Which of the common context, specific context and payload the class has.
    scopes: [bool; 3],
    /// `lits[0]` comes before the first value, `lits[k]` after value `k - 1`; the last one
    /// ends with the newline.
    lits: Vec<Lit>,
    /// `, ` and `lits[0]`: after a packet context.
    first_after_packet: Lit,
    /// How to write each value when every scope is a fixed-layout structure (read straight
    /// from its plan, no walk); None otherwise.
    direct: Option<Vec<Fmt>>,
}

/// How a value of a fixed-layout structure is written.
#[derive(Clone, Copy)]
enum Fmt {
    Unsigned,
    Signed,
    Hex,
    /// A text of this many bytes.
    Text(usize),
    /// Anything else (enumerations, floats, other bases…): through [`FieldValue`].
    General,
}

impl Fmt {
    fn of(kind: &NodeKind) -> Fmt {
        match *kind {
            NodeKind::Int {
                signed: false,
                base: DisplayBase::Decimal,
                enum_idx: None,
                ..
            } => Fmt::Unsigned,
            NodeKind::Int {
                signed: true,
                base: DisplayBase::Decimal,
                enum_idx: None,
                ..
            } => Fmt::Signed,
            NodeKind::Int {
                signed: false,
                base: DisplayBase::Hexadecimal,
                enum_idx: None,
                ..
            } => Fmt::Hex,
            NodeKind::SizedString {
                len: ctf::layout::Len::Static(n),
            } => Fmt::Text(n as usize),
            _ => Fmt::General,
        }
    }
}

/// True for nodes a walk reports as one value.
fn is_scalar(kind: &NodeKind) -> bool {
    !matches!(
        kind,
        NodeKind::Struct { .. }
            | NodeKind::Variant { .. }
            | NodeKind::Array { .. }
            | NodeKind::Optional { .. }
    )
}

impl ClassPlan {
    /// The plan of `ev`'s class, when each of its scopes is a structure of scalars.
    pub fn build(ev: &Event<'_>, label: &[u8]) -> Option<ClassPlan> {
        let trace = ev.trace();
        let layout: &Layout = &trace.layout;
        let (sc, _) = ev.class_index();
        let el = ev.class_layout();
        let nodes: [Option<NodeId>; 3] = [
            layout.streams.at(sc).event_common_context,
            el.context,
            el.payload,
        ];
        let mut lits = Vec::new();
        let mut cur: Vec<u8> = Vec::new();
        let mut any = false;
        let mut fmts = Vec::new();
        let mut direct = true;
        for node in nodes.iter().flatten() {
            if !matches!(layout.nodes[*node as usize].kind, NodeKind::Struct { .. }) {
                return None;
            }
            direct &= layout.nodes[*node as usize].plan.is_some();
            if any {
                cur.extend_from_slice(b", ");
            }
            any = true;
            cur.push(b'{');
            for (k, m) in layout.members_of(*node).iter().enumerate() {
                if !is_scalar(&layout.nodes[m.node as usize].kind) {
                    return None;
                }
                fmts.push(Fmt::of(&layout.nodes[m.node as usize].kind));
                cur.extend_from_slice(if k == 0 { b" " } else { b", " });
                cur.extend_from_slice(m.name.as_bytes());
                cur.extend_from_slice(b" = ");
                lits.push(Lit::new(&cur));
                cur.clear();
            }
            cur.extend_from_slice(b" }");
        }
        cur.push(b'\n');
        lits.push(Lit::new(&cur));
        let first = &lits[0].padded[..lits[0].len];
        let first_after_packet = if any {
            Lit::new(&[b", ", first].concat())
        } else {
            Lit::new(first)
        };
        let mut head = label.to_vec();
        head.extend_from_slice(ev.name().as_bytes());
        head.extend_from_slice(b": ");
        Some(ClassPlan {
            head: Lit::new(&head),
            scopes: nodes.map(|n| n.is_some()),
            lits,
            first_after_packet,
            direct: direct.then_some(fmts),
        })
    }

    /// Appends the scopes of `ev` (after the head and packet context, `after_packet` telling
    /// whether a packet context was written) and the newline. False, with `b` as it was, when
    /// the event does not have the planned shape.
    pub fn write_scopes(&self, b: &mut Vec<u8>, ev: &Event<'_>, after_packet: bool) -> bool {
        let views = [ev.common_context(), ev.specific_context(), ev.payload()];
        if views.iter().zip(self.scopes).any(|(v, s)| v.is_some() != s) {
            return false;
        }
        let start = b.len();
        if after_packet {
            self.first_after_packet.put(b);
        } else {
            self.lits[0].put(b);
        }
        if let Some(fmts) = &self.direct {
            if self.write_direct(b, &views, fmts) {
                return true;
            }
            b.truncate(start);
            if after_packet {
                self.first_after_packet.put(b);
            } else {
                self.lits[0].put(b);
            }
        }
        let mut w = PlanWriter {
            b,
            lits: &self.lits[1..],
            k: 0,
            depth: 0,
            bad: false,
        };
        for v in views.iter().flatten() {
            v.walk(&mut w);
        }
        if w.bad || w.k != w.lits.len() || w.depth != 0 {
            b.truncate(start);
            return false;
        }
        true
    }
}

impl ClassPlan {
    /// Writes the values of fixed-layout scopes read straight from their plans, each followed
    /// by its literal. False when a scope is not laid out as planned.
    #[inline]
    fn write_direct(
        &self,
        b: &mut Vec<u8>,
        views: &[Option<ctf::FieldView<'_>>; 3],
        fmts: &[Fmt],
    ) -> bool {
        let lits = &self.lits[1..];
        let mut k = 0;
        for v in views.iter().flatten() {
            let Some((data, base, plan)) = v.fixed_struct() else {
                return false;
            };
            if k + plan.reads.len() > fmts.len() {
                return false;
            }
            for (i, r) in plan.reads.iter().enumerate() {
                let raw = || r.bits.read(data, base).unwrap_or(0);
                match fmts[k] {
                    Fmt::Unsigned => put_u64(b, raw()),
                    Fmt::Signed => {
                        let x = ctf::bits::sign_extend(raw(), r.bits.size);
                        if x < 0 {
                            b.push(b'-');
                        }
                        put_u64(b, x.unsigned_abs());
                    }
                    Fmt::Hex => put_hex(b, raw()),
                    Fmt::Text(n) => {
                        let at = ((base + r.bits.off) / 8) as usize;
                        put_str(b, data.get(at..at + n).unwrap_or(&[]));
                    }
                    Fmt::General => match v.member_at(i) {
                        Some(m) => put_value(b, &m.value()),
                        None => return false,
                    },
                }
                lits[k].put(b);
                k += 1;
            }
        }
        k == lits.len()
    }
}

/// Writes the values of a walk, each followed by its literal.
struct PlanWriter<'a> {
    b: &'a mut Vec<u8>,
    lits: &'a [Lit],
    k: usize,
    depth: u32,
    bad: bool,
}

impl FieldVisitor for PlanWriter<'_> {
    #[inline(always)]
    fn value(&mut self, _name: Option<&str>, _role: Option<Role>, value: &FieldValue<'_>) {
        if self.depth != 1 || self.k >= self.lits.len() || self.bad {
            self.bad = true;
            return;
        }
        put_value(self.b, value);
        self.lits[self.k].put(self.b);
        self.k += 1;
    }

    fn enter(&mut self, _name: Option<&str>, kind: Compound<'_>) {
        self.depth += 1;
        if self.depth != 1 || !matches!(kind, Compound::Struct) {
            self.bad = true;
        }
    }

    fn leave(&mut self) {
        self.depth = self.depth.wrapping_sub(1);
    }
}

/// Formats a scalar as [`write_scalar`] does, with fast paths for the common kinds.
#[inline(always)]
fn put_value(b: &mut Vec<u8>, value: &FieldValue<'_>) {
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
        } => {
            if value < 0 {
                b.push(b'-');
            }
            put_u64(b, value.unsigned_abs());
        }
        FieldValue::UInt {
            value,
            base: DisplayBase::Hexadecimal,
            mappings: None,
        } => put_hex(b, value),
        FieldValue::Str(s) => put_str(b, s),
        _ => write_scalar(b, value),
    }
}

/// Appends `v` in decimal, written in place.
#[inline]
pub fn put_u64(b: &mut Vec<u8>, v: u64) {
    // Most values (cpus, priorities, small ids) have one or two digits.
    if v < 10 {
        b.push(b'0' + v as u8);
        return;
    }
    if v < 100 {
        let p = v as usize * 2;
        b.extend_from_slice(&[PAIRS[p], PAIRS[p + 1]]);
        return;
    }
    let n = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let start = b.len();
    b.extend_from_slice(&[0u8; 20]);
    let d = &mut b[start..start + n];
    let mut v = v;
    let mut i = n;
    while i >= 2 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        d[i - 2] = PAIRS[p];
        d[i - 1] = PAIRS[p + 1];
        i -= 2;
    }
    if i == 1 {
        d[0] = b'0' + v as u8;
    }
    b.truncate(start + n);
}

/// Appends `0x` and `v` in upper-case hexadecimal.
#[inline]
fn put_hex(b: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let n = ((64 - v.leading_zeros() as usize).div_ceil(4)).max(1);
    let start = b.len();
    b.extend_from_slice(&[0u8; 18]);
    let d = &mut b[start..start + 2 + n];
    d[0] = b'0';
    d[1] = b'x';
    let mut v = v;
    for x in d[2..].iter_mut().rev() {
        *x = HEX[(v & 15) as usize];
        v >>= 4;
    }
    b.truncate(start + 2 + n);
}

/// Appends a quoted string value, up to its first NUL.
#[inline]
fn put_str(b: &mut Vec<u8>, raw: &[u8]) {
    let plain = |c: u8| c >= 0x20 && !matches!(c, b'\\' | b'"' | b'\'' | b'?');
    b.push(b'"');
    if let Ok(blk) = <&[u8; 16]>::try_from(raw) {
        // The usual `char comm[16]`: copied as one block, then cut at its NUL.
        let mut end = 16;
        let mut ok = true;
        for (i, &c) in blk.iter().enumerate() {
            if c == 0 {
                end = i;
                break;
            }
            ok &= plain(c);
        }
        if ok {
            let start = b.len();
            b.extend_from_slice(blk);
            b.truncate(start + end);
        } else {
            write_escaped(b, &blk[..end]);
        }
    } else {
        let s = raw.split(|&c| c == 0).next().unwrap_or(raw);
        write_escaped(b, s);
    }
    b.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        let mut b = b"x".to_vec();
        for v in [0, 7, 10, 99, 100, 12345, u64::MAX] {
            put_u64(&mut b, v);
            b.push(b' ');
            put_hex(&mut b, v);
            b.push(b' ');
        }
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "x0 0x0 7 0x7 10 0xA 99 0x63 100 0x64 12345 0x3039 \
             18446744073709551615 0xFFFFFFFFFFFFFFFF "
        );
    }

    #[test]
    fn strings() {
        let mut b = Vec::new();
        put_str(&mut b, b"swapper/0\0\0\0\0\0\0\0");
        put_str(&mut b, b"0123456789abcdef");
        put_str(&mut b, b"a\"b\0\0\0\0\0\0\0\0\0\0\0\0\0");
        put_str(&mut b, b"short\0x");
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "\"swapper/0\"\"0123456789abcdef\"\"a\\\"b\"\"short\""
        );
    }

    #[test]
    fn literals() {
        let mut b = b"ab".to_vec();
        Lit::new(b"0123456789abcdefXYZ").put(&mut b);
        Lit::new(b"").put(&mut b);
        Lit::new(b"!").put(&mut b);
        assert_eq!(b, b"ab0123456789abcdefXYZ!");
    }
}
