//! Go's duration syntax, which Gates and Beacons use for `duration`, `interval` and
//! `timeout`: a sequence of decimal numbers with units, `300ms`, `1.5h`, `2h45m`,
//! optionally signed. Units: `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`.

use std::fmt;

use jiff::SignedDuration;

/// A duration string that is not valid Go syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError {
    input: String,
    problem: &'static str,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid duration {:?}: {}", self.input, self.problem)
    }
}

impl std::error::Error for DurationError {}

/// Parses a Go duration (`time.ParseDuration` syntax) into a signed duration.
pub fn parse(input: &str) -> Result<SignedDuration, DurationError> {
    let error = |problem| DurationError {
        input: input.to_string(),
        problem,
    };
    let (negative, mut rest) = match input.as_bytes().first() {
        Some(b'-') => (true, &input[1..]),
        Some(b'+') => (false, &input[1..]),
        _ => (false, input),
    };
    if rest == "0" {
        return Ok(SignedDuration::ZERO);
    }
    if rest.is_empty() {
        return Err(error("empty"));
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() || number == "." {
            return Err(error("expected a number"));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let nanos_per_unit: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60 * 1_000_000_000,
            "h" => 3_600 * 1_000_000_000,
            "" => return Err(error("missing unit")),
            _ => return Err(error("unknown unit")),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if fraction.contains('.') {
            return Err(error("expected a number"));
        }
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| error("out of range"))?
        };
        let mut value = whole
            .checked_mul(nanos_per_unit)
            .ok_or_else(|| error("out of range"))?;
        // The fraction, scaled to the unit, truncated to whole nanoseconds as Go does.
        let mut scale = nanos_per_unit;
        for digit in fraction.bytes().take(24) {
            scale /= 10;
            value += i128::from(digit - b'0') * scale;
        }
        total = total
            .checked_add(value)
            .ok_or_else(|| error("out of range"))?;
        if total > i128::from(i64::MAX) {
            return Err(error("out of range"));
        }
        rest = after;
    }
    let total = if negative { -total } else { total };
    let nanos = i64::try_from(total).map_err(|_| error("out of range"))?;
    Ok(SignedDuration::from_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_syntax() {
        let cases = [
            ("0", 0),
            ("5m", 300_000_000_000),
            ("5m0s", 300_000_000_000),
            ("1.5h", 5_400_000_000_000),
            ("2h45m", 9_900_000_000_000),
            ("300ms", 300_000_000),
            ("1µs", 1_000),
            ("1us", 1_000),
            ("7ns", 7),
            ("-1m", -60_000_000_000),
            ("+2s", 2_000_000_000),
            (".5s", 500_000_000),
            ("1.s", 1_000_000_000),
            ("48h", 172_800_000_000_000),
        ];
        for (input, nanos) in cases {
            assert_eq!(
                parse(input),
                Ok(SignedDuration::from_nanos(nanos)),
                "{input}"
            );
        }
    }

    #[test]
    fn not_go_syntax() {
        for input in [
            "",
            "-",
            "5",
            "5 m",
            "m",
            "1d",
            "1.2.3s",
            "99999999999999999999h",
            "1h-1m",
            ".",
        ] {
            let err = parse(input).unwrap_err();
            assert!(
                err.to_string().contains(&format!("{input:?}")),
                "{input}: {err}"
            );
        }
    }
}
