//! The tables of a Parquet export: their schemas (one definition per table gives its column
//! builders, its Arrow schema and its documentation) and the writer of one table of one trace.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames,
    StringBuilder,
};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::Error;

/// The version of the tables' schemas, in every file's metadata (`tracekit.schema_version`)
/// and in the `trace` table. Raised when a column changes meaning or type; a column added at
/// the end of a table keeps the version readable by `INSERT … BY NAME` / schema merging.
pub const SCHEMA_VERSION: u32 = 3;

/// Rows gathered before they are handed to the Parquet writer as one batch.
pub const BATCH_ROWS: usize = 8192;

/// The column types the tables use. Times and durations are signed 64-bit nanoseconds: Spark
/// reads unsigned 64-bit integers as decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// A signed 64-bit integer.
    I64,
    /// A signed 32-bit integer.
    I32,
    /// A UTF-8 string.
    Str,
    /// A boolean.
    Bool,
    /// A 64-bit float.
    F64,
    /// A map of strings to signed 64-bit integers.
    IntMap,
    /// A map of strings to strings.
    StrMap,
}

impl ColumnType {
    fn data_type(self) -> DataType {
        match self {
            ColumnType::I64 => DataType::Int64,
            ColumnType::I32 => DataType::Int32,
            ColumnType::Str => DataType::Utf8,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::F64 => DataType::Float64,
            // The builder's own type, so that its arrays always fit the schema.
            ColumnType::IntMap | ColumnType::StrMap => {
                Builder::new(self).finish().data_type().clone()
            }
        }
    }

    /// The SQL name of the type, for the documentation.
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::I64 => "BIGINT",
            ColumnType::I32 => "INT",
            ColumnType::Str => "STRING",
            ColumnType::Bool => "BOOLEAN",
            ColumnType::F64 => "DOUBLE",
            ColumnType::IntMap => "MAP<STRING, BIGINT>",
            ColumnType::StrMap => "MAP<STRING, STRING>",
        }
    }
}

/// How a column's values are encoded in the files (before zstd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Encoding {
    /// A dictionary per row group, the rows as bit-packed indices: for columns of few
    /// distinct values (thread ids, names, flags). Parquet falls back to plain encoding when
    /// the dictionary grows too large.
    Dictionary,
    /// `DELTA_BINARY_PACKED`: the differences of consecutive values, bit-packed: for times,
    /// which grow with the rows.
    Delta,
    /// Plain values: for columns of nearly one distinct value per row (durations, return
    /// values, sizes, TCP sequence numbers), where a dictionary only costs its look-ups
    /// before it gives up, and its first pages cost more than plain values under zstd.
    Plain,
}

impl Encoding {
    /// The name of the encoding, for the documentation.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dictionary => "dictionary",
            Encoding::Delta => "delta",
            Encoding::Plain => "plain",
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: ColumnType,
    /// Whether it may be null.
    pub nullable: bool,
    /// What it holds.
    pub doc: &'static str,
    /// How its values are encoded (for a map column: its values; the keys always have a
    /// dictionary).
    pub encoding: Encoding,
}

impl Column {
    /// The column with plain encoding.
    const fn plain(self) -> Column {
        Column {
            encoding: Encoding::Plain,
            ..self
        }
    }
}

/// One table: its name (the dataset directory) and columns.
#[derive(Debug, Clone, Copy)]
pub struct TableDef {
    /// The dataset's name.
    pub name: &'static str,
    /// What one row is.
    pub doc: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
    /// Whether the rows of each batch of [`BATCH_ROWS`] are put in the order of the first
    /// column, `ts`, before they are written: a derived row is made when its interval ends,
    /// so its start times come slightly out of order, which costs their delta encoding
    /// bits (and the columns beside it their runs).
    pub sort_batches: bool,
    /// The zstd level of its files unless the export sets one for all tables: 3 for `event`,
    /// whose clustered rows compress a few per cent better at 3 for a few per cent more time;
    /// 1 for the derived tables, which come out larger at 3
    /// (bench/README.md).
    pub zstd_level: i32,
}

impl TableDef {
    /// The table's Arrow schema, with the schema version in its metadata.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| Field::new(c.name, c.ty.data_type(), c.nullable))
            .collect();
        let meta = [(
            "tracekit.schema_version".to_string(),
            SCHEMA_VERSION.to_string(),
        )];
        Arc::new(Schema::new_with_metadata(
            fields,
            meta.into_iter().collect(),
        ))
    }
}

/// A column's builder.
pub(crate) enum Builder {
    I64(Int64Builder),
    I32(Int32Builder),
    Str(StringBuilder),
    Bool(BooleanBuilder),
    F64(Float64Builder),
    IntMap(MapBuilder<StringBuilder, Int64Builder>),
    StrMap(MapBuilder<StringBuilder, StringBuilder>),
}

/// Parquet's names for a map's parts (what Spark and DuckDB write too).
fn map_names() -> Option<MapFieldNames> {
    Some(MapFieldNames {
        entry: "key_value".to_string(),
        key: "key".to_string(),
        value: "value".to_string(),
    })
}

impl Builder {
    fn new(ty: ColumnType) -> Self {
        Self::with_capacity(ty, BATCH_ROWS)
    }

    /// A builder with room for `rows` rows (and the maps for about eight entries a row).
    fn with_capacity(ty: ColumnType, rows: usize) -> Self {
        match ty {
            ColumnType::I64 => Builder::I64(Int64Builder::with_capacity(rows)),
            ColumnType::I32 => Builder::I32(Int32Builder::with_capacity(rows)),
            ColumnType::Str => Builder::Str(StringBuilder::with_capacity(rows, rows * 16)),
            ColumnType::Bool => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            ColumnType::F64 => Builder::F64(Float64Builder::with_capacity(rows)),
            ColumnType::IntMap => Builder::IntMap(MapBuilder::with_capacity(
                map_names(),
                StringBuilder::with_capacity(rows * 8, rows * 48),
                Int64Builder::with_capacity(rows * 8),
                rows,
            )),
            ColumnType::StrMap => Builder::StrMap(MapBuilder::with_capacity(
                map_names(),
                StringBuilder::with_capacity(rows, rows * 8),
                StringBuilder::with_capacity(rows, rows * 16),
                rows,
            )),
        }
    }

    /// A builder of type `ty` with room for the values of `like` (an array of that type): for
    /// rows that come in about the same shape batch after batch.
    pub(crate) fn sized_like(ty: ColumnType, like: &dyn Array) -> Self {
        use arrow_array::{MapArray, StringArray};
        let rows = like.len();
        let strings = |a: &dyn Array| {
            a.as_any()
                .downcast_ref::<StringArray>()
                .map_or((a.len(), 0), |s| (s.len(), s.value_data().len()))
        };
        let map = like.as_any().downcast_ref::<MapArray>();
        match (ty, map) {
            (ColumnType::Str, _) => {
                let (n, bytes) = strings(like);
                Builder::Str(StringBuilder::with_capacity(n, bytes))
            }
            (ColumnType::IntMap, Some(m)) => {
                let (n, bytes) = strings(m.keys());
                Builder::IntMap(MapBuilder::with_capacity(
                    map_names(),
                    StringBuilder::with_capacity(n, bytes),
                    Int64Builder::with_capacity(n),
                    rows,
                ))
            }
            (ColumnType::StrMap, Some(m)) => {
                let (n, bytes) = strings(m.keys());
                let (v, value_bytes) = strings(m.values());
                Builder::StrMap(MapBuilder::with_capacity(
                    map_names(),
                    StringBuilder::with_capacity(n, bytes),
                    StringBuilder::with_capacity(v, value_bytes),
                    rows,
                ))
            }
            _ => Self::with_capacity(ty, rows),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::I64(b) => Arc::new(b.finish()),
            Builder::I32(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::F64(b) => Arc::new(b.finish()),
            Builder::IntMap(b) => Arc::new(b.finish()),
            Builder::StrMap(b) => Arc::new(b.finish()),
        }
    }
}

/// Rows of a table held in column builders until they are taken as one batch.
pub(crate) struct Rows {
    builders: Vec<Builder>,
    len: usize,
}

impl Rows {
    /// No rows yet, with room for `capacity`.
    pub(crate) fn new(def: &TableDef, capacity: usize) -> Self {
        Rows {
            builders: def
                .columns
                .iter()
                .map(|c| Builder::with_capacity(c.ty, capacity))
                .collect(),
            len: 0,
        }
    }

    /// Every column's builder, for a row whose cells are appended together.
    #[inline]
    pub(crate) fn cols(&mut self) -> &mut [Builder] {
        &mut self.builders
    }

    /// Ends the row being appended (each column was given one cell).
    #[inline]
    pub(crate) fn end_row(&mut self) {
        self.len += 1;
    }

    /// Rows held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The rows held as one batch of `def`'s `schema`; each builder starts again as `refill`
    /// makes it from its column's type and the array just finished (a finished builder would
    /// start from empty buffers and grow, copying, back up).
    pub(crate) fn take(
        &mut self,
        def: &TableDef,
        schema: &SchemaRef,
        refill: impl Fn(ColumnType, &dyn Array) -> Builder,
    ) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let columns: Vec<ArrayRef> = self
            .builders
            .iter_mut()
            .zip(def.columns)
            .map(|(b, c)| {
                let a = b.finish();
                *b = refill(c.ty, a.as_ref());
                a
            })
            .collect();
        self.len = 0;
        RecordBatch::try_new(schema.clone(), columns)
    }
}

/// A value for one cell, as rows are appended.
pub(crate) trait Cell {
    /// Appends the value to `b` (whose type the table definition chose).
    fn put(self, b: &mut Builder);
}

macro_rules! cells {
    ($($t:ty => $v:ident $(as $c:ty)?),*) => {$(
        impl Cell for $t {
            #[inline]
            fn put(self, b: &mut Builder) {
                match b {
                    Builder::$v(b) => b.append_value(self $(as $c)?),
                    _ => unreachable!("a {} cell in a column of another type", stringify!($t)),
                }
            }
        }
        impl Cell for Option<$t> {
            #[inline]
            fn put(self, b: &mut Builder) {
                match b {
                    Builder::$v(b) => b.append_option(self.map(|x| x $(as $c)?)),
                    _ => unreachable!("a {} cell in a column of another type", stringify!($t)),
                }
            }
        }
    )*};
}
cells!(i64 => I64, i32 => I32, u32 => I64 as i64, bool => Bool, f64 => F64);

impl Cell for &str {
    #[inline]
    fn put(self, b: &mut Builder) {
        match b {
            Builder::Str(b) => b.append_value(self),
            _ => unreachable!("a string cell in a column of another type"),
        }
    }
}

impl Cell for Option<&str> {
    #[inline]
    fn put(self, b: &mut Builder) {
        match b {
            Builder::Str(b) => b.append_option(self),
            _ => unreachable!("a string cell in a column of another type"),
        }
    }
}

/// One table of one trace being written: `DIR/TABLE/host=H/trace=T/FILE.parquet`. Rows go
/// into column builders, which are handed every [`BATCH_ROWS`] rows to the Parquet writer: on
/// a thread of its own for the tables the ordered read writes (encoding and compression then
/// run beside the read, on another core; at most [`QUEUED`] batches wait for it), in place for
/// the files of the `event` table (each stream is already written on a core of its own). The
/// writer closes a row group every `row_group_rows` rows, so memory stays bounded however long
/// the trace.
pub(crate) struct TableOut {
    def: &'static TableDef,
    schema: SchemaRef,
    rows: Rows,
    /// Rows written in all.
    pub(crate) written: u64,
    writer: Writer,
    path: PathBuf,
}

/// Where a table's batches go.
enum Writer {
    /// To the writer thread's queue (None once it failed or closed), and the thread.
    Thread {
        queue: Option<std::sync::mpsc::SyncSender<RecordBatch>>,
        thread: Option<std::thread::JoinHandle<Result<(), parquet::errors::ParquetError>>>,
    },
    /// Straight to the writer (None once closed).
    Direct(Option<Box<ArrowWriter<File>>>),
}

/// The dictionary page limit of the string maps' values (per row group and file).
const STR_MAP_DICT_BYTES: usize = 8 << 20;

/// Batches that may wait for a table's writer thread.
const QUEUED: usize = 2;

/// How a table's files are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileProps {
    /// Rows per row group.
    pub(crate) row_group_rows: usize,
    /// The zstd level of every column (None: the table's own).
    pub(crate) zstd_level: Option<i32>,
}

impl TableOut {
    /// Creates the file of `def` for one trace under `dir` (the partition directory), written
    /// by a thread of its own.
    pub(crate) fn create(
        def: &'static TableDef,
        dir: &Path,
        props: FileProps,
    ) -> Result<Self, Error> {
        Self::create_file(def, dir, "part-0.parquet", props, true)
    }

    /// Creates file `name` of `def` under `dir`, written by a thread of its own when `thread`,
    /// else by the caller as it hands rows over.
    pub(crate) fn create_file(
        def: &'static TableDef,
        dir: &Path,
        name: &str,
        file_props: FileProps,
        thread: bool,
    ) -> Result<Self, Error> {
        ::ctf::private_files::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(name);
        let file = ::ctf::private_files::create_file(&path).map_err(|e| Error::io(&path, e))?;
        let level =
            ZstdLevel::try_new(file_props.zstd_level.unwrap_or(def.zstd_level)).unwrap_or_default();
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_row_count(Some(file_props.row_group_rows.max(1)))
            .set_created_by(format!("tracekit {}", env!("CARGO_PKG_VERSION")));
        for col in def.columns {
            let leaf = |part: &str| {
                parquet::schema::types::ColumnPath::new(vec![
                    col.name.to_string(),
                    "key_value".to_string(),
                    part.to_string(),
                ])
            };
            // A map's values are its `value` leaf; its keys keep their dictionary.
            let values = match col.ty {
                ColumnType::IntMap | ColumnType::StrMap => leaf("value"),
                _ => parquet::schema::types::ColumnPath::from(col.name),
            };
            match col.encoding {
                Encoding::Dictionary => {}
                Encoding::Delta => {
                    props = props
                        .set_column_dictionary_enabled(values.clone(), false)
                        .set_column_encoding(values, parquet::basic::Encoding::DELTA_BINARY_PACKED);
                }
                Encoding::Plain => {
                    props = props.set_column_dictionary_enabled(values, false);
                }
            }
            if col.ty == ColumnType::StrMap {
                // A map's strings are mostly a few names (comms, interfaces) beside a few
                // long distinct texts (JSON of arrays, file names), which would fill the
                // default 1 MiB dictionary page early in a row group: the rest of the group
                // would then be plain, the names too. A larger page keeps the dictionary.
                props =
                    props.set_column_dictionary_page_size_limit(leaf("value"), STR_MAP_DICT_BYTES);
            }
            if let ColumnType::IntMap | ColumnType::StrMap = col.ty {
                // Minimum and maximum of a map's keys or values, which mix every field, would
                // let a reader skip no page: not worth their comparisons of every value.
                for part in ["key", "value"] {
                    props =
                        props.set_column_statistics_enabled(leaf(part), EnabledStatistics::None);
                }
            }
        }
        let props = props.build();
        let schema = def.schema();
        let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| parquet_error(&path, e))?;
        let writer = if thread {
            let (queue, batches) = std::sync::mpsc::sync_channel::<RecordBatch>(QUEUED);
            let thread = std::thread::Builder::new()
                .name(format!("parquet {}", def.name))
                .spawn(move || {
                    // Sorted here, off the ordered read's thread, which every derived table
                    // waits on.
                    for b in batches {
                        if b.num_rows() == 0 {
                            // [`TableOut::write_group`]'s end of a row group.
                            writer.flush()?;
                            continue;
                        }
                        let b = if def.sort_batches {
                            sorted_by_ts(b)?
                        } else {
                            b
                        };
                        writer.write(&b)?;
                    }
                    writer.close().map(|_| ())
                })
                .map_err(|e| Error::io(&path, e))?;
            Writer::Thread {
                queue: Some(queue),
                thread: Some(thread),
            }
        } else {
            Writer::Direct(Some(Box::new(writer)))
        };
        Ok(TableOut {
            def,
            rows: Rows::new(def, BATCH_ROWS),
            schema,
            written: 0,
            writer,
            path,
        })
    }

    /// The table's name.
    pub(crate) fn name(&self) -> &'static str {
        self.def.name
    }

    /// Rows appended so far.
    pub(crate) fn written_rows(&self) -> u64 {
        self.written + self.rows.len() as u64
    }

    /// The builder of column `i`, for one cell of the row being appended.
    #[inline]
    pub(crate) fn col(&mut self, i: usize) -> &mut Builder {
        &mut self.rows.cols()[i]
    }

    /// Ends the row being appended (each column was given one cell).
    #[inline]
    pub(crate) fn end_row(&mut self) -> Result<(), Error> {
        self.rows.end_row();
        if self.rows.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        let n = self.rows.len();
        if n == 0 {
            return Ok(());
        }
        // Each batch gets new builders of the full capacity: every batch but the last is full.
        let batch = self
            .rows
            .take(self.def, &self.schema, |ty, _| Builder::new(ty))
            .map_err(|e| self.arrow_error(e))?;
        self.send(batch)?;
        self.written += n as u64;
        Ok(())
    }

    /// The error of an Arrow batch that does not fit the table (a bug).
    pub(crate) fn arrow_error(&self, e: arrow_schema::ArrowError) -> Error {
        Error::Parquet {
            path: self.path.clone(),
            message: format!("table {}: {e}", self.def.name),
        }
    }

    /// The table's Arrow schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Writes `batches` as one row group of their own (after the rows appended before, which
    /// are written first; a group over the file's row-group size is split): for rows a writer
    /// orders itself.
    pub(crate) fn write_group(
        &mut self,
        batches: impl IntoIterator<Item = RecordBatch>,
    ) -> Result<(), Error> {
        self.flush()?;
        for b in batches {
            if b.num_rows() > 0 {
                let n = b.num_rows() as u64;
                self.send(b)?;
                self.written += n;
            }
        }
        // An empty batch ends the row group (no other is ever sent).
        self.send(RecordBatch::new_empty(self.schema.clone()))
    }

    /// Hands `batch` to the writer; an empty one closes the row group.
    fn send(&mut self, batch: RecordBatch) -> Result<(), Error> {
        match &mut self.writer {
            Writer::Thread { queue, .. } => {
                let sent = queue.as_ref().is_some_and(|q| q.send(batch).is_ok());
                if !sent {
                    // The thread stopped at an error: it says which.
                    return Err(self.join().err().unwrap_or_else(|| Error::Parquet {
                        path: self.path.clone(),
                        message: "the writer stopped".to_string(),
                    }));
                }
            }
            Writer::Direct(w) => {
                let Some(w) = w else {
                    return Err(Error::Parquet {
                        path: self.path.clone(),
                        message: "the writer stopped".to_string(),
                    });
                };
                if batch.num_rows() == 0 {
                    return w.flush().map_err(|e| parquet_error(&self.path, e));
                }
                let batch = if self.def.sort_batches {
                    sorted_by_ts(batch).map_err(|e| parquet_error(&self.path, e.into()))?
                } else {
                    batch
                };
                w.write(&batch).map_err(|e| parquet_error(&self.path, e))?;
            }
        }
        Ok(())
    }

    /// Writes what is pending and closes the file: its path and size in bytes.
    pub(crate) fn close(mut self) -> Result<(PathBuf, u64), Error> {
        self.flush()?;
        self.join()?;
        let size = std::fs::metadata(&self.path)
            .map_err(|e| Error::io(&self.path, e))?
            .len();
        Ok((self.path, size))
    }

    /// Ends the writer (the queue, then waits for the thread): its error, if it met one.
    fn join(&mut self) -> Result<(), Error> {
        match &mut self.writer {
            Writer::Thread { queue, thread } => {
                *queue = None;
                match thread.take().map(|t| t.join()) {
                    None | Some(Ok(Ok(()))) => Ok(()),
                    Some(Ok(Err(e))) => Err(parquet_error(&self.path, e)),
                    Some(Err(_)) => Err(Error::Parquet {
                        path: self.path.clone(),
                        message: "the writer thread panicked".to_string(),
                    }),
                }
            }
            Writer::Direct(w) => match w.take() {
                Some(w) => w
                    .close()
                    .map(|_| ())
                    .map_err(|e| parquet_error(&self.path, e)),
                None => Ok(()),
            },
        }
    }
}

/// `batch` with its rows in the order of its first column (`ts`): stably, so that rows of one
/// time keep the order they were made in.
fn sorted_by_ts(batch: RecordBatch) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let Some(ts) = batch
        .columns()
        .first()
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
    else {
        return Ok(batch);
    };
    let ts = ts.values();
    if ts.is_sorted() {
        return Ok(batch);
    }
    // Each time with its row, packed in one integer when the batch's times span less than
    // 2^(64 - ROW_BITS) ns (always, short of a clock jump): ordering the keys is a stable
    // order of the rows by time, at the cost of sorting plain integers.
    const ROW_BITS: u32 = u32::BITS - (BATCH_ROWS as u32).leading_zeros();
    let (min, max) = ts
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let span = max.abs_diff(min);
    let order: Vec<u32> = if ts.len() <= 1 << ROW_BITS && span < 1 << (64 - ROW_BITS) {
        let mut keys: Vec<u64> = ts
            .iter()
            .zip(0u64..)
            .map(|(&t, i)| (t.abs_diff(min) << ROW_BITS) | i)
            .collect();
        keys.sort_unstable();
        let mask = (1u64 << ROW_BITS) - 1;
        keys.into_iter().map(|k| (k & mask) as u32).collect()
    } else {
        let mut keyed: Vec<(i64, u32)> = ts.iter().zip(0..).map(|(&t, i)| (t, i)).collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    };
    let order = UInt32Array::from(order);
    let columns = batch
        .columns()
        .iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &order, None))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(batch.schema(), columns)
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::Parquet {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Appends one row to a table: `row!(out, a, b, c)` puts `a` in column 0, `b` in 1…
macro_rules! row {
    ($out:expr, $($v:expr),+ $(,)?) => {{
        let out: &mut $crate::parquet::tables::TableOut = $out;
        let mut _i = 0usize;
        $(
            $crate::parquet::tables::Cell::put($v, out.col(_i));
            _i += 1;
        )+
        out.end_row()
    }};
}
pub(crate) use row;

/// A column: times (`ts`, `…_ts`) delta-encoded, integer maps' values plain (they mix every
/// field: too many distinct values for a dictionary), booleans plain (Parquet packs them a bit
/// each, and has no dictionary of booleans), the others with a dictionary.
const fn c(name: &'static str, ty: ColumnType, nullable: bool, doc: &'static str) -> Column {
    let b = name.as_bytes();
    let n = b.len();
    let time = matches!(ty, ColumnType::I64)
        && ((n == 2 && b[0] == b't' && b[1] == b's')
            || (n > 3 && b[n - 3] == b'_' && b[n - 2] == b't' && b[n - 1] == b's'));
    let encoding = if time {
        Encoding::Delta
    } else if matches!(ty, ColumnType::IntMap | ColumnType::Bool) {
        Encoding::Plain
    } else {
        Encoding::Dictionary
    };
    Column {
        name,
        ty,
        nullable,
        doc,
        encoding,
    }
}

use ColumnType::{Bool, IntMap, Str, StrMap, F64, I32, I64};

/// `trace`: one row per exported trace.
pub const TRACE: TableDef = TableDef {
    name: "trace",
    doc: "One row per exported trace: where it came from, its time range, its clock transform \
          and what it lost.",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("schema_version", I32, false, "The version of these tables' schemas."),
        c("path", Str, false, "The trace directory read."),
        c("hostname", Str, true, "The trace's `hostname` environment entry."),
        c("tracer", Str, true, "`tracer_name` and version (`lttng-modules 2.13.0`)."),
        c("domain", Str, true, "The trace's `domain` environment entry (`kernel`, `ust`)."),
        c("begin_ns", I64, true, "Time of the first exported event (ns; the synchronized clock with `--sync`)."),
        c("end_ns", I64, true, "Time of the last exported event."),
        c("events", I64, false, "Events read: every event of the range when the `event` table is written (with `--tables` without it, those the tables need)."),
        c("cpus", I32, false, "CPUs the kernel model saw (cputop's denominator)."),
        c("discarded_events", I64, false, "Events the tracer counted as discarded, all streams."),
        c("lost_packets", I64, false, "Packets missing from the streams' sequence numbers."),
        c("losses", Str, false, "Per stream with a loss, `STREAM_FILE: N discarded events, M lost packets`, one per line (empty: none)."),
        c("errors", Str, false, "Read errors, one per line: the tables hold what could be read (empty: none)."),
        c("clock_offset_ns", I64, false, "The clock transform (`--sync`) at the trace's first event: its time on the output clock minus on the trace's own (0 without `--sync`)."),
        c("clock_rate", F64, false, "The transform's rate: output ns per trace ns (1 without `--sync`)."),
        c("synced", Bool, false, "Whether times are on the synchronized clock (`--sync`)."),
    ],
};

/// `event`: every event.
pub const EVENT: TableDef = TableDef {
    name: "event",
    doc: "Every event in the range (those kept by `--names`), one file per stream (`part-N.parquet`, N the stream's index). Row order: a file's row groups hold the stream's events in time order, group after group (64 Ki rows each); inside a group, the rows of one class name are together, the classes in name order, each class's rows in time order (`ORDER BY ts` to read them in time order). Fields are typed map columns, read as `payload_int['next_tid']` (Spark, DuckDB): integers, enumerations (their value), booleans (0 or 1) in the `_int` maps, strings in the `_str` maps; a field that is neither (an array, a structure, a float, a BLOB) is in the `_str` map as JSON text (BLOBs as hex). A variant or optional field takes its selected value's type; an absent optional is left out.",
    sort_batches: false,
    zstd_level: 3,
    columns: &[
        c("ts", I64, false, "Event time (ns since the epoch)."),
        c("cpu", I32, true, "The CPU that recorded it (the stream's `cpu_id`)."),
        c("name", Str, false, "The event class name (`sched_switch`)."),
        c("payload_int", IntMap, false, "The payload's integer fields by name (unsigned values above 2^63 wrap to negative, as Spark's BIGINT would)."),
        c("payload_str", StrMap, false, "The payload's text fields by name (up to the first NUL; invalid UTF-8 replaced), and the others as JSON text."),
        c("context_int", IntMap, true, "The stream and event contexts' integer fields by name (null when the trace has no context)."),
        c("context_str", StrMap, true, "The contexts' other fields, as in `payload_str` (null when the trace has no context)."),
    ],
};

/// `sched_slice`: CPU occupation.
pub const SCHED_SLICE: TableDef = TableDef {
    name: "sched_slice",
    doc: "One row per time a thread held a CPU, from its switch in to its switch out (or the \
          range's end); the thread running before a CPU's first switch holds it from the range's \
          begin, as cputop counts it. tid 0 is the idle task.",
    sort_batches: true,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Switch-in time (ns)."),
        c("dur", I64, false, "Duration (ns).").plain(),
        c("cpu", I32, false, "The CPU."),
        c("tid", I32, false, "The thread (0: idle)."),
        c("prio", I32, true, "`next_prio` of the switch in."),
        c("end_state", Str, true, "How it left the CPU: `runnable` (preempted), `blocked`, `dead`, `unknown`; null when it still ran at the range's end."),
        c("wakeup_ts", I64, true, "The first wakeup since it last ran, which this switch in ends (schedstats' latency is `ts - wakeup_ts`)."),
        c("waker_tid", I32, true, "The thread that made that wakeup (null: an interrupt, or not known)."),
    ],
};

/// `thread_state`: what each thread did.
pub const THREAD_STATE: TableDef = TableDef {
    name: "thread_state",
    doc: "One row per interval a thread spent in one state, back to back from its first \
          status change in the range; the last interval of each thread ends at the range's \
          end. User mode, system calls and the interrupts that preempt them are all `running` \
          (the `syscall` and `irq` tables have those).",
    sort_batches: true,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Start (ns)."),
        c("dur", I64, false, "Duration (ns).").plain(),
        c("tid", I32, false, "The thread."),
        c("state", Str, false, "`running` (on a CPU), `runnable` (woken or preempted, waiting for a CPU), `blocked` (switched out waiting), `dead` or `unknown`."),
        c("syscall", Str, true, "For `blocked`: the system call it blocked in, if any."),
        c("woken_by", I32, true, "For `blocked`: the thread whose wakeup ended it (null: an interrupt, or not known)."),
        c("woken_in_irq", Bool, true, "For `blocked`: the wakeup came from an interrupt handler."),
    ],
};

/// `syscall`: completed system calls.
pub const SYSCALL: TableDef = TableDef {
    name: "syscall",
    doc: "One row per completed system call (entry and exit on the same thread).",
    sort_batches: true,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Entry time (ns)."),
        c("dur", I64, false, "Duration (ns).").plain(),
        c("tid", I32, false, "The calling thread."),
        c("pid", I32, true, "Its process, when known."),
        c("name", Str, false, "The call (`openat`)."),
        c("ret", I64, false, "The return value.").plain(),
        c("cmd", I64, true, "The `cmd` argument (fcntl, ioctl)."),
        c(
            "fd",
            I64,
            true,
            "The file descriptor used or created (calls on descriptors).",
        ),
        c(
            "size",
            I64,
            true,
            "Bytes read or written (successful reads and writes).",
        )
        .plain(),
        c(
            "file",
            Str,
            true,
            "The name behind `fd` (a path, `socket`, a peer `ADDRESS:PORT`), when known.",
        ),
    ],
};

/// `irq`: interrupt handlers.
pub const IRQ: TableDef = TableDef {
    name: "irq",
    doc: "One row per completed hard IRQ or soft IRQ handler.",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Handler entry (ns)."),
        c("dur", I64, false, "Handler duration (ns).").plain(),
        c("cpu", I32, false, "The CPU."),
        c("hard", Bool, false, "A hard IRQ (else a soft IRQ)."),
        c(
            "irq",
            I64,
            false,
            "The IRQ line (hard) or the soft IRQ vector.",
        ),
        c(
            "name",
            Str,
            false,
            "The handler's name (hard) or the vector's (`TIMER_SOFTIRQ`).",
        ),
        c(
            "raise_latency",
            I64,
            true,
            "Soft IRQs: entry minus the raise it served, when seen (ns).",
        )
        .plain(),
    ],
};

/// `block_io`: block requests.
pub const BLOCK_IO: TableDef = TableDef {
    name: "block_io",
    doc: "One row per completed block request (issue to completion).",
    sort_batches: true,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Issue time (ns)."),
        c("dur", I64, false, "Issue to completion (ns).").plain(),
        c(
            "dev",
            I64,
            false,
            "The device number it was issued for (the partition).",
        ),
        c("nr_sector", I64, false, "Size in sectors."),
        c("write", Bool, false, "A write (else a read)."),
        c("tid", I32, true, "The thread that issued it, when known."),
    ],
};

/// `net_packet`: network packets with their TCP header.
pub const NET_PACKET: TableDef = TableDef {
    name: "net_packet",
    doc: "One row per packet sent (`net_dev_queue`, `inet_sock_local_out`) or received \
          (`netif_receive_skb`, `inet_sock_local_in`).",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("ts", I64, false, "Event time (ns)."),
        c("cpu", I32, true, "The CPU."),
        c("sent", Bool, false, "Sent by this host (else received)."),
        c("event", Str, false, "The event name."),
        c(
            "iface",
            Str,
            true,
            "The interface (`name` field), when the event has one.",
        ),
        c("len", I64, true, "The packet's `len`."),
        c(
            "saddr",
            Str,
            true,
            "IP source address (dotted IPv4 or IPv6 text), when recorded.",
        ),
        c("daddr", Str, true, "IP destination address."),
        c("sport", I32, true, "TCP source port."),
        c("dport", I32, true, "TCP destination port."),
        c("seq", I64, true, "TCP sequence number.").plain(),
        c("ack", I64, true, "TCP acknowledgment number.").plain(),
        c("flags", I32, true, "TCP flags."),
    ],
};

/// `thread`: thread names over time.
pub const THREAD: TableDef = TableDef {
    name: "thread",
    doc: "One row per thread and name it had: from when the name was first seen to when it \
          changed, the thread was freed, or the range ended.",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("tid", I32, false, "The thread."),
        c("pid", I32, true, "Its process, when known."),
        c("name", Str, false, "Its command name."),
        c(
            "ts",
            I64,
            false,
            "When it was first seen with this name (ns).",
        ),
        c("end_ts", I64, false, "When the name ended (ns)."),
        c(
            "exited",
            Bool,
            false,
            "The name ended with the thread (`sched_process_free`).",
        ),
    ],
};

/// `process`: processes.
pub const PROCESS: TableDef = TableDef {
    name: "process",
    doc: "One row per process (thread group) seen: forked in the range or alive at its start \
          (statedump), with the name of its main thread at the end.",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("pid", I32, false, "The process id."),
        c("ppid", I32, true, "Its parent process, when known."),
        c("name", Str, true, "Its main thread's last name."),
        c("ts", I64, false, "Its fork, or its first sighting (ns)."),
        c(
            "end_ts",
            I64,
            true,
            "When its main thread was freed, if in the range.",
        ),
    ],
};

/// `disk`: block devices (written with `block_io`).
pub const DISK: TableDef = TableDef {
    name: "disk",
    doc: "One row per block device of the trace's `block_io` rows or statedump, as known at \
          the range's end (names come from the statedump, which may come late).",
    sort_batches: false,
    zstd_level: 1,
    columns: &[
        c("dev", I64, false, "The device number."),
        c("name", Str, false, "Its name from the statedump, else `MAJOR,MINOR`."),
        c("whole", Bool, false, "A whole disk that partitions' requests were remapped to (iolatencystats leaves these out: their requests are the partitions')."),
    ],
};

/// Every table, in output order.
pub const TABLES: [&TableDef; 11] = [
    &TRACE,
    &EVENT,
    &SCHED_SLICE,
    &THREAD_STATE,
    &SYSCALL,
    &IRQ,
    &BLOCK_IO,
    &DISK,
    &NET_PACKET,
    &THREAD,
    &PROCESS,
];

/// The schema of every table as Markdown: the reference `docs/parquet-schema.md` holds.
pub fn schema_markdown() -> String {
    let mut s = format!(
        "# tracekit Parquet export schema, version {SCHEMA_VERSION}\n\n\
         Written by `tracekit export --format parquet`. Each table is a dataset directory, \
         Hive-partitioned by `host=…/trace=…` (these two are columns for Spark and DuckDB), \
         zstd-compressed (level 3 for `event`, 1 for the others, unless `--zstd-level` sets one). Times and durations are signed 64-bit nanoseconds since the epoch \
         (on the synchronized clock with `--sync`).\n\n\
         Version 2 changed the `event` table: its payload and contexts, JSON text in version 1, \
         are typed maps of field name to value (`payload_int['next_tid']`), and it has a file per \
         stream. Maps rather than JSON: a field is read with its type and without a JSON parse \
         per row, and Parquet stores a map as key and value columns, where a class's keys repeat \
         row after row and dictionary-encode to a few bits each and the integers of all fields \
         are packed as integers (the table is about a fifth smaller than its JSON text, and a little quicker to write). Maps \
         rather than columns per event class: one schema holds every class of every tracer \
         version (a kernel trace declares about 1,200 classes, whose fields change between \
         lttng-modules versions), so the traces of a fleet share one `event` dataset that every \
         engine reads without schema merging. A file per stream: each is written by a thread of \
         its own, beside the ordered read of the derived tables.\n\n\
         Version 3 changed the order of the `event` table's rows (the columns are the same): in \
         version 2 a file's rows were in time order; in version 3 each row group holds the \
         stream's next 64 Ki events grouped by class, the classes in name order, each class in \
         time order. A class's map keys then repeat row after row and its fields' values sit \
         together, so the table takes a third less (a generated 5 M-event kernel trace: 48.9 → \
         30.6 MB, 0.33× → 0.20× its CTF size, with zstd level 3 on this table, which the \
         clustered rows make worth its time), and `name` is a \
         few runs per group whose page statistics (the column index) let an engine skip the \
         pages of other classes. Readers that need time order sort by `ts` (the `sql/` queries read the \
         derived tables).\n\n\
         Encodings (the `encoding` column below; none changes a value): times are \
         `delta` (`DELTA_BINARY_PACKED`: they grow with the rows, so a few bits of difference \
         per row instead of most of eight bytes); columns of nearly one distinct value per \
         row (durations, return values, sizes, TCP sequence numbers, the `_int` maps' values) \
         are `plain` (a dictionary would give up after its look-ups, and its first pages \
         compress worse than plain values under zstd), as are booleans (a bit each); the others, \
         and the maps' keys, have a `dictionary`. The derived tables' rows are made when their interval ends, so their \
         start times come slightly out of order: the tables marked below have each block of \
         {BATCH_ROWS} rows sorted by `ts` before it is written (sorted times take fewer bits \
         of delta; rows are not in order across blocks). bench/README.md has what each choice \
         saves.\n"
    );
    for t in TABLES {
        let order = if t.sort_batches {
            format!(" Rows are in `ts` order within each block of {BATCH_ROWS}.")
        } else {
            String::new()
        };
        s.push_str(&format!(
            "\n## `{}`\n\n{}{order}\n\n| column | type | null | encoding | meaning |\n| --- | --- | --- | --- | --- |\n",
            t.name, t.doc
        ));
        for c in t.columns {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                c.name,
                c.ty.sql(),
                if c.nullable { "yes" } else { "no" },
                c.encoding.name(),
                c.doc
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of `ts` and a row number, sorted: the rows in time order, rows of one time in
    /// the order they came.
    fn sort(ts: &[i64]) -> Vec<(i64, i32)> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("ts", DataType::Int64, false),
            Field::new("row", DataType::Int32, false),
        ]));
        let rows: Vec<i32> = (0..ts.len() as i32).collect();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ts.to_vec())),
                Arc::new(arrow_array::Int32Array::from(rows)),
            ],
        )
        .unwrap();
        let sorted = sorted_by_ts(batch).unwrap();
        let t = sorted
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let r = sorted
            .column(1)
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap();
        t.values()
            .iter()
            .copied()
            .zip(r.values().iter().copied())
            .collect()
    }

    #[test]
    fn batches_sort_by_time_stably() {
        // Times close together (packed keys) and far apart (pairs): the same order.
        for base in [1_700_000_000_000_000_000i64, i64::MIN + 5] {
            let far = if base < 0 { i64::MAX - 1 } else { base + 30 };
            let ts = [base + 20, base + 10, far, base + 10, base - 3, base + 20];
            let got = sort(&ts);
            let mut want: Vec<(i64, i32)> = ts.iter().copied().zip(0..).collect();
            want.sort_by_key(|&(t, _)| t);
            assert_eq!(got, want, "from {base}");
        }
        // Already in order: unchanged.
        assert_eq!(sort(&[1, 2, 2, 3]), [(1, 0), (2, 1), (2, 2), (3, 3)]);
    }
}
