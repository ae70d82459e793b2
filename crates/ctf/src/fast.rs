//! Straight-line decoding of the event shapes LTTng writes, compiled once per class.
//!
//! The general decoder ([`crate::decode`]) walks nodes and records one slot per field. Most
//! LTTng events need far less: a tagged header (compact or large) whose only effects are the
//! event id and the clock, then scopes that are structures of fixed-size scalars, which a
//! [`crate::field::FieldView`] reads on access from their start position. For such streams
//! and classes this module computes, per event, only the id, the clock, and where each scope
//! starts: a handful of loads instead of a tree walk. Anything else (a tag selecting no
//! option, data too short, strings or sequences in the body) falls back to the general path,
//! which also reports errors.

use crate::bits::{align_up, sign_extend, BitRead};
use std::sync::Arc;

use crate::flat::{Flatten, OpenRun, Scalars, Walk};
use crate::ir::{IntRange, Role};
use crate::layout::{Layout, Len, Node, NodeId, NodeKind, StreamLayout, NO_REG};

/// A fixed-size integer at a constant bit offset from some base.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntRead {
    pub bits: BitRead,
    pub signed: bool,
}

impl IntRead {
    fn new(off: u64, size: u32, little: bool, signed: bool) -> IntRead {
        IntRead {
            bits: BitRead::new(off, size, little),
            signed,
        }
    }

    /// The raw (unsigned, not sign-extended) value, None when out of `data`.
    #[inline(always)]
    pub fn raw(&self, data: &[u8], base: u64) -> Option<u64> {
        self.bits.read(data, base)
    }
}

/// One option of a tagged header: where the id and timestamp are and where the header ends.
#[derive(Debug, Clone)]
pub(crate) struct HeaderOption {
    pub id: Option<IntRead>,
    pub timestamp: Option<IntRead>,
    /// End of the header, in bits from its (aligned) start.
    pub end: u64,
}

/// A little-endian header of at most 16 bytes on a byte boundary, with a tag of at most 8
/// bits: per tag value, where its option's id and timestamp are. [`FastHeader::decode`] is then
/// one bounds check, one table load and a few shifts.
#[derive(Debug, Clone)]
pub(crate) struct TagCases {
    /// The header's alignment minus one (a multiple of 8 minus one).
    align_mask: u64,
    tag_shift: u32,
    tag_mask: u64,
    /// Per raw tag value.
    cases: Box<[TagCase]>,
}

/// What one tag value selects: `(load(byte) >> shift) & mask` reads a field from the 8 bytes
/// at `byte` (at most 8) of the header.
#[derive(Debug, Clone, Copy, Default)]
struct TagCase {
    /// End of the header in bits from its start; 0 when no option has this tag.
    end: u32,
    id: IdFrom,
    id_byte: u8,
    id_shift: u8,
    ts_byte: u8,
    ts_shift: u8,
    id_mask: u64,
    /// 0 when the option has no timestamp: the clock then stays.
    ts_mask: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum IdFrom {
    #[default]
    None,
    Tag,
    Read,
}

/// Where a little-endian field of the header is for [`TagCase`]: (byte, shift, mask).
fn case_read(r: &IntRead) -> Option<(u8, u8, u64)> {
    let (off, size) = (r.bits.off, r.bits.size);
    let byte = u8::try_from(off / 8).ok().filter(|b| *b <= 8)?;
    let shift = (off % 8) as u32;
    (r.bits.little && shift + size <= 64).then_some((byte, shift as u8, r.bits.mask()))
}

impl TagCases {
    fn compile(h: &FastHeader) -> Option<TagCases> {
        let (tag_byte, tag_shift, tag_mask) = case_read(&h.tag)?;
        if !h.align.is_multiple_of(8)
            || tag_byte != 0
            || h.max_bits > 128
            || h.option_of_tag.is_empty()
        {
            return None;
        }
        let mut cases = Vec::with_capacity(h.option_of_tag.len());
        for opt in h.option_of_tag.iter() {
            let Some(o) = h.options.get(*opt as usize) else {
                cases.push(TagCase::default());
                continue;
            };
            let mut c = TagCase {
                end: u32::try_from(o.end).ok().filter(|e| *e > 0)?,
                id: IdFrom::None,
                ..Default::default()
            };
            if h.tag_is_id {
                // Read like an id field, from the tag's place: no branch between the two.
                (c.id, c.id_shift, c.id_mask) = (IdFrom::Tag, tag_shift, tag_mask);
            }
            if let Some(r) = &o.id {
                (c.id_byte, c.id_shift, c.id_mask) = case_read(r)?;
                c.id = IdFrom::Read;
            }
            if let Some(r) = &o.timestamp {
                (c.ts_byte, c.ts_shift, c.ts_mask) = case_read(r)?;
            }
            cases.push(c);
        }
        Some(TagCases {
            align_mask: h.align as u64 - 1,
            tag_shift: tag_shift as u32,
            tag_mask,
            cases: cases.into_boxed_slice(),
        })
    }

    /// [`FastHeader::decode`] at bit `pos`; None when fewer than 16 bytes are left (or no
    /// option has the tag): the field-by-field decoding then decides.
    #[inline(always)]
    fn decode(&self, data: &[u8], pos: u64, clock: u64) -> Option<HeaderValues> {
        let (from, id, clock, end) = self.decode_case(data, pos, clock)?;
        Some(HeaderValues {
            id: (from != IdFrom::None).then_some(id),
            clock,
            end,
        })
    }

    /// [`Self::decode`] for the scan: the id resolved (`none_id` when the option has
    /// none), then the clock and the header's end.
    #[inline(always)]
    pub(crate) fn decode_id(
        &self,
        data: &[u8],
        pos: u64,
        clock: u64,
        none_id: u64,
    ) -> Option<(u64, u64, u64)> {
        let (from, id, clock, end) = self.decode_case(data, pos, clock)?;
        Some((if from == IdFrom::None { none_id } else { id }, clock, end))
    }

    /// Where the id comes from, the id as read (the tag itself is read like an id field),
    /// the new clock and the header's end.
    #[inline(always)]
    fn decode_case(&self, data: &[u8], pos: u64, clock: u64) -> Option<(IdFrom, u64, u64, u64)> {
        let base = (pos + self.align_mask) & !self.align_mask;
        let w = data.get((base / 8) as usize..)?.first_chunk::<16>()?;
        let load = |b: u8| {
            let b = usize::from(b).min(8);
            u64::from_le_bytes(w[b..b + 8].try_into().unwrap_or_default())
        };
        let tag = (load(0) >> self.tag_shift) & self.tag_mask;
        let c = self.cases.get(tag as usize).filter(|c| c.end > 0)?;
        let raw = (load(c.ts_byte) >> c.ts_shift) & c.ts_mask;
        let id = (load(c.id_byte) >> c.id_shift) & c.id_mask;
        Some((
            c.id,
            id,
            update_clock_masked(clock, raw, c.ts_mask),
            base + c.end as u64,
        ))
    }
}

/// A compiled LTTng-style event header.
#[derive(Debug, Clone)]
pub(crate) struct FastHeader {
    align: u32,
    tag: IntRead,
    /// The tag itself is the event id (LTTng's compact header: ids below 31).
    tag_is_id: bool,
    /// Option index per raw tag value (`u8::MAX`: no option) for tags of up to 8 bits.
    option_of_tag: Box<[u8]>,
    /// Wider tags (LTTng's large header: 16 bits): (first, last raw value, option), searched.
    option_ranges: Box<[(u64, u64, u8)]>,
    options: Vec<HeaderOption>,
    /// Upper bound of the header size in bits from its aligned start.
    max_bits: u64,
    /// The same header as a table of tag values, when it has that shape.
    cases: Option<TagCases>,
    /// Which of LTTng's headers it is, if one.
    lttng: Option<LttngHeader>,
}

/// Where a decoded header leaves the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeaderValues {
    pub id: Option<u64>,
    /// New clock value (cycles), wrap-around resolved.
    pub clock: u64,
    /// Bit position after the header.
    pub end: u64,
}

impl FastHeader {
    /// Compiles the header of a stream class when it has the tagged shape and no effect other
    /// than the event id and the default clock.
    pub(crate) fn compile(layout: &Layout, sl: &StreamLayout) -> Option<FastHeader> {
        let th = sl.fast_header.as_ref()?;
        let header = &layout.nodes[th.header as usize];
        let tag_node = &layout.nodes[th.tag as usize];
        let NodeKind::Int {
            size,
            signed,
            little,
            ..
        } = tag_node.kind
        else {
            return None;
        };
        if size > 16 || tag_node.clock || header.store != NO_REG {
            return None;
        }
        let tag_is_id = match tag_node.role {
            None => false,
            Some(Role::EventRecordClassId) => true,
            Some(_) => return None,
        };
        let NodeKind::Variant { ranges, .. } = &layout.nodes[th.variant as usize].kind else {
            return None;
        };
        if ranges.len() > u8::MAX as usize || th.options.len() >= u8::MAX as usize {
            return None;
        }
        // Wider tags are searched among the ranges: a table of 2^16 entries per stream class
        // would let a small metadata file claim much memory.
        let table_bits = if size <= 8 { size } else { 0 };
        let option_ranges = if size > 8 {
            let mut out = Vec::new();
            for (r, o) in ranges.iter() {
                let (lo, hi) = (r.lower.max(0), r.upper.min((1i128 << size) - 1));
                if signed {
                    // Signed wide tags are not what LTTng writes: the general path.
                    return None;
                }
                if lo > hi {
                    continue;
                }
                out.push((lo as u64, hi as u64, *o as u8));
            }
            out.into_boxed_slice()
        } else {
            Box::default()
        };
        let option_of_tag = (0..1u64 << table_bits)
            .filter(|_| table_bits > 0)
            .map(|raw| {
                let v = if signed {
                    sign_extend(raw, size) as i128
                } else {
                    raw as i128
                };
                ranges
                    .iter()
                    .find(|(r, _)| r.contains(v))
                    .map_or(u8::MAX, |(_, o)| *o as u8)
            })
            .collect();
        let mut options = Vec::with_capacity(th.options.len());
        for (snode, plan) in &th.options {
            let sn = &layout.nodes[*snode as usize];
            // The option starts at a constant offset from the header only if its alignment
            // divides the header's.
            if sn.align > header.align {
                return None;
            }
            let start = align_up(size as u64, sn.align);
            let (mut id, mut timestamp) = (None, None);
            for (m, off) in layout.members_of(*snode).iter().zip(plan.offsets.iter()) {
                let n = &layout.nodes[m.node as usize];
                let NodeKind::Int {
                    size,
                    signed,
                    little,
                    ..
                } = n.kind
                else {
                    return None;
                };
                let read = IntRead::new(start + off, size, little, signed);
                if n.store != NO_REG {
                    return None;
                }
                match (n.role, n.clock) {
                    (Some(Role::EventRecordClassId), false) => id = Some(read),
                    (None | Some(Role::DefaultClockTimestamp), true) => timestamp = Some(read),
                    (None, false) => {}
                    _ => return None,
                }
            }
            options.push(HeaderOption {
                id,
                timestamp,
                end: start + plan.size_bits,
            });
        }
        if header.align > 64 {
            return None;
        }
        let max_bits = options.iter().map(|o| o.end).max().unwrap_or(size as u64);
        let mut h = FastHeader {
            align: header.align,
            tag: IntRead::new(0, size, little, signed),
            tag_is_id,
            option_of_tag,
            option_ranges,
            options,
            max_bits,
            cases: None,
            lttng: None,
        };
        h.cases = TagCases::compile(&h);
        h.lttng = LttngHeader::of(&h);
        Some(h)
    }

    /// Decodes the header at bit `pos` of `data`, `clock` being the current clock. None when
    /// the general decoder must handle it (too short, no option for the tag).
    #[inline(always)]
    pub fn decode(&self, data: &[u8], pos: u64, clock: u64) -> Option<HeaderValues> {
        if let Some(c) = &self.cases {
            if let Some(h) = c.decode(data, pos, clock) {
                return Some(h);
            }
        }
        self.decode_by_bits(data, align_up(pos, self.align), clock)
    }

    /// The option a tag value selects (the first matching range, as the general decoder
    /// picks it).
    #[inline(always)]
    fn option_of(&self, tag: u64) -> Option<u8> {
        if self.option_ranges.is_empty() {
            self.option_of_tag.get(tag as usize).copied()
        } else {
            self.option_ranges
                .iter()
                .find(|(lo, hi, _)| (*lo..=*hi).contains(&tag))
                .map(|r| r.2)
        }
    }

    /// Which of LTTng's headers this is, if one.
    #[inline(always)]
    pub(crate) fn lttng(&self) -> Option<LttngHeader> {
        self.lttng
    }

    /// The table form of the header, when it has one.
    #[inline(always)]
    pub(crate) fn tag_cases(&self) -> Option<&TagCases> {
        self.cases.as_ref()
    }

    /// [`TagCases::decode_id`] for any header: out of line, for headers without a table
    /// and for the end of the data.
    #[inline(never)]
    pub(crate) fn decode_id(
        &self,
        data: &[u8],
        pos: u64,
        clock: u64,
        none_id: u64,
    ) -> Option<(u64, u64, u64)> {
        let h = self.decode(data, pos, clock)?;
        Some((h.id.unwrap_or(none_id), h.clock, h.end))
    }

    /// [`Self::decode`] field by field, at the end of the data or for other headers.
    #[inline]
    fn decode_by_bits(&self, data: &[u8], base: u64, clock: u64) -> Option<HeaderValues> {
        if base + self.max_bits > data.len() as u64 * 8 {
            return None;
        }
        let tag = self.tag.raw(data, base)?;
        let opt = self.option_of(tag)?;
        let o = self.options.get(opt as usize)?;
        let mut id = if self.tag_is_id { Some(tag) } else { None };
        if let Some(r) = &o.id {
            id = Some(r.raw(data, base)?);
        }
        let clock = match &o.timestamp {
            Some(r) => update_clock(clock, r.raw(data, base)?, r.bits.size),
            None => clock,
        };
        Some(HeaderValues {
            id,
            clock,
            end: base + o.end,
        })
    }
}

/// LTTng's two event headers (a 5-bit or 16-bit tag that is the id, its largest value
/// selecting an extended option with a 32-bit id and a 64-bit timestamp), recognised so
/// that the scan decodes them with constant shifts and no table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LttngHeader {
    /// 5-bit id, 27-bit timestamp.
    Compact,
    /// 16-bit id, 32-bit timestamp.
    Large,
}

impl LttngHeader {
    /// The kind of `h`, when it decodes exactly as one of them (little-endian).
    fn of(h: &FastHeader) -> Option<LttngHeader> {
        let t = &h.tag;
        if h.align != 8 || !h.tag_is_id || t.bits.off != 0 || !t.bits.little || t.signed {
            return None;
        }
        let (kind, tag_bits, ts_bits) = match t.bits.size {
            5 => (LttngHeader::Compact, 5, 27),
            16 => (LttngHeader::Large, 16, 32),
            _ => return None,
        };
        let ext = (1u64 << tag_bits) - 1;
        let (c, e) = (h.option_of(0)?, h.option_of(ext)?);
        if !(0..ext).all(|tag| h.option_of(tag) == Some(c)) {
            return None;
        }
        let (oc, oe) = (h.options.get(c as usize)?, h.options.get(e as usize)?);
        let at = |r: &Option<IntRead>, off: u64, size: u32| {
            r.is_some_and(|r| r.bits.off == off && r.bits.size == size && r.bits.little)
        };
        // The compact option's timestamp packs after the tag; the extended option's fields
        // are byte-aligned.
        let id_at = align_up(tag_bits, 8);
        let ok = oc.id.is_none()
            && at(&oc.timestamp, tag_bits, ts_bits)
            && oc.end == tag_bits + ts_bits as u64
            && at(&oe.id, id_at, 32)
            && at(&oe.timestamp, id_at + 32, 64)
            && oe.end == id_at + 96;
        ok.then_some(kind)
    }

    /// [`TagCases::decode_id`] for this header.
    #[cfg(test)]
    pub(crate) fn decode_id(self, data: &[u8], pos: u64, clock: u64) -> Option<(u64, u64, u64)> {
        match self {
            LttngHeader::Compact => Self::decode::<false>(data, pos, clock),
            LttngHeader::Large => Self::decode::<true>(data, pos, clock),
        }
    }

    /// [`Self::decode_id`] of the large header (`LARGE`) or the compact one, its sizes
    /// constants of the scan loop.
    #[inline(always)]
    pub(crate) fn decode<const LARGE: bool>(
        data: &[u8],
        pos: u64,
        clock: u64,
    ) -> Option<(u64, u64, u64)> {
        let base = (pos + 7) & !7;
        let w = data.get((base / 8) as usize..)?.first_chunk::<16>()?;
        let lo = u64::from_le_bytes(w[..8].try_into().unwrap_or_default());
        let (tag_bits, ts_bits) = if LARGE { (16, 32) } else { (5, 27) };
        let ext = (1u64 << tag_bits) - 1;
        let tag = lo & ext;
        if tag < ext {
            let mask = (1u64 << ts_bits) - 1;
            let raw = (lo >> tag_bits) & mask;
            return Some((
                tag,
                update_clock_masked(clock, raw, mask),
                base + tag_bits + ts_bits,
            ));
        }
        let id_byte = align_up(tag_bits, 8) as usize / 8;
        let ts: [u8; 8] = w[id_byte + 4..id_byte + 12].try_into().unwrap_or_default();
        Some((
            (lo >> (id_byte * 8)) & 0xffff_ffff,
            u64::from_le_bytes(ts),
            base + id_byte as u64 * 8 + 96,
        ))
    }
}

/// [`update_clock`] with the value's mask instead of its size (0: no value, the clock stays).
#[inline(always)]
pub(crate) fn update_clock_masked(clock: u64, raw: u64, mask: u64) -> u64 {
    let new = (clock & !mask) | raw;
    // For a 64-bit value, `mask + 1` wraps to 0: the value is the clock.
    if raw < (clock & mask) {
        new.wrapping_add(mask.wrapping_add(1))
    } else {
        new
    }
}

/// Updates a clock with a `size`-bit value, assuming at most one wrap since the last update
/// (CTF 1.8 §8).
#[inline]
pub(crate) fn update_clock(clock: u64, raw: u64, size: u32) -> u64 {
    if size >= 64 {
        return raw;
    }
    let mask = (1u64 << size) - 1;
    let mut new = (clock & !mask) | raw;
    if raw < (clock & mask) {
        new = new.wrapping_add(1u64 << size);
    }
    new
}

/// One scope of a fixed event body: a structure read on access from its start.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FixedScope {
    /// Which scope: 1 common context, 2 specific context, 3 payload.
    pub which: u8,
    pub node: NodeId,
    pub align: u32,
    pub size_bits: u64,
    /// Its members' reads: `FixedBody::words[first_read..first_read + reads]`.
    first_read: u32,
    reads: u32,
    /// Bytes from the scope's start that its word reads may touch: when that many bytes are
    /// there, every word read of the scope is in bounds.
    span_bytes: u64,
}

/// The scopes of a [`FixedBody`], held in place: there are at most three (common context,
/// specific context, payload), and a body is made for every event class of a trace.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FixedScopes {
    items: [FixedScope; 3],
    len: u8,
}

impl FixedScopes {
    fn push(&mut self, s: FixedScope) {
        self.items[self.len as usize] = s;
        self.len += 1;
    }
}

impl std::ops::Deref for FixedScopes {
    type Target = [FixedScope];

    #[inline]
    fn deref(&self) -> &[FixedScope] {
        &self.items[..self.len as usize]
    }
}

impl<'a> IntoIterator for &'a FixedScopes {
    type Item = &'a FixedScope;
    type IntoIter = std::slice::Iter<'a, FixedScope>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// An event body (common context, specific context, payload) made only of fixed-layout
/// structures without effects: its scopes are placed, not decoded.
#[derive(Debug, Clone, Default)]
pub(crate) struct FixedBody {
    pub scopes: FixedScopes,
    /// How to read every member of every scope from its scope's start, scope after scope.
    pub reads: Box<[PlanRead]>,
    /// The same members as [`WordRead`]s, for byte-aligned scope starts.
    words: Box<[WordRead]>,
}

/// A member read as one 8-byte load and two shifts from a byte-aligned structure start: what
/// [`PlanRead::fold`] computes, with everything but the load worked out at compile time.
#[derive(Debug, Clone, Copy)]
struct WordRead {
    /// Byte offset of the loaded word from the structure start.
    byte: u32,
    /// `value = (word << left) >> right`, the right shift arithmetic for signed integers.
    left: u8,
    right: u8,
    how: WordHow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordHow {
    Little,
    LittleSigned,
    Big,
    BigSigned,
    /// A text of this many bytes: folded as its byte offset xor its length.
    Text(u32),
    /// Anything else (floats, fields not within one 8-byte load): [`PlanRead::fold`] of the
    /// body's read whose index is in `byte`.
    Plan,
}

impl WordRead {
    const PLAN: WordRead = WordRead {
        byte: 0,
        left: 0,
        right: 0,
        how: WordHow::Plan,
    };

    /// The word read of `r`, the `index`-th read of its body.
    fn of(r: &PlanRead, index: usize) -> WordRead {
        let (off, size) = (r.bits.off, r.bits.size);
        let bit = (off % 8) as u32;
        let plan = WordRead {
            byte: index as u32,
            left: 0,
            right: 0,
            how: WordHow::Plan,
        };
        let Ok(byte) = u32::try_from(off / 8) else {
            return plan;
        };
        if r.kind == ReadKind::Text {
            return if bit == 0 {
                WordRead {
                    byte,
                    how: WordHow::Text(r.text_len),
                    ..plan
                }
            } else {
                plan
            };
        }
        if r.kind == ReadKind::Float || bit + size > 64 {
            return plan;
        }
        let signed = r.kind == ReadKind::SInt;
        // A whole byte reads the same in either byte order: as little-endian, the cheaper
        // (and the scan's integer lists take those).
        let little = r.bits.little || (bit == 0 && size == 8);
        // Little-endian fields start `bit` bits into the word's low end, big-endian ones
        // `bit` bits into its high end.
        let left = if little { 64 - bit - size } else { bit };
        let how = match (little, signed) {
            (true, false) => WordHow::Little,
            (true, true) => WordHow::LittleSigned,
            (false, false) => WordHow::Big,
            (false, true) => WordHow::BigSigned,
        };
        WordRead {
            byte,
            left: left as u8,
            right: (64 - size) as u8,
            how,
        }
    }

    /// The integer an integer read cuts out of `word`, the 8 bytes from its `byte` loaded
    /// little-endian (signed ones sign-extended); None for texts and bit-by-bit reads.
    #[inline(always)]
    fn int_of(&self, word: u64) -> Option<u64> {
        Some(match self.how {
            WordHow::Little => (word << self.left) >> self.right,
            WordHow::LittleSigned => (((word << self.left) as i64) >> self.right) as u64,
            WordHow::Big => (word.swap_bytes() << self.left) >> self.right,
            WordHow::BigSigned => (((word.swap_bytes() << self.left) as i64) >> self.right) as u64,
            WordHow::Text(_) | WordHow::Plan => return None,
        })
    }

    /// Bytes from the structure start this read may touch.
    fn span(&self) -> u64 {
        match self.how {
            WordHow::Text(n) => self.byte as u64 + n as u64,
            WordHow::Plan => 0,
            _ => self.byte as u64 + 8,
        }
    }
}

impl FixedBody {
    /// The body of event class `common`/`context`/`payload`, when every present scope is a
    /// fixed-plan structure.
    pub(crate) fn compile(layout: &Layout, scopes: [Option<NodeId>; 3]) -> Option<FixedBody> {
        // Sized first: the lists are made for every event class of a trace (1,181 in a real
        // kernel trace's metadata), and boxed, which would shrink a larger list again.
        let mut total = 0;
        for node in scopes.iter().flatten() {
            let n = &layout.nodes[*node as usize];
            if n.effects {
                return None;
            }
            total += n.plan.as_ref()?.reads.len();
        }
        let mut out = FixedScopes::default();
        let mut reads = Vec::with_capacity(total);
        let mut words = Vec::with_capacity(total);
        for (i, s) in scopes.iter().enumerate() {
            let Some(node) = *s else { continue };
            let n = &layout.nodes[node as usize];
            let plan = n.plan.as_ref()?;
            reads.extend_from_slice(&plan.reads);
            let first_read = words.len() as u32;
            let at = words.len();
            words.extend(
                plan.reads
                    .iter()
                    .enumerate()
                    .map(|(i, r)| WordRead::of(r, at + i)),
            );
            let span_bytes = words[first_read as usize..]
                .iter()
                .map(WordRead::span)
                .max()
                .unwrap_or(0);
            out.push(FixedScope {
                which: i as u8 + 1,
                node,
                align: n.align,
                size_bits: plan.size_bits,
                first_read,
                reads: plan.reads.len() as u32,
                span_bytes,
            });
        }
        Some(FixedBody {
            scopes: out,
            reads: reads.into_boxed_slice(),
            words: words.into_boxed_slice(),
        })
    }

    /// The position after the body placed at bit `pos`: what [`Self::place`] returns,
    /// without recording the scopes.
    #[inline]
    pub(crate) fn end(&self, pos: u64) -> u64 {
        self.scopes
            .iter()
            .fold(pos, |p, s| align_up(p, s.align) + s.size_bits)
    }

    /// Places the scopes from bit `pos` (after the header): one slot each, recorded as the
    /// event's scope `which` in `at`. Returns the position after the body.
    #[inline(always)]
    pub(crate) fn place(
        &self,
        mut pos: u64,
        slots: &mut Vec<crate::decode::Slot>,
        at: &mut [Option<usize>; 4],
    ) -> u64 {
        for s in &self.scopes {
            pos = align_up(pos, s.align);
            at[s.which as usize] = Some(slots.len());
            slots.push(crate::decode::Slot {
                node: s.node,
                aux: 0,
                val: pos,
            });
            pos += s.size_bits;
        }
        pos
    }

    /// Folds every member of scope `i` starting at bit `base` of `data`, as
    /// [`PlanRead::fold`] would one by one.
    #[inline]
    pub fn fold_scope(&self, i: usize, data: &[u8], base: u64) -> u64 {
        let s = &self.scopes[i];
        let first = s.first_read as usize;
        let words = &self.words[first..first + s.reads as usize];
        let start = (base / 8) as usize;
        let whole = data
            .get(start..)
            .is_some_and(|b| b.len() as u64 >= s.span_bytes);
        if !base.is_multiple_of(8) || !whole {
            return self.fold_scope_by_plan(first, words.len(), data, base);
        }
        // `byte` holds the read's index for plan reads.
        fold_words(words, data, start, |i| self.fold_read(i, data, base))
    }

    /// Places and folds the whole body from bit `pos` (after the header): what
    /// [`Self::place`] then [`Self::fold_scope`] on each scope give, in one pass. Returns the
    /// fold and the position after the body.
    #[inline(always)]
    pub(crate) fn place_and_fold(&self, mut pos: u64, data: &[u8]) -> (u64, u64) {
        let mut acc = 0u64;
        for i in 0..self.scopes.len() {
            let s = &self.scopes[i];
            pos = align_up(pos, s.align);
            acc = acc.wrapping_add(self.fold_scope(i, data, pos));
            pos += s.size_bits;
        }
        (acc, pos)
    }

    /// Reads `count` members from `first` one by one (unaligned scope, or near the end of
    /// the data): kept out of line so that the word loop stays small.
    #[inline(never)]
    fn fold_scope_by_plan(&self, first: usize, count: usize, data: &[u8], base: u64) -> u64 {
        self.reads[first..first + count]
            .iter()
            .fold(0u64, |acc, r| acc.wrapping_add(r.fold(data, base)))
    }

    #[inline(never)]
    fn fold_read(&self, index: usize, data: &[u8], base: u64) -> u64 {
        self.reads[index].fold(data, base)
    }
}

/// An integer of a one-scope fixed body or of a run: `((word << left) as i64 >> right) &
/// keep` of the 8 bytes at `byte` is what the [`WordRead`] gives, without a dispatch on
/// its kind (`keep`, all ones for signed integers, cuts the sign extension off unsigned
/// ones). 16 bytes: a list of them is indexed by a shift, not a multiplication.
#[derive(Debug, Clone, Copy)]
struct IntWord {
    keep: u64,
    byte: u8,
    left: u8,
    right: u8,
}

/// Bytes a [`OneBody`]'s reads may touch: the largest byte offset of an [`IntWord`] and
/// its 8 bytes, so that reads in a window of this size need no bounds check.
const WINDOW: usize = 255 + 8;

impl IntWord {
    /// The 8 bytes from `byte` of a window, little-endian (in the window whatever the byte:
    /// no bounds check).
    #[inline(always)]
    fn word_in(&self, win: &[u8; WINDOW]) -> u64 {
        let at = usize::from(self.byte);
        let b: [u8; 8] = win[at..at + 8].try_into().unwrap_or_default();
        u64::from_le_bytes(b)
    }

    /// The integer cut out of `word` (the 8 bytes from `byte`, in the field's byte order).
    #[inline(always)]
    fn value(&self, word: u64) -> u64 {
        ((((word << self.left) as i64) >> self.right) as u64) & self.keep
    }

    /// The [`WordRead`] of a big-endian integer read (`w` made by [`Self::of`] from it).
    /// A 64-bit one keeps all its bits either way, and reads the same either way.
    fn big_word(&self) -> WordRead {
        WordRead {
            byte: u32::from(self.byte),
            left: self.left,
            right: self.right,
            how: match self.keep {
                u64::MAX => WordHow::BigSigned,
                _ => WordHow::Big,
            },
        }
    }

    /// The same read as `w`, an integer one (a big-endian one of the byte-swapped word).
    fn of(w: &WordRead) -> IntWord {
        IntWord {
            byte: w.byte as u8,
            left: w.left,
            right: w.right,
            keep: match w.how {
                WordHow::LittleSigned | WordHow::BigSigned => u64::MAX,
                _ => u64::MAX >> w.right,
            },
        }
    }
}

/// What [`crate::StreamReader::scan`] reads the events of a stream class with: the class of
/// an id in one table load, and how to fold its body without making slots.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanTable {
    /// The class of each event class id below the table's length; None for an unknown id
    /// or a class left to the general path. Held here, not by index: one load less per
    /// event.
    by_id: Box<[Option<ScanClass>]>,
    /// The reads of the runs of [`Self::steps`].
    runs: Box<[RunReads]>,
    /// The bodies of [`ScanShape::Steps`] classes, each ending with [`Step::End`].
    steps: Box<[Step]>,
    variants: Box<[TagOptions]>,
    /// Element reads of [`Step::Scalars`].
    reads: Box<[PlanRead]>,
    /// Per id below the length of `by_id`: the size in bits of the body of a
    /// [`ScanShape::One`] class aligned on at most a byte, `u64::MAX` for any other id. For
    /// those classes a body after a header ending on a byte ends that many bits on: one
    /// load finds where the next event starts.
    one_sizes: Box<[u64]>,
    /// Per id below 31 (those an LTTng compact header holds; 31 announces an extended
    /// header): the bytes of an event with a compact header (4) and a body of `one_sizes`
    /// bits, when those are whole bytes; 0 for any other id.
    compact_bytes: [u32; 32],
    /// The id of events whose header has none.
    pub(crate) default_id: u64,
}

/// One event class in a [`ScanTable`].
#[derive(Debug, Clone)]
pub(crate) struct ScanClass {
    /// Position of the class in its stream class.
    pub ev_idx: usize,
    pub shape: ScanShape,
    /// The body of a [`ScanShape::One`] class; for the others, one that never folds.
    pub one: OneBody,
    /// For a [`ScanShape::Steps`] class whose steps are a string between runs of word
    /// reads, the same body without a step loop.
    pub text: Option<Box<TextBody>>,
}

/// A body of one null-terminated string between two runs of word reads that store nothing
/// (LTTng's `irq_handler_entry`, `openat`): each run folded as a [`OneBody`], the string
/// found by [`nul_at`]. The step loop costs several times as much for these events.
#[derive(Debug, Clone)]
pub(crate) struct TextBody {
    head: Option<OneBody>,
    /// The string's alignment minus one, and its complement.
    str_add: u64,
    str_keep: u64,
    tail: Option<OneBody>,
}

impl TextBody {
    /// The body of the steps from `entry`, when they are an optional run, a string, an
    /// optional run and the end.
    fn of(c: &StepCompiler, entry: u32) -> Option<TextBody> {
        let steps = c.steps.get(entry as usize..)?;
        let run = |s: &Step| match *s {
            Step::Run {
                align,
                span,
                size_bits,
                reads,
            } => {
                let r = c.runs.get(reads as usize)?;
                OneBody::of_run(align, span, size_bits, &r.le, &r.be, &r.others)
            }
            _ => None,
        };
        let mut i = 0;
        let head = run(steps.first()?);
        i += head.is_some() as usize;
        let Step::CString { align } = *steps.get(i)? else {
            return None;
        };
        i += 1;
        let tail = run(steps.get(i)?);
        i += tail.is_some() as usize;
        if !matches!(steps.get(i)?, Step::End) {
            return None;
        }
        let align = u64::from(align.max(1));
        Some(TextBody {
            head,
            str_add: align - 1,
            str_keep: !(align - 1),
            tail,
        })
    }

    /// What [`ScanTable::fold_steps`] gives for these steps from bit `at` of `data`; None
    /// also where a run's [`WINDOW`] is not in the data (`fold_steps` then decides).
    #[inline(always)]
    pub(crate) fn fold(&self, data: &[u8], at: u64) -> Option<(u64, u64)> {
        let (mut acc, mut pos) = (0u64, at);
        if let Some(h) = &self.head {
            (acc, pos) = h.fold(data, pos)?;
        }
        let (f, end) = fold_cstring(data, (pos + self.str_add) & self.str_keep)?;
        acc = acc.wrapping_add(f);
        pos = end;
        if let Some(t) = &self.tail {
            let (f, end) = t.fold(data, pos)?;
            acc = acc.wrapping_add(f);
            pos = end;
        }
        Some((acc, pos))
    }
}

/// A fixed body of one scope as the scan folds it: its little-endian integers, its texts
/// and its other reads, each a loop without a dispatch on the kind of read.
#[derive(Debug, Clone)]
pub(crate) struct OneBody {
    /// The scope's alignment minus one, and its complement.
    align_add: u64,
    align_keep: u64,
    size_bits: u64,
    ints: Box<[IntWord]>,
    /// Byte offset and length of each text, folded as [`WordHow::Text`] reads are.
    texts: Box<[(u32, u32)]>,
    /// The other reads (big-endian integers).
    words: Box<[WordRead]>,
    /// Whether `texts` or `words` has any: one test for the bodies (most) without.
    more: bool,
    /// `ints` as [`Lane`]s when they all are whole bytes (and the body is aligned on at
    /// most a byte): [`Self::fold_each`] then folds them one integer at a time for all
    /// the bodies.
    lanes: Option<BodyLanes>,
}

/// The integers of a [`OneBody`] as [`Lane`]s at byte offsets from its start, and the
/// byte after the last byte any of its reads touches.
#[derive(Debug, Clone)]
struct BodyLanes {
    lanes: Box<[(Lane, u32)]>,
    end: u32,
}

/// A little-endian integer of whole bytes on a byte: its width and signedness. Its value
/// is then one load, as [`IntWord::value`] would cut it out of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
}

impl Lane {
    /// The lane of `w`, when it reads an integer of whole bytes.
    fn of(w: &IntWord) -> Option<Lane> {
        if w.left != w.right {
            return None;
        }
        let signed = w.keep == u64::MAX;
        Some(match (64 - u32::from(w.left), signed) {
            (8, false) => Lane::U8,
            (8, true) => Lane::I8,
            (16, false) => Lane::U16,
            (16, true) => Lane::I16,
            (32, false) => Lane::U32,
            (32, true) => Lane::I32,
            (64, _) => Lane::U64,
            _ => return None,
        })
    }

    /// The sum of the values of this lane's integer at byte `at` of `data` for each `at`
    /// of `ats` (wrapping; 0 for an integer past the end of `data`).
    #[inline(always)]
    fn sum(self, data: &[u8], ats: &[u32]) -> u64 {
        fn sum<const N: usize>(data: &[u8], ats: &[u32], value: impl Fn([u8; N]) -> u64) -> u64 {
            let mut acc = 0u64;
            for &at in ats {
                let at = at as usize;
                let b = data
                    .get(at..at + N)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([0; N]);
                acc = acc.wrapping_add(value(b));
            }
            acc
        }
        match self {
            Lane::U8 => sum(data, ats, |b: [u8; 1]| u64::from(b[0])),
            Lane::I8 => sum(data, ats, |b: [u8; 1]| b[0] as i8 as u64),
            Lane::U16 => sum(data, ats, |b| u64::from(u16::from_le_bytes(b))),
            Lane::I16 => sum(data, ats, |b| i16::from_le_bytes(b) as u64),
            Lane::U32 => sum(data, ats, |b| u64::from(u32::from_le_bytes(b))),
            Lane::I32 => sum(data, ats, |b| i32::from_le_bytes(b) as u64),
            Lane::U64 => sum(data, ats, u64::from_le_bytes),
        }
    }

    /// The integer's width in bytes.
    fn bytes(self) -> u32 {
        match self {
            Lane::U8 | Lane::I8 => 1,
            Lane::U16 | Lane::I16 => 2,
            Lane::U32 | Lane::I32 => 4,
            Lane::U64 => 8,
        }
    }
}

impl Default for OneBody {
    fn default() -> OneBody {
        OneBody {
            // Placed 2^60 bytes on, past any data: never folds.
            align_add: 1 << 63,
            align_keep: !0,
            size_bits: 0,
            ints: Box::default(),
            texts: Box::default(),
            words: Box::default(),
            more: false,
            lanes: None,
        }
    }
}

impl OneBody {
    /// The body of `b`, when its scopes lie at constant whole-byte offsets from the first
    /// one's start (LTTng's event context then payload, each aligned on at most a byte) and
    /// its reads are all word reads within [`WINDOW`] bytes of that start: one scope as the
    /// scan sees it, its reads those of all the scopes.
    fn of(b: &FixedBody) -> Option<OneBody> {
        let first = b.scopes.first()?;
        // The first scope starts on a byte (`Self::window`), so on a multiple of the larger
        // of its alignment and 8 bits: a later scope aligned on at most that starts at a
        // constant offset from it.
        let base_align = first.align.max(8);
        let mut offsets = [0u32; 3];
        let (mut rel, mut span) = (0u64, 0u64);
        for (i, sc) in b.scopes.iter().enumerate() {
            if sc.align > base_align {
                return None;
            }
            let at = align_up(rel, sc.align);
            if !at.is_multiple_of(8) {
                return None;
            }
            offsets[i] = u32::try_from(at / 8).ok()?;
            span = span.max(at / 8 + sc.span_bytes);
            rel = at + sc.size_bits;
        }
        // Two exactly sized lists (this runs for every event class of a trace).
        let is_int = |w: &WordRead| matches!(w.how, WordHow::Little | WordHow::LittleSigned);
        let n_ints = b.words.iter().filter(|w| is_int(w)).count();
        let mut ints: Vec<IntWord> = Vec::with_capacity(n_ints);
        let mut others: Vec<WordRead> = Vec::with_capacity(b.words.len() - n_ints);
        for (sc, off) in b.scopes.iter().zip(offsets) {
            let first = sc.first_read as usize;
            for w in &b.words[first..first + sc.reads as usize] {
                if w.how == WordHow::Plan {
                    // Plan reads name their read by its index in the body.
                    return None;
                }
                let w = WordRead {
                    byte: w.byte + off,
                    ..*w
                };
                if is_int(&w) {
                    ints.push(IntWord::of(&w));
                } else {
                    others.push(w);
                }
            }
        }
        let span = u32::try_from(span).unwrap_or(u32::MAX);
        OneBody::of_run(first.align, span, rel, &ints, &[], &others)
    }

    /// The run of a [`Step::Run`] as a body, when its reads are all within [`WINDOW`] bytes
    /// of its start.
    fn of_run(
        align: u32,
        span: u32,
        size_bits: u64,
        ints: &[IntWord],
        big: &[IntWord],
        others: &[WordRead],
    ) -> Option<OneBody> {
        if span as usize > WINDOW || others.iter().any(|w| w.how == WordHow::Plan) {
            return None;
        }
        // Sized exactly: made for every event class, then boxed (which shrinks a larger list).
        let n_texts = others
            .iter()
            .filter(|w| matches!(w.how, WordHow::Text(_)))
            .count();
        let mut words: Vec<WordRead> = Vec::with_capacity(big.len() + others.len() - n_texts);
        words.extend(big.iter().map(IntWord::big_word));
        let mut texts = Vec::with_capacity(n_texts);
        for w in others {
            match w.how {
                WordHow::Text(n) => texts.push((w.byte, n)),
                _ => words.push(*w),
            }
        }
        let align = u64::from(align.max(1));
        let lanes = ints
            .iter()
            .map(|w| Some((Lane::of(w)?, u32::from(w.byte))))
            .collect::<Option<Box<[_]>>>()
            .filter(|_| align <= 8)
            .map(|lanes| {
                // Word reads (big-endian ones) load 8 bytes; texts load none.
                let end = lanes
                    .iter()
                    .map(|(l, b)| b + l.bytes())
                    .chain(words.iter().map(|w| w.byte + 8))
                    .max()
                    .unwrap_or(0);
                BodyLanes { lanes, end }
            });
        Some(OneBody {
            align_add: align - 1,
            align_keep: !(align - 1),
            size_bits,
            lanes,
            ints: ints.into(),
            more: !texts.is_empty() || !words.is_empty(),
            texts: texts.into_boxed_slice(),
            words: words.into_boxed_slice(),
        })
    }

    /// The position after the scope placed after bit `at` (for a [`ScanShape::One`] class).
    #[inline(always)]
    pub(crate) fn end(&self, at: u64) -> u64 {
        ((at + self.align_add) & self.align_keep) + self.size_bits
    }

    /// Where the scope placed after bit `at` starts (bit and byte), and the [`WINDOW`]
    /// bytes of `data` from there; None when it does not start on a byte or fewer than
    /// [`WINDOW`] bytes are left.
    #[inline(always)]
    fn window<'d>(&self, data: &'d [u8], at: u64) -> Option<(u64, usize, &'d [u8; WINDOW])> {
        let base = (at + self.align_add) & self.align_keep;
        if !base.is_multiple_of(8) {
            return None;
        }
        let start = (base / 8) as usize;
        Some((base, start, data.get(start..)?.first_chunk::<WINDOW>()?))
    }

    /// The fold of the scope's texts and big-endian integers, the scope at byte `start`.
    #[inline(always)]
    fn fold_more(&self, data: &[u8], start: usize) -> u64 {
        let mut acc = 0u64;
        for (byte, len) in self.texts.iter() {
            acc = acc.wrapping_add((start + *byte as usize) as u64 ^ *len as u64);
        }
        // No plan reads in these bodies.
        acc.wrapping_add(fold_words(&self.words, data, start, |_| 0))
    }

    /// Folds the scope placed after bit `at` of `data` as [`FixedBody::fold_scope`] does,
    /// and gives the position after it; None when it does not start on a byte or when
    /// fewer than [`WINDOW`] bytes are left from there (and for the classes of other
    /// shapes).
    #[inline(always)]
    pub(crate) fn fold(&self, data: &[u8], at: u64) -> Option<(u64, u64)> {
        let (base, start, win) = self.window(data, at)?;
        let mut acc = 0u64;
        for w in self.ints.iter() {
            acc = acc.wrapping_add(w.value(w.word_in(win)));
        }
        if self.more {
            acc = acc.wrapping_add(self.fold_more(data, start));
        }
        Some((acc, base + self.size_bits))
    }

    /// The sum of [`Self::fold`]'s folds of the scopes placed after each byte of `ats`;
    /// `other` folds those it does not. Bodies of [`Lane`]s whose reads all lie in `data`
    /// (LTTng's fixed payloads, but for the last events of a packet) are folded integer by
    /// integer, one load each ([`Self::fold_lanes`]): a third of the instructions of
    /// cutting each out of a word. Otherwise, for the usual numbers of integers the loop
    /// over them is unrolled, their reads held for all the scopes.
    pub(crate) fn fold_each(&self, data: &[u8], ats: &[u32], other: impl FnMut(u64) -> u64) -> u64 {
        // A loop per integer costs more than it saves for a few bodies (those of a small
        // packet's classes).
        if let Some(BodyLanes { lanes, end }) = self.lanes.as_ref().filter(|_| ats.len() >= 4) {
            // Bodies aligned on a byte start at their byte of `ats`.
            let last = ats.iter().copied().max().unwrap_or(0) as usize;
            if last + *end as usize <= data.len() {
                return self.fold_lanes(lanes, data, ats);
            }
        }
        match self.ints.len() {
            1 => self.fold_n::<1>(data, ats, other),
            2 => self.fold_n::<2>(data, ats, other),
            3 => self.fold_n::<3>(data, ats, other),
            4 => self.fold_n::<4>(data, ats, other),
            5 => self.fold_n::<5>(data, ats, other),
            6 => self.fold_n::<6>(data, ats, other),
            7 => self.fold_n::<7>(data, ats, other),
            8 => self.fold_n::<8>(data, ats, other),
            _ => self.fold_n::<0>(data, ats, other),
        }
    }

    /// [`Self::fold_each`] of bodies whose integers are all [`Lane`]s and whose reads all
    /// lie in `data`: integer by integer, each a loop over the bodies that loads it.
    #[inline(never)]
    fn fold_lanes(&self, lanes: &[(Lane, u32)], data: &[u8], ats: &[u32]) -> u64 {
        let mut acc = 0u64;
        for &(lane, byte) in lanes {
            acc = acc.wrapping_add(lane.sum(data.get(byte as usize..).unwrap_or(&[]), ats));
        }
        for &(byte, len) in self.texts.iter() {
            for &at in ats {
                acc = acc.wrapping_add((u64::from(at) + u64::from(byte)) ^ u64::from(len));
            }
        }
        if !self.words.is_empty() {
            for &at in ats {
                acc = acc.wrapping_add(fold_words(&self.words, data, at as usize, |_| 0));
            }
        }
        acc
    }

    /// [`Self::fold_each`] for bodies of `N` integers (0: any number).
    #[inline(always)]
    fn fold_n<const N: usize>(
        &self,
        data: &[u8],
        ats: &[u32],
        mut other: impl FnMut(u64) -> u64,
    ) -> u64 {
        let fixed: Option<[IntWord; N]> = self.ints.get(..N).and_then(|w| w.try_into().ok());
        let mut acc = 0u64;
        for &byte in ats {
            let at = u64::from(byte) * 8;
            let Some((_, start, win)) = self.window(data, at) else {
                acc = acc.wrapping_add(other(at));
                continue;
            };
            match &fixed {
                Some(ws) if N > 0 => {
                    for w in ws {
                        acc = acc.wrapping_add(w.value(w.word_in(win)));
                    }
                }
                _ => {
                    for w in self.ints.iter() {
                        acc = acc.wrapping_add(w.value(w.word_in(win)));
                    }
                }
            }
            if self.more {
                acc = acc.wrapping_add(self.fold_more(data, start));
            }
        }
        acc
    }
}

/// How [`crate::StreamReader::scan`] folds a body.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ScanShape {
    /// A fixed body whose scopes lie at constant offsets from its start (LTTng's: a
    /// payload, after an event context if any), folded as one scope: [`ScanClass::one`].
    One,
    /// Another fixed body (no scope, or scopes apart by a padding that depends on where
    /// the body starts): [`FixedBody::place_and_fold`].
    Fixed,
    /// A body compiled into steps from [`ScanTable::steps`]`[entry]`:
    /// [`ScanTable::fold_steps`].
    Steps { entry: u32 },
    /// Any other body whose fields move no clock and carry no role:
    /// [`crate::decode::Decoder::fold`], scope by scope.
    Fold,
}

impl ScanTable {
    /// The table of a stream class whose events the scan may read (those of ids the dense
    /// part of [`crate::layout::IdMap`] holds); None without a compiled header.
    pub(crate) fn compile(layout: &Layout, sl: &StreamLayout) -> Option<ScanTable> {
        sl.compiled_header.as_ref()?;
        let mut t = ScanTable {
            default_id: match sl.events.len() {
                1 => sl.events.id_at(0),
                _ => 0,
            },
            compact_bytes: [0; 32],
            ..Default::default()
        };
        let mut c = StepCompiler {
            steps: Vec::new(),
            words: Vec::new(),
            runs: Vec::new(),
            reads: Vec::new(),
            walk: Walk::new(layout),
            stores: Vec::new(),
        };
        let max_id = sl
            .events
            .iter()
            .map(|(id, _)| id)
            .filter(|id| *id < 1 << 16)
            .max();
        let ids = max_id.map_or(0, |m| m + 1);
        // One entry per id up to the largest, boxed at the end: sized exactly.
        let mut by_id = Vec::with_capacity(ids as usize);
        for id in 0..ids {
            let class = sl.events.index_of(id).and_then(|ev_idx| {
                let el = sl.events.at(ev_idx);
                let mut one = OneBody::default();
                let shape = match el.fixed_body.as_ref().map(|b| (b, OneBody::of(b))) {
                    // Plan reads name their read by its index in the body: those bodies
                    // fold as bodies.
                    Some((_, Some(b))) => {
                        one = b;
                        ScanShape::One
                    }
                    Some(_) => ScanShape::Fixed,
                    None => {
                        let scopes = [sl.event_common_context, el.context, el.payload];
                        if scopes
                            .iter()
                            .flatten()
                            .any(|n| moves_clock_or_role(layout, *n))
                        {
                            return None;
                        }
                        c.steps_of(&scopes)
                    }
                };
                let text = match shape {
                    ScanShape::Steps { entry } => TextBody::of(&c, entry).map(Box::new),
                    _ => None,
                };
                Some(ScanClass {
                    ev_idx,
                    shape,
                    one,
                    text,
                })
            });
            by_id.push(class);
        }
        t.one_sizes = by_id
            .iter()
            .map(|c| match c {
                Some(c) if matches!(c.shape, ScanShape::One) && c.one.align_add < 8 => {
                    c.one.size_bits
                }
                _ => u64::MAX,
            })
            .collect();
        for (dst, bits) in t.compact_bytes[..31].iter_mut().zip(t.one_sizes.iter()) {
            if bits.is_multiple_of(8) && *bits < 1 << 32 {
                *dst = 4 + (bits / 8) as u32;
            }
        }
        t.by_id = by_id.into_boxed_slice();
        t.steps = c.steps.into_boxed_slice();
        t.runs = c.runs.into_boxed_slice();
        t.variants = c.walk.variants.into_boxed_slice();
        t.resolve_jumps();
        t.reads = c.reads.into_boxed_slice();
        Some(t)
    }

    /// Points jumps to jumps (the end of an option that ends an option) at the last one's
    /// target, and fills the variants' tag tables: fewer steps per event.
    fn resolve_jumps(&mut self) {
        let steps = &self.steps;
        // Jumps only go forward: this ends.
        let past = |mut pc: u32| {
            while let Some(Step::Jump { to }) = steps.get(pc as usize) {
                pc = *to;
            }
            pc
        };
        let resolved: Vec<Step> = steps
            .iter()
            .map(|s| match *s {
                Step::Jump { to } => Step::Jump { to: past(to) },
                other => other,
            })
            .collect();
        for v in self.variants.iter_mut() {
            v.fill_dense(|starts, o| starts.get(o as usize).map_or(u32::MAX, |pc| past(*pc)));
        }
        self.steps = resolved.into_boxed_slice();
    }

    /// The number of ids the table holds: [`Self::class`] is None from there on.
    pub(crate) fn ids(&self) -> usize {
        self.by_id.len()
    }

    /// The body size of id `id`'s class when it is a [`ScanShape::One`] class aligned on
    /// at most a byte (its body then starts right after a header ending on a byte), else
    /// `u64::MAX`.
    #[inline(always)]
    pub(crate) fn one_size(&self, id: u64) -> u64 {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.one_sizes.get(i))
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// Per id below 32, the bytes of an event with an LTTng compact header and a
    /// [`Self::one_size`] body of whole bytes (header included); 0 for the others.
    #[inline(always)]
    pub(crate) fn compact_bytes(&self) -> &[u32; 32] {
        &self.compact_bytes
    }

    /// The class of event class id `id`, None when the scan leaves it to the general path.
    #[inline(always)]
    pub(crate) fn class(&self, id: u64) -> Option<&ScanClass> {
        self.by_id.get(usize::try_from(id).ok()?)?.as_ref()
    }
}

/// One step of a [`ScanTable`] body program: what [`ScanTable::fold_steps`] does for a
/// piece of a body that is not a fixed layout (strings, sequences, variants), flattened out
/// of the node tree once per class so that each event costs a loop over a few steps instead
/// of a recursive walk.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Align to `align`, then fold the word reads [`ScanTable::runs`]`[reads]` (constant
    /// offsets from there:
    /// fixed-size scalars whose alignment divides `align`), `span` bytes of which must be
    /// in the data; the run takes `size_bits`.
    Run {
        align: u32,
        span: u32,
        size_bits: u64,
        reads: u32,
    },
    /// Store the integer `int` cuts out of the 8 bytes at `byte` from the last run's start
    /// (byte-swapped first when `big`) into register `reg` (sign-extended when `signed`), as
    /// the general decoder does for length and tag fields.
    Store {
        byte: u32,
        int: IntWord,
        big: bool,
        reg: u16,
        signed: bool,
    },
    /// A null-terminated string: folded as its byte offset xor its length.
    CString { align: u32 },
    /// A string or BLOB of length `len`: folded as its byte offset xor its length.
    Sized { align: u32, len: Len },
    /// An array of fixed-size scalars `stride` bits apart: each folded by `read`.
    Scalars {
        align: u32,
        len: Len,
        elem_align: u32,
        stride: u64,
        /// Index in [`ScanTable::reads`].
        read: u32,
    },
    /// An array of fixed-layout structures: per element, align to `elem_align` and fold
    /// a run of word reads as [`Step::Run`] does.
    Structs {
        align: u32,
        len: Len,
        elem_align: u32,
        span: u32,
        size_bits: u64,
        reads: u32,
    },
    /// Align to `align`, then go on at the option the tag in `tag_reg` selects:
    /// [`ScanTable::variants`]`[at]`.
    Variant { align: u32, tag_reg: u16, at: u32 },
    /// Align to `align` (a structure or variant ending the body or an option).
    Align { align: u32 },
    /// Go on at step `to` (the end of an option).
    Jump { to: u32 },
    /// The body's end.
    End,
}

/// The options of a variant in compiled code (a [`Step::Variant`], or a body program's
/// variant): tag ranges as the general decoder searches them, where each option's code
/// starts, and a table for small tag values.
#[derive(Debug, Clone)]
pub(crate) struct TagOptions {
    ranges: Arc<[(IntRange, u32)]>,
    /// Per option, where its code starts (set once the options are compiled).
    pub(crate) starts: Box<[u32]>,
    /// Per tag value below [`DENSE_TAGS`], what [`Self::fill_dense`] made of its option, or
    /// `u32::MAX` for none: one load instead of a search of the ranges.
    dense: Box<[u32]>,
}

/// Tag values a [`TagOptions`] looks up in a table (enumerations of LTTng's events use a
/// few small values).
const DENSE_TAGS: i128 = 256;

impl TagOptions {
    /// The options of a variant whose tag selects them by `ranges`, before their code is
    /// compiled.
    pub(crate) fn new(ranges: &Arc<[(IntRange, u32)]>) -> TagOptions {
        TagOptions {
            ranges: ranges.clone(),
            starts: Box::default(),
            dense: Box::default(),
        }
    }

    /// Fills the table of small tag values, each with `entry(starts, option)` of the option
    /// it selects.
    pub(crate) fn fill_dense(&mut self, entry: impl Fn(&[u32], u32) -> u32) {
        let top = self
            .ranges
            .iter()
            .map(|(r, _)| r.upper.clamp(-1, DENSE_TAGS - 1))
            .max()
            .unwrap_or(-1);
        let dense = (0..=top)
            .map(|tag| {
                self.search(tag)
                    .map_or(u32::MAX, |o| entry(&self.starts, o))
            })
            .collect();
        self.dense = dense;
    }

    /// The table's entry for `tag`; None when the tag is not in the table or selects nothing
    /// there.
    #[inline(always)]
    pub(crate) fn dense(&self, tag: i128) -> Option<u32> {
        let e = usize::try_from(tag).ok().and_then(|t| self.dense.get(t))?;
        (*e != u32::MAX).then_some(*e)
    }

    /// The option `tag` selects, searched in the ranges.
    pub(crate) fn search(&self, tag: i128) -> Option<u32> {
        self.ranges
            .iter()
            .find(|(r, _)| r.contains(tag))
            .map(|(_, o)| *o)
    }
}

/// Compiles body scopes into [`Step`]s, by [`crate::flat`]'s walk.
struct StepCompiler<'a> {
    steps: Vec<Step>,
    words: Vec<WordRead>,
    runs: Vec<RunReads>,
    reads: Vec<PlanRead>,
    walk: Walk<'a>,
    /// The open run's register stores, stepped after it.
    stores: Vec<Step>,
}

impl StepCompiler<'_> {
    /// The shape of a body of these scopes: [`ScanShape::Steps`] when every field compiles,
    /// else [`ScanShape::Fold`] (and nothing of it is kept).
    fn steps_of(&mut self, scopes: &[Option<NodeId>]) -> ScanShape {
        let mark = (
            self.steps.len(),
            self.words.len(),
            self.walk.variants.len(),
            self.reads.len(),
            self.runs.len(),
        );
        self.walk.restart();
        self.stores.clear();
        if scopes.iter().flatten().all(|n| self.node(*n).is_some()) {
            self.flush();
            self.steps.push(Step::End);
            return ScanShape::Steps {
                entry: mark.0 as u32,
            };
        }
        self.walk.restart();
        self.stores.clear();
        self.steps.truncate(mark.0);
        self.words.truncate(mark.1);
        self.walk.variants.truncate(mark.2);
        self.reads.truncate(mark.3);
        self.runs.truncate(mark.4);
        ScanShape::Fold
    }

    /// The reads of a run from word `first` on, as an index in [`ScanTable::runs`].
    fn split(&mut self, first: u32) -> u32 {
        let (mut le, mut be, mut others) = (Vec::new(), Vec::new(), Vec::new());
        for w in &self.words[first as usize..] {
            match w.how {
                WordHow::Little | WordHow::LittleSigned if w.byte <= u8::MAX as u32 => {
                    le.push(IntWord::of(w))
                }
                WordHow::Big | WordHow::BigSigned if w.byte <= u8::MAX as u32 => {
                    be.push(IntWord::of(w))
                }
                _ => others.push(*w),
            }
        }
        self.runs.push(RunReads {
            le: le.into_boxed_slice(),
            be: be.into_boxed_slice(),
            others: others.into_boxed_slice(),
        });
        self.runs.len() as u32 - 1
    }

    /// The most bytes from its start any read of the run from word `first` on touches.
    fn span(&self, first: u32) -> u64 {
        self.words[first as usize..]
            .iter()
            .map(WordRead::span)
            .max()
            .unwrap_or(0)
    }

    /// A word read of `kind` at bit `off` of the open run; None for what word reads do not
    /// fold (floats, fields across more than 8 bytes).
    fn word(&mut self, kind: &NodeKind, off: u64) -> Option<u32> {
        let w = WordRead::of(&PlanRead::of(kind, off), 0);
        if w.how == WordHow::Plan {
            return None;
        }
        self.walk.run.as_ref()?;
        self.words.push(w);
        Some(self.words.len() as u32 - 1)
    }
}

impl<'a> Flatten<'a> for StepCompiler<'a> {
    fn walk(&mut self) -> &mut Walk<'a> {
        &mut self.walk
    }

    fn next_field(&self) -> u32 {
        self.words.len() as u32
    }

    fn emit_run(&mut self, r: OpenRun) {
        let span = self.span(r.first);
        let reads = self.split(r.first);
        self.steps.push(Step::Run {
            align: r.align,
            span: u32::try_from(span).unwrap_or(u32::MAX),
            size_bits: r.end,
            reads,
        });
        self.steps.append(&mut self.stores);
    }

    fn emit_align(&mut self, align: u32) {
        self.steps.push(Step::Align { align });
    }

    fn here(&self) -> u32 {
        self.steps.len() as u32
    }

    fn scalar(&mut self, node: NodeId, off: u64) -> Option<()> {
        let layout = self.walk.layout;
        let n = &layout.nodes[node as usize];
        let NodeKind::Int { signed, .. } = n.kind else {
            if n.store != NO_REG || n.effects {
                return None;
            }
            self.word(&n.kind, off)?;
            return Some(());
        };
        let w = self.word(&n.kind, off)?;
        if n.store != NO_REG {
            let word = self.words[w as usize];
            let big = match word.how {
                WordHow::Little | WordHow::LittleSigned => false,
                WordHow::Big | WordHow::BigSigned => true,
                _ => return None,
            };
            self.stores.push(Step::Store {
                byte: word.byte,
                int: IntWord::of(&word),
                big,
                reg: n.store,
                signed,
            });
        }
        Some(())
    }

    fn fixed_struct(&mut self, node: NodeId, base: u64) -> Option<()> {
        let layout = self.walk.layout;
        let plan = layout.nodes[node as usize].plan.as_ref()?;
        for (m, off) in layout.members_of(node).iter().zip(plan.offsets.iter()) {
            self.word(&layout.nodes[m.node as usize].kind, base + off)?;
        }
        Some(())
    }

    fn scalars(&self, n: &Node, len: Len) -> Option<Scalars> {
        let NodeKind::Array { elem, .. } = n.kind else {
            return None;
        };
        let e = &self.walk.layout.nodes[elem as usize];
        Some(match len {
            // A short array of scalars (an address, a flow label): its elements join the
            // run, as the general fold reads them `stride` bits apart.
            Len::Static(k @ 1..=64)
                if matches!(e.kind, NodeKind::Int { .. } | NodeKind::Bits { .. }) =>
            {
                Scalars::Each(k)
            }
            _ => Scalars::Step,
        })
    }

    fn cstring(&mut self, _node: NodeId, align: u32) {
        self.steps.push(Step::CString { align });
    }

    fn sized(&mut self, _node: NodeId, align: u32, len: Len) -> Option<()> {
        self.steps.push(Step::Sized { align, len });
        Some(())
    }

    fn array_step(&mut self, node: NodeId, align: u32, len: Len) -> Option<()> {
        let layout = self.walk.layout;
        let n = &layout.nodes[node as usize];
        let NodeKind::Array { elem, .. } = n.kind else {
            return None;
        };
        let e = &layout.nodes[elem as usize];
        self.reads.push(PlanRead::of(&e.kind, 0));
        self.steps.push(Step::Scalars {
            align,
            len,
            elem_align: e.align,
            stride: n.stride,
            read: self.reads.len() as u32 - 1,
        });
        Some(())
    }

    fn repeat(
        &mut self,
        _node: NodeId,
        _elem: NodeId,
        align: u32,
        len: Len,
        r: OpenRun,
    ) -> Option<()> {
        // Elements storing nothing.
        if !self.stores.is_empty() {
            return None;
        }
        let span = self.span(r.first);
        let reads = self.split(r.first);
        self.steps.push(Step::Structs {
            align,
            len,
            // The run's alignment is the element's, or its first field's if larger.
            elem_align: r.align,
            span: u32::try_from(span).ok()?,
            size_bits: r.end,
            reads,
        });
        Some(())
    }

    fn variant(&mut self, _node: NodeId, align: u32, tag_reg: u16, at: u32) -> Option<()> {
        self.steps.push(Step::Variant { align, tag_reg, at });
        Some(())
    }

    fn end_option(&mut self) {
        self.steps.push(Step::End);
    }

    fn jump(&mut self, at: u32, to: u32) {
        self.steps[at as usize] = Step::Jump { to };
    }
}

/// Most elements an array may have, as the general decoder allows.
const MAX_ELEMENTS: u64 = 1 << 28;

/// The index of the first zero byte of `s`, eight bytes at a time: kernel strings (file
/// names, device names) are long enough for a byte loop to be most of their event's cost.
#[inline(always)]
pub(crate) fn nul_at(s: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = s.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
        // The lowest byte that is zero sets its high bit here (higher ones may be false
        // positives, never lower ones).
        let z = w.wrapping_sub(LOW) & !w & HIGH;
        if z != 0 {
            return Some(at + (z.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == 0)
        .map(|i| at + i)
}

/// The reads of a [`Step::Run`] or of a [`Step::Structs`] element: its little-endian and
/// big-endian integers (the latter read byte-swapped) and its other reads.
#[derive(Debug, Clone)]
struct RunReads {
    le: Box<[IntWord]>,
    be: Box<[IntWord]>,
    others: Box<[WordRead]>,
}

impl RunReads {
    /// Folds the reads at byte `start` of `data`, which holds the run's span: from a
    /// [`WINDOW`] without a bounds check per read where the data holds one.
    #[inline(always)]
    fn fold(&self, data: &[u8], start: usize) -> Option<u64> {
        let mut acc = 0u64;
        let rest = data.get(start..)?;
        if let Some(win) = rest.first_chunk::<WINDOW>() {
            for w in self.le.iter() {
                acc = acc.wrapping_add(w.value(w.word_in(win)));
            }
            for w in self.be.iter() {
                acc = acc.wrapping_add(w.value(w.word_in(win).swap_bytes()));
            }
        } else {
            let load = |w: &IntWord| -> Option<u64> {
                let at = usize::from(w.byte);
                let b: [u8; 8] = rest.get(at..at + 8)?.try_into().ok()?;
                Some(u64::from_le_bytes(b))
            };
            for w in self.le.iter() {
                acc = acc.wrapping_add(w.value(load(w)?));
            }
            for w in self.be.iter() {
                acc = acc.wrapping_add(w.value(load(w)?.swap_bytes()));
            }
        }
        if !self.others.is_empty() {
            acc = acc.wrapping_add(fold_words(&self.others, data, start, |_| 0));
        }
        Some(acc)
    }
}

/// Folds the null-terminated string at bit `base` of `data` (its byte offset xor its
/// length) and gives the position after its NUL; None when `base` is not on a byte or the
/// string does not end in `data`.
#[inline(always)]
fn fold_cstring(data: &[u8], base: u64) -> Option<(u64, u64)> {
    let start = word_start(data, base, 0)?;
    let len = nul_at(&data[start..])?;
    Some((
        start as u64 ^ len.min(u32::MAX as usize) as u64,
        base + (len as u64 + 1) * 8,
    ))
}

/// Byte `base / 8` when `base` is on a byte and `span` bytes from there are in `data`.
#[inline(always)]
fn word_start(data: &[u8], base: u64, span: u32) -> Option<usize> {
    let start = usize::try_from(base / 8).ok()?;
    (base.is_multiple_of(8) && start.checked_add(span as usize)? <= data.len()).then_some(start)
}

impl ScanTable {
    /// Folds the body of a [`ScanShape::Steps`] class from step `entry`, at bit `pos` of
    /// `data` (the packet's content), storing length and tag fields in `regs`: what
    /// [`crate::decode::Decoder::fold`] gives for its scopes, and the position after them.
    /// None wherever `fold` would err, and where word reads do not apply (a run not on a
    /// byte, or too near the end): the general path then decides.
    pub(crate) fn fold_steps(
        &self,
        entry: u32,
        regs: &mut [i128],
        data: &[u8],
        pos: u64,
    ) -> Option<(u64, u64)> {
        self.run_steps::<true>(entry, regs, data, pos)
    }

    /// The position after the body [`Self::fold_steps`] folds, without folding its values:
    /// for a reader passing over an event. The same checks (bounds, lengths, tags), so None
    /// wherever the body is not whole; where only `fold_steps`' word loads would go past the
    /// data's end, this one still gives the end, which the general path would also find.
    pub(crate) fn skip_steps(
        &self,
        entry: u32,
        regs: &mut [i128],
        data: &[u8],
        pos: u64,
    ) -> Option<u64> {
        self.run_steps::<false>(entry, regs, data, pos)
            .map(|(_, end)| end)
    }

    /// [`Self::fold_steps`] (`FOLD`) or [`Self::skip_steps`].
    #[inline(always)]
    fn run_steps<const FOLD: bool>(
        &self,
        entry: u32,
        regs: &mut [i128],
        data: &[u8],
        mut pos: u64,
    ) -> Option<(u64, u64)> {
        let (mut acc, mut pc, mut run_start) = (0u64, entry as usize, 0usize);
        let count = |len: Len, regs: &[i128]| -> Option<u64> {
            let n = match len {
                Len::Static(n) => n,
                Len::Reg(r) => u64::try_from(*regs.get(r as usize)?).ok()?,
            };
            (n <= MAX_ELEMENTS).then_some(n)
        };
        loop {
            match *self.steps.get(pc)? {
                Step::Run {
                    align,
                    span,
                    size_bits,
                    reads,
                } => {
                    let base = align_up(pos, align);
                    let start = word_start(data, base, span)?;
                    let run = self.runs.get(reads as usize)?;
                    if FOLD {
                        acc = acc.wrapping_add(run.fold(data, start)?);
                    }
                    run_start = start;
                    pos = base + size_bits;
                }
                Step::Store {
                    byte,
                    int,
                    big,
                    reg,
                    signed,
                } => {
                    let at = run_start + byte as usize;
                    let b: [u8; 8] = data.get(at..at + 8)?.try_into().ok()?;
                    let w = u64::from_le_bytes(b);
                    let v = int.value(if big { w.swap_bytes() } else { w });
                    *regs.get_mut(reg as usize)? =
                        if signed { v as i64 as i128 } else { v as i128 };
                }
                Step::CString { align } => {
                    let (f, end) = fold_cstring(data, align_up(pos, align))?;
                    acc = acc.wrapping_add(f);
                    pos = end;
                }
                Step::Sized { align, len } => {
                    let base = align_up(pos, align);
                    let n = match len {
                        Len::Static(n) => n,
                        Len::Reg(r) => u64::try_from(*regs.get(r as usize)?).ok()?,
                    };
                    let start = word_start(data, base, 0)?;
                    start
                        .checked_add(usize::try_from(n).ok()?)
                        .filter(|e| *e <= data.len())?;
                    // The general decoder's slot keeps the length as a u32.
                    acc = acc.wrapping_add(start as u64 ^ n as u32 as u64);
                    pos = base + n * 8;
                }
                Step::Scalars {
                    align,
                    len,
                    elem_align,
                    stride,
                    read,
                } => {
                    let n = count(len, regs)?;
                    let start = align_up(align_up(pos, align), elem_align);
                    let end = start.saturating_add(n * stride);
                    if end > data.len() as u64 * 8 {
                        return None;
                    }
                    let r = self.reads.get(read as usize)?;
                    if FOLD {
                        for i in 0..n {
                            acc = acc.wrapping_add(r.fold(data, start + i * stride));
                        }
                    }
                    pos = end;
                }
                Step::Structs {
                    align,
                    len,
                    elem_align,
                    span,
                    size_bits,
                    reads,
                } => {
                    let n = count(len, regs)?;
                    pos = align_up(pos, align);
                    let reads = self.runs.get(reads as usize)?;
                    for _ in 0..n {
                        let base = align_up(pos, elem_align);
                        let start = word_start(data, base, span)?;
                        if FOLD {
                            acc = acc.wrapping_add(reads.fold(data, start)?);
                        }
                        pos = base + size_bits;
                    }
                }
                Step::Variant { align, tag_reg, at } => {
                    pos = align_up(pos, align);
                    let v = self.variants.get(at as usize)?;
                    let tag = *regs.get(tag_reg as usize)?;
                    pc = match v.dense(tag) {
                        Some(to) => to as usize,
                        None => *v.starts.get(v.search(tag)? as usize)? as usize,
                    };
                    continue;
                }
                Step::Align { align } => pos = align_up(pos, align),
                Step::Jump { to } => {
                    pc = to as usize;
                    continue;
                }
                Step::End => return Some((acc, pos)),
            }
            pc += 1;
        }
    }
}

/// Whether decoding `node` may move the clock or set a role value: what the scan must not
/// do ahead of the general path, which redoes what an event it gives up on did.
fn moves_clock_or_role(layout: &Layout, node: NodeId) -> bool {
    let n = &layout.nodes[node as usize];
    if n.clock || n.role.is_some() {
        return true;
    }
    match &n.kind {
        NodeKind::Struct { .. } | NodeKind::Variant { .. } => layout
            .members_of(node)
            .iter()
            .any(|m| moves_clock_or_role(layout, m.node)),
        NodeKind::Array { elem, .. } | NodeKind::Optional { elem, .. } => {
            moves_clock_or_role(layout, *elem)
        }
        _ => false,
    }
}

/// Folds `words` from byte `start` of `data`, which holds all the bytes they touch; `plan`
/// folds the plan reads.
#[inline(always)]
fn fold_words(words: &[WordRead], data: &[u8], start: usize, plan: impl Fn(usize) -> u64) -> u64 {
    let mut acc = 0u64;
    for w in words {
        let at = start + w.byte as usize;
        // `WordRead::int_of`'s arms, spelled out in this one dispatch: calling it here
        // costs a second dispatch per word.
        let word = || -> u64 {
            let b: [u8; 8] = data[at..at + 8].try_into().unwrap_or_default();
            u64::from_le_bytes(b)
        };
        let v = match w.how {
            WordHow::Little => (word() << w.left) >> w.right,
            WordHow::LittleSigned => (((word() << w.left) as i64) >> w.right) as u64,
            WordHow::Big => (word().swap_bytes() << w.left) >> w.right,
            WordHow::BigSigned => (((word().swap_bytes() << w.left) as i64) >> w.right) as u64,
            WordHow::Text(n) => at as u64 ^ n as u64,
            WordHow::Plan => plan(w.byte as usize),
        };
        acc = acc.wrapping_add(v);
    }
    acc
}

/// How to read one member of a fixed-layout structure.
#[derive(Debug, Clone, Copy)]
pub struct PlanRead {
    /// Where the member is (bit offset from the structure start), its size and byte order.
    pub bits: BitRead,
    /// What kind of scalar the member is.
    pub kind: ReadKind,
    /// Text: its length in bytes.
    pub text_len: u32,
    /// The same read as one word load, for byte-aligned structure starts.
    word: WordRead,
}

/// The kind of scalar a [`PlanRead`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// An unsigned integer (or enumeration).
    UInt,
    /// A signed integer (or enumeration).
    SInt,
    /// A 32- or 64-bit floating point number.
    Float,
    /// Bit arrays and bit maps.
    Bits,
    /// A boolean (CTF 2).
    Bool,
    /// A text of `size` bytes.
    Text,
}

impl PlanRead {
    pub(crate) fn of(kind: &NodeKind, off: u64) -> PlanRead {
        let (size, little, kind) = match *kind {
            NodeKind::Int {
                size,
                signed,
                little,
                ..
            } => (
                size,
                little,
                if signed {
                    ReadKind::SInt
                } else {
                    ReadKind::UInt
                },
            ),
            NodeKind::Float { size, little } => (size, little, ReadKind::Float),
            NodeKind::Bits {
                size,
                little,
                kind: crate::ir::BitArrayKind::Boolean,
            } => (size, little, ReadKind::Bool),
            NodeKind::Bits { size, little, .. } => (size, little, ReadKind::Bits),
            NodeKind::SizedString {
                len: crate::layout::Len::Static(len),
            } => (len.min(u32::MAX as u64) as u32, true, ReadKind::Text),
            _ => (0, true, ReadKind::Text),
        };
        let mut r = PlanRead {
            bits: BitRead::new(off, size.clamp(1, 64), little),
            kind,
            text_len: if kind == ReadKind::Text { size } else { 0 },
            word: WordRead::PLAN,
        };
        r.word = WordRead::of(&r, 0);
        r
    }

    /// The member as a raw integer (sign-extended if signed) by one word load, when the
    /// structure starts on a byte and the word is within `data`.
    #[inline(always)]
    fn word_int(&self, data: &[u8], base: u64) -> Option<u64> {
        if !base.is_multiple_of(8) {
            return None;
        }
        let w = &self.word;
        let at = usize::try_from(base / 8)
            .ok()?
            .checked_add(w.byte as usize)?;
        let b: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
        w.int_of(u64::from_le_bytes(b))
    }

    /// The member's integer value (signed ones sign-extended, booleans 0 or 1); None for
    /// floats and texts, or out of `data`.
    #[inline(always)]
    pub fn int(&self, data: &[u8], base: u64) -> Option<i128> {
        if matches!(self.kind, ReadKind::UInt | ReadKind::Bits) {
            if let Some(v) = self.word_int(data, base) {
                return Some(v as i128);
            }
        } else if self.kind == ReadKind::SInt {
            if let Some(v) = self.word_int(data, base) {
                return Some(v as i64 as i128);
            }
        }
        self.int_by_bits(data, base)
    }

    /// [`Self::int`] by a general bit read: unaligned starts, the end of the data, booleans.
    /// Out of line, so that callers inline the word read alone.
    #[inline(never)]
    fn int_by_bits(&self, data: &[u8], base: u64) -> Option<i128> {
        let raw = || self.bits.read(data, base);
        match self.kind {
            ReadKind::UInt | ReadKind::Bits => raw().map(|v| v as i128),
            ReadKind::SInt => raw().map(|v| sign_extend(v, self.bits.size) as i128),
            ReadKind::Bool => raw().map(|v| (v != 0) as i128),
            ReadKind::Float | ReadKind::Text => None,
        }
    }

    /// The member's raw value as its slot would hold it, xor-folded with the slot's `aux`
    /// (text: byte offset ^ length), for [`crate::FieldView::fold_raw`].
    #[inline(always)]
    pub fn fold(&self, data: &[u8], base: u64) -> u64 {
        let raw = || self.bits.read(data, base).unwrap_or(0);
        match self.kind {
            ReadKind::UInt | ReadKind::Bits | ReadKind::Bool => raw(),
            ReadKind::SInt => sign_extend(raw(), self.bits.size) as u64,
            ReadKind::Float => {
                let raw = raw();
                if self.bits.size == 32 {
                    (f32::from_bits(raw as u32) as f64).to_bits()
                } else {
                    raw
                }
            }
            ReadKind::Text => ((base + self.bits.off) / 8) ^ self.text_len as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_search() {
        for len in 0..40 {
            for nul in 0..=len {
                let mut s: Vec<u8> = (0..len).map(|i| 0x80 | (i as u8 + 1)).collect();
                s.iter_mut().skip(nul + 1).for_each(|b| *b = 0);
                if nul < len {
                    s[nul] = 0;
                }
                let want = s.iter().position(|&b| b == 0);
                assert_eq!(nul_at(&s), want, "{s:?}");
            }
        }
        assert_eq!(nul_at(&[1, 0x80, 0x01, 0, 5, 6, 7, 8, 9]), Some(3));
    }

    #[test]
    fn clock_wraps() {
        let c = (5 << 27) | 100;
        assert_eq!(update_clock(c, 50, 27), (6 << 27) | 50);
        assert_eq!(update_clock((6 << 27) | 50, 60, 27), (6 << 27) | 60);
        assert_eq!(update_clock(1, 7, 64), 7);
    }
}

#[cfg(test)]
mod fold_tests {
    use super::*;
    use proptest::prelude::*;

    /// A trace class whose one event has a fixed payload of the given members.
    fn body(byte_order: &str, members: &str) -> FixedBody {
        let layout = crate::layout::one_event_layout(byte_order, members);
        let sl = layout.streams.at(0);
        sl.events.at(0).fixed_body.clone().expect("a fixed body")
    }

    const MEMBERS: &str = "integer { size = 3; align = 1; signed = true; } a; \
         integer { size = 13; align = 1; signed = false; } b; \
         integer { size = 8; align = 8; signed = true; } c; \
         integer { size = 64; align = 8; signed = false; } d; \
         integer { size = 61; align = 1; signed = true; } e; \
         integer { size = 8; align = 8; encoding = UTF8; } s[5]; \
         floating_point { exp_dig = 8; mant_dig = 24; align = 32; } f; \
         integer { size = 32; align = 8; signed = true; byte_order = be; } g;";

    /// Members a one-scope body folds without plan reads: integers of both signs, sizes
    /// and byte orders, packed or not, and a text.
    const ONE_MEMBERS: &str = "integer { size = 3; align = 1; signed = true; } a; \
         integer { size = 13; align = 1; signed = false; } b; \
         integer { size = 8; align = 8; signed = true; } c; \
         integer { size = 64; align = 8; signed = false; } d; \
         integer { size = 64; align = 8; signed = true; } e; \
         integer { size = 8; align = 8; encoding = UTF8; } s[5]; \
         integer { size = 32; align = 8; signed = true; byte_order = be; } g; \
         integer { size = 16; align = 8; byte_order = le; } h; \
         integer { size = 7; align = 1; signed = true; } i; \
         integer { size = 57; align = 1; } j;";

    /// What the general fold gives: (value, end).
    type FoldResult = Result<(u64, u64), crate::decode::DecodeError>;

    /// A payload folded at `pos` of `data` by the general fold and by the step list from
    /// `entry`: (value, end) each.
    fn general_and_steps(
        layout: &Layout,
        payload: NodeId,
        table: &ScanTable,
        entry: u32,
        data: &[u8],
        pos: u64,
    ) -> (FoldResult, Option<(u64, u64)>) {
        let mut dec = crate::decode::Decoder::new(layout);
        let mut p = pos;
        let by_fold = dec.fold(layout, payload, data, &mut p).map(|v| (v, p));
        let mut regs = vec![0i128; layout.registers];
        (by_fold, table.fold_steps(entry, &mut regs, data, pos))
    }

    /// A small xorshift generator of test data from `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The compiled event header of a stream whose header structure has these `fields`.
    fn compiled_header(byte_order: &str, fields: &str) -> FastHeader {
        let tsdl = format!(
            "/* CTF 1.8 */\ntrace {{ major = 1; minor = 8; byte_order = {byte_order}; }};\n\
             clock {{ name = c; freq = 1000000000; }};\n\
             stream {{ id = 0; event.header := struct {{ {fields} }} align(8); }};\n\
             event {{ id = 0; name = \"e\"; stream_id = 0; }};\n"
        );
        let class = crate::metadata::parse(tsdl.as_bytes()).expect("metadata");
        let layout = Layout::compile(&class).expect("layout");
        layout
            .streams
            .at(0)
            .compiled_header
            .clone()
            .expect("a compiled header")
    }

    /// A trace class whose stream has the given event header (`tag` an enum of the given
    /// integer named `name`, selecting options `compact` and `extended`).
    fn header(
        byte_order: &str,
        (tag, name): (&str, &str),
        compact: &str,
        extended: &str,
    ) -> FastHeader {
        compiled_header(
            byte_order,
            &format!(
                "enum : integer {{ {tag} }} {{ compact = 0 ... 30, extended = 31 }} {name}; \
                 variant <{name}> {{ struct {{ {compact} }} compact; \
                 struct {{ {extended} }} extended; }} v;"
            ),
        )
    }

    /// LTTng's large header, in the given byte order, its compact option's timestamp of
    /// `ts_bits` bits.
    fn large_header(byte_order: &str, ts_bits: u32) -> FastHeader {
        compiled_header(
            byte_order,
            &format!(
                "enum : integer {{ size = 16; align = 8; }} \
                 {{ compact = 0 ... 65534, extended = 65535 }} id; \
                 variant <id> {{ struct {{ integer {{ size = {ts_bits}; align = 8; \
                 map = clock.c.value; }} timestamp; }} compact; struct {{ {EXT} }} extended; }} v;"
            ),
        )
    }

    const TS27: &str = "integer { size = 27; align = 1; map = clock.c.value; } timestamp;";
    const EXT: &str = "integer { size = 32; align = 8; } id; \
         integer { size = 64; align = 8; map = clock.c.value; } timestamp;";

    /// A trace class whose one event has the given payload and a compact LTTng header, in
    /// the given byte order.
    fn class_with(byte_order: &str, fields: &str) -> Layout {
        let tsdl = format!(
            "/* CTF 1.8 */\ntrace {{ major = 1; minor = 8; byte_order = {byte_order}; }};\n\
             clock {{ name = c; freq = 1000000000; }};\n\
             stream {{ id = 0; event.header := struct {{ \
               enum : integer {{ size = 5; align = 1; }} {{ compact = 0 ... 30, extended = 31 }} id; \
               variant <id> {{ struct {{ {TS27} }} compact; struct {{ {EXT} }} extended; }} v; \
             }} align(8); }};\n\
             event {{ id = 0; name = \"e\"; stream_id = 0; fields := struct {{ {fields} }}; }};\n"
        );
        let class = crate::metadata::parse(tsdl.as_bytes()).expect("metadata");
        Layout::compile(&class).expect("layout")
    }

    /// Strings, sequences of scalars and of structures, short static arrays, a variant with
    /// an empty option, bit fields, a length of more than a byte: every kind of step.
    const STEPS: &str = "integer { size = 8; align = 8; } n; string s; \
         integer { size = 16; align = 8; signed = true; } a; \
         struct { integer { size = 32; align = 8; } x; integer { size = 4; align = 1; } y; \
           integer { size = 4; align = 1; signed = true; } z; } pairs[n]; \
         integer { size = 16; align = 16; signed = true; } shorts[n]; \
         enum : integer { size = 8; align = 8; } { A = 0, B = 1, C = 2 ... 200 } tag; \
         variant <tag> { struct { } A; \
           struct { integer { size = 32; align = 32; } v; string t; } B; \
           integer { size = 8; align = 8; } C[3]; } v; \
         integer { size = 8; align = 8; encoding = UTF8; } name[5]; \
         integer { size = 8; align = 8; } addr[4]; integer { size = 3; align = 1; } bits; \
         integer { size = 16; align = 8; } m; integer { size = 8; align = 8; } seq[m];";

    /// The step lists fold what the general fold does, at the same end, wherever they
    /// succeed; and they do succeed on most data the general fold reads.
    #[test]
    fn steps_agree_with_the_general_fold() {
        for byte_order in ["le", "be"] {
            let layout = class_with(byte_order, STEPS);
            let sl = layout.streams.at(0);
            let table = sl.scan.as_ref().expect("a scan table");
            let class = table.class(0).expect("a class");
            let ScanShape::Steps { entry } = class.shape else {
                panic!("not compiled to steps: {:?}", class.shape);
            };
            let payload = sl.events.at(0).payload.expect("a payload");
            // A small xorshift generator: bytes from a few values (zeros end strings, small
            // lengths keep sequences in the data).
            let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
            let (mut same, mut general, mut skips) = (0, 0, 0);
            for i in 0..20_000 {
                // Every other body with room for whole windows after it: the runs' reads
                // then take the window path, the others the checked one.
                let len = (next() % 120) as usize + (i % 2) * 300;
                let data: Vec<u8> = (0..len)
                    .map(|_| [0, 1, 2, 3, 0x41, 0x80, 0xff, 0][(next() % 8) as usize])
                    .collect();
                let pos = next() % 24;
                let (by_fold, by_steps) =
                    general_and_steps(&layout, payload, table, entry, &data, pos);
                general += by_fold.is_ok() as u32;
                if let Some(v) = by_steps {
                    assert_eq!(Ok(v), by_fold, "{byte_order} at {pos} of {data:?}");
                    same += 1;
                }
                // Passing over the body ends where folding it does, and only where the
                // general fold reads it whole.
                let mut regs = vec![0i128; layout.registers];
                let skipped = table.skip_steps(entry, &mut regs, &data, pos);
                match (by_steps, &by_fold) {
                    (Some((_, end)), _) => assert_eq!(skipped, Some(end), "{byte_order}"),
                    (None, Ok((_, end))) => assert!(
                        skipped.is_none_or(|e| e == *end),
                        "{byte_order} at {pos} of {data:?}"
                    ),
                    (None, Err(_)) => {
                        assert_eq!(skipped, None, "{byte_order} at {pos} of {data:?}")
                    }
                }
                skips += skipped.is_some() as u32;
            }
            assert!(general > 1000, "{byte_order}: {general} folds");
            assert!(same * 10 > general * 7, "{byte_order}: {same} of {general}");
            assert!(
                skips >= same,
                "{byte_order}: {skips} skips, {same} step folds"
            );
        }
    }

    /// A string between runs of integers (little- and big-endian, signed, bit fields): the
    /// body [`TextBody`] folds without the step loop.
    const TEXT: &str = "integer { size = 32; align = 8; signed = true; } a; \
         integer { size = 3; align = 1; } b; string s; \
         integer { size = 16; align = 16; signed = true; } c; \
         integer { size = 5; align = 1; byte_order = be; } d; \
         integer { size = 8; align = 8; } addr[3];";

    /// [`TextBody::fold`] gives what the step list and the general fold give, wherever it
    /// gives something, which is most of the time when a window fits.
    #[test]
    fn text_bodies_agree_with_the_general_fold() {
        for (byte_order, fields) in [
            ("le", TEXT),
            ("be", TEXT),
            ("le", "string s; integer { size = 64; align = 64; } t;"),
            (
                "be",
                "integer { size = 12; align = 4; signed = true; } h; string s;",
            ),
        ] {
            let layout = class_with(byte_order, fields);
            let sl = layout.streams.at(0);
            let table = sl.scan.as_ref().expect("a scan table");
            let class = table.class(0).expect("a class");
            let ScanShape::Steps { entry } = class.shape else {
                panic!("not compiled to steps: {:?}", class.shape);
            };
            let text = class.text.as_ref().unwrap_or_else(|| {
                panic!(
                    "no text body: {fields} {:?}",
                    &table.steps[entry as usize..]
                )
            });
            let payload = sl.events.at(0).payload.expect("a payload");
            let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
            let (mut same, mut general) = (0, 0);
            for _ in 0..20_000 {
                let len = (next() % 600) as usize;
                // Few zeros: strings of a few bytes to a few dozen.
                let data: Vec<u8> = (0..len)
                    .map(|_| {
                        let r = next();
                        let b = [0, 1, 0x41, 0x80, 0xff, 0x7f, 0x33, 0x9c][(r % 8) as usize];
                        if r % 32 < 8 {
                            b
                        } else {
                            b | 1
                        }
                    })
                    .collect();
                let pos = next() % 40;
                let (by_fold, by_steps) =
                    general_and_steps(&layout, payload, table, entry, &data, pos);
                general += by_fold.is_ok() as u32;
                if let Some(v) = text.fold(&data, pos) {
                    assert_eq!(Ok(v), by_fold, "{byte_order} {fields} at {pos} of {data:?}");
                    assert_eq!(Some(v), by_steps, "{byte_order} {fields}");
                    same += 1;
                }
            }
            assert!(general > 5000, "{byte_order} {fields}: {general} folds");
            assert!(
                same * 10 > general * 5,
                "{byte_order} {fields}: {same} of {general}"
            );
        }
    }

    proptest! {
        /// The per-tag table decodes headers as the field-by-field reads do: compact and
        /// extended options, clock wrap-around, big-endian headers (no table), tags that are
        /// not the id, options without a timestamp.
        #[test]
        fn tag_cases_agree_with_field_reads(
            data in proptest::collection::vec(any::<u8>(), 0..40),
            pos in 0u64..80,
            clock in any::<u64>(),
            shape in 0usize..4,
        ) {
            let h = match shape {
                0 => header("le", ("size = 5; align = 1;", "id"), TS27, EXT),
                1 => header("be", ("size = 5; align = 1;", "id"), TS27, EXT),
                2 => header(
                    "le",
                    ("size = 8; align = 8; signed = true;", "id"),
                    "integer { size = 13; align = 1; map = clock.c.value; } timestamp;",
                    "integer { size = 16; align = 8; } id;",
                ),
                // The tag is not the id: compact events have none.
                _ => header("le", ("size = 6; align = 1;", "sel"), TS27, EXT),
            };
            prop_assert_eq!(h.cases.is_some(), shape != 1);
            let by_bits = h.decode_by_bits(&data, align_up(pos, h.align), clock);
            prop_assert_eq!(h.decode(&data, pos, clock), by_bits);
        }

        /// LTTng's compact and large headers are recognised, and decoded with constant
        /// shifts as the field-by-field reads do; headers that differ from them in any way
        /// (byte order, a tag that is not the id, another timestamp size) are not.
        #[test]
        fn lttng_headers_agree_with_field_reads(
            data in proptest::collection::vec(any::<u8>(), 0..40),
            pos in 0u64..80,
            clock in any::<u64>(),
            shape in 0usize..6,
        ) {
            use LttngHeader::*;
            let (h, kind) = match shape {
                0 => (header("le", ("size = 5; align = 1;", "id"), TS27, EXT), Some(Compact)),
                1 => (large_header("le", 32), Some(Large)),
                2 => (header("be", ("size = 5; align = 1;", "id"), TS27, EXT), None),
                3 => (header("le", ("size = 5; align = 1;", "sel"), TS27, EXT), None),
                4 => (large_header("le", 24), None),
                _ => (large_header("be", 32), None),
            };
            prop_assert_eq!(h.lttng(), kind);
            if let Some(kind) = kind {
                let base = align_up(pos, 8);
                let want = h
                    .decode_by_bits(&data, base, clock)
                    .map(|v| (v.id.expect("an id"), v.clock, v.end));
                match kind.decode_id(&data, pos, clock) {
                    Some(got) => prop_assert_eq!(Some(got), want),
                    None => prop_assert!((data.len() as u64) < base / 8 + 16),
                }
            }
        }

        /// A one-scope body folds as its members read one by one, wherever it has the
        /// bytes its word reads need, for both byte orders.
        #[test]
        fn one_body_agrees_with_member_reads(
            data in proptest::collection::vec(any::<u8>(), 0..WINDOW + 64),
            at in 0u64..800,
            big in any::<bool>(),
        ) {
            let b = body(if big { "be" } else { "le" }, ONE_MEMBERS);
            prop_assert!(b.scopes.len() == 1 && b.words.iter().all(|w| w.how != WordHow::Plan));
            let one = OneBody::of(&b).expect("a one-scope body");
            let s = &b.scopes[0];
            let base = align_up(at, s.align);
            let by_member = b
                .reads
                .iter()
                .fold(0u64, |acc, r| acc.wrapping_add(r.fold(&data, base)));
            match one.fold(&data, at) {
                Some(got) => prop_assert_eq!(got, (by_member, base + s.size_bits)),
                None => prop_assert!(
                    !base.is_multiple_of(8) || data.len() < (base / 8) as usize + WINDOW
                ),
            }
        }

        /// A body of several scopes (an event context, then a payload, as in LTTng traces
        /// with contexts) folds as one scope: as its scopes' members read one by one, each
        /// scope placed where `place_and_fold` places it.
        #[test]
        fn scopes_fold_as_one_body(
            data in proptest::collection::vec(any::<u8>(), 0..2 * WINDOW),
            at in 0u64..800,
            big in any::<bool>(),
            three in any::<bool>(),
        ) {
            let layout = crate::layout::one_event_layout(if big { "be" } else { "le" }, ONE_MEMBERS);
            let payload = layout.streams.at(0).events.at(0).payload;
            let scopes = [payload.filter(|_| three), payload, payload];
            let b = FixedBody::compile(&layout, scopes).expect("a fixed body");
            let one = OneBody::of(&b).expect("scopes at constant offsets");
            let (want, end) = b.place_and_fold(at, &data);
            match one.fold(&data, at) {
                Some(got) => prop_assert_eq!(got, (want, end)),
                None => {
                    let base = align_up(at, b.scopes[0].align);
                    prop_assert!(
                        !base.is_multiple_of(8) || data.len() < (base / 8) as usize + WINDOW
                    );
                }
            }
            prop_assert_eq!(one.end(at), end);
        }

        #[test]
        fn masked_clock_update_agrees(clock in any::<u64>(), raw in any::<u64>(), size in 1u32..=64) {
            let mask = u64::MAX >> (64 - size);
            prop_assert_eq!(
                update_clock_masked(clock, raw & mask, mask),
                update_clock(clock, raw & mask, size)
            );
            prop_assert_eq!(update_clock_masked(clock, 0, 0), clock);
        }

        /// The word loop folds what reading each member by its plan folds, for both byte
        /// orders, at aligned and unaligned starts, and near the end of the data (where it
        /// must fall back to member reads).
        #[test]
        fn fold_scope_agrees_with_member_reads(
            data in proptest::collection::vec(any::<u8>(), 40..64),
            base in 0u64..120,
            big in any::<bool>(),
        ) {
            let b = body(if big { "be" } else { "le" }, MEMBERS);
            let by_member = b
                .reads
                .iter()
                .fold(0u64, |acc, r| acc.wrapping_add(r.fold(&data, base)));
            prop_assert_eq!(b.fold_scope(0, &data, base), by_member);
        }
    }
}
