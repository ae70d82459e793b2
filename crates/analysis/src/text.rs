//! Text output: each result table as a readable table.

use crate::lami::{Cell as LamiCell, Metadata, Table};
use unicode_width::UnicodeWidthStr;

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

/// Text of one LAMI cell, as the text tables write it, and whether it is aligned right
/// (numbers).
pub fn cell_text(c: &LamiCell) -> (String, bool) {
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
pub(crate) fn histogram(
    title: &str,
    count_title: &str,
    rows: &[Vec<LamiCell>],
    width: Option<usize>,
) -> String {
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
    // The bars narrow (down to the bar columns' narrowest) to fit the width.
    let bar_w = match width {
        Some(w) if rw + cw + 4 + HIST_WIDTH > w => w.saturating_sub(rw + cw + 4).max(fit::BAR_MIN),
        _ => HIST_WIDTH,
    };
    let mut out = format!("{title:<rw$}  {count_title:>cw$}\n");
    for (range, n) in &bins {
        let frac = if max > 0.0 { n / max } else { 0.0 };
        let line = format!("{range:<rw$}  {n:>cw$}  {}", bar(frac, bar_w));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// How result tables are laid out as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// Top tables get a bar column and frequency distributions are drawn as histograms
    /// (`--no-charts` turns both off: plain tables).
    pub charts: bool,
    /// The width, in terminal columns, that tables and histograms are fitted to (see
    /// [`render_text`]); `None`: no limit, every cell whole on one line.
    pub width: Option<usize>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            charts: true,
            width: None,
        }
    }
}

/// Renders result tables: top tables with a bar column, frequency distributions as histograms.
#[cfg(test)]
pub(crate) fn render(meta: &Metadata, tables: &[Table]) -> String {
    render_text(meta, tables, &TextOptions::default())
}

/// Renders result tables without a width limit; without `charts`, as plain tables (no bar
/// column, no histograms).
pub fn render_with(meta: &Metadata, tables: &[Table], charts: bool) -> String {
    render_text(
        meta,
        tables,
        &TextOptions {
            charts,
            width: None,
        },
    )
}

/// Renders result tables as `opts` says. With a width, a table wider than it is fitted (see
/// [`fit`]); a table that fits is drawn as without a width. The values themselves are
/// those of the tables: only their text is cut or wrapped (`--mi` keeps every value).
pub fn render_text(meta: &Metadata, tables: &[Table], opts: &TextOptions) -> String {
    let mut out = String::new();
    if let Some(t) = tables.first() {
        let line = format!("Timerange: [{}, {}]", fmt_ts(t.begin), fmt_ts(t.end));
        match opts.width {
            Some(w) if line.len() > w => out.push_str(&fit::wrap_list(&line, w)),
            _ => out.push_str(&line),
        }
        out.push('\n');
    }
    for t in tables {
        if let Some(cols) = &t.inline {
            out.push('\n');
            push_title(&mut out, t.title.as_deref().unwrap_or(""), opts.width);
            let cols = cols
                .iter()
                .enumerate()
                .map(|(i, c)| fit::Col::new(&c.title, c.class, &t.rows, i))
                .collect();
            out.push_str(&fit::table(cols, None, opts.width, one_day(t).as_deref()));
            continue;
        }
        let Some(tc) = meta.table_classes.iter().find(|c| c.name == t.class) else {
            continue;
        };
        out.push('\n');
        push_title(&mut out, t.title.as_deref().unwrap_or(tc.title), opts.width);
        if opts.charts && matches!(tc.name, "freq" | "freq_duration") && tc.columns.len() == 3 {
            let range = tc.columns[0]
                .title
                .strip_suffix(" (lower bound)")
                .unwrap_or("Duration");
            out.push_str(&histogram(range, tc.columns[2].title, &t.rows, opts.width));
            continue;
        }
        let bar_col = bar_column(tc).filter(|_| opts.charts);
        // Ratios are shown against 100 %, other values against the column's largest.
        let bar = bar_col.map(|i| {
            let max = if tc.columns[i].class == "ratio" {
                1.0
            } else {
                t.rows
                    .iter()
                    .filter_map(|r| r.get(i).and_then(cell_value))
                    .fold(0.0, f64::max)
            };
            let fracs = t
                .rows
                .iter()
                .map(|r| {
                    let v = r.get(i).and_then(cell_value).unwrap_or(0.0);
                    if max > 0.0 {
                        v / max
                    } else {
                        0.0
                    }
                })
                .collect();
            (i, fracs)
        });
        let cols = tc
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| fit::Col::new(c.title, c.class, &t.rows, i))
            .collect();
        out.push_str(&fit::table(cols, bar, opts.width, one_day(t).as_deref()));
    }
    out
}

/// The date (`YYYY-MM-DD`) of the range `t` covers, if it lies within one day.
fn one_day(t: &Table) -> Option<String> {
    let (b, e) = (fmt_ts(t.begin), fmt_ts(t.end));
    (b.get(..10)? == e.get(..10)?).then(|| b[..10].to_string())
}

/// A table's title, wrapped at spaces when wider than `width`.
fn push_title(out: &mut String, title: &str, width: Option<usize>) {
    match width {
        Some(w) if UnicodeWidthStr::width(title) > w => out.push_str(&fit::wrap(title, w, None)),
        _ => out.push_str(title),
    }
    out.push('\n');
}

/// Fitting a table to a width, as a reader expects of a terminal table:
/// - a table that fits is drawn whole, each cell on one line, as without a width;
/// - values that are numbers, durations, sizes, timestamps, CPUs, descriptors are never cut
///   or wrapped: their column keeps the width of its widest value;
/// - otherwise columns narrow, each only as far as needed, in this order: the titles of
///   those number columns wrap; the bar column narrows (down to [`BAR_MIN`](fit::BAR_MIN)); the widest
///   text columns shrink, to one width (a column narrower than that keeps its own);
/// - list cells (priorities `[20, -2]`, return values `{'success': 3, 'ENOENT': 1}`, file
///   descriptor owners) show whole items, `, `-separated, on at most [`LIST_LINES`](fit::LIST_LINES) lines,
///   and end with `… and N more` when items are left out;
/// - other text (processes, paths, time ranges, names) wraps: at spaces, after `/` in paths,
///   after the comma of a time range; nothing is left out;
/// - timestamps and time ranges lose their date when all are of the one day the table
///   covers (the `Timerange` line above says which), as lttng-analyses' text shows them;
/// - a table whose columns do not fit even at their narrowest loses its bar column; if they
///   still do not fit, it is drawn as several tables, each repeating the first column (what
///   the rows are), the columns spread evenly between them.
///
/// The narrowest a column goes: its widest value for numbers and the like (or the longest
/// word of its title), the width of one item of each row for lists (at most 40), a
/// timestamp for time ranges, and [`TEXT_MIN`](fit::TEXT_MIN) (or less when all its texts are narrower)
/// for text.
pub mod fit {
    use super::{bar, cell_text, LamiCell, BAR_WIDTH};
    use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table as Ct};
    use textwrap::core::Word;
    use textwrap::{WordSeparator, WordSplitter};
    use unicode_width::UnicodeWidthStr;

    /// The narrowest a bar column goes.
    pub const BAR_MIN: usize = 8;
    /// The narrowest a text column goes (unless all its texts are narrower).
    pub const TEXT_MIN: usize = 16;
    /// Lines a list cell takes at most.
    pub const LIST_LINES: usize = 2;
    /// The width of a list's widest first item that a list column keeps at least (a longer
    /// first item wraps).
    const LIST_ITEM_MAX: usize = 40;

    /// How the cells of a column are fitted.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        /// Never cut nor wrapped (numbers, durations, CPUs, …).
        Fixed,
        /// A timestamp: never cut nor wrapped (its date left out as [`table`] says).
        Time,
        /// Wrapped at spaces.
        Text,
        /// Wrapped after `/` (and at spaces).
        Path,
        /// A time range `[begin, end]`: wrapped after its comma.
        Range,
        /// A list in brackets, `[a, b]` or `{a, b}`, items separated by `, `.
        Bracketed,
        /// lttng-analyses' file descriptor owners, `fd 3 in bash (12) fd 4 in cat (13) `.
        FdOwners,
    }

    /// A column to fit: its title, how its cells are fitted, and its cells' texts (with
    /// whether each is aligned right).
    #[derive(Debug, Clone)]
    pub struct Col {
        /// The title.
        pub title: String,
        /// How its cells are fitted.
        pub kind: Kind,
        /// Per row, the text and whether it is aligned right.
        pub cells: Vec<(String, bool)>,
    }

    impl Col {
        /// Column `i` of `rows`, titled `title`, of LAMI class `class`.
        pub(crate) fn new(title: &str, class: &str, rows: &[Vec<LamiCell>], i: usize) -> Col {
            let cells: Vec<(String, bool)> = rows
                .iter()
                .map(|r| r.get(i).map(cell_text).unwrap_or_default())
                .collect();
            let kind = match class {
                "time-range" => Kind::Range,
                "timestamp" => Kind::Time,
                "path" => Kind::Path,
                "string" if title == "File descriptor owners" => Kind::FdOwners,
                "string"
                    if !cells.is_empty()
                        && cells.iter().all(|(s, _)| split_bracketed(s).is_some()) =>
                {
                    Kind::Bracketed
                }
                "process" | "irq" | "syscall" | "string" | "disk" | "netif" => Kind::Text,
                _ => Kind::Fixed,
            };
            Col {
                title: title.to_string(),
                kind,
                cells,
            }
        }

        /// Whether its values are never cut nor wrapped.
        fn fixed(&self) -> bool {
            matches!(self.kind, Kind::Fixed | Kind::Time)
        }

        /// The width of its title and widest cell.
        fn natural(&self) -> usize {
            self.cells
                .iter()
                .map(|(s, _)| width(s))
                .chain([width(&self.title)])
                .max()
                .unwrap_or(0)
        }

        /// The narrowest it goes.
        fn floor(&self) -> usize {
            let word = self
                .title
                .split(' ')
                .map(UnicodeWidthStr::width)
                .max()
                .unwrap_or(0);
            let widest =
                |f: &dyn Fn(&str) -> usize| self.cells.iter().map(|(s, _)| f(s)).max().unwrap_or(0);
            let floor = match self.kind {
                Kind::Fixed | Kind::Time => widest(&width),
                Kind::Range => widest(&|s| s.split(", ").map(width).max().unwrap_or(0) + 1),
                Kind::Text | Kind::Path => TEXT_MIN,
                Kind::Bracketed | Kind::FdOwners => {
                    let first = widest(&|s| match items(self.kind, s) {
                        Some((open, items, _)) => {
                            width(open) + items.first().map_or(0, |i| width(i)) + 1
                        }
                        None => width(s),
                    });
                    first.clamp(TEXT_MIN, LIST_ITEM_MAX)
                }
            };
            let floor = floor.max(word);
            if self.fixed() {
                floor
            } else {
                floor.min(self.natural())
            }
        }

        /// Cell `row` fitted to `w` columns (lines separated by `\n`).
        fn fitted(&self, row: usize, w: usize) -> String {
            let s = &self.cells[row].0;
            match self.kind {
                Kind::Fixed | Kind::Time => s.clone(),
                Kind::Text => wrap(s, w, None),
                Kind::Path => wrap(s, w, Some(path_words)),
                Kind::Range => wrap(s, w, Some(list_words)),
                Kind::Bracketed | Kind::FdOwners => list(self.kind, s, w),
            }
        }
    }

    /// Display width of `s` (its widest line), as the table drawing measures it.
    fn width(s: &str) -> usize {
        s.split('\n').map(UnicodeWidthStr::width).max().unwrap_or(0)
    }

    /// Draws a table of `cols`, with a bar column after the others when `bar` says which
    /// column it shows and the bar's fraction per row, fitted to `width` as the [module
    /// documentation](self) says. `day` is the date (`YYYY-MM-DD`) of the range the table
    /// covers when it lies within one day: a table that does not fit then shows its
    /// timestamps and time ranges without it, as lttng-analyses' text does, when all of
    /// them are of that day.
    pub fn table(
        mut cols: Vec<Col>,
        bar: Option<(usize, Vec<f64>)>,
        width: Option<usize>,
        day: Option<&str>,
    ) -> String {
        let mut nat: Vec<usize> = cols.iter().map(Col::natural).collect();
        let bar_extra = if bar.is_some() { BAR_WIDTH + 3 } else { 0 };
        let whole = 1 + nat.iter().map(|w| w + 3).sum::<usize>() + bar_extra;
        let width = match width {
            Some(w) if whole > w => w,
            // Fits, or no limit: each cell whole on its line.
            _ => {
                let all: Vec<usize> = (0..cols.len()).collect();
                return draw(&cols, &all, None, bar.as_ref().map(|b| (&b.1, BAR_WIDTH)));
            }
        };
        if let Some(day) = day {
            if without_date(&mut cols, day) {
                nat = cols.iter().map(Col::natural).collect();
            }
        }
        let floors: Vec<usize> = cols.iter().map(Col::floor).collect();
        let mut out = String::new();
        for (block, with_bar) in blocks(&floors, bar.as_ref().map(|b| b.0), width) {
            let with_bar = bar.as_ref().filter(|_| with_bar);
            let n = block.len() + usize::from(with_bar.is_some());
            let avail = width.saturating_sub(3 * n + 1);
            let (widths, bar_w) = shrink(
                &block.iter().map(|&c| nat[c]).collect::<Vec<_>>(),
                &block.iter().map(|&c| floors[c]).collect::<Vec<_>>(),
                &block.iter().map(|&c| cols[c].fixed()).collect::<Vec<_>>(),
                with_bar.is_some(),
                avail,
            );
            out.push_str(&draw(
                &cols,
                &block,
                Some(&widths),
                with_bar.map(|b| (&b.1, bar_w)),
            ));
        }
        out
    }

    /// Takes the date `day` (`YYYY-MM-DD`) out of the timestamps and time ranges of `cols`
    /// if all of them are of that day; whether it did.
    fn without_date(cols: &mut [Col], day: &str) -> bool {
        let prefix = format!("{day} ");
        let range_prefix = format!("[{day} ");
        let mid = format!(", {day} ");
        let of_day = |c: &Col, s: &str| match c.kind {
            Kind::Time => s.starts_with(&prefix),
            Kind::Range => s.starts_with(&range_prefix) && s.matches(&mid).count() == 1,
            _ => true,
        };
        let times = |c: &&mut Col| matches!(c.kind, Kind::Time | Kind::Range);
        let all = cols
            .iter()
            .filter(|c| matches!(c.kind, Kind::Time | Kind::Range))
            .all(|c| c.cells.iter().all(|(s, _)| s.is_empty() || of_day(c, s)));
        if !all || !cols.iter_mut().any(|c| times(&c)) {
            return false;
        }
        for c in cols.iter_mut().filter(times) {
            for (s, _) in &mut c.cells {
                *s = match c.kind {
                    Kind::Time => s.replacen(&prefix, "", 1),
                    _ => s.replacen(&range_prefix, "[", 1).replacen(&mid, ", ", 1),
                };
            }
        }
        true
    }

    /// The tables a table is drawn as, each with its columns and whether it has the bar
    /// column (`bar`: the column the bar shows): one table when its columns fit `width` at
    /// their floors, with the bar if it fits too; else as few tables as needed, each
    /// starting with the first column (what the rows are), the columns spread evenly
    /// between them, the bar with the column it shows if it fits there.
    pub(crate) fn blocks(
        floors: &[usize],
        bar: Option<usize>,
        width: usize,
    ) -> Vec<(Vec<usize>, bool)> {
        let n = floors.len();
        let cost = |c: usize| floors[c] + 3;
        let bar_cost = BAR_MIN + 3;
        let all = 1 + (0..n).map(cost).sum::<usize>();
        if n <= 1 || all <= width {
            return vec![((0..n).collect(), bar.is_some() && all + bar_cost <= width)];
        }
        // Columns 1.. in order, in tables at most `cap` wide (at their floors).
        let split = |cap: usize| {
            let mut out: Vec<Vec<usize>> = Vec::new();
            let mut cur = vec![0];
            let mut used = 1 + cost(0);
            for c in 1..n {
                if cur.len() > 1 && used + cost(c) > cap {
                    out.push(std::mem::replace(&mut cur, vec![0]));
                    used = 1 + cost(0);
                }
                cur.push(c);
                used += cost(c);
            }
            out.push(cur);
            out
        };
        let fewest = split(width).len();
        // The narrowest cap that needs no more tables: the widest of them as narrow as can be.
        let low = 1 + cost(0) + (1..n).map(cost).max().unwrap_or(0);
        let cap = (low..width)
            .find(|&cap| split(cap).len() <= fewest)
            .unwrap_or(width);
        split(cap)
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let used = 1 + b.iter().map(|&c| cost(c)).sum::<usize>();
                let shows = bar.is_some_and(|c| if c == 0 { i == 0 } else { b.contains(&c) });
                (b, shows && used + bar_cost <= width)
            })
            .collect()
    }

    /// Widths of columns of natural widths `nat` and floors `floor` (and of the bar, if
    /// any) that fill at most `avail`, each narrowed only as needed: first the columns of
    /// `fixed` (numbers and the like: only their titles wrap), then the bar, then the others
    /// (their text wraps). Within each group the widest narrow first, to one width. At their
    /// floors when even those do not fit.
    pub(crate) fn shrink(
        nat: &[usize],
        floor: &[usize],
        fixed: &[bool],
        bar: bool,
        avail: usize,
    ) -> (Vec<usize>, usize) {
        let mut widths = nat.to_vec();
        let mut bar_w = if bar { BAR_WIDTH } else { 0 };
        let over = |widths: &[usize], bar_w: usize| {
            (widths.iter().sum::<usize>() + bar_w).saturating_sub(avail)
        };
        for group in [true, false] {
            let excess = over(&widths, bar_w);
            if excess == 0 {
                break;
            }
            if !group && bar {
                bar_w = BAR_WIDTH.saturating_sub(excess).max(BAR_MIN);
            }
            let excess = over(&widths, bar_w);
            let mine: Vec<usize> = (0..nat.len()).filter(|&i| fixed[i] == group).collect();
            let budget = mine
                .iter()
                .map(|&i| widths[i])
                .sum::<usize>()
                .saturating_sub(excess);
            for (i, w) in mine.iter().zip(level(
                &mine.iter().map(|&i| nat[i]).collect::<Vec<_>>(),
                &mine.iter().map(|&i| floor[i]).collect::<Vec<_>>(),
                budget,
            )) {
                widths[*i] = w;
            }
        }
        (widths, bar_w)
    }

    /// Widths of columns of natural widths `nat` and floors `floor` that add up to at most
    /// `budget`: the widest narrowed to one level, the highest that fits (one more column
    /// for the columns at that level, from the left, as the rest of the budget allows).
    fn level(nat: &[usize], floor: &[usize], budget: usize) -> Vec<usize> {
        let at = |level: usize| -> Vec<usize> {
            nat.iter()
                .zip(floor)
                .map(|(&n, &f)| n.min(level).max(f))
                .collect()
        };
        let sum = |level: usize| at(level).iter().sum::<usize>();
        let (mut lo, mut hi) = (0, nat.iter().copied().max().unwrap_or(0));
        if sum(hi) <= budget {
            return nat.to_vec();
        }
        if sum(0) >= budget {
            return at(0);
        }
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if sum(mid) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let mut widths = at(lo);
        let mut spare = budget - widths.iter().sum::<usize>();
        for (w, &n) in widths.iter_mut().zip(nat) {
            if spare > 0 && *w == lo && n > lo {
                *w += 1;
                spare -= 1;
            }
        }
        widths
    }

    /// Draws columns `which` of `cols`: fitted to `widths` if given (else each cell whole),
    /// then the bar column if any (each row's fraction, the bar's width).
    fn draw(
        cols: &[Col],
        which: &[usize],
        widths: Option<&[usize]>,
        bar_col: Option<(&Vec<f64>, usize)>,
    ) -> String {
        let mut ct = Ct::new();
        ct.load_preset(UTF8_FULL_CONDENSED);
        let mut header: Vec<String> = which
            .iter()
            .enumerate()
            .map(|(k, &c)| match widths {
                Some(w) if width(&cols[c].title) > w[k] => wrap(&cols[c].title, w[k], None),
                _ => cols[c].title.clone(),
            })
            .collect();
        if bar_col.is_some() {
            header.push(String::new());
        }
        ct.set_header(header);
        let rows = cols.first().map_or(0, |c| c.cells.len());
        for r in 0..rows {
            let mut cells: Vec<Cell> = which
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    let (s, right) = &cols[c].cells[r];
                    let text = match widths {
                        Some(w) if cols[c].kind == Kind::FdOwners || width(s) > w[k] => {
                            cols[c].fitted(r, w[k])
                        }
                        _ => s.clone(),
                    };
                    let cell = Cell::new(text);
                    if *right {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                })
                .collect();
            if let Some((fracs, w)) = bar_col {
                cells.push(Cell::new(bar(fracs.get(r).copied().unwrap_or(0.0), w)));
            }
            ct.add_row(cells);
        }
        let mut s = ct.to_string();
        s.push('\n');
        s
    }

    /// `s` wrapped to `w` columns (lines joined by `\n`): at spaces, or where `words` cuts
    /// it; a word wider than `w` is broken.
    pub fn wrap(s: &str, w: usize, words: Option<WordsFn>) -> String {
        let opts = textwrap::Options::new(w.max(1))
            .word_separator(match words {
                Some(f) => WordSeparator::Custom(f),
                None => WordSeparator::AsciiSpace,
            })
            .word_splitter(WordSplitter::NoHyphenation)
            .break_words(true);
        textwrap::wrap(s, opts).join("\n")
    }

    /// `s` wrapped to `w` columns after the commas of `, `.
    pub(crate) fn wrap_list(s: &str, w: usize) -> String {
        wrap(s, w, Some(list_words))
    }

    /// How a text is cut into words for wrapping.
    pub type WordsFn = fn(&str) -> Box<dyn Iterator<Item = Word<'_>> + '_>;

    /// Words of a path: each ends after a `/` or a run of spaces.
    fn path_words(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
        Box::new(split_after(line, |b, i| {
            b[i] == b'/' || (b[i] == b' ' && b.get(i + 1) != Some(&b' '))
        }))
    }

    /// Words of a list: each ends after `, `.
    fn list_words(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
        Box::new(split_after(line, |b, i| {
            b[i] == b' ' && i > 0 && b[i - 1] == b','
        }))
    }

    /// `line` cut after each byte `i` where `end(bytes, i)` (always an ASCII byte, so at a
    /// character boundary), as words.
    fn split_after(line: &str, end: fn(&[u8], usize) -> bool) -> impl Iterator<Item = Word<'_>> {
        let b = line.as_bytes();
        let mut start = 0;
        let mut i = 0;
        std::iter::from_fn(move || {
            while i < b.len() {
                i += 1;
                if end(b, i - 1) {
                    let w = Word::from(&line[start..i]);
                    start = i;
                    return Some(w);
                }
            }
            (start < b.len()).then(|| {
                let w = Word::from(&line[start..]);
                start = b.len();
                w
            })
        })
    }

    /// The items of a list cell: its opening and closing text and the items between.
    fn items(kind: Kind, s: &str) -> Option<(&str, Vec<&str>, &str)> {
        match kind {
            Kind::Bracketed => split_bracketed(s),
            Kind::FdOwners => Some(("", split_owners(s), "")),
            _ => None,
        }
    }

    /// `[a, b]` or `{a, b}` as (`[`, the items, `]`): items are separated by `, ` outside
    /// quotes and nested brackets (Python's `repr` of a list or dict). None for other text.
    pub(crate) fn split_bracketed(s: &str) -> Option<(&str, Vec<&str>, &str)> {
        let close = match s.as_bytes().first()? {
            b'[' => b']',
            b'{' => b'}',
            _ => return None,
        };
        if s.len() < 2 || s.as_bytes()[s.len() - 1] != close {
            return None;
        }
        let inner = &s[1..s.len() - 1];
        let b = inner.as_bytes();
        let mut items = Vec::new();
        let (mut depth, mut quote, mut start, mut i) = (0i32, None::<u8>, 0, 0);
        while i < b.len() {
            let c = b[i];
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'\'' | b'"' => quote = Some(c),
                    b'[' | b'{' | b'(' => depth += 1,
                    b']' | b'}' | b')' => depth -= 1,
                    b',' if depth == 0 && b.get(i + 1) == Some(&b' ') => {
                        items.push(&inner[start..i]);
                        start = i + 2;
                        i += 1;
                    }
                    _ => {}
                },
            }
            i += 1;
        }
        if start < inner.len() || !items.is_empty() {
            items.push(&inner[start.min(inner.len())..]);
        }
        Some((&s[..1], items, &s[s.len() - 1..]))
    }

    /// lttng-analyses' file descriptor owners (`fd 3 in bash (12) fd 4 in cat (13) `, each
    /// item ending with a space) as items (`fd 3 in bash (12)`). An item ends at `(PID) `
    /// followed by `fd N in `, so command names with spaces or parentheses stay whole.
    pub(crate) fn split_owners(s: &str) -> Vec<&str> {
        let s = s.trim_end_matches(' ');
        if s.is_empty() {
            return Vec::new();
        }
        let b = s.as_bytes();
        let digits = |x: &[u8]| x.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut items = Vec::new();
        let mut start = 0;
        let mut from = 0;
        while let Some(p) = s[from..].find(") fd ") {
            let at = from + p;
            let before = b[start..at]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let pid = before > 0 && at > start + before && b[at - before - 1] == b'(';
            let rest = &b[at + 5..];
            let fd = digits(rest);
            if pid && fd > 0 && rest[fd..].starts_with(b" in ") {
                items.push(&s[start..=at]);
                start = at + 2;
            }
            from = at + 1;
        }
        items.push(&s[start..]);
        items
    }

    /// A list cell fitted to `w` columns: whole items, `, `-separated, on at most
    /// [`LIST_LINES`] lines, ending with `… and N more` when some are left out (at least one
    /// item is shown, wrapped if wider than `w`).
    pub(crate) fn list(kind: Kind, s: &str, w: usize) -> String {
        let Some((open, items, close)) = items(kind, s).filter(|(_, i, _)| !i.is_empty()) else {
            return wrap(s, w, None);
        };
        let n = items.len();
        let text = |k: usize| {
            let mut t = String::from(open);
            t.push_str(&items[..k].join(", "));
            if k < n {
                t.push_str(&format!(", … and {} more", n - k));
            }
            t.push_str(close);
            t
        };
        let fits = |t: &str| wrap(t, w, Some(list_words)).lines().count() <= LIST_LINES;
        // No more items than the lines hold end to end.
        let mut most = 0;
        let mut used = width(open);
        for it in &items {
            most += 1;
            used += width(it) + 2;
            if used > LIST_LINES * w {
                break;
            }
        }
        (1..=most).rev().map(text).find(|t| fits(t)).map_or_else(
            || wrap(&text(1), w, Some(list_words)),
            |t| wrap(&t, w, Some(list_words)),
        )
    }
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

    /// The widest line of `s`, in columns.
    fn widest(s: &str) -> usize {
        s.lines()
            .map(unicode_width::UnicodeWidthStr::width)
            .max()
            .unwrap_or(0)
    }

    /// `fd N in cmd (PID) ` owners, as lttng-analyses writes them, for `n` descriptors.
    fn owners(n: usize) -> String {
        (0..n)
            .map(|i| format!("fd {} in cat ({}) ", i + 3, 28530 + i))
            .collect()
    }

    /// A per-file I/O table: paths, sizes and owner lists of the given lengths.
    fn per_file(lens: &[usize]) -> crate::lami::Table {
        use crate::lami::cell;
        let mut t = crate::lami::Table::new("per-file-top", 1_000, 2_000);
        for (i, &n) in lens.iter().enumerate() {
            t.rows.push(vec![
                cell::path(&format!(
                    "/var/lib/some/rather/long/directory/name/file-{i}.log"
                )),
                cell::size(1_000_000 * (i as i64 + 1)),
                cell::string(owners(n)),
            ]);
        }
        t
    }

    /// `(shown, N)` of a fitted owners cell: the items shown and the `… and N more`.
    fn shown_and_more(cell: &str) -> (usize, usize) {
        let shown = cell.matches("fd ").count();
        let more = cell
            .split("… and ")
            .nth(1)
            .map_or(0, |r| r.split(' ').next().unwrap().parse().unwrap());
        (shown, more)
    }

    #[test]
    fn owners_split_at_item_boundaries() {
        use super::fit::split_owners;
        assert_eq!(
            split_owners("fd 3 in bash (12) fd 4 in cat (13) "),
            ["fd 3 in bash (12)", "fd 4 in cat (13)"]
        );
        // Command names with spaces, parentheses and "fd" stay whole.
        assert_eq!(
            split_owners("fd 5 in opt cgu.11 (22400) fd 1 in a) fd 2 in (b (7) fd 9 in x (1) "),
            [
                "fd 5 in opt cgu.11 (22400)",
                "fd 1 in a) fd 2 in (b (7)",
                "fd 9 in x (1)"
            ]
        );
        assert!(split_owners("").is_empty());
        assert_eq!(split_owners(&owners(61)).len(), 61);
    }

    #[test]
    fn bracketed_lists_split_outside_quotes_and_nesting() {
        use super::fit::split_bracketed;
        let (o, items, c) = split_bracketed("[-51 (33 times), -2 (7 times), 20]").unwrap();
        assert_eq!((o, c), ("[", "]"));
        assert_eq!(items, ["-51 (33 times)", "-2 (7 times)", "20"]);
        let (_, items, _) = split_bracketed("{'a, b': 1, 'c': [1, 2], \"d\\\", e\": 3}").unwrap();
        assert_eq!(items, ["'a, b': 1", "'c': [1, 2]", "\"d\\\", e\": 3"]);
        assert_eq!(split_bracketed("[]").unwrap().1.len(), 0);
        assert_eq!(split_bracketed("[20]").unwrap().1, ["20"]);
        assert!(split_bracketed("bash (12)").is_none());
        assert!(split_bracketed("[unclosed").is_none());
    }

    #[test]
    fn lists_are_cut_at_an_item_with_the_count_of_the_rest() {
        use super::fit::{list, Kind, LIST_LINES};
        for n in [1, 2, 5, 61, 1000] {
            let s = owners(n);
            for w in [20, 25, 34, 40, 60, 100, 400] {
                let out = list(Kind::FdOwners, &s, w);
                let lines: Vec<&str> = out.lines().collect();
                assert!(lines.len() <= LIST_LINES, "{n} items, width {w}: {out}");
                assert!(widest(&out) <= w, "{n} items, width {w}: {out}");
                let (shown, more) = shown_and_more(&out);
                assert!(shown >= 1);
                assert_eq!(shown + more, n, "{n} items, width {w}: {out}");
                // Whole items, in order, from the first.
                let joined = out.replace('\n', " ");
                for i in 0..shown {
                    assert!(
                        joined.contains(&format!("fd {} in cat ({})", i + 3, 28530 + i)),
                        "{out}"
                    );
                }
                if more == 0 {
                    assert!(!out.contains('…'));
                }
            }
        }
        // The example: one item, then the count.
        assert_eq!(
            list(Kind::FdOwners, &owners(62), 36),
            "fd 3 in cat (28530),\nfd 4 in cat (28531), … and 60 more"
        );
        assert_eq!(
            list(Kind::FdOwners, &owners(62), 20),
            "fd 3 in cat (28530),\n… and 61 more"
        );
        // Brackets stay; a list that fits is unchanged.
        let prios = "[20, -51, 20, -51, 20, -51, 20, -51, 20, -51, 20, -51]";
        assert_eq!(list(Kind::Bracketed, prios, 60), prios);
        assert_eq!(
            list(Kind::Bracketed, prios, 20),
            "[20, -51, 20, -51,\n20, … and 7 more]"
        );
    }

    #[test]
    fn columns_shrink_only_as_far_as_needed() {
        use super::fit::{shrink, BAR_MIN};
        use super::BAR_WIDTH;
        // Everything fits: unchanged.
        assert_eq!(
            shrink(&[10, 20], &[5, 5], &[false, false], true, 60),
            (vec![10, 20], BAR_WIDTH)
        );
        // Number titles wrap first (down to their values), then the bar narrows, then text.
        let (w, bar) = shrink(
            &[30, 21, 500],
            &[16, 10, 16],
            &[false, true, false],
            true,
            100,
        );
        assert_eq!((w[1], bar), (10, BAR_MIN));
        assert_eq!(w.iter().sum::<usize>() + bar, 100);
        // The widest text shrinks to one level; a narrower one keeps its width.
        assert_eq!(w[0], 30);
        assert_eq!(w[2], 100 - 30 - 10 - BAR_MIN);
        let (w, _) = shrink(
            &[200, 300, 12],
            &[16, 16, 12],
            &[false, false, false],
            false,
            100,
        );
        assert_eq!(w, vec![44, 44, 12]);
        // Only one extra column where the level cannot be reached by all.
        let (w, _) = shrink(&[200, 300], &[16, 16], &[false, false], false, 51);
        assert_eq!(w, vec![26, 25]);
        // Not even the floors fit: the floors.
        let (w, bar) = shrink(&[200, 300], &[40, 40], &[false, false], true, 50);
        assert_eq!((w, bar), (vec![40, 40], BAR_MIN));
    }

    #[test]
    fn a_table_that_fits_is_unchanged() {
        let t = per_file(&[1, 2]);
        let meta = &crate::io::METADATA;
        let whole = super::render(meta, std::slice::from_ref(&t));
        let w = widest(&whole);
        for width in [w, w + 1, 1000] {
            let opts = super::TextOptions {
                charts: true,
                width: Some(width),
            };
            assert_eq!(
                super::render_text(meta, std::slice::from_ref(&t), &opts),
                whole
            );
        }
        // One column less and it changes.
        let opts = super::TextOptions {
            charts: true,
            width: Some(w - 1),
        };
        let fitted = super::render_text(meta, std::slice::from_ref(&t), &opts);
        assert_ne!(fitted, whole);
        assert!(widest(&fitted) < w, "{fitted}");
    }

    #[test]
    fn wide_tables_fit_the_width_and_keep_counts_and_numbers() {
        let lens = [1, 3, 61, 2000];
        let t = per_file(&lens);
        let meta = &crate::io::METADATA;
        for width in [60, 80, 100, 132] {
            for charts in [true, false] {
                let opts = super::TextOptions {
                    charts,
                    width: Some(width),
                };
                let s = super::render_text(meta, std::slice::from_ref(&t), &opts);
                assert!(widest(&s) <= width, "width {width}:\n{s}");
                // Sizes whole, each on the first line of its row.
                let rows: Vec<&str> = s.lines().filter(|l| l.contains(" B ┆")).collect();
                assert_eq!(rows.len(), lens.len(), "{s}");
                for (i, (row, n)) in rows.iter().zip(lens).enumerate() {
                    assert!(row.contains(&format!("{} B", 1_000_000 * (i + 1))), "{s}");
                    // The owners cell: this line and the next (it takes at most two).
                    let pos = s.find(row).unwrap();
                    let cell: String = s[pos..]
                        .lines()
                        .take(2)
                        .map(|l| l.split('┆').nth(2).unwrap_or(""))
                        .collect::<Vec<_>>()
                        .join(" ");
                    let cell = cell
                        .split("fd 3 in cat")
                        .nth(1)
                        .map(|c| format!("fd 3 in cat{c}"));
                    let (shown, more) = shown_and_more(&cell.unwrap());
                    assert_eq!(shown + more, n, "width {width}, row {i}:\n{s}");
                }
                // Paths wrap after a `/`, whole.
                let path_col: String = s
                    .lines()
                    .filter_map(|l| l.strip_prefix("│ ")?.split(" ┆").next())
                    .map(str::trim_end)
                    .collect();
                assert!(path_col.contains("/var/lib/some/rather/long/directory/name/file-3.log"));
            }
        }
    }

    #[test]
    fn tables_too_wide_for_their_columns_are_cut_into_tables_repeating_the_first() {
        use crate::lami::cell;
        let mut t = crate::lami::Table::new("soft-stats", 0, 1_000);
        for (i, name) in ["TIMER_SOFTIRQ", "NET_RX_SOFTIRQ"].iter().enumerate() {
            let mut row = vec![cell::irq(false, i as i64, name)];
            row.push(cell::number(273u64));
            for k in 0..4 {
                row.push(cell::duration(123_456.0 * f64::from(k + 1)));
            }
            row.push(cell::number(17u64));
            for k in 0..4 {
                row.push(cell::duration(7_654.0 * f64::from(k + 1)));
            }
            t.rows.push(row);
        }
        let meta = &crate::irq::METADATA;
        let opts = super::TextOptions {
            charts: true,
            width: Some(80),
        };
        let s = super::render_text(meta, std::slice::from_ref(&t), &opts);
        assert!(widest(&s) <= 80, "{s}");
        let tables = s.matches('┌').count();
        assert!(tables >= 2, "{s}");
        assert_eq!(s.matches("TIMER_SOFTIRQ").count(), tables, "{s}");
        // Every value is there, whole.
        for k in 1..=4 {
            for v in [123.456 * f64::from(k), 7.654 * f64::from(k)] {
                assert!(s.contains(&format!("{v:.3} µs")), "{v}: {s}");
            }
        }
    }

    #[test]
    fn timestamps_lose_their_date_only_in_a_fitted_table_of_one_day() {
        use crate::lami::cell;
        let day = 1_457_113_582_794_565_804; // 2016-03-04 17:46:22.794565804
        let mut t = crate::lami::Table::new("log", day, day + 1_000_000_000);
        for i in 0..3 {
            t.rows.push(vec![
                cell::time_range(day + i, day + i + 5_000),
                cell::timestamp(day + i),
                cell::cpu(1),
                cell::irq(true, 27, "a_rather_long_interrupt_name_for_this_table_here"),
            ]);
        }
        let meta = &crate::irq::METADATA;
        let whole = super::render(meta, std::slice::from_ref(&t));
        assert!(whole.contains("[2016-03-04 17:46:22.794565804, 2016-03-04 17:46:22.794570804]"));
        let opts = super::TextOptions {
            charts: true,
            width: Some(100),
        };
        let s = super::render_text(meta, std::slice::from_ref(&t), &opts);
        assert!(s.contains("[17:46:22.794565804,"), "{s}");
        assert!(s.contains("17:46:22.794570804]"), "{s}");
        assert!(
            s.starts_with("Timerange: [2016-03-04 17:46:22.794565804"),
            "{s}"
        );
        assert_eq!(s.matches("2016-03-04").count(), 2, "{s}");
        // A table over two days keeps its dates.
        t.end = day + 86_400_000_000_000;
        let s = super::render_text(meta, std::slice::from_ref(&t), &opts);
        assert!(s.contains("2016-03-04 17:46:22.794565804,"), "{s}");
    }

    #[test]
    fn histogram_bars_narrow_to_the_width() {
        use crate::lami::cell;
        let mut t = crate::lami::Table::new("freq", 0, 1_000);
        for (lo, n) in [(0.0, 2u64), (1_000_000.0, 8)] {
            t.rows.push(vec![
                cell::duration(lo),
                cell::duration(lo + 1_000_000.0),
                cell::number(n),
            ]);
        }
        let meta = &crate::irq::METADATA;
        let whole = super::render(meta, std::slice::from_ref(&t));
        assert!(widest(&whole) > 80);
        let opts = super::TextOptions {
            charts: true,
            width: Some(80),
        };
        let s = super::render_text(meta, std::slice::from_ref(&t), &opts);
        assert!(widest(&s) <= 80, "{s}");
        assert!(s.contains(&"█".repeat(super::fit::BAR_MIN)), "{s}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any texts, any width: no panic; every line within the width whenever the columns
        /// fit at their narrowest (here: always from 100 columns); the sizes whole; each list
        /// counts all its items.
        #[test]
        fn any_table_fits_any_width(
            rows in proptest::collection::vec(
                ("\\PC{0,60}", 0u32..5000, proptest::collection::vec("[a-z ()]{1,12}", 0..40)),
                1..6,
            ),
            width in 1usize..220,
            charts: bool,
        ) {
            use crate::lami::cell;
            let mut t = crate::lami::Table::new("per-file-top", 0, 1_000);
            for (path, size, owners) in &rows {
                let owners: String = owners
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("fd {i} in {c} ({}) ", 100 + i))
                    .collect();
                t.rows.push(vec![cell::path(path), cell::size(i64::from(*size)), cell::string(owners)]);
            }
            let opts = super::TextOptions { charts, width: Some(width) };
            let s = super::render_text(&crate::io::METADATA, std::slice::from_ref(&t), &opts);
            if width >= 100 {
                proptest::prop_assert!(widest(&s) <= width, "{}", s);
            }
            for (_, size, _) in &rows {
                let v = format!("{size} B");
                proptest::prop_assert!(s.contains(&v), "{}", s);
            }
        }
    }
}
