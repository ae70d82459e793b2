//! The `event` table's rows: an event's payload and context fields as typed map columns.
//!
//! Maps of name to value, rather than JSON text or columns per event class: one schema holds
//! every class of every tracer version (a kernel trace declares ~1,200 classes, and their
//! fields change between lttng-modules versions), so the traces of a whole fleet share one
//! `event` dataset that every engine reads without schema merging, and a field is read as
//! `payload_int['next_tid']` with its type (no JSON parse per row). Written as Parquet's
//! repeated key/value columns, a class's keys repeat row after row and dictionary-encode to
//! a few bits each, and the values of one field type sit together, where JSON text mixed
//! names, digits and punctuation in one string per row: the table is about a fifth smaller
//! than with JSON text, and a little quicker to write (bench/README.md). The analyses' hot data
//! is in the typed derived tables either way.

use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder};
use ctf::field::{Compound, FieldVisitor};
use ctf::ir::Role;
use ctf::{Event, FieldValue};

use super::json::JsonWriter;
use super::tables::{self, Builder, Rows, TableOut};
use crate::pair_index::PairIndex;
use crate::Error;

/// Rows of a row group of the `event` table (at most: a smaller row-group size of the
/// options wins). Each group's rows are held until written, so this bounds the writer's
/// memory; smaller groups cluster less (bench/README.md has the sizes of 16 to 256 Ki).
pub(crate) const EVENT_GROUP_ROWS: usize = 64 * 1024;

/// One file of the `event` table being written. Its rows are held a buffer per class name
/// until a row group's worth, then written class after class in name order, each class's rows
/// in the order they came (time order): a class's map keys then repeat row after row and
/// collapse to runs, its fields' values sit together, and the `name` column is a few runs
/// whose page statistics let an engine skip the pages of other classes (`WHERE name =
/// 'sched_switch'`).
pub(crate) struct EventFile {
    out: TableOut,
    fields: EventRows,
    /// Per stream class, per event class: its buffer in `classes`, once seen.
    slots: PairIndex,
    classes: Vec<ClassRows>,
    /// Rows held in `classes`, and the most a group holds.
    held: usize,
    group: usize,
}

/// The rows of one class name held for the row group being made.
struct ClassRows {
    name: String,
    rows: Rows,
    /// Rows it had in the last group written (0: its buffers have no room to free).
    last: usize,
}

impl EventFile {
    /// Writes to `out` (a file of the `event` table), a row group every `group_rows` rows.
    pub(crate) fn new(out: TableOut, group_rows: usize) -> Self {
        EventFile {
            out,
            fields: EventRows::new(),
            slots: PairIndex::default(),
            classes: Vec::new(),
            held: 0,
            group: group_rows.max(1),
        }
    }

    /// Appends `ev`, at `ts` on CPU `cpu`.
    #[inline]
    pub(crate) fn row(&mut self, ev: &Event<'_>, ts: i64, cpu: i32) -> Result<(), Error> {
        let (sc, ec) = ev.class_index();
        let slot = match self.slots.get(sc, ec) {
            Some(i) => i,
            None => self.new_slot(sc, ec, ev.name()),
        };
        let class = &mut self.classes[slot];
        self.fields.row(class.rows.cols(), ev, ts, cpu)?;
        class.rows.end_row();
        self.held += 1;
        if self.held >= self.group {
            self.write_group()?;
        }
        Ok(())
    }

    /// The buffer of event class `ec` of stream class `sc`, first seen: the one of its name
    /// (classes of one name share it), else a new one.
    #[cold]
    fn new_slot(&mut self, sc: usize, ec: usize, name: &str) -> usize {
        let slot = match self.classes.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.classes.push(ClassRows {
                    name: name.to_string(),
                    rows: Rows::new(&tables::EVENT, 0),
                    last: 0,
                });
                self.classes.len() - 1
            }
        };
        self.slots.set(sc, ec, slot);
        slot
    }

    /// Writes the rows held as one row group, class after class by name.
    fn write_group(&mut self) -> Result<(), Error> {
        if self.held == 0 {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_unstable_by(|&a, &b| self.classes[a].name.cmp(&self.classes[b].name));
        let mut batches = Vec::with_capacity(order.len());
        for i in order {
            let c = &mut self.classes[i];
            let n = c.rows.len();
            if n == 0 && c.last == 0 {
                continue;
            }
            // The buffers start the next group with room for as many rows as this one had: a
            // class's share of the events changes slowly, and the buffers of all the classes
            // together keep about a group's room.
            let batch = c
                .rows
                .take(&tables::EVENT, self.out.schema(), Builder::sized_like)
                .map_err(|e| self.out.arrow_error(e))?;
            c.last = n;
            batches.push(batch);
        }
        self.held = 0;
        self.out.write_group(batches)
    }

    /// Rows appended so far.
    pub(crate) fn written_rows(&self) -> u64 {
        self.out.written_rows() + self.held as u64
    }

    /// Writes the rows held and closes the file: its path and size in bytes.
    pub(crate) fn close(mut self) -> Result<(std::path::PathBuf, u64), Error> {
        self.write_group()?;
        self.out.close()
    }
}

/// A map column's builder of integers.
type IntMap = MapBuilder<StringBuilder, Int64Builder>;
/// A map column's builder of strings.
type StrMap = MapBuilder<StringBuilder, StringBuilder>;

/// What the rows of the `event` table need besides the event: scratch space kept from one
/// row to the next.
pub(crate) struct EventRows {
    json: JsonWriter,
    key: String,
}

impl EventRows {
    pub(crate) fn new() -> Self {
        EventRows {
            json: JsonWriter::new(),
            key: String::with_capacity(32),
        }
    }

    /// Appends the cells of `ev`, at `ts` on CPU `cpu`, to `cols` (the `event` table's
    /// builders; the caller ends the row).
    #[inline]
    fn row(
        &mut self,
        cols: &mut [Builder],
        ev: &Event<'_>,
        ts: i64,
        cpu: i32,
    ) -> Result<(), Error> {
        let [Builder::I64(t), Builder::I32(c), Builder::Str(n), Builder::IntMap(pi), Builder::StrMap(ps), Builder::IntMap(ci), Builder::StrMap(cs)] =
            cols
        else {
            unreachable!("the event table's columns")
        };
        t.append_value(ts);
        c.append_value(cpu);
        n.append_value(ev.name());
        if let Some(p) = ev.payload() {
            p.walk(&mut self.maps(pi, ps));
        }
        append(pi, ps)?;
        let common = ev.common_context();
        let specific = ev.specific_context();
        if common.is_none() && specific.is_none() {
            ci.append(false).map_err(arrow_error)?;
            cs.append(false).map_err(arrow_error)?;
        } else {
            for v in [common, specific].into_iter().flatten() {
                v.walk(&mut self.maps(ci, cs));
            }
            append(ci, cs)?;
        }
        Ok(())
    }

    fn maps<'a>(&'a mut self, ints: &'a mut IntMap, strs: &'a mut StrMap) -> Maps<'a> {
        Maps {
            ints,
            strs,
            json: &mut self.json,
            key: &mut self.key,
            level: 0,
            capture: 0,
        }
    }
}

/// Ends the two maps of a row (their builders fail only when keys and values are out of
/// step, which [`Maps`] never leaves them).
#[inline]
fn append(ints: &mut IntMap, strs: &mut StrMap) -> Result<(), Error> {
    ints.append(true).map_err(arrow_error)?;
    strs.append(true).map_err(arrow_error)
}

fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    Error::Parquet {
        path: Default::default(),
        message: format!("table event: {e}"),
    }
}

/// Puts the top-level members of the structures it walks into a row's maps.
struct Maps<'a> {
    ints: &'a mut IntMap,
    strs: &'a mut StrMap,
    /// The JSON text of a top-level compound member.
    json: &'a mut JsonWriter,
    /// The name of the top-level member being read inside a variant or optional.
    key: &'a mut String,
    /// Compounds entered and not left: 1 inside the walked structure.
    level: u32,
    /// The level of the top-level compound member whose JSON text is being written (0: none).
    capture: u32,
}

impl Maps<'_> {
    #[inline]
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.ints
            .keys()
            .append_value(name.unwrap_or(self.key.as_str()));
        self.ints.values().append_value(v);
    }

    #[inline]
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.strs
            .keys()
            .append_value(name.unwrap_or(self.key.as_str()));
        self.strs.values().append_value(v);
    }
}

impl FieldVisitor for Maps<'_> {
    #[inline]
    fn value(&mut self, name: Option<&str>, role: Option<Role>, value: &FieldValue<'_>) {
        if self.capture > 0 {
            self.json.value(name, role, value);
            return;
        }
        // A member of the structure walked is named; a value inside a variant or optional
        // member is not, and takes the member's name.
        let name = if self.level <= 1 { name } else { None };
        match value {
            FieldValue::UInt { value, .. } => self.int(name, *value as i64),
            FieldValue::SInt { value, .. } => self.int(name, *value),
            FieldValue::Bool(b) => self.int(name, i64::from(*b)),
            FieldValue::Bits(v) => self.int(name, *v as i64),
            FieldValue::Str(b) => {
                let b = b.iter().position(|&x| x == 0).map_or(*b, |i| &b[..i]);
                match std::str::from_utf8(b) {
                    Ok(s) => self.str(name, s),
                    Err(_) => {
                        let s = String::from_utf8_lossy(b).into_owned();
                        self.str(name, &s);
                    }
                }
            }
            other => {
                // A float, a BLOB: as JSON text.
                self.json.clear();
                self.json.value(None, role, other);
                self.strs
                    .keys()
                    .append_value(name.unwrap_or(self.key.as_str()));
                self.strs.values().append_value(&self.json.out);
            }
        }
    }

    #[inline]
    fn enter(&mut self, name: Option<&str>, kind: Compound<'_>) {
        if self.capture > 0 {
            self.level += 1;
            self.json.enter(name, kind);
            return;
        }
        self.level += 1;
        if self.level == 1 {
            return;
        }
        if let (2, Some(n)) = (self.level, name) {
            self.key.clear();
            self.key.push_str(n);
        }
        if let Compound::Struct | Compound::Array(_) = kind {
            self.capture = self.level;
            self.json.clear();
            self.json.enter(None, kind);
        }
    }

    #[inline]
    fn leave(&mut self) {
        if self.capture > 0 {
            self.json.leave();
            if self.level == self.capture {
                self.capture = 0;
                self.strs.keys().append_value(self.key.as_str());
                self.strs.values().append_value(&self.json.out);
            }
        }
        self.level = self.level.saturating_sub(1);
    }
}
