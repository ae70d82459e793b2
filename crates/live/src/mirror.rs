//! [`Mirror`]: a local copy of what a live read received, readable as trace files while the
//! read goes on.
//!
//! Readers that need files (a viewer's state model, its events table, analyses run on
//! demand) cannot read from the relay: they read the mirror instead. Each trace's metadata
//! and each stream's packets are written as received, in LTTng's layout (`metadata`, one file
//! per stream), under `DIR/rN/PATH` (`N` the URL's relay, `PATH` the trace's path on the
//! relay, cleaned of anything that would leave the directory). [`Mirror::snapshot`] gives the
//! traces over the packets complete at that moment: each stream lists its packets
//! ([`ctf::trace::StreamFiles::packets`]), so a reader never sees a packet being written,
//! however long after the snapshot it reads.

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use ctf::trace::{PacketRef, StreamFiles};
use ctf::Trace;

use crate::Error;

/// A local copy of the traces a [`crate::LiveSource`] reads (see the [module](self)).
#[derive(Debug)]
pub struct Mirror {
    dir: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// By the live source's trace index.
    traces: Vec<Option<MTrace>>,
    /// By the live source's stream index.
    streams: Vec<Option<MStream>>,
    /// Bytes written, metadata included.
    bytes: u64,
}

#[derive(Debug)]
struct MTrace {
    dir: PathBuf,
    /// The live source's trace (class and layout), remade as the metadata grows.
    trace: Arc<Trace>,
}

#[derive(Debug)]
struct MStream {
    trace: usize,
    path: PathBuf,
    file: File,
    len: u64,
    /// Offsets of the complete packets.
    packets: Vec<u64>,
}

impl Mirror {
    /// A mirror writing under `dir` (made, owner-only, if missing).
    pub fn new(dir: &Path) -> Result<Arc<Mirror>, Error> {
        make_dir(dir)?;
        Ok(Arc::new(Mirror {
            dir: dir.to_path_buf(),
            state: Mutex::new(State::default()),
        }))
    }

    /// The directory written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes written so far (packets and metadata).
    pub fn bytes(&self) -> u64 {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The traces as far as they were received: those with at least one packet, indexed by
    /// their position, each stream limited to its complete packets.
    pub fn snapshot(&self) -> Vec<Arc<Trace>> {
        let st = self.lock();
        let mut out: Vec<Arc<Trace>> = Vec::new();
        for (ti, t) in st.traces.iter().enumerate() {
            let Some(t) = t else { continue };
            let streams: Vec<StreamFiles> = st
                .streams
                .iter()
                .flatten()
                .filter(|s| s.trace == ti && !s.packets.is_empty())
                .map(|s| StreamFiles {
                    files: vec![s.path.clone()],
                    stream_class_id: None,
                    stream_id: None,
                    indexes: Vec::new(),
                    packets: Some(
                        s.packets
                            .iter()
                            .map(|&offset| PacketRef { file: 0, offset })
                            .collect(),
                    ),
                })
                .collect();
            if streams.is_empty() {
                continue;
            }
            out.push(Arc::new(Trace {
                path: t.dir.clone(),
                name: t.trace.name.clone(),
                class: t.trace.class.clone(),
                layout: t.trace.layout.clone(),
                streams,
                index: out.len(),
                errors: Vec::new(),
            }));
        }
        out
    }

    /// Trace `ti` (of relay `relay`, at `path` there) has this metadata (all of it so far).
    pub(crate) fn metadata(
        &self,
        ti: usize,
        relay: usize,
        path: &str,
        metadata: &[u8],
        trace: &Arc<Trace>,
    ) -> Result<(), Error> {
        let mut st = self.lock();
        if st.traces.len() <= ti {
            st.traces.resize_with(ti + 1, || None);
        }
        let dir = match &st.traces[ti] {
            Some(t) => t.dir.clone(),
            None => {
                let mut dir = self.dir.join(format!("r{relay}"));
                dir.push(clean(path, &format!("trace{ti}")));
                make_dir(&dir)?;
                dir
            }
        };
        // Written aside, then renamed: a reader opening the trace never sees half of it.
        let tmp = dir.join(".metadata.tmp");
        let io = |source| Error::Mirror {
            path: tmp.clone(),
            source,
        };
        let mut f = ctf::private_files::create_file(&tmp).map_err(io)?;
        f.write_all(metadata).map_err(io)?;
        std::fs::rename(&tmp, dir.join("metadata")).map_err(io)?;
        st.bytes += metadata.len() as u64;
        st.traces[ti] = Some(MTrace {
            dir,
            trace: trace.clone(),
        });
        Ok(())
    }

    /// Stream `si` of trace `ti` is named `channel`.
    pub(crate) fn stream(&self, si: usize, ti: usize, channel: &str) -> Result<(), Error> {
        let mut st = self.lock();
        let Some(Some(t)) = st.traces.get(ti) else {
            return Ok(());
        };
        let name = Path::new(channel)
            .file_name()
            .filter(|n| *n != "metadata" && !n.to_string_lossy().starts_with('.'))
            .map_or_else(|| format!("stream{si}").into(), |n| n.to_os_string());
        let path = t.dir.join(name);
        let file = ctf::private_files::create_file(&path).map_err(|source| Error::Mirror {
            path: path.clone(),
            source,
        })?;
        if st.streams.len() <= si {
            st.streams.resize_with(si + 1, || None);
        }
        st.streams[si] = Some(MStream {
            trace: ti,
            path,
            file,
            len: 0,
            packets: Vec::new(),
        });
        Ok(())
    }

    /// Stream `si` received `bytes`, one whole packet.
    pub(crate) fn packet(&self, si: usize, bytes: &[u8]) -> Result<(), Error> {
        let mut st = self.lock();
        let Some(Some(s)) = st.streams.get_mut(si) else {
            return Ok(());
        };
        s.file.write_all(bytes).map_err(|source| Error::Mirror {
            path: s.path.clone(),
            source,
        })?;
        s.packets.push(s.len);
        s.len += bytes.len() as u64;
        st.bytes += bytes.len() as u64;
        Ok(())
    }
}

/// `path` as relative components only (no root, `.` or `..`): a relay names paths, and must
/// not make the mirror write outside its directory. `fallback` when nothing is left.
fn clean(path: &str, fallback: &str) -> PathBuf {
    let p: PathBuf = Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) if !n.to_string_lossy().starts_with('.') => Some(n),
            _ => None,
        })
        .collect();
    if p.as_os_str().is_empty() {
        PathBuf::from(fallback)
    } else {
        p
    }
}

fn make_dir(dir: &Path) -> Result<(), Error> {
    ctf::private_files::create_dir_all(dir).map_err(|source| Error::Mirror {
        path: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        assert_eq!(clean("/a/../b/./c", "x"), PathBuf::from("a/b/c"));
        assert_eq!(clean("../..", "x"), PathBuf::from("x"));
        assert_eq!(
            clean("h/s-1/ust/uid/0/64-bit", "x"),
            PathBuf::from("h/s-1/ust/uid/0/64-bit")
        );
        assert_eq!(clean("a/.hidden/b", "x"), PathBuf::from("a/b"));
    }
}
