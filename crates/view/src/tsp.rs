//! The Trace Server Protocol's models (field names as `API.yaml` and `tsp-typescript-client`
//! spell them). Times are nanoseconds on the experiment's time line, as JSON integers (past
//! 2^53: a JavaScript client parses them as BigInt, as tsp-typescript-client does).

use std::collections::BTreeMap;

use serde::Serialize;

/// A query's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Still computing (poll again).
    Running,
    /// Done.
    Completed,
    /// Failed (the message says why).
    Failed,
    /// Cancelled.
    Cancelled,
}

/// The envelope of every data-provider reply.
#[derive(Debug, Clone, Serialize)]
pub struct GenericResponse<T> {
    /// The model (None while running).
    pub model: Option<T>,
    /// The status.
    pub status: Status,
    /// A human-readable status.
    #[serde(rename = "statusMessage")]
    pub status_message: String,
}

impl<T> GenericResponse<T> {
    /// A completed reply.
    pub fn completed(model: T) -> Self {
        GenericResponse {
            model: Some(model),
            status: Status::Completed,
            status_message: "Completed".into(),
        }
    }
}

/// A style: a parent style key and values (`background-color`, `height`…).
#[derive(Debug, Clone, Default, Serialize)]
pub struct OutputElementStyle {
    /// The style it derives from (a key of the output's `/style` reply).
    #[serde(rename = "parentKey", skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Its own values.
    pub values: BTreeMap<String, serde_json::Value>,
}

impl OutputElementStyle {
    /// The style of key `key`, no values of its own.
    pub fn key(key: &str) -> Self {
        OutputElementStyle {
            parent_key: Some(key.to_string()),
            values: BTreeMap::new(),
        }
    }
}

/// The `/style` reply's model.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OutputStyleModel {
    /// Style key → style.
    pub styles: BTreeMap<String, OutputElementStyle>,
}

/// A tree column header.
#[derive(Debug, Clone, Serialize)]
pub struct EntryHeader {
    /// Its name.
    pub name: String,
    /// Its tooltip.
    pub tooltip: String,
}

/// A tree entry (a time-graph row, an XY series' entry).
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// Its id (unique in the output).
    pub id: i64,
    /// Its parent's id, −1 for a top-level entry.
    #[serde(rename = "parentId")]
    pub parent_id: i64,
    /// One label per header.
    pub labels: Vec<String>,
    /// Start of its data (time-graph entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    /// End of its data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
    /// Whether it has states or a series.
    #[serde(rename = "hasData")]
    pub has_data: bool,
    /// Its style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<OutputElementStyle>,
    /// Typed values for filters (`tid`, `host`…).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Vec<serde_json::Value>>,
}

/// A tree reply's model.
#[derive(Debug, Clone, Serialize)]
pub struct EntryModel {
    /// The columns.
    pub headers: Vec<EntryHeader>,
    /// The entries, parents before children.
    pub entries: Vec<Entry>,
    /// How many levels a client expands at first (−1: all).
    #[serde(rename = "autoExpandLevel")]
    pub auto_expand_level: i64,
}

/// A time-graph state.
#[derive(Debug, Clone, Serialize)]
pub struct TimeGraphState {
    /// Start.
    pub start: i64,
    /// End.
    pub end: i64,
    /// Its label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<OutputElementStyle>,
    /// Filter tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<u32>,
}

/// A time-graph row's states.
#[derive(Debug, Clone, Serialize)]
pub struct TimeGraphRow {
    /// The entry.
    #[serde(rename = "entryId")]
    pub entry_id: i64,
    /// Its states in time order.
    pub states: Vec<TimeGraphState>,
}

/// The `states` reply's model.
#[derive(Debug, Clone, Serialize)]
pub struct TimeGraphModel {
    /// The rows.
    pub rows: Vec<TimeGraphRow>,
}

/// A time-graph arrow.
#[derive(Debug, Clone, Serialize)]
pub struct TimeGraphArrow {
    /// Entry it leaves.
    #[serde(rename = "sourceId")]
    pub source_id: i64,
    /// Entry it reaches.
    #[serde(rename = "targetId")]
    pub target_id: i64,
    /// When it leaves.
    pub start: i64,
    /// When it arrives.
    pub end: i64,
    /// Its style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<OutputElementStyle>,
}

/// An XY axis.
#[derive(Debug, Clone, Serialize)]
pub struct XyAxisDescription {
    /// Its label.
    pub label: String,
    /// Its unit.
    pub unit: String,
    /// `NUMBER`, `TIMESTAMP`, `DURATION`…
    #[serde(rename = "dataType")]
    pub data_type: String,
}

impl XyAxisDescription {
    /// An axis: its label, unit and data type (`TIMESTAMP`, `DURATION`, `NUMBER`…).
    pub fn new(label: &str, unit: &str, data_type: &str) -> Self {
        XyAxisDescription {
            label: label.into(),
            unit: unit.into(),
            data_type: data_type.into(),
        }
    }
}

/// An XY series.
#[derive(Debug, Clone, Serialize)]
pub struct XySeries {
    /// Its name.
    #[serde(rename = "seriesName")]
    pub series_name: String,
    /// Its id (the tree entry's).
    #[serde(rename = "seriesId")]
    pub series_id: i64,
    /// X axis.
    #[serde(rename = "xValuesDescription")]
    pub x_values_description: XyAxisDescription,
    /// Y axis.
    #[serde(rename = "yValuesDescription")]
    pub y_values_description: XyAxisDescription,
    /// X values (times).
    #[serde(rename = "xValues")]
    pub x_values: Vec<i64>,
    /// Y values.
    #[serde(rename = "yValues")]
    pub y_values: Vec<f64>,
    /// Its style.
    pub style: OutputElementStyle,
}

/// The `xy` reply's model.
#[derive(Debug, Clone, Serialize)]
pub struct XyModel {
    /// The chart's title.
    pub title: String,
    /// The series.
    pub series: Vec<XySeries>,
}

/// A table column.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnHeaderEntry {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// `STRING`, `NUMBER`, `TIMESTAMP`…
    #[serde(rename = "type")]
    pub kind: String,
}

/// A table cell.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Its text.
    pub content: String,
}

/// A table line.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// Its index in the table.
    pub index: u64,
    /// Its cells, one per requested column.
    pub cells: Vec<Cell>,
    /// Filter tags (a search match: [`SEARCH_MATCH_TAG`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<u32>,
}

/// The tag of a line matching a table search (Trace Compass's highlight property).
pub const SEARCH_MATCH_TAG: u32 = 1 << 2;

/// The `lines` reply's model.
#[derive(Debug, Clone, Serialize)]
pub struct TableModel {
    /// Index of the first line.
    #[serde(rename = "lowIndex")]
    pub low_index: u64,
    /// Lines in the whole table.
    pub size: u64,
    /// The columns of the cells.
    #[serde(rename = "columnIds")]
    pub column_ids: Vec<i64>,
    /// The lines.
    pub lines: Vec<Line>,
}

/// An annotation (a marker over a time span, on one entry or the whole chart).
#[derive(Debug, Clone, Serialize)]
pub struct Annotation {
    /// Its label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its start.
    pub time: i64,
    /// Its length.
    pub duration: i64,
    /// Its entry (−1: the whole chart).
    #[serde(rename = "entryId")]
    pub entry_id: i64,
    /// `CHART` or `TREE`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<OutputElementStyle>,
}

/// The `annotations` reply's model.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AnnotationModel {
    /// Category → annotations.
    pub annotations: BTreeMap<String, Vec<Annotation>>,
}

/// The kind of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProviderType {
    /// A virtual table (`table/{id}/columns|lines`).
    Table,
    /// A tree of series over time (`XY/{id}/tree|xy`).
    TreeTimeXy,
    /// A time graph (`timeGraph/{id}/tree|states|arrows|tooltip`).
    TimeGraph,
    /// A tree of series over another axis than time (`XY/{id}/tree|xy`).
    TreeGenericXy,
    /// A data tree (`data/{id}/tree`).
    DataTree,
}

/// An output's description.
#[derive(Debug, Clone, Serialize)]
pub struct OutputDescriptor {
    /// Its id (the `{outputId}` of its endpoints).
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Its kind.
    #[serde(rename = "type")]
    pub kind: ProviderType,
    /// Parameters its queries take besides the standard ones (name → description).
    #[serde(rename = "queryParameters", skip_serializing_if = "BTreeMap::is_empty")]
    pub query_parameters: BTreeMap<String, String>,
}
