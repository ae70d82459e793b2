//! Text output: each result table as a readable table.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table as Ct};
use serde_json::Value;

use crate::lami::{Metadata, Table};

/// Formats a nanosecond timestamp as `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` (UTC).
pub fn fmt_ts(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let sub = ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{sub:09}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

fn fmt_duration(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else {
        format!("{:.3} µs", v / 1e3)
    }
}

/// Text of one LAMI cell.
pub fn cell_text(c: &Value) -> (String, bool) {
    let class = c["class"].as_str().unwrap_or("");
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    if c.is_null() {
        return (String::new(), false);
    }
    match class {
        "process" => {
            let pid = c.get("pid").and_then(|p| p.as_i64());
            let tid = c["tid"].as_i64().unwrap_or(0);
            let name = c["name"].as_str().unwrap_or("");
            match pid {
                Some(p) if p >= 0 => (format!("{name} ({p}, TID {tid})"), false),
                _ => (format!("{name} ({tid})"), false),
            }
        }
        "number" => (c["value"].to_string(), true),
        "ratio" => (format!("{:.2} %", num(&c["value"]) * 100.0), true),
        "duration" => (fmt_duration(num(&c["value"])), true),
        "timestamp" => (fmt_ts(c["value"].as_i64().unwrap_or(0)), false),
        "time-range" => (
            format!(
                "[{}, {}]",
                fmt_ts(c["begin"]["value"].as_i64().unwrap_or(0)),
                fmt_ts(c["end"]["value"].as_i64().unwrap_or(0))
            ),
            false,
        ),
        "cpu" => (format!("CPU {}", c["id"]), true),
        "syscall" => (c["name"].as_str().unwrap_or("").to_string(), false),
        "irq" => {
            let name = c["name"].as_str().unwrap_or("");
            (format!("{name} ({})", c["nr"]), false)
        }
        "string" => (c["value"].as_str().unwrap_or("").to_string(), false),
        "disk" | "netif" => (c["name"].as_str().unwrap_or("").to_string(), false),
        "path" => (c["path"].as_str().unwrap_or("").to_string(), false),
        "fd" => (c["fd"].to_string(), true),
        "size" => (format!("{} B", c["value"]), true),
        "bool" => (
            match c["value"].as_bool() {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => String::new(),
            },
            false,
        ),
        "unknown" => ("?".into(), true),
        "empty" => (String::new(), false),
        _ => (c.to_string(), false),
    }
}

/// Renders result tables.
pub fn render(meta: &Metadata, tables: &[Table]) -> String {
    let mut out = String::new();
    if let Some(t) = tables.first() {
        out.push_str(&format!(
            "Timerange: [{}, {}]\n",
            fmt_ts(t.begin),
            fmt_ts(t.end)
        ));
    }
    for t in tables {
        let Some(tc) = meta.table_classes.iter().find(|c| c.name == t.class) else {
            continue;
        };
        out.push('\n');
        out.push_str(t.title.as_deref().unwrap_or(tc.title));
        out.push('\n');
        let mut ct = Ct::new();
        ct.load_preset(UTF8_FULL_CONDENSED);
        ct.set_header(tc.columns.iter().map(|c| c.title));
        for r in &t.rows {
            ct.add_row(r.iter().map(|c| {
                let (s, right) = cell_text(c);
                let cell = Cell::new(s);
                if right {
                    cell.set_alignment(CellAlignment::Right)
                } else {
                    cell
                }
            }));
        }
        out.push_str(&ct.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps() {
        assert_eq!(
            super::fmt_ts(1_457_113_582_794_565_804),
            "2016-03-04 17:46:22.794565804"
        );
    }
}
