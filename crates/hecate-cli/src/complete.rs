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
    RunningPassages,
    Beacons,
    Namespaces,
}

async fn complete(cluster: &ClusterArgs, prior: &[String], current: &str) -> Vec<String> {
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
    let root = Cli::command();
    let Some(command) = root.find_subcommand(command_name) else {
        return commands(current);
    };
    let previous = prior.last().map(String::as_str).unwrap_or_default();
    let names = match previous {
        "-o" | "--output" => return filter(["table", "json", "yaml"], current),
        "-g" | "--gate" => Some(Names::Gates),
        "-b" | "--bundle" => Some(Names::Bundles),
        "-n" | "--namespace" => Some(Names::Namespaces),
        "--kubeconfig" | "--context" | "--as" | "--timeout" => return Vec::new(),
        _ if current.starts_with('-') => {
            let flags = command
                .get_arguments()
                .chain(root.get_arguments())
                .filter(|a| !a.is_positional() && !a.is_hide_set())
                .flat_map(|a| {
                    let long = a.get_long().map(|l| format!("--{l}"));
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
            "explain" | "promote" => Some(Names::Gates),
            "approve" => Some(Names::Bundles),
            "abort" => Some(Names::RunningPassages),
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
/// `--context x`, `--kubeconfig x`), over those clap already parsed.
pub(crate) fn cluster_from_words(base: &ClusterArgs, words: &[String]) -> ClusterArgs {
    let mut args = base.clone();
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

/// The man page, in roff, ASCII only.
pub(crate) fn man_page(invoked_as: &str) -> Result<String, Failure> {
    let command = Cli::command().bin_name(invoked_as);
    let mut roff = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut roff)
        .map_err(|e| Failure::could_not_tell(format!("writing the man page: {e}")))?;
    let mut text = String::from_utf8(roff)
        .map_err(|e| Failure::could_not_tell(format!("writing the man page: {e}")))?;
    text.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::exit::TABLE {
        text.push_str(&format!(".TP\n.B {code}\n{meaning}\n"));
    }
    text.push_str(".SH \"SEE ALSO\"\n.BR kubectl (1),\n.BR flux (1)\n");
    // roff is ASCII: anything else becomes its escape, or a plain stand-in.
    Ok(text
        .chars()
        .map(|c| match c {
            '—' => "\\(em".to_string(),
            '–' => "\\(en".to_string(),
            '→' => "\\(->".to_string(),
            c if c.is_ascii() => c.to_string(),
            _ => "?".to_string(),
        })
        .collect())
}
