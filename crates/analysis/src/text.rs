//! Text output: each result table as a readable table.

use crate::lami::{Cell as LamiCell, Metadata, Table};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table as Ct};

pub use pipeline::time::format_utc as fmt_ts;

fn fmt_duration(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else {
        format!("{:.3} µs", v / 1e3)
    }
}

/// Text of one LAMI cell, and whether it is aligned right (numbers).
pub(crate) fn cell_text(c: &LamiCell) -> (String, bool) {
    // A number that is not finite is `null` in JSON, and 0 here.
    let num = |v: Option<f64>| v.unwrap_or(0.0);
    match c {
        LamiCell::Null => (String::new(), false),
        LamiCell::Process { name, tid, pid } => match pid {
            Some(p) if *p >= 0 => (format!("{name} ({p}, TID {tid})"), false),
            _ => (format!("{name} ({tid})"), false),
        },
        LamiCell::Number(n) => (n.to_string(), true),
        LamiCell::Ratio(_) => (format!("{:.2} %", num(c.value_f64()) * 100.0), true),
        LamiCell::Duration(_) => (fmt_duration(num(c.value_f64())), true),
        LamiCell::Timestamp(v) => (fmt_ts(*v), false),
        LamiCell::TimeRange(b, e) => (format!("[{}, {}]", fmt_ts(*b), fmt_ts(*e)), false),
        LamiCell::Cpu(id) => (format!("CPU {id}"), true),
        LamiCell::Irq { nr, name, .. } => (format!("{name} ({nr})"), false),
        LamiCell::Syscall(s) => (s.to_string(), false),
        LamiCell::String(s) | LamiCell::Disk(s) | LamiCell::Netif(s) | LamiCell::Path(s) => {
            (s.to_string(), false)
        }
        LamiCell::Fd(fd) => (fd.to_string(), true),
        LamiCell::Size(v) => (format!("{v} B"), true),
        LamiCell::Bool(v) => (
            match v {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => String::new(),
            },
            false,
        ),
        LamiCell::Unknown => ("?".into(), true),
        LamiCell::Empty => (String::new(), false),
    }
}

/// Width, in characters, of the bars of top tables.
pub(crate) const BAR_WIDTH: usize = 24;
/// Width, in characters, of the longest bar of a histogram.
pub(crate) const HIST_WIDTH: usize = 48;

/// A horizontal bar of `frac` (clamped to 0..=1) of `width` characters, in eighths of a
/// character (Unicode block elements), padded with spaces to `width`.
pub(crate) fn bar(frac: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let frac = if frac.is_finite() {
        frac.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (frac * (width * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    let part = eighths % 8;
    if part != 0 {
        s.push(PARTS[part]);
    }
    let n = s.chars().count();
    s.extend(std::iter::repeat_n(' ', width - n));
    s
}

/// Value of a numeric LAMI cell (number, ratio, duration, size).
fn cell_value(c: &LamiCell) -> Option<f64> {
    match c {
        LamiCell::Number(_) | LamiCell::Ratio(_) | LamiCell::Duration(_) | LamiCell::Size(_) => {
            c.value_f64()
        }
        _ => None,
    }
}

/// Top tables that get a bar column: the table classes, and the column the bar shows (the first
/// ratio column, else the first number, size or duration column after the first).
const BAR_TABLES: &[&str] = &[
    // cputop
    "per-process",
    "per-cpu",
    // memtop
    "allocd",
    "freed",
    // irqstats
    "hard-stats",
    "soft-stats",
    // iousagetop
    "per-process-top",
    "per-file-top",
    "per-process-top-block",
    "per-disk-top-sector",
    "per-disk-top-request",
    "per-disk-top-rps",
    "per-netif-top",
];

fn bar_column(tc: &crate::lami::TableClass) -> Option<usize> {
    if !BAR_TABLES.contains(&tc.name) {
        return None;
    }
    tc.columns
        .iter()
        .position(|c| c.class == "ratio")
        .or_else(|| {
            tc.columns
                .iter()
                .skip(1)
                .position(|c| matches!(c.class, "number" | "size" | "duration"))
                .map(|i| i + 1)
        })
}

/// A histogram: one line per bin (`[lower, upper)`, count, bar scaled to the largest count).
/// `rows` are LAMI rows `[lower bound, upper bound, count]`.
pub(crate) fn histogram(title: &str, count_title: &str, rows: &[Vec<LamiCell>]) -> String {
    let bins: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            let lo = r.first().map(|c| cell_text(c).0).unwrap_or_default();
            let hi = r.get(1).map(|c| cell_text(c).0).unwrap_or_default();
            let n = r.get(2).and_then(cell_value).unwrap_or(0.0);
            (format!("[{lo}, {hi})"), n)
        })
        .collect();
    let max = bins.iter().map(|b| b.1).fold(0.0, f64::max);
    let rw = bins.iter().map(|b| b.0.chars().count()).max().unwrap_or(0);
    let cw = bins
        .iter()
        .map(|b| b.1.to_string().len())
        .max()
        .unwrap_or(0)
        .max(count_title.chars().count());
    let mut out = format!("{title:<rw$}  {count_title:>cw$}\n");
    for (range, n) in &bins {
        let frac = if max > 0.0 { n / max } else { 0.0 };
        let line = format!("{range:<rw$}  {n:>cw$}  {}", bar(frac, HIST_WIDTH));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Renders result tables: top tables with a bar column, frequency distributions as histograms.
#[cfg(test)]
pub(crate) fn render(meta: &Metadata, tables: &[Table]) -> String {
    render_with(meta, tables, true)
}

/// Renders result tables; without `charts`, as plain tables (no bar column, no histograms).
pub fn render_with(meta: &Metadata, tables: &[Table], charts: bool) -> String {
    let mut out = String::new();
    if let Some(t) = tables.first() {
        out.push_str(&format!(
            "Timerange: [{}, {}]\n",
            fmt_ts(t.begin),
            fmt_ts(t.end)
        ));
    }
    for t in tables {
        if let Some(cols) = &t.inline {
            out.push('\n');
            out.push_str(t.title.as_deref().unwrap_or(""));
            out.push('\n');
            out.push_str(&plain_table(
                cols.iter().map(|c| c.title.as_str()).collect(),
                &t.rows,
            ));
            continue;
        }
        let Some(tc) = meta.table_classes.iter().find(|c| c.name == t.class) else {
            continue;
        };
        out.push('\n');
        out.push_str(t.title.as_deref().unwrap_or(tc.title));
        out.push('\n');
        if charts && matches!(tc.name, "freq" | "freq_duration") && tc.columns.len() == 3 {
            let range = tc.columns[0]
                .title
                .strip_suffix(" (lower bound)")
                .unwrap_or("Duration");
            out.push_str(&histogram(range, tc.columns[2].title, &t.rows));
            continue;
        }
        let bar_col = bar_column(tc).filter(|_| charts);
        // Ratios are shown against 100 %, other values against the column's largest.
        let scale = bar_col.map(|i| {
            if tc.columns[i].class == "ratio" {
                1.0
            } else {
                t.rows
                    .iter()
                    .filter_map(|r| r.get(i).and_then(cell_value))
                    .fold(0.0, f64::max)
            }
        });
        let mut ct = Ct::new();
        ct.load_preset(UTF8_FULL_CONDENSED);
        let mut header: Vec<&str> = tc.columns.iter().map(|c| c.title).collect();
        if bar_col.is_some() {
            header.push("");
        }
        ct.set_header(header);
        for r in &t.rows {
            let mut cells: Vec<Cell> = r
                .iter()
                .map(|c| {
                    let (s, right) = cell_text(c);
                    let cell = Cell::new(s);
                    if right {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                })
                .collect();
            if let (Some(i), Some(max)) = (bar_col, scale) {
                let v = r.get(i).and_then(cell_value).unwrap_or(0.0);
                let frac = if max > 0.0 { v / max } else { 0.0 };
                cells.push(Cell::new(bar(frac, BAR_WIDTH)));
            }
            ct.add_row(cells);
        }
        out.push_str(&ct.to_string());
        out.push('\n');
    }
    out
}

/// A table without bars: `header`, then one line per row.
fn plain_table(header: Vec<&str>, rows: &[Vec<LamiCell>]) -> String {
    let mut ct = Ct::new();
    ct.load_preset(UTF8_FULL_CONDENSED);
    ct.set_header(header);
    for r in rows {
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
    let mut s = ct.to_string();
    s.push('\n');
    s
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

    #[test]
    fn bars() {
        use super::bar;
        assert_eq!(bar(1.0, 4), "████");
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(0.5, 4), "██  ");
        // 1/32 of 4 characters: one eighth.
        assert_eq!(bar(1.0 / 32.0, 4), "▏   ");
        assert_eq!(bar(0.75 + 3.0 / 32.0, 4), "███▍");
        assert_eq!(bar(2.0, 3), "███");
        assert_eq!(bar(f64::NAN, 2), "  ");
        for i in 0..=64 {
            assert_eq!(bar(f64::from(i) / 64.0, 8).chars().count(), 8);
        }
    }

    #[test]
    fn histogram_and_bar_column() {
        use crate::lami::cell;
        use crate::lami::Table;
        let mut t = Table::new("freq", 0, 1_000);
        for (lo, n) in [(0.0, 2u64), (1000.0, 8), (2000.0, 0), (3000.0, 4)] {
            t.rows.push(vec![
                cell::duration(lo),
                cell::duration(lo + 1000.0),
                cell::number(n),
            ]);
        }
        let s = super::render(&crate::irq::METADATA, &[t]);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[2],
            "Interrupt handler duration frequency distribution"
        );
        assert!(lines[3].starts_with("Duration "), "{s}");
        assert!(lines[3].ends_with("Interrupt count"), "{s}");
        let bar_of = |l: &str| l.chars().filter(|&c| c == '█').count();
        assert!(lines[4].starts_with("[0.000 µs, 1.000 µs)"), "{s}");
        assert_eq!(bar_of(lines[5]), super::HIST_WIDTH);
        assert_eq!(bar_of(lines[4]), super::HIST_WIDTH / 4);
        assert_eq!(bar_of(lines[6]), 0);
        assert!(lines[6].ends_with(" 0"), "{s}");
        assert_eq!(bar_of(lines[7]), super::HIST_WIDTH / 2);

        // cputop: the usage ratio against 100 %.
        let mut t = Table::new("per-cpu", 0, 1_000);
        t.rows.push(vec![cell::cpu(0), cell::ratio(0.5)]);
        t.rows.push(vec![cell::cpu(1), cell::ratio(0.25)]);
        let plain = super::render_with(&crate::cputop::METADATA, std::slice::from_ref(&t), false);
        assert!(!plain.contains('█'), "{plain}");
        let s = super::render(&crate::cputop::METADATA, &[t]);
        assert!(
            s.contains(&format!("50.00 % ┆ {} ", super::bar(0.5, super::BAR_WIDTH))),
            "{s}"
        );
        assert!(s.contains(&"█".repeat(super::BAR_WIDTH / 4)), "{s}");
    }
}
