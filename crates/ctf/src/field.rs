//! Zero-copy views over decoded fields.

use crate::decode::Slot;
use crate::ir::{BitArrayKind, DisplayBase, EnumMapping, Role};
use crate::layout::{Layout, NodeKind};
use crate::value::Value;

/// A decoded field: its type node, its slot and the bytes it was decoded from.
#[derive(Clone, Copy)]
pub struct FieldView<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) slots: &'a [Slot],
    pub(crate) idx: usize,
    pub(crate) data: &'a [u8],
}

/// The value of a field, borrowing from the trace data.
pub enum FieldValue<'a> {
    UInt {
        value: u64,
        base: DisplayBase,
        mappings: Option<&'a [EnumMapping]>,
    },
    SInt {
        value: i64,
        base: DisplayBase,
        mappings: Option<&'a [EnumMapping]>,
    },
    Bool(bool),
    /// A CTF 2 bit array or bit map, with its flags (name → bit ranges).
    Bits(u64),
    Float(f64),
    Str(&'a [u8]),
    Blob(&'a [u8]),
    Struct(Members<'a>),
    Array(Elements<'a>),
    Variant(&'a str, FieldView<'a>),
    Optional(Option<FieldView<'a>>),
}

impl<'a> FieldView<'a> {
    #[inline]
    fn slot(&self) -> &'a Slot {
        &self.slots[self.idx]
    }

    /// Number of slots this field spans (itself and its descendants).
    #[inline]
    pub(crate) fn span(&self) -> usize {
        span_of(self.layout, self.slots, self.idx)
    }

    /// The decoded value.
    pub fn value(&self) -> FieldValue<'a> {
        let s = self.slot();
        let layout = self.layout;
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
            NodeKind::Bits { kind, .. } => match kind {
                BitArrayKind::Boolean => FieldValue::Bool(s.val != 0),
                _ => FieldValue::Bits(s.val),
            },
            NodeKind::Float { .. } => FieldValue::Float(f64::from_bits(s.val)),
            NodeKind::CString | NodeKind::SizedString { .. } => {
                FieldValue::Str(self.bytes(s.val as usize, s.aux as usize))
            }
            NodeKind::Blob { .. } => FieldValue::Blob(self.bytes(s.val as usize, s.aux as usize)),
            NodeKind::Struct { .. } => FieldValue::Struct(Members {
                view: *self,
                next: self.idx + 1,
                member: 0,
            }),
            NodeKind::Array { .. } => FieldValue::Array(Elements {
                view: *self,
                next: self.idx + 1,
                left: s.val as usize,
            }),
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
        }
    }

    fn bytes(&self, at: usize, len: usize) -> &'a [u8] {
        self.data.get(at..at + len).unwrap_or(&[])
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

    /// The member named `name`, when this field is a structure.
    pub fn field(&self, name: &str) -> Option<FieldView<'a>> {
        match self.value() {
            FieldValue::Struct(m) => m.into_iter().find(|(n, _)| *n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The integer value (any signedness, enumerations included).
    pub fn as_i128(&self) -> Option<i128> {
        match self.value() {
            FieldValue::UInt { value, .. } | FieldValue::Bits(value) => Some(value as i128),
            FieldValue::SInt { value, .. } => Some(value as i128),
            FieldValue::Bool(b) => Some(b as i128),
            _ => None,
        }
    }

    /// The integer value as an i64 (unsigned values are reinterpreted).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_i128().map(|v| v as i64)
    }

    /// The integer value as a u64 (signed values are reinterpreted).
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i128().map(|v| v as u64)
    }

    /// The bytes of a string field, up to its first NUL.
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
}

pub(crate) fn span_of(layout: &Layout, slots: &[Slot], idx: usize) -> usize {
    let s = &slots[idx];
    match layout.nodes[s.node as usize].kind {
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
        let node = self.view.slot().node;
        let m = layout.members_of(node).get(self.member)?;
        let v = FieldView {
            idx: self.next,
            ..self.view
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
}

impl<'a> Iterator for Elements<'a> {
    type Item = FieldView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
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
