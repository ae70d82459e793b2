//! Decoding of ftrace ring-buffer pages (what `per_cpu/cpuN/trace_pipe_raw` returns), as
//! `events/header_page` and `events/header_event` describe them. Pure bytes in, records out.

use crate::format::PageLayout;

/// Page-header flag: events were lost before this page.
pub(crate) const MISSED_EVENTS: u64 = 1 << 31;
/// Page-header flag: the number of lost events is stored after the page data.
pub(crate) const MISSED_STORED: u64 = 1 << 30;
/// Mask of the data length in the commit field.
pub(crate) const COMMIT_MASK: u64 = (1 << 27) - 1;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;

/// Errors in a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// Shorter than its header, or its commit length exceeds the page.
    Truncated {
        /// Bytes of the page.
        len: usize,
        /// Bytes its header and commit length need.
        need: usize,
    },
    /// An event runs past the committed data.
    BadEvent {
        /// Offset of the event in the page.
        at: usize,
    },
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::Truncated { len, need } => {
                write!(f, "ring-buffer page of {len} bytes, needs {need}")
            }
            PageError::BadEvent { at } => write!(f, "ring-buffer event at byte {at} is cut off"),
        }
    }
}

impl std::error::Error for PageError {}

/// What a page header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageInfo {
    /// Timestamp of the page (base of the first delta).
    pub ts: u64,
    /// Bytes of committed event data.
    pub len: usize,
    /// Events were lost before this page.
    pub missed: bool,
    /// How many, when the kernel stored the count.
    pub missed_count: Option<u64>,
    /// Whether the page is full enough that more data may follow at once (the reader got a
    /// complete page rather than what was there so far).
    pub full: bool,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn uint_at(b: &[u8], at: usize, size: usize) -> Option<u64> {
    let s = b.get(at..at + size)?;
    Some(match size {
        4 => u32::from_le_bytes(s.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(s.try_into().ok()?),
        _ => return None,
    })
}

/// Reads the header of a page.
pub(crate) fn page_info(layout: &PageLayout, page: &[u8]) -> Result<PageInfo, PageError> {
    let hdr = layout.data_offset;
    let trunc = |need| PageError::Truncated {
        len: page.len(),
        need,
    };
    let ts = uint_at(page, layout.ts_offset, layout.ts_size).ok_or_else(|| trunc(hdr))?;
    let commit =
        uint_at(page, layout.commit_offset, layout.commit_size).ok_or_else(|| trunc(hdr))?;
    let len = (commit & COMMIT_MASK) as usize;
    if hdr + len > page.len() {
        return Err(trunc(hdr + len));
    }
    let missed = commit & MISSED_EVENTS != 0;
    let missed_count = if missed && commit & MISSED_STORED != 0 {
        uint_at(page, hdr + len, layout.commit_size)
    } else {
        None
    };
    // The kernel leaves room for the stored count; a page within a few bytes of the end is
    // full (the next event did not fit).
    let full = len + 64 >= layout.data_size;
    Ok(PageInfo {
        ts,
        len,
        missed,
        missed_count,
        full,
    })
}

/// Fixes an absolute timestamp (type 31), which holds only the low 59 bits, against the
/// current one.
fn fix_abs_ts(abs: u64, cur: u64) -> u64 {
    const MSB_SHIFT: u32 = 59;
    let msb = cur >> MSB_SHIFT << MSB_SHIFT;
    let mut ts = abs | msb;
    if ts < cur && cur - ts > 1 << (MSB_SHIFT - 1) {
        ts = ts.wrapping_add(1 << MSB_SHIFT);
    }
    ts
}

/// Decodes every data record of a page, calling `f(timestamp, record)` for each. The record
/// starts with the common fields (`common_type` u16, ...). Returns the page header.
pub fn decode_page(
    layout: &PageLayout,
    page: &[u8],
    mut f: impl FnMut(u64, &[u8]),
) -> Result<PageInfo, PageError> {
    let info = page_info(layout, page)?;
    let start = layout.data_offset;
    let end = start + info.len;
    let mut ts = info.ts;
    let mut at = start;
    while at + 4 <= end {
        let h = u32_at(page, at).ok_or(PageError::BadEvent { at })?;
        let type_len = h & 0x1f;
        let delta = (h >> 5) as u64;
        match type_len {
            TYPE_PADDING => {
                if delta == 0 {
                    // The rest of the page is empty.
                    break;
                }
                // A discarded event: skip it.
                let len = u32_at(page, at + 4).ok_or(PageError::BadEvent { at })? as usize;
                ts = ts.wrapping_add(delta);
                at += 4 + len;
            }
            TYPE_TIME_EXTEND => {
                let ext = u32_at(page, at + 4).ok_or(PageError::BadEvent { at })? as u64;
                ts = ts.wrapping_add((ext << TS_SHIFT) + delta);
                at += 8;
            }
            TYPE_TIME_STAMP => {
                let ext = u32_at(page, at + 4).ok_or(PageError::BadEvent { at })? as u64;
                ts = fix_abs_ts((ext << TS_SHIFT).wrapping_add(delta), ts);
                at += 8;
            }
            0 => {
                // Length in the next word, counting itself.
                let len = u32_at(page, at + 4).ok_or(PageError::BadEvent { at })? as usize;
                if len < 4 || at + 4 + len > end {
                    return Err(PageError::BadEvent { at });
                }
                ts = ts.wrapping_add(delta);
                f(ts, &page[at + 8..at + 4 + len]);
                at += 4 + len;
            }
            n => {
                let len = 4 * n as usize;
                if at + 4 + len > end {
                    return Err(PageError::BadEvent { at });
                }
                ts = ts.wrapping_add(delta);
                f(ts, &page[at + 4..at + 4 + len]);
                at += 4 + len;
            }
        }
    }
    Ok(info)
}

/// Builds pages byte by byte (for tests of the decoder and of what uses it).
#[derive(Debug, Clone)]
pub struct PageBuilder {
    layout: PageLayout,
    data: Vec<u8>,
    ts: u64,
    last: u64,
    missed: Option<Option<u64>>,
}

impl PageBuilder {
    /// A page whose header timestamp is `ts`.
    pub fn new(layout: PageLayout, ts: u64) -> Self {
        PageBuilder {
            layout,
            data: Vec::new(),
            ts,
            last: ts,
            missed: None,
        }
    }

    /// Marks the page as following lost events (with the count stored, or not).
    pub fn missed(mut self, count: Option<u64>) -> Self {
        self.missed = Some(count);
        self
    }

    fn header(&mut self, type_len: u32, delta: u64) {
        self.data
            .extend_from_slice(&(type_len | ((delta as u32) << 5)).to_le_bytes());
    }

    /// Appends a record at absolute time `ts` (a time-extend entry is added when the delta
    /// does not fit in 27 bits). `force_long` uses the type-0 form with an explicit length.
    pub fn record(mut self, ts: u64, payload: &[u8], force_long: bool) -> Self {
        let mut delta = ts - self.last;
        if delta >= 1 << TS_SHIFT {
            self.header(TYPE_TIME_EXTEND, delta & ((1 << TS_SHIFT) - 1));
            self.data
                .extend_from_slice(&((delta >> TS_SHIFT) as u32).to_le_bytes());
            delta = 0;
        }
        self.last = ts;
        let padded = payload.len().div_ceil(4) * 4;
        if force_long || padded > 4 * 28 || padded == 0 {
            self.header(0, delta);
            self.data
                .extend_from_slice(&((padded + 4) as u32).to_le_bytes());
        } else {
            self.header((padded / 4) as u32, delta);
        }
        self.data.extend_from_slice(payload);
        self.data
            .resize(self.data.len() + padded - payload.len(), 0);
        self
    }

    /// Appends an absolute-timestamp entry.
    pub fn absolute(mut self, ts: u64) -> Self {
        self.header(TYPE_TIME_STAMP, ts & ((1 << TS_SHIFT) - 1));
        self.data
            .extend_from_slice(&((ts >> TS_SHIFT) as u32).to_le_bytes());
        self.last = ts;
        self
    }

    /// Appends a discarded event (padding with a length) of `len` payload bytes.
    pub fn discarded(mut self, len: u32) -> Self {
        self.header(TYPE_PADDING, 1);
        self.last += 1;
        self.data.extend_from_slice(&len.to_le_bytes());
        self.data.resize(self.data.len() + len as usize - 4, 0);
        self
    }

    /// The page bytes (a full page, zero-padded).
    pub fn build(self) -> Vec<u8> {
        let l = self.layout;
        let mut page = vec![0u8; l.page_size()];
        page[l.ts_offset..l.ts_offset + 8].copy_from_slice(&self.ts.to_le_bytes());
        let mut commit = self.data.len() as u64;
        let d = l.data_offset;
        page[d..d + self.data.len()].copy_from_slice(&self.data);
        if let Some(count) = self.missed {
            commit |= MISSED_EVENTS;
            if let Some(c) = count {
                commit |= MISSED_STORED;
                let at = d + self.data.len();
                page[at..at + l.commit_size].copy_from_slice(&c.to_le_bytes()[..l.commit_size]);
            }
        }
        page[l.commit_offset..l.commit_offset + l.commit_size]
            .copy_from_slice(&commit.to_le_bytes()[..l.commit_size]);
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn layout() -> PageLayout {
        PageLayout {
            ts_offset: 0,
            ts_size: 8,
            commit_offset: 8,
            commit_size: 8,
            data_offset: 16,
            data_size: 4080,
        }
    }

    fn collect(page: &[u8]) -> (PageInfo, Vec<(u64, Vec<u8>)>) {
        let mut v = Vec::new();
        let info = decode_page(&layout(), page, |ts, r| v.push((ts, r.to_vec()))).unwrap();
        (info, v)
    }

    #[test]
    fn hand_made_page() {
        // Header ts 1000; event 1: type_len 2 (8 bytes), delta 5; event 2: time extend then a
        // type-0 event; then an empty padding ending the page.
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&1000u64.to_le_bytes());
        let mut d = Vec::new();
        d.extend_from_slice(&(2u32 | (5 << 5)).to_le_bytes());
        d.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        // Time extend: delta = (3 << 27) + 7.
        d.extend_from_slice(&(30u32 | (7 << 5)).to_le_bytes());
        d.extend_from_slice(&3u32.to_le_bytes());
        // Type 0, delta 1, length word 8 (itself + 4 payload bytes).
        d.extend_from_slice(&(1u32 << 5).to_le_bytes());
        d.extend_from_slice(&8u32.to_le_bytes());
        d.extend_from_slice(&[9, 9, 9, 9]);
        // Padding with delta 0: end.
        d.extend_from_slice(&29u32.to_le_bytes());
        let len = d.len();
        p[8..16].copy_from_slice(&(len as u64).to_le_bytes());
        p[16..16 + len].copy_from_slice(&d);
        let (info, ev) = collect(&p);
        assert_eq!(info.len, len);
        assert!(!info.missed && !info.full);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0], (1005, vec![1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(ev[1], (1005 + (3 << 27) + 7 + 1, vec![9, 9, 9, 9]));
    }

    #[test]
    fn builder_round_trip() {
        let page = PageBuilder::new(layout(), 10)
            .record(12, b"abcd", false)
            .discarded(12)
            .record(20 + (1 << 30), b"0123456789", true)
            .absolute(1 << 40)
            .record((1 << 40) + 3, &[7; 200], false)
            .build();
        let (_, ev) = collect(&page);
        let ts: Vec<u64> = ev.iter().map(|e| e.0).collect();
        assert_eq!(ts, vec![12, 20 + (1 << 30), (1 << 40) + 3]);
        assert_eq!(&ev[1].1[..10], b"0123456789");
        assert_eq!(ev[2].1.len(), 200);
    }

    /// A damaged page whose clock runs past 2^64 wraps around (what the counter does) instead
    /// of overflowing.
    #[test]
    fn timestamps_wrap_at_the_end_of_the_counter() {
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
        let mut d = Vec::new();
        // Two 4-byte events, deltas 1 and 5; then an absolute time of zero's low bits.
        d.extend_from_slice(&(1u32 | (1 << 5)).to_le_bytes());
        d.extend_from_slice(&[1, 2, 3, 4]);
        d.extend_from_slice(&(1u32 | (5 << 5)).to_le_bytes());
        d.extend_from_slice(&[5, 6, 7, 8]);
        d.extend_from_slice(&31u32.to_le_bytes());
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(&(1u32 | (1 << 5)).to_le_bytes());
        d.extend_from_slice(&[9, 9, 9, 9]);
        p[8..16].copy_from_slice(&(d.len() as u64).to_le_bytes());
        p[16..16 + d.len()].copy_from_slice(&d);
        let (_, ev) = collect(&p);
        let ts: Vec<u64> = ev.iter().map(|e| e.0).collect();
        assert_eq!(ts, vec![u64::MAX - 1, 3, 1]);
    }

    #[test]
    fn missed_events() {
        let page = PageBuilder::new(layout(), 1)
            .missed(Some(42))
            .record(2, b"abcd", false)
            .build();
        let (info, ev) = collect(&page);
        assert!(info.missed);
        assert_eq!(info.missed_count, Some(42));
        assert_eq!(ev.len(), 1);
        let page = PageBuilder::new(layout(), 1).missed(None).build();
        let info = page_info(&layout(), &page).unwrap();
        assert!(info.missed);
        assert_eq!(info.missed_count, None);
    }

    #[test]
    fn bad_pages() {
        assert!(page_info(&layout(), &[0u8; 8]).is_err());
        let mut p = vec![0u8; 4096];
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(page_info(&layout(), &p).is_err());
        // An event whose type-0 length runs past the data.
        let mut p = vec![0u8; 4096];
        p[8..16].copy_from_slice(&8u64.to_le_bytes());
        p[20..24].copy_from_slice(&400u32.to_le_bytes());
        assert!(decode_page(&layout(), &p, |_, _| {}).is_err());
    }

    #[test]
    fn abs_ts_fix() {
        assert_eq!(fix_abs_ts(5, 3), 5);
        let hi = 3u64 << 59;
        assert_eq!(fix_abs_ts(7, hi + 5), hi + 7);
    }
}
