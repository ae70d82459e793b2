//! The LTTng data-stream skeleton: packet header, packet context and event headers, as
//! lttng-modules 2.13 declares them. [`super::StreamWriter`] writes exactly this layout.

use crate::ir::{
    ByteOrder, ClockClass, DisplayBase, EnumMapping, EnumType, EnvValue, Field, FieldPath,
    FieldType, IntRange, IntType, Role, Scope, StreamClass, StructType, TraceClass, VariantOption,
    VariantType,
};
use std::collections::BTreeMap;

/// Magic number opening each data packet.
pub const PACKET_MAGIC: u32 = 0xC1FC_1FC1;
/// Bytes of the packet header (magic, uuid, stream_id, stream_instance_id).
pub const PACKET_HEADER_LEN: usize = 32;
/// Bytes of header + packet context.
pub(crate) const PACKET_PREAMBLE_LEN: usize = 84;
/// Byte offsets of the packet-context fields patched when a packet closes.
pub(crate) const OFF_TIMESTAMP_END: usize = 40;
pub(crate) const OFF_CONTENT_SIZE: usize = 48;
pub(crate) const OFF_PACKET_SIZE: usize = 56;
pub(crate) const OFF_EVENTS_DISCARDED: usize = 72;

/// Which LTTng event header a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventHeaderKind {
    /// `uint5` id (31 = extended) and `uint27` timestamp.
    #[default]
    Compact,
    /// `uint16` id (65535 = extended) and `uint32` timestamp.
    Large,
}

impl EventHeaderKind {
    /// Bits of the compact timestamp.
    pub fn ts_bits(self) -> u32 {
        match self {
            EventHeaderKind::Compact => 27,
            EventHeaderKind::Large => 32,
        }
    }

    /// The id that escapes to the extended form.
    pub fn escape_id(self) -> u64 {
        match self {
            EventHeaderKind::Compact => 31,
            EventHeaderKind::Large => 65535,
        }
    }

    /// Whether an event needs the extended header: its id does not fit, or the high bits of its
    /// timestamp (above the compact width) differ from those of the previous timestamp — the
    /// rule of LTTng's ring buffer (`last_tsc_overflow`).
    #[inline]
    pub fn needs_extended(self, id: u64, ts: u64, last_ts: u64) -> bool {
        id >= self.escape_id() || (ts >> self.ts_bits()) != (last_ts >> self.ts_bits())
    }
}

fn uint(size: u32, bo: ByteOrder) -> IntType {
    IntType::unsigned(size, bo)
}

fn with_role(mut i: IntType, r: Role) -> IntType {
    i.role = Some(r);
    i
}

fn clocked(mut i: IntType, clock: &str) -> IntType {
    i.mapped_clock = Some(clock.to_string());
    i
}

fn f(name: &str, ty: FieldType) -> Field {
    Field {
        name: name.into(),
        ty,
    }
}

/// The LTTng packet header.
pub fn packet_header(bo: ByteOrder) -> StructType {
    StructType {
        min_align: 8,
        fields: vec![
            f(
                "magic",
                FieldType::Int(with_role(uint(32, bo), Role::PacketMagicNumber)),
            ),
            f(
                "uuid",
                FieldType::Array(crate::ir::ArrayType {
                    elem: Box::new(FieldType::Int(uint(8, bo))),
                    len: 16,
                    min_align: 1,
                    role: Some(Role::MetadataStreamUuid),
                }),
            ),
            f(
                "stream_id",
                FieldType::Int(with_role(uint(32, bo), Role::DataStreamClassId)),
            ),
            f(
                "stream_instance_id",
                FieldType::Int(with_role(uint(64, bo), Role::DataStreamId)),
            ),
        ],
    }
}

/// The LTTng kernel packet context.
pub fn packet_context(bo: ByteOrder, clock: &str) -> StructType {
    let ts = |r| FieldType::Int(with_role(clocked(uint(64, bo), clock), r));
    StructType {
        min_align: 8,
        fields: vec![
            f(
                "timestamp_begin",
                ts(Role::PacketBeginningDefaultClockTimestamp),
            ),
            f("timestamp_end", ts(Role::PacketEndDefaultClockTimestamp)),
            f(
                "content_size",
                FieldType::Int(with_role(uint(64, bo), Role::PacketContentLength)),
            ),
            f(
                "packet_size",
                FieldType::Int(with_role(uint(64, bo), Role::PacketTotalLength)),
            ),
            f(
                "packet_seq_num",
                FieldType::Int(with_role(uint(64, bo), Role::PacketSequenceNumber)),
            ),
            f(
                "events_discarded",
                FieldType::Int(with_role(
                    uint(64, bo),
                    Role::DiscardedEventRecordCounterSnapshot,
                )),
            ),
            f("cpu_id", FieldType::Int(uint(32, bo))),
        ],
    }
}

/// An LTTng event header (compact or large).
pub fn event_header(kind: EventHeaderKind, bo: ByteOrder, clock: &str) -> StructType {
    let (id_bits, ts_bits) = match kind {
        EventHeaderKind::Compact => (5, 27),
        EventHeaderKind::Large => (16, 32),
    };
    let esc = kind.escape_id() as i128;
    let id_int = with_role(uint(id_bits, bo), Role::EventRecordClassId);
    let id = FieldType::Enum(EnumType {
        int: id_int,
        mappings: vec![
            EnumMapping {
                label: "compact".into(),
                ranges: vec![IntRange {
                    lower: 0,
                    upper: esc - 1,
                }],
            },
            EnumMapping {
                label: "extended".into(),
                ranges: vec![IntRange {
                    lower: esc,
                    upper: esc,
                }],
            },
        ],
    });
    let ts_short = with_role(
        clocked(uint(ts_bits, bo), clock),
        Role::DefaultClockTimestamp,
    );
    let compact = StructType {
        min_align: 1,
        fields: vec![f("timestamp", FieldType::Int(ts_short))],
    };
    let extended = StructType {
        min_align: 1,
        fields: vec![
            f(
                "id",
                FieldType::Int(with_role(uint(32, bo), Role::EventRecordClassId)),
            ),
            f(
                "timestamp",
                FieldType::Int(with_role(
                    clocked(uint(64, bo), clock),
                    Role::DefaultClockTimestamp,
                )),
            ),
        ],
    };
    StructType {
        min_align: 8,
        fields: vec![
            f("id", id),
            f(
                "v",
                FieldType::Variant(VariantType {
                    tag: FieldPath {
                        scope: Scope::EventHeader,
                        indices: vec![0],
                    },
                    options: vec![
                        VariantOption {
                            name: "compact".into(),
                            ty: FieldType::Struct(compact),
                            ranges: vec![IntRange {
                                lower: 0,
                                upper: esc - 1,
                            }],
                        },
                        VariantOption {
                            name: "extended".into(),
                            ty: FieldType::Struct(extended),
                            ranges: vec![IntRange {
                                lower: esc,
                                upper: esc,
                            }],
                        },
                    ],
                }),
            ),
        ],
    }
}

/// A hexadecimal unsigned integer type (pointers, addresses).
pub fn hex(mut i: IntType) -> IntType {
    i.base = DisplayBase::Hexadecimal;
    i
}

/// A monotonic clock class as LTTng declares it, with its offset from the Unix epoch.
pub fn monotonic_clock(uuid: [u8; 16], offset_s: i64, offset_ns: i64) -> ClockClass {
    ClockClass {
        name: "monotonic".into(),
        freq: 1_000_000_000,
        offset_s,
        offset_cycles: offset_ns,
        precision: 0,
        uuid: Some(uuid),
        absolute: false,
        description: Some("Monotonic Clock".into()),
    }
}

/// A trace class with the LTTng skeleton (stream class 0, one clock) and no event classes yet.
pub fn skeleton(
    uuid: [u8; 16],
    bo: ByteOrder,
    clock: ClockClass,
    env: Vec<(String, EnvValue)>,
    header: EventHeaderKind,
) -> TraceClass {
    let cname = clock.name.clone();
    let stream = StreamClass {
        id: 0,
        packet_context: Some(packet_context(bo, &cname)),
        event_header: Some(event_header(header, bo, &cname)),
        event_common_context: None,
        default_clock: Some(0),
        events: BTreeMap::new(),
    };
    TraceClass {
        version: (1, 8),
        uuid: Some(uuid),
        byte_order: bo,
        packet_header: Some(packet_header(bo)),
        env,
        clocks: vec![clock],
        streams: BTreeMap::from([(0, stream)]),
    }
}

/// Which event header a trace class built by [`skeleton`] uses.
pub fn header_kind_of(tc: &TraceClass, stream_class: u64) -> EventHeaderKind {
    let size = tc
        .streams
        .get(&stream_class)
        .and_then(|s| s.event_header.as_ref())
        .and_then(|h| h.fields.first())
        .and_then(|f| match &f.ty {
            FieldType::Enum(e) => Some(e.int.size),
            _ => None,
        });
    if size == Some(16) {
        EventHeaderKind::Large
    } else {
        EventHeaderKind::Compact
    }
}

#[cfg(test)]
mod tests {
    use super::EventHeaderKind::*;

    #[test]
    fn compact_or_extended() {
        assert!(!Compact.needs_extended(30, 100, 50));
        assert!(Compact.needs_extended(31, 100, 50));
        // Same bits above bit 27: compact even with a large delta.
        assert!(!Compact.needs_extended(1, (1 << 27) - 1, 0));
        // Crossing a 2^27 boundary, even by 1 ns: extended (LTTng's last_tsc_overflow).
        assert!(Compact.needs_extended(1, 1 << 27, (1 << 27) - 1));
        assert!(!Large.needs_extended(65534, 1 << 31, 0));
        assert!(Large.needs_extended(65535, 5, 5));
        assert!(Large.needs_extended(3, 1 << 32, (1 << 32) - 1));
    }
}
