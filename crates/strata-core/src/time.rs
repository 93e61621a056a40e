//! Parsing and printing the times people type: RFC 3339, with or without seconds or a zone.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};

use crate::error::{Error, Result};

/// Parses a point in time. Accepts RFC 3339 (`2026-01-31T12:00:00+01:00`), the same without
/// seconds (`2026-01-31T12:00Z`), without a zone (taken as UTC: `2023-07-15T14:32:45`), or a
/// bare date (midnight UTC).
pub fn parse_time(s: &str) -> Result<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    for fmt in ["%Y-%m-%dT%H:%M%#z", "%Y-%m-%d %H:%M%#z", "%Y-%m-%d %H:%M:%S%#z"] {
        if let Ok(t) = DateTime::parse_from_str(s, fmt) {
            return Ok(t.with_timezone(&Utc));
        }
    }
    let naive = s.strip_suffix('Z').unwrap_or(s);
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(naive, fmt) {
            return Ok(t.and_utc());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(naive, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    Err(Error::invalid(format!(
        "'{}' is not a time I understand (use e.g. 2026-01-31T12:00Z or 2026-01-31)",
        crate::error::excerpt(s)
    )))
}

/// RFC 3339 in UTC with millisecond precision only when needed: `2026-01-31T12:00:00Z`.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_people_type() {
        let cases = [
            ("2026-01-31T12:00Z", "2026-01-31T12:00:00Z"),
            ("2026-01-31T12:00:00+01:00", "2026-01-31T11:00:00Z"),
            ("2023-07-15T14:32:45", "2023-07-15T14:32:45Z"),
            ("2023-07-15T14:32:45.250Z", "2023-07-15T14:32:45.250Z"),
            ("2026-01-31", "2026-01-31T00:00:00Z"),
            ("2026-01-31 08:15", "2026-01-31T08:15:00Z"),
        ];
        for (input, want) in cases {
            assert_eq!(format_time(parse_time(input).unwrap()), want, "{input}");
        }
    }

    #[test]
    fn rejects_nonsense_with_an_example() {
        let e = parse_time("yesterday-ish").unwrap_err().to_string();
        assert!(e.contains("2026-01-31T12:00Z"), "{e}");
    }
}
