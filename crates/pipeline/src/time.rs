//! Times and durations given on command lines, parsed to nanoseconds.
//!
//! Each front end follows the tool it stands in for, so the syntaxes differ; each function
//! says which convention it accepts:
//!
//! - [`parse_time`]: babeltrace2's `--begin`/`--end`: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]`
//!   in a time zone, or `[-]SECONDS[.NNNNNNNNN]` since the epoch (a bare number is seconds).
//! - [`parse_analyses_time`]: lttng-analyses' `--begin`/`--end`/`--timerange`:
//!   `[YYYY-MM-DD ]HH:MM:SS[.NNNNNNNNN]` in UTC, or a bare number of nanoseconds since the
//!   epoch.
//! - [`parse_duration`]: tracekit's own durations: a decimal number and a unit (`ns`,
//!   `us`/`µs`, `ms`, `s`), with a default unit or none, rounded to the nearest nanosecond.
//! - [`parse_analyses_duration`]: lttng-analyses' `--refresh`: seconds without a unit,
//!   truncated to the nanosecond, positive.

use jiff::tz::TimeZone;
use jiff::Timestamp;

const NS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// A time or duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// Not in babeltrace2's time syntax.
    #[error(
        "invalid time `{0}`: expected [YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]] or SECONDS[.NNNNNNNNN]"
    )]
    Babeltrace(String),
    /// Not in lttng-analyses' time syntax.
    #[error("invalid time '{0}' (expected [YYYY-MM-DD ]HH:MM:SS[.ns])")]
    Analyses(String),
    /// Not a number followed by a unit.
    #[error("invalid duration '{0}' (e.g. 500us, 1ms, 2s)")]
    Duration(String),
    /// An lttng-analyses duration that is not a number.
    #[error("invalid duration: '{0}'")]
    NotANumber(String),
    /// A duration without a unit where one is required.
    #[error("`{0}`: missing unit (ns, us, ms or s)")]
    MissingUnit(String),
    /// An lttng-analyses duration with a unit other than `ns`, `us`, `µs`, `ms`, `s`.
    #[error("unrecognised units: {0} (s, ms, us or ns)")]
    Unit(String),
    /// A tracekit duration with a unit other than `ns`, `us`, `µs`, `ms`, `s`.
    #[error("invalid duration unit '{unit}' in '{input}' (ns, us, ms or s)")]
    DurationUnit {
        /// The unit given.
        unit: String,
        /// The whole duration given.
        input: String,
    },
    /// A duration that is not positive, or too long.
    #[error("invalid duration: '{0}' (must be positive)")]
    OutOfRange(String),
}

/// A unit of time, the one a duration without a unit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl Unit {
    /// Nanoseconds in one unit.
    pub fn ns(self) -> f64 {
        match self {
            Unit::Ns => 1.0,
            Unit::Us => 1e3,
            Unit::Ms => 1e6,
            Unit::S => 1e9,
        }
    }

    fn of(s: &str) -> Option<Unit> {
        Some(match s {
            "ns" => Unit::Ns,
            "us" | "µs" => Unit::Us,
            "ms" => Unit::Ms,
            "s" => Unit::S,
            _ => return None,
        })
    }
}

/// Whether [`parse_time`] reads `s` without its reference time: seconds since the epoch, or a
/// time of day with its date.
pub fn has_date(s: &str) -> bool {
    let s = s.trim();
    !s.contains(':') || s.contains(' ')
}

/// Parses babeltrace2's time syntax: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` (in `tz`) or
/// `[-]SECONDS[.NNNNNNNNN]` since the epoch. A time without a date takes the date of
/// `reference_ns` (the first message), as babeltrace2 does.
pub fn parse_time(s: &str, tz: &TimeZone, reference_ns: Option<i64>) -> Result<i64, TimeError> {
    let s = s.trim();
    let bad = || TimeError::Babeltrace(s.to_string());
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

/// The nanoseconds of a fraction of a second's digits (at most nine); None if not digits.
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

/// Parses lttng-analyses' time syntax: a bare number of ns since the epoch,
/// `YYYY-MM-DD HH:MM:SS[.NNNNNNNNN]`, or `HH:MM:SS[.NNNNNNNNN]` on the (UTC) day of `day_of`
/// (ns since the epoch: the traces' first time).
pub fn parse_analyses_time(s: &str, day_of: i64) -> Result<i64, TimeError> {
    let s = s.trim();
    if let Ok(v) = s.parse::<i64>() {
        return Ok(v);
    }
    let bad = || TimeError::Analyses(s.to_string());
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (Some(d), t),
        None => (None, s),
    };
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (time, None),
    };
    let parts: Vec<i64> = hms
        .split(':')
        .map(|p| p.parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut ns = (parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1_000_000_000;
    if let Some(f) = frac {
        if f.is_empty() {
            return Err(bad());
        }
        ns += parse_frac(f).ok_or_else(bad)?;
    }
    let day_ns = match date {
        None => day_of.div_euclid(NS_PER_DAY) * NS_PER_DAY,
        Some(d) => {
            let p: Vec<i64> = d
                .split('-')
                .map(|x| x.parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad())?;
            if p.len() != 3 {
                return Err(bad());
            }
            days_from_civil(p[0], p[1], p[2]) * NS_PER_DAY
        }
    };
    Ok(day_ns + ns)
}

/// Formats a nanosecond timestamp as `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` (UTC).
pub fn format_utc(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let sub = ns.rem_euclid(1_000_000_000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{sub:09}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// The proleptic Gregorian date (year, month, day) of a day number (days since 1970-01-01):
/// the inverse of `days_from_civil`.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Splits a duration into its number and its unit (None without one).
fn split_duration(t: &str) -> (&str, Option<&str>) {
    match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&t[..i], Some(t[i..].trim())),
        None => (t, None),
    }
}

/// Parses tracekit's durations: a decimal number and a unit (`ns`, `us`/`µs`, `ms`, `s`),
/// e.g. `500us`, `1.5ms`; without a unit, in `default` (None: the unit is required). Returns
/// ns rounded to the nearest; it must be at least 1 ns and below 10^18 ns.
pub fn parse_duration(s: &str, default: Option<Unit>) -> Result<i64, TimeError> {
    duration_at_least(s, default, 1.0)
}

/// Parses a latency threshold (`tracekit latency --threshold`, as the latency tracker's
/// module parameters): [`parse_duration`]'s syntax, microseconds without a unit, and zero
/// allowed (every occurrence is over it).
pub fn parse_threshold(s: &str) -> Result<i64, TimeError> {
    duration_at_least(s, Some(Unit::Us), 0.0)
}

/// [`parse_duration`] with `min` ns as the smallest duration accepted.
fn duration_at_least(s: &str, default: Option<Unit>, min: f64) -> Result<i64, TimeError> {
    let t = s.trim();
    let (num, unit) = split_duration(t);
    let unit = match unit {
        Some(u) => Unit::of(u).ok_or_else(|| TimeError::DurationUnit {
            unit: u.to_string(),
            input: s.to_string(),
        })?,
        None => default.ok_or_else(|| TimeError::MissingUnit(s.to_string()))?,
    };
    let v: f64 = num
        .parse()
        .map_err(|_| TimeError::Duration(s.to_string()))?;
    let ns = (v * unit.ns()).round();
    if !(min..1e18).contains(&ns) {
        return Err(TimeError::OutOfRange(s.to_string()));
    }
    Ok(ns as i64)
}

/// Parses lttng-analyses' `--refresh` duration: a number with an optional unit (`s`, `ms`,
/// `us`, `µs`, `ns`; seconds without one), e.g. `1`, `0.5s`, `250ms`. Returns ns, truncated
/// as lttng-analyses does; it must be positive.
pub fn parse_analyses_duration(s: &str) -> Result<i64, TimeError> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_alphabetic()) {
        Some((i, _)) => (t[..i].trim(), Some(&t[i..])),
        None => (t, None),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| TimeError::NotANumber(s.to_string()))?;
    let unit = match unit {
        None => Unit::S,
        Some(u) => Unit::of(u).ok_or_else(|| TimeError::Unit(u.to_string()))?,
    };
    let ns = (v * unit.ns()) as i64;
    if !v.is_finite() || ns <= 0 {
        return Err(TimeError::OutOfRange(s.to_string()));
    }
    Ok(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip() {
        for days in [
            -719_468, -1, 0, 59, 60, 365, 10_957, 11_016, 19_782, 2_932_896,
        ] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(
            format_utc(951_782_400_000_000_001),
            "2000-02-29 00:00:00.000000001"
        );
    }

    #[test]
    fn babeltrace_times() {
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
        assert!(has_date("12.5") && has_date("2016-04-07 03:33:20") && !has_date("03:33"));
    }

    #[test]
    fn analyses_times() {
        let day = 1_457_113_582_794_565_804;
        assert_eq!(
            parse_analyses_time("17:46:22.794565804", day).unwrap(),
            1_457_113_582_794_565_804
        );
        assert_eq!(
            parse_analyses_time("2016-03-04 17:46:22.5", 0).unwrap(),
            1_457_113_582_500_000_000
        );
        assert_eq!(parse_analyses_time("12", 0).unwrap(), 12);
        assert!(parse_analyses_time("1:2", 0).is_err());
        assert!(parse_analyses_time("1:2:3.", 0).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500us", None).unwrap(), 500_000);
        assert_eq!(parse_duration("1.5ms", None).unwrap(), 1_500_000);
        assert_eq!(parse_duration("2 s", None).unwrap(), 2_000_000_000);
        assert_eq!(parse_duration("7", Some(Unit::Us)).unwrap(), 7_000);
        assert!(matches!(
            parse_duration("7", None),
            Err(TimeError::MissingUnit(_))
        ));
        assert!(matches!(
            parse_duration("7h", None),
            Err(TimeError::DurationUnit { .. })
        ));
        assert!(parse_duration("0ns", None).is_err());
        assert_eq!(parse_threshold("0").unwrap(), 0);
        assert_eq!(parse_threshold("250").unwrap(), 250_000);
        assert_eq!(parse_threshold("1ms").unwrap(), 1_000_000);
        assert!(parse_threshold("1 fortnight").is_err());
        assert_eq!(parse_analyses_duration("1").unwrap(), 1_000_000_000);
        assert_eq!(parse_analyses_duration("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_analyses_duration("0.5 s").unwrap(), 500_000_000);
        assert!(parse_analyses_duration("0").is_err());
        assert!(parse_analyses_duration("1h").is_err());
    }
}
