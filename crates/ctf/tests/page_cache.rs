//! Reading a stream file that is not cached leaves it cached in 2 MiB folios (see
//! `trace::map_file`), so that every later read maps it 2 MiB at a time.
//!
//! Depends on the kernel and file system (large folios in the page cache, transparent huge
//! pages not `never`): the test first reads a copy of the file the way that gets 2 MiB folios
//! where they exist, and checks nothing, saying so, where that copy gets none.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Drops the file's clean pages from the page cache.
fn evict(path: &Path) {
    let f = File::open(path).unwrap();
    f.sync_all().unwrap();
    // SAFETY: a valid open descriptor; the call only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise");
}

/// A read-only map of `path` with every page touched, `huge_pages` advised first.
fn map_and_touch(path: &Path, huge_pages: bool) -> memmap2::Mmap {
    let f = File::open(path).unwrap();
    // SAFETY: read-only map of a file this test owns and does not change.
    let m = unsafe { memmap2::Mmap::map(&f) }.unwrap();
    if huge_pages {
        let _ = m.advise(memmap2::Advice::HugePage);
    }
    let mut sum = 0u64;
    for i in (0..m.len()).step_by(4096) {
        sum = sum.wrapping_add(u64::from(m[i]));
    }
    std::hint::black_box(sum);
    m
}

/// Bytes of `path` a fresh mapping maps with PMD (2 MiB) entries once every page is touched.
fn pmd_mapped_bytes(path: &Path) -> u64 {
    let m = map_and_touch(path, false);
    let start = format!("{:x}-", m.as_ptr() as usize);
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    // The first such line after the mapping's own is its own (every mapping has one).
    smaps
        .lines()
        .skip_while(|l| !l.starts_with(&start))
        .find_map(|l| l.strip_prefix("FilePmdMapped:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn a_stream_read_from_disk_is_cached_in_huge_folios() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    // One CPU: one stream file of about 20 MiB.
    testkit::kernel_mix(&trace, 700_000, 1, 3);
    let stream = trace.join("chan_0");
    let len = std::fs::metadata(&stream).unwrap().len();
    assert!(len > 16 << 20, "stream of {len} bytes");

    let control = dir.path().join("control");
    std::fs::copy(&stream, &control).unwrap();
    evict(&control);
    // Read the way the kernel gives 2 MiB folios to, where it does.
    map_and_touch(&control, true);
    if pmd_mapped_bytes(&control) == 0 {
        eprintln!(
            "page_cache: this kernel or file system caches no 2 MiB folios here \
             (THP: {}); nothing to check",
            std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
                .unwrap_or_default()
                .trim()
        );
        return;
    }

    evict(&stream);
    let traces = ctf::open_all(&[trace]).unwrap();
    let mut events = 0u64;
    for mut r in traces.iter().flat_map(|t| t.readers()) {
        while let Some(m) = r.next() {
            events += u64::from(matches!(m, Ok(ctf::Message::Event)));
        }
    }
    assert!(events >= 700_000, "{events} events read");
    let huge = pmd_mapped_bytes(&stream);
    // All but the first 4 MiB or so (the start read when the trace was opened) and the tail.
    assert!(
        huge >= len / 2,
        "{huge} of {len} bytes cached in 2 MiB folios after a read from disk (control: {})",
        pmd_mapped_bytes(&control)
    );
}
