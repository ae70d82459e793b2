//! Progress of a read, reported about every hundredth of its time range.

/// Where a read stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressPoint {
    /// The time reached (ns, on the read's time line).
    pub ts: i64,
    /// The start of the range the read covers: its first event.
    pub begin: i64,
    /// The end of the range the read covers: its end or, if before, the streams' last time.
    pub end: i64,
    /// Events read so far, those no sink needed included.
    pub events: u64,
}

impl ProgressPoint {
    /// The part of the range read, in `[0, 1]`.
    pub fn fraction(&self) -> f64 {
        if self.end <= self.begin {
            return 1.0;
        }
        let done = (self.ts as i128 - self.begin as i128) as f64;
        (done / (self.end as i128 - self.begin as i128) as f64).clamp(0.0, 1.0)
    }
}

/// Told how far a read has gone: about every hundredth of its range, and at its end.
pub trait Progress: Send + Sync {
    /// The read reached `point`.
    fn at(&self, point: ProgressPoint);
    /// The read ended, `events` events read (a read that met a loss in a lossless pass does
    /// not end: the pass is made again).
    fn done(&self, events: u64);
}
