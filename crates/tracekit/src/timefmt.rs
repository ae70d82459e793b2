//! Wall-clock rendering of timestamps and parsing of Babeltrace's `--begin`/`--end` syntax.

use jiff::tz::TimeZone;
use jiff::Timestamp;

/// Renders ns-since-epoch timestamps as `HH:MM:SS.nnnnnnnnn` in UTC or the local time zone
/// (the `TZ` variable, as Babeltrace).
pub struct TimeFormatter {
    tz: TimeZone,
    cached_sec: Option<i64>,
    cached_hms: [u8; 8],
}

impl TimeFormatter {
    pub fn new(gmt: bool) -> Self {
        let tz = if gmt {
            TimeZone::UTC
        } else {
            TimeZone::system()
        };
        TimeFormatter {
            tz,
            cached_sec: None,
            cached_hms: *b"00:00:00",
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
    pub fn write_time(&mut self, out: &mut Vec<u8>, ns: i64) {
        let sec = ns.div_euclid(1_000_000_000);
        let frac = ns.rem_euclid(1_000_000_000);
        let mut a = [0u8; 18];
        a[..8].copy_from_slice(self.hms(sec));
        a[8] = b'.';
        nine_digits(&mut a[9..18], frac as u32);
        out.extend_from_slice(&a);
    }

    /// Appends `[HH:MM:SS.nnnnnnnnn] (+S.nnnnnnnnn) ` for an event at `ns`, the delta being
    /// from `last` (`(+?.?????????)` without one).
    #[inline]
    pub fn write_prefix(&mut self, out: &mut Vec<u8>, ns: i64, last: Option<i64>) {
        let sec = ns.div_euclid(1_000_000_000);
        let frac = ns.rem_euclid(1_000_000_000);
        // The common case, a delta under 10 s, is written as one fixed-size block.
        let mut a = [0u8; 36];
        a[0] = b'[';
        a[1..9].copy_from_slice(self.hms(sec));
        a[9] = b'.';
        nine_digits(&mut a[10..19], frac as u32);
        a[19..22].copy_from_slice(b"] (");
        let Some(last) = last else {
            out.extend_from_slice(&a[..22]);
            out.extend_from_slice(b"+?.?????????) ");
            return;
        };
        let d = ns.wrapping_sub(last);
        let sign = if d < 0 { b'-' } else { b'+' };
        let d = d.unsigned_abs();
        let (ds, dn) = (d / 1_000_000_000, (d % 1_000_000_000) as u32);
        if ds < 10 {
            a[22] = sign;
            a[23] = b'0' + ds as u8;
            a[24] = b'.';
            nine_digits(&mut a[25..34], dn);
            a[34] = b')';
            a[35] = b' ';
            out.extend_from_slice(&a);
        } else {
            a[22] = sign;
            out.extend_from_slice(&a[..23]);
            out.extend_from_slice(itoa::Buffer::new().format(ds).as_bytes());
            let mut t = [0u8; 12];
            t[0] = b'.';
            nine_digits(&mut t[1..10], dn);
            t[10] = b')';
            t[11] = b' ';
            out.extend_from_slice(&t);
        }
    }
}

/// Two-digit groups `00`..`99`.
pub(crate) const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` (below 10^9) as exactly nine digits, zero-padded.
#[inline]
pub fn nine_digits(out: &mut [u8], n: u32) {
    let out: &mut [u8; 9] = out.try_into().expect("nine bytes");
    let hi = n / 100_000_000;
    let lo = n % 100_000_000;
    out[0] = b'0' + hi as u8;
    let (a, b) = (lo / 10_000, lo % 10_000);
    let p = |x: u32| {
        let i = x as usize * 2;
        [PAIRS[i], PAIRS[i + 1]]
    };
    out[1..3].copy_from_slice(&p(a / 100));
    out[3..5].copy_from_slice(&p(a % 100));
    out[5..7].copy_from_slice(&p(b / 100));
    out[7..9].copy_from_slice(&p(b % 100));
}

/// Parses Babeltrace's time syntax: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` (in `tz`) or
/// `[-]SECONDS[.NNNNNNNNN]` since the epoch. A time without a date takes the date of
/// `reference_ns` (the first event), as Babeltrace does.
pub fn parse_time(s: &str, tz: &TimeZone, reference_ns: Option<i64>) -> Result<i64, String> {
    let s = s.trim();
    let bad = || {
        format!("invalid time `{s}`: expected [YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]] or SECONDS[.NNNNNNNNN]")
    };
    if !s.contains(':') {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let (secs, frac) = body.split_once('.').unwrap_or((body, ""));
        let secs: i64 = secs.parse().map_err(|_| bad())?;
        let ns = parse_frac(frac).ok_or_else(bad)?;
        let v = secs
            .checked_mul(1_000_000_000)
            .and_then(|v| v.checked_add(ns))
            .ok_or_else(bad)?;
        return Ok(if neg { -v } else { v });
    }
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (Some(d), t),
        None => (None, s),
    };
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return Err(bad());
    }
    let num = |p: &str| p.parse::<i8>().map_err(|_| bad());
    let (h, m) = (num(parts[0])?, num(parts[1])?);
    let sec = if parts.len() == 3 { num(parts[2])? } else { 0 };
    let ns = parse_frac(frac).ok_or_else(bad)?;
    let day = match date {
        Some(d) => d.parse::<jiff::civil::Date>().map_err(|_| bad())?,
        None => {
            let r = reference_ns.unwrap_or(0);
            Timestamp::from_nanosecond(r as i128)
                .map_err(|_| bad())?
                .to_zoned(tz.clone())
                .date()
        }
    };
    let dt = day.at(h, m, sec, 0);
    let z = dt.to_zoned(tz.clone()).map_err(|_| bad())?;
    Ok(z.timestamp().as_second() * 1_000_000_000 + ns)
}

fn parse_frac(frac: &str) -> Option<i64> {
    if frac.is_empty() {
        return Some(0);
    }
    if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = frac.parse().ok()?;
    Some(v * 10i64.pow(9 - frac.len() as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc() {
        let mut f = TimeFormatter::new(true);
        let mut out = Vec::new();
        f.write_time(&mut out, 1_460_000_000_123_456_789);
        assert_eq!(String::from_utf8(out).unwrap(), "03:33:20.123456789");
    }

    #[test]
    fn prefixes() {
        let mut f = TimeFormatter::new(true);
        let mut out = Vec::new();
        let t = 1_460_000_000_123_456_789;
        f.write_prefix(&mut out, t, None);
        f.write_prefix(&mut out, t + 5, Some(t));
        f.write_prefix(&mut out, t, Some(t + 12_000_000_001));
        f.write_prefix(&mut out, -1, Some(0));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[03:33:20.123456789] (+?.?????????) \
             [03:33:20.123456794] (+0.000000005) \
             [03:33:20.123456789] (-12.000000001) \
             [23:59:59.999999999] (-0.000000001) "
        );
    }

    #[test]
    fn parses_both_syntaxes() {
        let utc = TimeZone::UTC;
        assert_eq!(parse_time("12.5", &utc, None).unwrap(), 12_500_000_000);
        assert_eq!(
            parse_time("2016-04-07 03:33:20.000000001", &utc, None).unwrap(),
            1_460_000_000_000_000_001
        );
        // Without a date: the reference event's day.
        assert_eq!(
            parse_time("03:33:21", &utc, Some(1_460_000_000_123_456_789)).unwrap(),
            1_460_000_001_000_000_000
        );
        assert!(parse_time("3:xx", &utc, None).is_err());
    }
}
