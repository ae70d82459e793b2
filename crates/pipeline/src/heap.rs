//! Heap set-up for a short-lived process that builds megabytes of small structures (the
//! `tracekit` binary calls [`tune`] first thing).
//!
//! Opening a real LTTng kernel trace builds ~5 MB of tokens, syntax tree and layouts for its
//! ~1,200 event classes, and an analysis of many threads builds tables as large. On 4 KiB
//! pages that is over a thousand page faults, and here a fault costs ~3 µs of kernel time
//! (zeroing, memory-cgroup charge): more than the instructions of the whole metadata parse.
//! So the main heap is grown in one large step and backed by transparent huge pages where
//! the kernel offers them (`always` or `madvise` mode), and memory that is freed stays in the
//! heap for the next allocation instead of going back to the kernel and being faulted in
//! again. glibc's `glibc.malloc.hugetlb=1` tunable does much the same, but only through the
//! environment.
//!
//! Measured on `many-threads` (311 KB of metadata, 1,181 event classes): opening it 1,581 →
//! 154 page faults, 11.2 → 7.5 ms; `analyze cputop` 26.2 → 17.1 ms, `syscallstats` 69.8 →
//! 52.8 ms (bench/README.md). The cost: resident memory grows by whole 2 MiB pages (3–13 MB
//! more at peak here). Where no huge page is free, the kernel falls back to small pages.

/// How much the main heap grows at once (address space only: untouched pages cost nothing).
const HEAP_STEP: usize = 64 << 20;
/// Transparent huge page size on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;
/// The block that makes the heap grow (more than its free top at start, less than the
/// mmap threshold).
const GROW_BLOCK: usize = 1 << 20;

/// Applies the set-up; does nothing where it does not apply (other C libraries, no THP).
/// To be called first thing in `main`, before other threads start.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt, sbrk(0) (a query), malloc/free of our own block and madvise on the
    // heap's own pages (advice only: the contents are untouched) are sound at any time; no
    // other thread exists yet.
    unsafe {
        // Every thread allocates from the main heap (the huge pages are there); the
        // allocating threads are a few workers, whose allocations are rare.
        libc::mallopt(libc::M_ARENA_MAX, 1);
        // Large blocks from the heap too, not from a fresh mapping each (faulted anew).
        libc::mallopt(libc::M_MMAP_THRESHOLD, (HEAP_STEP / 2) as libc::c_int);
        // Freed memory is kept for reuse rather than returned.
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_TOP_PAD, HEAP_STEP as libc::c_int);
        // A block larger than the heap's free top makes it grow by the pad now.
        // (`black_box`: an unused malloc/free pair may be optimised away.)
        let grow = std::hint::black_box(libc::malloc(GROW_BLOCK));
        libc::free(grow);
        let end = libc::sbrk(0) as usize;
        let top = end.wrapping_sub(libc::mallinfo2().keepcost);
        if end == usize::MAX || top >= end {
            return;
        }
        // A 2 MiB range gets a huge page only if none of its pages was touched before:
        // glibc wrote a chunk header at `top` and another right after the block. Huge pages
        // start at the first boundary past both, and the space before it is given to a block
        // that is never used (untouched, it costs no memory), so that the program's
        // allocations start on the boundary.
        let start = (top + GROW_BLOCK + 4096).next_multiple_of(HUGE_PAGE);
        let huge_end = end & !(HUGE_PAGE - 1);
        if huge_end <= start {
            return;
        }
        // Chunk size = request + 8, rounded up to 16: this one ends 64 bytes before `start`.
        let filler = std::hint::black_box(libc::malloc(start - 64 - top - 8));
        if filler.is_null() {
            return;
        }
        libc::madvise(
            start as *mut libc::c_void,
            huge_end - start,
            libc::MADV_HUGEPAGE,
        );
    }
}
