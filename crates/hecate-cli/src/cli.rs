//! The command line, as clap sees it. Help, completion and the man page are all
//! generated from these definitions, so they cannot disagree.

use std::path::PathBuf;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::jsonpath::Template;

/// Why a release is or is not moving between environments, and moving it.
#[derive(Parser, Debug)]
#[command(
    name = "hecate",
    version,
    about = "Hecate moves releases between environments on Kubernetes.",
    long_about = "Hecate moves releases between environments on Kubernetes.\n\n\
                  A Beacon emits Bundles (sets of artifact versions); a Gate is an environment with \
                  rules for entering it; a Passage is one attempt to move a Bundle through a Gate. \
                  `hecate status` shows every Gate; `hecate explain <gate>` says why nothing is crossing.",
    after_help = after_help(),
    help_template = help_template(),
    disable_help_subcommand = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// How to reach the cluster, kubectl-style. Global: valid before or after the command.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ClusterArgs {
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) context: Option<String>,
    /// The namespace (default: the context's, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NAME")]
    pub(crate) namespace: Option<String>,
    /// Act as another user, if the cluster lets you impersonate them. Writes record
    /// that user as the actor.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub(crate) impersonate: Option<String>,
    /// A group to act as, with --as; repeat it for several.
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub(crate) impersonate_groups: Vec<String>,
    /// How long one request to the cluster may take before giving up (e.g. 5s, 1m);
    /// 0, the default: no limit of its own.
    #[arg(long, global = true, value_name = "DURATION", value_parser = request_timeout)]
    pub(crate) request_timeout: Option<std::time::Duration>,
    /// The Fides server for Gates that name none in `evidence.serverURL`.
    #[arg(
        long,
        global = true,
        env = "FIDES_SERVER_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) fides_server: Option<String>,
}

/// kubectl's `--request-timeout`: a duration with its unit (`5s`, `1m30s`), or a whole
/// number of seconds; `0` is no limit (see [`ClusterArgs::request_timeout`]).
fn request_timeout(text: &str) -> Result<std::time::Duration, String> {
    let limit = match text.parse::<u64>() {
        Ok(seconds) => std::time::Duration::from_secs(seconds),
        Err(_) => hecate_types::duration::parse(text)
            .ok()
            .and_then(|limit| limit.try_into().ok())
            .ok_or_else(|| format!("{text:?} is not a duration like 5s or 1m (0: no limit)"))?,
    };
    Ok(limit)
}

impl ClusterArgs {
    /// The request limit asked for; `None` when none was, or `0` was.
    pub(crate) fn request_timeout(&self) -> Option<std::time::Duration> {
        self.request_timeout.filter(|limit| !limit.is_zero())
    }
}

/// How to print data: kubectl's `-o` formats. `table` and `wide` are the command's
/// own rendering; the others print the value that rendering is made from.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Format {
    /// Aligned text for people.
    #[default]
    Table,
    /// The table with the columns it leaves out; nothing cut to fit the terminal.
    Wide,
    /// The value itself, as JSON.
    Json,
    /// The value itself, as YAML (same field names as JSON).
    Yaml,
    /// The objects the answer is, or acted on, one `<kind>.<group>/<name>` a line.
    Name,
    /// kubectl's JSONPath template, over the JSON value.
    JsonPath(Template),
}

impl Format {
    /// Whether this is the command's own rendering (`table` or `wide`).
    pub(crate) fn is_table(&self) -> bool {
        matches!(self, Self::Table | Self::Wide)
    }

    /// `-o`'s value, on a command whose answer is objects (`names`) or not.
    fn parse(text: &str, names: bool) -> Result<Self, String> {
        Ok(match text {
            "table" | "" => Self::Table,
            "wide" => Self::Wide,
            "json" => Self::Json,
            "yaml" => Self::Yaml,
            "name" if names => Self::Name,
            "name" => {
                return Err(
                    "this command's answer is a report, not objects, so it has no names \
                            to print: use -o json, -o yaml or -o jsonpath=TEMPLATE"
                        .into(),
                );
            }
            "jsonpath" | "jsonpath=" => {
                return Err(
                    "jsonpath needs its template, as in -o jsonpath='{.items[*].metadata.name}'"
                        .into(),
                );
            }
            other => match other.strip_prefix("jsonpath=") {
                Some(template) => Self::JsonPath(
                    Template::parse(template)
                        .map_err(|e| format!("not a JSONPath template: {e}"))?,
                ),
                None => {
                    let formats: Vec<&str> = FORMATS
                        .iter()
                        .filter(|f| names || f.name != "name")
                        .map(|f| f.spelled)
                        .collect();
                    return Err(format!("the formats are {}", formats.join(", ")));
                }
            },
        })
    }
}

/// One of `-o`'s formats as help, the man page and completion name it.
struct FormatName {
    /// The value, or its start for a format that takes a template (`jsonpath`).
    name: &'static str,
    /// As typed: `jsonpath=TEMPLATE`.
    spelled: &'static str,
    /// What completion offers: `jsonpath=`, for the template to follow.
    typed: &'static str,
    help: &'static str,
}

/// Every format, in the order help lists them.
const FORMATS: [FormatName; 6] = [
    FormatName {
        name: "table",
        spelled: "table",
        typed: "table",
        help: "aligned text for people",
    },
    FormatName {
        name: "wide",
        spelled: "wide",
        typed: "wide",
        help: "the table with the columns it leaves out, nothing cut to fit the terminal",
    },
    FormatName {
        name: "json",
        spelled: "json",
        typed: "json",
        help: "the value itself, as JSON",
    },
    FormatName {
        name: "yaml",
        spelled: "yaml",
        typed: "yaml",
        help: "the value itself, as YAML (the same field names as JSON)",
    },
    FormatName {
        name: "name",
        spelled: "name",
        typed: "name",
        help: "the objects the answer is or acted on, one kind.group/name a line \
               (gate.hecate.dev/dev), as kubectl -o name",
    },
    FormatName {
        name: "jsonpath",
        spelled: "jsonpath=TEMPLATE",
        typed: "jsonpath=",
        help: "with its template, jsonpath=TEMPLATE: kubectl's JSONPath over the JSON value, \
               a list being .items, as in \
               -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'",
    },
];

/// `-o`'s parser: every format, or (`names: false`) every one but `name`. A bad
/// value, a JSONPath template that cannot work included, is a usage error before
/// anything is asked of the cluster.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FormatParser {
    names: bool,
}

impl TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        let names = self.names;
        // clap's own wording for a rejected value: `invalid value 'x' for '--output
        // <FORMAT>': <why>`.
        let parse = move |text: &str| Format::parse(text, names);
        parse.parse_ref(command, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            FORMATS
                .iter()
                .filter(|f| self.names || f.name != "name")
                .map(|f| PossibleValue::new(f.name).help(f.help)),
        ))
    }
}

/// The formats an `-o` takes, as completion offers them.
pub(crate) fn format_words(output: &clap::Arg) -> Vec<String> {
    output
        .get_possible_values()
        .iter()
        .filter_map(|value| FORMATS.iter().find(|f| f.name == value.get_name()))
        .map(|f| f.typed.to_string())
        .collect()
}

/// `-o` on a command whose answer is objects, or acts on one: every format.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct OutputArg {
    /// Output format: table, wide, json, yaml, name or jsonpath=TEMPLATE (kubectl's).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        value_parser = FormatParser { names: true },
        default_value = "table"
    )]
    pub(crate) format: Format,
}

/// `-o` on a command whose answer is a report rather than objects (`audit`,
/// `evidence`, `preflight`, `verify`): every format but `name`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ReportOutputArg {
    /// Output format: table, wide, json, yaml or jsonpath=TEMPLATE (kubectl's).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        value_parser = FormatParser { names: false },
        default_value = "table"
    )]
    pub(crate) format: Format,
}

/// A shell to complete for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shell {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Every Gate at a glance: state, current Bundle, health, why.
    Status {
        /// Every namespace you may read, not just one.
        #[arg(short = 'A', long)]
        all_namespaces: bool,
        /// Keep watching and redraw whenever something changes.
        #[arg(short = 'w', long)]
        watch: bool,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Why a Gate is where it is: what stands in the way, and how to fix it.
    Explain {
        /// The Gate.
        gate: String,
        /// After the table, have a language model put the diagnosis into words (an
        /// OpenAI-compatible endpoint: $HECATE_LLM_URL, $HECATE_LLM_MODEL,
        /// $HECATE_LLM_API_KEY, else $OPENAI_*). It never changes the answer or the
        /// exit code.
        #[arg(long)]
        ai: bool,
        #[command(flatten)]
        output: OutputArg,
    },
    /// A Gate's targets, by wave, and where the crossing under way (or the last one)
    /// stands on each: phase, attempt, the step it is on or failed at, revisions.
    Targets {
        /// The Gate.
        gate: String,
        #[command(flatten)]
        output: OutputArg,
    },
    /// List the Gates.
    Gates {
        #[command(flatten)]
        output: OutputArg,
    },
    /// List the Bundles, newest first, each with its version and what its commit says.
    Bundles {
        #[command(flatten)]
        output: OutputArg,
    },
    /// What changed between two Bundles: their artifacts side by side and the commits
    /// between them (newest first); going back lists the commits a rollback undoes.
    Diff {
        /// The Bundle.
        bundle: String,
        /// What to compare it with: a Gate (what it runs now) or another Bundle; a
        /// Gate when one has the name. Without it, the Beacon's previous Bundle.
        #[arg(long, value_name = "GATE|BUNDLE")]
        against: Option<String>,
        #[command(flatten)]
        output: ReportOutputArg,
    },
    /// List the Passages, newest first.
    Passages {
        /// Only those crossing this Gate.
        #[arg(long, value_name = "GATE")]
        gate: Option<String>,
        /// Only those moving this Bundle.
        #[arg(long, value_name = "BUNDLE")]
        bundle: Option<String>,
        #[command(flatten)]
        output: OutputArg,
    },
    /// List the Beacons.
    Beacons {
        #[command(flatten)]
        output: OutputArg,
    },
    /// Who is told about this namespace's releases (its Notifiers, and whether they
    /// deliver), then what was sent, to where, and what came of it, newest first.
    Notifications {
        /// Only what concerns this Gate: the Notifiers that hear it, what they sent
        /// about it.
        #[arg(long)]
        gate: Option<String>,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Start moving a Bundle through a Gate.
    Promote {
        /// The Gate.
        gate: String,
        /// The Bundle to move.
        #[arg(short = 'b', long, value_name = "BUNDLE")]
        bundle: String,
        /// Follow the crossing until it lands (exit 0) or does not (exit 6).
        #[arg(short = 'w', long)]
        watch: bool,
        /// With --watch: give up after this long (e.g. 10m), exit 2.
        #[arg(long, value_name = "DURATION", requires = "watch")]
        timeout: Option<String>,
        /// Create nothing: say whether promote would start the crossing (exit 5 when
        /// it would be refused) and each step it would run, its with: resolved.
        #[arg(long, conflicts_with = "watch")]
        dry_run: bool,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Go back: cross a Bundle the Gate verified before again, undoing its latest
    /// crossing.
    Rollback {
        /// The Gate.
        gate: String,
        /// The Bundle to go back to; without it, the newest earlier one the Gate
        /// verified.
        #[arg(long, value_name = "BUNDLE", conflicts_with = "targets")]
        to: Option<String>,
        /// Roll back only some targets of the Gate's last rollout, to what they ran
        /// before it: `failed`, `all` (every one it reached), or names separated by
        /// commas. The Gate keeps what it holds.
        #[arg(long, value_name = "failed|all|NAMES")]
        targets: Option<String>,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Approve a Bundle for one Gate (someone else must then promote it).
    Approve {
        /// The Bundle.
        bundle: String,
        /// The Gate the approval is for; an approval is for one Gate only.
        #[arg(short = 'g', long, value_name = "GATE")]
        gate: String,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Say no to a Bundle for one Gate: it is held there until the no is withdrawn.
    Reject {
        /// The Bundle.
        bundle: String,
        /// The Gate it is held from; a rejection is for one Gate only.
        #[arg(short = 'g', long, value_name = "GATE")]
        gate: String,
        /// Why, recorded with the rejection and shown wherever the Bundle is held.
        #[arg(long, value_name = "TEXT", required_unless_present = "withdraw")]
        reason: Option<String>,
        /// Withdraw the rejections you may withdraw instead: your own, or any when the
        /// Gate's approval policy names you.
        #[arg(long, conflicts_with = "reason")]
        withdraw: bool,
        #[command(flatten)]
        output: OutputArg,
    },
    /// The Bundles waiting on a person: approvals still missing, or a rejection
    /// standing; each with its progress against the Gate's policy and whether your
    /// approval would count.
    Approvals {
        #[command(flatten)]
        output: OutputArg,
    },
    /// Ask a running crossing to stop.
    Abort {
        /// The Passage.
        passage: String,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Cross the failed targets of a halted rollout again; nothing else restarts.
    Retry {
        /// The Passage whose rollout halted.
        passage: String,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Accept the failures that halted a rollout and let its later waves go on; the
    /// reason is kept on the record with your name.
    AcceptFailures {
        /// The Passage whose rollout halted.
        passage: String,
        /// Why going on is right, kept on the record.
        #[arg(long, value_name = "TEXT")]
        reason: String,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Ask a Beacon to look at its sources now.
    Poll {
        /// The Beacon.
        beacon: String,
        /// Wait until the Beacon has looked.
        #[arg(short = 'w', long)]
        wait: bool,
        /// With --wait: give up after this long (e.g. 2m), exit 2.
        #[arg(long, value_name = "DURATION", requires = "wait")]
        timeout: Option<String>,
        #[command(flatten)]
        output: OutputArg,
    },
    /// How well releases are delivered: lead time, deployment frequency, change
    /// failure rate and time to restore, per Gate and where releases end up.
    Metrics {
        /// Only this Gate's figures.
        #[arg(short = 'g', long, value_name = "GATE")]
        gate: Option<String>,
        /// How far back: days (30d), weeks (2w) or hours and minutes (12h).
        #[arg(
            long,
            value_name = "PERIOD",
            default_value = "30d",
            value_parser = hecate_ops::rules::delivery::parse_period
        )]
        since: jiff::SignedDuration,
        #[command(flatten)]
        output: ReportOutputArg,
    },
    /// What happened: crossings, refusals, approvals, aborts, newest first.
    Audit {
        #[command(flatten)]
        output: ReportOutputArg,
    },
    /// Why a Bundle was allowed, and who allowed it: its evidence in Fides.
    Evidence {
        /// The Bundle.
        bundle: String,
        #[command(flatten)]
        output: ReportOutputArg,
    },
    /// Would the evidence gate let each eligible Bundle through? Asked of Fides before
    /// anyone promotes.
    Preflight {
        /// The Gate.
        gate: String,
        #[command(flatten)]
        output: ReportOutputArg,
    },
    /// The Flux objects a Gate depends on, as they stand; or suspend, resume or
    /// reconcile one of them.
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        subcommand_value_name = "ACTION"
    )]
    Flux(FluxArgs),
    /// Check the tamper-evident chains of a Bundle's recorded crossings in Fides.
    Verify(VerifyArgs),
    /// Print a shell completion script.
    Completion {
        /// The shell.
        shell: Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Print the version.
    Version,
    /// Completion backend: print candidates for the words typed so far.
    #[command(name = "__complete", hide = true)]
    Complete {
        /// The words after the program name; the last is the one being completed.
        #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
        words: Vec<String>,
    },
}

/// The first line of help and the man page's NAME. It says `hecate` however the
/// command was invoked: as a plugin only the usage lines name `kubectl hecate` or
/// `flux hecate` (surfaces §1.8, "the title line is not rewritten").
pub(crate) const TITLE: &str = "hecate \u{2014} release promotion on Kubernetes";

/// clap's default help layout under [`TITLE`].
fn help_template() -> String {
    format!(
        "{TITLE}\n\n{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{{all-args}}{{after-help}}"
    )
}

fn after_help() -> String {
    let mut text = String::from("Exit status:\n");
    for (code, meaning) in crate::exit::TABLE {
        text.push_str(&format!("  {code}  {meaning}\n"));
    }
    text
}

/// `hecate verify`'s arguments.
#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    /// The Bundle (or give --trail).
    #[arg(required_unless_present = "trail", conflicts_with = "trail")]
    pub(crate) bundle: Option<String>,
    /// Check this trail only; the cluster is not asked.
    #[arg(long, value_name = "ID")]
    pub(crate) trail: Option<String>,
    /// The Fides server.
    #[arg(
        long,
        env = "FIDES_SERVER_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(crate) server: Option<String>,
    /// The Fides API token.
    #[arg(
        long,
        env = "FIDES_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub(crate) token: Option<String>,
    /// Look for crossings in every namespace you may read.
    #[arg(short = 'A', long)]
    pub(crate) all_namespaces: bool,
    #[command(flatten)]
    pub(crate) output: ReportOutputArg,
}

/// `hecate flux`: list a Gate's Flux objects, or act on one.
#[derive(Args, Debug)]
pub(crate) struct FluxArgs {
    /// The Gate whose Flux objects to list.
    #[arg(required = true)]
    pub(crate) gate: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArg,
    #[command(subcommand)]
    pub(crate) action: Option<FluxAction>,
}

/// What to do to one Flux object a Gate's watch names.
#[derive(Subcommand, Debug)]
pub(crate) enum FluxAction {
    /// Stop Flux reconciling it until it is resumed.
    Suspend(FluxTarget),
    /// Let Flux reconcile it again.
    Resume(FluxTarget),
    /// Ask Flux to reconcile it now.
    Reconcile(FluxTarget),
}

/// One Flux object, through the Gate that depends on it.
#[derive(Args, Debug)]
pub(crate) struct FluxTarget {
    /// The Gate whose watch names the object.
    pub(crate) gate: String,
    /// The object, as KIND/NAME (e.g. Kustomization/podinfo).
    #[arg(value_name = "KIND/NAME")]
    pub(crate) object: String,
    #[command(flatten)]
    pub(crate) output: OutputArg,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::request_timeout;

    #[test]
    fn the_request_timeout_reads_as_kubectl_reads_it() {
        assert_eq!(request_timeout("0"), Ok(Duration::ZERO));
        assert_eq!(request_timeout("0s"), Ok(Duration::ZERO));
        assert_eq!(request_timeout("5"), Ok(Duration::from_secs(5)));
        assert_eq!(request_timeout("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(request_timeout("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(request_timeout("250ms"), Ok(Duration::from_millis(250)));
        for bad in ["soon", "-5s", "5 seconds", ""] {
            assert!(request_timeout(bad).is_err(), "{bad}");
        }
    }
}
