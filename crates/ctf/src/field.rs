//! Zero-copy views over decoded fields.

use crate::decode::{lazy_slot, Slot};
use crate::ir::{BitArrayKind, DisplayBase, EnumMapping, Role};
use crate::layout::{Layout, NodeId, NodeKind};
use crate::value::Value;

/// A decoded field: its type node, its slot and the bytes it was decoded from.
#[derive(Clone, Copy)]
pub struct FieldView<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) slots: &'a [Slot],
    pub(crate) idx: usize,
    pub(crate) data: &'a [u8],
    /// A member of a fixed-plan structure: its node and bit position (it has no slot).
    pub(crate) fixed: Option<(NodeId, u64)>,
}

/// The value of a field, borrowing from the trace data.
pub enum FieldValue<'a> {
    /// An unsigned integer or enumeration (fixed or variable length).
    UInt {
        /// The value.
        value: u64,
        /// Preferred display base.
        base: DisplayBase,
        /// The enumeration's labels, if it is one.
        mappings: Option<&'a [EnumMapping]>,
    },
    /// A signed integer or enumeration.
    SInt {
        /// The value.
        value: i64,
        /// Size in bits (64 for variable-length integers).
        size: u32,
        /// Preferred display base.
        base: DisplayBase,
        /// The enumeration's labels, if it is one.
        mappings: Option<&'a [EnumMapping]>,
    },
    /// A boolean (CTF 2).
    Bool(bool),
    /// A CTF 2 bit array or bit map, with its flags (name → bit ranges).
    Bits(u64),
    /// A floating point number (32-bit ones widened).
    Float(f64),
    /// A string's bytes, without its terminator (traces may hold invalid UTF-8).
    Str(&'a [u8]),
    /// A BLOB's bytes.
    Blob(&'a [u8]),
    /// A structure: its members in order.
    Struct(Members<'a>),
    /// An array or sequence: its elements in order.
    Array(Elements<'a>),
    /// A variant: the selected option's name and value.
    Variant(&'a str, FieldView<'a>),
    /// An optional field (CTF 2): its value when present.
    Optional(Option<FieldView<'a>>),
}

impl<'a> FieldView<'a> {
    #[inline]
    fn slot(&self) -> Slot {
        match self.fixed {
            Some((node, pos)) => lazy_slot(self.layout, node, self.data, pos),
            None => self.slots[self.idx],
        }
    }

    /// Number of slots this field spans (itself and its descendants).
    #[inline]
    pub(crate) fn span(&self) -> usize {
        if self.fixed.is_some() {
            0
        } else {
            span_of(self.layout, self.slots, self.idx)
        }
    }

    /// Walks this field and everything below it, pushing each to `v` in order: cheaper than
    /// navigating views when every field is wanted (printers, exporters).
    pub fn walk<V: FieldVisitor>(&self, v: &mut V) {
        match self.fixed {
            Some((node, pos)) => {
                let s = lazy_slot(self.layout, node, self.data, pos);
                let n = &self.layout.nodes[node as usize];
                v.value(None, n.role, &scalar_value(self.layout, s, self.data));
            }
            None => {
                self.walk_at(self.idx, None, v);
            }
        }
    }

    fn walk_at<V: FieldVisitor>(&self, idx: usize, name: Option<&'a str>, v: &mut V) -> usize {
        let layout = self.layout;
        let s = self.slots[idx];
        let n = &layout.nodes[s.node as usize];
        match &n.kind {
            NodeKind::Struct { .. } => {
                v.enter(name, Compound::Struct);
                let members = layout.members_of(s.node);
                let next = if let Some(plan) = &n.plan {
                    for (m, off) in members.iter().zip(plan.offsets.iter()) {
                        let mn = &layout.nodes[m.node as usize];
                        let ms = crate::decode::lazy_slot_of(mn, m.node, self.data, s.val + off);
                        v.value(Some(&m.name), mn.role, &scalar_value(layout, ms, self.data));
                    }
                    idx + 1
                } else {
                    let mut i = idx + 1;
                    for m in members {
                        i = self.walk_at(i, Some(&m.name), v);
                    }
                    i
                };
                v.leave();
                next
            }
            NodeKind::Array { elem, .. } if n.stride > 0 => {
                v.enter(name, Compound::Array(s.aux as usize));
                let en = &layout.nodes[*elem as usize];
                for i in 0..s.aux as u64 {
                    let es =
                        crate::decode::lazy_slot_of(en, *elem, self.data, s.val + i * n.stride);
                    v.value(None, en.role, &scalar_value(layout, es, self.data));
                }
                v.leave();
                idx + 1
            }
            NodeKind::Array { .. } => {
                v.enter(name, Compound::Array(s.val as usize));
                let mut i = idx + 1;
                for _ in 0..s.val {
                    i = self.walk_at(i, None, v);
                }
                v.leave();
                i
            }
            NodeKind::Variant { .. } => {
                let opt = &layout.members_of(s.node)[s.val as usize];
                v.enter(name, Compound::Variant(&opt.name));
                let i = self.walk_at(idx + 1, None, v);
                v.leave();
                i
            }
            NodeKind::Optional { .. } => {
                v.enter(name, Compound::Optional(s.val != 0));
                let i = if s.val != 0 {
                    self.walk_at(idx + 1, None, v)
                } else {
                    idx + 1
                };
                v.leave();
                i
            }
            _ => {
                v.value(name, n.role, &scalar_value(layout, s, self.data));
                idx + 1
            }
        }
    }

    /// The decoded value.
    pub fn value(&self) -> FieldValue<'a> {
        let s = self.slot();
        let layout = self.layout;
        match &layout.nodes[s.node as usize].kind {
            NodeKind::Struct { .. } => FieldValue::Struct(Members {
                view: *self,
                next: self.idx + 1,
                member: 0,
            }),
            NodeKind::Array { elem, .. } => {
                let stride = layout.nodes[s.node as usize].stride;
                FieldValue::Array(Elements {
                    view: *self,
                    next: self.idx + 1,
                    left: if stride > 0 {
                        s.aux as usize
                    } else {
                        s.val as usize
                    },
                    lazy: (stride > 0).then_some((*elem, s.val, stride)),
                })
            }
            NodeKind::Variant { .. } => {
                let opt = &layout.members_of(s.node)[s.val as usize];
                FieldValue::Variant(
                    &opt.name,
                    FieldView {
                        idx: self.idx + 1,
                        ..*self
                    },
                )
            }
            NodeKind::Optional { .. } => FieldValue::Optional((s.val != 0).then_some(FieldView {
                idx: self.idx + 1,
                ..*self
            })),
            _ => scalar_value(layout, s, self.data),
        }
    }

    /// The role of this field (packet sizes, timestamps, ids…), if any.
    pub fn role(&self) -> Option<Role> {
        self.layout.nodes[self.slot().node as usize].role
    }

    /// Mask of the bits of a fixed-size integer field (all ones for other fields).
    pub fn int_mask(&self) -> u64 {
        match self.layout.nodes[self.slot().node as usize].kind {
            NodeKind::Int { size, .. } | NodeKind::Bits { size, .. } if size < 64 => {
                (1u64 << size) - 1
            }
            _ => u64::MAX,
        }
    }

    /// Reads every scalar value at or below this field and folds their raw bits together: a
    /// cheap way to decode everything eagerly (what `tracekit count` does) without building
    /// views.
    pub fn fold_raw(&self) -> u64 {
        if let Some((node, pos)) = self.fixed {
            return lazy_slot(self.layout, node, self.data, pos).val;
        }
        let mut acc = 0u64;
        let end = self.idx + self.span();
        for s in &self.slots[self.idx..end] {
            let n = &self.layout.nodes[s.node as usize];
            match &n.plan {
                Some(plan) => {
                    for r in plan.reads.iter() {
                        acc = acc.wrapping_add(r.fold(self.data, s.val));
                    }
                }
                None if n.stride > 0 => {
                    if let NodeKind::Array { elem, .. } = n.kind {
                        let r =
                            crate::fast::PlanRead::of(&self.layout.nodes[elem as usize].kind, 0);
                        for i in 0..s.aux as u64 {
                            acc = acc.wrapping_add(r.fold(self.data, s.val + i * n.stride));
                        }
                    }
                }
                // Compound slots hold counts, which depend on how elements are stored: only
                // scalar values are folded.
                None if matches!(
                    n.kind,
                    NodeKind::Struct { .. }
                        | NodeKind::Array { .. }
                        | NodeKind::Variant { .. }
                        | NodeKind::Optional { .. }
                ) => {}
                None => acc = acc.wrapping_add(s.val ^ s.aux as u64),
            }
        }
        acc
    }

    /// Member `i` of a structure: O(1) for fixed-layout structures (most kernel payloads),
    /// otherwise a skip over the preceding members' slots.
    #[inline]
    pub fn member_at(&self, i: usize) -> Option<FieldView<'a>> {
        if self.fixed.is_some() {
            return None;
        }
        let s = self.slots[self.idx];
        let n = &self.layout.nodes[s.node as usize];
        if !matches!(n.kind, NodeKind::Struct { .. }) {
            return None;
        }
        let m = self.layout.members_of(s.node).get(i)?;
        if let Some(plan) = &n.plan {
            return Some(FieldView {
                fixed: Some((m.node, s.val + plan.offsets[i])),
                ..*self
            });
        }
        // Leading fixed-size scalars take one slot each.
        if n.prefix.as_ref().is_some_and(|p| i < p.offsets.len()) {
            return Some(FieldView {
                idx: self.idx + 1 + i,
                ..*self
            });
        }
        let mut idx = self.idx + 1;
        for _ in 0..i {
            idx += span_of(self.layout, self.slots, idx);
        }
        Some(FieldView { idx, ..*self })
    }

    /// For a fixed-layout structure: the bytes it was decoded from, its start (bit position
    /// in those bytes) and its plan, whose [`PlanRead`](crate::access::PlanRead)s read each member
    /// directly (what printers and exporters of whole events want).
    #[inline]
    pub fn fixed_struct(&self) -> Option<(&'a [u8], u64, &'a crate::layout::FixedPlan)> {
        if self.fixed.is_some() {
            return None;
        }
        let s = self.slots[self.idx];
        let plan = self.layout.nodes[s.node as usize].plan.as_deref()?;
        Some((self.data, s.val, plan))
    }

    /// The slots of a structure decoded member by member (it has no fixed plan: strings,
    /// say) whose members take one slot each (scalars, fixed-plan structures), in member
    /// order, with the bytes their string slots point into: what a printer that knows the
    /// members' kinds from the layout reads values from without a walk.
    pub fn member_slots(&self) -> Option<(&'a [Slot], &'a [u8])> {
        if self.fixed.is_some() {
            return None;
        }
        let s = self.slots[self.idx];
        let n = &self.layout.nodes[s.node as usize];
        if !matches!(n.kind, NodeKind::Struct { .. }) || n.plan.is_some() {
            return None;
        }
        let count = self.layout.members_of(s.node).len();
        // A compound's `aux` counts its descendants' slots.
        if s.aux as usize != count {
            return None;
        }
        let members = self.slots.get(self.idx + 1..self.idx + 1 + count)?;
        Some((members, self.data))
    }

    /// The integer value of member `i` of a structure: [`Self::member_at`] then
    /// [`Self::as_i128`], read straight from the layout for fixed-layout structures.
    #[inline]
    pub fn int_member(&self, i: usize) -> Option<i128> {
        if self.fixed.is_none() {
            let s = self.slots[self.idx];
            if let Some(plan) = &self.layout.nodes[s.node as usize].plan {
                return plan.reads.get(i)?.int(self.data, s.val);
            }
        }
        self.member_at(i)?.as_i128()
    }

    /// The member named `name`, when this field is a structure.
    pub fn field(&self, name: &str) -> Option<FieldView<'a>> {
        match self.value() {
            FieldValue::Struct(m) => m.into_iter().find(|(n, _)| *n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The integer value (any signedness, enumerations included).
    #[inline]
    pub fn as_i128(&self) -> Option<i128> {
        // Straight from the slot: analyses read integers on every event.
        let s = self.slot();
        match self.layout.nodes[s.node as usize].kind {
            NodeKind::Int { signed: true, .. } | NodeKind::VarInt { signed: true, .. } => {
                Some(s.val as i64 as i128)
            }
            NodeKind::Int { .. } | NodeKind::VarInt { .. } => Some(s.val as i128),
            NodeKind::Bits {
                kind: BitArrayKind::Boolean,
                ..
            } => Some((s.val != 0) as i128),
            NodeKind::Bits { .. } => Some(s.val as i128),
            _ => None,
        }
    }

    /// The integer value as an i64 (unsigned values are reinterpreted).
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        self.as_i128().map(|v| v as i64)
    }

    /// The integer value as a u64 (signed values are reinterpreted).
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i128().map(|v| v as u64)
    }

    /// The bytes of a string field, up to its first NUL.
    #[inline]
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match self.value() {
            FieldValue::Str(b) => Some(b.split(|&c| c == 0).next().unwrap_or(b)),
            _ => None,
        }
    }

    /// The text of a string field (lossy for invalid UTF-8), up to its first NUL.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.as_bytes().map(String::from_utf8_lossy)
    }

    /// Copies the field into an owned [`Value`].
    pub fn to_value(&self) -> Value {
        match self.value() {
            FieldValue::UInt { value, .. } | FieldValue::Bits(value) => Value::U64(value),
            FieldValue::SInt { value, .. } => Value::I64(value),
            FieldValue::Bool(b) => Value::U64(b as u64),
            FieldValue::Float(f) => Value::Float(f),
            FieldValue::Str(s) => Value::Str(s.to_vec()),
            FieldValue::Blob(b) => Value::Bytes(b.to_vec()),
            FieldValue::Struct(m) => Value::Struct(m.map(|(_, v)| v.to_value()).collect()),
            FieldValue::Array(e) => Value::Array(e.map(|v| v.to_value()).collect()),
            FieldValue::Variant(_, v) => {
                Value::Variant(self.slot().val as usize, Box::new(v.to_value()))
            }
            FieldValue::Optional(o) => o.map_or(Value::Absent, |v| v.to_value()),
        }
    }

    /// The decoded slots this field's slot is among, its index there, and the bytes they were
    /// decoded from: what a printer that follows the layout reads a whole scope from without
    /// a walk. None for a member read on access (it has no slot).
    pub fn slot_list(&self) -> Option<(&'a [Slot], usize, &'a [u8])> {
        if self.fixed.is_some() {
            return None;
        }
        Some((self.slots, self.idx, self.data))
    }

    /// The field of slot `idx` of [`Self::slot_list`]'s slots.
    pub fn at_slot(&self, idx: usize) -> Option<FieldView<'a>> {
        if self.fixed.is_some() || idx >= self.slots.len() {
            return None;
        }
        Some(FieldView { idx, ..*self })
    }

    /// The fixed-size scalar `node` at bit `pos` of this field's bytes, read on access (a
    /// member of a fixed-layout structure, an element of a strided array); None when `node`
    /// is not such a scalar.
    pub fn scalar_at(&self, node: NodeId, pos: u64) -> Option<FieldView<'a>> {
        match self.layout.nodes.get(node as usize)?.kind {
            NodeKind::Int { .. }
            | NodeKind::Bits { .. }
            | NodeKind::Float { .. }
            | NodeKind::SizedString {
                len: crate::layout::Len::Static(_),
            } => Some(FieldView {
                fixed: Some((node, pos)),
                ..*self
            }),
            _ => None,
        }
    }
}

pub(crate) fn span_of(layout: &Layout, slots: &[Slot], idx: usize) -> usize {
    let s = &slots[idx];
    let n = &layout.nodes[s.node as usize];
    match n.kind {
        NodeKind::Array { .. } if n.stride > 0 => 1,
        NodeKind::Struct { .. }
        | NodeKind::Array { .. }
        | NodeKind::Variant { .. }
        | NodeKind::Optional { .. } => 1 + s.aux as usize,
        _ => 1,
    }
}

/// Iterator over the `(name, field)` members of a structure.
pub struct Members<'a> {
    view: FieldView<'a>,
    next: usize,
    member: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, FieldView<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let layout = self.view.layout;
        let s = self.view.slot();
        let m = layout.members_of(s.node).get(self.member)?;
        let v = match &layout.nodes[s.node as usize].plan {
            Some(plan) => FieldView {
                fixed: Some((m.node, s.val + plan.offsets[self.member])),
                ..self.view
            },
            None => FieldView {
                idx: self.next,
                ..self.view
            },
        };
        self.member += 1;
        self.next += v.span();
        Some((&m.name, v))
    }
}

/// Iterator over the elements of an array or sequence.
pub struct Elements<'a> {
    view: FieldView<'a>,
    next: usize,
    left: usize,
    /// Elements read on access: element node, next element's bit position, element size.
    lazy: Option<(NodeId, u64, u64)>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = FieldView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        if let Some((node, pos, stride)) = &mut self.lazy {
            self.left -= 1;
            let v = FieldView {
                fixed: Some((*node, *pos)),
                ..self.view
            };
            *pos += *stride;
            return Some(v);
        }
        let v = FieldView {
            idx: self.next,
            ..self.view
        };
        self.left -= 1;
        self.next += v.span();
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Elements<'_> {}

/// A compound field entered during [`FieldView::walk`].
#[derive(Debug, Clone, Copy)]
pub enum Compound<'a> {
    /// A structure.
    Struct,
    /// An array or sequence of this many elements.
    Array(usize),
    /// A variant with its selected option's name.
    Variant(&'a str),
    /// An optional field, present or not.
    Optional(bool),
}

/// Receives the fields of a walk in order. Scalars come with their member name (None for array
/// elements and variant/optional contents) and role; compounds are bracketed by `enter`/`leave`.
pub trait FieldVisitor {
    /// A scalar field (`name` None for array elements and variant or optional contents).
    fn value(&mut self, name: Option<&str>, role: Option<Role>, value: &FieldValue<'_>);
    /// A compound field begins; its contents follow until the matching [`Self::leave`].
    fn enter(&mut self, name: Option<&str>, kind: Compound<'_>);
    /// The innermost compound field entered ends.
    fn leave(&mut self);
}

/// The value of a scalar slot.
fn scalar_value<'a>(layout: &'a Layout, s: Slot, data: &'a [u8]) -> FieldValue<'a> {
    let bytes = |at: usize, len: usize| data.get(at..at + len).unwrap_or(&[]);
    match &layout.nodes[s.node as usize].kind {
        NodeKind::Int {
            signed,
            base,
            enum_idx,
            ..
        }
        | NodeKind::VarInt {
            signed,
            base,
            enum_idx,
        } => {
            let mappings = enum_idx.map(|i| &*layout.enums[i as usize]);
            if *signed {
                FieldValue::SInt {
                    value: s.val as i64,
                    size: int_size(&layout.nodes[s.node as usize].kind),
                    base: *base,
                    mappings,
                }
            } else {
                FieldValue::UInt {
                    value: s.val,
                    base: *base,
                    mappings,
                }
            }
        }
        NodeKind::Bits {
            kind: BitArrayKind::Boolean,
            ..
        } => FieldValue::Bool(s.val != 0),
        NodeKind::Bits { .. } => FieldValue::Bits(s.val),
        NodeKind::Float { .. } => FieldValue::Float(f64::from_bits(s.val)),
        NodeKind::CString | NodeKind::SizedString { .. } => {
            FieldValue::Str(bytes(s.val as usize, s.aux as usize))
        }
        NodeKind::Blob { .. } => FieldValue::Blob(bytes(s.val as usize, s.aux as usize)),
        _ => FieldValue::Bits(s.val),
    }
}

fn int_size(kind: &NodeKind) -> u32 {
    match kind {
        NodeKind::Int { size, .. } => *size,
        _ => 64,
    }
}
