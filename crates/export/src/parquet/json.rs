//! The `event` table's payload and context: a CTF field tree as JSON text.
//!
//! JSON, rather than typed columns per event class: one schema holds every class of every
//! tracer version (a kernel trace declares ~1,200 classes, and their fields change between
//! lttng-modules versions), so traces of a whole fleet share one `event` dataset that every
//! engine reads without schema merging; Spark (`get_json_object`), DuckDB (`->>`) and Trino
//! read fields out of it. The analyses' hot data is in the typed derived tables.

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

/// Writes the fields it visits as JSON into `out`.
pub(crate) struct JsonWriter<'a> {
    out: &'a mut String,
    stack: Vec<Frame>,
    /// Compounds entered but not written: the outermost structure of each view given to
    /// [`JsonWriter::members`], whose members go into the object open.
    skip: usize,
    /// Frames the current walk must not close: the object [`JsonWriter::members`] writes into.
    base: usize,
}

impl<'a> JsonWriter<'a> {
    pub(crate) fn new(out: &'a mut String) -> Self {
        JsonWriter {
            out,
            stack: Vec::with_capacity(8),
            skip: 0,
            base: 0,
        }
    }

    /// Opens an object for [`JsonWriter::members`].
    pub(crate) fn open_object(&mut self) {
        self.out.push('{');
        self.stack.push(Frame::Open {
            empty: true,
            close: '}',
        });
    }

    /// Closes the object of [`JsonWriter::open_object`].
    pub(crate) fn close_object(&mut self) {
        self.stack.pop();
        self.out.push('}');
    }

    /// Writes the members of the structure `view` into the object open.
    pub(crate) fn members(&mut self, view: &::ctf::FieldView<'_>) {
        self.skip = 1;
        self.base = self.stack.len();
        view.walk(self);
        self.skip = 0;
        self.base = 0;
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
            string(self.out, n.as_bytes());
            self.out.push(':');
        }
        true
    }
}

impl FieldVisitor for JsonWriter<'_> {
    fn value(&mut self, name: Option<&str>, _role: Option<Role>, value: &FieldValue<'_>) {
        if !self.start(name) {
            return;
        }
        let out = &mut *self.out;
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
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
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
        // The skipped outermost structure ends when the stack is back to the object open.
        match self.stack.last() {
            Some(Frame::Open { close, .. }) if self.stack.len() > self.base => {
                let c = *close;
                self.stack.pop();
                self.out.push(c);
            }
            Some(Frame::Transparent | Frame::Absent) => {
                self.stack.pop();
            }
            _ => {}
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
