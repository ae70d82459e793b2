//! Event bodies with strings, sequences and variants, compiled once per class into a flat
//! program that makes the slots the general decoder makes.
//!
//! [`crate::fast::FixedBody`] covers bodies of fixed-layout structures; for the others the
//! general decoder ([`crate::decode::Decoder::decode`]) walks the node tree, a recursive call
//! per member. A [`SlotProgram`] is that walk done once, at layout time: runs of fields at
//! constant offsets from an aligned start become [`Frame`]s (one bounds check, then one
//! word load per integer, constant slots for structures whose descendants are known, placed
//! slots for fixed-layout structures and arrays of scalars), and what moves the position by
//! an amount read from the data (strings, sequences, variants) becomes one [`Op`] each.
//! Running it gives exactly the slots, registers and position the general decoder gives;
//! wherever that decoder would report something (data too short, a tag selecting no option,
//! an implausible length), or a frame's word loads would pass the data's end, the program
//! gives up and the caller decodes the event the general way.
//!
//! The tree is flattened by [`crate::flat`]'s walk, which the scan's steps share; the
//! [`Flatten`] implementation here makes frames of slots and steps of [`Op`]s.

use crate::bits::align_up;
use crate::decode::{lazy_slot_of, strided_slot, FieldHow, RunField, Slot, MAX_ELEMENTS};
use crate::fast::TagOptions;
use crate::flat::{Flatten, OpenRun, Scalars, Walk};
use crate::layout::{Layout, Len, Node, NodeId, NodeKind, NO_REG};

/// How a [`SlotField`] makes its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// An integer in the little-endian word at `byte`: `((word << left) as i64 >> right) &
    /// keep`, stored in register `store` if it has one (at bit offset `val`, for reads bit
    /// by bit).
    Little,
    /// The same from the byte-swapped word (big-endian).
    Big,
    /// A text at `byte`: the slot holds its byte offset, `aux` its length.
    Text,
    /// A structure whose descendants are known: `aux` and `val` as they are.
    Const,
    /// A fixed-layout structure or an array of scalars: `val` is its bit offset from the
    /// frame's start, made absolute.
    Place,
    /// Any other fixed-size scalar (floats, bit arrays, fields over more than one word):
    /// read bit by bit at bit offset `val`.
    Lazy,
}

/// One slot of a [`Frame`]. Its value is `int + add + [0, base, start][rel]`, where `int`
/// is `((word << left) as i64 >> right) & keep` of the 8 bytes at `byte` (byte-swapped when
/// `big`; `keep` is 0 but for integers), `base` the frame's bit position and `start` its
/// byte: one formula for every kind but [`How::Lazy`], without a branch on the kind.
#[derive(Debug, Clone, Copy)]
struct SlotField {
    node: NodeId,
    aux: u32,
    add: u64,
    keep: u64,
    /// Byte offset of the word loaded (integers) or of the text, from the frame's start.
    byte: u32,
    left: u8,
    right: u8,
    big: bool,
    rel: u8,
    signed: bool,
    store: u16,
    how: How,
    /// Bit offset from the frame's start (integers, lazy reads, placed slots).
    val: u64,
}

/// Slots at constant offsets from a start aligned to `align`: the frame takes `size_bits`.
#[derive(Debug, Clone, Copy)]
struct Frame {
    align: u32,
    /// How its slots are made: [`BY_BITS`], [`BY_WORDS`] or [`PLAIN_WORDS`].
    kind: u8,
    size_bits: u64,
    /// Its fields: `SlotProgram::fields[first..first + count]`.
    first: u32,
    count: u32,
}

/// One step of a [`SlotProgram`].
#[derive(Debug, Clone, Copy)]
enum Op {
    /// The event scope `which` starts at the next slot (when the slots before it vary).
    Scope { which: u8 },
    /// Fill a frame at the position aligned to its alignment.
    Frame(Frame),
    /// A null-terminated string.
    CString { node: NodeId, align: u32 },
    /// A string or BLOB of a length read from a register (or a static BLOB).
    Sized { node: NodeId, align: u32, len: Len },
    /// An array of scalars read on access: one slot.
    Strided {
        node: NodeId,
        align: u32,
        elem_align: u32,
        len: Len,
    },
    /// An array whose elements are each one frame of `elem_slots` slots: its slot, then the
    /// elements' (the general decoder's `aux` is their number).
    Frames {
        node: NodeId,
        align: u32,
        len: Len,
        elem_slots: u32,
        frame: Frame,
    },
    /// A structure whose descendants vary: its slot, closed by [`Op::Close`].
    Open { node: NodeId, count: u32 },
    /// The innermost open structure or variant ends: its `aux` is the slots made since.
    Close,
    /// A variant: its slot, then the option the tag in `tag_reg` selects
    /// ([`SlotProgram::variants`]`[table]`), whose steps end with a jump to an
    /// [`Op::Close`].
    Variant {
        node: NodeId,
        align: u32,
        tag_reg: u16,
        table: u32,
    },
    /// Align the position (a structure opened where nothing followed to apply it).
    Align { align: u32 },
    /// Go on at step `to`.
    Jump { to: u32 },
    /// The body's end.
    End,
}

/// Structures and variants nested in a program: deeper ones are left to the general decoder.
const MAX_OPEN: usize = 8;

/// The compiled body (common context, specific context, payload) of one event class.
#[derive(Debug, Clone)]
pub(crate) struct SlotProgram {
    ops: Box<[Op]>,
    fields: Box<[SlotField]>,
    variants: Box<[TagOptions]>,
    /// Per event scope (common context, specific context, payload), its first slot from
    /// the body's first when no slot count before it varies; None otherwise (an
    /// [`Op::Scope`] then says) or when the scope is absent.
    static_at: [Option<u32>; 3],
    /// The same program when it is a string between two optional frames (LTTng's
    /// `irq_handler_entry`, `openat`, `net_dev_xmit`…), run without the step loop.
    text: Option<TextShape>,
}

/// A body of one null-terminated string between two optional frames.
#[derive(Debug, Clone, Copy)]
struct TextShape {
    head: Option<Frame>,
    node: NodeId,
    align: u32,
    tail: Option<Frame>,
}

impl TextShape {
    /// The shape of `ops`, when they are an optional frame, a string, an optional frame
    /// and the end.
    fn of(ops: &[Op]) -> Option<TextShape> {
        let frame = |op: Option<&Op>| match op {
            Some(Op::Frame(f)) => Some(*f),
            _ => None,
        };
        let head = frame(ops.first());
        let rest = &ops[head.is_some() as usize..];
        let &Op::CString { node, align } = rest.first()? else {
            return None;
        };
        let tail = frame(rest.get(1));
        let rest = &rest[1 + tail.is_some() as usize..];
        matches!(rest, [Op::End]).then_some(TextShape {
            head,
            node,
            align,
            tail,
        })
    }
}

/// Compiles body scopes into a [`SlotProgram`].
struct Compiler<'a> {
    ops: Vec<Op>,
    fields: Vec<SlotField>,
    walk: Walk<'a>,
    /// Slots made so far, while that is a constant.
    slots: Option<u32>,
    /// Structures and variants open at this point.
    depth: usize,
}

impl SlotProgram {
    /// The program of a body of these scopes (common context, specific context, payload),
    /// when every field has a step; None when some field is the general decoder's alone
    /// (clock or role fields, optionals, variable-length integers, arrays of elements of
    /// varying shape, fields storing a register that are not plain integers).
    pub(crate) fn compile(layout: &Layout, scopes: [Option<NodeId>; 3]) -> Option<SlotProgram> {
        let mut c = Compiler {
            ops: Vec::new(),
            fields: Vec::new(),
            walk: Walk::new(layout),
            slots: Some(0),
            depth: 0,
        };
        let mut static_at = [None; 3];
        for (i, s) in scopes.iter().enumerate() {
            let Some(node) = *s else { continue };
            match c.slots {
                Some(k) => static_at[i] = Some(k),
                None => {
                    c.close();
                    c.ops.push(Op::Scope { which: i as u8 + 1 });
                }
            }
            c.node(node)?;
        }
        c.flush();
        c.ops.push(Op::End);
        for v in &mut c.walk.variants {
            v.fill_dense(|_, o| o);
        }
        Some(SlotProgram {
            text: TextShape::of(&c.ops),
            ops: c.ops.into_boxed_slice(),
            fields: c.fields.into_boxed_slice(),
            variants: c.walk.variants.into_boxed_slice(),
            static_at,
        })
    }

    /// Runs the program from bit `pos` of `data` (the packet's content), appending the
    /// body's slots to `out`, recording where each scope starts in `at` and storing length
    /// and tag fields in `regs`, as the general decoder does. Returns the position after
    /// the body; None wherever the general decoder would err, or a frame's word loads would
    /// pass the end of `data`: the caller then decodes the body the general way (`out` and
    /// `at` may hold part of this one).
    #[inline]
    pub(crate) fn run(
        &self,
        layout: &Layout,
        data: &[u8],
        pos: u64,
        regs: &mut [i128],
        out: &mut Vec<Slot>,
        at: &mut [Option<usize>; 4],
    ) -> Option<u64> {
        let first = out.len();
        for (a, k) in at[1..].iter_mut().zip(self.static_at) {
            if let Some(k) = k {
                *a = Some(first + k as usize);
            }
        }
        match &self.text {
            Some(t) => self.run_text(t, layout, data, pos, regs, out),
            None => self.run_ops(layout, data, pos, regs, out, at),
        }
    }

    /// [`Self::run`] of a [`TextShape`] program.
    #[inline(always)]
    fn run_text(
        &self,
        t: &TextShape,
        layout: &Layout,
        data: &[u8],
        mut pos: u64,
        regs: &mut [i128],
        out: &mut Vec<Slot>,
    ) -> Option<u64> {
        if let Some(f) = &t.head {
            let base = align_up(pos, f.align);
            self.fill(f, layout, data, base, regs, out)?;
            pos = base + f.size_bits;
        }
        pos = cstring(t.node, align_up(pos, t.align), data, out)?;
        if let Some(f) = &t.tail {
            let base = align_up(pos, f.align);
            self.fill(f, layout, data, base, regs, out)?;
            pos = base + f.size_bits;
        }
        Some(pos)
    }

    /// [`Self::run`] by the step loop.
    #[inline(never)]
    fn run_ops(
        &self,
        layout: &Layout,
        data: &[u8],
        mut pos: u64,
        regs: &mut [i128],
        out: &mut Vec<Slot>,
        at: &mut [Option<usize>; 4],
    ) -> Option<u64> {
        // Slots of the structures and variants open, innermost last.
        let mut open = [0u32; MAX_OPEN];
        let mut depth = 0usize;
        let mut pc = 0usize;
        let count = |len: Len, regs: &[i128]| -> Option<u64> {
            match len {
                Len::Static(n) => Some(n),
                Len::Reg(r) => u64::try_from(*regs.get(r as usize)?).ok(),
            }
        };
        loop {
            match self.ops.get(pc)? {
                Op::Frame(f) => {
                    let base = align_up(pos, f.align);
                    self.fill(f, layout, data, base, regs, out)?;
                    pos = base + f.size_bits;
                }
                &Op::CString { node, align } => {
                    pos = cstring(node, align_up(pos, align), data, out)?;
                }
                &Op::Sized { node, align, len } => {
                    let base = align_up(pos, align);
                    let n = count(len, regs)?;
                    let start = byte_of(base)?;
                    start
                        .checked_add(usize::try_from(n).ok()?)
                        .filter(|&e| e <= data.len())?;
                    out.push(Slot {
                        node,
                        aux: n as u32,
                        val: start as u64,
                    });
                    pos = base + n * 8;
                }
                &Op::Strided {
                    node,
                    align,
                    elem_align,
                    len,
                } => {
                    let n = count(len, regs)?;
                    let stride = layout.nodes.get(node as usize)?.stride;
                    if n > MAX_ELEMENTS || stride == 0 {
                        return None;
                    }
                    let (slot, end) =
                        strided_slot(node, n, stride, elem_align, align_up(pos, align), data)?;
                    out.push(slot);
                    pos = end;
                }
                Op::Frames {
                    node,
                    align,
                    len,
                    elem_slots,
                    frame,
                } => {
                    let n = count(*len, regs)?;
                    if n > MAX_ELEMENTS {
                        return None;
                    }
                    pos = align_up(pos, *align);
                    // Every element takes bits: the count is bounded by the data.
                    if n.saturating_mul(frame.size_bits) > data.len() as u64 * 8 {
                        return None;
                    }
                    out.push(Slot {
                        node: *node,
                        aux: (n * *elem_slots as u64) as u32,
                        val: n,
                    });
                    for _ in 0..n {
                        let base = align_up(pos, frame.align);
                        self.fill(frame, layout, data, base, regs, out)?;
                        pos = base + frame.size_bits;
                    }
                }
                &Op::Open { node, count } => {
                    *open.get_mut(depth)? = out.len() as u32;
                    depth += 1;
                    out.push(Slot {
                        node,
                        aux: 0,
                        val: count as u64,
                    });
                }
                Op::Close => {
                    depth = depth.checked_sub(1)?;
                    let at = open[depth] as usize;
                    let n = out.len() - at - 1;
                    out.get_mut(at)?.aux = n as u32;
                }
                &Op::Variant {
                    node,
                    align,
                    tag_reg,
                    table,
                } => {
                    pos = align_up(pos, align);
                    let v = self.variants.get(table as usize)?;
                    let tag = *regs.get(tag_reg as usize)?;
                    let opt = match v.dense(tag) {
                        Some(o) => o,
                        None => v.search(tag)?,
                    };
                    let to = *v.starts.get(opt as usize)?;
                    *open.get_mut(depth)? = out.len() as u32;
                    depth += 1;
                    out.push(Slot {
                        node,
                        aux: 0,
                        val: opt as u64,
                    });
                    pc = to as usize;
                    continue;
                }
                &Op::Scope { which } => {
                    *at.get_mut(which as usize)? = Some(out.len());
                }
                &Op::Align { align } => pos = align_up(pos, align),
                &Op::Jump { to } => {
                    pc = to as usize;
                    continue;
                }
                Op::End => return Some(pos),
            }
            pc += 1;
        }
    }

    /// Appends the slots of frame `f` starting at bit `base` of `data`; None when the
    /// frame's bits are not all in `data`.
    #[inline(always)]
    fn fill(
        &self,
        f: &Frame,
        layout: &Layout,
        data: &[u8],
        base: u64,
        regs: &mut [i128],
        out: &mut Vec<Slot>,
    ) -> Option<()> {
        // From a whole window after the start (which holds the frame): its loads need no
        // bounds check. Near the data's end (the last events of a packet), bit by bit.
        if f.kind != BY_BITS {
            let start = byte_of(base);
            let win = start.and_then(|s| data.get(s..)?.first_chunk::<WINDOW>());
            if let (Some(start), Some(win)) = (start, win) {
                let fields = self.fields.get(f.first as usize..)?;
                let fields = fields.get(..f.count as usize)?;
                if f.kind == PLAIN_WORDS {
                    fill_fields::<true>(fields, win, start, base, regs, out);
                } else {
                    fill_fields::<false>(fields, win, start, base, regs, out);
                }
                return Some(());
            }
        }
        self.fill_by_bits(f, layout, data, base, regs, out)
    }

    /// [`Self::fill`] by bit reads, for a frame that does not start on a byte or whose word
    /// loads would pass the end of `data` (which holds the frame's bits).
    #[cold]
    #[inline(never)]
    fn fill_by_bits(
        &self,
        f: &Frame,
        layout: &Layout,
        data: &[u8],
        base: u64,
        regs: &mut [i128],
        out: &mut Vec<Slot>,
    ) -> Option<()> {
        if base.saturating_add(f.size_bits) > data.len() as u64 * 8 {
            return None;
        }
        let fields = self
            .fields
            .get(f.first as usize..)?
            .get(..f.count as usize)?;
        for fd in fields {
            let slot = match fd.how {
                How::Little | How::Big | How::Lazy => {
                    let n = layout.nodes.get(fd.node as usize)?;
                    let s = lazy_slot_of(n, fd.node, data, base + fd.val);
                    if fd.store != NO_REG {
                        *regs.get_mut(fd.store as usize)? = if fd.signed {
                            s.val as i64 as i128
                        } else {
                            s.val as i128
                        };
                    }
                    s
                }
                How::Text => Slot {
                    node: fd.node,
                    aux: fd.aux,
                    val: byte_of(base)? as u64 + fd.byte as u64,
                },
                How::Const => Slot {
                    node: fd.node,
                    aux: fd.aux,
                    val: fd.val,
                },
                How::Place => Slot {
                    node: fd.node,
                    aux: fd.aux,
                    val: base + fd.val,
                },
            };
            out.push(slot);
        }
        Some(())
    }
}

/// [`Frame::kind`]: bit reads ([`How::Lazy`] fields, or more than a window's bytes).
const BY_BITS: u8 = 0;
/// [`Frame::kind`]: word loads from a window.
const BY_WORDS: u8 = 1;
/// [`Frame::kind`]: word loads from a window, no field big-endian or storing a register.
const PLAIN_WORDS: u8 = 2;

/// Bytes a frame's loads read from a window without a bounds check: the largest byte
/// offset a `u8` holds and the 8 bytes from there.
const WINDOW: usize = 255 + 8;

/// Appends the slots of `fields`, a frame's made by [`SlotField`]'s formula, whose start
/// is byte `start` (bit `base`) of the data, `win` the window from there. `PLAIN`: no field
/// is big-endian or stores a register.
#[inline(always)]
fn fill_fields<const PLAIN: bool>(
    fields: &[SlotField],
    win: &[u8; WINDOW],
    start: usize,
    base: u64,
    regs: &mut [i128],
    out: &mut Vec<Slot>,
) {
    let rels = [0, base, start as u64, 0];
    out.reserve(fields.len());
    for fd in fields {
        let at = usize::from(fd.byte as u8);
        let b: [u8; 8] = win[at..at + 8].try_into().unwrap_or_default();
        let mut w = u64::from_le_bytes(b);
        if !PLAIN && fd.big {
            w = w.swap_bytes();
        }
        let v = ((((w << fd.left) as i64) >> fd.right) as u64) & fd.keep;
        if !PLAIN && fd.store != NO_REG {
            if let Some(r) = regs.get_mut(fd.store as usize) {
                *r = if fd.signed {
                    v as i64 as i128
                } else {
                    v as i128
                };
            }
        }
        out.push(Slot {
            node: fd.node,
            aux: fd.aux,
            val: v + fd.add + rels[usize::from(fd.rel & 3)],
        });
    }
}

/// Appends the slot of the null-terminated string `node` at bit `base` of `data`; the
/// position after its terminator.
#[inline(always)]
fn cstring(node: NodeId, base: u64, data: &[u8], out: &mut Vec<Slot>) -> Option<u64> {
    let start = byte_of(base)?;
    let len = crate::fast::nul_at(data.get(start..)?)?;
    out.push(Slot {
        node,
        aux: len.min(u32::MAX as usize) as u32,
        val: start as u64,
    });
    Some(base + (len as u64 + 1) * 8)
}

/// Byte `pos / 8` when `pos` is on a byte.
#[inline(always)]
fn byte_of(pos: u64) -> Option<usize> {
    if pos.is_multiple_of(8) {
        usize::try_from(pos / 8).ok()
    } else {
        None
    }
}

impl Compiler<'_> {
    /// The frame of run `f` once all its fields are in.
    fn frame_of(&self, f: OpenRun) -> Frame {
        let fields = &self.fields[f.first as usize..];
        let span = fields
            .iter()
            .map(|fd| match fd.how {
                How::Little | How::Big => fd.byte as u64 + 8,
                How::Text => fd.byte as u64 + fd.aux as u64,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        // By word loads from a window of the data, which then holds the whole frame.
        let words = fields.iter().all(|fd| fd.how != How::Lazy)
            && span <= WINDOW as u64
            && f.end <= WINDOW as u64 * 8;
        Frame {
            align: f.align,
            kind: if !words {
                BY_BITS
            } else if fields.iter().all(|fd| !fd.big && fd.store == NO_REG) {
                PLAIN_WORDS
            } else {
                BY_WORDS
            },
            size_bits: f.end,
            first: f.first,
            count: fields.len() as u32,
        }
    }

    /// Adds a slot to the open frame.
    fn push(&mut self, mut f: SlotField) -> Option<()> {
        self.walk.run.as_ref()?;
        (f.add, f.rel) = match f.how {
            How::Little | How::Big => (0, 0),
            How::Text => (f.byte as u64, 2),
            How::Const => (f.val, 0),
            How::Place => (f.val, 1),
            How::Lazy => (0, 0),
        };
        if !matches!(f.how, How::Little | How::Big) {
            // No integer: the word is loaded from the frame's start and cut to nothing.
            (f.keep, f.left, f.right, f.big) = (0, 0, 0, false);
        } else {
            f.big = f.how == How::Big;
        }
        self.fields.push(f);
        self.slots = self.slots.map(|k| k + 1);
        Some(())
    }

    /// A step that makes one slot.
    fn op(&mut self, op: Op) {
        self.ops.push(op);
        self.slots = self.slots.map(|k| k + 1);
    }

    /// The number of slots `node` always makes, if constant.
    fn const_slots(&self, node: NodeId, depth: usize) -> Option<u32> {
        let n = &self.walk.layout.nodes[node as usize];
        if depth > MAX_OPEN {
            return None;
        }
        match &n.kind {
            NodeKind::Struct { .. } if n.plan.is_none() => {
                let mut k = 1u32;
                for m in self.walk.layout.members_of(node) {
                    k = k.checked_add(self.const_slots(m.node, depth + 1)?)?;
                }
                Some(k)
            }
            NodeKind::Array { .. } if n.stride == 0 => None,
            NodeKind::Variant { .. } | NodeKind::Optional { .. } => None,
            _ => Some(1),
        }
    }
}

/// A slot field of `node` with nothing set yet.
fn field_of(node: NodeId) -> SlotField {
    SlotField {
        node,
        aux: 0,
        add: 0,
        keep: 0,
        byte: 0,
        left: 0,
        right: 0,
        big: false,
        rel: 0,
        signed: false,
        store: NO_REG,
        how: How::Lazy,
        val: 0,
    }
}

impl<'a> Flatten<'a> for Compiler<'a> {
    fn walk(&mut self) -> &mut Walk<'a> {
        &mut self.walk
    }

    fn next_field(&self) -> u32 {
        self.fields.len() as u32
    }

    fn emit_run(&mut self, r: OpenRun) {
        let frame = self.frame_of(r);
        self.ops.push(Op::Frame(frame));
    }

    fn emit_align(&mut self, align: u32) {
        self.ops.push(Op::Align { align });
    }

    fn here(&self) -> u32 {
        self.ops.len() as u32
    }

    fn scalar(&mut self, node: NodeId, off: u64) -> Option<()> {
        let layout = self.walk.layout;
        let n = &layout.nodes[node as usize];
        let field = field_of(node);
        let f = match n.kind {
            NodeKind::Int { .. } => {
                let r = RunField::new(n, node, off);
                match r.how {
                    FieldHow::Little | FieldHow::Big => SlotField {
                        how: if r.how == FieldHow::Little {
                            How::Little
                        } else {
                            How::Big
                        },
                        left: r.left,
                        right: r.right,
                        signed: r.signed,
                        store: r.store,
                        byte: r.byte,
                        keep: r.keep,
                        val: off,
                        ..field
                    },
                    // Its register store is the general decoder's.
                    _ if n.store != NO_REG => return None,
                    _ => SlotField { val: off, ..field },
                }
            }
            _ if n.effects => return None,
            _ => SlotField { val: off, ..field },
        };
        self.push(f)
    }

    fn fixed_struct(&mut self, node: NodeId, off: u64) -> Option<()> {
        self.push(SlotField {
            how: How::Place,
            val: off,
            ..field_of(node)
        })
    }

    fn text_in_run(&self, n: &Node) -> bool {
        n.store == NO_REG && n.align >= 8
    }

    fn text(&mut self, node: NodeId, off: u64, len: u64) -> Option<()> {
        self.push(SlotField {
            how: How::Text,
            byte: u32::try_from(off / 8).ok()?,
            aux: u32::try_from(len).ok()?,
            ..field_of(node)
        })
    }

    fn scalars(&self, _n: &Node, len: Len) -> Option<Scalars> {
        match len {
            Len::Static(k) if k <= MAX_ELEMENTS => Some(Scalars::Whole(k)),
            Len::Static(_) => None,
            Len::Reg(_) => Some(Scalars::Step),
        }
    }

    fn array_field(&mut self, node: NodeId, start: u64, k: u64) -> Option<()> {
        self.push(SlotField {
            how: How::Place,
            aux: k as u32,
            val: start,
            ..field_of(node)
        })
    }

    fn cstring(&mut self, node: NodeId, align: u32) {
        self.op(Op::CString { node, align });
    }

    fn sized(&mut self, node: NodeId, align: u32, len: Len) -> Option<()> {
        if self.walk.layout.nodes[node as usize].effects {
            return None;
        }
        self.op(Op::Sized { node, align, len });
        Some(())
    }

    fn array_step(&mut self, node: NodeId, align: u32, len: Len) -> Option<()> {
        let elem_align = match self.walk.layout.nodes[node as usize].kind {
            NodeKind::Array { elem, .. } => self.walk.layout.nodes[elem as usize].align,
            _ => return None,
        };
        self.op(Op::Strided {
            node,
            align,
            elem_align,
            len,
        });
        Some(())
    }

    fn repeat(
        &mut self,
        node: NodeId,
        elem: NodeId,
        align: u32,
        len: Len,
        r: OpenRun,
    ) -> Option<()> {
        let elem_slots = self.const_slots(elem, self.depth + 1)?;
        let frame = self.frame_of(r);
        self.slots = None;
        self.ops.push(Op::Frames {
            node,
            align,
            len,
            elem_slots,
            frame,
        });
        Some(())
    }

    fn open_struct(&mut self, node: NodeId) -> Option<bool> {
        let layout = self.walk.layout;
        let n = &layout.nodes[node as usize];
        let NodeKind::Struct { count, .. } = n.kind else {
            return None;
        };
        match self.const_slots(node, self.depth) {
            Some(k) => {
                // Where the frame starts is the structure's place, as its first member
                // will be (the slot itself is constant).
                self.place(n.align);
                self.push(SlotField {
                    how: How::Const,
                    aux: k - 1,
                    val: count as u64,
                    ..field_of(node)
                })?;
                Some(false)
            }
            None => {
                self.close();
                if self.depth >= MAX_OPEN {
                    return None;
                }
                self.op(Op::Open { node, count });
                self.depth += 1;
                Some(true)
            }
        }
    }

    fn close_struct(&mut self) {
        self.ops.push(Op::Close);
        self.depth -= 1;
    }

    fn variant(&mut self, node: NodeId, align: u32, tag_reg: u16, table: u32) -> Option<()> {
        if self.depth >= MAX_OPEN {
            return None;
        }
        self.ops.push(Op::Variant {
            node,
            align,
            tag_reg,
            table,
        });
        self.depth += 1;
        // The options' slots vary.
        self.slots = None;
        Some(())
    }

    fn end_option(&mut self) {
        self.ops.push(Op::End);
    }

    fn jump(&mut self, at: u32, to: u32) {
        self.ops[at as usize] = Op::Jump { to };
    }

    fn end_variant(&mut self) {
        self.ops.push(Op::Close);
        self.depth -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Decoder;
    use proptest::prelude::*;

    /// Fields of event bodies, `{i}` standing for a suffix that makes their names unique:
    /// every kind of step (and, last, two kinds of field the programs leave to the general
    /// decoder).
    const FRAGMENTS: &[&str] = &[
        "integer { size = 32; align = 8; signed = true; } a{i};",
        "integer { size = 3; align = 1; } b{i};",
        "integer { size = 16; align = 16; byte_order = be; signed = true; } c{i};",
        "string s{i};",
        "integer { size = 8; align = 8; } n{i}; integer { size = 16; align = 8; } q{i}[n{i}];",
        "integer { size = 8; align = 8; } m{i}; struct { integer { size = 32; align = 8; \
         signed = true; } fd; integer { size = 16; align = 8; base = 16; } ev; struct { \
         integer { size = 1; align = 1; } x; integer { size = 7; align = 1; } pad; } bits; \
         } e{i}[m{i}];",
        "integer { size = 8; align = 8; encoding = UTF8; } t{i}[5];",
        "enum : integer { size = 8; align = 8; } { A = 0, B = 1, C = 2 ... 5 } g{i}; \
         variant <g{i}> { struct { } A; struct { integer { size = 32; align = 32; } v; \
         string t; } B; integer { size = 8; align = 8; } C[3]; } v{i};",
        "floating_point { exp_dig = 8; mant_dig = 24; align = 32; } f{i};",
        "struct { integer { size = 4; align = 1; } x; string y; } w{i};",
        "struct { integer { size = 8; align = 8; } k; integer { size = 8; align = 8; } z[k]; \
         } u{i};",
        "integer { size = 64; align = 64; } big{i};",
        "struct { integer { size = 16; align = 16; } h; integer { size = 5; align = 1; } j; \
         } p{i};",
        "integer { size = 16; align = 8; byte_order = be; } l{i}; \
         integer { size = 8; align = 8; encoding = UTF8; } st{i}[l{i}];",
        "struct { enum : integer { size = 8; align = 8; } { X = 0, Y = 1 } k; variant <k> { \
         integer { size = 16; align = 8; } X; struct { integer { size = 8; align = 8; } n; \
         integer { size = 32; align = 8; } e[n]; string s; } Y; } o; } vs{i};",
        "struct { integer { size = 8; align = 8; } a; integer { size = 4; align = 1; \
         signed = true; } b; } sa{i}[2];",
        "integer { size = 61; align = 1; signed = true; byte_order = be; } wide{i};",
        // Left to the general decoder: elements of varying shape.
        "integer { size = 8; align = 8; } r{i}; struct { string a; integer { size = 8; \
         align = 8; } b; } x{i}[r{i}];",
    ];

    /// Fragments a program covers.
    const COVERED: usize = FRAGMENTS.len() - 1;

    fn fields(picks: &[usize]) -> String {
        picks
            .iter()
            .enumerate()
            .map(|(i, p)| FRAGMENTS[*p].replace("{i}", &i.to_string()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A trace class whose stream has an LTTng compact header and the given common context,
    /// and whose one event class has the given specific context and payload.
    fn class(byte_order: &str, common: &str, context: &str, payload: &str) -> Layout {
        let scope = |name: &str, fields: &str| {
            if fields.is_empty() {
                String::new()
            } else {
                format!("{name} := struct {{ {fields} }};")
            }
        };
        let tsdl = format!(
            "/* CTF 1.8 */\ntrace {{ major = 1; minor = 8; byte_order = {byte_order}; }};\n\
             clock {{ name = c; freq = 1000000000; }};\n\
             stream {{ id = 0; event.header := struct {{ \
               enum : integer {{ size = 5; align = 1; }} {{ compact = 0 ... 30, extended = 31 }} id; \
               variant <id> {{ struct {{ integer {{ size = 27; align = 1; map = clock.c.value; }} \
               timestamp; }} compact; struct {{ integer {{ size = 32; align = 8; }} id; \
               integer {{ size = 64; align = 8; map = clock.c.value; }} timestamp; }} extended; \
               }} v; }} align(8); {} }};\n\
             event {{ id = 0; name = \"e\"; stream_id = 0; {} {} }};\n",
            scope("event.context", common),
            scope("context", context),
            scope("fields", payload),
        );
        let class = crate::metadata::parse(tsdl.as_bytes()).expect("metadata");
        Layout::compile(&class).expect("layout")
    }

    /// Slots as plain tuples, for comparison.
    type Slots = Vec<(u32, u32, u64)>;

    /// What a body decodes to: its slots, where each scope starts, the position after it
    /// and the registers.
    type Decoded = (Slots, [Option<usize>; 4], u64, Vec<i128>);

    fn plain(slots: &[Slot]) -> Slots {
        slots.iter().map(|s| (s.node, s.aux, s.val)).collect()
    }

    /// The body of the layout's one event class decoded the general way from bit `pos`.
    fn general(layout: &Layout, data: &[u8], pos: u64) -> Option<Decoded> {
        let sl = layout.streams.at(0);
        let el = sl.events.at(0);
        let mut dec = Decoder::new(layout);
        let (mut slots, mut at, mut pos) = (Vec::new(), [None; 4], pos);
        for (w, node) in [sl.event_common_context, el.context, el.payload]
            .into_iter()
            .enumerate()
        {
            if let Some(n) = node {
                at[w + 1] = Some(slots.len());
                dec.decode(layout, n, data, &mut pos, &mut slots).ok()?;
            }
        }
        Some((plain(&slots), at, pos, dec.regs_mut().to_vec()))
    }

    /// The same body decoded by its program, after a slot of something else.
    fn by_program(layout: &Layout, data: &[u8], pos: u64) -> Option<Decoded> {
        let sl = layout.streams.at(0);
        let program = sl.events.at(0).program(layout, sl.event_common_context);
        let program = program.expect("a program");
        let mut dec = Decoder::new(layout);
        let mut slots = vec![Slot::default()];
        let mut at = [Some(0), None, None, None];
        let end = program.run(layout, data, pos, dec.regs_mut(), &mut slots, &mut at)?;
        let at = [1, 2, 3].map(|w| at[w].map(|a| a - 1));
        Some((
            plain(&slots[1..]),
            [None, at[0], at[1], at[2]],
            end,
            dec.regs_mut().to_vec(),
        ))
    }

    /// Bytes for a body: few distinct values, zeros often enough to end strings, small
    /// lengths and tags (every option of the variants).
    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                [0, 1, 2, 3, 0x41, 0x80, 0xff, 0, 1, 0x7f][(x % 10) as usize]
            })
            .collect()
    }

    /// Runs `layout`'s program against the general decoder on many byte strings: they
    /// agree wherever the program gives a result, and it gives one for most bodies the
    /// general decoder reads. Returns (general successes, program successes).
    fn agree(layout: &Layout, seed: u64, rounds: usize) -> (usize, usize) {
        let (mut ok, mut same) = (0, 0);
        for i in 0..rounds {
            let s = seed.wrapping_mul(31).wrapping_add(i as u64);
            // Every other body with room after it; the others end anywhere, truncated.
            let len = (s % 97) as usize + (i % 2) * 400;
            let data = bytes(s, len);
            // Bodies start on a byte after LTTng's headers; some start anywhere.
            let pos = if i % 4 == 3 {
                (s >> 8) % 40
            } else {
                (s >> 8) % 5 * 8
            };
            let want = general(layout, &data, pos);
            ok += want.is_some() as usize;
            if let Some(got) = by_program(layout, &data, pos) {
                assert_eq!(Some(&got), want.as_ref(), "at {pos} of {data:?}");
                same += 1;
            }
        }
        (ok, same)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// Programs of generated bodies make the general decoder's slots, positions and
        /// registers, with any contexts, in either byte order, on whole and truncated data.
        #[test]
        fn programs_decode_as_the_general_decoder(
            picks in proptest::collection::vec(0..FRAGMENTS.len(), 1..7),
            context in proptest::collection::vec(0..FRAGMENTS.len(), 0..3),
            common in 0usize..3,
            big in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let common = match common {
                0 => String::new(),
                // LTTng's context of `--contexts`: a fixed-layout structure.
                1 => "integer { size = 8; align = 8; encoding = UTF8; } procname[16]; \
                      integer { size = 32; align = 8; signed = true; } pid;".into(),
                _ => "string cs; integer { size = 16; align = 16; } cn;".into(),
            };
            let payload = fields(&picks);
            let covered = picks.iter().chain(&context).all(|p| *p < COVERED);
            let context = fields(&context);
            let layout = class(if big { "be" } else { "le" }, &common, &context, &payload);
            let el = layout.streams.at(0).events.at(0);
            if el.fixed_body.is_some() {
                return Ok(());
            }
            if !el.has_program(&layout, layout.streams.at(0)) {
                prop_assert!(!covered, "no program for {context} / {payload}");
                return Ok(());
            }
            let (ok, same) = agree(&layout, seed, 60);
            // Half the bodies have room for every word load after them.
            prop_assert_eq!(same, ok, "{}", payload);
        }
    }

    /// LTTng's bodies of that kind (lengths of one byte, for the random bytes to make
    /// short sequences): the payloads of `irq_handler_entry`, `openat`, `poll`,
    /// `epoll_wait`'s exit, `block_rq_issue` and `net_if_receive_skb` (a variant of
    /// structures with a nested variant).
    #[test]
    fn lttng_bodies() {
        let ip = "integer { size = 8; align = 8; byte_order = be; }";
        let bodies = [
            "integer { size = 32; align = 8; signed = 1; } _irq; string _name;".to_string(),
            "integer { size = 32; align = 8; signed = 1; } _dfd; string _filename; \
             integer { size = 32; align = 8; signed = 1; } _flags; \
             integer { size = 16; align = 8; } _mode;"
                .to_string(),
            FRAGMENTS[5].replace("{i}", "0"),
            "integer { size = 64; align = 8; signed = 1; } _ret; \
             integer { size = 8; align = 8; } _fds_length; \
             integer { size = 8; align = 8; } _overflow; \
             struct { struct { integer { size = 64; align = 8; base = 16; } _u64; \
             integer { size = 32; align = 8; } _fd; } _data_union; \
             integer { size = 32; align = 8; base = 16; } _raw_events; \
             struct { integer { size = 1; align = 1; } _EPOLLIN; \
             integer { size = 7; align = 1; } _padding; } _events; } _fds[ _fds_length ];"
                .to_string(),
            "integer { size = 32; align = 8; } _dev; integer { size = 64; align = 8; } _sector; \
             integer { size = 32; align = 8; } _rwbs; integer { size = 8; align = 8; } \
             __cmd_length; integer { size = 8; align = 8; base = 16; } _cmd[ __cmd_length ]; \
             integer { size = 8; align = 8; encoding = UTF8; } _comm[16];"
                .to_string(),
            format!(
                "integer {{ size = 64; align = 8; base = 16; }} _skbaddr; \
                 integer {{ size = 32; align = 8; }} _len; string _name; \
                 enum : integer {{ size = 8; align = 8; }} {{ _unknown = 0, _ipv4 = 1 }} _t; \
                 variant <_t> {{ struct {{ }} _unknown; struct {{ \
                 integer {{ size = 4; align = 1; byte_order = be; }} _version; \
                 integer {{ size = 4; align = 1; byte_order = be; }} _ihl; \
                 integer {{ size = 16; align = 8; byte_order = be; }} _tot_len; \
                 {ip} _saddr[4]; {ip} _daddr[4]; \
                 enum : integer {{ size = 8; align = 8; }} {{ _none = 0, _tcp = 1 }} _tt; \
                 variant <_tt> {{ struct {{ }} _none; struct {{ \
                 integer {{ size = 16; align = 8; byte_order = be; }} _source_port; \
                 integer {{ size = 4; align = 1; byte_order = be; }} _data_offset; \
                 integer {{ size = 1; align = 1; byte_order = be; }} _fin; }} _tcp; }} _th; \
                 }} _ipv4; }} _nh;"
            ),
        ];
        for body in &bodies {
            for (byte_order, common) in [
                ("le", ""),
                (
                    "le",
                    "integer { size = 8; align = 8; encoding = UTF8; } _procname[16]; \
                     integer { size = 32; align = 8; signed = 1; } _pid;",
                ),
                ("be", ""),
            ] {
                let layout = class(byte_order, common, "", body);
                let el = layout.streams.at(0).events.at(0);
                assert!(
                    el.has_program(&layout, layout.streams.at(0)),
                    "no program: {body}"
                );
                let (ok, same) = agree(&layout, 7, 2_000);
                assert!(ok > 200, "{ok} bodies read: {body}");
                assert_eq!(same, ok, "{body}");
            }
        }
    }
}
