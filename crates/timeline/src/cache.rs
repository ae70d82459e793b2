//! The model on disk: one file per set of traces, keyed by what the model was built from (the
//! traces' files, sizes and modification times, their UUIDs, the time map, the format), in
//! raw little-endian columns after a JSON description of the rows, with a CRC-32 at the end.
//! Written atomically (a temporary file renamed), readable by its owner only. A file that
//! does not match its key, is cut short or damaged is ignored: the model is built again.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use ctf::Trace;
use pipeline::ReadOptions;
use rayon::prelude::*;

use crate::store::{Column, Density, Labels, RawArrow, Starts, Store};
use crate::{Error, Timeline};

/// The format's version: any change to the model or its encoding changes it.
const VERSION: u32 = 3;
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

/// Little-endian writing to `W`, with the CRC-32 of what was written.
struct Out<W: Write> {
    w: W,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
}

impl<W: Write> Out<W> {
    fn new(w: W) -> Self {
        Out {
            w,
            crc: crc32fast::Hasher::new(),
            buf: Vec::with_capacity(1 << 16),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.crc.update(&self.buf);
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + b.len() > self.buf.capacity() {
            self.flush()?;
        }
        if b.len() > self.buf.capacity() {
            self.crc.update(b);
            return self.w.write_all(b);
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }
    fn u8(&mut self, v: u8) -> std::io::Result<()> {
        self.put(&[v])
    }
    fn u32(&mut self, v: u32) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn i64(&mut self, v: i64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.u64(b.len() as u64)?;
        self.put(b)
    }
    fn i64s(&mut self, v: &[i64]) -> std::io::Result<()> {
        self.u64(v.len() as u64)?;
        for c in v.chunks(4096) {
            if self.buf.len() + c.len() * 8 > self.buf.capacity() {
                self.flush()?;
            }
            for x in c {
                self.buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        Ok(())
    }
    /// Ends with the CRC of everything before it.
    fn finish(mut self) -> std::io::Result<W> {
        self.flush()?;
        let crc = self.crc.clone().finalize();
        self.w.write_all(&crc.to_le_bytes())?;
        Ok(self.w)
    }
}

/// Little-endian reading of the `left` bytes before a file's CRC, with the CRC-32 of what was
/// read; None at the end of the data.
struct In<R: Read> {
    r: R,
    left: u64,
    crc: crc32fast::Hasher,
}

impl<R: Read> In<R> {
    fn new(r: R, left: u64) -> Self {
        In {
            r,
            left,
            crc: crc32fast::Hasher::new(),
        }
    }
    /// The next `n` bytes, into `buf`.
    fn take_into(&mut self, n: usize, buf: &mut Vec<u8>) -> Option<()> {
        if n as u64 > self.left {
            return None;
        }
        buf.clear();
        buf.reserve_exact(n);
        // (Not `read_exact` into a zeroed buffer: the zeroing would cost as much as the read.)
        if (&mut self.r).take(n as u64).read_to_end(buf).ok()? != n {
            return None;
        }
        self.crc.update(buf);
        self.left -= n as u64;
        Some(())
    }
    fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
        if (N as u64) > self.left {
            return None;
        }
        let mut b = [0u8; N];
        self.r.read_exact(&mut b).ok()?;
        self.crc.update(&b);
        self.left -= N as u64;
        Some(b)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.arr::<1>()?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.arr()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.arr()?))
    }
    fn len(&mut self, unit: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // A length longer than what is left is damage, not an allocation to try.
        (n.checked_mul(unit)? as u64 <= self.left).then_some(n)
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.len(1)?;
        let mut b = Vec::new();
        self.take_into(n, &mut b)?;
        Some(b)
    }
    fn i64s(&mut self) -> Option<Vec<i64>> {
        let n = self.len(8)?;
        let mut b = Vec::new();
        self.take_into(n * 8, &mut b)?;
        Some(
            b.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        )
    }
}

/// Interval starts as the first one, then the differences (positive: starts increase) in 4
/// bytes, or `u32::MAX` and 8 bytes for a larger one: most of a column in half the bytes.
fn pack_starts(starts: &Starts) -> Vec<u8> {
    let mut b = Vec::with_capacity(starts.len() * 4 + 8);
    let Some(first) = starts.first() else {
        return b;
    };
    b.extend_from_slice(&first.to_le_bytes());
    let mut prev = first;
    for t in starts.iter().skip(1) {
        // (Unsigned: from a start far below zero to one far above is more than `i64::MAX`.)
        let d = t.wrapping_sub(prev) as u64;
        prev = t;
        match u32::try_from(d) {
            Ok(d) if d != u32::MAX => b.extend_from_slice(&d.to_le_bytes()),
            _ => {
                b.extend_from_slice(&u32::MAX.to_le_bytes());
                b.extend_from_slice(&d.to_le_bytes());
            }
        }
    }
    b
}

/// The `n` starts [`pack_starts`] packed; None unless they increase and fill `b` exactly.
fn unpack_starts(b: &[u8], n: usize) -> Option<Starts> {
    let mut v = Starts::default();
    v.reserve(n);
    let mut b = b;
    let mut next = |k: usize| -> Option<&[u8]> {
        let (a, rest) = b.split_at_checked(k)?;
        b = rest;
        Some(a)
    };
    if n > 0 {
        let mut t = i64::from_le_bytes(next(8)?.try_into().ok()?);
        v.push(t);
        for _ in 1..n {
            let d = match u32::from_le_bytes(next(4)?.try_into().ok()?) {
                u32::MAX => u64::from_le_bytes(next(8)?.try_into().ok()?),
                d => d as u64,
            };
            let later = t.wrapping_add(d as i64);
            if later <= t {
                return None;
            }
            t = later;
            v.push(t);
        }
    }
    b.is_empty().then_some(v)
}

/// Labels in 2 bytes each when all fit, else 4, after a byte giving the width.
fn pack_labels(labels: &Labels) -> Vec<u8> {
    let wide = labels.max() > u16::MAX as u32;
    let n = labels.len();
    let mut b = Vec::with_capacity(1 + n * if wide { 4 } else { 2 });
    b.push(if wide { 4 } else { 2 });
    for i in 0..n {
        let l = labels.at(i);
        if wide {
            b.extend_from_slice(&l.to_le_bytes());
        } else {
            b.extend_from_slice(&(l as u16).to_le_bytes());
        }
    }
    b
}

/// The `n` labels [`pack_labels`] packed.
fn unpack_labels(b: &[u8], n: usize) -> Option<Labels> {
    let (&w, rest) = b.split_first()?;
    let mut v = Labels::default();
    match w {
        2 if rest.len() == 2 * n => {
            v = Labels::Narrow(
                rest.chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect(),
            )
        }
        4 if rest.len() == 4 * n => {
            for c in rest.chunks_exact(4) {
                v.push(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
        }
        _ => return None,
    }
    Some(v)
}

fn encode<W: Write>(w: W, key: &str, tl: &Timeline) -> std::io::Result<W> {
    let s = &tl.store;
    let mut o = Out::new(w);
    o.put(MAGIC)?;
    o.u32(VERSION)?;
    o.bytes(key.as_bytes())?;
    let meta = serde_json::to_vec(tl).map_err(std::io::Error::other)?;
    o.bytes(&meta)?;
    o.u64(s.strings.len() as u64)?;
    for x in &s.strings {
        o.bytes(x.as_bytes())?;
    }
    o.u64(s.cols.len() as u64)?;
    for c in &s.cols {
        o.u8(c.family)?;
        o.i64(c.end)?;
        o.u64(c.starts.len() as u64)?;
        o.bytes(&pack_starts(&c.starts))?;
        o.bytes(&c.states)?;
        o.bytes(&pack_labels(&c.labels))?;
    }
    o.u64(s.arrows.len() as u64)?;
    for a in &s.arrows {
        o.i64(a.start)?;
        o.i64(a.end)?;
        o.u32(a.source)?;
        o.u32(a.target)?;
    }
    o.u64(s.density.len() as u64)?;
    for d in &s.density {
        o.u64(d.events)?;
        o.i64(d.last)?;
        o.i64s(&d.marks)?;
        o.u64(d.lost.len() as u64)?;
        for &(t, c) in &d.lost {
            o.i64(t)?;
            o.u64(c)?;
        }
    }
    o.finish()
}

/// Bytes of columns read before they are decoded (in parallel): a bound on what the load
/// holds besides the model.
const BATCH: usize = 16 << 20;

/// A column as read: family, end, intervals, packed starts, states, packed labels.
type RawColumn = (u8, i64, usize, Vec<u8>, Vec<u8>, Vec<u8>);

fn decode_columns(raw: Vec<RawColumn>, strings: usize) -> Option<Vec<Column>> {
    raw.into_par_iter()
        .map(|(family, end, k, starts, states, labels)| {
            let starts = unpack_starts(&starts, k)?;
            let labels = unpack_labels(&labels, k)?;
            if k > 0 && labels.max() as usize >= strings {
                return None;
            }
            let mut c = Column {
                family,
                starts,
                states,
                labels,
                end,
                ..Default::default()
            };
            c.index();
            Some(c)
        })
        .collect()
}

/// Reads the model: the file is read in turn, never held whole, and its CRC checked at the end
/// (what is decoded before it must not fail on damaged values).
fn decode<R: Read>(r: R, size: u64, key: &str) -> Option<Timeline> {
    let mut i = In::new(r, size.checked_sub(4)?);
    if i.arr::<8>()? != *MAGIC || i.u32()? != VERSION || i.bytes()? != key.as_bytes() {
        return None;
    }
    let mut tl: Timeline = serde_json::from_slice(&i.bytes()?).ok()?;
    let mut s = Store::default();
    let n = i.len(8)?;
    for _ in 0..n {
        s.strings
            .push(Arc::from(std::str::from_utf8(&i.bytes()?).ok()?));
    }
    let n = i.len(8)?;
    if n != tl.rows.len() {
        return None;
    }
    let strings = s.strings.len();
    let mut raw = Vec::new();
    let mut held = 0;
    for _ in 0..n {
        let family = i.u8()?;
        let end = i.i64()?;
        let k = usize::try_from(i.u64()?).ok()?;
        let starts = i.bytes()?;
        let states = i.bytes()?;
        let labels = i.bytes()?;
        if states.len() != k {
            return None;
        }
        held += starts.len() + states.len() + labels.len();
        raw.push((family, end, k, starts, states, labels));
        if held >= BATCH {
            s.cols
                .extend(decode_columns(std::mem::take(&mut raw), strings)?);
            held = 0;
        }
    }
    s.cols.extend(decode_columns(raw, strings)?);
    let n = i.len(24)?;
    for _ in 0..n {
        s.arrows.push(RawArrow {
            start: i.i64()?,
            end: i.i64()?,
            source: i.u32()?,
            target: i.u32()?,
        });
    }
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
    if i.left != 0 {
        return None;
    }
    let mut crc = [0u8; 4];
    i.r.read_exact(&mut crc).ok()?;
    if i.crc.finalize() != u32::from_le_bytes(crc) {
        return None;
    }
    // Nothing read is trusted before the CRC check: what is derived from it comes after.
    s.max_arrow = s
        .arrows
        .iter()
        .map(|a| a.end.saturating_sub(a.start))
        .max()
        .unwrap_or(0);
    let rows = tl.rows.len() as u32;
    if tl.rows.iter().enumerate().any(|(k, r)| {
        r.id as usize != k
            || r.parent.is_some_and(|p| p >= rows)
            || r.host as usize >= tl.hosts.len()
    }) || s
        .arrows
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
    let f = fs::File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    decode(std::io::BufReader::with_capacity(1 << 20, f), size, key)
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
    ctf::private_files::create_dir_all(dir).map_err(err)?;
    let tmp = tempfile::Builder::new()
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
    // Not synced: a file cut short by a crash fails its check and is built again.
    let tmp = encode(std::io::BufWriter::with_capacity(1 << 20, tmp), key, tl)
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::In;

    fn starts_of(v: &[i64]) -> super::Starts {
        let mut s = super::Starts::default();
        for &t in v {
            s.push(t);
        }
        s
    }

    #[test]
    fn packed_columns() {
        use super::{pack_labels, pack_starts, unpack_labels, unpack_starts};
        for starts in [
            vec![],
            vec![-5],
            vec![1, 2, 3 + u32::MAX as i64, 4 + 2 * u32::MAX as i64, i64::MAX],
            vec![i64::MIN, 0, 10],
        ] {
            let b = pack_starts(&starts_of(&starts));
            let back = unpack_starts(&b, starts.len()).expect("unpacked");
            assert_eq!(back.iter().collect::<Vec<_>>(), starts);
            assert_eq!(unpack_starts(&b, starts.len() + 1), None);
            if !b.is_empty() {
                assert_eq!(unpack_starts(&b[..b.len() - 1], starts.len()), None);
            }
        }
        // Starts that do not increase are damage.
        assert_eq!(unpack_starts(&pack_starts(&starts_of(&[5, 5])), 2), None);
        for labels in [vec![], vec![0, 1, 65535], vec![0, 65536, 7]] {
            let mut l = super::Labels::default();
            labels.iter().for_each(|&x| l.push(x));
            let b = pack_labels(&l);
            let back = unpack_labels(&b, labels.len()).expect("unpacked");
            assert_eq!(
                (0..back.len()).map(|i| back.at(i)).collect::<Vec<_>>(),
                labels
            );
            assert_eq!(unpack_labels(&b, labels.len() + 1), None);
        }
    }

    #[test]
    fn lengths_beyond_the_data_are_refused() {
        let mut b = Vec::new();
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        let read = |b: &[u8]| In::new(b, b.len() as u64).i64s();
        assert!(read(&b).is_none());
        let mut b = Vec::new();
        b.extend_from_slice(&3u64.to_le_bytes());
        b.extend_from_slice(&[0; 16]);
        assert!(read(&b).is_none());
        b.extend_from_slice(&[0; 8]);
        assert_eq!(read(&b), Some(vec![0, 0, 0]));
    }
}
