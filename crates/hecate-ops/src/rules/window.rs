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
                        reason: denied,
                        next_change: None,
                    };
                }
                return WindowJudgement {
                    allowed: false,
                    reason: format!("windows[{i}] is invalid: {problem}"),
                    next_change: None,
                };
            }
        }
    }
    let (allowed, reason) = evaluate(&parsed, now);
    let next_change = next_change(&parsed, now, allowed);
    WindowJudgement {
        allowed,
        reason,
        next_change,
    }
}

fn open_deny_before(parsed: &[ParsedWindow], now: Timestamp) -> Option<String> {
    parsed
        .iter()
        .find(|w| w.deny && w.is_open(now))
        .map(ParsedWindow::deny_reason)
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
        let mut expression = window.schedule.trim();
        // A `CRON_TZ=<zone> ` (or `TZ=<zone> `) prefix names the schedule's own zone.
        for prefix in ["CRON_TZ=", "TZ="] {
            if let Some(rest) = expression.strip_prefix(prefix) {
                let (name, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                zone = self::zone(name)?;
                expression = rest.trim();
            }
        }
        let schedule = schedule(expression)
            .map_err(|cause| format!("invalid schedule {:?}: {cause}", window.schedule))?;
        Ok(Self {
            text: window.schedule.clone(),
            schedule,
            duration,
            zone,
            deny: window.deny,
        })
    }

    fn deny_reason(&self) -> String {
        format!("blocked by deny window {:?}", self.text)
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
