//! Shell completion and the man page, both from the clap definition.
//!
//! The scripts hand the words typed so far to the hidden `hecate __complete`, which
//! answers from the clap tree (commands, flags, values) and, for names, from the
//! cluster: Gates, Bundles, Beacons, and — for `abort` — only Passages still running.
//! Completion never prints an error: an unreachable cluster simply offers nothing.

use std::time::Duration;

use clap::CommandFactory as _;
use hecate_ops::Ops;
use kube::ResourceExt as _;

use crate::cli::{Cli, ClusterArgs, Shell};
use crate::context::Context;
use crate::dialect::Dialect;
use crate::failure::Failure;

/// How long completion may wait for the cluster before offering nothing.
const CLUSTER_BUDGET: Duration = Duration::from_secs(3);

/// A completion script for `shell` that calls back `<program> __complete`.
pub(crate) fn script(shell: Shell, invoked_as: &str) -> String {
    // Plugins are completed by their host (kubectl, flux); the script is for `hecate`.
    let _ = invoked_as;
    match shell {
        Shell::Bash => r#"# bash completion for hecate: source this, or put it in bash-completion's directory.
_hecate() {
    local IFS=$'\n'
    COMPREPLY=($(hecate __complete "${COMP_WORDS[@]:1:$COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _hecate hecate
"#
        .to_string(),
        Shell::Zsh => r#"#compdef hecate
# zsh completion for hecate: put this in a directory on $fpath as _hecate.
_hecate() {
    local -a candidates
    candidates=("${(@f)$(hecate __complete "${(@)words[2,$CURRENT]}" 2>/dev/null)}")
    compadd -a candidates
}
compdef _hecate hecate
"#
        .to_string(),
        Shell::Fish => "# fish completion for hecate: put this in ~/.config/fish/completions/hecate.fish.\n\
complete -c hecate -f -a '(hecate __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'\n"
            .to_string(),
    }
}

/// The candidates for the last of `words`, one per line.
pub(crate) async fn candidates(cluster: &ClusterArgs, words: &[String]) -> String {
    let found = match words.split_last() {
        None => commands(""),
        Some((current, prior)) => complete(cluster, prior, current).await,
    };
    found.into_iter().map(|c| c + "\n").collect()
}

fn commands(prefix: &str) -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

/// What a name positional or flag of each command completes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Names {
    Gates,
    Bundles,
    /// `diff --against`: a Gate or a Bundle.
    GatesAndBundles,
    RunningPassages,
    Beacons,
    Namespaces,
}

async fn complete(cluster: &ClusterArgs, prior: &[String], current: &str) -> Vec<String> {
    let root = Cli::command();
    let dialect = Dialect::of(&root);
    // The words typed so far as the command line reads them: `-namespace shop` is
    // `--namespace shop`, never `-n amespace`.
    let prior: Vec<String> = prior.iter().map(|word| dialect.ours(word)).collect();
    let prior = prior.as_slice();
    let Some(command_name) = prior.iter().find(|w| !w.starts_with('-')) else {
        return commands(current);
    };
    if prior.len() == 1
        && !current.starts_with('-')
        && command_name == &prior[0]
        && prior[0] == *command_name
    {
        // fallthrough: completing the first argument of the command
    }
    let Some(command) = root.find_subcommand(command_name) else {
        return commands(current);
    };
    let previous = prior.last().map(String::as_str).unwrap_or_default();
    let names = match previous {
        // The formats this command's `-o` takes (`name` only where there are names).
        "-o" | "--output" => {
            return command
                .get_arguments()
                .find(|a| a.get_long() == Some("output"))
                .map(crate::cli::format_words)
                .unwrap_or_default()
                .into_iter()
                .filter(|f| f.starts_with(current))
                .collect();
        }
        "-g" | "--gate" => Some(Names::Gates),
        "-b" | "--bundle" | "--to" => Some(Names::Bundles),
        "--against" => Some(Names::GatesAndBundles),
        "-n" | "--namespace" => Some(Names::Namespaces),
        "--kubeconfig" | "--context" | "--as" | "--timeout" => return Vec::new(),
        _ if current.starts_with('-') => {
            // A word begun with one dash and more than one letter is a long flag the
            // reference's way (`-names` → `-namespace`), offered as it is being typed.
            let go_style = !current.starts_with("--") && current.len() > 2;
            let flags = command
                .get_arguments()
                .chain(root.get_arguments())
                .filter(|a| !a.is_positional() && !a.is_hide_set())
                .flat_map(|a| {
                    let dashes = if go_style { "-" } else { "--" };
                    let long = a.get_long().map(|l| format!("{dashes}{l}"));
                    let short = a.get_short().map(|s| format!("-{s}"));
                    long.into_iter().chain(short)
                });
            let mut flags: Vec<String> = flags.filter(|f| f.starts_with(current)).collect();
            flags.sort();
            flags.dedup();
            return flags;
        }
        _ => match command.get_name() {
            "completion" => return filter(["bash", "zsh", "fish"], current),
            "explain" | "targets" | "promote" | "rollback" | "preflight" | "flux" => {
                Some(Names::Gates)
            }
            "approve" | "diff" => Some(Names::Bundles),
            "abort" | "retry" | "accept-failures" => Some(Names::RunningPassages),
            "poll" => Some(Names::Beacons),
            _ => None,
        },
    };
    let Some(names) = names else {
        return Vec::new();
    };
    let cluster = cluster_from_words(cluster, prior);
    let listed = tokio::time::timeout(CLUSTER_BUDGET, list(&cluster, names))
        .await
        .ok()
        .flatten();
    let mut names: Vec<String> = listed
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with(current))
        .collect();
    names.sort();
    names
}

fn filter<const N: usize>(options: [&str; N], current: &str) -> Vec<String> {
    options
        .iter()
        .filter(|o| o.starts_with(current))
        .map(|o| o.to_string())
        .collect()
}

/// The cluster flags typed on the line so far (`-n x`, `--namespace=x`, `-nx`,
/// `--context x`, `--kubeconfig x`, and the reference's `-namespace x`), over those
/// clap already parsed.
pub(crate) fn cluster_from_words(base: &ClusterArgs, words: &[String]) -> ClusterArgs {
    let mut args = base.clone();
    let dialect = Dialect::of(&Cli::command());
    let words: Vec<String> = words.iter().map(|word| dialect.ours(word)).collect();
    let mut words = words.iter().peekable();
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => (word.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| words.next().cloned());
        match flag {
            "-n" | "--namespace" => args.namespace = value(),
            "--context" => args.context = value(),
            "--kubeconfig" => args.kubeconfig = value().map(Into::into),
            "--as" => args.impersonate = value(),
            short if short.starts_with("-n") && short.len() > 2 && !short.starts_with("--") => {
                args.namespace = Some(short[2..].to_string());
            }
            _ => {}
        }
    }
    args
}

async fn list(cluster: &ClusterArgs, names: Names) -> Option<Vec<String>> {
    let cx = Context::connect(cluster).await.ok()?;
    let ops = Ops::new(cx.client.clone());
    let ns = &cx.namespace;
    Some(match names {
        Names::Gates => ops
            .gates(ns)
            .await
            .ok()?
            .iter()
            .map(|g| g.name_any())
            .collect(),
        Names::Bundles => ops
            .bundles(ns)
            .await
            .ok()?
            .iter()
            .map(|b| b.name_any())
            .collect(),
        Names::GatesAndBundles => {
            let (gates, bundles) = futures::try_join!(ops.gates(ns), ops.bundles(ns)).ok()?;
            gates
                .iter()
                .map(|g| g.name_any())
                .chain(bundles.iter().map(|b| b.name_any()))
                .collect()
        }
        Names::Beacons => ops
            .beacons(ns)
            .await
            .ok()?
            .iter()
            .map(|b| b.name_any())
            .collect(),
        Names::RunningPassages => ops
            .passages(ns, None, None)
            .await
            .ok()?
            .iter()
            .filter(|p| !p.is_terminal())
            .map(|p| p.name_any())
            .collect(),
        Names::Namespaces => ops.namespaces().await.ok()?,
    })
}

/// The man page, in roff, ASCII only: NAME (the help's title), SYNOPSIS, DESCRIPTION
/// and OPTIONS from the clap definition, then COMMANDS (each command's synopsis and
/// what it does), EXAMPLES, EXIT STATUS and SEE ALSO. Command lines name the program
/// as it was invoked (`flux hecate …` as a plugin).
pub(crate) fn man_page(invoked_as: &str) -> Result<String, Failure> {
    let mut command = Cli::command().bin_name(invoked_as);
    command.build();
    let version = command.get_version().unwrap_or_default().to_string();
    let man = clap_mangen::Man::new(command.clone());
    let failed = |e: std::io::Error| Failure::could_not_tell(format!("writing the man page: {e}"));
    let mut sections = Vec::new();
    man.render_synopsis_section(&mut sections).map_err(failed)?;
    man.render_description_section(&mut sections)
        .map_err(failed)?;
    man.render_options_section(&mut sections).map_err(failed)?;
    let sections = String::from_utf8(sections).map_err(|e| failed(std::io::Error::other(e)))?;
    // Each section comes with roff's preamble (defining `\*(Aq`): it is given once,
    // after the title.
    let (preamble, sections): (Vec<&str>, Vec<&str>) = sections
        .split_inclusive('\n')
        .partition(|line| line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq"));
    let preamble = preamble.get(..2).unwrap_or_default().concat();
    let sections = sections.concat();
    let what = crate::cli::TITLE
        .split_once(" \u{2014} ")
        .map_or(crate::cli::TITLE, |(_, what)| what);
    // The date is empty and quoted: roff would otherwise read the source as the date.
    let mut text = format!(
        ".TH HECATE 1 \"\" \"hecate {version}\" \"User Commands\"\n{preamble}.SH NAME\nhecate \\- {}\n{sections}",
        roff_text(what)
    );

    text.push_str(".SH COMMANDS\n");
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        // A command with actions of its own (`flux`) has one usage line per form:
        // its own entry keeps the first, and each action gets an entry.
        let first = usage.lines().next().unwrap_or_default();
        text.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_text(first.trim()),
            roff_text(&about)
        ));
        let prefix = first.split(" [").next().unwrap_or(first).trim();
        for action in sub.get_subcommands().filter(|s| !s.is_hide_set()) {
            let usage = action.clone().render_usage().to_string();
            let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage).trim();
            let usage = match usage.strip_prefix(action.get_name()) {
                Some(rest) => format!("{prefix} {}{rest}", action.get_name()),
                None => usage.to_string(),
            };
            let about = action
                .get_about()
                .map(ToString::to_string)
                .unwrap_or_default();
            text.push_str(&format!(
                ".TP\n\\fB{}\\fR\n{}\n",
                roff_text(&usage),
                roff_text(&about)
            ));
        }
    }

    text.push_str(".SH EXAMPLES\n");
    for (i, (what, line)) in EXAMPLES.iter().enumerate() {
        if i > 0 {
            text.push_str(".PP\n");
        }
        text.push_str(&format!(
            "{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
            roff_text(what),
            roff_text(&format!("{invoked_as} {line}"))
        ));
    }

    text.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::exit::TABLE {
        text.push_str(&format!(".TP\n.B {code}\n{}\n", roff_text(meaning)));
    }
    text.push_str(".SH \"SEE ALSO\"\n.BR kubectl (1),\n.BR flux (1)\n");
    Ok(ascii(&text))
}

/// The man page's examples: what it does, and the command after the program's name.
const EXAMPLES: [(&str, &str); 11] = [
    (
        "Every Gate of the namespace at a glance, upstream first:",
        "status -n shop",
    ),
    (
        "Why nothing is crossing into production, and the command that would fix it:",
        "explain production -n shop",
    ),
    (
        "What waits on a person, and whether your approval would count:",
        "approvals -n shop",
    ),
    (
        "How long releases take to reach production and how often it breaks, over a week:",
        "metrics -n shop --since 7d",
    ),
    (
        "Approve a Bundle for production; someone else must then promote it:",
        "approve app-7f3c2a --gate production -n shop",
    ),
    (
        "Move it and follow the crossing \u{2014} exit 0 when it lands, 6 when it does not:",
        "promote production --bundle app-7f3c2a --watch --timeout 30m -n shop",
    ),
    (
        "What a Bundle would change in production: artifacts and commits, newest first:",
        "diff app-7f3c2a --against production -n shop",
    ),
    (
        "Go back to the Bundle production verified before, undoing its latest crossing:",
        "rollback production -n shop",
    ),
    (
        "Ask a crossing to stop; its remaining steps are marked aborted:",
        "abort production-4 -n shop",
    ),
    (
        "Check the evidence chains of a Bundle's crossings in Fides, for a script:",
        "verify app-7f3c2a -o json --server https://fides.example.com",
    ),
    (
        "Each Passage and its phase, one a line, as kubectl's JSONPath templates print:",
        "passages -n shop -o jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}{end}'",
    ),
];

/// Text as roff shows it literally: backslashes and hyphens escaped, and a line
/// starting with a control character guarded.
fn roff_text(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.replace('\\', "\\e").replace('-', "\\-");
            if line.starts_with(['.', '\'']) {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// roff is ASCII: anything else becomes its escape, or a plain stand-in.
fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2014}' => "\\(em".to_string(),
            '\u{2013}' => "\\(en".to_string(),
            '\u{2192}' => "\\(->".to_string(),
            c if c.is_ascii() => c.to_string(),
            _ => "?".to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn words(typed: &[&str]) -> Vec<String> {
        typed.iter().map(|w| w.to_string()).collect()
    }

    /// Surfaces CLI 4 and 6 in the reference's dialect: `-namespace` and `-output` are
    /// our long flags with one dash, as the command line itself reads them.
    #[tokio::test]
    async fn completion_reads_the_references_single_dash_flags() {
        let cluster = cluster_from_words(
            &ClusterArgs::default(),
            &words(&["status", "-namespace", "uidemo"]),
        );
        assert_eq!(cluster.namespace.as_deref(), Some("uidemo"));
        let cluster = cluster_from_words(
            &ClusterArgs::default(),
            &words(&["status", "-namespace=uidemo"]),
        );
        assert_eq!(cluster.namespace.as_deref(), Some("uidemo"));
        // Short flags stay short: `-nshop` is `-n shop`.
        let cluster = cluster_from_words(&ClusterArgs::default(), &words(&["status", "-nshop"]));
        assert_eq!(cluster.namespace.as_deref(), Some("shop"));

        let none = ClusterArgs::default();
        for output in ["-o", "--output", "-output"] {
            assert_eq!(
                complete(&none, &words(&["status", output]), "").await,
                ["table", "wide", "json", "yaml", "name", "jsonpath="],
                "{output}"
            );
        }
        assert_eq!(
            complete(&none, &words(&["status"]), "-names").await,
            ["-namespace"]
        );
        assert_eq!(
            complete(&none, &words(&["status"]), "--names").await,
            ["--namespace"]
        );
    }

    /// `-o` completes to the formats the command takes: `name` only where its answer
    /// is objects, and a template's format with its `=`.
    #[tokio::test]
    async fn completion_offers_each_commands_formats() {
        let none = ClusterArgs::default();
        for command in [
            "gates", "bundles", "passages", "beacons", "explain", "promote", "rollback", "flux",
        ] {
            assert_eq!(
                complete(&none, &words(&[command, "-o"]), "").await,
                ["table", "wide", "json", "yaml", "name", "jsonpath="],
                "{command}"
            );
        }
        for command in ["audit", "evidence", "preflight", "verify", "diff"] {
            assert_eq!(
                complete(&none, &words(&[command, "-o"]), "").await,
                ["table", "wide", "json", "yaml", "jsonpath="],
                "{command}"
            );
        }
        assert_eq!(
            complete(&none, &words(&["gates", "--output"]), "j").await,
            ["json", "jsonpath="]
        );
        assert_eq!(
            complete(&none, &words(&["completion", "-o"]), "").await,
            Vec::<String>::new()
        );
    }

    /// The man page's examples are commands `hecate` accepts, as a shell reads them
    /// (words apart at spaces, except inside single quotes, which go).
    #[test]
    fn the_examples_parse() {
        for (_, line) in EXAMPLES {
            let mut words = vec![String::new()];
            let mut quoted = false;
            for c in line.chars() {
                match c {
                    '\'' => quoted = !quoted,
                    ' ' if !quoted => words.push(String::new()),
                    c => words.last_mut().unwrap().push(c),
                }
            }
            let words = std::iter::once("hecate".to_string()).chain(words);
            if let Err(e) = Cli::try_parse_from(words) {
                panic!("{line}: {e}");
            }
        }
    }
}
