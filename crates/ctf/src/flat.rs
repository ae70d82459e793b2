//! The walk that flattens an event body's layout tree for compiled code, shared by the
//! slot programs ([`crate::program`]) and the scan's steps ([`crate::fast::ScanTable`]).
//!
//! Both turn the tree into runs of fields at constant offsets from an aligned start, and one
//! step for each field that moves the position by an amount read from the data (strings,
//! sequences, variants). Where a field goes, and the alignment each run or step applies, is
//! decided here once; what a run or step becomes is the [`Flatten`] implementor's.

use crate::bits::align_up;
use crate::fast::TagOptions;
use crate::layout::{Layout, Len, Node, NodeId, NodeKind};

/// A run being built: its alignment, the implementor's index of its first field and the
/// bit position after its last.
pub(crate) struct OpenRun {
    pub(crate) align: u32,
    pub(crate) first: u32,
    pub(crate) end: u64,
}

/// Where the walk is: the layout walked, the open run, the alignment the next step must
/// apply (its enclosing structures' and variants'), and the options of the variants met.
pub(crate) struct Walk<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) run: Option<OpenRun>,
    pub(crate) pending: u32,
    pub(crate) variants: Vec<TagOptions>,
}

impl<'a> Walk<'a> {
    /// A walk at the start of a body of `layout`.
    pub(crate) fn new(layout: &'a Layout) -> Walk<'a> {
        Walk {
            layout,
            run: None,
            pending: 1,
            variants: Vec::new(),
        }
    }

    /// Back at the start of a body (the variants met are kept).
    pub(crate) fn restart(&mut self) {
        self.run = None;
        self.pending = 1;
    }
}

/// How an array of fixed-size scalars is flattened.
pub(crate) enum Scalars {
    /// One field of the run for the whole array of this many elements.
    Whole(u64),
    /// Each of this many elements a field of the run.
    Each(u64),
    /// One step: [`Flatten::array_step`].
    Step,
}

/// A compiler of event bodies: the walk ([`Flatten::node`]) and the runs' bookkeeping are
/// provided; the implementor says what each run, field and step becomes. Every method
/// returning an Option gives None for a field it leaves to the general decoder, which
/// ends the walk.
pub(crate) trait Flatten<'a> {
    /// The walk's state.
    fn walk(&mut self) -> &mut Walk<'a>;
    /// The index the next field of a run will have.
    fn next_field(&self) -> u32;
    /// Emits the run `r`, once all its fields are in.
    fn emit_run(&mut self, r: OpenRun);
    /// Emits a step aligning the position to `align`.
    fn emit_align(&mut self, align: u32);
    /// Where the next step goes.
    fn here(&self) -> u32;

    /// Adds the integer, bit array or float `node` at bit `off` of the open run.
    fn scalar(&mut self, node: NodeId, off: u64) -> Option<()>;
    /// Adds the fixed-layout structure `node` at bit `off` of the open run.
    fn fixed_struct(&mut self, node: NodeId, off: u64) -> Option<()>;
    /// Whether the string `n` of a static length joins the run (by [`Flatten::text`]).
    fn text_in_run(&self, _n: &Node) -> bool {
        false
    }
    /// Adds the string `node` of `len` bytes at bit `off` of the open run.
    fn text(&mut self, _node: NodeId, _off: u64, _len: u64) -> Option<()> {
        None
    }
    /// How the array of scalars `n` of length `len` is flattened.
    fn scalars(&self, n: &Node, len: Len) -> Option<Scalars>;
    /// Adds the array of scalars `node` of `k` elements, from bit `start` of the open run.
    fn array_field(&mut self, _node: NodeId, _start: u64, _k: u64) -> Option<()> {
        None
    }
    /// Emits the step of a null-terminated string.
    fn cstring(&mut self, node: NodeId, align: u32);
    /// Emits the step of a string or BLOB of length `len`.
    fn sized(&mut self, node: NodeId, align: u32, len: Len) -> Option<()>;
    /// Emits the step of an array of scalars of length `len`.
    fn array_step(&mut self, node: NodeId, align: u32, len: Len) -> Option<()>;
    /// Emits the step of an array of `len` elements `elem`, each the run `r`.
    fn repeat(
        &mut self,
        node: NodeId,
        elem: NodeId,
        align: u32,
        len: Len,
        r: OpenRun,
    ) -> Option<()>;
    /// Starts the structure `node` whose layout is not fixed, once aligned: whether it
    /// needs [`Flatten::close_struct`] after its members.
    fn open_struct(&mut self, _node: NodeId) -> Option<bool> {
        Some(false)
    }
    /// Ends a structure [`Flatten::open_struct`] said needs it.
    fn close_struct(&mut self) {}
    /// Emits the step of variant `node` selecting an option by the tag in `tag_reg`, its
    /// options being [`Walk::variants`]`[at]`.
    fn variant(&mut self, node: NodeId, align: u32, tag_reg: u16, at: u32) -> Option<()>;
    /// Emits the step ending an option, a jump [`Flatten::jump`] later points.
    fn end_option(&mut self);
    /// Points the jump at step `at` to step `to`.
    fn jump(&mut self, at: u32, to: u32);
    /// Ends a variant, after its options' steps.
    fn end_variant(&mut self) {}

    /// Ends the open run.
    fn close(&mut self) {
        if let Some(r) = self.walk().run.take() {
            self.emit_run(r);
        }
    }

    /// Ends the open run and applies a pending alignment: before a variant option's or the
    /// body's end, where the general decoder's position includes it.
    fn flush(&mut self) {
        self.close();
        let align = std::mem::replace(&mut self.walk().pending, 1);
        if align > 1 {
            self.emit_align(align);
        }
    }

    /// The alignment of a step that starts here.
    fn take_align(&mut self, a: u32) -> u32 {
        self.close();
        std::mem::replace(&mut self.walk().pending, 1).max(a)
    }

    /// Applies an alignment at the current position: inside the open run when it divides
    /// the run's, else before the next step.
    fn align(&mut self, a: u32) {
        match &mut self.walk().run {
            Some(r) if a <= r.align => r.end = align_up(r.end, a),
            _ => {
                self.close();
                let walk = self.walk();
                walk.pending = walk.pending.max(a);
            }
        }
    }

    /// A field of alignment `a` at the current position, in the open run (or a new one):
    /// its bit offset from the run's start.
    fn place(&mut self, a: u32) -> u64 {
        match &mut self.walk().run {
            Some(r) if a <= r.align => {
                r.end = align_up(r.end, a);
                r.end
            }
            _ => {
                let align = self.take_align(a);
                let first = self.next_field();
                self.walk().run = Some(OpenRun {
                    align,
                    first,
                    end: 0,
                });
                0
            }
        }
    }

    /// The open run now ends at bit `end`.
    fn end_at(&mut self, end: u64) -> Option<()> {
        self.walk().run.as_mut()?.end = end;
        Some(())
    }

    /// Flattens field `node`; None when it is the general decoder's.
    fn node(&mut self, node: NodeId) -> Option<()> {
        let layout = self.walk().layout;
        let n = &layout.nodes[node as usize];
        if n.clock || n.role.is_some() {
            return None;
        }
        match &n.kind {
            NodeKind::Int { size, .. }
            | NodeKind::Bits { size, .. }
            | NodeKind::Float { size, .. } => {
                let off = self.place(n.align);
                self.scalar(node, off)?;
                self.end_at(off + *size as u64)?;
            }
            NodeKind::SizedString {
                len: Len::Static(len),
            } if self.text_in_run(n) => {
                let off = self.place(n.align);
                self.text(node, off, *len)?;
                self.end_at(off.checked_add(len.checked_mul(8)?)?)?;
            }
            NodeKind::CString => {
                let align = self.take_align(n.align);
                self.cstring(node, align);
            }
            NodeKind::SizedString { len } | NodeKind::Blob { len } => {
                let align = self.take_align(n.align);
                self.sized(node, align, *len)?;
            }
            NodeKind::Struct { .. } => match &n.plan {
                Some(plan) => {
                    let off = self.place(n.align);
                    self.fixed_struct(node, off)?;
                    self.end_at(off.checked_add(plan.size_bits)?)?;
                }
                None => {
                    self.align(n.align);
                    let closes = self.open_struct(node)?;
                    for m in layout.members_of(node) {
                        self.node(m.node)?;
                    }
                    if closes {
                        self.close();
                        self.close_struct();
                    }
                }
            },
            NodeKind::Variant {
                tag_reg, ranges, ..
            } => {
                let align = self.take_align(n.align);
                let at = self.walk().variants.len() as u32;
                self.variant(node, align, *tag_reg, at)?;
                self.walk().variants.push(TagOptions::new(ranges));
                let (mut starts, mut ends) = (Vec::new(), Vec::new());
                for m in layout.members_of(node) {
                    starts.push(self.here());
                    self.node(m.node)?;
                    self.flush();
                    ends.push(self.here());
                    self.end_option();
                }
                let to = self.here();
                for j in ends {
                    self.jump(j, to);
                }
                self.end_variant();
                self.walk().variants[at as usize].starts = starts.into_boxed_slice();
            }
            NodeKind::Array { elem, len } if n.stride > 0 => match self.scalars(n, *len)? {
                Scalars::Whole(k) => {
                    let off = self.place(n.align);
                    let start = align_up(off, layout.nodes[*elem as usize].align);
                    self.array_field(node, start, k)?;
                    self.end_at(start.checked_add(k.checked_mul(n.stride)?)?)?;
                }
                Scalars::Each(k) => {
                    // Elements of a stride have no side effects: each a plain field.
                    self.align(n.align);
                    for _ in 0..k {
                        self.node(*elem)?;
                    }
                }
                Scalars::Step => {
                    let align = self.take_align(n.align);
                    self.array_step(node, align, *len)?;
                }
            },
            NodeKind::Array { elem, len } => {
                // Elements that are each one run taking some bits (elements of none are
                // the general decoder's to refuse): the run, repeated.
                let align = self.take_align(n.align);
                let mark = self.here();
                self.node(*elem)?;
                let r = self.walk().run.take()?;
                if self.here() != mark || self.walk().pending != 1 || r.end == 0 {
                    return None;
                }
                self.repeat(node, *elem, align, *len, r)?;
            }
            NodeKind::VarInt { .. } | NodeKind::Optional { .. } => return None,
        }
        Some(())
    }
}
