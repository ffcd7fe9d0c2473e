//! Spec §11.1 (AC-001 – AC-009), AC-152 and AC-153, daylight saving, and when the
//! answer next changes.

use hecate_types::Window;
use pretty_assertions::assert_eq;

use crate::rules::fixtures::{at, window};
use crate::rules::window::judge;

fn zoned(schedule: &str, duration: &str, zone: &str) -> Window {
    Window {
        time_zone: zone.into(),
        ..window(schedule, duration)
    }
}

fn deny(schedule: &str, duration: &str) -> Window {
    Window {
        deny: true,
        ..window(schedule, duration)
    }
}

/// Asserts the verdict at each instant; every refusal has a reason, every allowance none.
fn check(windows: &[Window], cases: &[(&str, bool)]) {
    for (t, allowed) in cases {
        let j = judge(windows, at(t));
        assert_eq!(j.allowed, *allowed, "at {t}: {}", j.reason);
        assert_eq!(
            j.reason.is_empty(),
            *allowed,
            "at {t}: reason {:?}",
            j.reason
        );
    }
}

#[test]
fn ac001_no_windows_always_allow() {
    let j = judge(&[], at("2026-08-10T03:00:00Z"));
    assert!(j.allowed);
    assert_eq!(j.reason, "");
    assert_eq!(j.next_change, None);
}

#[test]
fn ac002_an_allow_window() {
    let windows = [window("0 9 * * 1-5", "6h")];
    check(
        &windows,
        &[
            ("2026-08-10T09:00:01Z", true),
            ("2026-08-10T12:00:00Z", true),
            ("2026-08-10T14:59:59Z", true),
            ("2026-08-10T15:00:01Z", false),
            ("2026-08-10T08:00:00Z", false),
            ("2026-08-09T12:00:00Z", false),
        ],
    );
    assert_eq!(
        judge(&windows, at("2026-08-10T08:00:00Z")).reason,
        "outside every promotion window"
    );
}

#[test]
fn ac003_deny_beats_allow() {
    let windows = [window("0 0 * * *", "24h"), deny("0 12 * * 5", "12h")];
    check(
        &windows,
        &[
            ("2026-08-12T14:00:00Z", true),
            ("2026-08-14T14:00:00Z", false),
        ],
    );
    assert_eq!(
        judge(&windows, at("2026-08-14T14:00:00Z")).reason,
        r#"blocked by deny window "0 12 * * 5""#
    );
}

#[test]
fn ac004_deny_only_allows_outside_the_freeze() {
    check(
        &[deny("0 12 * * 5", "12h")],
        &[
            ("2026-08-12T14:00:00Z", true),
            ("2026-08-14T14:00:00Z", false),
        ],
    );
}

#[test]
fn ac005_the_time_zone_is_honoured() {
    let windows = [zoned("0 9 * * *", "1h", "Europe/London")];
    check(
        &windows,
        &[
            ("2026-08-10T08:30:00Z", true), // 09:30 BST
            ("2026-08-10T09:30:00Z", false),
            ("2026-01-12T09:30:00Z", true), // 09:30 GMT
            ("2026-01-12T08:30:00Z", false),
        ],
    );
}

#[test]
fn ac006_to_008_an_invalid_window_refuses() {
    let cases = [
        (
            window("not a cron expression", "1h"),
            "windows[0] is invalid: invalid schedule \"not a cron expression\"",
        ),
        (
            zoned("0 9 * * *", "1h", "Mars/Olympus"),
            "windows[0] is invalid: unknown time zone \"Mars/Olympus\"",
        ),
        (
            window("0 9 * * *", "0s"),
            "windows[0] is invalid: duration must be positive",
        ),
        (
            window("0 9 * * *", "-1h"),
            "windows[0] is invalid: duration must be positive",
        ),
        (
            window("0 9 * * *", "soon"),
            "windows[0] is invalid: invalid duration \"soon\"",
        ),
        (
            window("0 9 * * 7", "1h"),
            "windows[0] is invalid: invalid schedule",
        ),
        (
            window("0 9 * *", "1h"),
            "windows[0] is invalid: invalid schedule",
        ),
        (
            window("0 0 9 * * *", "1h"),
            "windows[0] is invalid: invalid schedule",
        ),
    ];
    for (w, want) in cases {
        let j = judge(std::slice::from_ref(&w), at("2026-08-10T09:30:00Z"));
        assert!(!j.allowed, "{w:?}");
        assert!(j.reason.starts_with(want), "{w:?}: {}", j.reason);
        assert_eq!(
            j.next_change, None,
            "an invalid window does not heal with time"
        );
    }
}

#[test]
fn ac009_overlapping_allow_windows() {
    let windows = [window("0 9 * * 1-5", "2h"), window("0 14 * * 1-5", "2h")];
    check(
        &windows,
        &[
            ("2026-08-10T10:00:00Z", true),
            ("2026-08-10T15:00:00Z", true),
            ("2026-08-10T12:00:00Z", false),
        ],
    );
}

#[test]
fn ac152_open_at_the_activation_closed_at_its_end() {
    let windows = [window("0 9 * * 1-5", "6h")];
    check(
        &windows,
        &[
            ("2026-08-10T09:00:00Z", true),
            ("2026-08-10T15:00:00Z", false),
        ],
    );
}

#[test]
fn ac153_windows_are_judged_in_order() {
    let windows = [deny("0 12 * * 5", "12h"), window("bogus", "1h")];
    assert_eq!(
        judge(&windows, at("2026-08-14T14:00:00Z")).reason,
        r#"blocked by deny window "0 12 * * 5""#
    );
    assert!(
        judge(&windows, at("2026-08-12T14:00:00Z"))
            .reason
            .starts_with("windows[1] is invalid: ")
    );
}

#[test]
fn a_deny_window_inside_an_allow_window() {
    // Weekdays 08:00–18:00 London, but not Wednesday 12:00–13:00 (a release freeze).
    let windows = [
        zoned("0 8 * * 1-5", "10h", "Europe/London"),
        Window {
            deny: true,
            ..zoned("0 12 * * 3", "1h", "Europe/London")
        },
    ];
    check(
        &windows,
        &[
            ("2026-08-12T10:30:00Z", true),  // Wed 11:30 BST
            ("2026-08-12T11:30:00Z", false), // Wed 12:30 BST, frozen
            ("2026-08-12T12:00:00Z", true),  // Wed 13:00 BST, the freeze has ended
            ("2026-08-13T11:30:00Z", true),  // Thu 12:30 BST
        ],
    );
    let frozen = judge(&windows, at("2026-08-12T11:30:00Z"));
    assert_eq!(frozen.next_change, Some(at("2026-08-12T12:00:00Z")));
}

#[test]
fn daylight_saving_in_london() {
    // 09:00 local is 08:00Z in summer and 09:00Z in winter; the change in 2026 is on
    // Sunday 29 March (spring forward) and Sunday 25 October (fall back).
    let windows = [zoned("0 9 * * *", "1h", "Europe/London")];
    check(
        &windows,
        &[
            ("2026-03-28T09:30:00Z", true), // Sat, GMT
            ("2026-03-29T08:30:00Z", true), // Sun, BST from 01:00Z
            ("2026-03-29T09:30:00Z", false),
            ("2026-10-24T08:30:00Z", true), // Sat, BST
            ("2026-10-25T09:30:00Z", true), // Sun, GMT again
            ("2026-10-25T08:30:00Z", false),
        ],
    );
    // Closed on the Saturday evening before the spring change: it next opens at
    // 09:00 BST, which is 08:00Z — not 09:00Z.
    assert_eq!(
        judge(&windows, at("2026-03-28T20:00:00Z")).next_change,
        Some(at("2026-03-29T08:00:00Z"))
    );
}

#[test]
fn daylight_saving_in_new_york() {
    // A night window 01:30 for 2h: on 8 March 2026 the clocks skip 02:00–03:00.
    let windows = [zoned("30 1 * * *", "2h", "America/New_York")];
    check(
        &windows,
        &[
            ("2026-03-07T07:00:00Z", true),  // Sat 02:00 EST
            ("2026-03-08T06:45:00Z", true),  // Sun 01:45 EST
            ("2026-03-08T07:15:00Z", true),  // Sun 03:15 EDT: opened at 06:30Z, open 2h
            ("2026-03-08T08:45:00Z", false), // Sun 04:45 EDT
            ("2026-03-09T05:45:00Z", true),  // Mon 01:45 EDT
        ],
    );
    // When the window is open its end is reported, two hours after it opened.
    assert_eq!(
        judge(&windows, at("2026-03-08T06:45:00Z")).next_change,
        Some(at("2026-03-08T08:30:00Z"))
    );
}

#[test]
fn the_next_change_of_a_closed_weekday_window() {
    let windows = [window("0 9 * * 1-5", "8h")];
    // Friday evening: next open Monday 09:00.
    let j = judge(&windows, at("2026-08-14T18:00:00Z"));
    assert!(!j.allowed);
    assert_eq!(j.next_change, Some(at("2026-08-17T09:00:00Z")));
    // Open on Monday: closes at 17:00.
    let j = judge(&windows, at("2026-08-17T10:00:00Z"));
    assert!(j.allowed);
    assert_eq!(j.next_change, Some(at("2026-08-17T17:00:00Z")));
}

#[test]
fn overlapping_activations_close_at_the_end_of_the_run() {
    // Hourly activations, each open for 90 minutes, only between 09:00 and 12:00:
    // open from 09:00 until 12:00 + 90m = 13:30 without a gap.
    let windows = [window("0 9-12 * * *", "90m")];
    assert_eq!(
        judge(&windows, at("2026-08-10T09:10:00Z")).next_change,
        Some(at("2026-08-10T13:30:00Z"))
    );
}

#[test]
fn a_weekend_freeze_ends_on_monday() {
    let windows = [Window {
        deny: true,
        ..zoned("0 0 * * 6", "48h", "Europe/London")
    }];
    let j = judge(&windows, at("2026-11-29T14:00:00Z")); // Sunday
    assert!(!j.allowed);
    assert_eq!(j.next_change, Some(at("2026-11-30T00:00:00Z"))); // Monday 00:00 GMT
}

#[test]
fn descriptors_and_names() {
    check(
        &[window("@daily", "1h")],
        &[
            ("2026-08-10T00:30:00Z", true),
            ("2026-08-10T01:30:00Z", false),
        ],
    );
    check(
        &[window("@midnight", "1h")],
        &[("2026-08-10T00:30:00Z", true)],
    );
    check(
        &[window("@weekly", "24h")],
        &[
            ("2026-08-09T10:00:00Z", true),
            ("2026-08-10T10:00:00Z", false),
        ],
    );
    check(
        &[window("0 9 * * MON-FRI", "1h")],
        &[
            ("2026-08-10T09:30:00Z", true),
            ("2026-08-09T09:30:00Z", false),
        ],
    );
    check(
        &[window("0 9 1 JAN *", "1h")],
        &[
            ("2026-01-01T09:30:00Z", true),
            ("2026-02-01T09:30:00Z", false),
        ],
    );
    // The schedule's own zone wins over timeZone.
    check(
        &[zoned("CRON_TZ=Europe/London 0 9 * * *", "1h", "Asia/Tokyo")],
        &[
            ("2026-08-10T08:30:00Z", true),
            ("2026-08-10T00:30:00Z", false),
        ],
    );
    // @every: open always when the delay fits in the duration, never otherwise.
    check(
        &[window("@every 30m", "1h")],
        &[("2026-08-10T08:30:00Z", true)],
    );
    check(
        &[window("@every 2h", "1h")],
        &[("2026-08-10T08:30:00Z", false)],
    );
}

#[test]
fn day_of_month_or_day_of_week() {
    // Both restricted: either matches (the 1st, or any Monday).
    let windows = [window("0 9 1 * 1", "1h")];
    check(
        &windows,
        &[
            ("2026-09-01T09:30:00Z", true),
            ("2026-08-10T09:30:00Z", true),
            ("2026-08-11T09:30:00Z", false),
        ],
    );
}

/// Each window's one opening — the one under way, else the next — for a surface to say
/// in the viewer's zone, with the zone it is read in.
#[test]
fn a_window_says_its_opening_and_its_zone() {
    use crate::rules::window::describe;
    let freeze = Window {
        deny: true,
        ..zoned("0 0 * * 6", "48h", "Europe/London")
    };
    // Sunday: in force since Saturday 00:00 BST (23:00 UTC on Friday), until Monday.
    let words = describe(std::slice::from_ref(&freeze), at("2026-06-14T14:00:00Z"));
    assert_eq!(words[0].zone, "Europe/London");
    assert!(words[0].open);
    assert_eq!(
        (
            words[0].opens.as_ref().map(|t| t.0),
            words[0].closes.as_ref().map(|t| t.0)
        ),
        (
            Some(at("2026-06-12T23:00:00Z")),
            Some(at("2026-06-14T23:00:00Z"))
        )
    );
    // Wednesday: the next one.
    let words = describe(&[freeze], at("2026-06-17T12:00:00Z"));
    assert!(!words[0].open);
    assert_eq!(
        (
            words[0].opens.as_ref().map(|t| t.0),
            words[0].closes.as_ref().map(|t| t.0)
        ),
        (
            Some(at("2026-06-19T23:00:00Z")),
            Some(at("2026-06-21T23:00:00Z"))
        )
    );
    // No zone named: UTC. `@every` has no one opening.
    let words = describe(
        &[window("0 9 * * *", "1h"), window("@every 1h", "2h")],
        at("2026-06-17T12:00:00Z"),
    );
    assert_eq!(words[0].zone, "UTC");
    assert_eq!(
        words[0].opens.as_ref().map(|t| t.0),
        Some(at("2026-06-18T09:00:00Z"))
    );
    assert_eq!(
        (words[1].opens.clone(), words[1].closes.clone()),
        (None, None)
    );
}

/// Issue 53: a person reads the windows that hold crossings in words, not as cron; the
/// reference's reason stays the sentence's start.
#[test]
fn what_holds_crossings_is_said_in_words_after_the_references_reason() {
    let allow = [
        window("0 9 * * 1-5", "8h"),
        zoned("0 22 * * 6", "2h", "Europe/London"),
    ];
    assert_eq!(
        judge(&allow, at("2026-08-10T08:00:00Z")).reason_in_words(),
        "outside every promotion window (crossings allowed Mon–Fri 09:00 – 17:00 UTC or \
         Sat 22:00 – Sun 00:00 Europe/London) until Mon 10 Aug 2026 09:00 UTC"
    );
    let freeze = [window("0 0 * * *", "24h"), deny("0 12 * * 5", "12h")];
    assert_eq!(
        judge(&freeze, at("2026-08-14T14:00:00Z")).reason_in_words(),
        "blocked by deny window \"0 12 * * 5\" (no crossings Fri 12:00 – Sat 00:00 UTC) \
         until Sat 15 Aug 2026 00:00 UTC"
    );
    assert_eq!(
        judge(&freeze, at("2026-08-12T14:00:00Z")).reason_in_words(),
        ""
    );
    // An invalid window has no words to give: its problem is the reason.
    let invalid = [window("bogus", "1h")];
    let judged = judge(&invalid, at("2026-08-12T14:00:00Z"));
    assert_eq!(judged.words, "");
    assert!(
        judged
            .reason_in_words()
            .starts_with("windows[0] is invalid")
    );
}
