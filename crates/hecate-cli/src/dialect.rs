//! The reference's command-line habits, read as ours before clap sees them. This is
//! the one place that knows them (surfaces §1.1, §1.2):
//!
//! - Go's `flag` package takes `-namespace` for `--namespace`: a single-dash word
//!   that is one of our long flags (or `-name=value`) gets its second dash, so
//!   `-namespace X` is never read as `-n amespace`. Short flags (`-n`, `-o`, `-Aw`,
//!   `-nshop`) are left alone: only whole long names are rewritten.
//! - `hecate help [command]` is `hecate [command] --help`; `hecate -v` is `--version`.
//! - `hecate status <gate>` is a usage error that names the command meant
//!   (`did you mean hecate explain <gate>?`).
//! - The reference's `-actor` has no counterpart here; it is refused with a sentence
//!   saying what to do instead, not clap's generic error.
//!
//! The flag names come from the command-line definition itself, so a new flag is
//! accepted single-dashed without touching this file.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use crate::failure::Failure;

/// The names the command line knows, read from its clap definition.
pub(crate) struct Dialect {
    /// Every long flag of every command, with whether it takes a value.
    longs: BTreeMap<String, bool>,
    /// Every short flag that takes a value (its value may be the next word).
    valued_shorts: BTreeSet<char>,
    /// Every command's name.
    commands: BTreeSet<String>,
}

/// The reference's flags that have no counterpart here, with what to do instead.
const NOT_HERE: [(&str, &str); 1] = [(
    "actor",
    "there is no --actor: writes record who the cluster says you are \
     (use --as USER to act as someone you may impersonate)",
)];

impl Dialect {
    /// The dialect of a command line: its flags and commands, at every level.
    pub(crate) fn of(command: &clap::Command) -> Self {
        let mut command = command.clone();
        command.build();
        let mut dialect = Self {
            longs: BTreeMap::from([("help".into(), false), ("version".into(), false)]),
            valued_shorts: BTreeSet::new(),
            commands: BTreeSet::new(),
        };
        dialect.learn(&command);
        dialect
    }

    fn learn(&mut self, command: &clap::Command) {
        for arg in command.get_arguments() {
            let takes_value = arg.get_action().takes_values();
            for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
                self.longs.insert(long.to_string(), takes_value);
            }
            if takes_value {
                self.valued_shorts
                    .extend(arg.get_short_and_visible_aliases().into_iter().flatten());
            }
        }
        for sub in command.get_subcommands() {
            self.commands.insert(sub.get_name().to_string());
            self.learn(sub);
        }
    }

    /// `word` as we spell it: a single-dash word naming one of our long flags
    /// (`-namespace`, `-namespace=shop`) gets its second dash; anything else is as
    /// typed. What [`Dialect::rewrite`] does to each flag, and what completion reads
    /// the words typed so far with.
    pub(crate) fn ours(&self, word: &str) -> String {
        if self.is_single_dash_long(word) {
            format!("-{word}")
        } else {
            word.to_string()
        }
    }

    /// Whether `word` is one of our long flags typed with one dash (Go's habit).
    fn is_single_dash_long(&self, word: &str) -> bool {
        let Some(flag) = word.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
            return false;
        };
        let name = flag.split_once('=').map_or(flag, |(name, _)| name);
        self.longs.contains_key(name)
    }

    /// `argv` (program name first) as clap should read it, or the usage failure a
    /// reference habit with no counterpart here earns. `invoked_as` is how the user
    /// typed the program (`hecate`, `kubectl hecate`), for the hint.
    pub(crate) fn rewrite(
        &self,
        argv: Vec<OsString>,
        invoked_as: &str,
    ) -> Result<Vec<OsString>, Failure> {
        let mut words = argv.into_iter();
        let mut out: Vec<OsString> = words.next().into_iter().collect();
        let mut rest: Vec<OsString> = words.collect();
        // `help [command]` and `-v`, in the first position only (as the reference).
        match rest.first().and_then(|w| w.to_str()) {
            Some("help") => {
                rest.remove(0);
                match rest.first().and_then(|w| w.to_str()) {
                    Some(command) if self.commands.contains(command) => {
                        rest.truncate(1);
                        rest.push("--help".into());
                    }
                    _ => rest = vec!["--help".into()],
                }
            }
            Some("-v") => rest[0] = "--version".into(),
            _ => {}
        }

        let mut value_next = false; // the previous word was a flag awaiting its value
        let mut positionals_only = false; // after `--`
        let mut command: Option<String> = None;
        let mut stray: Option<String> = None; // a positional after `status`
        for word in rest {
            let Some(text) = word.to_str() else {
                out.push(word);
                value_next = false;
                continue;
            };
            if value_next || positionals_only {
                value_next = false;
                if positionals_only {
                    note_positional(text, &mut command, &mut stray);
                }
                out.push(word);
                continue;
            }
            if text == "--" {
                positionals_only = true;
                out.push(word);
                continue;
            }
            // The completion backend reads the words typed so far as they are.
            if command.as_deref() == Some("__complete") {
                out.push(word);
                continue;
            }
            if let Some(flag) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) {
                let (name, attached) = match flag.split_once('=') {
                    Some((name, _)) => (name, true),
                    None => (flag, false),
                };
                if let Some((_, instead)) = NOT_HERE.iter().find(|(n, _)| *n == name) {
                    return Err(Failure::usage(*instead));
                }
                let long = self.is_single_dash_long(text);
                if text.starts_with("--") || long {
                    value_next = !attached && self.longs.get(name).copied().unwrap_or(false);
                } else {
                    // Short flags, possibly bundled (`-Aw`) or with a value (`-nshop`).
                    value_next =
                        flag.len() == 1 && flag.chars().all(|c| self.valued_shorts.contains(&c));
                }
                out.push(if long { self.ours(text).into() } else { word });
                continue;
            }
            note_positional(text, &mut command, &mut stray);
            out.push(word);
        }
        if command.as_deref() == Some("status")
            && let Some(gate) = stray
        {
            return Err(Failure::usage(format!(
                "status shows every Gate and takes no name: did you mean \
                 `{invoked_as} explain {gate}`?"
            )));
        }
        Ok(out)
    }
}

/// A word that is neither a flag nor a flag's value: the command, or an argument.
fn note_positional(text: &str, command: &mut Option<String>, stray: &mut Option<String>) {
    match command {
        None => *command = Some(text.to_string()),
        Some(_) if stray.is_none() => *stray = Some(text.to_string()),
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    fn rewrite(args: &[&str]) -> Result<Vec<String>, String> {
        let argv = std::iter::once("hecate")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        Dialect::of(&crate::cli::Cli::command())
            .rewrite(argv, "hecate")
            .map(|out| {
                out.into_iter()
                    .skip(1)
                    .map(|w| w.to_string_lossy().into_owned())
                    .collect()
            })
            .map_err(|failure| failure.message)
    }

    #[test]
    fn single_dash_long_flags_become_ours() {
        for (typed, read) in [
            (
                &["status", "-namespace", "shop", "-output", "json"][..],
                &["status", "--namespace", "shop", "--output", "json"][..],
            ),
            (
                &["status", "-namespace=shop", "-watch", "-o", "yaml"],
                &["status", "--namespace=shop", "--watch", "-o", "yaml"],
            ),
            (
                &[
                    "promote",
                    "production",
                    "-bundle",
                    "b1",
                    "-watch",
                    "-timeout",
                    "5m",
                ],
                &[
                    "promote",
                    "production",
                    "--bundle",
                    "b1",
                    "--watch",
                    "--timeout",
                    "5m",
                ],
            ),
            (
                &["approve", "b1", "-gate", "production"],
                &["approve", "b1", "--gate", "production"],
            ),
            (
                &[
                    "verify", "-server", "http://f", "-token", "t", "-trail", "x",
                ],
                &[
                    "verify", "--server", "http://f", "--token", "t", "--trail", "x",
                ],
            ),
            (&["explain", "-help"], &["explain", "--help"]),
            (&["-version"], &["--version"]),
        ] {
            assert_eq!(
                rewrite(typed),
                Ok(read.iter().map(|s| s.to_string()).collect())
            );
        }
    }

    #[test]
    fn short_flags_and_values_are_left_alone() {
        for args in [
            &["status", "-n", "shop", "-o", "json"][..],
            &["status", "-nshop", "-Aw"],
            &["status", "-o=json"],
            // A value that looks like one of our long flags is still a value.
            &["promote", "production", "--bundle", "-watch"],
            &["promote", "production", "-b", "-gate"],
            &["explain", "--", "-namespace"],
            &["__complete", "status", "-namespace"],
            &["status", "-x"],
        ] {
            assert_eq!(
                rewrite(args),
                Ok(args.iter().map(|s| s.to_string()).collect()),
                "{args:?}"
            );
        }
    }

    #[test]
    fn help_and_version_words() {
        assert_eq!(rewrite(&["help"]), Ok(vec!["--help".to_string()]));
        assert_eq!(
            rewrite(&["help", "nonsense"]),
            Ok(vec!["--help".to_string()])
        );
        assert_eq!(
            rewrite(&["help", "promote", "extra"]),
            Ok(vec!["promote".to_string(), "--help".to_string()])
        );
        assert_eq!(rewrite(&["-v"]), Ok(vec!["--version".to_string()]));
        // Only in the first place.
        assert_eq!(
            rewrite(&["explain", "help"]),
            Ok(vec!["explain".to_string(), "help".to_string()])
        );
    }

    #[test]
    fn status_with_a_name_suggests_explain() {
        let hint = "status shows every Gate and takes no name: did you mean \
                    `hecate explain production`?";
        for args in [
            &["status", "production"][..],
            &["-namespace", "shop", "status", "production"],
            &["status", "-o", "json", "production", "staging"],
        ] {
            assert_eq!(rewrite(args), Err(hint.to_string()), "{args:?}");
        }
        assert!(rewrite(&["status", "-n", "production"]).is_ok());
    }

    #[test]
    fn reference_flags_with_no_counterpart_say_what_to_do() {
        for args in [
            &["promote", "production", "-bundle", "b1", "-actor", "olaf"][..],
            &["approve", "b1", "--actor=olaf"],
        ] {
            let message = rewrite(args).expect_err("refused");
            assert!(message.contains("there is no --actor"));
        }
        assert_eq!(
            rewrite(&["explain", "production", "-ai"]),
            Ok(vec!["explain".into(), "production".into(), "--ai".into()])
        );
    }
}
