use super::*;

fn day(y: i64, m: u32, d: u32) -> i64 {
    day_of(y, m, d).unwrap()
}

fn span(query: &str, now: (i64, u32, u32)) -> Option<(i64, i64)> {
    let now_ms = day(now.0, now.1, now.2) * DAY_MS + 15 * 3_600_000;
    match query_time(query, now_ms)?.constraint {
        TimeConstraint::Span(span) => Some((span.start, span.end)),
        TimeConstraint::Month(_) => None,
    }
}

const NOW: (i64, u32, u32) = (2026, 12, 2);

#[test]
fn absolute_dates_in_their_usual_spellings() {
    let may8 = Some((day(2023, 5, 8), day(2023, 5, 9)));
    for query in [
        "what happened on 8 May 2023?",
        "what happened on May 8, 2023",
        "what happened on May 8th 2023",
        "on the 8th of May, 2023 what did she buy",
        "events of 2023-05-08",
        "at 2023-05-08T13:56:00Z",
        "1:56 pm on 8 May, 2023",
    ] {
        assert_eq!(span(query, NOW), may8, "{query}");
    }
    assert_eq!(
        span("what did Ana do in May 2023?", NOW),
        Some((day(2023, 5, 1), day(2023, 6, 1)))
    );
    assert_eq!(
        span("in March of 2022", NOW),
        Some((day(2022, 3, 1), day(2022, 4, 1)))
    );
    assert_eq!(
        span("anything in 2021?", NOW),
        Some((day(2021, 1, 1), day(2022, 1, 1)))
    );
    assert_eq!(
        span("in the spring of 2022", NOW),
        Some((day(2022, 3, 1), day(2022, 6, 1)))
    );
    assert_eq!(
        span("winter 2022", NOW),
        Some((day(2022, 12, 1), day(2023, 3, 1)))
    );
    let (start, end) = span("early June 2024", NOW).unwrap();
    assert_eq!(start, day(2024, 6, 1));
    assert_eq!(end, day(2024, 6, 11));
    let (start, end) = span("at the end of 2020", NOW).unwrap();
    assert!(start > day(2020, 8, 1) && end == day(2021, 1, 1));
}

#[test]
fn several_phrases_give_the_span_covering_them() {
    assert_eq!(
        span("between March 2023 and May 2023", NOW),
        Some((day(2023, 3, 1), day(2023, 6, 1)))
    );
}

#[test]
fn relative_phrases_count_from_now() {
    assert_eq!(
        span("what did I say yesterday", NOW),
        Some((day(2026, 12, 1), day(2026, 12, 2)))
    );
    assert_eq!(
        span("last month", NOW),
        Some((day(2026, 11, 1), day(2026, 12, 1)))
    );
    assert_eq!(
        span("last year", NOW),
        Some((day(2025, 1, 1), day(2026, 1, 1)))
    );
    assert_eq!(
        span("what did we decide last May", NOW),
        Some((day(2026, 5, 1), day(2026, 6, 1)))
    );
    assert_eq!(
        span("last December", NOW),
        Some((day(2025, 12, 1), day(2026, 1, 1)))
    );
    let (start, end) = span("two weeks ago", NOW).unwrap();
    assert!(start <= day(2026, 11, 18) && end > day(2026, 11, 18));
    let (start, end) = span("3 months ago", NOW).unwrap();
    assert!(start <= day(2026, 9, 3) && end > day(2026, 9, 3));
}

#[test]
fn a_month_without_a_year_is_that_month_of_any_year() {
    let time = query_time("what did she cook in March?", 0).unwrap();
    assert_eq!(time.constraint, TimeConstraint::Month(3));
    assert_eq!(time.constraint.closeness(day(2019, 3, 30)), 1.0);
    assert_eq!(time.constraint.closeness(day(2019, 4, 1)), 0.0);
    // "may" the verb is not a month.
    assert_eq!(query_time("may I ask what the pool size is", 0), None);
    assert_eq!(query_time("how do I configure the pool", 0), None);
}

#[test]
fn the_words_of_the_phrase_are_reported() {
    let time = query_time("What did Ana bake in May 2023?", 0).unwrap();
    let words: Vec<String> = tokens("What did Ana bake in May 2023?")
        .into_iter()
        .map(|t| t.text)
        .collect();
    let said: Vec<&str> = time.words.iter().map(|&i| words[i].as_str()).collect();
    assert_eq!(said, ["may", "2023"]);
}

#[test]
fn closeness_is_one_inside_and_decays_outside() {
    let may = TimeConstraint::Span(month_span(2023, 5).unwrap());
    assert_eq!(may.closeness(day(2023, 5, 31)), 1.0);
    let june2 = may.closeness(day(2023, 6, 2));
    let june20 = may.closeness(day(2023, 6, 20));
    assert!(june2 > june20 && june20 > 0.0 && june2 < 1.0);
    assert!(may.closeness(day(2021, 5, 10)) < 0.01);
}

#[test]
fn records_are_dated_by_their_metadata_first() {
    let created = day(2026, 12, 1) * DAY_MS;
    let dated = |metadata: serde_json::Value| record_day(&metadata, created);
    assert_eq!(dated(serde_json::json!({})), day(2026, 12, 1));
    assert_eq!(
        dated(serde_json::json!({"speaker": "Ana", "date": "2023-05-08T13:56:00"})),
        day(2023, 5, 8)
    );
    assert_eq!(
        dated(serde_json::json!({"session_date": "1:56 pm on 8 May, 2023"})),
        day(2023, 5, 8)
    );
    assert_eq!(
        dated(serde_json::json!({"timestamp": 1_683_504_000})),
        day(2023, 5, 8)
    );
    assert_eq!(
        dated(serde_json::json!({"timestamp": 1_683_504_000_000i64})),
        day(2023, 5, 8)
    );
    assert_eq!(
        dated(serde_json::json!({"source": {"occurred_at": "2021-02-03"}})),
        day(2021, 2, 3)
    );
    // A value that is not a date leaves created_at.
    assert_eq!(
        dated(serde_json::json!({"date": "sometime soon"})),
        day(2026, 12, 1)
    );
    // The preferred key wins over a later one.
    assert_eq!(
        dated(serde_json::json!({"created": "2020-01-01", "date": "2023-05-08"})),
        day(2023, 5, 8)
    );
}

#[test]
fn hostile_text_is_harmless() {
    let long = "9999-99-99 ".repeat(10_000);
    assert_eq!(parse_day(&long), None);
    // No such day: the month is what is left of it.
    assert_eq!(
        span("31 February 2023", NOW),
        Some((day(2023, 2, 1), day(2023, 3, 1)))
    );
    assert_eq!(parse_day("31 February 2023"), None);
    assert_eq!(parse_day("-5-5-5"), None);
    assert!(query_time(&"last ".repeat(5000), 0).is_none());
}
