//! Trace chunks: the directories a session's streams are written to between two rotations,
//! laid out, renamed, archived and deleted as `lttng-relayd` 2.13 does it.
//!
//! A session that never rotated writes its first chunk straight into the session directory.
//! Creating the next chunk moves the current one aside (`.tmp_old_chunk`) and starts the new
//! one in `.tmp_new_chunk`; closing the old one gives the new one its place (its name, or the
//! session directory again after a clear of a session that never rotated) and, once no stream
//! writes to the old one any more, runs its close command: moved to
//! `archives/BEGIN-END-ID` (rotation), deleted (clear), or left where it is.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use relay_proto::control::close_command;

use crate::state::make_dir;

/// Where the chunk being replaced waits for its close command.
pub(crate) const TMP_OLD: &str = ".tmp_old_chunk";
/// Where a new chunk starts while the one it replaces is not closed yet.
pub(crate) const TMP_NEW: &str = ".tmp_new_chunk";
/// Where completed chunks go, below the session directory.
pub(crate) const ARCHIVES: &str = "archives";

/// A trace chunk of a session.
pub(crate) struct Chunk {
    pub(crate) id: u64,
    /// Creation time, seconds since the epoch.
    pub(crate) creation: u64,
    /// The name the session daemon gave it, if any (snapshots).
    pub(crate) override_name: Option<String>,
    /// Where its files are, below the session directory (empty: the directory itself).
    pub(crate) path: String,
    /// The first components of its streams' paths (`ust`, `kernel`): what moves with it.
    pub(crate) tops: BTreeSet<String>,
    /// From CLOSE_TRACE_CHUNK: the close time and command.
    pub(crate) close: Option<(u64, Option<u32>)>,
}

/// `ts` (seconds since the epoch) as chunk names show it: `20261129T112332+0000`, local time.
fn stamp(ts: u64) -> String {
    i64::try_from(ts)
        .ok()
        .and_then(|t| jiff::Timestamp::from_second(t).ok())
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y%m%dT%H%M%S%z")
                .to_string()
        })
        .unwrap_or_else(|| ts.to_string())
}

impl Chunk {
    pub(crate) fn new(id: u64, creation: u64, path: String) -> Chunk {
        Chunk {
            id,
            creation,
            override_name: None,
            path,
            tops: BTreeSet::new(),
            close: None,
        }
    }

    /// Its name: `BEGIN-ID` while open, `BEGIN-END-ID` once closed (unless overridden).
    pub(crate) fn name(&self) -> String {
        if let Some(n) = &self.override_name {
            return n.clone();
        }
        match self.close {
            Some((end, _)) => format!("{}-{}-{}", stamp(self.creation), stamp(end), self.id),
            None => format!("{}-{}", stamp(self.creation), self.id),
        }
    }

    /// Moves its files from where they are to `to` (below `session_dir`).
    pub(crate) fn rename(&mut self, session_dir: &Path, to: &str) -> io::Result<()> {
        if self.path == to {
            return Ok(());
        }
        let from = session_dir.join(&self.path);
        let dest = session_dir.join(to);
        move_tops(&self.tops, &from, &dest)?;
        if !self.path.is_empty() {
            // Only its own directory, and only when nothing else is left in it.
            let _ = std::fs::remove_dir(&from);
        }
        self.path = to.to_owned();
        Ok(())
    }

    /// Runs its close command, now that no stream writes to it.
    pub(crate) fn complete(&mut self, session_dir: &Path) -> io::Result<()> {
        let Some((_, command)) = self.close else {
            return Ok(());
        };
        match command {
            Some(close_command::MOVE_TO_COMPLETED) => {
                let to = format!("{ARCHIVES}/{}", self.name());
                self.rename(session_dir, &to)
            }
            Some(close_command::DELETE) => {
                let dir = session_dir.join(&self.path);
                for t in &self.tops {
                    match std::fs::remove_dir_all(dir.join(t)) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                        _ => {}
                    }
                }
                if !self.path.is_empty() {
                    let _ = std::fs::remove_dir(&dir);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Moves each of `tops` from `from` to `dest` (made if missing).
fn move_tops(tops: &BTreeSet<String>, from: &Path, dest: &Path) -> io::Result<()> {
    make_dir(dest)?;
    for t in tops {
        let src: PathBuf = from.join(t);
        if src.exists() {
            std::fs::rename(&src, dest.join(t))?;
        }
    }
    Ok(())
}
