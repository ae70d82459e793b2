//! A CTF field tree as JSON text: the `event` table's fields that are neither integers nor
//! text (arrays, structures), whose shape a map column cannot hold.

use std::fmt::Write as _;

use ::ctf::field::{Compound, FieldVisitor};
use ::ctf::ir::Role;
use ::ctf::FieldValue;

/// What is open where the next value goes.
#[derive(Clone, Copy)]
enum Frame {
    /// An object or array: whether it has no element yet, and its closing character.
    Open { empty: bool, close: char },
    /// A variant or an optional: its one content takes the place (and the name) the
    /// compound had.
    Transparent,
    /// An absent optional: written as `null` already, nothing inside.
    Absent,
}

/// Writes the fields it visits as JSON into `out`, each walk of a compound field from its
/// `enter` (given no name) to its `leave`.
pub(crate) struct JsonWriter {
    /// The text written.
    pub(crate) out: String,
    stack: Vec<Frame>,
}

impl JsonWriter {
    pub(crate) fn new() -> Self {
        JsonWriter {
            out: String::with_capacity(256),
            stack: Vec::with_capacity(8),
        }
    }

    /// Forgets what was written.
    pub(crate) fn clear(&mut self) {
        self.out.clear();
        self.stack.clear();
    }

    /// The separator and the member name before a value; false inside an absent optional.
    #[inline]
    fn start(&mut self, name: Option<&str>) -> bool {
        let transparent = match self.stack.last_mut() {
            Some(Frame::Open { empty, .. }) => {
                if *empty {
                    *empty = false;
                } else {
                    self.out.push(',');
                }
                false
            }
            Some(Frame::Transparent) => true,
            Some(Frame::Absent) => return false,
            None => false,
        };
        if let (Some(n), false) = (name, transparent) {
            string(&mut self.out, n.as_bytes());
            self.out.push(':');
        }
        true
    }
}

impl FieldVisitor for JsonWriter {
    fn value(&mut self, name: Option<&str>, _role: Option<Role>, value: &FieldValue<'_>) {
        if !self.start(name) {
            return;
        }
        let out = &mut self.out;
        match value {
            FieldValue::UInt { value, .. } => out.push_str(itoa::Buffer::new().format(*value)),
            FieldValue::SInt { value, .. } => out.push_str(itoa::Buffer::new().format(*value)),
            FieldValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            FieldValue::Bits(v) => out.push_str(itoa::Buffer::new().format(*v)),
            FieldValue::Float(f) if f.is_finite() => {
                let _ = write!(out, "{f}");
            }
            FieldValue::Str(b) => string(out, b),
            FieldValue::Blob(b) => {
                out.push('"');
                for x in *b {
                    let _ = write!(out, "{x:02x}");
                }
                out.push('"');
            }
            // Compounds come through enter/leave; a walk gives no other value.
            _ => out.push_str("null"),
        }
    }

    fn enter(&mut self, name: Option<&str>, kind: Compound<'_>) {
        if !self.start(name) {
            self.stack.push(Frame::Absent);
            return;
        }
        let frame = match kind {
            Compound::Struct => {
                self.out.push('{');
                Frame::Open {
                    empty: true,
                    close: '}',
                }
            }
            Compound::Array(_) => {
                self.out.push('[');
                Frame::Open {
                    empty: true,
                    close: ']',
                }
            }
            Compound::Variant(_) | Compound::Optional(true) => Frame::Transparent,
            Compound::Optional(false) => {
                self.out.push_str("null");
                Frame::Absent
            }
        };
        self.stack.push(frame);
    }

    fn leave(&mut self) {
        match self.stack.last() {
            Some(Frame::Open { close, .. }) => {
                let c = *close;
                self.stack.pop();
                self.out.push(c);
            }
            Some(Frame::Transparent | Frame::Absent) => {
                self.stack.pop();
            }
            None => {}
        }
    }
}

/// Writes `b` as a JSON string: up to its first NUL (a text array's padding), invalid UTF-8
/// replaced.
pub(crate) fn string(out: &mut String, b: &[u8]) {
    let b = b.iter().position(|&x| x == 0).map_or(b, |i| &b[..i]);
    out.push('"');
    // The usual text (names, paths) needs no escape: copied whole.
    if b.iter()
        .all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\')
    {
        out.push_str(std::str::from_utf8(b).unwrap_or_default());
        out.push('"');
        return;
    }
    let s = String::from_utf8_lossy(b);
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
