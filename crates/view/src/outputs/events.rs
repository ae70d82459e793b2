//! Events table: every event in time order (the order of `tracekit print`), paged by index
//! or time. A page is read from the trace files from the nearest checkpoint of the model
//! before it, so no request reads more than a few thousand events before its first line.

use std::sync::Arc;

use regex::Regex;

use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's event table provider).
pub const ID: &str =
    "org.eclipse.tracecompass.internal.provisional.tmf.core.model.events.TmfEventTableDataProvider";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "Events Table",
        description: "Every event in time order, with its fields as babeltrace2 prints them",
        kind: ProviderType::Table,
        query_parameters: &[
            (
                "table_search_expressions",
                "column id → regular expression: matching lines are tagged",
            ),
            (
                "table_search_direction",
                "NEXT or PREVIOUS: the page starts at the first match from the index on (or \
                 the last before it)",
            ),
        ],
        make: |m| Box::new(Events { model: m }),
    }
}

/// The columns: (id, name, description, type).
pub const COLUMNS: &[(i64, &str, &str, &str)] = &[
    (
        0,
        "Timestamp",
        "Time of day, as tracekit print writes it",
        "TIMESTAMP",
    ),
    (1, "Host", "The trace's host name (or its name)", "STRING"),
    (2, "CPU", "The CPU that recorded the event", "NUMBER"),
    (3, "Event type", "The event's name", "STRING"),
    (
        4,
        "Contents",
        "The event's fields, as tracekit print (babeltrace2) writes them",
        "STRING",
    ),
    (
        5,
        "Timestamp ns",
        "Time in nanoseconds on the experiment's time line",
        "NUMBER",
    ),
];

/// How many events a search reads at most before giving up.
const SEARCH_LIMIT: u64 = 5_000_000;

struct Events {
    model: Arc<Model>,
}

impl Output for Events {
    fn id(&self) -> &'static str {
        ID
    }
    fn model(&self) -> &Model {
        &self.model
    }

    fn columns(&self, _p: &Params) -> Result<Vec<ColumnHeaderEntry>, ApiError> {
        Ok(COLUMNS
            .iter()
            .map(|(id, name, d, t)| ColumnHeaderEntry {
                id: *id,
                name: name.to_string(),
                description: d.to_string(),
                kind: t.to_string(),
            })
            .collect())
    }

    fn lines(&self, p: &Params) -> Result<TableModel, ApiError> {
        let size = self.model.timeline.events;
        let count = p
            .table_count()?
            .ok_or_else(|| ApiError::param("requested_table_count", "missing"))?;
        let all: Vec<i64> = COLUMNS.iter().map(|c| c.0).collect();
        let columns = p.column_ids(&all)?;
        let search = search_expressions(p)?;
        let direction = match p.string("table_search_direction")? {
            None => None,
            Some("NEXT") => Some(true),
            Some("PREVIOUS") => Some(false),
            Some(d) => {
                return Err(ApiError::param(
                    "table_search_direction",
                    format!("{d:?}: expected NEXT or PREVIOUS"),
                ))
            }
        };
        let mut index = match (
            p.uint("requested_table_index")?,
            p.int_list("requested_times")?,
        ) {
            (Some(i), _) => i,
            (None, Some(t)) if !t.is_empty() => self.index_at(t[0]),
            (None, _) => {
                return Err(ApiError::param(
                    "requested_table_index",
                    "missing (or give requested_times: [ns])",
                ))
            }
        };
        if let (Some(forward), false) = (direction, search.is_empty()) {
            match self.find(index, forward, &search) {
                Some(i) => index = i,
                None => {
                    return Ok(TableModel {
                        low_index: index.min(size),
                        size,
                        column_ids: columns,
                        lines: Vec::new(),
                    })
                }
            }
        }
        let mut lines = Vec::new();
        self.read_from(index, |i, row| {
            if lines.len() as u64 >= count {
                return false;
            }
            let matched = !search.is_empty() && row.matches(&search);
            lines.push(Line {
                index: i,
                cells: columns
                    .iter()
                    .map(|c| Cell {
                        content: row.cell(*c),
                    })
                    .collect(),
                tags: matched.then_some(SEARCH_MATCH_TAG),
            });
            true
        });
        Ok(TableModel {
            low_index: index.min(size),
            size,
            column_ids: columns,
            lines,
        })
    }
}

/// One event's cells.
struct RowText {
    ts: i64,
    time: String,
    host: String,
    cpu: String,
    name: String,
    contents: String,
}

impl RowText {
    fn cell(&self, c: i64) -> String {
        match c {
            0 => self.time.clone(),
            1 => self.host.clone(),
            2 => self.cpu.clone(),
            3 => self.name.clone(),
            4 => self.contents.clone(),
            _ => self.ts.to_string(),
        }
    }

    fn matches(&self, search: &[(i64, Regex)]) -> bool {
        search.iter().all(|(c, re)| re.is_match(&self.cell(*c)))
    }
}

fn search_expressions(p: &Params) -> Result<Vec<(i64, Regex)>, ApiError> {
    const P: &str = "table_search_expressions";
    let Some(v) = p.get(P) else {
        return Ok(Vec::new());
    };
    let serde_json::Value::Object(m) = v else {
        return Err(ApiError::param(
            P,
            "expected an object {column id: regular expression}",
        ));
    };
    let mut out = Vec::new();
    for (k, v) in m {
        let c: i64 = k
            .parse()
            .ok()
            .filter(|c| COLUMNS.iter().any(|k| k.0 == *c))
            .ok_or_else(|| ApiError::param(format!("{P}.{k}"), "no such column"))?;
        let serde_json::Value::String(s) = v else {
            return Err(ApiError::param(format!("{P}.{k}"), "expected a string"));
        };
        let re = regex::RegexBuilder::new(s)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| ApiError::param(format!("{P}.{k}"), e.to_string()))?;
        out.push((c, re));
    }
    Ok(out)
}

impl Events {
    /// The index of the first event at or after `t` (the table's size when none).
    fn index_at(&self, t: i64) -> u64 {
        let cps = &self.model.timeline.checkpoints;
        // The last checkpoint before t, then count events before t from there.
        let k = cps.partition_point(|c| c.ts < t);
        let from = if k == 0 { 0 } else { cps[k - 1].index };
        let mut found = self.model.timeline.events;
        self.read_from(from, |i, row| {
            if row.ts >= t {
                found = i;
                return false;
            }
            true
        });
        found
    }

    /// The first matching index from `index` on (forward) or the last at or before it.
    fn find(&self, index: u64, forward: bool, search: &[(i64, Regex)]) -> Option<u64> {
        let mut found = None;
        if forward {
            let mut read = 0u64;
            self.read_from(index, |i, row| {
                read += 1;
                if row.matches(search) {
                    found = Some(i);
                    return false;
                }
                read < SEARCH_LIMIT
            });
            return found;
        }
        // Backwards: window by window between checkpoints, the last match of each.
        let cps = &self.model.timeline.checkpoints;
        let mut hi = index.min(self.model.timeline.events.saturating_sub(1));
        let mut read = 0u64;
        loop {
            let k = cps.partition_point(|c| c.index <= hi);
            let lo = if k == 0 { 0 } else { cps[k - 1].index };
            self.read_from(lo, |i, row| {
                if i > hi {
                    return false;
                }
                read += 1;
                if row.matches(search) {
                    found = Some(i);
                }
                true
            });
            if found.is_some() || lo == 0 || read >= SEARCH_LIMIT {
                return found;
            }
            hi = lo - 1;
        }
    }

    /// Calls `f` with each event from index `index` on, until it returns false or the
    /// events end.
    fn read_from(&self, index: u64, mut f: impl FnMut(u64, &RowText) -> bool) {
        let m = &self.model;
        let cps = &m.timeline.checkpoints;
        let k = cps.partition_point(|c| c.index <= index);
        let mut opts = m.read_options();
        // From the checkpoint: the read starts at its time, where `skip` events come first.
        let mut at = match k {
            0 => 0u64,
            _ => {
                let c = cps[k - 1];
                opts.begin = Some(c.ts);
                c.index - c.skip
            }
        };
        let mut events = pipeline::RangeEvents::new(&m.traces, &opts);
        let mut printer = text::TextPrinter::new(text::TimeFormatter::new(false));
        let mut times = text::TimeFormatter::new(false);
        let mut buf = text::TextBuf::with_capacity(1024);
        while let Some((ev, ts)) = events.next() {
            if at < index {
                at += 1;
                continue;
            }
            buf.clear();
            printer.event(&mut buf, &ev, i64::MIN);
            let line = String::from_utf8_lossy(&buf.text_mut()[..]).into_owned();
            let name = ev.name().to_string();
            let contents = contents_of(&line, &name);
            let mut t = Vec::with_capacity(24);
            times.write_time(&mut t, ts);
            let trace = ev.trace();
            let row = RowText {
                ts,
                time: String::from_utf8_lossy(&t).into_owned(),
                host: trace
                    .hostname()
                    .map(str::to_string)
                    .unwrap_or_else(|| trace.path.display().to_string()),
                cpu: kernel::recorded_cpu(&ev)
                    .map(|c| c.to_string())
                    .unwrap_or_default(),
                name,
                contents,
            };
            if !f(at, &row) {
                return;
            }
            at += 1;
        }
    }
}

/// The fields of a printed line: what follows `NAME: `, without the newline.
fn contents_of(line: &str, name: &str) -> String {
    let pat = format!("{name}: ");
    let rest = match line.find(&pat) {
        Some(i) => &line[i + pat.len()..],
        None => line,
    };
    rest.trim_end_matches('\n').to_string()
}
