//! Finding traces on disk and opening them: metadata, layouts and data stream files.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::index::{self, PacketEntry};
use crate::ir::TraceClass;
use crate::layout::Layout;
use crate::stream::{probe_first_packet, StreamReader};

/// One opened CTF trace: its class, compiled layouts and data streams.
#[derive(Debug)]
pub struct Trace {
    /// The trace directory.
    pub path: PathBuf,
    /// The trace's name as Babeltrace 2 gives it in its messages: the `hostname` environment
    /// entry, then, for a trace found below a directory given to [`open_all`], its path
    /// relative to that directory (`vm/ust/uid/0/64-bit`); empty without either.
    pub name: String,
    /// The trace class its metadata describes.
    pub class: Arc<TraceClass>,
    /// The trace class compiled for decoding (see [`crate::access`]).
    pub layout: Arc<Layout>,
    /// Data streams; each is one or more files (tracefile rotation) in time order.
    pub streams: Vec<StreamFiles>,
    /// Position of this trace among those opened together.
    pub index: usize,
    /// Problems found while opening (unreadable stream files…), reported but not fatal.
    pub errors: Vec<String>,
}

/// The files that make one data stream.
#[derive(Debug, Clone)]
pub struct StreamFiles {
    /// The files, in time order.
    pub files: Vec<PathBuf>,
    /// The stream class id of the first packet's header, when read.
    pub stream_class_id: Option<u64>,
    /// The stream instance id of the first packet's header, when read.
    pub stream_id: Option<u64>,
    /// Per file (same order as `files`): its LTTng index, read the first time it is asked
    /// for ([`Self::file_index`]: most reads never need it). Shorter than `files` (empty) where
    /// indexes are not looked for.
    pub indexes: Vec<OnceLock<FileIndex>>,
    /// The packets to read, in order, when they are not simply every packet of every file in
    /// turn: a stream merged from several copies of one trace (overlapping `lttng snapshot
    /// record` outputs) reads the packets the copies share once (see [`open_all`]).
    pub packets: Option<Arc<[PacketRef]>>,
}

/// Where one packet of a stream lies: which of its files, and the byte offset there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRef {
    /// Position of the file in [`StreamFiles::files`].
    pub file: usize,
    /// Byte offset of the packet in that file.
    pub offset: u64,
}

impl StreamFiles {
    /// The LTTng index of file `i` (read on the first call).
    pub fn file_index(&self, i: usize) -> &FileIndex {
        static ABSENT: FileIndex = FileIndex::Absent;
        match (self.indexes.get(i), self.files.get(i)) {
            (Some(cell), Some(path)) => cell.get_or_init(|| FileIndex::load(path)),
            _ => &ABSENT,
        }
    }

    /// The stream's name as Babeltrace 2 gives it in its messages: its first file's path,
    /// absolute, with `.` and `..` resolved as text (symbolic links are kept).
    pub fn name(&self) -> PathBuf {
        self.files.first().map(|f| absolute(f)).unwrap_or_default()
    }

    /// The index of file `i`, when it has a usable one.
    pub fn index(&self, i: usize) -> Option<&Arc<[PacketEntry]>> {
        match self.file_index(i) {
            FileIndex::Valid(entries) => Some(entries),
            _ => None,
        }
    }
}

/// A stream file's LTTng packet index (`index/NAME.idx` beside it, see [`crate::index`]).
#[derive(Debug, Clone)]
pub enum FileIndex {
    /// No index file.
    Absent,
    /// Read and consistent with the stream file.
    Valid(Arc<[PacketEntry]>),
    /// Present but unusable: why (naming the index file). Readers warn and read without it.
    Rejected(String),
}

impl FileIndex {
    /// The index of stream file `path` (`DIR/index/NAME.idx`).
    pub fn load(path: &Path) -> FileIndex {
        let idx = index::path_of(path);
        let bytes = match std::fs::read(&idx) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileIndex::Absent,
            Err(e) => return FileIndex::Rejected(format!("{}: {e}", idx.display())),
        };
        let file_len = std::fs::metadata(path).map_or(0, |m| m.len());
        let entries = index::parse(&bytes).and_then(|mut e| {
            // A stream file cut short (a crashed session) keeps the packets it holds whole.
            let whole = e
                .iter()
                .take_while(|p| p.offset.saturating_add(p.packet_bits / 8) <= file_len)
                .count();
            e.truncate(whole);
            index::check(&e, file_len).map(|()| e)
        });
        match entries {
            Ok(entries) => FileIndex::Valid(entries.into()),
            Err(e) => FileIndex::Rejected(format!("{}: {e}", idx.display())),
        }
    }
}

/// Finds every trace directory (one holding a `metadata` file) at or below `path`, sorted.
pub fn discover(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_file() {
        if path.file_name().is_some_and(|n| n == "metadata") {
            return Ok(vec![path.parent().unwrap_or(Path::new(".")).to_path_buf()]);
        }
        return Err(Error::NotATrace {
            path: path.to_path_buf(),
        });
    }
    let mut out = Vec::new();
    walk(path, &mut out, 0)?;
    if out.is_empty() {
        return Err(Error::NotATrace {
            path: path.to_path_buf(),
        });
    }
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<()> {
    if depth > 32 {
        return Ok(());
    }
    if dir.join("metadata").is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let subdirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    for d in subdirs {
        walk(&d, out, depth + 1)?;
    }
    Ok(())
}

/// `path` made absolute (against the current directory) with `.` and `..` resolved as text,
/// as Babeltrace 2 names stream files; symbolic links are kept.
pub fn absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let joined;
    let path = if path.is_absolute() {
        path
    } else {
        joined = std::env::current_dir().unwrap_or_default().join(path);
        &joined
    };
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // `/..` is `/`.
                if out.parent().is_some() {
                    out.pop();
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Maps a file read-only (an empty file maps to nothing).
pub(crate) fn map_file(path: &Path, reading: Reading) -> Result<Option<Mmap>> {
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the map is read-only; a trace file truncated while mapped by another process
    // would fault, a risk every mmap-based reader (and babeltrace2) accepts for speed.
    let m = unsafe { Mmap::map(&f) }.map_err(|e| Error::io(path, e))?;
    match reading {
        Reading::Whole => {
            // Readers go front to back: let the kernel read ahead.
            let _ = m.advise(memmap2::Advice::Sequential);
            // Where the file is not cached yet, the kernel then reads it into 2 MiB folios
            // (on file systems with large folios: ext4 from 6.16, XFS, btrfs, tmpfs), which
            // this and every later mapping of the file maps with one fault and one page-table
            // entry each instead of 512: on 144 MiB of trace, mapping and reading every page
            // 9–11 ms and unmapping 1.3–2 ms, against 29–32 ms and 10 ms for the pages as
            // writing left them (6.18, ext4). Cached pages stay as they are.
            let _ = m.advise(memmap2::Advice::HugePage);
        }
        // Only the pages touched: a read ahead here, in small folios, would leave the whole
        // read that follows (another mapping, its own read-ahead state) finding them cached
        // and reading on in small folios too (measured: 4 of 36 MiB in 2 MiB folios, against
        // 30 MiB after a start read this way).
        Reading::Start => {
            let _ = m.advise(memmap2::Advice::Random);
        }
    }
    Ok(Some(m))
}

/// How much of a file a mapping of [`map_file`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// All of it, front to back.
    Whole,
    /// A few bytes at its start.
    Start,
}

impl Trace {
    /// The stream class of a packet whose header gives `id` (None: no `stream_id` field, as
    /// in a trace with one stream class, which it is then; else 0).
    pub fn stream_class_id(&self, id: Option<u64>) -> u64 {
        match id {
            Some(id) => id,
            None if self.layout.streams.len() == 1 => self.layout.streams.id_at(0),
            None => 0,
        }
    }

    /// The default clock of stream class `id` (None: no such class, or it has no clock).
    pub fn stream_clock(&self, id: u64) -> Option<&crate::ir::ClockClass> {
        let sc = self.layout.streams.get(id)?;
        self.class.clocks.get(sc.clock?)
    }

    /// Opens the trace in directory `dir`.
    pub fn open(dir: &Path) -> Result<Trace> {
        let meta_path = dir.join("metadata");
        let bytes = std::fs::read(&meta_path).map_err(|e| Error::io(&meta_path, e))?;
        let class = crate::metadata::parse(&bytes).map_err(|source| Error::Metadata {
            path: meta_path.clone(),
            source,
        })?;
        let layout = Layout::compile(&class).map_err(|source| Error::Metadata {
            path: meta_path.clone(),
            source,
        })?;
        let name = class.env_str("hostname").unwrap_or_default().to_owned();
        let mut trace = Trace {
            path: dir.to_path_buf(),
            name,
            class: Arc::new(class),
            layout: Arc::new(layout),
            streams: Vec::new(),
            index: 0,
            errors: Vec::new(),
        };
        trace.find_streams()?;
        Ok(trace)
    }

    /// A trace with no directory behind it: the class comes from `metadata` (any form), and
    /// it has one data stream whose only file is named `stream_name` (used in messages only).
    /// Read it with [`StreamReader::from_bytes`]; for tests and fuzzing.
    pub fn from_metadata_bytes(metadata: &[u8], stream_name: &str) -> Result<Trace> {
        let path = PathBuf::from(stream_name);
        let meta_err = |source| Error::Metadata {
            path: path.clone(),
            source,
        };
        let class = crate::metadata::parse(metadata).map_err(meta_err)?;
        let layout = Layout::compile(&class).map_err(meta_err)?;
        Ok(Trace {
            path: PathBuf::new(),
            class: Arc::new(class),
            layout: Arc::new(layout),
            streams: vec![StreamFiles {
                files: vec![path.clone()],
                stream_class_id: None,
                stream_id: None,
                indexes: Vec::new(),
                packets: None,
            }],
            name: String::new(),
            index: 0,
            errors: Vec::new(),
        })
    }

    fn find_streams(&mut self) -> Result<()> {
        let rd = std::fs::read_dir(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name != "metadata"
                    && !name.starts_with('.')
                    && e.file_type().is_ok_and(|t| t.is_file())
            })
            .map(|e| e.path())
            .collect();
        files.sort();
        // Files of one stream instance (rotation) are chained in order of their first packet.
        type Key = (Option<u64>, Option<u64>, usize);
        let mut groups: BTreeMap<Key, Vec<(Option<u64>, PathBuf)>> = BTreeMap::new();
        for (i, f) in files.into_iter().enumerate() {
            match probe_first_packet(self, &f) {
                Ok(None) => {}
                Ok(Some(p)) => {
                    let key = match p.stream_id {
                        Some(_) if !p.foreign => (p.stream_class_id, p.stream_id, 0),
                        _ => (p.stream_class_id, None, i),
                    };
                    groups.entry(key).or_default().push((p.ts_begin, f));
                }
                Err(e) => {
                    self.errors.push(e.to_string());
                    // Still read it: the error comes back, with what is readable, when decoding.
                    groups.entry((None, None, i)).or_default().push((None, f));
                }
            }
        }
        for ((sc, sid, _), mut fs) in groups {
            fs.sort_by_key(|(ts, _)| *ts);
            let files: Vec<PathBuf> = fs.into_iter().map(|(_, f)| f).collect();
            self.streams.push(StreamFiles {
                indexes: files.iter().map(|_| OnceLock::new()).collect(),
                files,
                stream_class_id: sc,
                stream_id: sid,
                packets: None,
            });
        }
        Ok(())
    }

    /// Readers for every stream of this trace.
    pub fn readers(self: &Arc<Self>) -> Vec<StreamReader> {
        (0..self.streams.len())
            .map(|i| StreamReader::new(self.clone(), i))
            .collect()
    }

    /// The `hostname` environment entry.
    pub fn hostname(&self) -> Option<&str> {
        self.class.env_str("hostname")
    }
}

/// Opens every trace found at or below each path, in order (each path's traces sorted).
///
/// As Babeltrace 2 does, traces of one trace class (the same UUID, wherever they were found)
/// are one trace: the outputs of several `lttng snapshot record` of a session, or the chunks of
/// a rotated session. Their data streams are merged by stream instance, and a packet found in
/// several of them (overlapping snapshots) is read once. The merged trace has the metadata of
/// the copy declaring the most classes (on a tie, the first by path, compared byte by byte as
/// Babeltrace 2 orders them), the place of the first copy found, and its hostname as its
/// [`Trace::name`].
pub fn open_all<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<Arc<Trace>>> {
    let mut found: Vec<Trace> = Vec::new();
    for p in paths {
        let p = p.as_ref();
        for dir in discover(p)? {
            let mut t = Trace::open(&dir)?;
            let rel = dir.strip_prefix(p).unwrap_or(Path::new(""));
            if rel.components().next().is_some() {
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if !t.name.is_empty() {
                    t.name.push('/');
                }
                t.name.push_str(&rel.join("/"));
            }
            found.push(t);
        }
    }
    // Copies of one trace class, by their place in `found`.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, t) in found.iter().enumerate() {
        let same = t.class.uuid.and_then(|u| {
            groups
                .iter()
                .position(|g| found[g[0]].class.uuid == Some(u))
        });
        match same {
            Some(g) => groups[g].push(i),
            None => groups.push(vec![i]),
        }
    }
    let mut slots: Vec<Option<Trace>> = found.into_iter().map(Some).collect();
    let traces = groups.into_iter().map(|mut g| {
        g.sort_by(|&a, &b| {
            let path = |i: usize| slots[i].as_ref().map(|t| t.path.as_os_str().to_owned());
            path(a).cmp(&path(b))
        });
        merge_copies(g.iter().filter_map(|&i| slots[i].take()).collect())
    });
    // Groups are in order of their first copy found.
    Ok(traces
        .enumerate()
        .map(|(i, mut t)| {
            t.index = i;
            Arc::new(t)
        })
        .collect())
}

/// One trace from several copies of one trace class (see [`open_all`]), in Babeltrace 2's
/// order; a single copy as it is.
fn merge_copies(mut copies: Vec<Trace>) -> Trace {
    if copies.len() < 2 {
        return copies.pop().expect("a group has a trace");
    }
    let classes = |t: &Trace| {
        t.class.streams.len()
            + t.class
                .streams
                .values()
                .map(|s| s.events.len())
                .sum::<usize>()
    };
    // The first copy declaring the most classes: the others' are a part of its.
    let mut winner = 0;
    for (i, t) in copies.iter().enumerate() {
        if classes(t) > classes(&copies[winner]) {
            winner = i;
        }
    }
    let mut out = copies.remove(winner);
    // Babeltrace 2 names a trace read from several directories after its host alone.
    out.name = out.hostname().unwrap_or_default().to_owned();
    let mut joined = vec![false; out.streams.len()];
    for other in copies {
        out.errors.extend(other.errors.iter().cloned());
        for s in &other.streams {
            // Stream instance ids are per stream class; a stream without one is its own.
            let sc = other.stream_class_id(s.stream_class_id);
            let dest = s.stream_id.and_then(|id| {
                out.streams.iter().position(|d| {
                    d.stream_id == Some(id) && out.stream_class_id(d.stream_class_id) == sc
                })
            });
            match dest {
                Some(d) => {
                    out.streams[d].files.extend(s.files.iter().cloned());
                    joined[d] = true;
                }
                None => {
                    out.streams.push(s.clone());
                    joined.push(false);
                }
            }
        }
    }
    for (d, joined) in joined.into_iter().enumerate() {
        if !joined {
            continue;
        }
        // In order of their first packets; on a tie, as they came (the winner's first).
        let mut files: Vec<(Option<u64>, PathBuf)> = out.streams[d]
            .files
            .iter()
            .map(|f| {
                let begin = probe_first_packet(&out, f)
                    .ok()
                    .flatten()
                    .and_then(|p| p.ts_begin);
                (begin, f.clone())
            })
            .collect();
        files.sort_by_key(|(begin, _)| *begin);
        let s = &mut out.streams[d];
        s.files = files.into_iter().map(|(_, f)| f).collect();
        s.indexes = s.files.iter().map(|_| OnceLock::new()).collect();
        let packets = shared_packets_once(&out.layout, s);
        s.packets = packets;
    }
    out
}

/// The packets of a stream merged from several copies of a trace, as Babeltrace 2 reads them:
/// in order of their beginning times, a packet the same as one already listed (size, times
/// and sequence number) left out. None when that is every packet of every file in turn, or
/// when a file's packets cannot be listed (its read then reports what is wrong).
fn shared_packets_once(layout: &Layout, s: &StreamFiles) -> Option<Arc<[PacketRef]>> {
    let same = |a: &PacketEntry, b: &PacketEntry| {
        a.packet_bits == b.packet_bits
            && a.ts_begin == b.ts_begin
            && a.ts_end == b.ts_end
            && a.seq_num == b.seq_num
    };
    let mut list: Vec<(PacketEntry, PacketRef)> = Vec::new();
    let mut total = 0;
    for (file, path) in s.files.iter().enumerate() {
        let entries = file_packets(layout, path)?;
        total += entries.len();
        // Each goes before the first listed packet that does not begin earlier, unless it
        // is that packet.
        let mut merged = Vec::with_capacity(list.len() + entries.len());
        let mut old = list.into_iter().peekable();
        for e in entries {
            while let Some(o) = old.next_if(|(o, _)| o.ts_begin < e.ts_begin) {
                merged.push(o);
            }
            if old.peek().is_some_and(|(o, _)| same(o, &e)) {
                continue;
            }
            let at = PacketRef {
                file,
                offset: e.offset,
            };
            merged.push((e, at));
        }
        merged.extend(old);
        list = merged;
    }
    let in_turn = list.len() == total
        && list
            .windows(2)
            .all(|w| (w[0].1.file, w[0].1.offset) < (w[1].1.file, w[1].1.offset));
    if in_turn {
        return None;
    }
    Some(list.into_iter().map(|(_, at)| at).collect())
}

/// Every packet of stream file `path`: from its LTTng index when it has a usable one, else
/// read from the packets' headers and contexts. None when they cannot be read.
fn file_packets(layout: &Layout, path: &Path) -> Option<Vec<PacketEntry>> {
    if let FileIndex::Valid(entries) = FileIndex::load(path) {
        return Some(entries.to_vec());
    }
    let map = map_file(path, Reading::Start).ok()?;
    let data: &[u8] = map.as_deref().unwrap_or(&[]);
    let mut out = Vec::new();
    let mut offset = 0u64;
    while offset < data.len() as u64 {
        let e = index::entry_at(layout, path, data, offset).ok()?;
        if e.packet_bits < 8 {
            return None;
        }
        offset += e.packet_bits / 8;
        out.push(e);
    }
    Some(out)
}
