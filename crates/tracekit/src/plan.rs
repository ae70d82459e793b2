//! Per-event-class print plans: the text of an event whose scopes are flat structures of
//! scalars is a fixed sequence of literals (name, braces, `member = ` separators) with one
//! value between each two. The literals are rendered once per class; an event then only
//! costs its values, formatted straight into the output without intermediate buffers.
//!
//! When every scope of the class is a fixed-layout structure, the plan reads each value
//! straight from the structure's [`ctf::layout::FixedPlan`] and writes the whole line into a
//! slice known to have room for its longest form ([`ClassPlan::write_direct`]): no `Vec`
//! capacity checks or length updates per piece, and the literals are copied as fixed-size
//! blocks.
//!
//! The plan is checked against each event (scope presence, one level of structures, number of
//! values); anything unexpected sends the event back to the general writer, so the output is
//! always the one [`crate::text`] gives.

use ctf::field::{Compound, FieldValue, FieldVisitor};
use ctf::ir::{DisplayBase, Role};
use ctf::layout::{Layout, NodeId, NodeKind};
use ctf::stream::Event;
use ctf::FieldView;

use crate::text::{write_escaped, write_scalar};
use crate::timefmt::{eight_digits, ASCII_ZEROS};

/// A literal stored padded to whole 16-byte blocks, copied block by block: fixed-size copies
/// compile to a few moves where a variable-length copy is a `memcpy` call.
pub struct Lit {
    padded: Box<[u8]>,
    len: usize,
}

impl Lit {
    pub fn new(bytes: &[u8]) -> Lit {
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().div_ceil(16) * 16, 0);
        Lit {
            padded: padded.into_boxed_slice(),
            len: bytes.len(),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.padded[..self.len]
    }

    /// Bytes [`Self::put_at`] may write (the padding included).
    pub fn room(&self) -> usize {
        self.padded.len()
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

    /// Writes the literal at `at` in `b`, which has room for [`Self::room`] bytes there;
    /// returns where it ends.
    #[inline(always)]
    pub fn put_at(&self, b: &mut [u8], at: usize) -> usize {
        for (i, blk) in self.padded.chunks_exact(16).enumerate() {
            b[at + 16 * i..at + 16 * i + 16].copy_from_slice(blk);
        }
        at + self.len
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
    /// The straight-line form, when every scope is a fixed-layout structure; None otherwise.
    direct: Option<Direct>,
}

/// How to write an event whose scopes are fixed-layout structures: each value read straight
/// from its structure's plan, no walk.
struct Direct {
    /// Per value: its format and the literal after it.
    steps: Vec<Step>,
    /// Per present scope, in order: how many values it has.
    scope_values: Vec<usize>,
    /// Bytes the values and their literals take at most (an upper bound of what
    /// [`ClassPlan::write_direct`] writes after the lead, [`Fmt::General`] values apart).
    body_max: usize,
    /// The head, the packet context and the literal before the first value, as one literal,
    /// for the packet `(stream index, packet key)` it was made for.
    lead: Option<((usize, u64), Lit)>,
}

/// Longest literal a [`Step`] holds inline: a member name of up to 26 bytes after `, ` and
/// before ` = ` (longer ones make the class go through the walk).
const STEP_LIT: usize = 32;

/// One value of a [`Direct`] plan and the literal that follows it, stored inline and copied
/// as one fixed-size block.
struct Step {
    fmt: Fmt,
    lit_len: usize,
    lit: [u8; STEP_LIT],
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

    /// Bytes the value takes at most ([`Fmt::General`]: checked when written).
    fn max_len(self) -> usize {
        match self {
            // 20 digits, or `-` and 19 digits.
            Fmt::Unsigned | Fmt::Signed => 20,
            Fmt::Hex => 18,
            // Quotes, and each byte escaped as `\xNN` at worst; plus the 16-byte block copy.
            Fmt::Text(n) => 2 + (4 * n).max(16),
            Fmt::General => 0,
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
        let mut scope_values = Vec::new();
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
            let members = layout.members_of(*node);
            scope_values.push(members.len());
            for (k, m) in members.iter().enumerate() {
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
        let first = lits[0].bytes();
        let first_after_packet = if any {
            Lit::new(&[b", ", first].concat())
        } else {
            Lit::new(first)
        };
        let mut head = label.to_vec();
        head.extend_from_slice(ev.name().as_bytes());
        head.extend_from_slice(b": ");
        let direct = if direct {
            Direct::new(&fmts, &lits[1..], scope_values)
        } else {
            None
        };
        Some(ClassPlan {
            head: Lit::new(&head),
            scopes: nodes.map(|n| n.is_some()),
            lits,
            first_after_packet,
            direct,
        })
    }

    /// Whether [`Self::write_direct`] applies to the class.
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// Appends the scopes of `ev` (after the head and packet context, `after_packet` telling
    /// whether a packet context was written) and the newline, walking its fields. False, with
    /// `b` as it was, when the event does not have the planned shape.
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

    /// For a direct plan: bytes [`Self::write_direct`] needs from its start for an event of
    /// packet `packet` (stream index, packet key), `packet_text` giving that packet's rendered
    /// context (called only when the packet changed since the last event of the class).
    #[inline]
    pub fn direct_room(
        &mut self,
        packet: (usize, u64),
        packet_text: impl FnOnce() -> Option<Vec<u8>>,
    ) -> usize {
        let Some(d) = &mut self.direct else {
            return 0;
        };
        let lead = match &d.lead {
            Some((k, lead)) if *k == packet => lead,
            _ => {
                let mut t = self.head.bytes().to_vec();
                match packet_text() {
                    Some(p) => {
                        t.extend_from_slice(&p);
                        t.extend_from_slice(self.first_after_packet.bytes());
                    }
                    None => t.extend_from_slice(self.lits[0].bytes()),
                }
                &d.lead.insert((packet, Lit::new(&t))).1
            }
        };
        lead.room() + d.body_max
    }

    /// Writes the line of `ev` from the head to the newline at `at` in `b`, reading the
    /// values of its fixed-layout scopes straight from their plans; `b` has the room
    /// [`Self::direct_room`] gave (for this event's packet) from `at`. Returns where the line
    /// ends, or None when the event is not laid out as planned (or a [`Fmt::General`] value
    /// does not fit), to be written the general way. `scratch` holds general values.
    ///
    /// Kept out of line: inlined into the worker's loop, its values live in spilled
    /// registers.
    #[inline(never)]
    pub fn write_direct(
        &self,
        b: &mut [u8],
        at: usize,
        ev: &Event<'_>,
        scratch: &mut Vec<u8>,
    ) -> Option<usize> {
        let d = self.direct.as_ref()?;
        let (_, lead) = d.lead.as_ref()?;
        let views = [ev.common_context(), ev.specific_context(), ev.payload()];
        if views.iter().zip(self.scopes).any(|(v, s)| v.is_some() != s) {
            return None;
        }
        let limit = at + lead.room() + d.body_max;
        let mut at = lead.put_at(b, at);
        let mut k = 0;
        for (v, &n) in views.iter().flatten().zip(&d.scope_values) {
            let (data, base, plan) = v.fixed_struct()?;
            if plan.reads.len() != n {
                return None;
            }
            let steps = d.steps.get(k..k + n)?;
            for (i, (r, s)) in plan.reads.iter().zip(steps).enumerate() {
                let raw = || r.bits.read(data, base).unwrap_or(0);
                at = match s.fmt {
                    Fmt::Unsigned => u64_at(b, at, raw()),
                    Fmt::Signed => {
                        let x = ctf::bits::sign_extend(raw(), r.bits.size);
                        b[at] = b'-';
                        u64_at(b, at + (x < 0) as usize, x.unsigned_abs())
                    }
                    Fmt::Hex => hex_at(b, at, raw()),
                    Fmt::Text(n) => {
                        let p = ((base + r.bits.off) / 8) as usize;
                        str_at(b, at, data.get(p..p + n).unwrap_or(&[]))
                    }
                    Fmt::General => general_at(b, at, v, i, scratch, limit)?,
                };
                b[at..at + STEP_LIT].copy_from_slice(&s.lit);
                at += s.lit_len;
            }
            k += n;
        }
        (k == d.steps.len()).then_some(at)
    }
}

impl Direct {
    /// The direct form of a class with values `fmts`, each followed by its literal in `lits`;
    /// None when a literal is too long to be held inline.
    fn new(fmts: &[Fmt], lits: &[Lit], scope_values: Vec<usize>) -> Option<Direct> {
        let mut steps = Vec::with_capacity(fmts.len());
        let mut body_max = 0;
        for (&fmt, lit) in fmts.iter().zip(lits) {
            let bytes = lit.bytes();
            if bytes.len() > STEP_LIT {
                return None;
            }
            let mut inline = [0u8; STEP_LIT];
            inline[..bytes.len()].copy_from_slice(bytes);
            steps.push(Step {
                fmt,
                lit_len: bytes.len(),
                lit: inline,
            });
            body_max += fmt.max_len() + STEP_LIT;
        }
        Some(Direct {
            steps,
            scope_values,
            body_max,
            lead: None,
        })
    }
}

/// Writes member `i` of structure `v` through [`FieldValue`] (formatted in `scratch`) at `at`;
/// None when it is missing or would leave less than the planned room before `limit`.
#[cold]
fn general_at(
    b: &mut [u8],
    at: usize,
    v: &FieldView<'_>,
    i: usize,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> Option<usize> {
    scratch.clear();
    put_value(scratch, &v.member_at(i)?.value());
    // The room was planned without general values: the rest must still fit after this one.
    if limit + scratch.len() > b.len() {
        return None;
    }
    b[at..at + scratch.len()].copy_from_slice(scratch);
    Some(at + scratch.len())
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

/// Writes `v` in decimal at `at` (room for 20 bytes); returns where it ends.
#[inline(always)]
pub fn u64_at(b: &mut [u8], at: usize, v: u64) -> usize {
    // Most values (cpus, priorities, small ids) have one digit.
    if v < 10 {
        b[at] = b'0' + v as u8;
        return at + 1;
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
        let at = head_digits_at(b, at, (v / E8) as u32);
        return eight_digits_at(b, at, (v % E8) as u32);
    }
    // Twenty digits at most: up to four, then sixteen.
    let rest = v % (E8 * E8);
    let at = head_digits_at(b, at, (v / (E8 * E8)) as u32);
    let at = eight_digits_at(b, at, (rest / E8) as u32);
    eight_digits_at(b, at, (rest % E8) as u32)
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

/// Writes `0x` and `v` in upper-case hexadecimal at `at` (room for 18 bytes).
#[inline]
fn hex_at(b: &mut [u8], at: usize, v: u64) -> usize {
    b[at] = b'0';
    b[at + 1] = b'x';
    let at = at + 2;
    let n = ((64 - v.leading_zeros() as usize).div_ceil(4)).max(1);
    if n > 8 {
        // Leading zero digits are the low bytes of the word.
        let hi = hex8((v >> 32) as u32) >> (8 * (16 - n));
        b[at..at + 8].copy_from_slice(&hi.to_le_bytes());
        let at = at + n - 8;
        b[at..at + 8].copy_from_slice(&hex8(v as u32).to_le_bytes());
        at + 8
    } else {
        let lo = hex8(v as u32) >> (8 * (8 - n));
        b[at..at + 8].copy_from_slice(&lo.to_le_bytes());
        at + n
    }
}

/// Per byte of `v`, the high bit set when the byte is zero (exact: no carries across bytes).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((v & LOW7) + LOW7) | v | LOW7)
}

/// Per byte of `v`, the high bit set when Babeltrace escapes the byte: a control character
/// (below 0x20) or one of `\ " ' ?`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn escaped_bytes(v: u64) -> u64 {
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
fn plain_len16(blk: &[u8; 16]) -> Option<usize> {
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
fn plain_len16(blk: &[u8; 16]) -> Option<usize> {
    swar_plain_len16(blk)
}

/// [`plain_len16`] with word operations (used where SSE2 is not; tested everywhere).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn swar_plain_len16(blk: &[u8; 16]) -> Option<usize> {
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
#[inline]
fn str_at(b: &mut [u8], at: usize, raw: &[u8]) -> usize {
    b[at] = b'"';
    let at = at + 1;
    let end = if let Ok(blk) = <&[u8; 16]>::try_from(raw) {
        // The usual `char comm[16]`: checked at once, copied as one block, then cut at its
        // NUL.
        match plain_len16(blk) {
            Some(len) => {
                b[at..at + 16].copy_from_slice(blk);
                at + len
            }
            None => {
                let len = blk.iter().position(|&c| c == 0).unwrap_or(16);
                escape_at(b, at, &blk[..len])
            }
        }
    } else {
        let s = raw.split(|&c| c == 0).next().unwrap_or(raw);
        escape_at(b, at, s)
    };
    b[end] = b'"';
    end + 1
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

/// Appends `v` in decimal.
#[inline]
pub fn put_u64(b: &mut Vec<u8>, v: u64) {
    let start = b.len();
    b.extend_from_slice(&[0u8; 20]);
    let end = u64_at(b, start, v);
    b.truncate(end);
}

/// Appends `v` in decimal, with its sign.
#[inline]
pub fn put_i64(b: &mut Vec<u8>, v: i64) {
    if v < 0 {
        b.push(b'-');
    }
    put_u64(b, v.unsigned_abs());
}

/// Appends `0x` and `v` in upper-case hexadecimal.
#[inline]
pub fn put_hex(b: &mut Vec<u8>, v: u64) {
    let start = b.len();
    b.extend_from_slice(&[0u8; 18]);
    let end = hex_at(b, start, v);
    b.truncate(end);
}

/// Appends a quoted string value, up to its first NUL.
#[inline]
fn put_str(b: &mut Vec<u8>, raw: &[u8]) {
    let start = b.len();
    b.resize(start + 2 + (4 * raw.len()).max(16), 0);
    let end = str_at(b, start, raw);
    b.truncate(end);
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

    #[test]
    fn literals() {
        let mut b = b"ab".to_vec();
        Lit::new(b"0123456789abcdefXYZ").put(&mut b);
        Lit::new(b"").put(&mut b);
        Lit::new(b"!").put(&mut b);
        assert_eq!(b, b"ab0123456789abcdefXYZ!");
        let mut s = [b'.'; 40];
        let lit = Lit::new(b"0123456789abcdefXYZ");
        assert_eq!(lit.room(), 32);
        let end = lit.put_at(&mut s, 3);
        assert_eq!(&s[..end], b"...0123456789abcdefXYZ");
    }
}
