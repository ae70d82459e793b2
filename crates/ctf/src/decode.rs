//! Sans-io field decoding: compiled [`Layout`] nodes + bytes → flat [`Slot`] lists.
//!
//! A decoded scope is a pre-order list of slots, one per field; compound fields record how
//! many descendant slots follow them so that consumers skip what they do not read.

use crate::bits::{align_up, read_uint, sign_extend};
use crate::ir::{BitArrayKind, IntRange, Role};
use crate::layout::{Layout, Len, Node, NodeId, NodeKind, TaggedHeader, NO_REG};

/// One decoded field.
#[derive(Debug, Clone, Copy, Default)]
pub struct Slot {
    /// The field's node in the trace's [`Layout`](crate::access::Layout).
    pub node: NodeId,
    /// Compound fields: number of descendant slots. Strings and BLOBs: length in bytes.
    pub aux: u32,
    /// Integers: raw bits (signed ones sign-extended). Floats: `f64` bits. Strings and BLOBs:
    /// byte offset in the decoded buffer. Arrays: element count. Variants: option index.
    /// Optionals: 1 when present. Structures with a fixed plan: bit position of their start
    /// (their members have no slots).
    pub val: u64,
}

/// A step of decoding a structure without a fixed plan ([`Layout::pieces`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    Run(Run),
    /// An array of fixed-size scalars read on access (a [`Node::stride`] and no role): one
    /// slot, made here unless something is wrong with it ([`Decoder::decode`] says what).
    /// The stride is the node's, read as it decodes: it is what readers of the slot go by.
    Scalars {
        node: NodeId,
        align: u32,
        elem_align: u32,
        len: Len,
    },
    /// A member decoded on its own (strings, variants, nested structures…).
    Member(NodeId),
}

/// Consecutive members that are fixed-size scalars at constant offsets from `align_up(pos,
/// align)`: one bounds check and, from a byte, one word load each instead of a recursive call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub align: u32,
    /// Its fields: `Layout::run_fields[first..first + count]`.
    pub first: u32,
    pub count: u32,
    pub size_bits: u64,
    /// Bytes from the start that the word loads and texts touch.
    pub span: u64,
}

/// One member of a [`Run`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunField {
    pub node: NodeId,
    /// Bit offset from the run's start.
    pub off: u64,
    /// Byte offset of the word loaded (or of the text) from the run's start.
    pub byte: u32,
    pub how: FieldHow,
    /// The integer is `((word << left) as i64 >> right) & keep`.
    pub left: u8,
    pub right: u8,
    /// Integers: sign-extended (the register gets the value as signed).
    pub signed: bool,
    /// Register the integer is stored into (its only effect), or [`NO_REG`].
    pub store: u16,
    pub keep: u64,
}

/// How a [`RunField`] is read from a byte-aligned run start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldHow {
    /// An integer (whose only effect may be a register store) in the little-endian word at
    /// `byte`.
    Little,
    /// The same, big-endian.
    Big,
    /// A text of this many bytes at `byte`: its slot is its place.
    Text(u32),
    /// By [`Decoder::scalar_at`] (floats, bit arrays, clock and role fields, wide fields).
    Scalar,
}

impl RunField {
    /// How member `node` at bit `off` of a run is read.
    pub(crate) fn new(n: &Node, node: NodeId, off: u64) -> RunField {
        let mut f = RunField {
            node,
            off,
            byte: 0,
            how: FieldHow::Scalar,
            left: 0,
            right: 0,
            signed: false,
            store: NO_REG,
            keep: 0,
        };
        let (Ok(byte), bit) = (u32::try_from(off / 8), (off % 8) as u32) else {
            return f;
        };
        // A length or tag field is stored as it is read; the clock and roles are left to
        // `scalar_at`.
        if n.clock || n.role.is_some() {
            return f;
        }
        match n.kind {
            NodeKind::Int {
                size,
                signed,
                little,
                ..
            } if bit + size <= 64 => {
                // A whole byte reads the same in either byte order.
                let little = little || (bit == 0 && size == 8);
                f.byte = byte;
                f.left = (if little { 64 - bit - size } else { bit }) as u8;
                f.right = (64 - size) as u8;
                f.keep = if signed {
                    u64::MAX
                } else {
                    u64::MAX >> f.right
                };
                f.signed = signed;
                f.store = n.store;
                f.how = if little {
                    FieldHow::Little
                } else {
                    FieldHow::Big
                };
            }
            NodeKind::SizedString {
                len: Len::Static(len),
            } if bit == 0 && n.store == NO_REG => {
                if let Ok(len) = u32::try_from(len) {
                    f.byte = byte;
                    f.how = FieldHow::Text(len);
                }
            }
            _ => {}
        }
        f
    }

    /// Bytes from the run's start this field's fast read touches.
    pub(crate) fn span(&self) -> u64 {
        match self.how {
            FieldHow::Little | FieldHow::Big => self.byte as u64 + 8,
            FieldHow::Text(len) => self.byte as u64 + len as u64,
            FieldHow::Scalar => 0,
        }
    }

    #[inline(always)]
    fn value(&self, word: u64) -> u64 {
        ((((word << self.left) as i64) >> self.right) as u64) & self.keep
    }
}

/// The one slot of array `node`, `count` fixed-size scalars `stride` bits apart whose first
/// goes at `at` (aligned to `elem_align`): its elements are read on access (see `FieldView`).
/// With the position after it; None when it runs past `data`.
#[inline(always)]
pub(crate) fn strided_slot(
    node: NodeId,
    count: u64,
    stride: u64,
    elem_align: u32,
    at: u64,
    data: &[u8],
) -> Option<(Slot, u64)> {
    let start = align_up(at, elem_align);
    let end = start.saturating_add(count * stride);
    (end <= data.len() as u64 * 8).then_some((
        Slot {
            node,
            aux: count as u32,
            val: start,
        },
        end,
    ))
}

/// A decoding failure at a bit position of the buffer being decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError {
    pub bit: u64,
    pub message: String,
}

impl DecodeError {
    fn new(bit: u64, message: impl Into<String>) -> Self {
        DecodeError {
            bit,
            message: message.into(),
        }
    }
}

/// Values of role-carrying fields seen while decoding.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Specials {
    pub magic: Option<u64>,
    /// Byte offset of the 16-byte UUID in the buffer.
    pub uuid_at: Option<u64>,
    pub stream_class_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub packet_total_bits: Option<u64>,
    pub packet_content_bits: Option<u64>,
    pub ts_begin: Option<u64>,
    pub ts_end: Option<u64>,
    pub discarded: Option<u64>,
    pub seq_num: Option<u64>,
    pub event_id: Option<u64>,
}

/// Limit on the element count of one array, against corrupt lengths.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 28;
/// Limit on the slots an array of elements that take no bits may produce.
const MAX_EMPTY_SLOTS: u64 = 1 << 20;

/// Decoding state of one data stream: registers, the default clock and role values.
#[derive(Debug, Clone)]
pub(crate) struct Decoder {
    regs: Vec<i128>,
    /// Current value of the stream's default clock, in cycles.
    pub clock: u64,
    pub specials: Specials,
}

impl Decoder {
    pub fn new(layout: &Layout) -> Self {
        Decoder {
            regs: vec![0; layout.registers],
            clock: 0,
            specials: Specials::default(),
        }
    }

    /// The registers, for [`crate::fast::ScanTable::fold_steps`].
    pub(crate) fn regs_mut(&mut self) -> &mut [i128] {
        &mut self.regs
    }

    /// Decodes the field `node` at bit `*pos` of `data`, appending its slots to `out`.
    pub fn decode(
        &mut self,
        layout: &Layout,
        node: NodeId,
        data: &[u8],
        pos: &mut u64,
        out: &mut Vec<Slot>,
    ) -> Result<(), DecodeError> {
        let n = &layout.nodes[node as usize];
        *pos = align_up(*pos, n.align);
        match &n.kind {
            NodeKind::Int { size, .. }
            | NodeKind::Bits { size, .. }
            | NodeKind::Float { size, .. } => {
                if pos.saturating_add(*size as u64) > data.len() as u64 * 8 {
                    return Err(DecodeError::new(*pos, "field past the end of the data"));
                }
                let slot = self.scalar_at(n, node, data, *pos);
                *pos += *size as u64;
                out.push(slot);
            }
            NodeKind::VarInt { signed, .. } => {
                let s = self.varint_at(n, node, *signed, data, pos)?;
                out.push(s);
            }
            NodeKind::CString => out.push(cstring_at(node, data, pos)?),
            NodeKind::SizedString { len } | NodeKind::Blob { len } => {
                let s = self.sized_at(n, node, *len, data, pos)?;
                out.push(s);
            }
            NodeKind::Struct { first, count } => {
                if let Some(plan) = &n.plan {
                    if pos.saturating_add(plan.size_bits) <= data.len() as u64 * 8 {
                        // Members are read on access (see `FieldView`): record the start only.
                        out.push(Slot {
                            node,
                            aux: 0,
                            val: *pos,
                        });
                        *pos += plan.size_bits;
                        return Ok(());
                    }
                    // Truncated: decode member by member to report the exact position.
                }
                let at = out.len();
                out.push(Slot {
                    node,
                    aux: 0,
                    val: *count as u64,
                });
                if n.plan.is_none() {
                    let (first_piece, pieces) = n.pieces;
                    let pieces = &layout.pieces[first_piece as usize..][..pieces as usize];
                    for p in pieces {
                        match p {
                            Piece::Run(r) => self.run(layout, r, data, pos, out)?,
                            Piece::Scalars {
                                node,
                                align,
                                elem_align,
                                len,
                            } => {
                                let stride = layout.nodes[*node as usize].stride;
                                let count = match *len {
                                    Len::Static(n) => Some(n),
                                    Len::Reg(r) => u64::try_from(self.regs[r as usize]).ok(),
                                };
                                let at = align_up(*pos, *align);
                                let slot =
                                    count.filter(|&c| c <= MAX_ELEMENTS && stride > 0).and_then(
                                        |c| strided_slot(*node, c, stride, *elem_align, at, data),
                                    );
                                match slot {
                                    Some((slot, end)) => {
                                        out.push(slot);
                                        *pos = end;
                                    }
                                    // What is wrong with it is said the general way.
                                    None => self.decode(layout, *node, data, pos, out)?,
                                }
                            }
                            Piece::Member(child) => self.decode(layout, *child, data, pos, out)?,
                        }
                    }
                } else {
                    for m in *first..*first + *count {
                        let child = layout.members[m as usize].node;
                        self.decode(layout, child, data, pos, out)?;
                    }
                }
                out[at].aux = (out.len() - at - 1) as u32;
            }
            NodeKind::Variant {
                tag_reg,
                first,
                ranges,
                ..
            } => {
                let opt = self.variant_option(*tag_reg, ranges, *pos)?;
                let at = out.len();
                out.push(Slot {
                    node,
                    aux: 0,
                    val: opt as u64,
                });
                let child = layout.members[(*first + opt) as usize].node;
                self.decode(layout, child, data, pos, out)?;
                out[at].aux = (out.len() - at - 1) as u32;
            }
            NodeKind::Array { elem, len } => {
                let count = self.len(*len, *pos)?;
                if count > MAX_ELEMENTS {
                    return Err(DecodeError::new(
                        *pos,
                        format!("array length {count} is implausible"),
                    ));
                }
                // A CTF 1.8 `uint8_t uuid[16]` is an array of integers, not a BLOB.
                if n.role == Some(Role::MetadataStreamUuid)
                    && count == 16
                    && pos.is_multiple_of(8)
                    && matches!(
                        layout.nodes[*elem as usize].kind,
                        NodeKind::Int { size: 8, .. }
                    )
                {
                    self.specials.uuid_at = Some(*pos / 8);
                }
                if n.stride > 0 {
                    let elem_align = layout.nodes[*elem as usize].align;
                    if let Some((slot, end)) =
                        strided_slot(node, count, n.stride, elem_align, *pos, data)
                    {
                        out.push(slot);
                        *pos = end;
                        return Ok(());
                    }
                    // Truncated: decode element by element to report the exact position.
                }
                let at = out.len();
                out.push(Slot {
                    node,
                    aux: 0,
                    val: count,
                });
                let mut prev = *pos;
                for i in 0..count {
                    let before = out.len();
                    self.decode(layout, *elem, data, pos, out)?;
                    // Elements taking no bits (empty structures…) read no field, so they all
                    // decode alike: refuse to make millions of slots out of no data.
                    if i == 1
                        && *pos == prev
                        && ((out.len() - before) as u64).saturating_mul(count) > MAX_EMPTY_SLOTS
                    {
                        return Err(DecodeError::new(
                            *pos,
                            format!("array of {count} empty elements is implausible"),
                        ));
                    }
                    prev = *pos;
                }
                out[at].aux = (out.len() - at - 1) as u32;
            }
            NodeKind::Optional {
                sel_reg,
                ranges,
                elem,
            } => {
                let present = self.optional_present(*sel_reg, ranges);
                let at = out.len();
                out.push(Slot {
                    node,
                    aux: 0,
                    val: present as u64,
                });
                if present {
                    self.decode(layout, *elem, data, pos, out)?;
                }
                out[at].aux = (out.len() - at - 1) as u32;
            }
        }
        Ok(())
    }

    /// Decodes the members of run `r` from bit `*pos`, as member by member decoding would.
    #[inline]
    fn run(
        &mut self,
        layout: &Layout,
        r: &Run,
        data: &[u8],
        pos: &mut u64,
        out: &mut Vec<Slot>,
    ) -> Result<(), DecodeError> {
        let fields = &layout.run_fields[r.first as usize..][..r.count as usize];
        let base = align_up(*pos, r.align);
        if base.saturating_add(r.size_bits) > data.len() as u64 * 8 {
            // Truncated: member by member, for the exact error and the effects before it.
            for f in fields {
                self.decode(layout, f.node, data, pos, out)?;
            }
            return Ok(());
        }
        let start = base / 8;
        let window = usize::try_from(start)
            .ok()
            .filter(|_| base.is_multiple_of(8))
            .and_then(|s| data.get(s..)?.get(..r.span as usize));
        out.reserve(fields.len());
        match window {
            Some(win) => {
                for f in fields {
                    let word = || {
                        let at = f.byte as usize;
                        let b: [u8; 8] = win[at..at + 8].try_into().unwrap_or_default();
                        u64::from_le_bytes(b)
                    };
                    let val = match f.how {
                        FieldHow::Little => f.value(word()),
                        FieldHow::Big => f.value(word().swap_bytes()),
                        FieldHow::Text(len) => {
                            out.push(Slot {
                                node: f.node,
                                aux: len,
                                val: start + f.byte as u64,
                            });
                            continue;
                        }
                        FieldHow::Scalar => {
                            out.push(self.scalar_of(layout, f.node, data, base + f.off));
                            continue;
                        }
                    };
                    if f.store != NO_REG {
                        self.regs[f.store as usize] = if f.signed {
                            val as i64 as i128
                        } else {
                            val as i128
                        };
                    }
                    out.push(Slot {
                        node: f.node,
                        aux: 0,
                        val,
                    });
                }
            }
            // Near the end of the data (or off a byte): bit reads.
            None => {
                for f in fields {
                    out.push(self.scalar_of(layout, f.node, data, base + f.off));
                }
            }
        }
        *pos = base + r.size_bits;
        Ok(())
    }

    /// Reads the field `node` at bit `*pos` of `data` as [`Self::decode`] does (the same
    /// checks, the same effects), but instead of recording slots returns the fold of the raw
    /// values [`crate::FieldView::fold_raw`] reads from those slots. Errs wherever `decode`
    /// errs (the message may differ), and also on a few shapes it leaves to `decode` (arrays
    /// whose elements take no bits, arrays with a role, arrays past the data even when
    /// empty): callers then decode.
    pub fn fold(
        &mut self,
        layout: &Layout,
        node: NodeId,
        data: &[u8],
        pos: &mut u64,
    ) -> Result<u64, DecodeError> {
        let n = &layout.nodes[node as usize];
        *pos = align_up(*pos, n.align);
        let slot = |s: Slot| s.val ^ s.aux as u64;
        Ok(match &n.kind {
            NodeKind::Int { size, .. }
            | NodeKind::Bits { size, .. }
            | NodeKind::Float { size, .. } => {
                if pos.saturating_add(*size as u64) > data.len() as u64 * 8 {
                    return Err(DecodeError::new(*pos, "field past the end of the data"));
                }
                let s = self.scalar_at(n, node, data, *pos);
                *pos += *size as u64;
                slot(s)
            }
            NodeKind::Struct { first, count } => {
                if let Some(plan) = &n.plan {
                    if pos.saturating_add(plan.size_bits) <= data.len() as u64 * 8 {
                        let base = *pos;
                        *pos += plan.size_bits;
                        return Ok(plan
                            .reads
                            .iter()
                            .fold(0u64, |acc, r| acc.wrapping_add(r.fold(data, base))));
                    }
                }
                let mut acc = 0u64;
                let mut start = *first;
                if let Some(pre) = &n.prefix {
                    let base = *pos;
                    if base.saturating_add(pre.size_bits) <= data.len() as u64 * 8 {
                        let members = &layout.members[*first as usize..];
                        for (m, off) in members.iter().zip(pre.offsets.iter()) {
                            let child = &layout.nodes[m.node as usize];
                            let s = self.scalar_at(child, m.node, data, base + off);
                            acc = acc.wrapping_add(slot(s));
                        }
                        *pos = base + pre.size_bits;
                        start += pre.offsets.len() as u32;
                    }
                }
                for m in start..*first + *count {
                    let child = layout.members[m as usize].node;
                    acc = acc.wrapping_add(self.fold(layout, child, data, pos)?);
                }
                acc
            }
            NodeKind::Variant {
                tag_reg,
                first,
                ranges,
                ..
            } => {
                let opt = self.variant_option(*tag_reg, ranges, *pos)?;
                let child = layout.members[(*first + opt) as usize].node;
                self.fold(layout, child, data, pos)?
            }
            NodeKind::Array { elem, len } if n.stride > 0 && n.role.is_none() => {
                let count = self.len(*len, *pos)?;
                if count > MAX_ELEMENTS {
                    return Err(DecodeError::new(*pos, "implausible array length"));
                }
                let start = align_up(*pos, layout.nodes[*elem as usize].align);
                let end = start.saturating_add(count * n.stride);
                if end > data.len() as u64 * 8 {
                    return Err(DecodeError::new(*pos, "array past the end of the data"));
                }
                let r = crate::fast::PlanRead::of(&layout.nodes[*elem as usize].kind, 0);
                *pos = end;
                (0..count).fold(0u64, |acc, i| {
                    acc.wrapping_add(r.fold(data, start + i * n.stride))
                })
            }
            NodeKind::Array { elem, len } if n.role.is_none() => {
                let count = self.len(*len, *pos)?;
                if count > MAX_ELEMENTS {
                    return Err(DecodeError::new(*pos, "implausible array length"));
                }
                let mut acc = 0u64;
                let mut prev = *pos;
                for _ in 0..count {
                    acc = acc.wrapping_add(self.fold(layout, *elem, data, pos)?);
                    if *pos == prev {
                        return Err(DecodeError::new(*pos, "array element of no bits"));
                    }
                    prev = *pos;
                }
                acc
            }
            NodeKind::Optional {
                sel_reg,
                ranges,
                elem,
            } => {
                let present = self.optional_present(*sel_reg, ranges);
                if present {
                    self.fold(layout, *elem, data, pos)?
                } else {
                    0
                }
            }
            NodeKind::CString => slot(cstring_at(node, data, pos)?),
            NodeKind::SizedString { len } | NodeKind::Blob { len } => {
                slot(self.sized_at(n, node, *len, data, pos)?)
            }
            NodeKind::VarInt { signed, .. } => slot(self.varint_at(n, node, *signed, data, pos)?),
            // A UUID array: its role is `decode`'s business.
            NodeKind::Array { .. } => {
                return Err(DecodeError::new(*pos, "array with a role: not folded"));
            }
        })
    }

    /// A variable-length integer at `*pos`, with its effects.
    fn varint_at(
        &mut self,
        n: &Node,
        node: NodeId,
        signed: bool,
        data: &[u8],
        pos: &mut u64,
    ) -> Result<Slot, DecodeError> {
        let start = *pos;
        let (raw, nbits) = read_leb128(data, *pos, signed)
            .ok_or_else(|| DecodeError::new(start, "bad variable-length integer"))?;
        *pos += nbits;
        if n.clock {
            self.clock = raw;
        }
        if n.store != NO_REG {
            self.regs[n.store as usize] = if signed {
                raw as i64 as i128
            } else {
                raw as i128
            };
        }
        if let Some(role) = n.role {
            self.set_special(role, raw);
        }
        Ok(Slot {
            node,
            aux: 0,
            val: raw,
        })
    }

    /// A string or BLOB of length `len` at `*pos`.
    fn sized_at(
        &mut self,
        n: &Node,
        node: NodeId,
        len: Len,
        data: &[u8],
        pos: &mut u64,
    ) -> Result<Slot, DecodeError> {
        let len = self.len(len, *pos)?;
        let start = check_byte_aligned(*pos)?;
        start
            .checked_add(len as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| DecodeError::new(*pos, "string or BLOB past the end of the data"))?;
        if n.role == Some(Role::MetadataStreamUuid) && len == 16 {
            self.specials.uuid_at = Some(start as u64);
        }
        *pos += len * 8;
        Ok(Slot {
            node,
            aux: len as u32,
            val: start as u64,
        })
    }

    /// Decodes a [`TaggedHeader`] at bit `*pos`, producing the slots the general path would.
    /// Returns false, having consumed nothing, when the general path must be used instead
    /// (data too short, a tag selecting no option): it then reports the exact error.
    pub fn decode_tagged_header(
        &mut self,
        layout: &Layout,
        h: &TaggedHeader,
        data: &[u8],
        pos: &mut u64,
        out: &mut Vec<Slot>,
    ) -> bool {
        let hn = &layout.nodes[h.header as usize];
        let base = align_up(*pos, hn.align);
        if base.saturating_add(h.max_bits) > data.len() as u64 * 8 {
            return false;
        }
        let at = out.len();
        out.push(Slot {
            node: h.header,
            aux: 0,
            val: 2,
        });
        let tag = self.scalar_at(&layout.nodes[h.tag as usize], h.tag, data, base);
        out.push(tag);
        let NodeKind::Variant {
            tag_reg, ranges, ..
        } = &layout.nodes[h.variant as usize].kind
        else {
            out.truncate(at);
            return false;
        };
        let tag_value = self.regs[*tag_reg as usize];
        let Some(opt) = ranges
            .iter()
            .find(|(r, _)| r.contains(tag_value))
            .map(|(_, o)| *o)
        else {
            out.truncate(at);
            return false;
        };
        let vat = out.len();
        out.push(Slot {
            node: h.variant,
            aux: 0,
            val: opt as u64,
        });
        let (snode, plan) = &h.options[opt as usize];
        let sn = &layout.nodes[*snode as usize];
        let start = align_up(base + h.tag_size as u64, sn.align);
        let sat = out.len();
        out.push(Slot {
            node: *snode,
            aux: 0,
            val: plan.offsets.len() as u64,
        });
        for (m, off) in layout.members_of(*snode).iter().zip(plan.offsets.iter()) {
            let slot = self.scalar_at(&layout.nodes[m.node as usize], m.node, data, start + off);
            out.push(slot);
        }
        let n = out.len();
        out[sat].aux = (n - sat - 1) as u32;
        out[vat].aux = (n - vat - 1) as u32;
        out[at].aux = (n - at - 1) as u32;
        *pos = start + plan.size_bits;
        true
    }

    /// [`Self::scalar_at`] of node `node`, out of line: for the fields of a run that take no
    /// word read.
    #[inline(never)]
    fn scalar_of(&mut self, layout: &Layout, node: NodeId, data: &[u8], pos: u64) -> Slot {
        self.scalar_at(&layout.nodes[node as usize], node, data, pos)
    }

    /// Decodes a fixed-size scalar known to lie inside `data`, applying its side effects
    /// (clock, register, role).
    #[inline]
    fn scalar_at(&mut self, n: &Node, node: NodeId, data: &[u8], pos: u64) -> Slot {
        // The common case first: an integer nothing else depends on.
        if let NodeKind::Int {
            size,
            signed,
            little,
            ..
        } = n.kind
        {
            let raw = read_uint(data, pos, size, little).unwrap_or(0);
            let val = if signed {
                sign_extend(raw, size) as u64
            } else {
                raw
            };
            if n.effects {
                self.int_effects(n, raw, val, size, signed);
            }
            return Slot { node, aux: 0, val };
        }
        let mut s = lazy_slot_of(n, node, data, pos);
        if n.effects {
            if let NodeKind::Bits { kind, .. } = n.kind {
                if kind == BitArrayKind::Boolean {
                    s.val = (s.val != 0) as u64;
                }
                if n.store != NO_REG {
                    self.regs[n.store as usize] = s.val as i128;
                }
                if let Some(role) = n.role {
                    self.set_special(role, s.val);
                }
            }
            if n.role == Some(Role::MetadataStreamUuid) && s.aux == 16 {
                self.specials.uuid_at = Some(s.val);
            }
        }
        s
    }

    /// Clock, register and role updates of an integer.
    #[inline(never)]
    fn int_effects(&mut self, n: &Node, raw: u64, val: u64, size: u32, signed: bool) {
        if n.clock {
            self.update_clock(raw, size);
        }
        if n.store != NO_REG {
            self.regs[n.store as usize] = if signed {
                val as i64 as i128
            } else {
                val as i128
            };
        }
        if let Some(role) = n.role {
            self.set_special(role, raw);
        }
    }

    /// Whether an optional field whose selector is in register `sel_reg` is there: a non-zero
    /// boolean selector, or an integer one within `ranges`.
    #[inline]
    fn optional_present(&self, sel_reg: u16, ranges: &[IntRange]) -> bool {
        let sel = self.regs[sel_reg as usize];
        if ranges.is_empty() {
            sel != 0
        } else {
            ranges.iter().any(|r| r.contains(sel))
        }
    }

    /// The option a variant selects by the tag in register `tag_reg` (bit `pos` for errors).
    #[inline]
    fn variant_option(
        &self,
        tag_reg: u16,
        ranges: &[(IntRange, u32)],
        pos: u64,
    ) -> Result<u32, DecodeError> {
        let tag = self.regs[tag_reg as usize];
        ranges
            .iter()
            .find(|(r, _)| r.contains(tag))
            .map(|(_, o)| *o)
            .ok_or_else(|| DecodeError::new(pos, format!("no variant option for tag value {tag}")))
    }

    fn len(&self, len: Len, pos: u64) -> Result<u64, DecodeError> {
        match len {
            Len::Static(n) => Ok(n),
            Len::Reg(r) => {
                let v = self.regs[r as usize];
                u64::try_from(v).map_err(|_| DecodeError::new(pos, format!("negative length {v}")))
            }
        }
    }

    #[inline]
    fn update_clock(&mut self, raw: u64, size: u32) {
        self.clock = crate::fast::update_clock(self.clock, raw, size);
    }

    fn set_special(&mut self, role: Role, v: u64) {
        let s = &mut self.specials;
        match role {
            Role::PacketMagicNumber => s.magic = Some(v),
            Role::DataStreamClassId => s.stream_class_id = Some(v),
            Role::DataStreamId => s.stream_id = Some(v),
            Role::PacketTotalLength => s.packet_total_bits = Some(v),
            Role::PacketContentLength => s.packet_content_bits = Some(v),
            Role::PacketBeginningDefaultClockTimestamp => s.ts_begin = Some(v),
            Role::PacketEndDefaultClockTimestamp => s.ts_end = Some(v),
            Role::DiscardedEventRecordCounterSnapshot => s.discarded = Some(v),
            Role::PacketSequenceNumber => s.seq_num = Some(v),
            Role::EventRecordClassId => s.event_id = Some(v),
            Role::MetadataStreamUuid | Role::DefaultClockTimestamp => {}
        }
    }
}

/// A null-terminated string at `*pos`.
#[inline]
fn cstring_at(node: NodeId, data: &[u8], pos: &mut u64) -> Result<Slot, DecodeError> {
    let start = check_byte_aligned(*pos)?;
    let rest = data.get(start..).unwrap_or(&[]);
    // File, device and IRQ names of tens of bytes: memchr compares a vector at a time.
    let len =
        memchr::memchr(0, rest).ok_or_else(|| DecodeError::new(*pos, "unterminated string"))?;
    *pos += (len as u64 + 1) * 8;
    Ok(Slot {
        node,
        aux: len.min(u32::MAX as usize) as u32,
        val: start as u64,
    })
}

fn check_byte_aligned(pos: u64) -> Result<usize, DecodeError> {
    if !pos.is_multiple_of(8) {
        return Err(DecodeError::new(pos, "string not byte-aligned"));
    }
    usize::try_from(pos / 8).map_err(|_| DecodeError::new(pos, "offset too large"))
}

/// Reads a LEB128 integer; returns the value and the number of bits consumed.
fn read_leb128(data: &[u8], pos: u64, signed: bool) -> Option<(u64, u64)> {
    let start = usize::try_from(pos / 8).ok()?;
    let mut v: u64 = 0;
    let mut shift = 0u32;
    for (i, &b) in data.get(start..)?.iter().enumerate() {
        if shift < 64 {
            v |= ((b & 0x7f) as u64) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            if signed && shift < 64 && b & 0x40 != 0 {
                v |= u64::MAX << shift;
            }
            return Some((v, (i as u64 + 1) * 8));
        }
        if i >= 9 {
            return None;
        }
    }
    None
}

/// The slot a fixed-size scalar at bit `pos` would have had, read from `data` on access.
#[inline]
pub(crate) fn lazy_slot(layout: &Layout, node: NodeId, data: &[u8], pos: u64) -> Slot {
    lazy_slot_of(&layout.nodes[node as usize], node, data, pos)
}

/// [`lazy_slot`] for a node already looked up.
#[inline]
pub(crate) fn lazy_slot_of(n: &Node, node: NodeId, data: &[u8], pos: u64) -> Slot {
    let (val, aux) = match n.kind {
        NodeKind::Int {
            size,
            signed,
            little,
            ..
        } => {
            let raw = read_uint(data, pos, size, little).unwrap_or(0);
            let v = if signed {
                sign_extend(raw, size) as u64
            } else {
                raw
            };
            (v, 0)
        }
        NodeKind::Bits { size, little, .. } => (read_uint(data, pos, size, little).unwrap_or(0), 0),
        NodeKind::Float { size, little } => {
            let raw = read_uint(data, pos, size, little).unwrap_or(0);
            let f = if size == 32 {
                f32::from_bits(raw as u32) as f64
            } else {
                f64::from_bits(raw)
            };
            (f.to_bits(), 0)
        }
        NodeKind::SizedString {
            len: Len::Static(len),
        } => (pos / 8, len as u32),
        _ => (0, 0),
    };
    Slot { node, aux, val }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Members making runs of every kind: packed and big-endian integers, texts, a float, a
    /// stored length, separated by a sequence, a string and a nested structure.
    const MEMBERS: &str = "integer { size = 8; align = 8; encoding = UTF8; } s[4]; \
         integer { size = 3; align = 1; signed = true; } a; \
         integer { size = 13; align = 1; } b; \
         integer { size = 32; align = 8; signed = true; byte_order = be; } c; \
         integer { size = 8; align = 8; } n; \
         integer { size = 16; align = 16; signed = true; } q[n]; \
         integer { size = 5; align = 1; } d; \
         integer { size = 64; align = 8; signed = true; } e; \
         floating_point { exp_dig = 8; mant_dig = 24; align = 8; } f; \
         integer { size = 61; align = 1; signed = true; byte_order = be; } g; \
         integer { size = 8; align = 8; encoding = UTF8; } t[3]; \
         string u; \
         integer { size = 7; align = 1; } h; \
         integer { size = 32; align = 32; } i; \
         struct { integer { size = 4; align = 1; } x; string y; } v; \
         integer { size = 9; align = 1; signed = true; } j;";

    /// The payload of the one event class of a trace class with these members.
    fn payload(byte_order: &str) -> (Layout, NodeId) {
        let layout = crate::layout::one_event_layout(byte_order, MEMBERS);
        let node = layout
            .streams
            .at(0)
            .events
            .at(0)
            .payload
            .expect("a payload");
        (layout, node)
    }

    /// `layout` with every structure decoded member by member.
    fn one_by_one(layout: &Layout) -> Layout {
        let mut l = layout.clone();
        l.pieces.clear();
        for i in 0..l.nodes.len() {
            if l.nodes[i].plan.is_some() {
                continue;
            }
            if let NodeKind::Struct { first, count } = l.nodes[i].kind {
                let at = l.pieces.len() as u32;
                for m in first..first + count {
                    let child = l.members[m as usize].node;
                    l.pieces.push(Piece::Member(child));
                }
                l.nodes[i].pieces = (at, count);
            }
        }
        l
    }

    proptest! {
        /// Runs decode what member-by-member decoding does: the same slots, position, registers
        /// and errors, at any start and wherever the data ends.
        #[test]
        fn runs_decode_as_members_do(
            seed in any::<u64>(),
            big in any::<bool>(),
            start in 0u64..20,
            len in 0usize..96,
            small_n in 0u8..6,
        ) {
            let (layout, node) = payload(if big { "be" } else { "le" });
            let reference = one_by_one(&layout);
            let mut x = seed | 1;
            let mut data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Zeros often enough for the strings to end.
                    if x % 5 == 0 { 0 } else { x as u8 }
                })
                .collect();
            // A sequence length that fits, wherever the start puts it.
            for b in data.iter_mut().skip(5).take(3) {
                *b = small_n;
            }
            let run = |l: &Layout| {
                let mut dec = Decoder::new(l);
                let (mut pos, mut out) = (start, Vec::new());
                let r = dec.decode(l, node, &data, &mut pos, &mut out);
                let slots: Vec<(u32, u32, u64)> =
                    out.iter().map(|s| (s.node, s.aux, s.val)).collect();
                (r, pos, slots, dec.regs)
            };
            prop_assert_eq!(run(&layout), run(&reference));
        }
    }

    #[test]
    fn leb128() {
        assert_eq!(
            read_leb128(&[0xe5, 0x8e, 0x26], 0, false),
            Some((624485, 24))
        );
        assert_eq!(
            read_leb128(&[0xc0, 0xbb, 0x78], 0, true),
            Some(((-123456i64) as u64, 24))
        );
        assert_eq!(read_leb128(&[0x80], 0, false), None);
    }
}
