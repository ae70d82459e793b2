//! The trace-class model shared by every metadata front end (TSDL for CTF 1.8, JSON for CTF 2),
//! the decoder and the writer.
//!
//! Front ends produce a fully *resolved* model: field paths are absolute, variant options carry
//! the integer ranges that select them, and special fields (magic, stream id, timestamps…) carry
//! a [`Role`]. The decoder therefore never needs to know which metadata language a trace used.

use std::collections::BTreeMap;

/// Byte order of a fixed-size field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl ByteOrder {
    /// The byte order of the machine running this code.
    pub const fn native() -> Self {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }
}

/// Preferred display base of an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DisplayBase {
    /// Base 2.
    Binary,
    /// Base 8.
    Octal,
    /// Base 10.
    Decimal,
    /// Base 16.
    Hexadecimal,
}

/// Text encoding of integers (character arrays) and strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Plain bytes (integers) or no declared encoding.
    None,
    /// UTF-8 text (TSDL's `UTF8` and `ASCII`).
    Utf8,
}

/// Meaning of a field for the decoder, beyond its value.
///
/// TSDL front end: assigned from the well-known names (`magic`, `stream_id`, `timestamp_begin`…)
/// in their scopes. CTF 2 front end: from the `roles` property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The packet header's magic number (0xC1FC1FC1).
    PacketMagicNumber,
    /// The trace UUID held in the packet header (array/blob of 16 bytes).
    MetadataStreamUuid,
    /// The packet header's stream class id.
    DataStreamClassId,
    /// The packet header's stream instance id.
    DataStreamId,
    /// The packet's total size in bits.
    PacketTotalLength,
    /// The size in bits of the packet's content (the rest is padding).
    PacketContentLength,
    /// The default clock's value at the packet's beginning.
    PacketBeginningDefaultClockTimestamp,
    /// The default clock's value at the packet's end.
    PacketEndDefaultClockTimestamp,
    /// The stream's count of discarded events so far.
    DiscardedEventRecordCounterSnapshot,
    /// The packet's sequence number in its stream.
    PacketSequenceNumber,
    /// The event header's event class id.
    EventRecordClassId,
    /// Any integer that updates the stream's default clock (TSDL: `map = clock.X.value` in an
    /// event header or context; CTF 2: `default-clock-timestamp`).
    DefaultClockTimestamp,
}

/// An inclusive range of integer values (as i128 so that signed and unsigned 64-bit fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntRange {
    /// Smallest value in the range.
    pub lower: i128,
    /// Largest value in the range.
    pub upper: i128,
}

impl IntRange {
    /// Whether `v` is in the range.
    pub fn contains(&self, v: i128) -> bool {
        self.lower <= v && v <= self.upper
    }
}

/// A fixed-length integer (CTF 1.8 `integer`, CTF 2 fixed-length (un)signed integer).
#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// Size in bits (1..=64).
    pub size: u32,
    /// Alignment in bits (power of two).
    pub align: u32,
    /// Two's complement.
    pub signed: bool,
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Preferred display base.
    pub base: DisplayBase,
    /// Text encoding, for integers that are characters.
    pub encoding: Encoding,
    /// Name of the clock class this integer's value maps to (`map = clock.NAME.value`).
    pub mapped_clock: Option<String>,
    /// Special meaning for the decoder, if any.
    pub role: Option<Role>,
}

impl IntType {
    /// An unsigned, byte-aligned, decimal integer of `size` bits with the given byte order.
    pub fn unsigned(size: u32, byte_order: ByteOrder) -> Self {
        IntType {
            size,
            align: if size.is_multiple_of(8) { 8 } else { 1 },
            signed: false,
            byte_order,
            base: DisplayBase::Decimal,
            encoding: Encoding::None,
            mapped_clock: None,
            role: None,
        }
    }

    /// A signed, byte-aligned, decimal integer of `size` bits with the given byte order.
    pub fn signed(size: u32, byte_order: ByteOrder) -> Self {
        IntType {
            signed: true,
            ..IntType::unsigned(size, byte_order)
        }
    }
}

/// A variable-length (LEB128) integer (CTF 2 only).
#[derive(Debug, Clone, PartialEq)]
pub struct VarIntType {
    /// Signed LEB128.
    pub signed: bool,
    /// Preferred display base.
    pub base: DisplayBase,
    /// Special meaning for the decoder, if any.
    pub role: Option<Role>,
    /// Enumeration-like mappings (CTF 2 `mappings`), empty if none.
    pub mappings: Vec<EnumMapping>,
}

/// An IEEE 754 binary floating-point number.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatType {
    /// Exponent digits (8 for binary32, 11 for binary64).
    pub exp_dig: u32,
    /// Mantissa digits including the implicit bit (24 for binary32, 53 for binary64).
    pub mant_dig: u32,
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Alignment in bits.
    pub align: u32,
}

impl FloatType {
    /// Total size in bits.
    pub fn size(&self) -> u32 {
        self.exp_dig + self.mant_dig
    }
}

/// One label of an enumeration and the value ranges it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label.
    pub label: String,
    /// Values the label stands for.
    pub ranges: Vec<IntRange>,
}

/// An integer whose values map to labels.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    /// The underlying integer.
    pub int: IntType,
    /// Labels and their ranges, in declaration order.
    pub mappings: Vec<EnumMapping>,
}

impl EnumType {
    /// Labels whose ranges hold `v`, in declaration order.
    pub fn labels_for(&self, v: i128) -> impl Iterator<Item = &str> {
        self.mappings
            .iter()
            .filter(move |m| m.ranges.iter().any(|r| r.contains(v)))
            .map(|m| m.label.as_str())
    }
}

/// A null-terminated string.
#[derive(Debug, Clone, PartialEq)]
pub struct StringType {
    /// Text encoding.
    pub encoding: Encoding,
}

/// A named member of a structure or an option of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Display name (TSDL front end: with one leading underscore removed, as Babeltrace does).
    pub name: compact_str::CompactString,
    /// Its type.
    pub ty: FieldType,
}

/// A structure.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// Minimum alignment in bits (the structure is aligned to the max of this and its members').
    pub min_align: u32,
    /// Members, in order.
    pub fields: Vec<Field>,
}

impl StructType {
    /// Index of the member named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The member named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// The root structure a field path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The trace's packet header.
    PacketHeader,
    /// The stream class's packet context.
    PacketContext,
    /// The stream class's event header.
    EventHeader,
    /// The stream class's `event.context` (common to all its events).
    EventCommonContext,
    /// The event class's own `context`.
    EventSpecificContext,
    /// The event class's payload.
    EventPayload,
}

/// An absolute reference to a field: a scope and the member indices from its root structure.
///
/// Each index selects a structure member; when the current field is a variant, the index selects
/// one of its options. Array and sequence elements are traversed transparently (the path then
/// designates the element type; the decoder uses the most recently decoded value).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldPath {
    /// The root structure.
    pub scope: Scope,
    /// Member (or option) positions from the root.
    pub indices: Vec<usize>,
}

/// One option of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantOption {
    /// The option's name.
    pub name: String,
    /// Its type.
    pub ty: FieldType,
    /// Selector values choosing this option. For TSDL, the ranges of the tag enumeration's
    /// mapping(s) whose label names this option.
    pub ranges: Vec<IntRange>,
}

/// A variant (tagged union).
#[derive(Debug, Clone, PartialEq)]
pub struct VariantType {
    /// The field whose value selects the option.
    pub tag: FieldPath,
    /// The options, in declaration order.
    pub options: Vec<VariantOption>,
}

impl VariantType {
    /// The option selected by a tag value.
    pub fn select(&self, v: i128) -> Option<usize> {
        self.options
            .iter()
            .position(|o| o.ranges.iter().any(|r| r.contains(v)))
    }
}

/// A static-length array.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayType {
    /// Element type.
    pub elem: Box<FieldType>,
    /// Number of elements.
    pub len: u64,
    /// Minimum alignment in bits (CTF 2 `minimum-alignment`; 1 for TSDL).
    pub min_align: u32,
    /// Special meaning for the decoder, if any (a UUID array).
    pub role: Option<Role>,
}

/// A dynamic-length array (CTF 1.8 sequence).
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceType {
    /// Element type.
    pub elem: Box<FieldType>,
    /// The integer field holding the number of elements.
    pub length: FieldPath,
    /// Minimum alignment in bits.
    pub min_align: u32,
}

/// Length of a BLOB or of a CTF 2 static/dynamic-length string.
#[derive(Debug, Clone, PartialEq)]
pub enum Length {
    /// A constant length.
    Static(u64),
    /// The value of an integer field decoded before.
    Dynamic(FieldPath),
}

/// A byte sequence (CTF 2 static/dynamic-length BLOB).
#[derive(Debug, Clone, PartialEq)]
pub struct BlobType {
    /// Length in bytes.
    pub length: Length,
    /// IANA media type of the content (`application/octet-stream` by default).
    pub media_type: String,
    /// Special meaning for the decoder, if any (a UUID BLOB).
    pub role: Option<Role>,
}

/// A string with a length in bytes rather than a terminator (CTF 2 static/dynamic-length string).
#[derive(Debug, Clone, PartialEq)]
pub struct SizedStringType {
    /// Length in bytes (the text ends at the first null byte within it).
    pub length: Length,
    /// Text encoding.
    pub encoding: Encoding,
}

/// A CTF 2 optional field: present when its selector says so.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionalType {
    /// The field whose value says whether the field is present.
    pub selector: FieldPath,
    /// For an integer selector: the values making the field present. Empty: a boolean selector
    /// (present when non-zero).
    pub ranges: Vec<IntRange>,
    /// The field's type when present.
    pub ty: Box<FieldType>,
}

/// A CTF 2 fixed-length bit array / bit map / boolean (decoded like an unsigned integer).
#[derive(Debug, Clone, PartialEq)]
pub struct BitArrayType {
    /// Size, alignment and byte order, as for an unsigned integer.
    pub int: IntType,
    /// Bit array, bit map or boolean.
    pub kind: BitArrayKind,
    /// Bit-map flags (name → bit ranges), empty if none.
    pub flags: Vec<EnumMapping>,
}

/// Flavour of a [`BitArrayType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitArrayKind {
    /// Plain bits, shown as an unsigned integer.
    BitArray,
    /// Bits with named flags.
    BitMap,
    /// False when zero, true otherwise.
    Boolean,
}

/// Any field type.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    /// A fixed-length integer.
    Int(IntType),
    /// A variable-length integer.
    VarInt(VarIntType),
    /// A floating-point number.
    Float(FloatType),
    /// An enumeration.
    Enum(EnumType),
    /// A null-terminated string.
    String(StringType),
    /// A string of a given byte length.
    SizedString(SizedStringType),
    /// A structure.
    Struct(StructType),
    /// A variant.
    Variant(VariantType),
    /// A static-length array.
    Array(ArrayType),
    /// A dynamic-length array.
    Sequence(SequenceType),
    /// A BLOB.
    Blob(BlobType),
    /// An optional field.
    Optional(OptionalType),
    /// A bit array, bit map or boolean.
    BitArray(BitArrayType),
}

impl FieldType {
    /// The structure inside, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            FieldType::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// A clock class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockClass {
    /// The clock's name.
    pub name: String,
    /// Frequency in Hz.
    pub freq: u64,
    /// Offset from the origin, seconds part.
    pub offset_s: i64,
    /// Offset from the origin, in cycles, added to `offset_s`.
    pub offset_cycles: i64,
    /// Precision in cycles.
    pub precision: u64,
    /// The clock's UUID, if any.
    pub uuid: Option<[u8; 16]>,
    /// True when the origin is the Unix epoch (TSDL `absolute`, CTF 2 `origin: unix-epoch`).
    pub absolute: bool,
    /// Free-form description, if any.
    pub description: Option<String>,
}

impl ClockClass {
    /// Nanoseconds from the clock's origin for a raw cycle value: exact integer arithmetic,
    /// rounding toward negative infinity as Babeltrace does.
    pub fn cycles_to_ns(&self, cycles: u64) -> i128 {
        // Offset and value are converted separately, each rounded down, as Babeltrace 2
        // does: the last digit then agrees with it for frequencies other than 1 GHz.
        let freq = self.freq.max(1) as i128;
        let to_ns = |c: i128| {
            if freq == 1_000_000_000 {
                c
            } else {
                (c * 1_000_000_000).div_euclid(freq)
            }
        };
        self.offset_s as i128 * 1_000_000_000
            + to_ns(self.offset_cycles as i128)
            + to_ns(cycles as i128)
    }

    /// Moves the clock's origin by `s` seconds and `ns` nanoseconds, as babeltrace2's
    /// `--clock-offset` and `--clock-offset-ns` do: `ns` is split into whole seconds and a
    /// part below one second, which is added to the offset in cycles (rounded down).
    pub fn shift_offset(&mut self, s: i64, ns: i64) {
        let freq = self.freq.max(1) as i128;
        let extra_s = ns.div_euclid(1_000_000_000);
        let part = ns.rem_euclid(1_000_000_000) as i128;
        let cycles = self.offset_cycles as i128 + part * freq / 1_000_000_000;
        let secs = self.offset_s as i128 + s as i128 + extra_s as i128 + cycles.div_euclid(freq);
        self.offset_s = secs.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        self.offset_cycles = cycles.rem_euclid(freq) as i64;
    }

    /// The raw cycle value at `ns` from the clock's origin, the inverse of
    /// [`Self::cycles_to_ns`]: the last cycle value that reads as `ns` or before, so that a
    /// time written back in cycles reads as itself. Clamped to what a cycle counter holds.
    pub fn ns_to_cycles(&self, ns: i128) -> u64 {
        let freq = self.freq.max(1) as i128;
        let since = ns - self.cycles_to_ns(0);
        // The largest c with floor(c × 10⁹ / freq) ≤ since.
        let cycles = ((since + 1) * freq - 1).div_euclid(1_000_000_000);
        cycles.clamp(0, u64::MAX as i128) as u64
    }
}

/// An environment value.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
}

/// An event record class.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// Id within its stream class.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Log level (TSDL `loglevel`), if any.
    pub loglevel: Option<i64>,
    /// EMF URI (TSDL `model.emf.uri`), if any.
    pub model_emf_uri: Option<String>,
    /// The specific context's structure.
    pub context: Option<StructType>,
    /// The payload's structure.
    pub payload: Option<StructType>,
}

/// A data stream class.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamClass {
    /// Id within the trace class.
    pub id: u64,
    /// The packet context's structure.
    pub packet_context: Option<StructType>,
    /// The event header's structure.
    pub event_header: Option<StructType>,
    /// The common context of all its events' structure.
    pub event_common_context: Option<StructType>,
    /// Index into [`TraceClass::clocks`] of the default clock (the one header timestamps map to).
    pub default_clock: Option<usize>,
    /// Event classes by id.
    pub events: BTreeMap<u64, EventClass>,
}

/// A whole trace class: everything the metadata says.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceClass {
    /// `(major, minor)` of the CTF version (1.8 or 2.0).
    pub version: (u32, u32),
    /// The trace's UUID, if any.
    pub uuid: Option<[u8; 16]>,
    /// The trace's default byte order (TSDL `trace.byte_order`).
    pub byte_order: ByteOrder,
    /// The packet header's structure.
    pub packet_header: Option<StructType>,
    /// Environment, in declaration order.
    pub env: Vec<(String, EnvValue)>,
    /// Clock classes, in declaration order.
    pub clocks: Vec<ClockClass>,
    /// Stream classes by id.
    pub streams: BTreeMap<u64, StreamClass>,
}

impl TraceClass {
    /// An environment entry by name.
    pub fn env(&self, name: &str) -> Option<&EnvValue> {
        self.env.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// A string environment entry by name.
    pub fn env_str(&self, name: &str) -> Option<&str> {
        match self.env(name) {
            Some(EnvValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Index of a clock class by name.
    pub fn clock_index(&self, name: &str) -> Option<usize> {
        self.clocks.iter().position(|c| c.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::ClockClass;

    /// A clock named `c` of `freq` Hz with the offset given.
    fn clock(freq: u64, offset_s: i64, offset_cycles: i64) -> ClockClass {
        ClockClass {
            name: "c".into(),
            freq,
            offset_s,
            offset_cycles,
            precision: 0,
            uuid: None,
            absolute: false,
            description: None,
        }
    }

    /// A shift moves every time by exactly the shift on a 1 GHz clock, and by the shift
    /// rounded down to a cycle on slower ones; negative shifts borrow from the seconds.
    #[test]
    fn shifted_offsets_move_times() {
        for (s, ns) in [
            (5, 0),
            (-5, 0),
            (0, 7),
            (1, -3),
            (0, -2_000_000_001),
            (-3, 1_500_000_000),
        ] {
            let mut c = clock(1_000_000_000, 1_700_000_000, 999_999_990);
            let before = c.cycles_to_ns(42);
            c.shift_offset(s, ns);
            assert_eq!(
                c.cycles_to_ns(42) - before,
                s as i128 * 1_000_000_000 + ns as i128
            );
            assert!((0..1_000_000_000).contains(&c.offset_cycles));
        }
        let mut c = clock(1_000_000, 10, 999_999);
        c.shift_offset(0, 2_500);
        // 2.5 µs is 2 cycles of 1 µs: carried into the seconds.
        assert_eq!((c.offset_s, c.offset_cycles), (11, 1));
    }

    #[test]
    fn ns_to_cycles_inverts_cycles_to_ns() {
        // Exact where a cycle is at least a nanosecond long.
        for (freq, offset_s, offset_cycles) in [
            (1_000_000_000, 1_700_000_000, 12_345),
            (1_000_000, 0, 3),
            (33_333_333, 5, -7),
        ] {
            let c = clock(freq, offset_s, offset_cycles);
            for cycles in [0u64, 1, 999, 123_456_789, 1 << 40] {
                assert_eq!(
                    c.ns_to_cycles(c.cycles_to_ns(cycles)),
                    cycles,
                    "{freq} {cycles}"
                );
            }
            assert_eq!(c.ns_to_cycles(c.cycles_to_ns(0) - 1), 0, "clamped");
        }
        // Faster clocks: several cycles read as one nanosecond; the last of them is given.
        let c = ClockClass {
            name: "c".into(),
            freq: 2_400_000_000,
            offset_s: 10,
            offset_cycles: 7,
            precision: 0,
            uuid: None,
            absolute: false,
            description: None,
        };
        for ns in [10_000_000_003i128, 10_000_123_456, 99_999_999_999] {
            let cycles = c.ns_to_cycles(ns);
            assert_eq!(c.cycles_to_ns(cycles), ns);
            assert_eq!(c.cycles_to_ns(cycles + 1), ns + 1);
        }
    }
}
