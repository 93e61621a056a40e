//! Time words in a query ("yesterday", "last week", "in May 2023", "on 3 March, 2024",
//! "two years ago") read as a time range relative to now. Recall boosts memories that occurred
//! in the range and searches the rest of the query's words; a user can also turn the range into
//! a filter.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};

/// A time range named in a query.
#[derive(Debug, Clone, PartialEq)]
pub struct TimePhrase {
    /// The words that name it, as written.
    pub phrase: String,
    /// The query without those words.
    pub rest: String,
    /// The range's start (inclusive).
    pub since: DateTime<Utc>,
    /// The range's end (exclusive).
    pub until: DateTime<Utc>,
}

/// The months' names, lower case, January first.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn month(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    MONTHS.iter().position(|m| *m == w).map(|i| i as u32 + 1)
}

fn number(word: &str) -> Option<i64> {
    const WORDS: [&str; 10] = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    let w = word.to_lowercase();
    match WORDS.iter().position(|n| *n == w) {
        Some(i) => Some(i as i64 + 1),
        None if w == "a" || w == "an" => Some(1),
        None => w.parse().ok().filter(|n| (1..=100).contains(n)),
    }
}

fn year(word: &str) -> Option<i32> {
    (word.len() == 4).then(|| word.parse().ok()).flatten().filter(|y| (1900..=2200).contains(y))
}

fn day(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix.to_lowercase().as_str(), "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn at(date: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0).expect("midnight exists"))
}

fn month_range(y: i32, m: u32) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let start = NaiveDate::from_ymd_opt(y, m, 1)?;
    let end = if m == 12 { NaiveDate::from_ymd_opt(y + 1, 1, 1)? } else { NaiveDate::from_ymd_opt(y, m + 1, 1)? };
    Some((at(start), at(end)))
}

fn year_range(y: i32) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    Some((at(NaiveDate::from_ymd_opt(y, 1, 1)?), at(NaiveDate::from_ymd_opt(y + 1, 1, 1)?)))
}

fn day_range(d: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    (at(d), at(d) + Duration::days(1))
}

/// A recognised phrase: how many words it spans from where it starts, and its range.
type Found = (usize, (DateTime<Utc>, DateTime<Utc>));

/// The phrase starting at word `i`, if any. `w` are the query's words.
fn phrase_at(w: &[&str], i: usize, now: DateTime<Utc>) -> Option<Found> {
    let first = *w.get(i)?;
    let lower = |k: usize| w.get(i + k).map(|s| s.to_lowercase()).unwrap_or_default();
    let today = now.date_naive();
    let week_start = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
    match lower(0).as_str() {
        "today" => return Some((1, day_range(today))),
        "yesterday" => return Some((1, day_range(today - Duration::days(1)))),
        "last" | "this" | "past" | "previous" => {
            let last = lower(0) != "this";
            let r = match lower(1).as_str() {
                "week" if last => (at(week_start - Duration::days(7)), at(week_start)),
                "week" => (at(week_start), at(week_start + Duration::days(7))),
                // The previous week's Saturday and Sunday, or this week's.
                "weekend" if last => (at(week_start - Duration::days(2)), at(week_start)),
                "weekend" => (at(week_start + Duration::days(5)), at(week_start + Duration::days(7))),
                "month" if last => {
                    let (y, m) =
                        if today.month() == 1 { (today.year() - 1, 12) } else { (today.year(), today.month() - 1) };
                    month_range(y, m)?
                }
                "month" => month_range(today.year(), today.month())?,
                "year" if last => year_range(today.year() - 1)?,
                "year" => year_range(today.year())?,
                // "last Saturday": the latest one before today; "this Saturday": this week's.
                day => {
                    let wd: chrono::Weekday = day.parse().ok().filter(|_| day.len() > 3)?;
                    let date = if last {
                        let back = (7 + today.weekday().num_days_from_monday() - wd.num_days_from_monday() - 1) % 7 + 1;
                        today - Duration::days(i64::from(back))
                    } else {
                        week_start + Duration::days(i64::from(wd.num_days_from_monday()))
                    };
                    day_range(date)
                }
            };
            return Some((2, r));
        }
        "on" | "in" | "during" | "since" => {
            return phrase_at(w, i + 1, now).map(|(n, r)| (n + 1, r));
        }
        _ => {}
    }
    // "3 days ago", "two weeks ago", "a year ago"
    if let (Some(n), "ago") = (number(first), lower(2).as_str()) {
        let unit = lower(1);
        let unit = unit.trim_end_matches('s');
        let r = match unit {
            "day" => day_range(today - Duration::days(n)),
            "week" => (at(today - Duration::days(7 * n + 3)), at(today - Duration::days(7 * n - 4))),
            "month" => {
                let back = today.year() * 12 + today.month() as i32 - 1 - n as i32;
                month_range(back.div_euclid(12), back.rem_euclid(12) as u32 + 1)?
            }
            "year" => year_range(today.year() - n as i32)?,
            _ => return None,
        };
        return Some((3, r));
    }
    // "May 3, 2023" / "May 3rd 2023"
    if let Some(m) = month(first) {
        if let (Some(d), Some(y)) = (w.get(i + 1).and_then(|s| day(s)), w.get(i + 2).and_then(|s| year(s))) {
            return NaiveDate::from_ymd_opt(y, m, d).map(|date| (3, day_range(date)));
        }
        if let Some(y) = w.get(i + 1).and_then(|s| year(s)) {
            return month_range(y, m).map(|r| (2, r));
        }
        // A month alone ("in June"): its latest occurrence that has begun. Without "in" a month
        // name is too often a word ("May I…", "march").
        if i > 0 && matches!(w[i - 1].to_lowercase().as_str(), "in" | "during" | "since") {
            let y = if m <= today.month() { today.year() } else { today.year() - 1 };
            return month_range(y, m).map(|r| (1, r));
        }
        return None;
    }
    // "3 May 2023" / "3 May, 2023"
    if let (Some(d), Some(m)) = (day(first), w.get(i + 1).and_then(|s| month(s))) {
        if let Some(y) = w.get(i + 2).and_then(|s| year(s)) {
            return NaiveDate::from_ymd_opt(y, m, d).map(|date| (3, day_range(date)));
        }
        return None;
    }
    // "2023" after "in" / "during" / "since" only: a bare number is too often not a year.
    if let Some(y) = year(first)
        && i > 0
        && matches!(w[i - 1].to_lowercase().as_str(), "in" | "during" | "since")
    {
        return year_range(y).map(|r| (1, r));
    }
    None
}

/// A time a person typed, read relative to `now`: a date or time (`2025-05-01`, RFC 3339), or
/// words search understands ("yesterday", "last Saturday", "in May 2023", "3 days ago"). With
/// `end`, the end of what it names (exclusive): a bare date then means the day after it, so a
/// range "until 2025-05-01" includes that day.
pub fn parse_when(text: &str, now: DateTime<Utc>, end: bool) -> crate::Result<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(t) = crate::time::parse_time(text) {
        let bare_date = NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok();
        return Ok(if end && bare_date { t + Duration::days(1) } else { t });
    }
    match time_phrase(text, now) {
        Some(p) if !p.rest.chars().any(char::is_alphanumeric) => Ok(if end { p.until } else { p.since }),
        _ => Err(crate::Error::invalid(format!(
            "'{}' is not a time I understand: write a date (2025-05-01) or words like 'yesterday', \
             'last Saturday', 'in May 2023' or '3 days ago'",
            crate::error::excerpt(text)
        ))),
    }
}

/// The first time phrase in `query`, read relative to `now`.
pub fn time_phrase(query: &str, now: DateTime<Utc>) -> Option<TimePhrase> {
    // Words with their byte spans.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in query.char_indices().chain(std::iter::once((query.len(), ' '))) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    let words: Vec<&str> = spans.iter().map(|(s, e)| &query[*s..*e]).collect();
    for i in 0..words.len() {
        if let Some((n, (since, until))) = phrase_at(&words, i, now) {
            let (s, e) = (spans[i].0, spans[i + n - 1].1);
            let rest = format!("{} {}", query[..s].trim_end(), query[e..].trim_start()).trim().to_string();
            return Some(TimePhrase { phrase: query[s..e].to_string(), rest, since, until });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{format_time, parse_time};

    fn read(q: &str) -> Option<(String, String, String, String)> {
        // A Wednesday.
        let now = parse_time("2024-03-13T15:00:00Z").unwrap();
        time_phrase(q, now).map(|t| (t.phrase, t.rest, format_time(t.since), format_time(t.until)))
    }

    #[test]
    fn absolute_and_relative_phrases() {
        let cases = [
            ("What did Ana do in May 2023?", "in May 2023", "2023-05-01", "2023-06-01"),
            ("Who called on May 3, 2023?", "on May 3, 2023", "2023-05-03", "2023-05-04"),
            ("what happened on 1 February, 2023", "on 1 February, 2023", "2023-02-01", "2023-02-02"),
            ("camping in June?", "in June", "2023-06-01", "2023-07-01"),
            ("trips in March", "in March", "2024-03-01", "2024-04-01"),
            ("beach visits in 2022", "in 2022", "2022-01-01", "2023-01-01"),
            ("what did I eat yesterday", "yesterday", "2024-03-12", "2024-03-13"),
            ("plans for today", "today", "2024-03-13", "2024-03-14"),
            ("what did we decide last week", "last week", "2024-03-04", "2024-03-11"),
            ("notes from this week", "this week", "2024-03-11", "2024-03-18"),
            ("bills last month", "last month", "2024-02-01", "2024-03-01"),
            ("trips last year", "last year", "2023-01-01", "2024-01-01"),
            ("where I moved from 4 years ago", "4 years ago", "2020-01-01", "2021-01-01"),
            ("the call two days ago", "two days ago", "2024-03-11", "2024-03-12"),
            ("what did I do last weekend", "last weekend", "2024-03-09", "2024-03-11"),
            ("dinner last Saturday", "last Saturday", "2024-03-09", "2024-03-10"),
            ("the meeting last Wednesday", "last Wednesday", "2024-03-06", "2024-03-07"),
            ("the call last tuesday", "last tuesday", "2024-03-12", "2024-03-13"),
            ("the party this Friday", "this Friday", "2024-03-15", "2024-03-16"),
        ];
        for (q, phrase, since, until) in cases {
            let (p, _, s, u) = read(q).unwrap_or_else(|| panic!("no phrase in {q:?}"));
            assert_eq!((p.as_str(), &s[..10], &u[..10]), (phrase, since, until), "{q}");
        }
        assert_eq!(read("What did Ana do in May 2023?").unwrap().1, "What did Ana do ?");
    }

    #[test]
    fn typed_times_are_dates_or_words_and_an_end_includes_its_day() {
        let now = parse_time("2024-03-13T15:00:00Z").unwrap();
        let when = |t: &str, end: bool| parse_when(t, now, end).map(format_time);
        assert_eq!(when("2024-03-01", false).unwrap(), "2024-03-01T00:00:00Z");
        assert_eq!(when("2024-03-01", true).unwrap(), "2024-03-02T00:00:00Z", "up to and including");
        assert_eq!(when("2024-03-01T10:30:00Z", true).unwrap(), "2024-03-01T10:30:00Z");
        assert_eq!(when("last Saturday", false).unwrap(), "2024-03-09T00:00:00Z");
        assert_eq!(when("last Saturday", true).unwrap(), "2024-03-10T00:00:00Z");
        assert_eq!(when(" yesterday ", false).unwrap(), "2024-03-12T00:00:00Z");
        assert_eq!(when("in May 2023", true).unwrap(), "2023-06-01T00:00:00Z");
        for bad in ["soon", "last Saturday night out", "", "sat"] {
            let e = when(bad, false).unwrap_err().to_string();
            assert!(e.contains("not a time I understand") && e.contains("last Saturday"), "{bad}: {e}");
        }
    }

    #[test]
    fn words_that_only_look_like_dates_are_left_alone() {
        for q in
            ["May I ask what Ana likes?", "the 2023 budget", "route 66", "last call", "did they march", "in 2 days"]
        {
            assert_eq!(read(q), None, "{q}");
        }
        // Phrases cut short at the end of the query.
        for q in ["what happened in", "since last", "3 days", "on May 3", "", "in in on"] {
            assert_eq!(read(q), None, "{q}");
        }
    }
}
