//! The terminal: the read runs on a thread of its own and hands its snapshots over; the
//! screen is redrawn as they come and `q` (or Esc, or Ctrl-C) quits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use pipeline::Flow;

use crate::render::{draw, View};
use crate::{Error, Snapshot};

/// How often the keyboard is looked at (and the screen redrawn without a new snapshot).
const TICK: Duration = Duration::from_millis(100);

/// What the read thread is given: it calls `emit` with each snapshot and stops reading when
/// `emit` says [`Flow::Stop`] (after a quit).
pub type Emit<'e> = dyn FnMut(Snapshot) -> Flow + 'e;

/// Runs the dashboard in the terminal until the user quits: `read` (on a thread of its own)
/// reads the source and emits snapshots; `view` is shown with the latest. On quit, `quit` is
/// set (a replay stops at its next step) and `on_quit` is called (e.g. to stop a recording),
/// then the read thread is waited for; its result is returned. While the read has not ended,
/// `view.status` says so; once it has, `ended` (or its error) is shown until the user quits.
pub fn run<R>(
    mut view: View,
    quit: Arc<AtomicBool>,
    read: R,
    on_quit: impl FnOnce(),
) -> Result<analysis::Analysed, Error>
where
    R: FnOnce(&mut Emit<'_>) -> Result<analysis::Analysed, Error> + Send,
{
    let (tx, rx) = mpsc::channel::<Snapshot>();
    let running = view.status.clone();
    std::thread::scope(|scope| {
        let q = quit.clone();
        let reader = scope.spawn(move || {
            let mut emit = move |s: Snapshot| {
                if q.load(Ordering::Relaxed) || tx.send(s).is_err() {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            read(&mut emit)
        });
        let shown = show(&mut view, &rx, &reader, &running);
        quit.store(true, Ordering::Relaxed);
        on_quit();
        drop(rx);
        let read = reader.join().map_err(|p| Error::Reader(panic_text(&p)))?;
        shown?;
        read
    })
}

/// The screen loop, until a quit key.
fn show<T>(
    view: &mut View,
    rx: &mpsc::Receiver<Snapshot>,
    reader: &std::thread::ScopedJoinHandle<'_, T>,
    running: &str,
) -> Result<(), Error> {
    let mut terminal = ratatui::try_init()?;
    let r = (|| -> Result<(), Error> {
        loop {
            while let Ok(s) = rx.try_recv() {
                view.snapshot = Some(s);
            }
            view.status = if reader.is_finished() {
                format!("{running} — ended")
            } else {
                running.to_string()
            };
            terminal.draw(|f| draw(f, view))?;
            if event::poll(TICK)? {
                if let Event::Key(k) = event::read()? {
                    let ctrl_c =
                        k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                    if k.kind == KeyEventKind::Press
                        && (matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || ctrl_c)
                    {
                        return Ok(());
                    }
                }
            }
        }
    })();
    ratatui::try_restore()?;
    r
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}
