//! A local kernel recording followed as it is written: the recorder ([`record::record`]) runs
//! on a thread and says, after each write-out of its packets, up to when its files are
//! complete ([`record::RecordOptions::on_disk`]); a [`FollowSource`] reads them up to there.
//!
//! Following the files rather than taking events from the recorder's memory keeps the
//! recorder as it is (its output is the trace that stays), shows exactly what the trace
//! holds, and is the same source for any trace a writer completes packet by packet.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pipeline::{FollowSource, ReadOptions, Written};
use record::{RecordOptions, RecordSummary};

/// How often the follower looks at how far the trace is written.
const POLL: Duration = Duration::from_millis(100);

/// How long the recorder may take to create its trace.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A recording running on its own thread, and the source following its trace.
pub struct Recording {
    /// The trace's directory (once the recording is complete).
    pub output: PathBuf,
    /// The events as they are written.
    pub source: FollowSource,
    thread: Option<JoinHandle<Result<RecordSummary, record::Error>>>,
}

/// Why a recording could not be followed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The recorder failed.
    #[error(transparent)]
    Record(#[from] record::Error),
    /// The trace it writes could not be opened.
    #[error("opening the trace being recorded: {0}")]
    Open(#[from] pipeline::Error),
    /// The recorder did not create its trace in time.
    #[error("the recorder did not create {} within {}s", .0.display(), START_TIMEOUT.as_secs())]
    Timeout(PathBuf),
    /// The recorder's thread panicked.
    #[error("the recorder's thread failed")]
    Panicked,
}

impl Recording {
    /// Starts recording with `opts` (its `on_disk` is set here) and opens the trace it
    /// writes, once the recorder made it.
    pub fn start(mut opts: RecordOptions) -> Result<Self, StartError> {
        let on_disk = Arc::new(AtomicI64::new(i64::MIN));
        let done = Arc::new(AtomicBool::new(false));
        opts.on_disk = Some(on_disk.clone());
        let output = opts.output.clone();
        let d = done.clone();
        let thread = std::thread::spawn(move || {
            let r = record::record(&opts);
            d.store(true, Ordering::Release);
            r
        });
        let written = {
            let done = done.clone();
            Arc::new(move || -> Written {
                if done.load(Ordering::Acquire) {
                    Written::Done
                } else {
                    Written::Until(on_disk.load(Ordering::Acquire))
                }
            })
        };
        let metadata = |d: &PathBuf| d.join("metadata").exists();
        let started = Instant::now();
        let partial = ctf::writer::partial_dir(&output);
        while !metadata(&partial) && !metadata(&output) {
            if done.load(Ordering::Acquire) || started.elapsed() > START_TIMEOUT {
                record::request_stop();
                return match thread.join() {
                    Ok(Err(e)) => Err(e.into()),
                    Ok(Ok(_)) => Err(StartError::Timeout(output)),
                    Err(_) => Err(StartError::Panicked),
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The metadata may be caught being written: tried again for a while.
        let source = loop {
            match FollowSource::open(&output, written.clone(), ReadOptions::default(), POLL) {
                Ok(s) => break s,
                Err(_) if started.elapsed() < START_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => return Err(e.into()),
            }
        };
        Ok(Recording {
            output,
            source,
            thread: Some(thread),
        })
    }

    /// Asks the recorder to stop (it writes what is left and renames the trace).
    pub fn stop(&self) {
        record::request_stop();
    }

    /// Stops the recording and waits for it: its summary.
    pub fn finish(mut self) -> Result<RecordSummary, StartError> {
        self.stop();
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => Ok(r?),
            _ => Err(StartError::Panicked),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            record::request_stop();
            let _ = t.join();
        }
    }
}
