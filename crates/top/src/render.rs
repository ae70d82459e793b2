//! Drawing a [`Snapshot`] with ratatui: pure, on any backend (the terminal's, or
//! `TestBackend` in tests).

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table};
use ratatui::Frame;

use crate::{Config, LatencyView, Snapshot};

/// What the screen shows.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// What is read (a trace directory, `recording to …`, a relay URL).
    pub source: String,
    /// The latest snapshot, if one came.
    pub snapshot: Option<Snapshot>,
    /// The state of the read, shown in the header (`replaying ×1`, `ended`…).
    pub status: String,
    /// The trackers' thresholds, as the list of the worst names them.
    pub thresholds: Vec<(latency::Tracker, i64)>,
}

impl View {
    /// An empty view of `source` with `config`'s thresholds.
    pub fn new(source: impl Into<String>, config: &Config) -> Self {
        View {
            source: source.into(),
            snapshot: None,
            status: String::new(),
            thresholds: config
                .trackers
                .iter()
                .map(|t| (*t, config.threshold_of(*t)))
                .collect(),
        }
    }
}

/// A duration in at most 7 characters: `850ns`, `12.3us`, `1.50ms`, `134.2ms`, `2.00s`.
pub fn fmt_ns(ns: i64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", f / 1e3)
    } else if ns < 100_000_000 {
        format!("{:.2}ms", f / 1e6)
    } else if ns < 1_000_000_000 {
        format!("{:.1}ms", f / 1e6)
    } else {
        format!("{:.2}s", f / 1e9)
    }
}

/// The time of day of `ns` (UTC), to the millisecond.
fn time_of_day(ns: i64) -> String {
    let s = pipeline::time::format_utc(ns);
    // `YYYY-MM-DD HH:MM:SS.nnnnnnnnn`: the time, to the ms.
    s.get(11..23).unwrap_or(&s).to_string()
}

/// A bar of `width` cells for `ratio` (0..=1), in eighths.
fn bar(ratio: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (ratio.clamp(0.0, 1.0) * width as f64 * 8.0).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) && s.chars().count() < width {
        s.push(PARTS[eighths % 8]);
    }
    let n = s.chars().count();
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    s
}

fn titled(title: String) -> Block<'static> {
    Block::default().borders(Borders::ALL).title(Span::styled(
        title,
        Style::new().add_modifier(Modifier::BOLD),
    ))
}

/// Draws `view` on the whole frame.
pub fn draw(frame: &mut Frame, view: &View) {
    let area = frame.area();
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Percentage(35),
            Constraint::Percentage(35),
            Constraint::Min(4),
        ])
        .split(area);
    header(frame, rows[0], view);
    let Some(snap) = &view.snapshot else {
        frame.render_widget(
            Paragraph::new("waiting for the first window of events…").block(titled("".into())),
            rows[1],
        );
        return;
    };
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(rows[1]);
    threads(frame, top[0], snap);
    cpus(frame, top[1], snap);
    latencies(frame, rows[2], snap);
    worst(frame, rows[3], view, snap);
}

fn header(frame: &mut Frame, area: Rect, view: &View) {
    let window = view.snapshot.as_ref().map_or(String::new(), |s| {
        format!(
            "  window {} +{} (elapsed {})",
            time_of_day(s.range.begin),
            fmt_ns(s.range.end - s.range.begin),
            fmt_ns(s.range.end - s.first)
        )
    });
    let line = Line::from(vec![
        Span::styled(
            "tracekit top",
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ),
        Span::raw(format!(
            " {}  {}{}  (q quits)",
            view.source, view.status, window
        )),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

fn threads(frame: &mut Frame, area: Rect, snap: &Snapshot) {
    let rows: Vec<Row> = snap
        .threads
        .iter()
        .take(area.height.saturating_sub(3) as usize)
        .map(|t| {
            Row::new(vec![
                format!("{:>7}", t.tid),
                t.comm.clone(),
                format!("{:>6.1}%", t.usage * 100.0),
            ])
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(7),
            Constraint::Min(10),
            Constraint::Length(7),
        ],
    )
    .header(Row::new(vec!["    TID", "Command", "   CPU"]).style(Style::new().fg(Color::Cyan)))
    .block(titled(format!(
        "Per-thread CPU ({} threads)",
        snap.threads.len()
    )));
    frame.render_widget(table, area);
}

fn cpus(frame: &mut Frame, area: Rect, snap: &Snapshot) {
    let width = (area.width as usize).saturating_sub(18).max(4);
    let mut lines: Vec<Line> = snap
        .cpus
        .iter()
        .map(|(cpu, u)| {
            Line::from(vec![
                Span::raw(format!("cpu{cpu:<3} ")),
                Span::styled(bar(*u, width), Style::new().fg(Color::Green)),
                Span::raw(format!(" {:>5.1}%", u * 100.0)),
            ])
        })
        .collect();
    lines.push(Line::from(format!("total   {:>5.1}%", snap.total * 100.0)));
    frame.render_widget(
        Paragraph::new(lines).block(titled("Per-CPU load".into())),
        area,
    );
}

fn latencies(frame: &mut Frame, area: Rect, snap: &Snapshot) {
    let n = snap.latencies.len().max(1) as u32;
    let cols = Layout::default()
        .direction(Direction::Horizontal)
        .constraints((0..n).map(|_| Constraint::Ratio(1, n)))
        .split(area);
    for (l, col) in snap.latencies.iter().zip(cols.iter()) {
        tracker(frame, *col, l);
    }
}

fn tracker(frame: &mut Frame, area: Rect, l: &LatencyView) {
    let t = &l.total;
    let mut lines = vec![Line::from(format!(
        "{} total, {} in window",
        t.counters.matched, l.window_matched
    ))];
    if let (Some(min), Some(avg), Some(max)) = (t.min, t.avg, t.max) {
        lines.push(Line::from(format!(
            "min {}  max {}",
            fmt_ns(min),
            fmt_ns(max)
        )));
        lines.push(Line::from(format!("avg {}", fmt_ns(avg as i64))));
    }
    // The distribution since the start in log2 buckets, as the latency tracker's histograms;
    // the longest latencies when not all fit.
    let width = (area.width as usize).saturating_sub(20).max(3);
    let room = area.height.saturating_sub(2 + lines.len() as u16) as usize;
    let shown = &t.hist[t.hist.len().saturating_sub(room)..];
    let most = shown.iter().map(|h| h.1).max().unwrap_or(1).max(1);
    for &(lo, count) in shown {
        lines.push(Line::from(vec![
            Span::raw(format!("≥{:>7} ", fmt_ns(lo))),
            Span::styled(
                bar(count as f64 / most as f64, width),
                Style::new().fg(Color::Yellow),
            ),
            Span::raw(format!(" {count:>7}")),
        ]));
    }
    frame.render_widget(
        Paragraph::new(lines).block(titled(format!("{} latency", t.tracker.name()))),
        area,
    );
}

fn worst(frame: &mut Frame, area: Rect, view: &View, snap: &Snapshot) {
    let rows: Vec<Row> = snap
        .worst
        .iter()
        .take(area.height.saturating_sub(3) as usize)
        .map(|r| {
            let who = match (&r.comm, r.tid) {
                (Some(c), Some(t)) => format!("{c} ({t})"),
                (None, Some(t)) => format!("? ({t})"),
                _ => r.cpu.map_or("-".into(), |c| format!("cpu {c}")),
            };
            Row::new(vec![
                format!("{:>9}", fmt_ns(r.latency)),
                r.tracker.name().to_string(),
                time_of_day(r.begin),
                who,
                r.detail.clone(),
            ])
        })
        .collect();
    let thresholds: Vec<String> = view
        .thresholds
        .iter()
        .map(|(t, th)| format!("{}≥{}", t.name(), fmt_ns(*th)))
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(12),
            Constraint::Percentage(35),
            Constraint::Min(10),
        ],
    )
    .header(
        Row::new(vec!["  Latency", "Tracker", "Begin", "Thread", "What"])
            .style(Style::new().fg(Color::Cyan)),
    )
    .block(titled(format!(
        "Worst occurrences ({}; {} over, {} in window)",
        thresholds.join(" "),
        snap.total_over,
        snap.window_over
    )));
    frame.render_widget(table, area);
}
