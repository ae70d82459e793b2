//! Low-level access to decoded events, for per-event hot loops that read payload members
//! straight from the stream bytes instead of through [`FieldView`](crate::FieldView)s.
//!
//! A trace's [`Layout`] (`Trace::layout`) is its metadata compiled into numbered nodes: one
//! [`Node`] per field type, with [`NodeKind`] telling what it is, structure members as
//! [`Member`]s, and per stream class and event class the nodes of each scope
//! ([`StreamLayout`], [`EventLayout`]). A structure whose members all have a fixed size has a
//! [`FixedPlan`]: one [`PlanRead`] per member at a constant bit offset from the structure's
//! start. [`Event::payload_slots`](crate::Event::payload_slots) gives the bytes an event was
//! decoded from and its [`Slot`]s (node and bit position of each decoded field); with the plan
//! of the payload node, a member is then one read at `slot.val + offset`, or [`read_uint`]
//! for a hand-placed one.
//!
//! Everything here is as the reader uses it internally; the field views
//! ([`crate::field`]) are the stable way to read values.

pub use crate::bits::{read_uint, sign_extend, BitRead};
pub use crate::decode::Slot;
pub use crate::fast::{PlanRead, ReadKind};
pub use crate::layout::{
    EventLayout, FixedPlan, IdMap, Layout, Len, Member, Node, NodeId, NodeKind, StreamLayout,
};
