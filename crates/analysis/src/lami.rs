//! LAMI 1.0 (LTTng Analyses Machine Interface) output: result tables of typed cells.

use serde_json::{json, Map, Value};

/// A typed LAMI cell.
pub mod cell {
    use serde_json::{json, Value};

    pub fn process(name: &str, tid: i32, pid: Option<i32>) -> Value {
        match pid {
            Some(pid) => json!({"class": "process", "name": name, "pid": pid, "tid": tid}),
            None => json!({"class": "process", "name": name, "tid": tid}),
        }
    }
    pub fn number(v: impl Into<serde_json::Number>) -> Value {
        json!({"class": "number", "value": Value::Number(v.into())})
    }
    pub fn ratio(v: f64) -> Value {
        json!({"class": "ratio", "value": v})
    }
    pub fn duration_int(v: i64) -> Value {
        json!({"class": "duration", "value": v})
    }
    pub fn duration(v: f64) -> Value {
        json!({"class": "duration", "value": v})
    }
    pub fn string(v: &str) -> Value {
        json!({"class": "string", "value": v})
    }
    pub fn cpu(id: u32) -> Value {
        json!({"class": "cpu", "id": id})
    }
    pub fn syscall(name: &str) -> Value {
        json!({"class": "syscall", "name": name})
    }
    pub fn irq(hard: bool, nr: i64, name: &str) -> Value {
        json!({"class": "irq", "hard": hard, "nr": nr, "name": name})
    }
    pub fn timestamp(ns: i64) -> Value {
        json!({"class": "timestamp", "value": ns})
    }
    pub fn time_range(begin: i64, end: i64) -> Value {
        json!({"class": "time-range", "begin": timestamp(begin), "end": timestamp(end)})
    }
    pub fn disk(name: &str) -> Value {
        json!({"class": "disk", "name": name})
    }
    pub fn unknown() -> Value {
        json!({"class": "unknown"})
    }
    pub fn empty() -> Value {
        json!({"class": "empty"})
    }
}

/// A column of a table class.
#[derive(Debug, Clone)]
pub struct Column {
    pub title: &'static str,
    pub class: &'static str,
    pub unit: Option<&'static str>,
}

pub const fn col(title: &'static str, class: &'static str) -> Column {
    Column {
        title,
        class,
        unit: None,
    }
}

pub const fn colu(title: &'static str, class: &'static str, unit: &'static str) -> Column {
    Column {
        title,
        class,
        unit: Some(unit),
    }
}

/// A table class: its name, title and columns.
#[derive(Debug, Clone)]
pub struct TableClass {
    pub name: &'static str,
    pub title: &'static str,
    pub columns: &'static [Column],
}

/// What an analysis declares in `--metadata`.
#[derive(Debug, Clone)]
pub struct Metadata {
    pub title: &'static str,
    pub description: &'static str,
    pub tags: &'static [&'static str],
    pub table_classes: &'static [TableClass],
}

/// A column of a table whose class is declared in the table itself (see [`Table::inline`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InlineColumn {
    pub title: String,
    pub class: &'static str,
    pub unit: Option<&'static str>,
}

/// One result table.
#[derive(Debug, Clone)]
pub struct Table {
    /// The table class name.
    pub class: &'static str,
    /// A title replacing the class's (a LAMI "inherit" class), e.g. per-TID tables.
    pub title: Option<String>,
    /// Columns of a table of an anonymous class, declared in the table (LAMI allows a class
    /// object in place of a class name): `--freq-series` tables, whose columns depend on the
    /// histograms. The table's `title` is then the class title; `class` is only a key for
    /// text rendering and ordering.
    pub inline: Option<Vec<InlineColumn>>,
    pub begin: i64,
    pub end: i64,
    pub rows: Vec<Vec<Value>>,
}

impl Table {
    pub fn new(class: &'static str, begin: i64, end: i64) -> Self {
        Table {
            class,
            title: None,
            inline: None,
            begin,
            end,
            rows: Vec::new(),
        }
    }

    /// The `class` member of the table's LAMI object: the class name, an inheriting class
    /// with the table's title, or a whole anonymous class.
    pub fn class_json(&self) -> Value {
        if let Some(cols) = &self.inline {
            let cols: Vec<Value> = cols
                .iter()
                .map(|c| {
                    let mut o = Map::new();
                    o.insert("title".into(), json!(c.title));
                    o.insert("class".into(), json!(c.class));
                    if let Some(u) = c.unit {
                        o.insert("unit".into(), json!(u));
                    }
                    Value::Object(o)
                })
                .collect();
            return json!({"title": self.title.as_deref().unwrap_or(""), "column-descriptions": cols});
        }
        match &self.title {
            Some(t) => json!({"inherit": self.class, "title": t}),
            None => json!(self.class),
        }
    }

    /// The text between the brackets ending the title of an inheriting table
    /// (`Title [subtitle]`), as lttng-analyses names the series of `--freq-series`.
    pub fn subtitle(&self) -> Option<&str> {
        let t = self.title.as_deref()?.strip_suffix(']')?;
        Some(&t[t.rfind(" [")? + 2..])
    }

    pub fn to_json(&self) -> Value {
        let class = self.class_json();
        json!({
            "class": class,
            "time-range": cell::time_range(self.begin, self.end),
            "data": self.rows,
        })
    }
}

/// The `--mi` document of a set of results.
pub fn results_json(tables: &[Table]) -> Value {
    json!({"results": tables.iter().map(Table::to_json).collect::<Vec<_>>()})
}

/// Writes the `--mi` document of a set of results to `w`, table by table (no intermediate
/// document: the results of large traces are big).
pub fn write_results(w: &mut impl std::io::Write, tables: &[Table]) -> std::io::Result<()> {
    w.write_all(b"{\"results\":[")?;
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        let class = t.class_json();
        w.write_all(b"{\"class\":")?;
        serde_json::to_writer(&mut *w, &class)?;
        w.write_all(b",\"time-range\":")?;
        serde_json::to_writer(&mut *w, &cell::time_range(t.begin, t.end))?;
        w.write_all(b",\"data\":")?;
        serde_json::to_writer(&mut *w, &t.rows)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]}\n")
}

/// A `freq` table titled `title`: the histogram of the durations `values` (ns) in `bins` bins
/// between `lo` and `hi` (see [`crate::stats::histogram`]), one row `[lower, upper, count]` per
/// bin.
pub fn duration_freq_table(
    title: String,
    values: &[i64],
    bins: usize,
    (lo, hi): (Option<i64>, Option<i64>),
    (begin, end): (i64, i64),
) -> Table {
    let mut t = Table::new("freq", begin, end);
    t.title = Some(title);
    for (lo, hi, n) in crate::stats::histogram(values, bins, lo, hi) {
        t.rows.push(vec![
            cell::duration(lo),
            cell::duration(hi),
            cell::number(n),
        ]);
    }
    t
}

/// Puts histograms with the same bins (`--freq-uniform`) side by side, as lttng-analyses's
/// `--freq-series` does: one table of an anonymous class titled `title`, whose columns are the
/// bounds (`lower`, `upper`, of the class `bound_class`) and one count column per histogram,
/// titled with the histogram's subtitle and with the unit `unit`. `freqs` are tables of rows
/// `[lower, upper, count]`; the bounds are those of the first; a histogram without rows
/// (a single value and no uniform bounds) counts zero everywhere. None without histograms.
pub fn series_table(
    title: &str,
    (lower, upper, bound_class): (&str, &str, &'static str),
    unit: &'static str,
    freqs: &[Table],
) -> Option<Table> {
    let first = freqs
        .iter()
        .find(|t| !t.rows.is_empty())
        .or(freqs.first())?;
    let mut t = Table::new("freq-series", first.begin, first.end);
    t.title = Some(title.to_string());
    let mut cols = vec![
        InlineColumn {
            title: lower.to_string(),
            class: bound_class,
            unit: None,
        },
        InlineColumn {
            title: upper.to_string(),
            class: bound_class,
            unit: None,
        },
    ];
    for f in freqs {
        cols.push(InlineColumn {
            title: f.subtitle().unwrap_or(f.class).to_string(),
            class: "number",
            unit: Some(unit),
        });
    }
    t.inline = Some(cols);
    for (i, r) in first.rows.iter().enumerate() {
        let mut row = vec![r[0].clone(), r[1].clone()];
        for f in freqs {
            row.push(
                f.rows
                    .get(i)
                    .map(|x| x[2].clone())
                    .unwrap_or_else(|| cell::number(0)),
            );
        }
        t.rows.push(row);
    }
    Some(t)
}

/// The `--metadata` document of an analysis.
pub fn metadata_json(m: &Metadata) -> Value {
    let mut classes = Map::new();
    for tc in m.table_classes {
        let cols: Vec<Value> = tc
            .columns
            .iter()
            .map(|c| {
                let mut o = Map::new();
                o.insert("title".into(), json!(c.title));
                o.insert("class".into(), json!(c.class));
                if let Some(u) = c.unit {
                    o.insert("unit".into(), json!(u));
                }
                Value::Object(o)
            })
            .collect();
        classes.insert(
            tc.name.into(),
            json!({"title": tc.title, "column-descriptions": cols}),
        );
    }
    json!({
        "mi-version": {"major": 1, "minor": 0},
        "version": {"major": 0, "minor": 1, "patch": 0, "extra": "tracekit"},
        "title": m.title,
        "description": m.description,
        "authors": ["tracekit developers"],
        "url": "https://github.com/tracekit/tracekit",
        "tags": m.tags,
        "table-classes": Value::Object(classes),
    })
}

/// An error document (`{"error-message": ...}`), as LAMI specifies.
pub fn error_json(msg: &str) -> Value {
    json!({"error-message": msg})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_equals_document() {
        let mut t = Table::new("per-tid", 1, 2);
        t.title = Some("T".into());
        t.rows.push(vec![cell::number(3), cell::unknown()]);
        let u = Table::new("total", 1, 2);
        let mut buf = Vec::new();
        write_results(&mut buf, &[t.clone(), u.clone()]).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v, results_json(&[t, u]));
    }
}
