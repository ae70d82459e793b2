//! Owned field values: what the writer encodes and what a decoded event can be copied into.

/// An owned value of any field type. Structures hold their members in declaration order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Unsigned integer, enumeration, bit array, boolean or variable-length unsigned integer.
    U64(u64),
    /// Signed integer, enumeration or variable-length signed integer.
    I64(i64),
    /// A floating point number.
    Float(f64),
    /// A string (null-terminated or sized). Bytes, since traces may hold invalid UTF-8.
    Str(Vec<u8>),
    /// A BLOB.
    Bytes(Vec<u8>),
    /// Structure members, in declaration order.
    Struct(Vec<Value>),
    /// Array or sequence elements.
    Array(Vec<Value>),
    /// The index of the selected option and its value.
    Variant(usize, Box<Value>),
    /// An absent optional field.
    Absent,
}

impl Value {
    /// A string value from text.
    pub fn str(s: &str) -> Value {
        Value::Str(s.as_bytes().to_vec())
    }

    /// The value as an i128 when it is an integer.
    pub fn as_int(&self) -> Option<i128> {
        match *self {
            Value::U64(v) => Some(v as i128),
            Value::I64(v) => Some(v as i128),
            _ => None,
        }
    }
}
