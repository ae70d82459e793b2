//! Prints the dashboard's screen at the end of a trace as text (what `tracekit top PATH
//! --replay` shows last), for documentation and quick looks without a terminal:
//! `cargo run -p tracekit-top --example frame -- PATH [WIDTH HEIGHT]`.

use pipeline::{FileSource, Flow, ReadOptions};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use top::render::{draw, View};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        return Err("usage: frame PATH [WIDTH HEIGHT]".into());
    };
    let width = args.get(1).map_or(Ok(120), |w| w.parse())?;
    let height = args.get(2).map_or(Ok(40), |h| h.parse())?;
    let config = top::Config::default();
    let source = FileSource::open(&[path], ReadOptions::default())?;
    let mut last = None;
    top::run(&source, &config, |s| {
        last = Some(s);
        Flow::Continue
    })?;
    let mut view = View::new(path.clone(), &config);
    view.status = "replay ×1 — ended".into();
    view.snapshot = last;
    let mut terminal = Terminal::new(TestBackend::new(width, height))?;
    terminal.draw(|f| draw(f, &view))?;
    let buf = terminal.backend().buffer();
    for y in 0..height {
        let line: String = (0..width).map(|x| buf[(x, y)].symbol()).collect();
        println!("{}", line.trim_end());
    }
    Ok(())
}
