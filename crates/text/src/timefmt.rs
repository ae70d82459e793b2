//! Wall-clock rendering of timestamps and parsing of Babeltrace's `--begin`/`--end` syntax.

use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::put::{eight_digits, four_digits, nine_digits, ASCII_ZEROS};

/// Renders ns-since-epoch timestamps as `HH:MM:SS.nnnnnnnnn` in UTC or the local time zone
/// (the `TZ` variable, as Babeltrace).
pub struct TimeFormatter {
    tz: TimeZone,
    cached_sec: Option<i64>,
    cached_hms: [u8; 8],
    /// The stamp of the second that [`Self::stamp`] last wrote, and that second's first ns:
    /// within it, a stamp only needs its fraction.
    stamp_second: Option<(i64, [u8; STAMP_LEN])>,
    /// The last stamp, and its time in blocks of [`BLOCK_NS`] ([`NO_BLOCK`] when the next
    /// stamp must be made whole): a stamp in the same block differs only in its last five
    /// digits.
    last: [u8; STAMP_LEN],
    last_block: u64,
}

/// The time a stamp's last five digits span: the events of a stream are mostly less than
/// 10 µs apart, and nearly all of them less than 100 µs.
const BLOCK_NS: u64 = 100_000;
/// A block no stamp falls in.
const NO_BLOCK: u64 = u64::MAX;
/// Times from this one on are stamped whole: their block, as that of a time cast from a
/// negative one, could be that of a time far away.
const BLOCK_LIMIT: i64 = i64::MAX / BLOCK_NS as i64 * BLOCK_NS as i64;

/// The time zone babeltrace2 shows times in: UTC with `--clock-gmt`, else the system's
/// (`TZ`). Finding the system's reads files: once per command.
pub fn time_zone(gmt: bool) -> TimeZone {
    if gmt || tz_is_utc(std::env::var_os("TZ").as_deref()) {
        TimeZone::UTC
    } else {
        TimeZone::system()
    }
}

/// Whether `TZ` names UTC outright (`TZ=UTC`, as the benchmarks and many scripts set it):
/// then no look-up is needed, where jiff's look-up of a name first lists the whole
/// time-zone database (a walk of `/usr/share/zoneinfo`). glibc reads `UTC` as the zone file
/// of that name, which is UTC, or, without it, as UTC all the same.
fn tz_is_utc(tz: Option<&std::ffi::OsStr>) -> bool {
    tz.is_some_and(|t| t == "UTC" || t == "UTC0")
}

/// Looks the local time zone up once, so that later look-ups ([`time_zone`]) find it made.
pub(crate) fn local_time_zone_warm_up() {
    let _ = time_zone(false);
}

impl TimeFormatter {
    /// Times in UTC with `gmt`, in the local time zone otherwise.
    pub fn new(gmt: bool) -> Self {
        TimeFormatter::with_tz(time_zone(gmt))
    }

    /// A formatter for time zone `tz`.
    pub fn with_tz(tz: TimeZone) -> Self {
        TimeFormatter {
            tz,
            cached_sec: None,
            cached_hms: *b"00:00:00",
            stamp_second: None,
            last: [0; STAMP_LEN],
            last_block: NO_BLOCK,
        }
    }

    /// The time zone used.
    pub fn tz(&self) -> &TimeZone {
        &self.tz
    }

    /// `HH:MM:SS` of second `sec` since the epoch (cached: consecutive calls mostly share it).
    #[inline]
    fn hms(&mut self, sec: i64) -> &[u8; 8] {
        if self.cached_sec != Some(sec) {
            self.cached_sec = Some(sec);
            let hms = Timestamp::from_second(sec)
                .map(|t| t.to_zoned(self.tz.clone()).strftime("%H:%M:%S").to_string())
                .unwrap_or_else(|_| "??:??:??".into());
            if hms.len() == 8 {
                self.cached_hms.copy_from_slice(hms.as_bytes());
            }
        }
        &self.cached_hms
    }

    /// Appends `HH:MM:SS.nnnnnnnnn` for `ns` since the epoch.
    /// A time before the epoch is written as babeltrace2 writes all but the first one it
    /// meets (see [`crate::print`]): the time of day of its distance to the epoch.
    pub fn write_time(&mut self, out: &mut Vec<u8>, ns: i64) {
        let abs = ns.unsigned_abs();
        let sec = (abs / 1_000_000_000) as i64;
        let frac = abs % 1_000_000_000;
        let mut a = [0u8; 18];
        a[..8].copy_from_slice(self.hms(sec));
        a[8] = b'.';
        nine_digits(&mut a[9..18], frac as u32);
        out.extend_from_slice(&a);
    }

    /// Appends `YYYY-MM-DD`, the date of `ns` since the epoch in the formatter's time zone.
    /// A time before the epoch gets the date of its distance to the epoch, as in
    /// [`Self::write_time`].
    pub fn write_date(&mut self, out: &mut Vec<u8>, ns: i64) {
        let date = Timestamp::from_second((ns.unsigned_abs() / 1_000_000_000) as i64)
            .map(|t| t.to_zoned(self.tz.clone()).strftime("%Y-%m-%d").to_string())
            .unwrap_or_else(|_| "????-??-??".into());
        out.extend_from_slice(date.as_bytes());
    }

    /// The stamp of an event at `ns`: `[HH:MM:SS.nnnnnnnnn] (+?.?????????) `, whose bytes
    /// [`DELTA_AT`].. hold the delta from the previous event, here the first event's
    /// placeholder. Workers stamp their own events; only the merging thread knows the previous
    /// event, and it overwrites the placeholder ([`short_delta`], [`write_delta`]).
    #[inline]
    pub fn stamp(&mut self, ns: i64) -> &[u8; STAMP_LEN] {
        // After the first stamp of a block, only the last five digits change. A negative
        // time's block, of the time as unsigned, is above any the last stamp may be in.
        let block = ns as u64 / BLOCK_NS;
        if block == self.last_block {
            let lo = (ns as u64 - block * BLOCK_NS) as usize;
            let (hi, lo) = (lo / 10_000, lo % 10_000);
            self.last[14] = b'0' + hi as u8;
            self.last[15..19].copy_from_slice(&four_digits(lo).to_le_bytes());
        } else {
            self.new_stamp_block(ns);
        }
        &self.last
    }

    #[inline(never)]
    fn new_stamp_block(&mut self, ns: i64) {
        if ns < 0 {
            return self.negative_stamp(ns);
        }
        let (start, mut a) = match self.stamp_second {
            Some((start, a)) if ns.wrapping_sub(start) as u64 <= 999_999_999 && ns >= start => {
                (start, a)
            }
            _ => self.new_stamp_second(ns),
        };
        nine_digits(&mut a[10..19], ns.wrapping_sub(start) as u32);
        self.last = a;
        self.last_block = if (0..BLOCK_LIMIT).contains(&ns) {
            ns as u64 / BLOCK_NS
        } else {
            NO_BLOCK
        };
    }

    /// The stamp of a time before the epoch, as [`Self::write_time`] writes it.
    #[cold]
    fn negative_stamp(&mut self, ns: i64) {
        let mut a = *b"[HH:MM:SS.nnnnnnnnn] (+?.?????????) ";
        let mut t = Vec::with_capacity(18);
        self.write_time(&mut t, ns);
        a[1..19].copy_from_slice(&t);
        self.last = a;
        self.last_block = NO_BLOCK;
    }

    #[cold]
    fn new_stamp_second(&mut self, ns: i64) -> (i64, [u8; STAMP_LEN]) {
        let sec = ns.div_euclid(1_000_000_000);
        let mut a = *b"[HH:MM:SS.nnnnnnnnn] (+?.?????????) ";
        a[1..9].copy_from_slice(self.hms(sec));
        // The first second of the time line starts before `i64::MIN`: not kept, as its
        // wrapped start would take in times at the other end.
        let start = sec.wrapping_mul(1_000_000_000);
        self.stamp_second = sec.checked_mul(1_000_000_000).map(|s| (s, a));
        (start, a)
    }
}

/// Length of a [`TimeFormatter::stamp`].
pub const STAMP_LEN: usize = 36;
/// Where the delta starts in a stamp.
pub const DELTA_AT: usize = 22;
/// Length of the delta of a stamp, up to and with the space after its parenthesis, when it is
/// below 10 s in magnitude (and of the first event's `+?.?????????) `).
pub const DELTA_LEN: usize = 14;

/// `+S.nnnnnnnnn) ` for a delta `d` (ns) below 10 s in magnitude, the usual case, as one
/// fixed-size block; None for longer ones.
#[inline]
pub fn short_delta(d: i64) -> Option<[u8; DELTA_LEN]> {
    // Merged events of a busy trace are mostly less than 0.1 s apart: eight digits after a
    // constant `+0.0`, with no sign to choose and no division by 10^9 or 10^8.
    if (d as u64) < 10_000 {
        // Most are even below 10 µs: four digits, two pairs from the table.
        let mut a = *b"+0.00000nnnn) ";
        a[8..12].copy_from_slice(&four_digits(d as usize).to_le_bytes());
        return Some(a);
    }
    if (d as u64) < 100_000_000 {
        let mut a = *b"+0.0nnnnnnnn) ";
        a[4..12].copy_from_slice(&(eight_digits(d as u32) + ASCII_ZEROS).to_le_bytes());
        return Some(a);
    }
    let sign = if d < 0 { b'-' } else { b'+' };
    let d = d.unsigned_abs();
    if d >= 10_000_000_000 {
        return None;
    }
    let (ds, dn) = (d / 1_000_000_000, (d % 1_000_000_000) as u32);
    let mut a = *b"+S.nnnnnnnnn) ";
    a[0] = sign;
    a[1] = b'0' + ds as u8;
    nine_digits(&mut a[3..12], dn);
    Some(a)
}

/// Appends `+S.nnnnnnnnn) ` (any number of seconds) for a delta `d` in ns.
pub fn write_delta(out: &mut Vec<u8>, d: i64) {
    out.push(if d < 0 { b'-' } else { b'+' });
    let d = d.unsigned_abs();
    let (ds, dn) = (d / 1_000_000_000, (d % 1_000_000_000) as u32);
    out.extend_from_slice(itoa::Buffer::new().format(ds).as_bytes());
    let mut t = *b".nnnnnnnnn) ";
    nine_digits(&mut t[1..10], dn);
    out.extend_from_slice(&t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_agree_with_std() {
        // A stride prime to 10 reaches every residue pattern of the low digits.
        let mut x = 0u32;
        while x < 100_000_000 {
            let got = (eight_digits(x) + ASCII_ZEROS).to_le_bytes();
            assert_eq!(std::str::from_utf8(&got).unwrap(), format!("{x:08}"));
            x += 7_919;
        }
        for x in [0, 9, 10, 99, 9_999, 10_000, 99_999_999] {
            let got = (eight_digits(x) + ASCII_ZEROS).to_le_bytes();
            assert_eq!(std::str::from_utf8(&got).unwrap(), format!("{x:08}"));
        }
        let mut a = [0u8; 9];
        nine_digits(&mut a, 123_456_789);
        assert_eq!(&a, b"123456789");
        nine_digits(&mut a, 7);
        assert_eq!(&a, b"000000007");
    }

    /// `TZ=UTC` is taken as UTC without a look-up: the same stamps as the database's `UTC`
    /// zone (when the machine has the database), across a leap second's date and a year.
    #[test]
    fn tz_utc_is_the_database_utc() {
        assert!(tz_is_utc(Some("UTC".as_ref())) && tz_is_utc(Some("UTC0".as_ref())));
        for other in [
            None,
            Some(""),
            Some("Europe/Paris"),
            Some("UTC+1"),
            Some("utc"),
        ] {
            assert!(!tz_is_utc(other.map(std::ffi::OsStr::new)), "{other:?}");
        }
        let Ok(db) = TimeZone::get("UTC") else {
            eprintln!("skipped: no time-zone database");
            return;
        };
        let (mut a, mut b) = (
            TimeFormatter::with_tz(TimeZone::UTC),
            TimeFormatter::with_tz(db),
        );
        let mut t = 1_483_228_799_000_000_000i64; // 2016-12-31 23:59:59 UTC
        for _ in 0..400 {
            assert_eq!(a.stamp(t), b.stamp(t), "{t}");
            t += 86_399_999_999_937;
        }
    }

    #[test]
    fn formats_utc() {
        let mut f = TimeFormatter::new(true);
        let mut out = Vec::new();
        f.write_time(&mut out, 1_460_000_000_123_456_789);
        assert_eq!(String::from_utf8(out).unwrap(), "03:33:20.123456789");
    }

    /// The line prefix as the merging thread completes it: the stamp with its delta put in.
    fn prefix(f: &mut TimeFormatter, ns: i64, last: Option<i64>) -> String {
        let s = f.stamp(ns);
        let mut out = s[..DELTA_AT].to_vec();
        match last.map(|l| ns - l) {
            None => out.extend_from_slice(&s[DELTA_AT..]),
            Some(d) => match short_delta(d) {
                Some(x) => out.extend_from_slice(&x),
                None => write_delta(&mut out, d),
            },
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn prefixes() {
        let mut f = TimeFormatter::new(true);
        let t = 1_460_000_000_123_456_789;
        let lines = [
            prefix(&mut f, t, None),
            prefix(&mut f, t + 5, Some(t)),
            prefix(&mut f, t, Some(t + 12_000_000_001)),
            prefix(&mut f, t, Some(t - 9_999_999_999)),
            prefix(&mut f, t, Some(t - 10_000_000_000)),
            prefix(&mut f, -1, Some(0)),
            prefix(&mut f, 0, Some(-1)),
            prefix(&mut f, 999_999_999, Some(0)),
            prefix(&mut f, 1_000_000_000, Some(999_999_999)),
        ];
        assert_eq!(
            lines,
            [
                "[03:33:20.123456789] (+?.?????????) ",
                "[03:33:20.123456794] (+0.000000005) ",
                "[03:33:20.123456789] (-12.000000001) ",
                "[03:33:20.123456789] (+9.999999999) ",
                "[03:33:20.123456789] (+10.000000000) ",
                "[00:00:00.000000001] (-0.000000001) ",
                "[00:00:00.000000000] (+0.000000001) ",
                "[00:00:00.999999999] (+0.999999999) ",
                "[00:00:01.000000000] (+0.000000001) ",
            ]
        );
    }

    /// The short form agrees with the general one wherever it applies, around each boundary
    /// of its fast path (0.1 s) and of its range (10 s), both signs.
    #[test]
    fn short_deltas_agree_with_general_ones() {
        let mut ds = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            9_999,
            10_000,
            12_345,
            99_999_999,
            100_000_000,
            100_000_001,
        ];
        ds.extend([999_999_999, 1_000_000_000, 9_999_999_999, 10_000_000_000]);
        ds.extend([i64::MAX, i64::MIN + 1, i64::MIN]);
        let mut x: i64 = 1;
        while x < 20_000_000_000 {
            ds.push(x);
            x = x * 3 + 7;
        }
        for d in ds
            .clone()
            .into_iter()
            .chain(ds.into_iter().map(i64::wrapping_neg))
        {
            let mut general = Vec::new();
            write_delta(&mut general, d);
            match short_delta(d) {
                Some(s) => assert_eq!(s.as_slice(), &general[..], "delta {d}"),
                None => assert!(d.unsigned_abs() >= 10_000_000_000, "delta {d}"),
            }
        }
    }

    /// Stamps from one formatter, made from the last one's where they share its block,
    /// agree with stamps made whole by a fresh one, on both sides of block, second and sign
    /// boundaries, and of the last blocks before `i64::MAX`.
    #[test]
    fn stamps_agree_with_whole_ones() {
        let mut f = TimeFormatter::new(true);
        let t = 1_460_000_000_999_979_998;
        let mut times = Vec::new();
        for k in 0..60 {
            times.push(t + k * 1_001);
        }
        for k in 0..60 {
            times.push(t + k * 9_001);
        }
        for base in [-200_003, BLOCK_LIMIT - 300_003, i64::MIN, i64::MIN + 50_000] {
            for k in 0..12 {
                times.push(base + k * 33_333);
            }
        }
        times.extend([
            i64::MAX,
            i64::MIN + 4_000,
            i64::MAX - 1,
            5,
            9_999,
            10_000,
            3,
        ]);
        times.extend([99_999, 100_000, 100_001, 99_999, 123_456_789, 123_499_999]);
        for ns in times {
            let got = *f.stamp(ns);
            let want = *TimeFormatter::new(true).stamp(ns);
            assert_eq!(got, want, "time {ns}");
            let mut whole = Vec::new();
            TimeFormatter::new(true).write_time(&mut whole, ns);
            assert_eq!(&got[1..19], &whole[..], "time {ns}");
        }
    }
}
