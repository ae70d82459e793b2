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

    /// Appends `HH:MM:SS.nnnnnnnnn` for `ns` since the epoch.
    pub fn write_time(&mut self, out: &mut Vec<u8>, ns: i64) {
        let sec = ns.div_euclid(1_000_000_000);
        let frac = ns.rem_euclid(1_000_000_000);
        if self.cached_sec != Some(sec) {
            self.cached_sec = Some(sec);
            let hms = Timestamp::from_second(sec)
                .map(|t| t.to_zoned(self.tz.clone()).strftime("%H:%M:%S").to_string())
                .unwrap_or_else(|_| "??:??:??".into());
            if hms.len() == 8 {
                self.cached_hms.copy_from_slice(hms.as_bytes());
            }
        }
        out.extend_from_slice(&self.cached_hms);
        out.push(b'.');
        let mut digits = [b'0'; 9];
        let mut f = frac as u64;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (f % 10) as u8;
            f /= 10;
        }
        out.extend_from_slice(&digits);
    }
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
