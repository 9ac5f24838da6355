//! Time in queries and in memories: "what did Ana do in May 2023?" should prefer memories from
//! May 2023.
//!
//! * [`query_time`] finds the time phrases of a query — absolute (`8 May 2023`, `May 8th,
//!   2023`, `2023-05-08`, `May 2023`, `the spring of 2022`, `early June 2024`, `in 2021`), a month
//!   of any year (`in March`), and relative to now (`yesterday`, `last week`, `three months
//!   ago`, `last May`) — and returns the span they name, with the words they used, so the
//!   lexical side can leave those out.
//! * [`record_day`] dates a memory: the first metadata value under a time-like key (`date`,
//!   `timestamp`, `session_date`, `occurred_at`, …) that parses as a date or an epoch number,
//!   else `created_at`. Memories imported from elsewhere carry their real dates in metadata;
//!   `created_at` is only when they were written here.
//! * [`TimeConstraint::closeness`] scores a day against the span: 1 inside, decaying with the
//!   distance outside it.
//!
//! Everything works in whole days (UTC), which is the precision people ask with. Only words are
//! ever read; nothing here can fail on hostile input, and the work is linear in the text.

use chrono::{Datelike, Duration, NaiveDate};

/// Milliseconds per day.
const DAY_MS: i64 = 86_400_000;
/// Years accepted as years: a four-digit number outside this range is just a number.
const YEARS: std::ops::RangeInclusive<i64> = 1900..=2199;

/// A span of days, `[start, end)`, in days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaySpan {
    pub start: i64,
    pub end: i64,
}

/// What a query's time phrases ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeConstraint {
    /// A span of days.
    Span(DaySpan),
    /// A month of any year (`in March`), 1..=12.
    Month(u32),
}

impl TimeConstraint {
    /// How well a memory dated `day` fits: 1 inside the span, then `exp(−distance / τ)` with τ
    /// a quarter of the span's length (at least two days), so "May 2023" still prefers 2 June
    /// over 20 June. A month of any year is 1 in that month and 0 elsewhere.
    pub fn closeness(&self, day: i64) -> f32 {
        match *self {
            TimeConstraint::Span(span) => {
                let distance = if day < span.start {
                    span.start - day
                } else if day >= span.end {
                    day - span.end + 1
                } else {
                    return 1.0;
                };
                let tau = ((span.end - span.start) as f32 / 4.0).max(2.0);
                (-(distance as f32) / tau).exp()
            }
            TimeConstraint::Month(month) => {
                let same = date_of(day).is_some_and(|date| date.month() == month);
                if same { 1.0 } else { 0.0 }
            }
        }
    }
}

/// The time a query asks about and the indices (into [`tokens`]' words) of the words that
/// said it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTime {
    pub constraint: TimeConstraint,
    pub words: Vec<usize>,
}

/// One word of a text, as the time parser sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// Lowercase.
    pub text: String,
    /// The characters between the previous token and this one, trimmed (`-`, `,`, `/`, …).
    pub separator: String,
}

/// The alphanumeric words of `text`, lowercase, each with the punctuation before it.
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut separator = String::new();
    let mut current = String::new();
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            current.extend(ch.to_lowercase());
        } else {
            if !current.is_empty() {
                tokens.push(Token {
                    text: std::mem::take(&mut current),
                    separator: std::mem::take(&mut separator),
                });
            }
            if !ch.is_whitespace() && separator.len() < 8 {
                separator.push(ch);
            }
        }
    }
    if !current.is_empty() {
        tokens.push(Token {
            text: current,
            separator,
        });
    }
    tokens
}

/// The time phrases of `query`, resolved against `now_ms` for relative ones; `None` when it
/// names no time. Several phrases give the span covering them all.
pub fn query_time(query: &str, now_ms: i64) -> Option<QueryTime> {
    let tokens = tokens(query);
    let today = now_ms.div_euclid(DAY_MS);
    let mut found: Vec<(TimeConstraint, std::ops::Range<usize>)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some((constraint, end)) = phrase_at(&tokens, i, today) {
            found.push((constraint, i..end));
            i = end;
        } else {
            i += 1;
        }
    }
    let words: Vec<usize> = found.iter().flat_map(|(_, range)| range.clone()).collect();
    let spans: Vec<DaySpan> = found
        .iter()
        .filter_map(|(constraint, _)| match constraint {
            TimeConstraint::Span(span) => Some(*span),
            TimeConstraint::Month(_) => None,
        })
        .collect();
    let constraint = if let Some(first) = spans.first() {
        TimeConstraint::Span(spans.iter().fold(*first, |all, span| DaySpan {
            start: all.start.min(span.start),
            end: all.end.max(span.end),
        }))
    } else {
        found.first()?.0
    };
    Some(QueryTime { constraint, words })
}

/// The day a memory is about: a date in its metadata under a time-like key, else the day it was
/// created (`created_at`, ms).
pub fn record_day(metadata: &serde_json::Value, created_at: i64) -> i64 {
    metadata_day(metadata).unwrap_or_else(|| created_at.div_euclid(DAY_MS))
}

/// Keys whose values date a memory, in order of preference (lowercase; `_`/`-` ignored).
const TIME_KEYS: &[&str] = &[
    "date",
    "sessiondate",
    "datetime",
    "timestamp",
    "time",
    "occurredat",
    "happenedat",
    "eventdate",
    "when",
    "day",
    "createdat",
    "created",
];

/// Metadata nested deeper than this is not looked into.
const MAX_METADATA_DEPTH: usize = 2;
/// At most this many metadata entries are looked at (metadata is bounded, but a date search
/// runs per candidate).
const MAX_METADATA_ENTRIES: usize = 64;

fn metadata_day(metadata: &serde_json::Value) -> Option<i64> {
    let mut best: Option<(usize, i64)> = None;
    let mut budget = MAX_METADATA_ENTRIES;
    visit(metadata, 0, &mut budget, &mut best);
    best.map(|(_, day)| day)
}

fn visit(
    value: &serde_json::Value,
    depth: usize,
    budget: &mut usize,
    best: &mut Option<(usize, i64)>,
) {
    let serde_json::Value::Object(map) = value else {
        return;
    };
    for (key, value) in map {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let normalized: String = key
            .chars()
            .filter(|c| *c != '_' && *c != '-' && *c != ' ')
            .flat_map(char::to_lowercase)
            .collect();
        if let Some(rank) = TIME_KEYS.iter().position(|k| *k == normalized)
            && best.is_none_or(|(best_rank, _)| rank < best_rank)
            && let Some(day) = value_day(value)
        {
            *best = Some((rank, day));
        }
        if depth + 1 < MAX_METADATA_DEPTH {
            visit(value, depth + 1, budget, best);
        }
    }
}

/// A metadata value as a day: a date text, or an epoch number in seconds or milliseconds.
fn value_day(value: &serde_json::Value) -> Option<i64> {
    match value {
        serde_json::Value::String(text) => parse_day(text),
        serde_json::Value::Number(number) => {
            let n = number.as_f64()?;
            // 1e11 seconds is the year 5138: larger numbers are milliseconds.
            let ms = if n.abs() >= 1e11 { n } else { n * 1000.0 };
            ms.is_finite().then(|| (ms as i64).div_euclid(DAY_MS))
        }
        _ => None,
    }
}

/// The first full date (day, month and year) written in `text`: `2023-05-08`, `2023-05-08T13:56`,
/// `8 May 2023`, `May 8th, 2023`, `1:56 pm on 8 May, 2023`.
pub fn parse_day(text: &str) -> Option<i64> {
    // Dates are short; a long text is only looked at up to here.
    let head = match text.char_indices().nth(200) {
        Some((end, _)) => &text[..end],
        None => text,
    };
    let tokens = tokens(head);
    (0..tokens.len()).find_map(|i| full_date_at(&tokens, i).map(|(day, _)| day))
}

/// Days since 1970-01-01 of a calendar date, if it exists.
fn day_of(year: i64, month: u32, day: u32) -> Option<i64> {
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    Some(date.signed_duration_since(epoch()).num_days())
}

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).expect("a valid date")
}

fn date_of(day: i64) -> Option<NaiveDate> {
    epoch().checked_add_signed(Duration::try_days(day)?)
}

/// Days since the epoch of the first day of `month` of `year` (months past 12 roll over).
fn month_start(year: i64, month: i64) -> Option<i64> {
    let index = year * 12 + (month - 1);
    day_of(index.div_euclid(12), (index.rem_euclid(12) + 1) as u32, 1)
}

fn month_span(year: i64, month: u32) -> Option<DaySpan> {
    Some(DaySpan {
        start: month_start(year, i64::from(month))?,
        end: month_start(year, i64::from(month) + 1)?,
    })
}

fn year_span(year: i64) -> Option<DaySpan> {
    Some(DaySpan {
        start: day_of(year, 1, 1)?,
        end: day_of(year + 1, 1, 1)?,
    })
}

fn month_number(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
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
    if let Some(i) = MONTHS.iter().position(|m| *m == word) {
        return Some(i as u32 + 1);
    }
    let abbreviation = match word {
        "sept" => "sep",
        other => other,
    };
    if abbreviation.len() == 3 && abbreviation != "may" {
        return MONTHS
            .iter()
            .position(|m| m.starts_with(abbreviation))
            .map(|i| i as u32 + 1);
    }
    None
}

/// `8`, `08`, `8th`, `1st`, `22nd`, `3rd` as a day of the month.
fn day_number(word: &str) -> Option<u32> {
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let day: u32 = digits.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

fn year_number(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year: i64 = word.parse().ok()?;
    YEARS.contains(&year).then_some(year)
}

fn small_number(word: &str) -> Option<i64> {
    const WORDS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    match word {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" | "several" => Some(3),
        _ => WORDS
            .iter()
            .position(|w| *w == word)
            .map(|i| i as i64 + 1)
            .or_else(|| {
                (word.len() <= 3 && word.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| word.parse().ok())
                    .flatten()
            }),
    }
}

/// A full date starting at token `i`: the day and the index after its last token.
fn full_date_at(tokens: &[Token], i: usize) -> Option<(i64, usize)> {
    let word = |k: usize| tokens.get(k).map(|t| t.text.as_str());
    let separator = |k: usize| tokens.get(k).map_or("", |t| t.separator.as_str());
    // 2023-05-08 (also 2023/05/08, and with a time after it: 2023-05-08T13:56:00).
    if let Some(year) = word(i).and_then(year_number)
        && let Some(month) = word(i + 1).and_then(|w| w.parse::<u32>().ok())
        && matches!(separator(i + 1), "-" | "/")
        && matches!(separator(i + 2), "-" | "/")
    {
        let day_token = word(i + 2)?;
        // `08t13` when a time follows without a separator.
        let digits: String = day_token.chars().take_while(char::is_ascii_digit).collect();
        let day: u32 = digits.parse().ok()?;
        return Some((day_of(year, month, day)?, i + 3));
    }
    // 8 May 2023, 8th of May, 2023
    if let Some(day) = word(i).and_then(day_number) {
        let mut k = i + 1;
        if word(k) == Some("of") {
            k += 1;
        }
        if let Some(month) = word(k).and_then(month_number)
            && let Some(year) = word(k + 1).and_then(year_number)
        {
            return Some((day_of(year, month, day)?, k + 2));
        }
    }
    // May 8, 2023; May 8th 2023
    if let Some(month) = word(i).and_then(month_number)
        && let Some(day) = word(i + 1).and_then(day_number)
        && let Some(year) = word(i + 2).and_then(year_number)
    {
        return Some((day_of(year, month, day)?, i + 3));
    }
    None
}

/// A time phrase starting at token `i`: what it names and the index after it.
fn phrase_at(tokens: &[Token], i: usize, today: i64) -> Option<(TimeConstraint, usize)> {
    let word = |k: usize| tokens.get(k).map(|t| t.text.as_str());
    let span = |span: DaySpan| TimeConstraint::Span(span);
    if let Some((day, end)) = full_date_at(tokens, i) {
        return Some((
            span(DaySpan {
                start: day,
                end: day + 1,
            }),
            end,
        ));
    }
    // early / mid / late + month-year or year; the beginning / end of …
    let (part, after_part) = match (word(i), word(i + 1), word(i + 2)) {
        (Some("early"), _, _) => (Some(Part::Early), i + 1),
        (Some("mid" | "middle"), Some("of"), _) => (Some(Part::Mid), i + 2),
        (Some("mid" | "middle"), _, _) => (Some(Part::Mid), i + 1),
        (Some("late"), _, _) => (Some(Part::Late), i + 1),
        (Some("beginning" | "start"), Some("of"), _) => (Some(Part::Early), i + 2),
        (Some("end"), Some("of"), _) => (Some(Part::Late), i + 2),
        _ => (None, i),
    };
    let mut k = after_part;
    if word(k) == Some("the") {
        k += 1;
    }
    // Month (of) year.
    if let Some(month) = word(k).and_then(month_number) {
        let mut y = k + 1;
        if word(y) == Some("of") {
            y += 1;
        }
        if let Some(year) = word(y).and_then(year_number) {
            let whole = month_span(year, month)?;
            return Some((span(part.map_or(whole, |p| p.of(whole))), y + 1));
        }
    }
    // Season (of) year.
    if let Some(season) = word(k).and_then(Season::from_word) {
        let mut y = k + 1;
        if word(y) == Some("of") {
            y += 1;
        }
        if let Some(year) = word(y).and_then(year_number) {
            let whole = season.span(year)?;
            return Some((span(part.map_or(whole, |p| p.of(whole))), y + 1));
        }
    }
    // A year on its own.
    if let Some(year) = word(k).and_then(year_number) {
        let whole = year_span(year)?;
        return Some((span(part.map_or(whole, |p| p.of(whole))), k + 1));
    }
    if part.is_some() {
        return None;
    }
    relative_at(tokens, i, today)
}

/// Relative phrases: yesterday, today, last/this week|month|year, N units ago, last <month>,
/// and a month of any year after `in`/`during`.
fn relative_at(tokens: &[Token], i: usize, today: i64) -> Option<(TimeConstraint, usize)> {
    let word = |k: usize| tokens.get(k).map(|t| t.text.as_str());
    let days = |start: i64, end: i64| TimeConstraint::Span(DaySpan { start, end });
    let date = date_of(today)?;
    let (year, month) = (i64::from(date.year()), i64::from(date.month()));
    match word(i)? {
        "yesterday" => return Some((days(today - 1, today), i + 1)),
        "today" | "tonight" => return Some((days(today, today + 1), i + 1)),
        "recently" | "lately" => return Some((days(today - 30, today + 1), i + 1)),
        "last" | "past" | "previous" | "this" => {
            // "the past week" includes today, like "this week".
            let this = matches!(word(i)?, "this" | "past");
            let unit = word(i + 1)?;
            if let Some(m) = month_number(unit) {
                // The most recent such month that has begun (this one included for `this`).
                let m = i64::from(m);
                let y = if m < month || (this && m == month) {
                    year
                } else {
                    year - 1
                };
                let whole = month_span(y, m as u32)?;
                return Some((TimeConstraint::Span(whole), i + 2));
            }
            let span = match (this, unit) {
                (false, "week") => days(today - 14, today - 6),
                (true, "week") => days(today - 6, today + 1),
                (false, "weekend") => days(today - 9, today - 1),
                (false, "month") => TimeConstraint::Span(DaySpan {
                    start: month_start(year, month - 1)?,
                    end: month_start(year, month)?,
                }),
                (true, "month") => TimeConstraint::Span(month_span(year, month as u32)?),
                (false, "year") => TimeConstraint::Span(year_span(year - 1)?),
                (true, "year") => TimeConstraint::Span(year_span(year)?),
                _ => return None,
            };
            return Some((span, i + 2));
        }
        "in" | "during" => {
            // `in March` (no year): that month of any year. `may` only after these words,
            // where it cannot be the verb. `in March 2023` is left to the month-year phrase
            // that starts at the month.
            let m = word(i + 1).and_then(month_number)?;
            let dated = word(i + 2).is_some_and(|w| year_number(w).is_some() || w == "of");
            if dated {
                return None;
            }
            return Some((TimeConstraint::Month(m), i + 2));
        }
        _ => {}
    }
    // N days / weeks / months / years ago
    let n = small_number(word(i)?)?;
    let unit = word(i + 1)?;
    if word(i + 2) != Some("ago") || !(1..=400).contains(&n) {
        return None;
    }
    let unit_days = match unit.trim_end_matches('s') {
        "day" => 1,
        "week" => 7,
        "month" => 30,
        "year" => 365,
        _ => return None,
    };
    let centre = today - n * unit_days;
    let half = (unit_days / 2).max(1);
    Some((days(centre - half, centre + half + 1), i + 3))
}

/// Part of a span.
#[derive(Debug, Clone, Copy)]
enum Part {
    Early,
    Mid,
    Late,
}

impl Part {
    fn of(self, whole: DaySpan) -> DaySpan {
        let third = (whole.end - whole.start) / 3;
        match self {
            Part::Early => DaySpan {
                start: whole.start,
                end: whole.start + third,
            },
            Part::Mid => DaySpan {
                start: whole.start + third,
                end: whole.end - third,
            },
            Part::Late => DaySpan {
                start: whole.end - third,
                end: whole.end,
            },
        }
    }
}

/// Seasons of the northern hemisphere, by meteorological months.
#[derive(Debug, Clone, Copy)]
enum Season {
    Spring,
    Summer,
    Autumn,
    Winter,
}

impl Season {
    fn from_word(word: &str) -> Option<Season> {
        Some(match word {
            "spring" => Season::Spring,
            "summer" => Season::Summer,
            "autumn" | "fall" => Season::Autumn,
            "winter" => Season::Winter,
            _ => return None,
        })
    }

    fn span(self, year: i64) -> Option<DaySpan> {
        let (first, last) = match self {
            Season::Spring => (3, 6),
            Season::Summer => (6, 9),
            Season::Autumn => (9, 12),
            // The winter of 2022 is December 2022 to February 2023.
            Season::Winter => (12, 15),
        };
        Some(DaySpan {
            start: month_start(year, first)?,
            end: month_start(year, last)?,
        })
    }
}

#[cfg(test)]
mod tests;
