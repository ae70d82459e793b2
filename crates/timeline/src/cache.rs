//! The model on disk: one file per set of traces, keyed by what the model was built from (the
//! traces' files, sizes and modification times, their UUIDs, the time map, the format), in
//! raw little-endian columns after a JSON description of the rows, with a CRC-32 at the end.
//! Written atomically (a temporary file renamed), readable by its owner only. A file that
//! does not match its key, is cut short or damaged is ignored: the model is built again.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use ctf::Trace;
use pipeline::ReadOptions;

use crate::store::{Column, Density, RawArrow, Store};
use crate::{Error, Timeline};

/// The format's version: any change to the model or its encoding changes it.
const VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"TKTLINE\0";

/// Every file that makes the traces, with its size and modification time.
fn files(traces: &[Arc<Trace>]) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for t in traces {
        v.push(t.path.join("metadata"));
        for s in &t.streams {
            v.extend(s.files.iter().cloned());
        }
    }
    v
}

fn absolute(p: &Path) -> std::path::PathBuf {
    fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The key of a model of `traces` read with `read`.
pub(crate) fn key(traces: &[Arc<Trace>], read: &ReadOptions) -> String {
    use std::fmt::Write as _;
    let mut k = format!("tracekit timeline v{VERSION}\n");
    for t in traces {
        let _ = writeln!(
            k,
            "trace {} {:?} {}",
            absolute(&t.path).display(),
            t.class.uuid,
            t.index
        );
        if let Some(m) = &read.time_map {
            // The time map is known by what it does: at a spread of times.
            for ns in [0i64, 1 << 40, 1 << 50, 1 << 60, i64::MAX / 2] {
                let _ = write!(k, " {}", m.map(t.index, ns));
            }
            k.push('\n');
        }
    }
    for f in files(traces) {
        let (size, mtime) = match fs::metadata(&f) {
            Ok(m) => (
                m.len(),
                m.modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos()),
            ),
            Err(_) => (u64::MAX, 0),
        };
        let _ = writeln!(k, "file {} {size} {mtime}", absolute(&f).display());
    }
    k
}

/// A hash of the traces' paths, naming their cache file.
pub(crate) fn path_hash(traces: &[Arc<Trace>]) -> u64 {
    let mut h = crc32fast::Hasher::new();
    let mut g = crc32fast::Hasher::new_with_initial(0x5bd1_e995);
    for t in traces {
        let p = absolute(&t.path);
        let b = p.as_os_str().as_encoded_bytes();
        h.update(b);
        h.update(&[0]);
        g.update(b);
        g.update(&[1]);
    }
    (h.finalize() as u64) << 32 | g.finalize() as u64
}

/// Little-endian writing.
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn i64s(&mut self, v: &[i64]) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * 8);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Little-endian reading; None at the end of the data.
struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn len(&mut self, unit: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // A length longer than what is left is damage, not an allocation to try.
        (n.checked_mul(unit)? <= self.0.len()).then_some(n)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn i64s(&mut self) -> Option<Vec<i64>> {
        let n = self.len(8)?;
        let b = self.take(n * 8)?;
        Some(
            b.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        )
    }
    fn u32s(&mut self) -> Option<Vec<u32>> {
        let n = self.len(4)?;
        let b = self.take(n * 4)?;
        Some(
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        )
    }
}

fn encode(key: &str, tl: &Timeline) -> Vec<u8> {
    let s = &tl.store;
    let mut o = Out(Vec::with_capacity(s.memory() + 4096));
    o.0.extend_from_slice(MAGIC);
    o.u32(VERSION);
    o.bytes(key.as_bytes());
    let meta = serde_json::to_vec(tl).unwrap_or_default();
    o.bytes(&meta);
    o.u64(s.strings.len() as u64);
    for x in &s.strings {
        o.bytes(x.as_bytes());
    }
    o.u64(s.cols.len() as u64);
    for c in &s.cols {
        o.u8(c.family);
        o.i64(c.end);
        o.i64s(&c.starts);
        o.bytes(&c.states);
        o.u32s(&c.labels);
    }
    o.u64(s.arrows.len() as u64);
    for a in &s.arrows {
        o.i64(a.start);
        o.i64(a.end);
        o.u32(a.source);
        o.u32(a.target);
    }
    o.u64(s.density.len() as u64);
    for d in &s.density {
        o.u64(d.events);
        o.i64(d.last);
        o.i64s(&d.marks);
        o.u64(d.lost.len() as u64);
        for &(t, c) in &d.lost {
            o.i64(t);
            o.u64(c);
        }
    }
    let crc = crc32fast::hash(&o.0);
    o.u32(crc);
    o.0
}

fn decode(data: &[u8], key: &str) -> Option<Timeline> {
    let (body, crc) = data.split_at(data.len().checked_sub(4)?);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().ok()?) {
        return None;
    }
    let mut i = In(body);
    if i.take(MAGIC.len())? != MAGIC || i.u32()? != VERSION || i.bytes()? != key.as_bytes() {
        return None;
    }
    let mut tl: Timeline = serde_json::from_slice(i.bytes()?).ok()?;
    let mut s = Store::default();
    let n = i.len(8)?;
    for _ in 0..n {
        s.strings
            .push(Arc::from(std::str::from_utf8(i.bytes()?).ok()?));
    }
    let n = i.len(8)?;
    if n != tl.rows.len() {
        return None;
    }
    for _ in 0..n {
        let family = i.u8()?;
        let end = i.i64()?;
        let starts = i.i64s()?;
        let states = i.bytes()?.to_vec();
        let labels = i.u32s()?;
        if states.len() != starts.len()
            || labels.len() != starts.len()
            || labels.iter().any(|&l| l as usize >= s.strings.len())
            || starts.windows(2).any(|w| w[0] >= w[1])
        {
            return None;
        }
        let mut c = Column {
            family,
            starts,
            states,
            labels,
            end,
            busy: Vec::new(),
        };
        c.index();
        s.cols.push(c);
    }
    let n = i.len(24)?;
    for _ in 0..n {
        s.arrows.push(RawArrow {
            start: i.i64()?,
            end: i.i64()?,
            source: i.u32()?,
            target: i.u32()?,
        });
    }
    s.max_arrow = s.arrows.iter().map(|a| a.end - a.start).max().unwrap_or(0);
    let n = i.len(16)?;
    for _ in 0..n {
        let events = i.u64()?;
        let last = i.i64()?;
        let marks = i.i64s()?;
        let m = i.len(16)?;
        let mut lost = Vec::with_capacity(m);
        for _ in 0..m {
            lost.push((i.i64()?, i.u64()?));
        }
        s.density.push(Density {
            marks,
            events,
            last,
            lost,
        });
    }
    let rows = tl.rows.len() as u32;
    if !i.0.is_empty()
        || tl.rows.iter().enumerate().any(|(k, r)| {
            r.id as usize != k
                || r.parent.is_some_and(|p| p >= rows)
                || r.host as usize >= tl.hosts.len()
        })
        || s.arrows
            .iter()
            .any(|a| a.source >= rows || a.target >= rows)
    {
        return None;
    }
    s.derive(&tl.rows, tl.hosts.len());
    tl.store = Arc::new(s);
    Some(tl)
}

/// The model cached at `path` under `key`, if the file is there, whole and for this key.
pub(crate) fn load(path: &Path, key: &str) -> Option<Timeline> {
    let data = fs::read(path).ok()?;
    decode(&data, key)
}

/// Saves `tl` at `path` under `key`: written to a temporary file beside it, then renamed, so
/// that a reader never sees half a file; the directory is made private (0700) when created,
/// the file readable by its owner only (0600).
pub(crate) fn save(path: &Path, key: &str, tl: &Timeline) -> Result<(), Error> {
    let err = |source| Error::Cache {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir).map_err(err)?;
    let data = encode(key, tl);
    let mut tmp = tempfile::Builder::new()
        .prefix(".timeline-")
        .tempfile_in(dir)
        .map_err(err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(err)?;
    }
    tmp.write_all(&data).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::In;

    #[test]
    fn lengths_beyond_the_data_are_refused() {
        let mut b = Vec::new();
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(In(&b).i64s().is_none());
        let mut b = Vec::new();
        b.extend_from_slice(&3u64.to_le_bytes());
        b.extend_from_slice(&[0; 16]);
        assert!(In(&b).i64s().is_none());
        b.extend_from_slice(&[0; 8]);
        assert_eq!(In(&b).i64s(), Some(vec![0, 0, 0]));
    }
}
