//! Promotion windows: when a crossing may start.
//!
//! A window opens at each activation of its cron schedule (read on the wall clock of
//! its time zone, so it follows daylight-saving changes) and stays open for its
//! duration: open at `t` when some activation `a` has `a ≤ t < a + duration`. Deny
//! windows are freezes. With several windows, crossings may start when no deny window
//! is open and — if any allow window exists — at least one allow window is open. A
//! window that does not parse refuses everything: a typo must never widen access.
//!
//! Besides yes or no, [`judge`] says when the answer next changes, which is what a
//! person waiting on a window wants to know.

use croner::Cron;
use croner::parser::{CronParser, Seconds};
use hecate_types::Window;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::model::WindowWords;

/// How far ahead to look for the next change. Further than a year is "not soon".
const HORIZON: SignedDuration = SignedDuration::from_hours(24 * 400);
/// How many window edges to step over looking for a change of the overall answer.
const MAX_STEPS: usize = 512;

/// Whether a crossing may start now, and when that changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowJudgement {
    /// Whether a crossing may start.
    pub allowed: bool,
    /// Why not, in words; empty when allowed.
    pub reason: String,
    /// When `allowed` next flips, if that happens within the next 400 days. Never set
    /// when a window is invalid: that does not change with time.
    pub next_change: Option<Timestamp>,
    /// The windows that hold crossings, as a person reads them rather than as cron
    /// (`no crossings Sat 00:00 – Mon 00:00 UTC`); empty when allowed or invalid.
    pub words: String,
}

impl WindowJudgement {
    /// The reason with when it lifts, e.g. `outside every promotion window until
    /// 2026-08-12T06:00:00Z`. Empty when allowed.
    pub fn reason_with_until(&self) -> String {
        match self.next_change {
            Some(t) if !self.allowed => {
                format!("{} until {}", self.reason, t.strftime("%Y-%m-%dT%H:%M:%SZ"))
            }
            _ => self.reason.clone(),
        }
    }
}

impl WindowJudgement {
    /// The reason with the windows in words and when it lifts, as a person reads it:
    /// `outside every promotion window (crossings allowed Mon–Fri 09:00 – 17:00 UTC)
    /// until Wed 12 Aug 2026 06:00 UTC`. The reference's reason stays its prefix.
    /// Empty when allowed.
    pub fn reason_in_words(&self) -> String {
        if self.allowed {
            return String::new();
        }
        let mut said = self.reason.clone();
        if !self.words.is_empty() {
            said = format!("{said} ({})", self.words);
        }
        match self.next_change {
            Some(t) => format!("{said} until {}", t.strftime("%a %-d %b %Y %H:%M UTC")),
            None => said,
        }
    }
}

/// Judges `windows` at `now`. No windows: always allowed.
pub fn judge(windows: &[Window], now: Timestamp) -> WindowJudgement {
    let mut parsed = Vec::with_capacity(windows.len());
    for (i, window) in windows.iter().enumerate() {
        match ParsedWindow::parse(window) {
            Ok(window) => parsed.push(window),
            Err(problem) => {
                // The reference reports windows in order and stops at the first
                // answer, so an open deny window listed earlier wins over this one.
                if let Some(denied) = open_deny_before(&parsed, now) {
                    return WindowJudgement {
                        allowed: false,
                        reason: denied.deny_reason(),
                        next_change: None,
                        words: denied.holding_words(),
                    };
                }
                return WindowJudgement {
                    allowed: false,
                    reason: format!("windows[{i}] is invalid: {problem}"),
                    next_change: None,
                    words: String::new(),
                };
            }
        }
    }
    let (allowed, reason) = evaluate(&parsed, now);
    let next_change = next_change(&parsed, now, allowed);
    let words = if allowed {
        String::new()
    } else {
        holding_words(&parsed, now)
    };
    WindowJudgement {
        allowed,
        reason,
        next_change,
        words,
    }
}

fn open_deny_before(parsed: &[ParsedWindow], now: Timestamp) -> Option<&ParsedWindow> {
    parsed.iter().find(|w| w.deny && w.is_open(now))
}

/// What holds crossings at `now`, in words: the open freeze that [`evaluate`] names,
/// else every allow window, none of which is open.
fn holding_words(windows: &[ParsedWindow], now: Timestamp) -> String {
    if let Some(freeze) = open_deny_before(windows, now) {
        return freeze.holding_words();
    }
    let allowed: Vec<String> = windows
        .iter()
        .filter(|w| !w.deny)
        .map(ParsedWindow::when)
        .collect();
    format!("crossings allowed {}", allowed.join(" or "))
}

/// The overall answer over valid windows.
fn evaluate(windows: &[ParsedWindow], t: Timestamp) -> (bool, String) {
    let mut any_allow = false;
    let mut allow_open = false;
    for window in windows {
        if window.deny {
            if window.is_open(t) {
                return (false, window.deny_reason());
            }
        } else {
            any_allow = true;
            allow_open = allow_open || window.is_open(t);
        }
    }
    if any_allow && !allow_open {
        return (false, "outside every promotion window".into());
    }
    (true, String::new())
}

/// The first instant after `now` at which the overall answer differs from `current`.
fn next_change(windows: &[ParsedWindow], now: Timestamp, current: bool) -> Option<Timestamp> {
    let mut t = now;
    for _ in 0..MAX_STEPS {
        let edge = windows.iter().filter_map(|w| w.next_edge(t)).min()?;
        if edge.duration_since(now) > HORIZON {
            return None;
        }
        if evaluate(windows, edge).0 != current {
            return Some(edge);
        }
        t = edge;
    }
    None
}

enum Schedule {
    Cron(Box<Cron>),
    /// `@every <duration>`: activations a fixed delay apart, starting whenever asked.
    /// Such a window is open always or never, depending on whether the delay fits in
    /// the duration.
    Every(SignedDuration),
}

struct ParsedWindow {
    text: String,
    /// The cron expression without a zone prefix.
    expression: String,
    /// The zone's name as written (empty: UTC).
    zone_name: String,
    schedule: Schedule,
    duration: SignedDuration,
    zone: TimeZone,
    deny: bool,
}

impl ParsedWindow {
    /// Validates in the reference's order: duration, then zone, then schedule.
    fn parse(window: &Window) -> Result<Self, String> {
        let duration =
            hecate_types::duration::parse(&window.duration).map_err(|e| e.to_string())?;
        if duration <= SignedDuration::ZERO {
            return Err("duration must be positive".into());
        }
        let mut zone = zone(&window.time_zone)?;
        let mut zone_name = window.time_zone.clone();
        let mut expression = window.schedule.trim();
        // A `CRON_TZ=<zone> ` (or `TZ=<zone> `) prefix names the schedule's own zone.
        for prefix in ["CRON_TZ=", "TZ="] {
            if let Some(rest) = expression.strip_prefix(prefix) {
                let (name, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                zone = self::zone(name)?;
                zone_name = name.to_string();
                expression = rest.trim();
            }
        }
        let schedule = schedule(expression)
            .map_err(|cause| format!("invalid schedule {:?}: {cause}", window.schedule))?;
        Ok(Self {
            text: window.schedule.clone(),
            expression: expression.to_string(),
            zone_name,
            schedule,
            duration,
            zone,
            deny: window.deny,
        })
    }

    fn deny_reason(&self) -> String {
        format!("blocked by deny window {:?}", self.text)
    }

    /// A freeze in words: `no crossings Sat 00:00 – Mon 00:00 UTC`.
    fn holding_words(&self) -> String {
        format!("no crossings {}", self.when())
    }

    /// When the window applies, in its own zone: `Mon–Fri 09:00 – 17:00 UTC`.
    fn when(&self) -> String {
        match &self.schedule {
            Schedule::Every(_) => "at any time".to_string(),
            Schedule::Cron(_) => span(&self.expression, self.duration, &self.zone_words()),
        }
    }

    /// The zone as the words say it: its name as written, `UTC` when none is.
    fn zone_words(&self) -> String {
        match (self.zone_name.as_str(), self.zone.iana_name()) {
            ("" | "UTC", _) => "UTC".to_string(),
            ("Local", Some(name)) => name.to_string(),
            ("Local", None) => "local time".to_string(),
            (name, _) => name.to_string(),
        }
    }

    /// The first activation strictly after `t`.
    fn activation_after(&self, t: Timestamp) -> Option<Timestamp> {
        match &self.schedule {
            Schedule::Cron(cron) => cron
                .find_next_occurrence(&t.to_zoned(self.zone.clone()), false)
                .ok()
                .map(|z| z.timestamp()),
            Schedule::Every(delay) => t.checked_add(*delay).ok(),
        }
    }

    fn is_open(&self, t: Timestamp) -> bool {
        match &self.schedule {
            Schedule::Every(delay) => *delay <= self.duration,
            Schedule::Cron(_) => t
                .checked_sub(self.duration)
                .ok()
                .and_then(|start| self.activation_after(start))
                .is_some_and(|a| a <= t),
        }
    }

    /// The next instant after `t` at which this window opens or closes.
    fn next_edge(&self, t: Timestamp) -> Option<Timestamp> {
        if matches!(self.schedule, Schedule::Every(_)) {
            return None;
        }
        if !self.is_open(t) {
            return self.activation_after(t);
        }
        // Open: it closes `duration` after the last of a run of activations that
        // overlap one another.
        let mut activation = self.activation_after(t.checked_sub(self.duration).ok()?)?;
        let mut end = activation.checked_add(self.duration).ok()?;
        for _ in 0..MAX_STEPS {
            let next = self.activation_after(activation)?;
            if next > end {
                return Some(end);
            }
            activation = next;
            end = next.checked_add(self.duration).ok()?;
        }
        None // open for good, as far as anyone will wait
    }
}

/// An IANA zone; empty is UTC, `Local` is this machine's zone (as in the reference).
fn zone(name: &str) -> Result<TimeZone, String> {
    match name {
        "" | "UTC" => Ok(TimeZone::UTC),
        "Local" => Ok(TimeZone::system()),
        name => TimeZone::get(name).map_err(|cause| format!("unknown time zone {name:?}: {cause}")),
    }
}

/// The reference's cron dialect (robfig/cron "standard"): five fields, names for
/// months and weekdays, weekdays 0–6, the `@` descriptors, and `@every <duration>`.
fn schedule(expression: &str) -> Result<Schedule, String> {
    if let Some(every) = expression.strip_prefix("@every ") {
        let delay = hecate_types::duration::parse(every.trim()).map_err(|e| e.to_string())?;
        if delay <= SignedDuration::ZERO {
            return Err("@every needs a positive duration".into());
        }
        return Ok(Schedule::Every(delay));
    }
    let expression = if expression.eq_ignore_ascii_case("@midnight") {
        "@daily"
    } else {
        expression
    };
    if !expression.starts_with('@') {
        let fields: Vec<&str> = expression.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week), found {}",
                fields.len()
            ));
        }
        // Weekdays run 0–6 (0 is Sunday); `7` is not accepted, as in the reference.
        if fields[4]
            .split(|c: char| !c.is_ascii_digit())
            .any(|n| n.parse::<u32>().is_ok_and(|n| n > 6))
        {
            return Err(format!("day-of-week {:?} is outside 0-6", fields[4]));
        }
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .build()
        .parse(expression)
        .map(|cron| Schedule::Cron(Box::new(cron)))
        .map_err(|cause| cause.to_string())
}

/// Each of `windows` in words at `now`, in order: when it applies, in its own zone, and
/// where it stands (`in force now; lifts Mon 00:00`). `next` is when it next opens or
/// closes, so an explanation holding these words holds until the earliest `next`.
pub fn describe(windows: &[Window], now: Timestamp) -> Vec<WindowWords> {
    windows
        .iter()
        .enumerate()
        .map(|(i, window)| match ParsedWindow::parse(window) {
            Ok(parsed) => parsed.words(now),
            Err(problem) => WindowWords {
                text: format!(
                    "window {} does not parse ({problem}), so it refuses every crossing",
                    i + 1
                ),
                deny: true,
                open: true,
                next: None,
                zone: String::new(),
                opens: None,
                closes: None,
            },
        })
        .collect()
}

impl ParsedWindow {
    fn words(&self, now: Timestamp) -> WindowWords {
        let open = self.is_open(now);
        let next = self.next_edge(now);
        let zone = self.zone_words();
        let verb = if self.deny {
            "no crossings"
        } else {
            "crossings allowed"
        };
        let when = self.when();
        let at = |t: Timestamp| moment(t, now, &self.zone);
        let standing = match (&self.schedule, self.deny, open, next) {
            (Schedule::Every(_), _, true, _) => "always".to_string(),
            (Schedule::Every(_), _, false, _) => "never, as written".to_string(),
            (_, true, true, Some(t)) => format!("in force now; lifts {}", at(t)),
            (_, true, true, None) => "in force now".to_string(),
            (_, true, false, Some(t)) => format!("next in force {}", at(t)),
            (_, false, true, Some(t)) => format!("open now; closes {}", at(t)),
            (_, false, true, None) => "open now".to_string(),
            (_, false, false, Some(t)) => format!("closed now; opens {}", at(t)),
            (_, _, false, None) => "not again within a year".to_string(),
        };
        let (opens, closes) = self.opening(now).unzip();
        WindowWords {
            text: format!("{verb} {when}; {standing}"),
            deny: self.deny,
            open,
            next: next.map(hecate_types::Time),
            zone: self
                .zone
                .iana_name()
                .map_or_else(|| zone.clone(), str::to_string),
            opens: opens.map(hecate_types::Time),
            closes: closes.map(hecate_types::Time),
        }
    }

    /// The opening `now` falls in, or the next one: when it begins and ends (a run of
    /// overlapping activations is one opening). None for `@every`, which is open
    /// always or never, and for a schedule that does not fire within the horizon.
    fn opening(&self, now: Timestamp) -> Option<(Timestamp, Timestamp)> {
        if matches!(self.schedule, Schedule::Every(_)) {
            return None;
        }
        let begins = if self.is_open(now) {
            self.activation_after(now.checked_sub(self.duration).ok()?)?
        } else {
            self.activation_after(now)?
        };
        if begins.duration_since(now) > HORIZON {
            return None;
        }
        Some((begins, self.next_edge(begins)?))
    }
}

/// How near an instant must be to be named by its weekday alone ([`moment`]).
pub const WEEKDAY_ONLY: SignedDuration = SignedDuration::from_hours(24 * 6);

/// An instant as a person reads it in the window's zone: `Mon 00:00` within the coming
/// six days, `Mon 4 Jan 00:00` beyond them.
fn moment(t: Timestamp, now: Timestamp, zone: &TimeZone) -> String {
    let zoned = t.to_zoned(zone.clone());
    if t.duration_since(now) <= WEEKDAY_ONLY {
        zoned.strftime("%a %H:%M").to_string()
    } else {
        zoned.strftime("%a %-d %b %H:%M").to_string()
    }
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// When a cron window applies, in words and in `zone`: `Sat 00:00 – Mon 00:00 UTC`,
/// `daily 22:00 – 06:00 UTC`, `Mon–Fri 09:00 – 17:00 UTC`; anything else as its
/// expression and duration.
fn span(expression: &str, duration: SignedDuration, zone: &str) -> String {
    let expanded = match expression.to_ascii_lowercase().as_str() {
        "@daily" | "@midnight" => "0 0 * * *".to_string(),
        "@weekly" => "0 0 * * 0".to_string(),
        _ => expression.to_string(),
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    let minutes = duration.as_secs() / 60;
    let fallback = || format!("from each `{expression}` {zone} for {}", length(duration));
    let [minute, hour, "*", "*", dow] = fields[..] else {
        return fallback();
    };
    let (Ok(minute), Ok(hour)) = (minute.parse::<i64>(), hour.parse::<i64>()) else {
        return fallback();
    };
    if minute > 59 || hour > 23 || minutes <= 0 {
        return fallback();
    }
    let start = hour * 60 + minute;
    let end = start + minutes;
    let clock = |m: i64| format!("{:02}:{:02}", (m % 1440) / 60, m % 60);
    if dow == "*" {
        return if minutes < 24 * 60 {
            format!("daily {} – {} {zone}", clock(start), clock(end))
        } else {
            format!(
                "daily from {} {zone} for {}",
                clock(start),
                length(duration)
            )
        };
    }
    if let Some(day) = weekday(dow) {
        if minutes < 7 * 24 * 60 {
            let end_day = (day + end / 1440) % 7;
            return format!(
                "{} {} – {} {} {zone}",
                DAYS[day as usize],
                clock(start),
                DAYS[end_day as usize],
                clock(end)
            );
        }
        return format!(
            "{} from {} {zone} for {}",
            DAYS[day as usize],
            clock(start),
            length(duration)
        );
    }
    let Some(days) = weekdays(dow) else {
        return fallback();
    };
    if minutes < 24 * 60 {
        format!("{days} {} – {} {zone}", clock(start), clock(end))
    } else {
        format!(
            "{days} from {} {zone} for {}",
            clock(start),
            length(duration)
        )
    }
}

/// One weekday, as a number 0–6 or a name.
fn weekday(field: &str) -> Option<i64> {
    if let Ok(n) = field.parse::<i64>() {
        return (0..7).contains(&n).then_some(n);
    }
    DAYS.iter()
        .position(|d| d.eq_ignore_ascii_case(field))
        .and_then(|i| i64::try_from(i).ok())
}

/// Weekday lists and ranges (`1-5`, `MON,WED`) in words (`Mon–Fri`, `Mon, Wed`).
fn weekdays(field: &str) -> Option<String> {
    let parts: Option<Vec<String>> = field
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => Some(format!(
                "{}–{}",
                DAYS[usize::try_from(weekday(a)?).ok()?],
                DAYS[usize::try_from(weekday(b)?).ok()?]
            )),
            None => Some(DAYS[usize::try_from(weekday(part)?).ok()?].to_string()),
        })
        .collect();
    parts.map(|p| p.join(", "))
}

/// A duration in words: `48 h`, `90 min`, `2 days`, `1 day 3 h`.
pub fn length(duration: SignedDuration) -> String {
    let minutes = duration.as_secs().max(0) / 60;
    let (days, hours, mins) = (minutes / 1440, (minutes % 1440) / 60, minutes % 60);
    let mut parts = Vec::new();
    if days > 0 {
        parts.push(if days == 1 {
            "1 day".to_string()
        } else {
            format!("{days} days")
        });
    }
    if hours > 0 {
        parts.push(format!("{hours} h"));
    }
    if mins > 0 {
        parts.push(format!("{mins} min"));
    }
    if parts.is_empty() {
        return format!("{} s", duration.as_secs().max(0));
    }
    parts.join(" ")
}
