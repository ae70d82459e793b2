//! Reading the payload fields the state machine needs: through the CTF field views (any
//! layout), or, for the fixed-layout payloads of most kernel events, by word loads compiled
//! once per event class ([`WordPlan`]).

use ctf::access::{FixedPlan, NodeId, NodeKind, PlanRead, ReadKind, Slot};
use ctf::{Event, FieldView};

use crate::model::{Fields, F};

/// What the state machine reads from a payload. Two implementations, so that the state
/// machine is compiled once for each and the fast one carries no checks of the other.
pub(crate) trait Read<'a>: Copy {
    /// An integer field (signed ones sign-extended).
    fn int(&self, f: F) -> Option<i64>;
    /// The bytes of a string field as stored, NULs (of a fixed-length array) included.
    fn raw_bytes(&self, f: F) -> Option<&'a [u8]>;
    /// The integers of an array or sequence field.
    fn ints(&self, f: F) -> Vec<i64>;

    /// The bytes of a string field, up to its first NUL.
    #[inline]
    fn bytes(&self, f: F) -> Option<&'a [u8]> {
        let b = self.raw_bytes(f)?;
        Some(b.split(|&c| c == 0).next().unwrap_or(b))
    }

    /// The text of a string field (lossy for invalid UTF-8), up to its first NUL.
    fn text(&self, f: F) -> Option<String> {
        self.bytes(f)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// An event's payload, read through its class's pre-resolved field positions
/// ([`crate::Class::payload`]).
#[derive(Clone, Copy)]
pub struct Payload<'a, 'f> {
    payload: Option<FieldView<'a>>,
    /// A fixed-layout payload's bytes, start and plan, looked up once per event rather than
    /// once per integer read (most events read two or three).
    plan: Option<(&'a [u8], u64, &'a FixedPlan)>,
    fields: &'f Fields,
}

impl<'a, 'f> Payload<'a, 'f> {
    /// The payload of `ev`, whose class has the field positions `fields`.
    #[inline]
    pub(crate) fn new(ev: &Event<'a>, fields: &'f Fields) -> Self {
        let payload = ev.payload();
        Payload {
            plan: payload.as_ref().and_then(|p| p.fixed_struct()),
            payload,
            fields,
        }
    }

    /// The field `f`, if the class has it.
    #[inline]
    pub fn field(&self, f: F) -> Option<FieldView<'a>> {
        self.payload.as_ref()?.member_at(self.fields.get(f)?)
    }

    /// The integer field `f` (signed ones sign-extended).
    #[inline(always)]
    pub fn int(&self, f: F) -> Option<i64> {
        let i = self.fields.get(f)?;
        // What `int_member` does, without finding the plan again.
        let v = match self.plan {
            Some((data, base, plan)) => plan.reads.get(i)?.int(data, base),
            None => self.payload.as_ref()?.int_member(i),
        };
        v.map(|v| v as i64)
    }

    /// The bytes of a string field as stored, NULs (of a fixed-length array) included.
    #[inline]
    pub fn raw_bytes(&self, f: F) -> Option<&'a [u8]> {
        match self.field(f)?.value() {
            ctf::FieldValue::Str(b) => Some(b),
            _ => None,
        }
    }

    /// The bytes of a string field, up to its first NUL.
    #[inline]
    pub fn bytes(&self, f: F) -> Option<&'a [u8]> {
        Read::bytes(self, f)
    }

    /// The integers of an array or sequence field.
    pub fn ints(&self, f: F) -> Vec<i64> {
        match self.field(f).map(|f| f.value()) {
            Some(ctf::FieldValue::Array(e)) => e.filter_map(|x| x.as_i64()).collect(),
            Some(ctf::FieldValue::Blob(b)) => b.iter().map(|&x| x as i64).collect(),
            _ => Vec::new(),
        }
    }
}

impl<'a> Read<'a> for Payload<'a, '_> {
    #[inline(always)]
    fn int(&self, f: F) -> Option<i64> {
        Payload::int(self, f)
    }

    #[inline]
    fn raw_bytes(&self, f: F) -> Option<&'a [u8]> {
        Payload::raw_bytes(self, f)
    }

    fn ints(&self, f: F) -> Vec<i64> {
        Payload::ints(self, f)
    }
}

/// How one field of a fixed-layout payload is read from the payload's first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// The class has no such member.
    Absent,
    /// An integer in the 8 bytes from `byte`: the word shifted left by `lsh` then right by
    /// `rsh` (arithmetically when signed) leaves its value.
    Int {
        byte: u32,
        lsh: u8,
        rsh: u8,
        big: bool,
        signed: bool,
    },
    /// A fixed-length text.
    Text { byte: u32, len: u32 },
}

/// The fields the state machine reads from a fixed-layout payload, compiled to word reads, for classes whose
/// fields all have such a read (integers of at most 64 bits that fit in 8 bytes from their
/// first one, fixed-length texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordPlan {
    words: [Word; F::ALL.len()],
    /// The class's payload structure: an event whose payload slot is of another node was not
    /// decoded by its fixed plan.
    node: NodeId,
    /// Bytes from the payload start that the reads touch (an integer's 8-byte load included).
    need: usize,
}

impl WordPlan {
    /// The plan of the class of `ev`, whose field positions are `fields`; None when its payload
    /// has no fixed layout or a field has no word read.
    pub(crate) fn of(ev: &Event<'_>, fields: &Fields) -> Option<WordPlan> {
        let tl = &ev.trace().layout;
        let node = ev.class_layout().payload?;
        let plan = tl.nodes.get(node as usize)?.plan.as_deref()?;
        let mut words = [Word::Absent; F::ALL.len()];
        let mut need = 0usize;
        for &f in F::ALL {
            let Some(i) = fields.get(f) else { continue };
            let (w, end) = compile(plan.reads.get(i)?)?;
            words[f as usize] = w;
            need = need.max(end);
        }
        Some(WordPlan { words, node, need })
    }

    /// The payload of `ev` read by this plan: None when it is not where word reads apply (a
    /// start that is not on a byte, too close to the end of the packet for a word load).
    #[inline(always)]
    pub(crate) fn payload<'a, 'p>(&'p self, ev: &Event<'a>) -> Option<Words<'a, 'p>> {
        let (data, slots) = ev.payload_slots()?;
        let s = slots.first()?;
        let base = s.val;
        if s.node != self.node || !base.is_multiple_of(8) {
            return None;
        }
        let start = usize::try_from(base / 8).ok()?;
        let bytes = data.get(start..start.checked_add(self.need)?)?;
        Some(Words { bytes, plan: self })
    }
}

/// The word read of one member (and the bytes it touches), if it has one.
fn compile(r: &PlanRead) -> Option<(Word, usize)> {
    let off = r.bits.off;
    let byte = u32::try_from(off / 8).ok()?;
    match r.kind {
        ReadKind::UInt | ReadKind::SInt | ReadKind::Bits => {
            let size = r.bits.size;
            let bit = (off % 8) as u32;
            if !(1..=64).contains(&size) || bit + size > 64 {
                return None;
            }
            // Little-endian: the field's bits are bits `bit..bit + size` of the word; big-endian
            // ones start at its most significant bit `bit`.
            let lsh = if r.bits.little { 64 - bit - size } else { bit };
            let w = Word::Int {
                byte,
                lsh: lsh as u8,
                rsh: (64 - size) as u8,
                big: !r.bits.little,
                signed: r.kind == ReadKind::SInt,
            };
            Some((w, byte as usize + 8))
        }
        ReadKind::Text if off.is_multiple_of(8) => Some((
            Word::Text {
                byte,
                len: r.text_len,
            },
            byte as usize + r.text_len as usize,
        )),
        // Booleans, floats: read through the field views.
        _ => None,
    }
}

/// A fixed-layout payload's bytes (from its start, [`WordPlan::need`] of them) and plan.
#[derive(Clone, Copy)]
pub(crate) struct Words<'a, 'p> {
    bytes: &'a [u8],
    plan: &'p WordPlan,
}

impl<'a> Read<'a> for Words<'a, '_> {
    #[inline(always)]
    fn int(&self, f: F) -> Option<i64> {
        match self.plan.words[f as usize] {
            Word::Int {
                byte,
                lsh,
                rsh,
                big,
                signed,
            } => {
                let at = byte as usize;
                let b: [u8; 8] = self.bytes[at..at + 8].try_into().ok()?;
                let w = if big {
                    u64::from_be_bytes(b)
                } else {
                    u64::from_le_bytes(b)
                } << lsh;
                Some(if signed {
                    (w as i64) >> rsh
                } else {
                    (w >> rsh) as i64
                })
            }
            _ => None,
        }
    }

    #[inline(always)]
    fn raw_bytes(&self, f: F) -> Option<&'a [u8]> {
        match self.plan.words[f as usize] {
            Word::Text { byte, len } => {
                let at = byte as usize;
                Some(&self.bytes[at..at + len as usize])
            }
            _ => None,
        }
    }

    /// Arrays and sequences have no fixed layout: a field of a fixed-layout payload is never
    /// one.
    fn ints(&self, _f: F) -> Vec<i64> {
        Vec::new()
    }
}

/// How one field of a payload decoded member by member is read from its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotRead {
    /// The class has no such member.
    Absent,
    /// An integer: the slot's value (signed ones sign-extended by the decoder).
    Int(u16),
    /// A string: the slot's byte offset and length in the packet.
    Text(u16),
}

/// The fields the state machine reads from a payload without a fixed layout (it holds a
/// null-terminated string:
/// `irq_handler_entry`, `openat` entries, network events) read straight from its member
/// slots, for classes whose members take one slot each and whose fields are integers or
/// strings: what the field views would read, without finding each member again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPlan {
    reads: [SlotRead; F::ALL.len()],
    /// The class's payload structure.
    node: NodeId,
    /// Its member count: the slot count of its descendants when each member takes one.
    members: u32,
}

impl SlotPlan {
    /// The plan of the class of `ev`, whose field positions are `fields`; None when its payload
    /// has a fixed layout (see [`WordPlan`]), a member that is not a scalar or a field that is
    /// neither an integer nor a string.
    pub(crate) fn of(ev: &Event<'_>, fields: &Fields) -> Option<SlotPlan> {
        let tl = &ev.trace().layout;
        let node = ev.class_layout().payload?;
        let n = tl.nodes.get(node as usize)?;
        if n.plan.is_some() || !matches!(n.kind, NodeKind::Struct { .. }) {
            return None;
        }
        let members = tl.members_of(node);
        let mut reads = [SlotRead::Absent; F::ALL.len()];
        for &f in F::ALL {
            let Some(i) = fields.get(f) else { continue };
            let m = members.get(i)?;
            let i = u16::try_from(i).ok()?;
            reads[f as usize] = match tl.nodes.get(m.node as usize)?.kind {
                NodeKind::Int { .. } | NodeKind::VarInt { .. } => SlotRead::Int(i),
                NodeKind::CString | NodeKind::SizedString { .. } => SlotRead::Text(i),
                _ => return None,
            };
        }
        Some(SlotPlan {
            reads,
            node,
            members: u32::try_from(members.len()).ok()?,
        })
    }

    /// The payload of `ev` read by this plan: None when its members were not decoded one slot
    /// each (a compound member holding more).
    #[inline]
    pub(crate) fn payload<'a, 'p>(&'p self, ev: &Event<'a>) -> Option<Slots<'a, 'p>> {
        let (data, slots) = ev.payload_slots()?;
        let (head, rest) = slots.split_first()?;
        // A compound slot's `aux` counts its descendants' slots.
        if head.node != self.node || head.aux != self.members {
            return None;
        }
        Some(Slots {
            data,
            slots: rest.get(..self.members as usize)?,
            plan: self,
        })
    }
}

/// A payload's member slots, the packet bytes their strings point into, and the plan.
#[derive(Clone, Copy)]
pub(crate) struct Slots<'a, 'p> {
    data: &'a [u8],
    slots: &'a [Slot],
    plan: &'p SlotPlan,
}

impl<'a> Read<'a> for Slots<'a, '_> {
    #[inline]
    fn int(&self, f: F) -> Option<i64> {
        match self.plan.reads[f as usize] {
            // What `FieldView::as_i64` gives: the raw bits, sign-extended when signed.
            SlotRead::Int(i) => Some(self.slots.get(i as usize)?.val as i64),
            _ => None,
        }
    }

    #[inline]
    fn raw_bytes(&self, f: F) -> Option<&'a [u8]> {
        match self.plan.reads[f as usize] {
            SlotRead::Text(i) => {
                let s = self.slots.get(i as usize)?;
                let at = s.val as usize;
                // As the field views read a string slot: empty when out of the packet.
                Some(self.data.get(at..at + s.aux as usize).unwrap_or(&[]))
            }
            _ => None,
        }
    }

    /// Arrays and sequences are not read by slot plans: a plan's fields are never ones.
    fn ints(&self, _f: F) -> Vec<i64> {
        Vec::new()
    }
}
