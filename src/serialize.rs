//! Serializers for the fields of domain types that have no JSON form of
//! their own, named in `#[serde(serialize_with = "...")]` attributes.
//!
//! One choice per kind of value, the same everywhere:
//!
//! - a [`SystemTime`] is an RFC 3339 string in UTC with millisecond
//!   precision, always three fractional digits
//!   (`"2024-02-29T12:00:00.250Z"`): readable by a person and by every JSON
//!   consumer's date parser, where unix milliseconds would need a field name
//!   to say what the number is;
//! - a [`Duration`] is a whole number of milliseconds (rounded down), in a
//!   field whose name ends in `Ms`;
//! - bytes are standard base64 with padding, as the MCP wire carries them.

use base64::Engine as _;
use serde::{Serialize, Serializer};
use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::request::ProgressUpdate;

/// `SystemTime` as RFC 3339, UTC, milliseconds.
pub(crate) fn rfc3339<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_rfc3339(*time))
}

/// `Duration` as whole milliseconds.
pub(crate) fn millis<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// `Option<Duration>` as whole milliseconds or `null`.
pub(crate) fn opt_millis<S: Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => millis(duration, serializer),
        None => serializer.serialize_none(),
    }
}

/// Bytes as standard base64.
pub(crate) fn base64<T: AsRef<[u8]>, S: Serializer>(data: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data.as_ref()))
}

/// `Option` of bytes as standard base64 or `null`.
pub(crate) fn opt_base64<T: AsRef<[u8]>, S: Serializer>(
    data: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match data {
        Some(data) => base64(data, serializer),
        None => serializer.serialize_none(),
    }
}

/// A [`ProgressUpdate`] report, camelCase like the domain types around it.
pub(crate) fn progress<S: Serializer>(progress: &ProgressUpdate, serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct View<'a> {
        binding: &'a str,
        progress: f64,
        total: Option<f64>,
        message: Option<&'a str>,
    }
    View {
        binding: &progress.binding,
        progress: progress.progress,
        total: progress.total,
        message: progress.message.as_deref(),
    }
    .serialize(serializer)
}

/// Formats `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ`. Times before 1970 work
/// too; a year past 9999 gets more digits (RFC 3339 has no such years).
pub(crate) fn format_rfc3339(time: SystemTime) -> String {
    let millis: i128 = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_millis() as i128,
        // Round towards the past, so the fraction stays positive.
        Err(before) => -(before.duration().as_nanos().div_ceil(1_000_000) as i128),
    };
    let (secs, milli) = (millis.div_euclid(1000), millis.rem_euclid(1000));
    let (days, secs_of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_date(days);
    let (hour, minute, second) = (secs_of_day / 3600, secs_of_day % 3600 / 60, secs_of_day % 60);
    let mut out = String::with_capacity(24);
    let _ = write!(out, "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z");
    out
}

/// The proleptic Gregorian date `days` after 1970-01-01.
///
/// Counts from 0000-03-01 instead, so that the leap day is the last day of
/// its year, then splits into 400-year cycles (146 097 days each, the
/// period of the calendar), years within the cycle, and days within the
/// year, whose months from March have a regular length pattern.
fn civil_date(days: i128) -> (i128, u32, u32) {
    const DAYS_FROM_0000_03_01_TO_1970_01_01: i128 = 719_468;
    let days = days + DAYS_FROM_0000_03_01_TO_1970_01_01;
    let cycle = days.div_euclid(146_097);
    let day_of_cycle = days.rem_euclid(146_097);
    // Leap years within the cycle: every 4th, except every 100th, except the
    // 400th (the cycle's last day).
    let year_of_cycle =
        (day_of_cycle - day_of_cycle / 1460 + day_of_cycle / 36_524 - day_of_cycle / 146_096) / 365;
    let day_of_year = day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 - year_of_cycle / 100);
    // Months from March: 31 30 31 30 31 31 30 31 30 31 31 (29|28) follow
    // 153 days per 5 months.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 } as u32;
    let year = cycle * 400 + year_of_cycle + i128::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: i64) -> SystemTime {
        if millis >= 0 {
            UNIX_EPOCH + Duration::from_millis(millis as u64)
        } else {
            UNIX_EPOCH - Duration::from_millis(millis.unsigned_abs())
        }
    }

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(format_rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(at(1_700_000_000_123)), "2023-11-14T22:13:20.123Z");
        // A leap day, the day after it, and the end of a year.
        assert_eq!(format_rfc3339(at(1_709_164_800_000)), "2024-02-29T00:00:00.000Z");
        assert_eq!(format_rfc3339(at(1_709_251_200_000)), "2024-03-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(at(1_735_689_599_999)), "2024-12-31T23:59:59.999Z");
        // 2000 is a leap year (a 400th), 2100 is not (a 100th).
        assert_eq!(format_rfc3339(at(951_782_400_000)), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_rfc3339(at(4_107_542_400_000)), "2100-03-01T00:00:00.000Z");
        // Before 1970, rounded towards the past.
        assert_eq!(format_rfc3339(at(-1)), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339(UNIX_EPOCH - Duration::from_micros(1)), "1969-12-31T23:59:59.999Z");
        // Sub-millisecond precision is dropped.
        assert_eq!(format_rfc3339(UNIX_EPOCH + Duration::from_micros(1999)), "1970-01-01T00:00:00.001Z");
    }

    #[test]
    fn durations_are_whole_milliseconds_and_bytes_base64() {
        #[derive(Serialize)]
        struct T {
            #[serde(serialize_with = "millis")]
            d: Duration,
            #[serde(serialize_with = "opt_millis")]
            none: Option<Duration>,
            #[serde(serialize_with = "base64")]
            data: Vec<u8>,
            #[serde(serialize_with = "opt_base64")]
            no_data: Option<Vec<u8>>,
        }
        let t = T { d: Duration::from_micros(2_500), none: None, data: b"hi!".to_vec(), no_data: None };
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            serde_json::json!({"d": 2, "none": null, "data": "aGkh", "no_data": null})
        );
    }
}
