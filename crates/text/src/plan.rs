//! Per-event-class print plans: the text of an event is a sequence of literals (name, braces,
//! `member = ` separators) and values, whose literals and formats depend only on the class and
//! the shape of the event's compounds. They are rendered once per class; an event then only
//! costs its values, formatted straight into the output without intermediate buffers.
//!
//! When every scope of the class is a fixed-layout structure, the plan reads each value
//! straight from the structure's [`ctf::access::FixedPlan`] and writes the whole line into a
//! slice known to have room for its longest form ([`ClassPlan::write_direct`]): no `Vec`
//! capacity checks or length updates per piece, and the literals are copied as fixed-size
//! blocks. Other classes (nested structures, arrays, variants, strings) run a flat program
//! compiled from the layout over the decoder's slots ([`ClassPlan::write_tree`], `Prog`):
//! the literals between two values merged, structures inline, an array's element ops run in
//! a loop, small flag structures looked up by their byte. Slots the program does not expect
//! are followed along the tree it was compiled from, or walked, the walk's callbacks matched
//! against the tree.
//!
//! The plan is checked against each event (scope presence, each slot's node or the walk's
//! shape, number of values); anything unexpected sends the event back to the general writer,
//! so the output is always the one [`crate::printer`] gives.

use ctf::access::Slot;
use ctf::access::{read_uint, sign_extend};
use ctf::access::{Layout, NodeId, NodeKind};
use ctf::field::{Compound, FieldValue, FieldVisitor};
use ctf::ir::{DisplayBase, Role};
use ctf::stream::Event;
use ctf::FieldView;

use crate::put::{hex_at, i64_at, str_at, u64_at};
use crate::value::{put_value, write_enum_open};

/// A literal stored padded to whole [`LIT_BLOCK`]-byte blocks, two at least, copied as one
/// fixed-size block of two (then the rest, if any): fixed-size copies compile to a few moves
/// where a variable-length copy is a `memcpy` call.
pub struct Lit {
    padded: Box<[u8]>,
    len: usize,
}

impl Lit {
    pub fn new(bytes: &[u8]) -> Lit {
        let mut padded = bytes.to_vec();
        let blocks = bytes.len().div_ceil(LIT_BLOCK).max(2);
        padded.resize(blocks * LIT_BLOCK, 0);
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

    /// Writes the literal at `at` in `b`, which has room for [`Self::room`] bytes there;
    /// returns where it ends.
    #[inline(always)]
    pub fn put_at(&self, b: &mut [u8], at: usize) -> usize {
        let dst = &mut b[at..at + self.padded.len()];
        let (first, rest) = dst.split_at_mut(2 * LIT_BLOCK);
        first.copy_from_slice(&self.padded[..2 * LIT_BLOCK]);
        if !rest.is_empty() {
            rest.copy_from_slice(&self.padded[2 * LIT_BLOCK..]);
        }
        at + self.len
    }
}

/// Bytes a [`Lit`] is padded to a multiple of: two vector moves. A line's lead (label, name,
/// packet context, first member name) is typically 50 to 90 bytes, mostly within the two
/// blocks copied at once.
const LIT_BLOCK: usize = 32;

/// The compiled text of one event class.
pub struct ClassPlan {
    /// `label name: `.
    pub head: Lit,
    /// Which of the common context, specific context and payload the class has.
    scopes: [bool; 3],
    /// Whether the class has any scope (then a packet context is followed by `, `).
    any_scope: bool,
    /// What the form writes first, before any value: for a direct form, the literal before its
    /// first value (or the whole text when there is none); nothing for a walked form.
    first: Lit,
    form: Form,
    /// The head, the packet context and [`Self::first`], as one literal, for the packet
    /// `(stream index, packet key)` it was last used for and the version of the packet text
    /// it holds (see [`Self::lead_room`]).
    lead: Option<((usize, u64), u64, Lit)>,
}

/// How the scopes of a class are written.
enum Form {
    /// Every scope is a fixed-layout structure of scalars: values read straight from the
    /// structures' plans ([`ClassPlan::write_direct`]).
    Direct(Direct),
    /// Anything else without optionals: the scopes' slots are read along a tree compiled from
    /// the layout ([`ClassPlan::write_tree`]).
    Tree(Box<Tree>),
}

/// How to write an event whose scopes are fixed-layout structures: each value read straight
/// from the event's bytes at an offset worked out when the plan is built, no walk.
struct Direct {
    /// Per value: where and how to read it, how to format it, and the literal after it.
    steps: Vec<Step>,
    /// Per present scope, in order: its values and the bytes its reads touch.
    scopes: Vec<ScopeSteps>,
    /// Bytes the values and their literals take at most (an upper bound of what
    /// [`ClassPlan::write_direct`] writes after the lead, [`Op::General`] values apart).
    body_max: usize,
    /// The only scope is the payload, of fixed layout.
    payload_only: bool,
}

/// The values of one scope of a [`Direct`] plan.
struct ScopeSteps {
    /// Which scope: 0 the common context, 1 the specific context, 2 the payload.
    which: usize,
    /// How many values (members) the scope has: checked against the event's structure plan.
    values: usize,
    /// Bytes from the structure's first byte that its steps' reads may load (8-byte words
    /// included): when the event's data holds them, every read of the scope is in bounds.
    need: usize,
    /// The structure's size, to tell a short read at the data's end from a truncated event.
    size_bits: u64,
    /// The structure has no fixed layout (it holds strings) and its members are scalars: the
    /// values are the decoder's member slots (as [`FieldView::member_slots`] gives them), not
    /// word reads.
    slots: bool,
    /// The structure's layout node, which the event's slot of the scope must be of.
    node: NodeId,
    /// The scope is the stream's event context and every value is read from the structure's
    /// own bytes: its text is a function of those bytes, and is taken from [`ScopeMemo`] when
    /// they repeat (the same thread's context over a run of events).
    memo: bool,
    /// Bytes the scope's text takes at most (each value's `max_len` and the literal block
    /// after it) when every value is written by a bounded op; 0 when one may be written the
    /// general way, whose length the plan does not bound.
    room: usize,
}

/// What [`ClassPlan::write_direct`] keeps from one event to the next (one argument, not two:
/// the call's arguments then stay in registers).
#[derive(Default)]
pub struct DirectBufs {
    /// A structure read from a zero-padded copy.
    padded: Vec<u8>,
    /// The last stream event context written.
    memo: ScopeMemo,
}

/// The text of the last stream event context written by [`ClassPlan::write_direct`], and the
/// bytes it was written from. Contexts (process name, ids, priority) repeat from one event of
/// a stream to the next until the CPU switches tasks, and copying them costs less than
/// formatting their values again.
#[derive(Default)]
struct ScopeMemo {
    /// Trace index and structure node of the text; None while nothing is held.
    key: Option<(usize, NodeId)>,
    /// The structure's bytes.
    bytes: Vec<u8>,
    /// Its values and the literals between them (not the literal after the last value, which
    /// depends on the event class).
    text: Vec<u8>,
}

/// Longest string a [`Op::Str`] value writes in place (longer ones are written the general
/// way): what the room planned for each is made of.
const STR_MAX: usize = 128;

/// Longest literal a [`Step`] holds inline: a member name of up to 26 bytes after `, ` and
/// before ` = ` (longer ones make the class go through the walk).
const STEP_LIT: usize = 32;

/// One value of a [`Direct`] plan and the literal that follows it, stored inline and copied
/// as one fixed-size block. An integer (little-endian) is one 8-byte load at `byte` and two
/// shifts: `left` drops the bits above the field, `right` those below it
/// (arithmetic for signed fields, which sign-extends it at no extra cost).
struct Step {
    op: Op,
    /// Offset of the loaded word (or of a text's first byte) from the structure's first byte.
    byte: u32,
    /// The member's index in its structure, for values written the general way (kept here
    /// rather than counted along the loop).
    member: u32,
    left: u8,
    right: u8,
    lit_len: u8,
    lit: [u8; STEP_LIT],
}

/// How a value of a fixed-layout structure is written.
#[derive(Clone, Copy)]
enum Op {
    Unsigned,
    Signed,
    Hex,
    /// A text of this many bytes.
    Text(u32),
    /// A string member of a structure read from its slots (at most [`STR_MAX`] bytes).
    Str,
    /// Anything else (enumerations, floats, other bases, integers that do not fit one 8-byte
    /// load…): through [`FieldValue`].
    General,
}

impl Op {
    /// The format of a member of kind `kind` read by `read`; integers only when they are
    /// little-endian (as tracers on common hardware write them: big-endian ones go the general
    /// way rather than cost every value a byte-order test) and one load from a byte-aligned
    /// structure reads them.
    fn of(kind: &NodeKind, read: &ctf::access::PlanRead) -> Op {
        let one_load = read.bits.little && read.bits.off % 8 + read.bits.size as u64 <= 64;
        match *kind {
            NodeKind::Int {
                signed,
                base,
                enum_idx: None,
                ..
            } if one_load => match (signed, base) {
                (false, DisplayBase::Decimal) => Op::Unsigned,
                (true, DisplayBase::Decimal) => Op::Signed,
                (false, DisplayBase::Hexadecimal) => Op::Hex,
                _ => Op::General,
            },
            NodeKind::SizedString {
                len: ctf::access::Len::Static(n),
            } if read.bits.off.is_multiple_of(8) && n <= u32::MAX as u64 => Op::Text(n as u32),
            _ => Op::General,
        }
    }

    /// The format of member kind `kind` of a structure read from its slots.
    fn of_slot(kind: &NodeKind) -> Op {
        match *kind {
            NodeKind::Int {
                signed,
                base,
                enum_idx: None,
                size,
                ..
            } if size <= 64 => match (signed, base) {
                (false, DisplayBase::Decimal) => Op::Unsigned,
                (true, DisplayBase::Decimal) => Op::Signed,
                (false, DisplayBase::Hexadecimal) => Op::Hex,
                _ => Op::General,
            },
            NodeKind::CString | NodeKind::SizedString { .. } => Op::Str,
            _ => Op::General,
        }
    }

    /// Bytes the value takes at most ([`Op::General`]: checked when written).
    fn max_len(self) -> usize {
        match self {
            // 20 digits, or `-` and 19 digits.
            Op::Unsigned | Op::Signed => 20,
            Op::Hex => 18,
            // Quotes, and each byte escaped as `\xNN` at worst; plus the 16-byte block copy.
            Op::Text(n) => 2 + (4 * n as usize).max(16),
            Op::Str => 2 + 4 * STR_MAX,
            Op::General => 0,
        }
    }

    /// Bytes from a step's `byte` that its read may load.
    fn span(self) -> usize {
        match self {
            Op::Unsigned | Op::Signed | Op::Hex => 8,
            Op::Text(n) => n as usize,
            Op::Str | Op::General => 0,
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
    /// The plan of `ev`'s class, when each of its scopes is a structure (without optionals,
    /// nested less than [`MAX_DEPTH`] deep); `head` is what precedes the scopes after the
    /// stamp (`label name: ` in the default style).
    pub fn build(ev: &Event<'_>, head: &[u8]) -> Option<ClassPlan> {
        let trace = ev.trace();
        let layout: &Layout = &trace.layout;
        let (sc, _) = ev.class_index();
        let el = ev.class_layout();
        let nodes: [Option<NodeId>; 3] = [
            layout.streams.at(sc).event_common_context,
            el.context,
            el.payload,
        ];
        if nodes
            .iter()
            .flatten()
            .any(|n| !matches!(layout.nodes[*n as usize].kind, NodeKind::Struct { .. }))
        {
            return None;
        }
        let any_scope = nodes.iter().any(|n| n.is_some());
        let (first, form) = match Direct::build(layout, &nodes) {
            Some((first, d)) => (first, Form::Direct(d)),
            None => {
                let roots: Vec<NodeId> = nodes.iter().flatten().copied().collect();
                (
                    Lit::new(b""),
                    Form::Tree(Box::new(Tree::build(layout, &roots)?)),
                )
            }
        };
        Some(ClassPlan {
            head: Lit::new(head),
            scopes: nodes.map(|n| n.is_some()),
            any_scope,
            first,
            form,
            lead: None,
        })
    }

    /// Whether [`Self::write_direct`] applies to the class (otherwise [`Self::write_tree`]).
    pub fn is_direct(&self) -> bool {
        matches!(self.form, Form::Direct(_))
    }

    /// Bytes [`Self::write_direct`] needs from its start, or [`Self::write_tree`] before it
    /// makes room itself, for an event of packet `packet` (stream index, packet key),
    /// `packet_text` giving that packet's rendered context and its version (called only when
    /// the packet changed since the last event of the class). A version names one text: the
    /// lead is made again only when it changes, not on every packet of a stream whose packets
    /// all show the same context (LTTng's `cpu_id`), which small packets make frequent.
    #[inline]
    pub fn lead_room<'t>(
        &mut self,
        packet: (usize, u64),
        packet_text: impl FnOnce() -> (u64, Option<&'t [u8]>),
    ) -> usize {
        if !matches!(&self.lead, Some((k, _, _)) if *k == packet) {
            self.new_packet(packet, packet_text);
        }
        let Some((_, _, lead)) = &self.lead else {
            unreachable!("made above")
        };
        match &self.form {
            Form::Direct(d) => lead.room() + d.body_max,
            Form::Tree(_) => lead.room(),
        }
    }

    /// The lead of packet `packet`: the one held when its packet text is the same version,
    /// else made from `packet_text`.
    #[cold]
    #[inline(never)]
    fn new_packet<'t>(
        &mut self,
        packet: (usize, u64),
        packet_text: impl FnOnce() -> (u64, Option<&'t [u8]>),
    ) {
        let (version, text) = packet_text();
        if let Some((k, v, _)) = &mut self.lead {
            if *v == version {
                *k = packet;
                return;
            }
        }
        let mut t = self.head.bytes().to_vec();
        if let Some(p) = text {
            t.extend_from_slice(p);
            if self.any_scope {
                t.extend_from_slice(b", ");
            }
        }
        t.extend_from_slice(self.first.bytes());
        self.lead = Some((packet, version, Lit::new(&t)));
    }

    /// Writes the line of `ev` from the head to the newline at `at` in `b`, reading the
    /// values of its fixed-layout scopes straight from their plans; `b` has the room
    /// [`Self::lead_room`] gave (for this event's packet) from `at`. Returns where the line
    /// ends, or None when the event is not laid out as planned (or an [`Op::General`] value
    /// does not fit), to be written the general way. `scratch` holds general values, `padded`
    /// a copy of a structure that ends too close to the data's end for whole-word reads.
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
        bufs: &mut DirectBufs,
    ) -> Option<usize> {
        let Form::Direct(d) = &self.form else {
            return None;
        };
        let DirectBufs { padded, memo } = bufs;
        let (_, _, lead) = self.lead.as_ref()?;
        // The scopes the class has are looked at below; those it lacks need no look: the
        // reader decodes an event's scopes from its class's nodes, so it has none of them.
        let limit = at + lead.room() + d.body_max;
        let mut at = lead.put_at(b, at);
        let mut w = Writer {
            b,
            ev,
            scratch,
            padded,
            limit,
        };
        // The usual kernel event: only a payload, of fixed layout. Written without the loop
        // over scopes and its choice of scope, which cost as much as a value.
        if d.payload_only {
            let (data, slots) = ev.payload_slots()?;
            return w.fixed_scope(at, &d.scopes[0], &d.steps, data, *slots.first()?);
        }
        let mut k = 0;
        for sc in &d.scopes {
            let steps = d.steps.get(k..k + sc.values)?;
            k += sc.values;
            // The scope's slot (and its members' after it) straight from the event: no view
            // is made unless a value is written the general way.
            let (data, slots) = scope_slots(ev, sc.which)?;
            let head = *slots.first()?;
            if sc.slots {
                // The node fixes the structure's members, hence the steps'; a compound's
                // `aux` counts its descendants' slots: one per member here.
                if head.node != sc.node || head.aux as usize != sc.values {
                    return None;
                }
                let members = slots.get(1..1 + sc.values)?;
                at = w.slots(at, sc.which, members, data, steps)?;
                continue;
            }
            if sc.memo {
                at = w.memo_scope(at, sc, steps, data, head, memo)?;
                continue;
            }
            at = w.fixed_scope(at, sc, steps, data, head)?;
        }
        (k == d.steps.len()).then_some(at)
    }

    /// Writes the line of `ev` from the head to the newline at `at` in `b` (kept at its full
    /// length, with the room [`Self::lead_room`] gave from `at`, grown as needed), walking its
    /// scopes along the class's tree. Returns where the line ends, or None when the event does
    /// not have the planned shape, to be written the general way. `scratch` holds general
    /// values.
    #[inline(never)]
    pub fn write_tree(
        &self,
        b: &mut Vec<u8>,
        at: usize,
        ev: &Event<'_>,
        scratch: &mut Vec<u8>,
    ) -> Option<usize> {
        let Form::Tree(tree) = &self.form else {
            return None;
        };
        let (_, _, lead) = self.lead.as_ref()?;
        let views = [ev.common_context(), ev.specific_context(), ev.payload()];
        if views.iter().zip(self.scopes).any(|(v, s)| v.is_some() != s) {
            return None;
        }
        let start = lead.put_at(b, at);
        let mut w = TreeWriter {
            tree,
            b,
            at: start,
            root: TNode::Scalar(TFmt::General),
            entered: false,
            frames: Vec::new(),
            bad: false,
            scratch,
        };
        let layout = &ev.trace().layout;
        if let Some(end) = w.prog_scopes(layout, &views) {
            return Some(end);
        }
        // Slots the program does not expect: the tree's own walk of them (which checks less
        // of their shape before it writes), from the start again.
        w.at = start;
        if let Some(end) = w.slot_scopes(layout, &views) {
            return Some(end);
        }
        // Slots not laid out as the tree expects (truncated structures decoded member by
        // member…): the walk, whose callbacks are checked one by one, from the start again.
        w.at = start;
        for (k, (v, &root)) in views.iter().flatten().zip(&tree.roots).enumerate() {
            if k > 0 {
                w.put(b", ");
            }
            w.root = tree.nodes[root as usize];
            w.entered = false;
            v.walk(&mut w);
            if w.bad || !w.frames.is_empty() || !w.entered {
                return None;
            }
        }
        w.reserve(1);
        w.b[w.at] = b'\n';
        Some(w.at + 1)
    }
}

impl Direct {
    /// The direct form of a class whose scopes are `nodes`, with the literal before its first
    /// value; None unless every scope is a fixed-layout structure whose member literals are
    /// short enough to be held inline.
    fn build(layout: &Layout, nodes: &[Option<NodeId>; 3]) -> Option<(Lit, Direct)> {
        let mut lits = Vec::new();
        let mut cur: Vec<u8> = Vec::new();
        let mut any = false;
        let mut steps = Vec::new();
        let mut scopes = Vec::new();
        let mut body_max = 0;
        for (which, node) in nodes.iter().enumerate() {
            let Some(node) = node else { continue };
            let n = &layout.nodes[*node as usize];
            if !matches!(n.kind, NodeKind::Struct { .. }) {
                return None;
            }
            let plan = n.plan.as_ref();
            if any {
                cur.extend_from_slice(b", ");
            }
            any = true;
            cur.push(b'{');
            let members = layout.members_of(*node);
            let Some(plan) = plan else {
                // Strings: values from the member slots, one per member.
                for (k, m) in members.iter().enumerate() {
                    let kind = &layout.nodes[m.node as usize].kind;
                    if !is_scalar(kind) {
                        return None;
                    }
                    let op = Op::of_slot(kind);
                    steps.push((op, 0, k, 0, 0));
                    body_max += op.max_len() + STEP_LIT;
                    push_member_lit(&mut cur, &mut lits, k, &m.name);
                }
                scopes.push(ScopeSteps {
                    which,
                    values: members.len(),
                    need: 0,
                    size_bits: 0,
                    slots: true,
                    node: *node,
                    memo: false,
                    room: 0,
                });
                cur.extend_from_slice(b" }");
                continue;
            };
            if plan.reads.len() != members.len() {
                return None;
            }
            let mut need = 0;
            let mut room = 0;
            let mut bounded = true;
            let mut memo = which == 0;
            for (k, (m, read)) in members.iter().zip(plan.reads.iter()).enumerate() {
                let kind = &layout.nodes[m.node as usize].kind;
                if !is_scalar(kind) {
                    return None;
                }
                let op = Op::of(kind, read);
                memo &= !matches!(op, Op::Str | Op::General);
                bounded &= !matches!(op, Op::Str | Op::General);
                room += op.max_len() + STEP_LIT;
                let bits = &read.bits;
                // The field's lowest bit in the loaded (little-endian) word.
                let low = (bits.off % 8) as u32;
                let byte = u32::try_from(bits.off / 8).ok()?;
                need = need.max(byte as usize + op.span());
                // Shifts for the ops that read a word (`low + size <= 64` for those).
                let left = 64u32.saturating_sub(low + bits.size);
                steps.push((op, byte, k, left, 64 - bits.size));
                body_max += op.max_len() + STEP_LIT;
                push_member_lit(&mut cur, &mut lits, k, &m.name);
            }
            scopes.push(ScopeSteps {
                which,
                values: members.len(),
                need,
                size_bits: plan.size_bits,
                slots: false,
                node: *node,
                memo: memo && !members.is_empty(),
                room: if bounded { room } else { 0 },
            });
            cur.extend_from_slice(b" }");
        }
        cur.push(b'\n');
        lits.push(Lit::new(&cur));
        let mut lits = lits.into_iter();
        let first = lits.next()?;
        let steps = steps
            .into_iter()
            .zip(lits)
            .map(|((op, byte, member, left, right), lit)| {
                let bytes = lit.bytes();
                let mut inline = [0u8; STEP_LIT];
                inline.get_mut(..bytes.len())?.copy_from_slice(bytes);
                Some(Step {
                    op,
                    byte,
                    member: u32::try_from(member).ok()?,
                    left: left as u8,
                    right: right as u8,
                    lit_len: bytes.len() as u8,
                    lit: inline,
                })
            })
            .collect::<Option<Vec<Step>>>()?;
        let payload_only = matches!(&scopes[..], [sc] if sc.which == 2 && !sc.slots);
        Some((
            first,
            Direct {
                steps,
                scopes,
                body_max,
                payload_only,
            },
        ))
    }
}

/// Ends the literal before member `k` named `name` (`{ name = ` or `, name = `) in `cur` and
/// moves it to `lits`.
fn push_member_lit(cur: &mut Vec<u8>, lits: &mut Vec<Lit>, k: usize, name: &str) {
    cur.extend_from_slice(if k == 0 { b" " } else { b", " });
    cur.extend_from_slice(name.as_bytes());
    cur.extend_from_slice(b" = ");
    lits.push(Lit::new(cur));
    cur.clear();
}

/// What writing the values of a [`Direct`] plan needs besides the plan: the text (with the
/// room the plan asked for), the event, buffers for general values and padded structures,
/// and where the planned room ends.
struct Writer<'w, 'e> {
    b: &'w mut [u8],
    ev: &'w Event<'e>,
    scratch: &'w mut Vec<u8>,
    padded: &'w mut Vec<u8>,
    limit: usize,
}

impl Writer<'_, '_> {
    /// Writes the values of fixed-layout scope `sc` along `steps` (its own) at `at`, the
    /// scope's slot `head` pointing into `data`; None when the slot is not the planned
    /// structure's or a value does not fit the plan.
    #[inline(always)]
    fn fixed_scope(
        &mut self,
        at: usize,
        sc: &ScopeSteps,
        steps: &[Step],
        data: &[u8],
        head: Slot,
    ) -> Option<usize> {
        // The node fixes the structure's plan, hence the steps'.
        if head.node != sc.node || !head.val.is_multiple_of(8) {
            return None;
        }
        let start = usize::try_from(head.val / 8).ok()?;
        let s = match data.get(start..start.saturating_add(sc.need)) {
            Some(s) => s,
            None => pad(self.padded, data, start, sc)?,
        };
        let b = &mut *self.b;
        // The literals are copied unchecked when the room for the whole scope is there (one
        // check per scope, not one per value): a loop of its own, so that the check is not
        // made again per value either.
        let fits = sc.room != 0 && b.len().checked_sub(at).is_some_and(|n| n >= sc.room);
        let (ev, scratch, limit) = (self.ev, &mut *self.scratch, self.limit);
        if fits {
            fixed_steps::<true>(b, at, sc, steps, s, ev, scratch, limit)
        } else {
            fixed_steps::<false>(b, at, sc, steps, s, ev, scratch, limit)
        }
    }

    /// [`Self::fixed_scope`] for a scope whose text [`ScopeMemo`] may hold: copied from `memo`
    /// when the structure's bytes are those it was written from, else written and kept there.
    #[inline(always)]
    fn memo_scope(
        &mut self,
        at: usize,
        sc: &ScopeSteps,
        steps: &[Step],
        data: &[u8],
        head: Slot,
        memo: &mut ScopeMemo,
    ) -> Option<usize> {
        let key = Some((self.ev.trace().index, sc.node));
        let last = steps.last()?;
        let bytes = if head.node == sc.node && head.val.is_multiple_of(8) {
            let start = usize::try_from(head.val / 8).ok()?;
            let size = usize::try_from(sc.size_bits.div_ceil(8)).ok()?;
            data.get(start..start.checked_add(size)?)
        } else {
            None
        };
        let Some(bytes) = bytes else {
            return self.fixed_scope(at, sc, steps, data, head);
        };
        if memo.key == key && memo.bytes[..] == *bytes {
            let n = memo.text.len();
            self.b[at..at + n].copy_from_slice(&memo.text);
            let at = at + n;
            self.b[at..at + STEP_LIT].copy_from_slice(&last.lit);
            return Some(at + last.lit_len as usize);
        }
        let end = self.fixed_scope(at, sc, steps, data, head)?;
        memo.key = key;
        memo.bytes.clear();
        memo.bytes.extend_from_slice(bytes);
        memo.text.clear();
        memo.text
            .extend_from_slice(&self.b[at..end - last.lit_len as usize]);
        Some(end)
    }

    /// Writes the values of scope `which`, a structure decoded member by member, from its
    /// member slots `slots` (one per member, strings pointing into `data`) along `steps` at
    /// `at`; None when a value does not fit the plan.
    fn slots(
        &mut self,
        mut at: usize,
        which: usize,
        slots: &[Slot],
        data: &[u8],
        steps: &[Step],
    ) -> Option<usize> {
        let b = &mut *self.b;
        let limit = self.limit;
        for (st, s) in steps.iter().zip(slots) {
            at = match st.op {
                // Slots hold integers' raw bits, signed ones sign-extended.
                Op::Unsigned => u64_at(b, at, s.val),
                Op::Signed => {
                    let x = s.val as i64;
                    i64_at(b, at, x)
                }
                Op::Hex => hex_at(b, at, s.val),
                // A longer string than planned for fits when the room left over allows it
                // (the values after it still have theirs).
                Op::Str
                    if s.aux as usize <= STR_MAX || limit + 2 + 4 * s.aux as usize <= b.len() =>
                {
                    let raw = data.get(s.val as usize..)?.get(..s.aux as usize)?;
                    str_at(b, at, raw)
                }
                _ => general_at(
                    b,
                    at,
                    self.ev,
                    which,
                    st.member as usize,
                    self.scratch,
                    limit,
                )?,
            };
            b[at..at + STEP_LIT].copy_from_slice(&st.lit);
            at += st.lit_len as usize;
        }
        Some(at)
    }
}

/// The steps of [`Writer::fixed_scope`]: the values of scope `sc` read from its bytes `s`
/// (`sc.need` long) written at `at` in `b`, each followed by its literal; `FITS` when `b` holds
/// the scope's `room` from `at`. None when a general value does not fit the plan.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fixed_steps<const FITS: bool>(
    b: &mut [u8],
    mut at: usize,
    sc: &ScopeSteps,
    steps: &[Step],
    s: &[u8],
    ev: &Event<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> Option<usize> {
    debug_assert!(s.len() == sc.need);
    debug_assert!(steps
        .iter()
        .all(|st| st.byte as usize + st.op.span() <= s.len()));
    for st in steps {
        let p = st.byte as usize;
        // SAFETY: `s` is `sc.need` bytes long (`data`'s or `pad`'s slice), and `Direct::build`
        // made `need` at least `byte + span` of each of the scope's steps: 8 for the ops that
        // load a word. Checked once, where the plan is made, not per value.
        let word = || unsafe { s.as_ptr().add(p).cast::<[u8; 8]>().read_unaligned() };
        let word = || u64::from_le_bytes(word());
        at = match st.op {
            Op::Unsigned => u64_at(b, at, (word() << st.left) >> st.right),
            Op::Signed => {
                let x = ((word() << st.left) as i64) >> st.right;
                i64_at(b, at, x)
            }
            Op::Hex => hex_at(b, at, (word() << st.left) >> st.right),
            Op::Text(n) => str_at(b, at, &s[p..p + n as usize]),
            Op::Str | Op::General => {
                general_at(b, at, ev, sc.which, st.member as usize, scratch, limit)?
            }
        };
        if FITS {
            debug_assert!(at + STEP_LIT <= b.len());
            // SAFETY: `FITS`: `b` held the scope's `room` from its start, each value's
            // `max_len` (which the formatters never write past) and the `STEP_LIT` bytes of
            // the literal after it (`room` is 0, hence `FITS` false, when a value may be
            // written the general way): what was written so far leaves `STEP_LIT` bytes here.
            unsafe {
                b.as_mut_ptr()
                    .add(at)
                    .cast::<[u8; STEP_LIT]>()
                    .write_unaligned(st.lit);
            }
        } else {
            b[at..at + STEP_LIT].copy_from_slice(&st.lit);
        }
        at += st.lit_len as usize;
    }
    Some(at)
}

/// The bytes of `ev`'s scope `which` and the slots from the scope's own on (its descendants
/// follow it).
#[inline(always)]
fn scope_slots<'a>(ev: &Event<'a>, which: usize) -> Option<(&'a [u8], &'a [Slot])> {
    if which == 2 {
        return ev.payload_slots();
    }
    let (slots, idx, data) = scope_view(ev, which)?.slot_list()?;
    Some((data, slots.get(idx..)?))
}

/// Scope `which` of `ev`: 0 the common context, 1 the specific context, 2 the payload.
#[inline(always)]
fn scope_view<'a>(ev: &Event<'a>, which: usize) -> Option<FieldView<'a>> {
    match which {
        0 => ev.common_context(),
        1 => ev.specific_context(),
        _ => ev.payload(),
    }
}

/// `data` from `start` copied into `padded` and zero-filled to the `need` bytes the reads of
/// scope `sc` may load, when the data ends before that but holds the whole structure; None when
/// it does not (the event is then written the general way, which reports the problem).
#[cold]
fn pad<'p>(
    padded: &'p mut Vec<u8>,
    data: &[u8],
    start: usize,
    sc: &ScopeSteps,
) -> Option<&'p [u8]> {
    let size = usize::try_from(sc.size_bits.div_ceil(8)).ok()?;
    let held = data.get(start..start.checked_add(size)?)?;
    padded.clear();
    padded.extend_from_slice(data.get(start..)?);
    padded.resize(sc.need.max(held.len()), 0);
    Some(&padded[..sc.need])
}

/// Writes member `i` of scope `which` of `ev` through [`FieldValue`] (formatted in `scratch`)
/// at `at`; None when it is missing or would leave less than the planned room before `limit`.
#[cold]
#[inline(never)]
fn general_at(
    b: &mut [u8],
    at: usize,
    ev: &Event<'_>,
    which: usize,
    i: usize,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> Option<usize> {
    scratch.clear();
    put_value(scratch, &scope_view(ev, which)?.member_at(i)?.value());
    // The room was planned without general values: the rest must still fit after this one.
    if limit + scratch.len() > b.len() {
        return None;
    }
    b[at..at + scratch.len()].copy_from_slice(scratch);
    Some(at + scratch.len())
}

/// Deepest nesting of compounds a [`Tree`] follows (deeper classes are written the general
/// way).
pub const MAX_DEPTH: usize = 16;

/// Bytes a literal of a [`Tree`] is copied in at once (longer ones are copied by length): a
/// member name of up to 26 bytes between `, ` and ` = `.
const TREE_LIT: usize = 32;

/// The text of a class's scopes as a tree compiled from its layout: per structure member the
/// literal before it (`, name = `), per scalar its format, per enumeration its labels.
/// [`TreeWriter`] follows the tree along the scopes' slots (or, for slots it does not expect,
/// along their walks, [`FieldView::walk`]), so that a value costs a literal copy and its
/// digits, where the general writer looks at names, a stack of open compounds and each
/// value's kind.
struct Tree {
    nodes: Vec<TNode>,
    /// The layout node of each of [`Self::nodes`]: what a slot must be of to be written as it.
    ids: Vec<NodeId>,
    /// For each of [`Self::nodes`] that is a fixed-layout structure of integers: its word
    /// reads.
    fixed: Vec<Option<TFixed>>,
    /// For each of [`Self::nodes`]: whether it is a structure whose members are scalars or
    /// structures with [`Self::fixed`] reads, written by [`TreeWriter::flat_struct`] as an
    /// array's element.
    flat: Vec<bool>,
    /// Structure members, each structure's in a row.
    members: Vec<TMember>,
    /// Variant options, each variant's in a row: name and node.
    options: Vec<(std::sync::Arc<str>, u32)>,
    /// Every literal, followed by [`TREE_LIT`] bytes of padding so that any literal can be
    /// copied as one block.
    lits: Vec<u8>,
    enums: Vec<EnumLabels>,
    /// Root node of each present scope.
    roots: Vec<u32>,
    /// The scopes compiled into one flat program ([`TreeWriter::run`]).
    prog: Prog,
    /// Bytes made room for before each callback: a literal, an enumeration's labels and a
    /// number, at most (strings and general values make room for themselves).
    room: usize,
}

#[derive(Clone, Copy)]
enum TNode {
    Scalar(TFmt),
    /// Members `members[first..first + count]`.
    Struct {
        first: u32,
        count: u32,
    },
    Array {
        elem: u32,
    },
    /// Options `options[first..first + count]`.
    Variant {
        first: u32,
        count: u32,
    },
}

/// A fixed-layout structure of a [`Tree`] whose members are integers: each read by one
/// 8-byte load and two shifts, as [`Step`]s are.
struct TFixed {
    steps: Vec<TStep>,
    /// Bytes from the structure's first byte that the loads touch.
    need: usize,
    /// Bytes the members may take.
    room: usize,
}

#[derive(Clone, Copy)]
struct TStep {
    fmt: TFmt,
    /// Offset of the loaded word from the structure's first byte.
    byte: u32,
    left: u8,
    right: u8,
    signed: bool,
    /// Loaded as a big-endian word (network headers), whose first bit is the highest.
    big: bool,
}

/// The `n` bytes of `data` at slot `s`'s position (in bits), when it is on a byte.
#[inline(always)]
fn bytes_at(data: &[u8], s: Slot, n: usize) -> Option<&[u8]> {
    if !s.val.is_multiple_of(8) {
        return None;
    }
    let at = usize::try_from(s.val / 8).ok()?;
    data.get(at..at.checked_add(n)?)
}

impl TStep {
    /// The step that reads the integer at `bits` (from a structure's first byte) as `fmt`;
    /// None when its bits do not fit in one word from their first byte.
    fn of(fmt: TFmt, bits: &ctf::access::BitRead, signed: bool) -> Option<TStep> {
        let low = (bits.off % 8) as u32;
        if low + bits.size > 64 {
            return None;
        }
        // A little-endian field's lowest bit is bit `low` of the word; a big-endian one's
        // highest bit is `low` bits below the word's top.
        let left = if bits.little {
            64 - low - bits.size
        } else {
            low
        };
        Some(TStep {
            fmt,
            byte: u32::try_from(bits.off / 8).ok()?,
            left: left as u8,
            right: (64 - bits.size) as u8,
            signed,
            big: !bits.little,
        })
    }

    /// The field's raw bits (sign-extended when signed) from the word loaded at
    /// [`Self::byte`].
    #[inline(always)]
    fn raw(&self, word: [u8; 8]) -> u64 {
        let w = if self.big {
            u64::from_be_bytes(word)
        } else {
            u64::from_le_bytes(word)
        } << self.left;
        if self.signed {
            ((w as i64) >> self.right) as u64
        } else {
            w >> self.right
        }
    }
}

/// A literal of a [`Tree`]: its place in [`Tree::lits`] and its length.
#[derive(Clone, Copy)]
struct LitRef {
    at: u32,
    len: u32,
}

struct TMember {
    /// `, name = ` (` name = ` for the first member).
    lit: LitRef,
    /// The member's node, copied: the writer needs no second look-up.
    node: TNode,
    /// Its index in [`Tree::nodes`] and its layout node.
    idx: u32,
    id: NodeId,
}

/// How a scalar of a [`Tree`] is written.
#[derive(Clone, Copy)]
enum TFmt {
    Unsigned,
    Signed,
    Hex,
    Str,
    /// An enumeration: its labels ([`Tree::enums`]) and how its integer is written.
    Enum(u32, IntFmt),
    /// Anything else: through [`put_value`].
    General,
}

impl TFmt {
    /// Whether [`Tree::int_at`] writes values of this format.
    fn is_int(self) -> bool {
        matches!(
            self,
            TFmt::Unsigned | TFmt::Signed | TFmt::Hex | TFmt::Enum(..)
        )
    }
}

#[derive(Clone, Copy)]
enum IntFmt {
    Unsigned,
    Signed,
    Hex,
}

/// The rendered labels of an enumeration whose mapped values span a small range:
/// `( "label" : container = ` for each value from `min`, and the form for unmapped values.
struct EnumLabels {
    min: i128,
    labels: Vec<LitRef>,
    unknown: LitRef,
}

/// Enumerations whose mapped values span more than this are written the general way.
const ENUM_SPAN: i128 = 256;

impl Tree {
    /// The tree of scopes `roots`; None when some node cannot be followed (optionals, nesting
    /// deeper than [`MAX_DEPTH`]).
    fn build(layout: &Layout, roots: &[NodeId]) -> Option<Tree> {
        let mut t = Tree {
            nodes: Vec::new(),
            ids: Vec::new(),
            fixed: Vec::new(),
            flat: Vec::new(),
            members: Vec::new(),
            options: Vec::new(),
            lits: Vec::new(),
            enums: Vec::new(),
            roots: Vec::new(),
            prog: Prog::default(),
            room: 0,
        };
        for &r in roots {
            let n = t.add(layout, r, 1)?;
            t.roots.push(n);
        }
        let longest = |lits: &mut dyn Iterator<Item = LitRef>| {
            lits.map(|l| l.len as usize)
                .max()
                .unwrap_or(0)
                .max(TREE_LIT)
        };
        let member_lit = longest(&mut t.members.iter().map(|m| m.lit));
        let enum_lit = longest(
            &mut t
                .enums
                .iter()
                .flat_map(|e| e.labels.iter().chain([&e.unknown]).copied()),
        );
        // A literal, then an enumeration's labels, `0x` and 16 digits (or 20 digits) and ` )`;
        // or an array index `, [N] = `.
        t.room = member_lit + enum_lit + 32;
        // Once the room is known, which the word reads make for all members at once.
        for k in 0..t.nodes.len() {
            let fixed = match t.nodes[k] {
                TNode::Struct { first, count } => {
                    let members = &t.members[first as usize..(first + count) as usize];
                    t.fixed(layout, t.ids[k], members)
                }
                _ => None,
            };
            t.fixed.push(fixed);
        }
        t.flat = (0..t.nodes.len())
            .map(|k| match t.nodes[k] {
                TNode::Struct { first, count } => t.members[first as usize..][..count as usize]
                    .iter()
                    .all(|m| match m.node {
                        TNode::Scalar(_) => true,
                        TNode::Struct { .. } => t.fixed[m.idx as usize].is_some(),
                        _ => false,
                    }),
                _ => false,
            })
            .collect();
        // The padding after the literals so far lets [`Tree::small_text`] copy them as blocks.
        t.lits.extend_from_slice(&[0; TREE_LIT]);
        t.prog = Prog::compile(&mut t, layout);
        t.lits.extend_from_slice(&[0; TREE_LIT]);
        Some(t)
    }

    fn lit(&mut self, bytes: &[u8]) -> LitRef {
        let at = self.lits.len() as u32;
        self.lits.extend_from_slice(bytes);
        LitRef {
            at,
            len: bytes.len() as u32,
        }
    }

    /// Adds node `id` (at nesting `depth`) and what it holds; its index.
    fn add(&mut self, layout: &Layout, id: NodeId, depth: usize) -> Option<u32> {
        if depth > MAX_DEPTH {
            return None;
        }
        let node = match &layout.nodes[id as usize].kind {
            NodeKind::Struct { .. } => {
                let members = layout.members_of(id);
                let kids = members
                    .iter()
                    .map(|m| self.add(layout, m.node, depth + 1))
                    .collect::<Option<Vec<u32>>>()?;
                let first = self.members.len() as u32;
                for (k, (m, node)) in members.iter().zip(kids).enumerate() {
                    let sep: &[u8] = if k == 0 { b" " } else { b", " };
                    let lit = self.lit(&[sep, m.name.as_bytes(), b" = "].concat());
                    let idx = node;
                    let node = self.nodes[node as usize];
                    let id = m.node;
                    self.members.push(TMember { lit, node, idx, id });
                }
                TNode::Struct {
                    first,
                    count: members.len() as u32,
                }
            }
            NodeKind::Array { elem, .. } => TNode::Array {
                elem: self.add(layout, *elem, depth + 1)?,
            },
            NodeKind::Variant { .. } => {
                let options = layout.members_of(id);
                let kids = options
                    .iter()
                    .map(|m| self.add(layout, m.node, depth + 1))
                    .collect::<Option<Vec<u32>>>()?;
                let first = self.options.len() as u32;
                for (m, node) in options.iter().zip(kids) {
                    self.options.push((m.name.clone(), node));
                }
                TNode::Variant {
                    first,
                    count: options.len() as u32,
                }
            }
            NodeKind::Optional { .. } => return None,
            kind => TNode::Scalar(self.scalar(layout, kind)),
        };
        self.nodes.push(node);
        self.ids.push(id);
        Some((self.nodes.len() - 1) as u32)
    }

    fn scalar(&mut self, layout: &Layout, kind: &NodeKind) -> TFmt {
        let int = match *kind {
            NodeKind::Int {
                signed: false,
                base: DisplayBase::Decimal,
                ..
            } => IntFmt::Unsigned,
            NodeKind::Int {
                signed: true,
                base: DisplayBase::Decimal,
                ..
            } => IntFmt::Signed,
            NodeKind::Int {
                signed: false,
                base: DisplayBase::Hexadecimal,
                ..
            } => IntFmt::Hex,
            NodeKind::CString | NodeKind::SizedString { .. } => return TFmt::Str,
            _ => return TFmt::General,
        };
        let NodeKind::Int {
            enum_idx: Some(e), ..
        } = *kind
        else {
            return match int {
                IntFmt::Unsigned => TFmt::Unsigned,
                IntFmt::Signed => TFmt::Signed,
                IntFmt::Hex => TFmt::Hex,
            };
        };
        let mappings = &layout.enums[e as usize];
        let ranges = mappings.iter().flat_map(|m| m.ranges.iter());
        let min = ranges.clone().map(|r| r.lower).min().unwrap_or(0);
        let max = ranges.map(|r| r.upper).max().unwrap_or(0);
        if max - min >= ENUM_SPAN {
            return TFmt::General;
        }
        // Rendered by the general writer's own code, so that both agree.
        let mut text = Vec::new();
        let mut render = |v: i128| {
            text.clear();
            write_enum_open(&mut text, v, mappings);
            self.lit(&text)
        };
        let labels = (min..=max).map(&mut render).collect();
        let unknown = render(max + 1);
        self.enums.push(EnumLabels {
            min,
            labels,
            unknown,
        });
        TFmt::Enum((self.enums.len() - 1) as u32, int)
    }

    /// Writes an integer of format `fmt` from its slot value `raw` (signed ones
    /// sign-extended) at `at` in `b` (the tree's room there); None, writing nothing, when
    /// `fmt` is not an integer's.
    #[inline(always)]
    fn int_at(&self, b: &mut [u8], at: usize, fmt: TFmt, raw: u64) -> Option<usize> {
        Some(match fmt {
            TFmt::Unsigned => u64_at(b, at, raw),
            TFmt::Signed => {
                let x = raw as i64;
                i64_at(b, at, x)
            }
            TFmt::Hex => hex_at(b, at, raw),
            TFmt::Enum(e, int) => {
                let v = match int {
                    IntFmt::Signed => raw as i64 as i128,
                    IntFmt::Unsigned | IntFmt::Hex => raw as i128,
                };
                self.enum_at(b, at, e, int, v, raw)
            }
            TFmt::Str | TFmt::General => return None,
        })
    }

    /// The word reads of fixed-layout structure `id` whose members are `members`, when each
    /// is an integer one 8-byte load reads.
    fn fixed(&self, layout: &Layout, id: NodeId, members: &[TMember]) -> Option<TFixed> {
        let plan = layout.nodes[id as usize].plan.as_ref()?;
        if plan.reads.len() != members.len() {
            return None;
        }
        let mut steps = Vec::new();
        let mut need = 0;
        for (m, read) in members.iter().zip(plan.reads.iter()) {
            let TNode::Scalar(fmt) = m.node else {
                return None;
            };
            let NodeKind::Int { signed, .. } = layout.nodes[m.id as usize].kind else {
                return None;
            };
            if !matches!(
                fmt,
                TFmt::Unsigned | TFmt::Signed | TFmt::Hex | TFmt::Enum(..)
            ) {
                return None;
            }
            let step = TStep::of(fmt, &read.bits, signed)?;
            need = need.max(step.byte as usize + 8);
            steps.push(step);
        }
        Some(TFixed {
            steps,
            need,
            room: members.len() * self.room,
        })
    }

    /// Writes the text (`{ name = value, … }`) of a fixed-layout structure of integers within
    /// one byte whose members' literals are `lits` and reads `steps`, for byte `v`, in `b`
    /// (reused from one call to the next); returns its length.
    fn small_text(&self, b: &mut Vec<u8>, lits: &[LitRef], steps: &[TStep], v: u64) -> usize {
        b.resize((lits.len() + 1) * self.room + 2 * TREE_LIT, 0);
        b[0] = b'{';
        let mut at = 1;
        for (l, st) in lits.iter().zip(steps) {
            at = self.put_lit(b, at, *l);
            let w = v << st.left;
            let raw = if st.signed {
                ((w as i64) >> st.right) as u64
            } else {
                w >> st.right
            };
            at = self.int_at(b, at, st.fmt, raw).unwrap_or(at);
        }
        b[at..at + 2].copy_from_slice(b" }");
        at + 2
    }

    /// Writes literal `l` at `at` in `b` (room for [`TREE_LIT`] bytes or its length).
    #[inline(always)]
    fn put_lit(&self, b: &mut [u8], at: usize, l: LitRef) -> usize {
        let from = l.at as usize;
        let len = l.len as usize;
        if len <= TREE_LIT {
            b[at..at + TREE_LIT].copy_from_slice(&self.lits[from..from + TREE_LIT]);
        } else {
            b[at..at + len].copy_from_slice(&self.lits[from..from + len]);
        }
        at + len
    }

    /// The node of option `name` of the variant whose options are `options[first..][..count]`.
    #[inline]
    fn option(&self, first: u32, count: u32, name: &str) -> Option<u32> {
        let options = self.options.get(first as usize..(first + count) as usize)?;
        // The walk names the option with the layout's own string: its address finds it.
        options
            .iter()
            .find(|(n, _)| std::ptr::eq(n.as_ptr(), name.as_ptr()))
            .or_else(|| options.iter().find(|(n, _)| **n == *name))
            .map(|&(_, node)| node)
    }
}

/// A [`Tree`]'s scopes compiled into one flat list of ops, run by [`TreeWriter::run`] along
/// the scopes' slots: the literals between two values merged into one (`, fds = [`,
/// ` } }, [1] = ` less its index, ` ] }, ` …), structures walked inline (no call, no look at
/// the tree's nodes), an array's element program run in a loop over its elements' slots.
/// Nodes it does not flatten (arrays of one slot, structures of fixed layout that hold
/// other than integers) are written by [`TreeWriter::slot_node`] from their op.
#[derive(Default)]
struct Prog {
    ops: Vec<POp>,
    /// The ops of each variant option, the options of a variant in a row.
    opts: Vec<(u32, u32)>,
    /// The texts of [`PKind::Small`] structures, 256 per structure.
    small: Vec<LitRef>,
    /// The ops of each scope, in order; each scope's last op writes the literal after it
    /// (`, ` or the newline).
    roots: Vec<(u32, u32)>,
}

/// One op of a [`Prog`]: the literal before what it writes, and what it writes.
#[derive(Clone, Copy)]
struct POp {
    lit: LitRef,
    kind: PKind,
    /// Bytes the ops from this one on write at most up to the next one that makes room
    /// itself ([`PKind::is_plain`]), that one's literal and an array index included: made
    /// room for once, where such a stretch begins.
    room: u32,
}

impl PKind {
    /// Whether the op writes a bounded text without calls that make room themselves.
    fn is_plain(self) -> bool {
        match self {
            PKind::Scalar(fmt, _) => fmt.is_int(),
            PKind::End
            | PKind::Open(_)
            | PKind::Words { .. }
            | PKind::Word(_)
            | PKind::WordText { .. }
            | PKind::Small { .. } => true,
            PKind::Seq { .. } | PKind::Var { .. } | PKind::Bytes { .. } | PKind::Node(_) => false,
        }
    }
}

#[derive(Clone, Copy)]
enum PKind {
    /// The literal alone: the end of a scope, of an array's element or of a variant's option.
    End,
    /// A structure decoded member by member, its slot (of this node) skipped: its members'
    /// slots follow. Writes nothing (its `{` is in the next op's literal).
    Open(NodeId),
    /// A scalar of this format from its slot (of this node).
    Scalar(TFmt, NodeId),
    /// A fixed-layout structure (tree node `t`, layout node `id`) of integers: its slot
    /// gives where its bytes start, which the next `steps` ops ([`PKind::Word`]) read. Writes
    /// nothing when they can be read; else (off a byte, too near the data's end) writes its
    /// literal and the structure the tree's way, less its closing ` }`, and skips them.
    Words {
        t: u32,
        id: NodeId,
        steps: u32,
        need: u32,
    },
    /// A fixed-layout structure of integers of at most 8 bits (tree node `t`, layout node
    /// `id`: LTTng's poll and epoll event flags), its text looked up by its byte in
    /// `Prog::small[table..][..256]`; the tree's way when it does not start on a byte.
    Small { t: u32, id: NodeId, table: u32 },
    /// A text of `len` bytes (at most [`STR_MAX`]) of the last [`PKind::Words`] structure,
    /// at byte `byte` of its bytes.
    WordText { byte: u32, len: u32 },
    /// A member of the last [`PKind::Words`] structure, read from its bytes.
    Word(TStep),
    /// An array whose elements have slots (of this node): its slot gives their count; the
    /// next `body` ops (ending with an [`PKind::End`]) write one element.
    Seq { id: NodeId, body: u32 },
    /// A variant (of this node): its slot gives the option, whose ops are
    /// `opts[first + option]` (each ending with an [`PKind::End`]); the next `skip` ops are
    /// the options'.
    Var {
        id: NodeId,
        first: u32,
        count: u32,
        skip: u32,
    },
    /// An array of one slot (of node `id`) whose elements are 8-bit integers of format
    /// `fmt` on whole bytes (addresses, small byte arrays): the data's own bytes.
    Bytes { id: NodeId, fmt: TFmt, signed: bool },
    /// Tree node `t`, written by [`TreeWriter::slot_node`].
    Node(u32),
}

/// Builds a [`Prog`]: ops, and the literal not yet written (merged into the next op's).
struct ProgBuilder {
    ops: Vec<POp>,
    opts: Vec<(u32, u32)>,
    small: Vec<LitRef>,
    pending: Vec<u8>,
}

impl Prog {
    /// The program of `t`'s scopes (its literals added to `t.lits`).
    fn compile(t: &mut Tree, layout: &Layout) -> Prog {
        let mut pb = ProgBuilder {
            ops: Vec::new(),
            opts: Vec::new(),
            small: Vec::new(),
            pending: Vec::new(),
        };
        let mut roots = Vec::new();
        let n = t.roots.len();
        for k in 0..n {
            let from = pb.ops.len() as u32;
            pb.node(t, layout, t.roots[k]);
            pb.pending
                .extend_from_slice(if k + 1 < n { b", " } else { b"\n" });
            pb.flush(t, PKind::End);
            roots.push((from, pb.ops.len() as u32));
        }
        let mut ops = pb.ops;
        let small = &pb.small;
        // Each op's room: its own text and that of the plain ops after it, in the list's
        // order (past an element's or option's end, more than needed, never less).
        let longest_label = t
            .enums
            .iter()
            .flat_map(|e| e.labels.iter().chain([&e.unknown]))
            .map(|l| l.len as usize)
            .max()
            .unwrap_or(0);
        let mut after = 2 * TREE_LIT;
        for op in ops.iter_mut().rev() {
            let lit = (op.lit.len as usize).max(TREE_LIT);
            let own = match op.kind {
                PKind::Scalar(TFmt::Enum(..), _)
                | PKind::Word(TStep {
                    fmt: TFmt::Enum(..),
                    ..
                }) => lit + longest_label + 24,
                PKind::WordText { len, .. } => lit + 2 + (4 * len as usize).max(16) + 24,
                PKind::Small { table, .. } => {
                    let texts = &small[table as usize..][..256];
                    lit + texts.iter().map(|l| l.len as usize).max().unwrap_or(0) + 24
                }
                _ => lit + 24,
            };
            let room = if op.kind.is_plain() {
                own + after
            } else {
                own + 2 * TREE_LIT
            };
            op.room = u32::try_from(room).unwrap_or(u32::MAX);
            after = room;
        }
        Prog {
            ops,
            opts: pb.opts,
            small: pb.small,
            roots,
        }
    }
}

/// The ops ([`PKind::Word`], [`PKind::WordText`]) reading the members of fixed-layout
/// structure `n` of `t` from its bytes, and how many bytes from its first they load; None
/// unless each member is an integer one 8-byte load reads or a text on whole bytes.
fn fixed_ops(t: &Tree, layout: &Layout, n: u32) -> Option<(Vec<PKind>, u32)> {
    let id = t.ids[n as usize];
    let TNode::Struct { first, count } = t.nodes[n as usize] else {
        return None;
    };
    let members = t.members.get(first as usize..(first + count) as usize)?;
    let plan = layout.nodes[id as usize].plan.as_ref()?;
    if plan.reads.len() != members.len() {
        return None;
    }
    let mut ops = Vec::new();
    let mut need = 0usize;
    for (m, read) in members.iter().zip(plan.reads.iter()) {
        let TNode::Scalar(fmt) = m.node else {
            return None;
        };
        let bits = &read.bits;
        let byte = u32::try_from(bits.off / 8).ok()?;
        match layout.nodes[m.id as usize].kind {
            NodeKind::Int { signed, .. } if fmt.is_int() => {
                let step = TStep::of(fmt, bits, signed)?;
                need = need.max(step.byte as usize + 8);
                ops.push(PKind::Word(step));
            }
            NodeKind::SizedString {
                len: ctf::access::Len::Static(len),
            } if bits.off.is_multiple_of(8) && len <= STR_MAX as u64 => {
                need = need.max(byte as usize + len as usize);
                ops.push(PKind::WordText {
                    byte,
                    len: len as u32,
                });
            }
            _ => return None,
        }
    }
    Some((ops, u32::try_from(need).ok()?))
}

impl ProgBuilder {
    /// Adds op `kind` after the pending literal, which it writes.
    fn flush(&mut self, t: &mut Tree, kind: PKind) {
        let lit = t.lit(&self.pending);
        self.pending.clear();
        self.ops.push(POp { lit, kind, room: 0 });
    }

    /// Adds op `kind`, which writes no literal of its own (the pending one goes on).
    fn quiet(&mut self, kind: PKind) {
        let lit = LitRef { at: 0, len: 0 };
        self.ops.push(POp { lit, kind, room: 0 });
    }

    /// Adds the ops of tree node `n` (its separator and label pending).
    fn node(&mut self, t: &mut Tree, layout: &Layout, n: u32) {
        let id = t.ids[n as usize];
        match t.nodes[n as usize] {
            TNode::Scalar(fmt) => self.flush(t, PKind::Scalar(fmt, id)),
            TNode::Struct { first, count } => {
                let members = first as usize..(first + count) as usize;
                let fixed = layout.nodes[id as usize].plan.is_some();
                if fixed {
                    let Some((steps, need)) = fixed_ops(t, layout, n) else {
                        return self.flush(t, PKind::Node(n));
                    };
                    let size = layout.nodes[id as usize].plan.as_ref().map(|p| p.size_bits);
                    let words: Vec<TStep> = steps
                        .iter()
                        .filter_map(|k| match *k {
                            PKind::Word(st) if st.byte == 0 && !st.big => Some(st),
                            _ => None,
                        })
                        .collect();
                    if size.is_some_and(|s| s <= 8) && words.len() == steps.len() {
                        let table = self.small.len() as u32;
                        let lits: Vec<LitRef> = t.members[members].iter().map(|m| m.lit).collect();
                        let mut text = Vec::new();
                        for v in 0..256u64 {
                            let n = t.small_text(&mut text, &lits, &words, v);
                            let lit = t.lit(&text[..n]);
                            self.small.push(lit);
                        }
                        return self.flush(t, PKind::Small { t: n, id, table });
                    }
                    // Written by the fallback, which writes the structure from its `{`.
                    let before = t.lit(&self.pending);
                    self.ops.push(POp {
                        room: 0,
                        lit: before,
                        kind: PKind::Words {
                            t: n,
                            id,
                            steps: steps.len() as u32,
                            need,
                        },
                    });
                    self.pending.push(b'{');
                    for (k, step) in steps.into_iter().enumerate() {
                        let m = t.members[members.start + k].lit;
                        let name = t.lits[m.at as usize..(m.at + m.len) as usize].to_vec();
                        self.pending.extend_from_slice(&name);
                        self.flush(t, step);
                    }
                    self.pending.extend_from_slice(b" }");
                    return;
                }
                self.quiet(PKind::Open(id));
                self.pending.push(b'{');
                for k in members {
                    let m = &t.members[k];
                    let (lit, idx) = (m.lit, m.idx);
                    let name = t.lits[lit.at as usize..(lit.at + lit.len) as usize].to_vec();
                    self.pending.extend_from_slice(&name);
                    self.node(t, layout, idx);
                }
                self.pending.extend_from_slice(b" }");
            }
            TNode::Array { elem } if layout.nodes[id as usize].stride == 0 => {
                self.pending.push(b'[');
                let at = self.ops.len();
                self.flush(t, PKind::Seq { id, body: 0 });
                self.node(t, layout, elem);
                self.flush(t, PKind::End);
                let body = (self.ops.len() - at - 1) as u32;
                self.ops[at].kind = PKind::Seq { id, body };
                self.pending.extend_from_slice(b" ]");
            }
            TNode::Variant { first, count } => {
                self.pending.extend_from_slice(b"{ ");
                let at = self.ops.len();
                self.flush(t, PKind::End);
                let options: Vec<u32> = t.options[first as usize..(first + count) as usize]
                    .iter()
                    .map(|&(_, o)| o)
                    .collect();
                let mut ranges = Vec::new();
                for o in options {
                    let from = self.ops.len() as u32;
                    self.node(t, layout, o);
                    self.flush(t, PKind::End);
                    ranges.push((from, self.ops.len() as u32));
                }
                // Variants nested in the options took their places in `opts` first.
                let first = self.opts.len() as u32;
                self.opts.extend(ranges);
                let skip = (self.ops.len() - at - 1) as u32;
                self.ops[at].kind = PKind::Var {
                    id,
                    first,
                    count,
                    skip,
                };
                self.pending.extend_from_slice(b" }");
            }
            TNode::Array { elem } => {
                let byte_elems = match (t.nodes[elem as usize], layout.nodes[id as usize].stride) {
                    (TNode::Scalar(fmt), 8) if fmt.is_int() => {
                        match int_read(&layout.nodes[t.ids[elem as usize] as usize].kind) {
                            Some((8, signed, _)) => Some((fmt, signed)),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match byte_elems {
                    Some((fmt, signed)) => {
                        self.pending.push(b'[');
                        self.flush(t, PKind::Bytes { id, fmt, signed });
                        self.pending.extend_from_slice(b" ]");
                    }
                    None => self.flush(t, PKind::Node(n)),
                }
            }
        }
    }
}

/// A scope's decoded slots, for [`TreeWriter::slot_node`].
struct ScopeSlots<'s> {
    layout: &'s Layout,
    /// The scope: general values are read through views of it.
    view: FieldView<'s>,
    slots: &'s [Slot],
    data: &'s [u8],
}

impl<'s> ScopeSlots<'s> {
    /// Scope `v`'s slots, and the index of its first; None when it has none (a fixed
    /// layout).
    fn of(layout: &'s Layout, v: &FieldView<'s>) -> Option<(ScopeSlots<'s>, usize)> {
        let (slots, idx, data) = v.slot_list()?;
        let sc = ScopeSlots {
            layout,
            view: *v,
            slots,
            data,
        };
        Some((sc, idx))
    }
}

/// The size, signedness and byte order of an integer node, read from `data` without a view.
fn int_read(kind: &NodeKind) -> Option<(u32, bool, bool)> {
    match *kind {
        NodeKind::Int {
            size,
            signed,
            little,
            ..
        } if (1..=64).contains(&size) => Some((size, signed, little)),
        _ => None,
    }
}

/// An open compound of a [`TreeWriter`]: its node, items written so far, and for an array
/// its element's node, for a variant its selected option's.
#[derive(Clone, Copy)]
struct Frame {
    node: TNode,
    count: u32,
    child: TNode,
}

/// Writes scopes into `b` (kept at its full length, like [`crate::printer::TextBuf`]) from `at`
/// along a [`Tree`]: from their slots ([`Self::slot_scopes`]), or along their walks
/// ([`FieldView::walk`]), each callback matched against the tree; `bad` when one does not
/// match.
struct TreeWriter<'a> {
    tree: &'a Tree,
    b: &'a mut Vec<u8>,
    at: usize,
    /// The root node of the scope being walked, and whether the walk entered it.
    root: TNode,
    entered: bool,
    /// The open compounds, innermost last: allocated only when a walk is written (most
    /// events are written from their slots, which need none).
    frames: Vec<Frame>,
    bad: bool,
    scratch: &'a mut Vec<u8>,
}

/// Grows `b` (kept at its full length) to at least `n` bytes.
#[cold]
fn grow(b: &mut Vec<u8>, n: usize) {
    let len = n.max(b.len() * 2);
    b.resize(len, 0);
}

/// Writes the label of element `i` of an array, after its separator (` [0] = `, `, [i] = `),
/// at `at` (room for 27 bytes).
#[inline(always)]
fn index_at(b: &mut [u8], at: usize, i: u32) -> usize {
    if i == 0 {
        b[at..at + 8].copy_from_slice(b" [0] =  ");
        return at + 7;
    }
    if i < 10 {
        let mut lit = *b", [0] = ";
        lit[3] += i as u8;
        b[at..at + 8].copy_from_slice(&lit);
        return at + 8;
    }
    b[at..at + 3].copy_from_slice(b", [");
    let at = u64_at(b, at + 3, i as u64);
    b[at..at + 4].copy_from_slice(b"] = ");
    at + 4
}

impl TreeWriter<'_> {
    #[inline(always)]
    fn reserve(&mut self, n: usize) {
        if self.at + n > self.b.len() {
            grow(self.b, self.at + n);
        }
    }

    #[inline(always)]
    fn put(&mut self, s: &[u8]) {
        self.reserve(s.len());
        self.b[self.at..self.at + s.len()].copy_from_slice(s);
        self.at += s.len();
    }

    /// Writes what comes before the next item of the innermost open compound (separator and
    /// label) and returns the item's node; for the scope itself, its root. None when the
    /// compound has no such item.
    #[inline(always)]
    fn item(&mut self) -> Option<TNode> {
        let tree = self.tree;
        let Some(f) = self.frames.last_mut() else {
            if self.entered {
                return None;
            }
            self.entered = true;
            return Some(self.root);
        };
        let k = f.count;
        f.count += 1;
        match f.node {
            TNode::Struct { first, count } => {
                if k >= count {
                    return None;
                }
                let m = &tree.members[(first + k) as usize];
                self.at = tree.put_lit(self.b, self.at, m.lit);
                Some(m.node)
            }
            TNode::Array { .. } => {
                let elem = f.child;
                self.at = index_at(self.b, self.at, k);
                Some(elem)
            }
            TNode::Variant { .. } if k == 0 => {
                let option = f.child;
                self.b[self.at] = b' ';
                self.at += 1;
                Some(option)
            }
            _ => None,
        }
    }

    /// Writes scalar `value` in format `fmt` (room for the tree's room made).
    #[inline]
    fn scalar(&mut self, fmt: TFmt, value: &FieldValue<'_>) -> Option<()> {
        let at = self.at;
        self.at = match (fmt, value) {
            (TFmt::Unsigned, &FieldValue::UInt { value, .. }) => u64_at(self.b, at, value),
            (TFmt::Signed, &FieldValue::SInt { value, .. }) => i64_at(self.b, at, value),
            (TFmt::Hex, &FieldValue::UInt { value, .. }) => hex_at(self.b, at, value),
            (TFmt::Str, &FieldValue::Str(s)) => {
                self.reserve(2 + (4 * s.len()).max(16));
                str_at(self.b, at, s)
            }
            (TFmt::Enum(e, int), &FieldValue::UInt { value: v, .. }) => {
                self.enumeration(at, e, int, v as i128, v)
            }
            (TFmt::Enum(e, int), &FieldValue::SInt { value: v, .. }) => {
                self.enumeration(at, e, int, v as i128, v as u64)
            }
            (
                _,
                FieldValue::Struct(_)
                | FieldValue::Array(_)
                | FieldValue::Variant(..)
                | FieldValue::Optional(_),
            ) => return None,
            _ => {
                self.general(value);
                return Some(());
            }
        };
        Some(())
    }

    /// Writes the scopes `views` (those the class has) from their decoded slots along the
    /// tree's [`Prog`], and the newline; returns where the line ends, or None when the slots
    /// do not have the program's shape.
    fn prog_scopes(
        &mut self,
        layout: &Layout,
        views: &[Option<FieldView<'_>>; 3],
    ) -> Option<usize> {
        let prog = &self.tree.prog;
        for (v, &(from, to)) in views.iter().flatten().zip(&prog.roots) {
            let (sc, idx) = ScopeSlots::of(layout, v)?;
            self.run(&sc, from as usize, to as usize, idx)?;
        }
        Some(self.at)
    }

    /// Runs ops `from..to` of the tree's program from slot `j` of `sc`; returns the index of
    /// the slot after those they wrote, or None when the slots do not have the program's
    /// shape.
    ///
    /// The text is written through a local slice and position (which stores into the text
    /// do not make the compiler reload), room made once per stretch of plain ops.
    fn run(&mut self, sc: &ScopeSlots<'_>, from: usize, to: usize, mut j: usize) -> Option<usize> {
        let tree = self.tree;
        let prog = &tree.prog;
        let ops = prog.ops.get(..to)?;
        // An index label, an enumeration's labels and a number.
        let room_per_byte = tree.room + 32;
        // The bytes of the last fixed-layout structure, which its members' ops read.
        let mut base: &[u8] = &[];
        let mut k = from;
        let mut at = self.at;
        self.reserve(ops.get(k).map_or(0, |o| o.room as usize));
        let mut b: &mut [u8] = &mut self.b[..];
        while let Some(op) = ops.get(k) {
            k += 1;
            match op.kind {
                PKind::Scalar(fmt, id) => {
                    at = tree.put_lit(b, at, op.lit);
                    let s = *sc.slots.get(j)?;
                    if s.node != id {
                        return None;
                    }
                    j += 1;
                    if let Some(end) = tree.int_at(b, at, fmt, s.val) {
                        at = end;
                        continue;
                    }
                    self.at = at;
                    self.slot_value(fmt, sc, s, j - 1)?;
                }
                PKind::Word(st) => {
                    at = tree.put_lit(b, at, op.lit);
                    let p = st.byte as usize;
                    let raw = st.raw(base.get(p..p + 8)?.try_into().ok()?);
                    at = tree.int_at(b, at, st.fmt, raw)?;
                    continue;
                }
                PKind::WordText { byte, len } => {
                    at = tree.put_lit(b, at, op.lit);
                    let p = byte as usize;
                    at = str_at(b, at, base.get(p..p + len as usize)?);
                    continue;
                }
                PKind::Open(id) => {
                    if sc.slots.get(j)?.node != id {
                        return None;
                    }
                    j += 1;
                    continue;
                }
                PKind::Small { t, id, table } => {
                    at = tree.put_lit(b, at, op.lit);
                    let s = *sc.slots.get(j)?;
                    if s.node != id {
                        return None;
                    }
                    if let Some(&[v]) = bytes_at(sc.data, s, 1) {
                        let text = *prog.small.get(table as usize + v as usize)?;
                        at = tree.put_lit(b, at, text);
                        j += 1;
                        continue;
                    }
                    self.at = at;
                    j = self.slot_node(sc, t, j)?;
                }
                PKind::Words { t, id, steps, need } => {
                    let s = *sc.slots.get(j)?;
                    if s.node != id {
                        return None;
                    }
                    let bytes = bytes_at(sc.data, s, need as usize);
                    if let Some(bytes) = bytes {
                        base = bytes;
                        j += 1;
                        continue;
                    }
                    // Off a byte or too near the data's end for word loads: the tree's way,
                    // whose closing ` }` the next op's literal holds.
                    self.at = tree.put_lit(b, at, op.lit);
                    j = self.slot_node(sc, t, j)?;
                    self.at -= 2;
                    k += steps as usize;
                }
                PKind::Seq { id, body } => {
                    let s = *sc.slots.get(j)?;
                    if s.node != id {
                        return None;
                    }
                    j += 1;
                    self.at = tree.put_lit(b, at, op.lit);
                    let end = k + body as usize;
                    for e in 0..u32::try_from(s.val).ok()? {
                        self.reserve(2 * TREE_LIT);
                        self.at = index_at(self.b, self.at, e);
                        j = self.run(sc, k, end, j)?;
                    }
                    k = end;
                }
                PKind::Var {
                    id,
                    first,
                    count,
                    skip,
                } => {
                    let s = *sc.slots.get(j)?;
                    if s.node != id || s.val >= count as u64 {
                        return None;
                    }
                    j += 1;
                    self.at = tree.put_lit(b, at, op.lit);
                    let (a, z) = *prog.opts.get(first as usize + s.val as usize)?;
                    j = self.run(sc, a as usize, z as usize, j)?;
                    k += skip as usize;
                }
                PKind::Bytes { id, fmt, signed } => {
                    let s = *sc.slots.get(j)?;
                    if s.node != id || !s.val.is_multiple_of(8) {
                        return None;
                    }
                    let bytes = usize::try_from(s.val / 8)
                        .ok()
                        .and_then(|at| sc.data.get(at..)?.get(..s.aux as usize))?;
                    j += 1;
                    self.at = tree.put_lit(b, at, op.lit);
                    for (e, &x) in bytes.iter().enumerate() {
                        self.reserve(room_per_byte);
                        self.at = index_at(self.b, self.at, e as u32);
                        let x = if signed { x as i8 as u64 } else { x as u64 };
                        self.at = tree.int_at(self.b, self.at, fmt, x)?;
                    }
                }
                PKind::Node(t) => {
                    self.at = tree.put_lit(b, at, op.lit);
                    j = self.slot_node(sc, t, j)?;
                }
                PKind::End => {
                    at = tree.put_lit(b, at, op.lit);
                    continue;
                }
            }
            // After an op that wrote through `self`: room for the next stretch.
            at = self.at;
            self.reserve(ops.get(k).map_or(0, |o| o.room as usize));
            b = &mut self.b[..];
        }
        self.at = at;
        Some(j)
    }

    /// Writes the scopes `views` (those the class has) from their decoded slots, following the
    /// tree instead of a walk, and the newline; returns where the line ends, or None when the
    /// slots do not have the tree's shape.
    fn slot_scopes(
        &mut self,
        layout: &Layout,
        views: &[Option<FieldView<'_>>; 3],
    ) -> Option<usize> {
        let tree = self.tree;
        for (k, (v, &root)) in views.iter().flatten().zip(&tree.roots).enumerate() {
            if k > 0 {
                self.put(b", ");
            }
            let (sc, idx) = ScopeSlots::of(layout, v)?;
            self.slot_node(&sc, root, idx)?;
        }
        self.reserve(1);
        self.b[self.at] = b'\n';
        Some(self.at + 1)
    }

    /// Writes tree node `t` (its separator and label already written) from slot `i` of `sc`
    /// as the walk would; returns the index of the slot after it (and its descendants), or
    /// None when the slots do not have the tree's shape.
    fn slot_node(&mut self, sc: &ScopeSlots<'_>, t: u32, i: usize) -> Option<usize> {
        let tree = self.tree;
        let s = *sc.slots.get(i)?;
        // The slot's node fixes its kind, hence how its slot and its descendants' are laid out.
        if s.node != *tree.ids.get(t as usize)? {
            return None;
        }
        self.reserve(tree.room);
        match tree.nodes[t as usize] {
            TNode::Scalar(fmt) => self.slot_scalar(sc, fmt, s.node, i),
            TNode::Struct { first, count } => {
                self.b[self.at] = b'{';
                self.at += 1;
                let members = tree.members.get(first as usize..(first + count) as usize)?;
                let next = match &sc.layout.nodes.get(s.node as usize)?.plan {
                    // Members have no slots: read at the plan's offsets from the start.
                    Some(plan) => {
                        if plan.reads.len() != members.len() {
                            return None;
                        }
                        let words = match &tree.fixed[t as usize] {
                            Some(fx) => self.fixed_words(fx, members, sc.data, s.val),
                            None => None,
                        };
                        for (k, (m, r)) in members
                            .iter()
                            .zip(plan.reads.iter())
                            .enumerate()
                            .take(if words.is_none() { members.len() } else { 0 })
                        {
                            self.reserve(tree.room);
                            self.at = tree.put_lit(self.b, self.at, m.lit);
                            let TNode::Scalar(fmt) = m.node else {
                                return None;
                            };
                            match r.int(sc.data, s.val) {
                                Some(x) if self.int_raw(fmt, x as u64) => {}
                                _ => {
                                    let f = sc.view.scalar_at(m.id, s.val + plan.offsets[k])?;
                                    self.scalar(fmt, &f.value())?;
                                }
                            }
                        }
                        i + 1
                    }
                    None => {
                        let mut j = i + 1;
                        for m in members {
                            self.reserve(tree.room);
                            self.at = tree.put_lit(self.b, self.at, m.lit);
                            j = match m.node {
                                TNode::Scalar(fmt) => self.slot_scalar(sc, fmt, m.id, j)?,
                                _ => self.slot_node(sc, m.idx, j)?,
                            };
                        }
                        j
                    }
                };
                self.reserve(2);
                self.b[self.at..self.at + 2].copy_from_slice(b" }");
                self.at += 2;
                Some(next)
            }
            TNode::Array { elem } => {
                self.b[self.at] = b'[';
                self.at += 1;
                let stride = sc.layout.nodes.get(s.node as usize)?.stride;
                let next = if stride > 0 {
                    // One slot: `aux` elements from bit `val`, read on access.
                    let TNode::Scalar(fmt) = tree.nodes[elem as usize] else {
                        return None;
                    };
                    let id = tree.ids[elem as usize];
                    let read = int_read(&sc.layout.nodes.get(id as usize)?.kind);
                    // Whole bytes (addresses, small byte arrays) are the data's own bytes.
                    let bytes = match read {
                        Some((8, signed, _))
                            if stride == 8 && s.val.is_multiple_of(8) && fmt.is_int() =>
                        {
                            usize::try_from(s.val / 8)
                                .ok()
                                .and_then(|at| sc.data.get(at..)?.get(..s.aux as usize))
                                .map(|b| (b, signed))
                        }
                        _ => None,
                    };
                    if let Some((bytes, signed)) = bytes {
                        for (k, &x) in bytes.iter().enumerate() {
                            self.reserve(tree.room);
                            self.at = index_at(self.b, self.at, k as u32);
                            let x = if signed { x as i8 as u64 } else { x as u64 };
                            self.int_raw(fmt, x);
                        }
                    } else {
                        for k in 0..s.aux {
                            self.reserve(tree.room);
                            self.at = index_at(self.b, self.at, k);
                            let pos = s.val + k as u64 * stride;
                            if let Some((size, signed, little)) = read {
                                let raw = read_uint(sc.data, pos, size, little).unwrap_or(0);
                                let x = if signed {
                                    sign_extend(raw, size) as u64
                                } else {
                                    raw
                                };
                                if self.int_raw(fmt, x) {
                                    continue;
                                }
                            }
                            let f = sc.view.scalar_at(id, pos)?;
                            self.scalar(fmt, &f.value())?;
                        }
                    }
                    i + 1
                } else {
                    // `val` elements, their slots after this one.
                    let count = u32::try_from(s.val).ok()?;
                    let mut j = i + 1;
                    let (node, id) = (tree.nodes[elem as usize], tree.ids[elem as usize]);
                    let flat = tree.flat[elem as usize];
                    for k in 0..count {
                        self.reserve(tree.room);
                        self.at = index_at(self.b, self.at, k);
                        j = match node {
                            TNode::Scalar(fmt) => self.slot_scalar(sc, fmt, id, j)?,
                            _ if flat => self.flat_struct(sc, elem, j)?,
                            _ => self.slot_node(sc, elem, j)?,
                        };
                    }
                    j
                };
                self.reserve(2);
                self.b[self.at..self.at + 2].copy_from_slice(b" ]");
                self.at += 2;
                Some(next)
            }
            TNode::Variant { first, count } => {
                // `val` is the option's index; options are in the tree in the layout's order.
                if s.val >= count as u64 {
                    return None;
                }
                let &(_, option) = tree.options.get(first as usize + s.val as usize)?;
                self.b[self.at..self.at + 2].copy_from_slice(b"{ ");
                self.at += 2;
                let next = self.slot_node(sc, option, i + 1)?;
                self.reserve(2);
                self.b[self.at..self.at + 2].copy_from_slice(b" }");
                self.at += 2;
                Some(next)
            }
        }
    }

    /// [`Self::slot_node`] for a [`Tree::flat`] structure `t` (an array's element: poll and
    /// epoll entries), inlined in the array's loop: its scalars and fixed-layout structures
    /// written here rather than by a recursive call each.
    #[inline(always)]
    fn flat_struct(&mut self, sc: &ScopeSlots<'_>, t: u32, i: usize) -> Option<usize> {
        let tree = self.tree;
        let s = *sc.slots.get(i)?;
        let TNode::Struct { first, count } = tree.nodes[t as usize] else {
            return None;
        };
        if s.node != tree.ids[t as usize] {
            return None;
        }
        self.reserve(tree.room);
        self.b[self.at] = b'{';
        self.at += 1;
        let mut j = i + 1;
        for m in tree.members.get(first as usize..(first + count) as usize)? {
            self.reserve(tree.room);
            self.at = tree.put_lit(self.b, self.at, m.lit);
            j = match m.node {
                TNode::Scalar(fmt) => self.slot_scalar(sc, fmt, m.id, j)?,
                TNode::Struct { first, count } => {
                    let inner = *sc.slots.get(j)?;
                    let fx = tree.fixed[m.idx as usize].as_ref()?;
                    let members = tree.members.get(first as usize..(first + count) as usize)?;
                    if inner.node != m.id {
                        return None;
                    }
                    self.b[self.at] = b'{';
                    self.at += 1;
                    if self.fixed_words(fx, members, sc.data, inner.val).is_some() {
                        self.reserve(2);
                        self.b[self.at..self.at + 2].copy_from_slice(b" }");
                        self.at += 2;
                        j + 1
                    } else {
                        // Off a byte or near the data's end: written the usual way.
                        self.at -= 1;
                        self.slot_node(sc, m.idx, j)?
                    }
                }
                _ => self.slot_node(sc, m.idx, j)?,
            };
        }
        self.reserve(2);
        self.b[self.at..self.at + 2].copy_from_slice(b" }");
        self.at += 2;
        Some(j)
    }

    /// Writes the scalar of format `fmt` and layout node `id` from slot `i` of `sc` (room for
    /// the tree's room made): inlined in loops over members and elements, where most values
    /// are, rather than a call to [`Self::slot_node`] each.
    #[inline(always)]
    fn slot_scalar(
        &mut self,
        sc: &ScopeSlots<'_>,
        fmt: TFmt,
        id: NodeId,
        i: usize,
    ) -> Option<usize> {
        let s = *sc.slots.get(i)?;
        if s.node != id {
            return None;
        }
        if !self.int_raw(fmt, s.val) {
            self.slot_value(fmt, sc, s, i)?;
        }
        Some(i + 1)
    }

    /// Writes an integer of format `fmt` from its slot value `raw` (signed ones
    /// sign-extended) at `at` (room for the tree's room made); false, writing nothing, when
    /// `fmt` is not an integer's.
    #[inline(always)]
    fn int_raw(&mut self, fmt: TFmt, raw: u64) -> bool {
        match self.tree.int_at(self.b, self.at, fmt, raw) {
            Some(at) => {
                self.at = at;
                true
            }
            None => false,
        }
    }

    /// Writes fixed-layout structure `fx` (members `members`), which starts at bit `pos` of
    /// `data`, by one word load per member (its `{` written); None, having written nothing,
    /// when it does not start on a byte or its loads would pass the data's end.
    #[inline]
    fn fixed_words(
        &mut self,
        fx: &TFixed,
        members: &[TMember],
        data: &[u8],
        pos: u64,
    ) -> Option<()> {
        if !pos.is_multiple_of(8) {
            return None;
        }
        let start = usize::try_from(pos / 8).ok()?;
        let s = data.get(start..start.checked_add(fx.need)?)?;
        // Room for every member at once; then a plain slice and a local position, which the
        // stores into the text do not make the compiler reload.
        self.reserve(fx.room);
        let tree = self.tree;
        let b = &mut self.b[..];
        let mut at = self.at;
        for (m, st) in members.iter().zip(&fx.steps) {
            at = tree.put_lit(b, at, m.lit);
            let p = st.byte as usize;
            let raw = st.raw(s[p..p + 8].try_into().expect("8 bytes"));
            at = tree.int_at(b, at, st.fmt, raw)?;
        }
        self.at = at;
        Some(())
    }

    /// Writes the scalar of slot `s` (index `i` of `sc`) other than an integer: strings from
    /// their bytes, anything else through its [`FieldValue`].
    #[inline(never)]
    fn slot_value(&mut self, fmt: TFmt, sc: &ScopeSlots<'_>, s: Slot, i: usize) -> Option<()> {
        if let TFmt::Str = fmt {
            // A string's slot: byte offset and length.
            let raw = sc
                .data
                .get(s.val as usize..)
                .and_then(|d| d.get(..s.aux as usize))
                .unwrap_or(&[]);
            self.reserve(2 + (4 * raw.len()).max(16));
            self.at = str_at(self.b, self.at, raw);
            return Some(());
        }
        self.scalar(fmt, &sc.view.at_slot(i)?.value())
    }

    /// Writes `value` the general way.
    #[cold]
    fn general(&mut self, value: &FieldValue<'_>) {
        self.scratch.clear();
        put_value(self.scratch, value);
        let n = self.scratch.len();
        self.reserve(n);
        self.b[self.at..self.at + n].copy_from_slice(self.scratch);
        self.at += n;
    }

    /// Writes an enumeration of value `v` (`raw`: its bits) at `at`, which has the tree's
    /// room; returns where it ends.
    #[inline]
    fn enumeration(&mut self, at: usize, e: u32, int: IntFmt, v: i128, raw: u64) -> usize {
        self.tree.enum_at(self.b, at, e, int, v, raw)
    }
}

impl Tree {
    /// Writes an enumeration of value `v` (`raw`: its bits) at `at` in `b`, which has the
    /// tree's room there; returns where it ends.
    #[inline]
    fn enum_at(&self, b: &mut [u8], at: usize, e: u32, int: IntFmt, v: i128, raw: u64) -> usize {
        let labels = &self.enums[e as usize];
        let label = usize::try_from(v - labels.min)
            .ok()
            .and_then(|i| labels.labels.get(i))
            .copied()
            .unwrap_or(labels.unknown);
        let at = self.put_lit(b, at, label);
        let at = match int {
            IntFmt::Unsigned => u64_at(b, at, raw),
            IntFmt::Signed => {
                let x = raw as i64;
                i64_at(b, at, x)
            }
            IntFmt::Hex => hex_at(b, at, raw),
        };
        b[at..at + 2].copy_from_slice(b" )");
        at + 2
    }
}

impl FieldVisitor for TreeWriter<'_> {
    fn value(&mut self, _name: Option<&str>, _role: Option<Role>, value: &FieldValue<'_>) {
        if self.bad {
            return;
        }
        self.reserve(self.tree.room);
        let Some(TNode::Scalar(fmt)) = self.item() else {
            self.bad = true;
            return;
        };
        if self.scalar(fmt, value).is_none() {
            self.bad = true;
        }
    }

    fn enter(&mut self, _name: Option<&str>, kind: Compound<'_>) {
        if self.bad {
            return;
        }
        self.reserve(self.tree.room);
        let Some(node) = self.item().filter(|_| self.frames.len() < MAX_DEPTH) else {
            self.bad = true;
            return;
        };
        let nodes = &self.tree.nodes;
        let (open, child) = match (kind, node) {
            (Compound::Struct, TNode::Struct { .. }) => (b'{', Some(node)),
            (Compound::Array(_), TNode::Array { elem }) => (b'[', Some(nodes[elem as usize])),
            (Compound::Variant(name), TNode::Variant { first, count }) => (
                b'{',
                self.tree
                    .option(first, count, name)
                    .map(|o| nodes[o as usize]),
            ),
            _ => (b'{', None),
        };
        let Some(child) = child else {
            self.bad = true;
            return;
        };
        self.b[self.at] = open;
        self.at += 1;
        self.frames.push(Frame {
            node,
            count: 0,
            child,
        });
    }

    fn leave(&mut self) {
        if self.bad {
            return;
        }
        let Some(f) = self.frames.pop() else {
            self.bad = true;
            return;
        };
        self.reserve(2);
        let (close, complete) = match f.node {
            TNode::Struct { count, .. } => (b" }", f.count == count),
            TNode::Array { .. } => (b" ]", true),
            TNode::Variant { .. } => (b" }", f.count == 1),
            TNode::Scalar(_) => (b" }", false),
        };
        if !complete {
            self.bad = true;
            return;
        }
        self.b[self.at..self.at + 2].copy_from_slice(close);
        self.at += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A structure ending less than a word before the data's end is read from a zero-padded
    /// copy; one that does not fit in the data is not read at all.
    #[test]
    fn pads_a_structure_at_the_end_of_the_data() {
        let sc = ScopeSteps {
            which: 2,
            values: 2,
            need: 12,
            size_bits: 40,
            slots: false,
            node: 0,
            memo: false,
            room: 0,
        };
        let data = [9u8, 1, 2, 3, 4, 5, 6];
        let mut padded = Vec::new();
        assert_eq!(
            pad(&mut padded, &data, 1, &sc),
            Some(&[1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0][..])
        );
        assert_eq!(pad(&mut padded, &data, 3, &sc), None);
    }

    #[test]
    fn literals() {
        let mut s = [b'.'; 256];
        let lit = Lit::new(b"0123456789abcdefXYZ");
        assert_eq!(lit.room(), 64);
        assert_eq!(Lit::new(&[b'x'; 65]).room(), 96);
        let end = lit.put_at(&mut s, 3);
        assert_eq!(&s[..end], b"...0123456789abcdefXYZ");
        let end = Lit::new(b"").put_at(&mut s, end);
        let end = Lit::new(b"!").put_at(&mut s, end);
        assert_eq!(&s[..end], b"...0123456789abcdefXYZ!");
        // Past the two blocks copied at once.
        let long: Vec<u8> = (0..70u8).map(|i| b'a' + i % 26).collect();
        let end2 = Lit::new(&long).put_at(&mut s, end);
        assert_eq!(&s[end..end2], &long[..]);
        assert_eq!(&s[..end], b"...0123456789abcdefXYZ!");
    }

    use ctf::value::Value;
    use ctf::writer::{to_tsdl, EventHeaderKind, TraceWriter, WriterOptions};
    use ctf::Message;
    use testkit::XorShift;

    /// A field type of the generated classes.
    enum Ty {
        /// Integer: size, signed, base, alignment.
        Int(u32, bool, u32, u32),
        /// Enumeration over an 8-bit container, signed or not.
        Enum(bool),
        Str,
        /// Text of this many bytes (a UTF-8 byte array).
        Text(u32),
        Struct(Vec<Ty>),
        /// A sequence, its length member generated before it.
        Seq(Box<Ty>),
        /// A static array.
        Arr(Box<Ty>, u32),
        /// A variant, its tag member generated before it.
        Var(Vec<Ty>),
    }

    fn int_tsdl(size: u32, signed: bool, base: u32, align: u32) -> String {
        format!(
            "integer {{ size = {size}; align = {align}; signed = {}; encoding = none; base = {base}; }}",
            signed as u8
        )
    }

    const ENUM_MAP: &str = "_zero = 0, _one = 1, \"_two to four\" = 2 ... 4, _ten = 10";

    fn gen_ty(r: &mut XorShift, depth: u32) -> Ty {
        let leaf = depth >= 3 || r.below(3) > 0;
        if leaf {
            return match r.below(9) {
                0 => Ty::Enum(r.below(2) == 1),
                1 => Ty::Str,
                2 => Ty::Text(1 + r.below(20) as u32),
                3 => Ty::Int(1 + r.below(7) as u32, r.below(2) == 1, 10, 1),
                4 => Ty::Int(64, false, 16, 8),
                5 => Ty::Int(32, true, 10, 8),
                6 => Ty::Int(16, false, [8, 10, 16][r.below(3) as usize], 8),
                _ => Ty::Int(8 << r.below(4), r.below(2) == 1, 10, 8),
            };
        }
        match r.below(5) {
            0 => Ty::Seq(Box::new(gen_ty(r, depth + 1))),
            1 => Ty::Arr(Box::new(gen_ty(r, depth + 1)), r.below(5) as u32),
            2 => Ty::Var((0..1 + r.below(3)).map(|_| gen_ty(r, depth + 1)).collect()),
            // Bit fields within one byte (poll's and epoll's flags).
            3 => Ty::Struct(
                (0..1 + r.below(4))
                    .map(|_| Ty::Int(1 + r.below(2) as u32, false, 10, 1))
                    .collect(),
            ),
            _ => Ty::Struct((0..r.below(5)).map(|_| gen_ty(r, depth + 1)).collect()),
        }
    }

    /// The TSDL of member `name` of type `ty` (with the length or tag member it needs).
    fn member_tsdl(ty: &Ty, name: &str) -> String {
        match ty {
            Ty::Seq(e) => format!(
                "{} {name}_len; {}",
                int_tsdl(8, false, 10, 8),
                decl(e, &format!("{name}[{name}_len]"))
            ),
            Ty::Var(opts) => {
                let tags: Vec<String> = (0..opts.len()).map(|k| format!("_o{k} = {k}")).collect();
                let body: String = opts
                    .iter()
                    .enumerate()
                    .map(|(k, o)| decl(o, &format!("_o{k}")))
                    .collect();
                format!(
                    "enum : {} {{ {} }} {name}_tag; variant <{name}_tag> {{ {body} }} {name};",
                    int_tsdl(8, false, 10, 8),
                    tags.join(", ")
                )
            }
            _ => decl(ty, name),
        }
    }

    fn decl(ty: &Ty, name: &str) -> String {
        match ty {
            Ty::Int(size, signed, base, align) => {
                format!("{} {name};", int_tsdl(*size, *signed, *base, *align))
            }
            Ty::Enum(signed) => format!(
                "enum : {} {{ {ENUM_MAP} }} {name};",
                int_tsdl(8, *signed, 10, 8)
            ),
            Ty::Str => format!("string {name};"),
            Ty::Text(n) => format!(
                "integer {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} {name}[{n}];"
            ),
            Ty::Struct(ms) => {
                let body: String = ms
                    .iter()
                    .enumerate()
                    .map(|(k, m)| member_tsdl(m, &format!("_m{k}")))
                    .collect();
                format!("struct {{ {body} }} {name};")
            }
            Ty::Arr(e, n) => decl(e, &format!("{name}[{n}]")),
            Ty::Seq(_) | Ty::Var(_) => {
                // Elsewhere than as a member, in a structure with the length or tag.
                format!("struct {{ {} }} {name};", member_tsdl(ty, "_in"))
            }
        }
    }

    /// A random value of `ty`, pushed to `out` with the length or tag value before it.
    fn gen_val(r: &mut XorShift, ty: &Ty, out: &mut Vec<Value>) {
        match ty {
            Ty::Seq(e) => {
                let n = r.below(4);
                out.push(Value::U64(n));
                out.push(Value::Array((0..n).map(|_| one(r, e)).collect()));
            }
            Ty::Var(opts) => {
                let k = r.below(opts.len() as u64) as usize;
                out.push(Value::U64(k as u64));
                // An option needing a length or tag is wrapped in a structure by `decl`.
                let v = one(r, &opts[k]);
                out.push(Value::Variant(k, Box::new(v)));
            }
            _ => out.push(one(r, ty)),
        }
    }

    fn one(r: &mut XorShift, ty: &Ty) -> Value {
        match ty {
            Ty::Int(size, signed, _, _) => {
                let x = r.next_u64() >> (64 - size);
                if *signed {
                    Value::I64(((x << (64 - size)) as i64) >> (64 - size))
                } else {
                    Value::U64(x)
                }
            }
            Ty::Enum(signed) => {
                let x = r.below(13) as i64 - if *signed { 2 } else { 0 };
                if *signed {
                    Value::I64(x)
                } else {
                    Value::U64(x as u64)
                }
            }
            Ty::Str | Ty::Text(_) => {
                let n = match ty {
                    Ty::Text(n) => r.below(*n as u64 + 1),
                    _ => r.below(24),
                };
                let pool = b"ab \"\\\n\t\x01\x7f\xc3\xa9?z";
                Value::Str(
                    (0..n)
                        .map(|_| pool[r.below(pool.len() as u64) as usize])
                        .collect(),
                )
            }
            Ty::Struct(ms) => {
                let mut v = Vec::new();
                for m in ms {
                    gen_val(r, m, &mut v);
                }
                Value::Struct(v)
            }
            Ty::Arr(e, n) => Value::Array((0..*n).map(|_| one(r, e)).collect()),
            Ty::Seq(_) | Ty::Var(_) => {
                let mut v = Vec::new();
                gen_val(r, ty, &mut v);
                Value::Struct(v)
            }
        }
    }

    /// On many generated classes (sequences and arrays of structures, bit-field structures,
    /// enumerations, variants, strings and texts, nested at random) and values, the program
    /// of each class writes the general writer's text; and it writes most events itself
    /// (rather than handing them to the tree's other paths).
    #[test]
    fn programs_write_generated_classes_as_the_general_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let mut r = XorShift::new(0x5eed_2611);
        let host = kernel::lttng::HostInfo {
            hostname: "gen".into(),
            trace_uuid: [3; 16],
            clock_uuid: [4; 16],
            clock_offset_ns: 1_700_000_000_000_000_000,
            creation: "20240305T101500+0000".into(),
            trace_name: "gen".into(),
            kernel_release: "6.1.0".into(),
        };
        let tc = kernel::lttng::trace_class(
            &host,
            kernel::lttng::NetLayout::NetworkHeader,
            EventHeaderKind::Large,
        );
        let classes: Vec<Vec<Ty>> = (0..150)
            .map(|_| (0..1 + r.below(5)).map(|_| gen_ty(&mut r, 0)).collect())
            .collect();
        let mut text = to_tsdl(&tc).expect("TSDL");
        for (k, ms) in classes.iter().enumerate() {
            let body: String = ms
                .iter()
                .enumerate()
                .map(|(i, m)| member_tsdl(m, &format!("_f{i}")))
                .collect();
            text += &format!(
                "event {{ name = \"g{k}\"; id = {}; stream_id = 0; fields := struct {{ {body} }}; }};\n",
                1000 + k
            );
        }
        let tc = ctf::tsdl::parse(&text).expect("the generated TSDL parses");
        let dir = tmp.path().join("gen");
        let mut w = TraceWriter::create(&dir, &tc, 2, &WriterOptions::default()).unwrap();
        let mut n = 0u64;
        for (k, ms) in classes.iter().enumerate() {
            for _ in 0..12 {
                let mut payload = Vec::new();
                for m in ms {
                    gen_val(&mut r, m, &mut payload);
                }
                w.write_event((n % 2) as u32, 1000 + k as u64, 1000 * n, &payload)
                    .unwrap_or_else(|e| panic!("class g{k}: {e}"));
                n += 1;
            }
        }
        w.finish().unwrap();

        let traces = ctf::open_all(&[dir]).expect("the trace opens");
        let (mut by_prog, mut total) = (0, 0);
        let mut plans: std::collections::HashMap<String, ClassPlan> = Default::default();
        for t in &traces {
            for mut rd in t.readers() {
                while let Some(m) = rd.next() {
                    if !matches!(m, Ok(Message::Event)) {
                        continue;
                    }
                    let ev = rd.event();
                    if !ev.name().starts_with('g') {
                        continue;
                    }
                    let head = format!("{}: ", ev.name());
                    let mut want = head.clone().into_bytes();
                    let mut stack = Vec::new();
                    let views = [ev.common_context(), ev.specific_context(), ev.payload()];
                    for (i, v) in views.iter().flatten().enumerate() {
                        if i > 0 {
                            want.extend_from_slice(b", ");
                        }
                        v.walk(&mut crate::style::FieldWriter::plain(
                            &mut want, &mut stack, false,
                        ));
                    }
                    want.push(b'\n');
                    let plan = plans
                        .entry(ev.name().to_string())
                        .or_insert_with(|| ClassPlan::build(&ev, head.as_bytes()).expect("a plan"));
                    if plan.is_direct() {
                        continue;
                    }
                    total += 1;
                    let room = plan.lead_room((0, 0), || (0, None));
                    let Form::Tree(tree) = &plan.form else {
                        unreachable!("not direct")
                    };
                    let mut b = vec![0u8; room];
                    let end = plan.write_tree(&mut b, 0, &ev, &mut Vec::new());
                    let got = end.map(|e| b[..e].to_vec());
                    assert_eq!(
                        got.as_deref().map(String::from_utf8_lossy),
                        Some(String::from_utf8_lossy(&want)),
                        "{}",
                        ev.name()
                    );
                    // The program alone.
                    let (_, _, lead) = plan.lead.as_ref().unwrap();
                    let mut b = vec![0u8; room];
                    let start = lead.put_at(&mut b, 0);
                    let mut scratch = Vec::new();
                    let mut tw = TreeWriter {
                        tree,
                        b: &mut b,
                        at: start,
                        root: TNode::Scalar(TFmt::General),
                        entered: false,
                        frames: Vec::new(),
                        bad: false,
                        scratch: &mut scratch,
                    };
                    if let Some(end) = tw.prog_scopes(&ev.trace().layout, &views) {
                        by_prog += 1;
                        assert_eq!(
                            String::from_utf8_lossy(&b[..end]),
                            String::from_utf8_lossy(&want),
                            "{}",
                            ev.name()
                        );
                    }
                }
            }
        }
        assert!(total > 300, "{total} events through the tree");
        assert_eq!(by_prog, total, "events the program wrote itself");
    }
}
