//! Compiles a [`TraceClass`] into flat decoding layouts.
//!
//! The decoder walks [`Node`]s rather than the `ir` tree: nodes are stored in one arena, carry
//! their effective alignment, and every field that some sequence, variant or optional refers to
//! is given a *register* the decoder stores its value into, so that dynamic lengths and tags are
//! found in O(1) without any path lookup at decode time.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use crate::error::MetadataError;
use crate::ir::*;
use rustc_hash::FxBuildHasher;

/// Index of a node in [`Layout::nodes`].
pub type NodeId = u32;
/// Marks a node whose value is stored in no register.
pub(crate) const NO_REG: u16 = u16::MAX;

/// What a node decodes.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A fixed-size integer (or enumeration).
    Int {
        /// Size in bits (1 to 64).
        size: u32,
        /// Two's complement.
        signed: bool,
        /// Little-endian byte order.
        little: bool,
        /// Preferred display base.
        base: DisplayBase,
        /// Index into [`Layout::enums`] when this integer is an enumeration.
        enum_idx: Option<u32>,
    },
    /// A LEB128 variable-length integer (CTF 2).
    VarInt {
        /// Signed LEB128.
        signed: bool,
        /// Preferred display base.
        base: DisplayBase,
        /// Index into [`Layout::enums`] when this integer is an enumeration.
        enum_idx: Option<u32>,
    },
    /// An IEEE 754 binary floating point number.
    Float {
        /// Size in bits (32 or 64).
        size: u32,
        /// Little-endian byte order.
        little: bool,
    },
    /// A bit array, bit map or boolean (CTF 2).
    Bits {
        /// Size in bits.
        size: u32,
        /// Little-endian byte order.
        little: bool,
        /// Which of the three it is.
        kind: BitArrayKind,
    },
    /// A null-terminated string.
    CString,
    /// A string of a given byte length (CTF 2), or an array/sequence of UTF-8 bytes (CTF 1.8
    /// `char[16]`), decoded as one text slot.
    SizedString {
        /// Length in bytes.
        len: Len,
    },
    /// A BLOB (CTF 2): raw bytes of a given length.
    Blob {
        /// Length in bytes.
        len: Len,
    },
    /// A structure.
    Struct {
        /// Members: `Layout::members[first..first + count]`.
        first: u32,
        /// Number of members.
        count: u32,
    },
    /// A variant: one of its options, chosen by the value of a tag field.
    Variant {
        /// Register holding the tag's value.
        tag_reg: u16,
        /// Options: `Layout::members[first..first + count]`.
        first: u32,
        /// Number of options.
        count: u32,
        /// Tag ranges and the option (index from `first`) each selects.
        ranges: Arc<[(IntRange, u32)]>,
    },
    /// A static array or a sequence (dynamic length).
    Array {
        /// The element's node.
        elem: NodeId,
        /// Number of elements.
        len: Len,
    },
    /// An optional (CTF 2): the element, present or not according to a selector field.
    Optional {
        /// Register holding the selector's value.
        sel_reg: u16,
        /// Selector values for which it is present. Empty: present when the selector is
        /// non-zero.
        ranges: Arc<[IntRange]>,
        /// The element's node.
        elem: NodeId,
    },
}

/// A length known statically or read from a register.
#[derive(Debug, Clone, Copy)]
pub enum Len {
    /// This many.
    Static(u64),
    /// The value of a previously decoded field, stored in this register.
    Reg(u16),
}

/// One compiled field.
#[derive(Debug, Clone)]
pub struct Node {
    /// What the node decodes.
    pub kind: NodeKind,
    /// Alignment in bits applied before decoding.
    pub align: u32,
    /// Register this node's integer value is stored into, or [`NO_REG`].
    pub(crate) store: u16,
    /// The field's special meaning (timestamp, event id, packet size…), if any.
    pub role: Option<Role>,
    /// True when the integer updates the stream's default clock.
    pub clock: bool,
    /// True when decoding this node does more than produce its value (clock, register, role).
    pub(crate) effects: bool,
    /// For a structure of fixed-size scalars without side effects: the constant bit offset of
    /// each member. The decoder then records only where the structure starts and its members
    /// are read on access.
    pub plan: Option<Arc<FixedPlan>>,
    /// For other structures: the fixed layout of their leading fixed-size scalars (side
    /// effects allowed), decoded eagerly in one pass.
    pub(crate) prefix: Option<Arc<FixedPlan>>,
    /// For an array or sequence of fixed-size scalars without side effects whose size is a
    /// multiple of their alignment: the element size in bits. Such arrays take one slot (start
    /// position and count) and their elements are read on access. 0 otherwise.
    pub stride: u64,
    /// For a structure without a fixed plan: how the decoder reads its members,
    /// `Layout::pieces[first..first + count]` as (first, count).
    pub(crate) pieces: (u32, u32),
}

/// Constant layout of a structure whose members are all fixed-size scalars.
#[derive(Debug)]
pub struct FixedPlan {
    /// Size of the whole structure in bits.
    pub size_bits: u64,
    /// Bit offset of each member from the structure start.
    pub offsets: Box<[u64]>,
    /// How to read each member, without looking its node up.
    pub reads: Box<[crate::fast::PlanRead]>,
}

/// A structure member or variant option.
#[derive(Debug, Clone)]
pub struct Member {
    /// The member's (or option's) name.
    pub name: Arc<str>,
    /// Its type's node.
    pub node: NodeId,
}

/// Compiled layouts of one trace class: an arena of nodes plus the roots of every scope.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Every node, indexed by [`NodeId`].
    pub nodes: Vec<Node>,
    /// Members of every structure and options of every variant (see [`NodeKind`]).
    pub members: Vec<Member>,
    /// Mappings of every enumeration (see `enum_idx` in [`NodeKind::Int`]).
    pub enums: Vec<Arc<[EnumMapping]>>,
    /// Number of registers the decoder needs.
    pub(crate) registers: usize,
    /// The packet header's node, if the trace has one.
    pub packet_header: Option<NodeId>,
    /// Per stream class, by stream class id.
    pub streams: IdMap<StreamLayout>,
    /// Decoding steps of the structures without a fixed plan (see [`Node`]).
    pub(crate) pieces: Vec<crate::decode::Piece>,
    /// The fields of those steps' runs.
    pub(crate) run_fields: Vec<crate::decode::RunField>,
}

/// Compiled layouts of one stream class.
#[derive(Debug, Clone, Default)]
pub struct StreamLayout {
    /// The packet context's node.
    pub packet_context: Option<NodeId>,
    /// The event header's node.
    pub event_header: Option<NodeId>,
    /// The event common context's node.
    pub event_common_context: Option<NodeId>,
    /// Per event class, by event class id.
    pub events: IdMap<EventLayout>,
    /// Default clock of the stream, as an index into `TraceClass::clocks`.
    pub clock: Option<usize>,
    /// A straight-line decoding of the event header when it has the tagged shape LTTng uses.
    pub(crate) fast_header: Option<TaggedHeader>,
    /// The same header compiled to straight-line reads, when its only effects are the event
    /// id and the clock.
    pub(crate) compiled_header: Option<crate::fast::FastHeader>,
    /// How [`crate::StreamReader::scan`] reads this class's events, made from the compiled
    /// header and the events' fixed bodies (clear it with them).
    pub(crate) scan: Option<crate::fast::ScanTable>,
}

/// An event header `struct { <scalar tag>; variant <tag> { struct { scalars… } … } }` (LTTng's
/// compact and large headers): decoded without recursion, into the same slots as the general
/// path.
#[derive(Debug, Clone)]
pub(crate) struct TaggedHeader {
    pub header: NodeId,
    pub tag: NodeId,
    pub tag_size: u32,
    pub variant: NodeId,
    /// Per option: its structure node and that structure's fixed layout.
    pub options: Vec<(NodeId, Arc<FixedPlan>)>,
    /// Upper bound of the header size in bits, whatever the option.
    pub max_bits: u64,
}

/// Compiled layouts of one event class.
#[derive(Debug, Clone)]
pub struct EventLayout {
    /// The event class's name.
    pub name: Arc<str>,
    /// The specific context's node.
    pub context: Option<NodeId>,
    /// The payload's node.
    pub payload: Option<NodeId>,
    /// Common context, specific context and payload placed without decoding, when they are
    /// all fixed-layout structures.
    pub(crate) fixed_body: Option<crate::fast::FixedBody>,
    /// For the other classes: their scopes compiled into a flat program making the slots
    /// the general decoder makes, when every field has a step. Compiled when first used
    /// (see [`Self::program`]): most readers (`count`, the analyses' skipping reads) never
    /// decode most classes, and a kernel trace's metadata has hundreds of them.
    pub(crate) program: std::sync::OnceLock<Option<crate::program::SlotProgram>>,
}

impl StreamLayout {
    /// Whether the event header decodes by straight-line reads (LTTng's compact and large
    /// headers) rather than by the general decoder.
    pub fn has_compiled_header(&self) -> bool {
        self.compiled_header.is_some()
    }

    /// Whether [`crate::StreamReader::scan`] has a table of this stream class's event shapes,
    /// to read their events by straight-line reads rather than through the general decoder.
    pub fn has_scan_table(&self) -> bool {
        self.scan.is_some()
    }
}

impl EventLayout {
    /// Whether the class's contexts and payload are placed without decoding (all fixed-layout
    /// structures), their members read on access.
    pub fn has_fixed_body(&self) -> bool {
        self.fixed_body.is_some()
    }

    /// Whether the class's scopes, not all fixed-layout structures, are decoded by a program
    /// compiled from them (strings, sequences, variants) rather than by the general decoder;
    /// `sl` is the class's stream class in `layout`.
    pub fn has_program(&self, layout: &Layout, sl: &StreamLayout) -> bool {
        self.program(layout, sl.event_common_context).is_some()
    }

    /// The class's program (compiled on first use), `common` being its stream class's
    /// common context; None for a class with a fixed body or some field the general
    /// decoder alone decodes.
    #[inline]
    pub(crate) fn program(
        &self,
        layout: &Layout,
        common: Option<NodeId>,
    ) -> Option<&crate::program::SlotProgram> {
        match self.program.get() {
            Some(p) => p.as_ref(),
            None => self.compile_program(layout, common),
        }
    }

    /// [`Self::program`] the first time.
    #[cold]
    #[inline(never)]
    fn compile_program(
        &self,
        layout: &Layout,
        common: Option<NodeId>,
    ) -> Option<&crate::program::SlotProgram> {
        self.program
            .get_or_init(|| {
                if self.fixed_body.is_some() {
                    return None;
                }
                let scopes = [common, self.context, self.payload];
                crate::program::SlotProgram::compile(layout, scopes)
            })
            .as_ref()
    }

    /// Position of the payload member named `name`, to read it with
    /// [`crate::Event::payload_member`] without a name lookup per event.
    pub fn payload_index(&self, layout: &Layout, name: &str) -> Option<usize> {
        let p = self.payload?;
        layout.members_of(p).iter().position(|m| &*m.name == name)
    }
}

impl Layout {
    /// The same layout with every compiled shortcut (straight-line headers, fixed event
    /// bodies, the scan tables, arrays read on access) removed, so that the general decoder
    /// does it all: the reference the shortcuts are checked against.
    pub fn without_shortcuts(&self) -> Layout {
        let mut layout = self.clone();
        for (_, sl) in layout.streams.iter_mut() {
            sl.compiled_header = None;
            sl.scan = None;
            for (_, el) in sl.events.iter_mut() {
                el.fixed_body = None;
                el.program = std::sync::OnceLock::from(None);
            }
        }
        for n in &mut layout.nodes {
            n.stride = 0;
        }
        layout
    }

    /// Groups the members of structure `node` into [`crate::decode::Piece`]s (appended to
    /// [`Self::pieces`]): runs of fixed-size scalars wherever their offsets from the run's
    /// aligned start are constant, so that the decoder reads them without a call each.
    /// Needs the final `effects` flags.
    fn compile_pieces(&mut self, node: NodeId) -> (u32, u32) {
        use crate::decode::{Piece, Run, RunField};
        let first_piece = self.pieces.len() as u32;
        // Alignment the position is known to have: the structure's own at its start.
        let mut known = self.nodes[node as usize].align;
        let mut run: Option<Run> = None;
        let close = |run: &mut Option<Run>, pieces: &mut Vec<Piece>| {
            if let Some(r) = run.take() {
                pieces.push(Piece::Run(r));
            }
        };
        let NodeKind::Struct { first, count } = self.nodes[node as usize].kind else {
            return (first_piece, 0);
        };
        for m in first..first + count {
            let child = self.members[m as usize].node;
            let c = &self.nodes[child as usize];
            let size = match c.kind {
                NodeKind::Int { size, .. }
                | NodeKind::Float { size, .. }
                | NodeKind::Bits { size, .. } => Some(size as u64),
                // Always on a byte (strings align to 8 at least).
                NodeKind::SizedString {
                    len: Len::Static(len),
                } if len <= u32::MAX as u64 && c.align >= 8 => Some(len * 8),
                _ => None,
            };
            let Some(size) = size else {
                close(&mut run, &mut self.pieces);
                let piece = match c.kind {
                    NodeKind::Array { elem, len } if c.stride > 0 && c.role.is_none() => {
                        Piece::Scalars {
                            node: child,
                            align: c.align,
                            elem_align: self.nodes[elem as usize].align,
                            len,
                        }
                    }
                    _ => Piece::Member(child),
                };
                self.pieces.push(piece);
                known = 1;
                continue;
            };
            if run.as_ref().is_some_and(|r| c.align > r.align) {
                close(&mut run, &mut self.pieces);
                known = 1;
            }
            let r = run.get_or_insert_with(|| Run {
                align: c.align.max(known),
                first: self.run_fields.len() as u32,
                count: 0,
                size_bits: 0,
                span: 0,
            });
            let off = crate::bits::align_up(r.size_bits, c.align);
            let f = RunField::new(c, child, off);
            r.span = r.span.max(f.span());
            r.count += 1;
            r.size_bits = off.saturating_add(size);
            self.run_fields.push(f);
        }
        close(&mut run, &mut self.pieces);
        (first_piece, self.pieces.len() as u32 - first_piece)
    }

    /// Member `i` of a struct or option `i` of a variant node.
    pub fn members_of(&self, node: NodeId) -> &[Member] {
        match self.nodes[node as usize].kind {
            NodeKind::Struct { first, count } | NodeKind::Variant { first, count, .. } => {
                &self.members[first as usize..(first + count) as usize]
            }
            _ => &[],
        }
    }

    /// Compiles every scope of a trace class.
    pub fn compile<'t>(tc: &'t TraceClass) -> Result<Layout, MetadataError> {
        let mut c = Compiler {
            layout: Layout::default(),
            regs: HashMap::default(),
            nregs: 0,
            names: HashMap::default(),
            event: None,
            tc,
            depth: 0,
            path_buf: Vec::with_capacity(8),
            member_stack: Vec::with_capacity(64),
        };
        // Room for the usual number of nodes and members (~3 and ~2 per event class in
        // LTTng's metadata), rather than regrowing and copying the arena a dozen times.
        let events: usize = tc.streams.values().map(|s| s.events.len()).sum();
        c.layout.nodes.reserve(4 * events + 64);
        c.layout.members.reserve(3 * events + 64);
        c.collect_refs(tc);
        if let Some(ph) = &tc.packet_header {
            let mut path = FieldPath {
                scope: Scope::PacketHeader,
                indices: vec![],
            };
            c.layout.packet_header = Some(c.compile_struct(ph, &mut path)?);
        }
        for (id, sc) in &tc.streams {
            let mut sl = StreamLayout {
                clock: sc.default_clock,
                ..Default::default()
            };
            let scope = |c: &mut Compiler<'t>, s: &'t Option<StructType>, scope| {
                s.as_ref()
                    .map(|s| {
                        // One path list for every scope (thousands in a kernel trace).
                        let mut path = FieldPath {
                            scope,
                            indices: std::mem::take(&mut c.path_buf),
                        };
                        let node = c.compile_struct(s, &mut path);
                        c.path_buf = path.indices;
                        c.path_buf.clear();
                        node
                    })
                    .transpose()
            };
            sl.packet_context = scope(&mut c, &sc.packet_context, Scope::PacketContext)?;
            sl.event_header = scope(&mut c, &sc.event_header, Scope::EventHeader)?;
            sl.fast_header = sl.event_header.and_then(|h| c.tagged_header(h));
            sl.event_common_context =
                scope(&mut c, &sc.event_common_context, Scope::EventCommonContext)?;
            for (eid, ec) in &sc.events {
                c.event = Some((*id, *eid));
                let context = scope(&mut c, &ec.context, Scope::EventSpecificContext)?;
                let payload = scope(&mut c, &ec.payload, Scope::EventPayload)?;
                c.event = None;
                sl.events.insert(
                    *eid,
                    EventLayout {
                        name: Arc::from(ec.name.as_str()),
                        context,
                        payload,
                        fixed_body: None,
                        program: std::sync::OnceLock::new(),
                    },
                );
            }
            c.layout.streams.insert(*id, sl);
        }
        c.layout.registers = c.nregs;
        for n in &mut c.layout.nodes {
            n.effects = n.clock || n.store != NO_REG || n.role.is_some();
        }
        let mut layout = c.layout;
        for i in 0..layout.nodes.len() {
            if let NodeKind::Array { elem, .. } = layout.nodes[i].kind {
                let e = &layout.nodes[elem as usize];
                let size = match e.kind {
                    NodeKind::Int { size, .. }
                    | NodeKind::Float { size, .. }
                    | NodeKind::Bits { size, .. } => size as u64,
                    _ => 0,
                };
                if size > 0 && !e.effects && !layout.nodes[i].effects && size % e.align as u64 == 0
                {
                    layout.nodes[i].stride = size;
                }
            }
        }
        for i in 0..layout.nodes.len() {
            if matches!(layout.nodes[i].kind, NodeKind::Struct { .. })
                && layout.nodes[i].plan.is_none()
            {
                layout.nodes[i].pieces = layout.compile_pieces(i as NodeId);
            }
        }
        // Straight-line plans need the final `effects` flags.
        let mut streams = std::mem::take(&mut layout.streams);
        for (_, sl) in streams.iter_mut() {
            sl.compiled_header = crate::fast::FastHeader::compile(&layout, sl);
            let common = sl.event_common_context;
            for (_, el) in sl.events.iter_mut() {
                let scopes = [common, el.context, el.payload];
                el.fixed_body = crate::fast::FixedBody::compile(&layout, scopes);
            }
            sl.scan = crate::fast::ScanTable::compile(&layout, sl);
        }
        layout.streams = streams;
        Ok(layout)
    }
}

const MAX_DEPTH: usize = 64;

/// A scope of one event class (`None` outside event classes' own scopes): see [`event_key`].
type ScopeKey = (Option<(u64, u64)>, Scope);
/// Registers of one scope (of one event class), by the indices of their fields' paths.
type ScopeRegs = HashMap<Vec<usize>, u16, FxBuildHasher>;

struct Compiler<'a> {
    layout: Layout,
    /// Registers of referenced fields. Paths into an event class's own scopes (specific
    /// context, payload) are keyed with that class, so that a length field of one event class
    /// does not make the same position of every other class a register (which would cost them
    /// their fixed plan).
    ///
    /// Keyed by (event class, scope), then by the path's indices, so that a node is checked
    /// without building a key, and most scopes (no register) after one lookup.
    regs: HashMap<ScopeKey, ScopeRegs, FxBuildHasher>,
    /// Number of registers in `regs`.
    nregs: usize,
    /// One shared copy of each member name: the same names recur across event classes.
    names: HashMap<&'a str, Arc<str>, FxBuildHasher>,
    /// The event class being compiled (stream class id, event class id).
    event: Option<(u64, u64)>,
    tc: &'a TraceClass,
    depth: usize,
    /// The field path list the scopes are compiled with, kept between them.
    path_buf: Vec<usize>,
    /// Members of the structures being compiled, innermost last (see `compile_struct`).
    member_stack: Vec<Member>,
}

impl<'a> Compiler<'a> {
    fn collect_refs(&mut self, tc: &TraceClass) {
        let mut paths = Vec::new();
        let mut visit = |s: &Option<StructType>, event: Option<(u64, u64)>| {
            if let Some(s) = s {
                let mut found = Vec::new();
                for f in &s.fields {
                    refs_of(&f.ty, &mut found, 0);
                }
                paths.extend(found.into_iter().map(|p| (event_key(event, &p), p)));
            }
        };
        visit(&tc.packet_header, None);
        for (sid, sc) in &tc.streams {
            visit(&sc.packet_context, None);
            visit(&sc.event_header, None);
            visit(&sc.event_common_context, None);
            for (eid, ec) in &sc.events {
                visit(&ec.context, Some((*sid, *eid)));
                visit(&ec.payload, Some((*sid, *eid)));
            }
        }
        for (event, path) in paths {
            if self.nregs < NO_REG as usize {
                let by_indices = self.regs.entry((event, path.scope)).or_default();
                if let Entry::Vacant(v) = by_indices.entry(path.indices) {
                    v.insert(self.nregs as u16);
                    self.nregs += 1;
                }
            }
        }
    }

    /// The register of the field at `path`, if it has one.
    fn reg_of(&self, path: &FieldPath) -> Option<u16> {
        self.regs
            .get(&(event_key(self.event, path), path.scope))?
            .get(path.indices.as_slice())
            .copied()
    }

    /// A shared copy of a member name.
    fn name(&mut self, name: &'a str) -> Arc<str> {
        self.names
            .entry(name)
            .or_insert_with(|| Arc::from(name))
            .clone()
    }

    fn reg(&self, path: &FieldPath) -> Result<u16, MetadataError> {
        self.reg_of(path)
            .ok_or_else(|| MetadataError::new(None, format!("unresolved field reference {path:?}")))
    }

    fn len(&self, l: &Length) -> Result<Len, MetadataError> {
        Ok(match l {
            Length::Static(n) => Len::Static(*n),
            Length::Dynamic(p) => Len::Reg(self.reg(p)?),
        })
    }

    fn push(&mut self, kind: NodeKind, align: u32, path: &FieldPath) -> NodeId {
        let store = self.reg_of(path).unwrap_or(NO_REG);
        self.layout.nodes.push(Node {
            kind,
            align: align.max(1),
            store,
            role: None,
            clock: false,
            effects: false,
            plan: None,
            prefix: None,
            stride: 0,
            pieces: (0, 0),
        });
        (self.layout.nodes.len() - 1) as NodeId
    }

    fn compile_struct(
        &mut self,
        s: &'a StructType,
        path: &mut FieldPath,
    ) -> Result<NodeId, MetadataError> {
        // The members are gathered on a stack shared by every structure (a nested one's are
        // gathered and moved out before this one's next member), then moved to the arena in
        // one block: no list per structure (thousands in a kernel trace).
        let start = self.member_stack.len();
        let mut align = s.min_align.max(1);
        for (i, f) in s.fields.iter().enumerate() {
            path.indices.push(i);
            // An error ends the whole compilation: the stack is not used again.
            let id = self.compile(&f.ty, path)?;
            path.indices.pop();
            align = align.max(self.layout.nodes[id as usize].align);
            let name = self.name(&f.name);
            self.member_stack.push(Member { name, node: id });
        }
        let members = &self.member_stack[start..];
        let plan = self.fixed_plan(members, false);
        let prefix = if plan.is_none() {
            self.fixed_plan(members, true)
                .filter(|p| !p.offsets.is_empty())
        } else {
            None
        };
        let first = self.layout.members.len() as u32;
        let count = members.len() as u32;
        self.layout.members.extend(self.member_stack.drain(start..));
        let id = self.push(NodeKind::Struct { first, count }, align, path);
        self.layout.nodes[id as usize].plan = plan.map(Arc::new);
        self.layout.nodes[id as usize].prefix = prefix.map(Arc::new);
        Ok(id)
    }

    /// Recognizes a [`TaggedHeader`].
    fn tagged_header(&self, header: NodeId) -> Option<TaggedHeader> {
        let nodes = &self.layout.nodes;
        let NodeKind::Struct { first, count: 2 } = nodes[header as usize].kind else {
            return None;
        };
        let tag = self.layout.members[first as usize].node;
        let variant = self.layout.members[first as usize + 1].node;
        let tag_node = &nodes[tag as usize];
        let NodeKind::Int { size: tag_size, .. } = tag_node.kind else {
            return None;
        };
        let NodeKind::Variant { tag_reg, .. } = nodes[variant as usize].kind else {
            return None;
        };
        if tag_node.store != tag_reg || tag_node.align > nodes[header as usize].align {
            return None;
        }
        let mut options = Vec::new();
        let mut max_bits = 0;
        for m in self.layout.members_of(variant) {
            let n = &nodes[m.node as usize];
            let NodeKind::Struct { count, .. } = n.kind else {
                return None;
            };
            let plan = n
                .prefix
                .as_ref()
                .filter(|p| p.offsets.len() == count as usize)?;
            max_bits = max_bits.max(n.align as u64 + plan.size_bits);
            options.push((m.node, plan.clone()));
        }
        Some(TaggedHeader {
            header,
            tag,
            tag_size,
            variant,
            options,
            max_bits: tag_size as u64 + max_bits,
        })
    }

    /// A fixed plan when every member is a fixed-size scalar whose value nothing else needs
    /// while decoding (no register, role or clock). Offsets are constant because a structure is
    /// aligned to the largest alignment of its members.
    ///
    /// With `prefix`, side effects are allowed and the plan covers the leading fixed members.
    fn fixed_plan(&self, members: &[Member], prefix: bool) -> Option<FixedPlan> {
        let mut off = 0u64;
        let mut offsets = Vec::with_capacity(members.len());
        let mut reads = Vec::with_capacity(members.len());
        for m in members {
            let n = &self.layout.nodes[m.node as usize];
            if !prefix && (n.store != NO_REG || n.role.is_some() || n.clock) {
                return None;
            }
            let size = match n.kind {
                NodeKind::Int { size, .. }
                | NodeKind::Float { size, .. }
                | NodeKind::Bits { size, .. } => size as u64,
                NodeKind::SizedString {
                    len: Len::Static(len),
                } if len <= u32::MAX as u64 => len * 8,
                _ if prefix => break,
                _ => return None,
            };
            off = crate::bits::align_up(off, n.align);
            offsets.push(off);
            reads.push(crate::fast::PlanRead::of(&n.kind, off));
            off = off.checked_add(size)?;
        }
        Some(FixedPlan {
            size_bits: off,
            offsets: offsets.into_boxed_slice(),
            reads: reads.into_boxed_slice(),
        })
    }

    fn enum_idx(&mut self, mappings: &[EnumMapping]) -> u32 {
        self.layout.enums.push(Arc::from(mappings));
        (self.layout.enums.len() - 1) as u32
    }

    fn int_node(&mut self, it: &IntType, enum_idx: Option<u32>, path: &FieldPath) -> NodeId {
        if it.size == 0 || it.size > 64 {
            // Rejected by the caller; keep the arena consistent anyway.
        }
        let id = self.push(
            NodeKind::Int {
                size: it.size.clamp(1, 64),
                signed: it.signed,
                little: it.byte_order == ByteOrder::Little,
                base: it.base,
                enum_idx,
            },
            it.align,
            path,
        );
        let n = &mut self.layout.nodes[id as usize];
        n.role = it.role;
        // Packet-context timestamps are snapshots: only header and context timestamps move the
        // stream clock, or the compact headers of the packet would be read against its end.
        n.clock = it.role == Some(Role::DefaultClockTimestamp)
            || (it.role.is_none()
                && it
                    .mapped_clock
                    .as_ref()
                    .is_some_and(|c| self.tc.clock_index(c).is_some()));
        id
    }

    fn is_text_elem(t: &FieldType) -> bool {
        matches!(t, FieldType::Int(i) if i.size == 8 && i.encoding == Encoding::Utf8 && i.align == 8)
    }

    fn compile(&mut self, t: &'a FieldType, path: &mut FieldPath) -> Result<NodeId, MetadataError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(MetadataError::new(None, "field types nested too deeply"));
        }
        let r = self.compile_inner(t, path);
        self.depth -= 1;
        r
    }

    fn compile_inner(
        &mut self,
        t: &'a FieldType,
        path: &mut FieldPath,
    ) -> Result<NodeId, MetadataError> {
        let bad_size = |size: u32| {
            Err(MetadataError::new(
                None,
                format!("unsupported integer size {size} bits"),
            ))
        };
        Ok(match t {
            FieldType::Int(it) => {
                if it.size == 0 || it.size > 64 {
                    return bad_size(it.size);
                }
                self.int_node(it, None, path)
            }
            FieldType::Enum(e) => {
                if e.int.size == 0 || e.int.size > 64 {
                    return bad_size(e.int.size);
                }
                let idx = self.enum_idx(&e.mappings);
                self.int_node(&e.int, Some(idx), path)
            }
            FieldType::BitArray(b) => {
                if b.int.size == 0 || b.int.size > 64 {
                    return bad_size(b.int.size);
                }
                let id = self.push(
                    NodeKind::Bits {
                        size: b.int.size,
                        little: b.int.byte_order == ByteOrder::Little,
                        kind: b.kind,
                    },
                    b.int.align,
                    path,
                );
                self.layout.nodes[id as usize].role = b.int.role;
                id
            }
            FieldType::VarInt(v) => {
                let enum_idx = (!v.mappings.is_empty()).then(|| self.enum_idx(&v.mappings));
                let id = self.push(
                    NodeKind::VarInt {
                        signed: v.signed,
                        base: v.base,
                        enum_idx,
                    },
                    8,
                    path,
                );
                let n = &mut self.layout.nodes[id as usize];
                n.role = v.role;
                n.clock = v.role == Some(Role::DefaultClockTimestamp);
                id
            }
            FieldType::Float(f) => {
                let size = f.size();
                if size != 32 && size != 64 {
                    return Err(MetadataError::new(
                        None,
                        format!("unsupported floating point size {size} bits"),
                    ));
                }
                self.push(
                    NodeKind::Float {
                        size,
                        little: f.byte_order == ByteOrder::Little,
                    },
                    f.align,
                    path,
                )
            }
            FieldType::String(_) => self.push(NodeKind::CString, 8, path),
            FieldType::SizedString(s) => {
                let len = self.len(&s.length)?;
                self.push(NodeKind::SizedString { len }, 8, path)
            }
            FieldType::Blob(b) => {
                let len = self.len(&b.length)?;
                let id = self.push(NodeKind::Blob { len }, 8, path);
                self.layout.nodes[id as usize].role = b.role;
                id
            }
            FieldType::Struct(s) => self.compile_struct(s, path)?,
            FieldType::Variant(v) => {
                let tag_reg = self.reg(&v.tag)?;
                let mut members = Vec::with_capacity(v.options.len());
                let mut ranges = Vec::new();
                for (i, o) in v.options.iter().enumerate() {
                    path.indices.push(i);
                    let id = self.compile(&o.ty, path)?;
                    path.indices.pop();
                    members.push(Member {
                        name: self.name(&o.name),
                        node: id,
                    });
                    ranges.extend(o.ranges.iter().map(|r| (*r, i as u32)));
                }
                let first = self.layout.members.len() as u32;
                let count = members.len() as u32;
                self.layout.members.extend(members);
                self.push(
                    NodeKind::Variant {
                        tag_reg,
                        first,
                        count,
                        ranges: Arc::from(ranges),
                    },
                    1,
                    path,
                )
            }
            FieldType::Array(a) => {
                if Self::is_text_elem(&a.elem) {
                    let id = self.push(
                        NodeKind::SizedString {
                            len: Len::Static(a.len),
                        },
                        a.min_align.max(8),
                        path,
                    );
                    self.layout.nodes[id as usize].role = a.role;
                    return Ok(id);
                }
                let elem = self.compile(&a.elem, path)?;
                let align = a.min_align.max(self.layout.nodes[elem as usize].align);
                let id = self.push(
                    NodeKind::Array {
                        elem,
                        len: Len::Static(a.len),
                    },
                    align,
                    path,
                );
                self.layout.nodes[id as usize].role = a.role;
                id
            }
            FieldType::Sequence(s) => {
                let len = Len::Reg(self.reg(&s.length)?);
                if Self::is_text_elem(&s.elem) {
                    return Ok(self.push(NodeKind::SizedString { len }, s.min_align.max(8), path));
                }
                let elem = self.compile(&s.elem, path)?;
                let align = s.min_align.max(self.layout.nodes[elem as usize].align);
                self.push(NodeKind::Array { elem, len }, align, path)
            }
            FieldType::Optional(o) => {
                let sel_reg = self.reg(&o.selector)?;
                let elem = self.compile(&o.ty, path)?;
                self.push(
                    NodeKind::Optional {
                        sel_reg,
                        ranges: Arc::from(o.ranges.as_slice()),
                        elem,
                    },
                    1,
                    path,
                )
            }
        })
    }
}

/// The event class a path's register belongs to: only paths into the event class's own scopes.
fn event_key(event: Option<(u64, u64)>, path: &FieldPath) -> Option<(u64, u64)> {
    match path.scope {
        Scope::EventSpecificContext | Scope::EventPayload => event,
        _ => None,
    }
}

fn refs_of(t: &FieldType, out: &mut Vec<FieldPath>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match t {
        FieldType::Struct(s) => {
            for f in &s.fields {
                refs_of(&f.ty, out, depth + 1);
            }
        }
        FieldType::Variant(v) => {
            out.push(v.tag.clone());
            for o in &v.options {
                refs_of(&o.ty, out, depth + 1);
            }
        }
        FieldType::Array(a) => refs_of(&a.elem, out, depth + 1),
        FieldType::Sequence(s) => {
            out.push(s.length.clone());
            refs_of(&s.elem, out, depth + 1);
        }
        FieldType::Optional(o) => {
            out.push(o.selector.clone());
            refs_of(&o.ty, out, depth + 1);
        }
        FieldType::Blob(BlobType {
            length: Length::Dynamic(p),
            ..
        })
        | FieldType::SizedString(SizedStringType {
            length: Length::Dynamic(p),
            ..
        }) => out.push(p.clone()),
        _ => {}
    }
}

/// Items keyed by a numeric id (stream class or event class id), looked up in O(1): a dense
/// table for the small ids tracers use, a hash map beyond.
#[derive(Debug, Clone)]
pub struct IdMap<T> {
    items: Vec<(u64, T)>,
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

impl<T> Default for IdMap<T> {
    fn default() -> Self {
        IdMap {
            items: Vec::new(),
            dense: Vec::new(),
            sparse: HashMap::new(),
        }
    }
}

const DENSE_IDS: u64 = 1 << 16;

impl<T> IdMap<T> {
    /// Adds an item (ids are unique: a repeated id replaces the lookup target).
    pub fn insert(&mut self, id: u64, item: T) {
        let idx = self.items.len() as u32;
        self.items.push((id, item));
        if id < DENSE_IDS {
            let id = id as usize;
            if self.dense.len() <= id {
                self.dense.resize(id + 1, u32::MAX);
            }
            self.dense[id] = idx;
        } else {
            self.sparse.insert(id, idx);
        }
    }

    /// Position of the item with this id. The dense table's look-up is inlined into the
    /// readers' per-event loops; the hash map's is out of line (it would make the function
    /// too large to inline).
    #[inline(always)]
    pub fn index_of(&self, id: u64) -> Option<usize> {
        let idx = if id < DENSE_IDS {
            *self.dense.get(id as usize)?
        } else {
            self.sparse_index(id)?
        };
        (idx != u32::MAX).then_some(idx as usize)
    }

    #[inline(never)]
    fn sparse_index(&self, id: u64) -> Option<u32> {
        self.sparse.get(&id).copied()
    }

    /// The item with this id.
    pub fn get(&self, id: u64) -> Option<&T> {
        self.index_of(id).map(|i| &self.items[i].1)
    }

    /// The item at a position returned by [`Self::index_of`].
    #[inline]
    pub fn at(&self, index: usize) -> &T {
        &self.items[index].1
    }

    /// The id of the item at a position.
    pub fn id_at(&self, index: usize) -> u64 {
        self.items[index].0
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `(id, item)` pairs in insertion order, items mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u64, &mut T)> {
        self.items.iter_mut().map(|(id, t)| (*id, t))
    }

    /// `(id, item)` pairs in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.items.iter().map(|(id, t)| (*id, t))
    }
}

/// The layout of a trace class whose one event class has a payload of `members` (TSDL), for
/// the decoders' tests.
#[cfg(test)]
pub(crate) fn one_event_layout(byte_order: &str, members: &str) -> Layout {
    let tsdl = format!(
        "/* CTF 1.8 */\ntrace {{ major = 1; minor = 8; byte_order = {byte_order}; }};\n\
         stream {{ id = 0; }};\nevent {{ id = 0; name = \"e\"; stream_id = 0; \
         fields := struct {{ {members} }}; }};\n"
    );
    let class = crate::metadata::parse(tsdl.as_bytes()).expect("metadata");
    Layout::compile(&class).expect("layout")
}
