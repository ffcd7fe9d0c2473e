//! The binary's flags (spec controller.md §0.6). Names and defaults follow the
//! reference (and controller-runtime's conventions) so deployments carry over.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{ArgAction, Parser, ValueEnum};

/// The Hecate controller: Gates that decide and open crossings, Passages that run
/// their steps, Beacons that discover new versions.
///
/// It reaches the cluster as its in-cluster ServiceAccount, or through $KUBECONFIG /
/// ~/.kube/config.
#[derive(Parser, Debug, Clone)]
#[command(name = "hecate-controller", version)]
pub struct Args {
    /// Where Prometheus metrics are served (`/metrics`); `0` turns them off.
    #[arg(long, default_value = ":8080", value_parser = parse_bind_address)]
    pub metrics_bind_address: BindAddress,
    /// Where the liveness and readiness probes are served (`/healthz`, `/readyz`);
    /// `0` turns them off.
    #[arg(long, default_value = ":8081", value_parser = parse_bind_address)]
    pub health_probe_bind_address: BindAddress,
    /// Elect a leader through a Lease, so that of several replicas exactly one acts.
    #[arg(long)]
    pub leader_elect: bool,
    /// The name of the Lease used for leader election.
    #[arg(long, default_value = "hecate.hecate.dev")]
    pub leader_election_id: String,
    /// The namespace of the Lease (default: the controller's own namespace, from
    /// $POD_NAMESPACE or the ServiceAccount mount, else `default`).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,
    /// This replica's Pod, as the Downward API gives it: its Events' reporting
    /// instance and its name as a leader candidate.
    #[arg(long, env = "POD_NAME")]
    pub pod_name: Option<String>,
    /// This replica's namespace, as the Downward API gives it: where its Lease is
    /// unless `--leader-election-namespace` says otherwise.
    #[arg(long, env = "POD_NAMESPACE")]
    pub pod_namespace: Option<String>,
    /// How long a leader's Lease holds without renewal (Go duration).
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub leader_election_lease_duration: std::time::Duration,
    /// How long a leader keeps trying to renew before it stops leading.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: std::time::Duration,
    /// How often candidates try for the Lease, and the leader renews it.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub leader_election_retry_period: std::time::Duration,
    /// Where Passages check out and edit files; disposable.
    #[arg(long, default_value_os_t = std::env::temp_dir().join("hecate-passages"))]
    pub work_root: PathBuf,
    /// Refuse references to Flux objects and Flagger Canaries outside the Gate's own
    /// namespace; `=false` allows them.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub no_cross_namespace_refs: bool,
    /// The Fides server for evidence steps and attestation, for Gates that name none.
    #[arg(
        long,
        env = "FIDES_SERVER_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub fides_server: Option<String>,
    /// The `kustomize` program `render-kustomize` runs (a bare name is looked up on
    /// PATH).
    #[arg(long, default_value = "kustomize", value_name = "PATH")]
    pub kustomize_path: PathBuf,
    /// The `helm` program `render-helm` runs (a bare name is looked up on PATH).
    #[arg(long, default_value = "helm", value_name = "PATH")]
    pub helm_path: PathBuf,
    /// Let `render-kustomize` steps ask for `loadRestrictionsNone`: kustomize then
    /// reads any file this process can (its kubeconfig, its ServiceAccount token), so
    /// every Gate author is trusted with them. Off: such a step fails `NotAllowed`.
    #[arg(long)]
    pub allow_kustomize_load_restrictions_none: bool,
    /// Let git steps and Beacons use repositories on this process's own disk (a path
    /// or a `file://` URL as `repo`): every Gate and Beacon author may then clone any
    /// repository the controller can read. Off: such a step fails `NotAllowed`, such a
    /// Beacon is not Ready. Remote helpers (`ext::`, `fd::`) are refused either way.
    #[arg(long)]
    pub allow_local_git: bool,
    /// The most one clone may hold on disk (`git-clone`, a Beacon's path filters), as
    /// bytes or with a unit: `512Mi`, `2Gi`, `100M`; `0`: no limit. A clone that grows
    /// past it is stopped and removed, and its step fails `CheckoutTooLarge`.
    #[arg(long, default_value = "512Mi", value_parser = parse_size, value_name = "SIZE")]
    pub max_checkout_size: u64,
    /// Let `http` steps call this host's own addresses: loopback, link-local (a
    /// cloud's metadata service) and its interfaces' (the Pod's own IP), where sidecars
    /// listen. Off: such a step fails `NotAllowed`. The controller's own metrics and
    /// probe ports are refused either way.
    #[arg(long)]
    pub allow_local_http: bool,
    /// Run the `exec` credential plugin of a connected cluster's kubeconfig (the
    /// default of EKS, GKE and AKS) for a token, as Flux's controllers do under the
    /// same flag: whoever may write such a Secret chooses a program this controller
    /// runs (bounded: a cleared environment, 10 s, 64 KiB of output). Off: such a
    /// kubeconfig is refused.
    #[arg(long)]
    pub insecure_kubeconfig_exec: bool,
    /// Start even if the installed CRDs lack fields this controller writes (they would
    /// be dropped silently); a warning is logged on every start.
    #[arg(long)]
    pub skip_crd_check: bool,
    /// Where hecate-api's UI is, e.g. `https://hecate.example.com`: notices link to
    /// their Gate's or Passage's page there. Without it, notices carry no link.
    #[arg(long, env = "HECATE_UI_URL", value_name = "URL", value_parser = parse_ui_url)]
    pub ui_url: Option<String>,
    /// Only act on namespaces whose labels match this selector (e.g.
    /// `sharding.fluxcd.io/key=shard1`), so several controllers can split a fleet.
    #[arg(long, value_name = "SELECTOR")]
    pub watch_label_selector: Option<String>,
    /// The kubeconfig context to use (default: the current one, or in-cluster).
    #[arg(long)]
    pub context: Option<String>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
    /// The least severe messages logged. `RUST_LOG`, when set, takes its place: it may
    /// also name levels per module (`info,hecate_steps=debug`).
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
}

/// How much is logged, from the least to the most.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    /// Failures only.
    Error,
    /// Failures, and what may become one.
    Warn,
    /// What the controller does (the default).
    Info,
    /// Its reasoning too.
    Debug,
    /// Everything, the libraries' chatter included.
    Trace,
}

impl LogLevel {
    /// As a tracing filter directive.
    pub fn directive(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// How logs are written.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line, for log pipelines (the default: it runs in a cluster).
    Json,
    /// For people at a terminal.
    Text,
}

/// A listening address, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindAddress {
    /// Do not listen.
    Off,
    /// Listen here.
    On(SocketAddr),
}

/// A positive Go duration (`15s`, `1m30s`).
/// An http(s) URL, without a trailing slash.
fn parse_ui_url(text: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(text).map_err(|e| format!("{text:?}: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{text:?} is not an http(s) URL"));
    }
    Ok(text.trim_end_matches('/').to_string())
}

fn parse_duration(value: &str) -> Result<std::time::Duration, String> {
    hecate_types::duration::parse(value)
        .map_err(|e| e.to_string())
        .and_then(|d| {
            std::time::Duration::try_from(d).map_err(|_| format!("{value:?} is negative"))
        })
        .and_then(|d| {
            if d.is_zero() {
                Err(format!("{value:?} must be longer than zero"))
            } else {
                Ok(d)
            }
        })
}

/// A size in bytes: digits, then optionally a unit — `k`, `M`, `G`, `T` (powers of
/// 1000, `KB`… too) or `Ki`, `Mi`, `Gi`, `Ti` (powers of 1024, `KiB`… too), as
/// Kubernetes quantities and people write them.
pub(crate) fn parse_size(value: &str) -> Result<u64, String> {
    let text = value.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let unit = unit.trim();
    let scale: u64 = match unit.strip_suffix('B').unwrap_or(unit) {
        "" => 1,
        "k" | "K" => 1000,
        "M" => 1000_u64.pow(2),
        "G" => 1000_u64.pow(3),
        "T" => 1000_u64.pow(4),
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        _ => {
            return Err(format!(
                "{value:?} is not a size: use e.g. 512Mi, 2Gi, 100M or 0"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{value:?} is not a size: use e.g. 512Mi, 2Gi, 100M or 0"))
}

/// Go's forms: `:8080` (every interface), `127.0.0.1:8080`, `[::1]:8080`, or `0`.
fn parse_bind_address(value: &str) -> Result<BindAddress, String> {
    if value == "0" {
        return Ok(BindAddress::Off);
    }
    let full = match value.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => value.to_string(),
    };
    full.parse()
        .map(BindAddress::On)
        .map_err(|_| format!("{value:?} is not an address: use :PORT, HOST:PORT or 0 (off)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_quantities() {
        let cases = [
            ("0", Some(0)),
            ("1048576", Some(1 << 20)),
            ("512Mi", Some(512 << 20)),
            ("512MiB", Some(512 << 20)),
            ("2Gi", Some(2 << 30)),
            ("100M", Some(100_000_000)),
            ("100MB", Some(100_000_000)),
            ("4k", Some(4000)),
            ("1Ti", Some(1 << 40)),
            ("12B", Some(12)),
            ("", None),
            ("Mi", None),
            ("1.5Gi", None),
            ("-1", None),
            ("5 parsecs", None),
            ("99999999999Ti", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_size(text).ok(), want, "{text:?}");
        }
        let why = parse_size("lots").expect_err("not a size");
        assert!(why.contains("512Mi"), "{why}");
    }

    #[test]
    fn the_reference_defaults_hold() {
        let args = Args::try_parse_from(["hecate-controller"]).expect("defaults parse");
        assert_eq!(
            args.metrics_bind_address,
            BindAddress::On("0.0.0.0:8080".parse().expect("an address"))
        );
        assert_eq!(
            args.health_probe_bind_address,
            BindAddress::On("0.0.0.0:8081".parse().expect("an address"))
        );
        assert!(args.no_cross_namespace_refs);
        assert!(!args.leader_elect && !args.skip_crd_check);
        assert!(!args.allow_kustomize_load_restrictions_none);
        assert!(!args.allow_local_git && !args.allow_local_http);
        assert!(!args.insecure_kubeconfig_exec);
        assert_eq!(
            args.max_checkout_size,
            hecate_sources::git::DEFAULT_MAX_CHECKOUT_SIZE
        );
        assert_eq!(args.leader_election_id, "hecate.hecate.dev");
        assert!(args.work_root.ends_with("hecate-passages"));
        assert_eq!(args.log_level, LogLevel::Info);
    }

    #[test]
    fn the_log_level_is_one_of_five() {
        for (flag, level, directive) in [
            ("error", LogLevel::Error, "error"),
            ("warn", LogLevel::Warn, "warn"),
            ("info", LogLevel::Info, "info"),
            ("debug", LogLevel::Debug, "debug"),
            ("trace", LogLevel::Trace, "trace"),
        ] {
            let args = Args::try_parse_from(["hecate-controller", &format!("--log-level={flag}")])
                .expect("a level");
            assert_eq!(args.log_level, level);
            assert_eq!(level.directive(), directive);
        }
        let refused = Args::try_parse_from(["hecate-controller", "--log-level=loud"])
            .expect_err("not a level")
            .to_string();
        assert!(
            refused.contains("possible values: error, warn, info, debug, trace"),
            "{refused}"
        );
    }

    #[test]
    fn the_pod_is_named_by_flag_or_by_the_downward_api() {
        // $POD_NAME / $POD_NAMESPACE fill these when no flag does (clap's `env`); the
        // process reads its environment nowhere else for them.
        let args = Args::try_parse_from([
            "hecate-controller",
            "--pod-name=hecate-controller-7d9f-abcde",
            "--pod-namespace=hecate-system",
        ])
        .expect("flags parse");
        assert_eq!(
            args.pod_name.as_deref(),
            Some("hecate-controller-7d9f-abcde")
        );
        assert_eq!(args.pod_namespace.as_deref(), Some("hecate-system"));
        let pod_name = <Args as clap::CommandFactory>::command()
            .get_arguments()
            .find(|a| a.get_id() == "pod_name")
            .and_then(|a| a.get_env().map(|e| e.to_os_string()));
        assert_eq!(pod_name.as_deref(), Some(std::ffi::OsStr::new("POD_NAME")));
    }

    #[test]
    fn flags_read_as_a_kubebuilder_user_writes_them() {
        let args = Args::try_parse_from([
            "hecate-controller",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=127.0.0.1:9440",
            "--no-cross-namespace-refs=false",
            "--leader-elect",
        ])
        .expect("flags parse");
        assert_eq!(args.metrics_bind_address, BindAddress::Off);
        assert_eq!(
            args.health_probe_bind_address,
            BindAddress::On("127.0.0.1:9440".parse().expect("an address"))
        );
        assert!(!args.no_cross_namespace_refs && args.leader_elect);
        // The flag a refused render step names is the flag that allows it.
        let args = Args::try_parse_from([
            "hecate-controller",
            hecate_steps::render::ALLOW_LOAD_RESTRICTIONS_NONE,
        ])
        .expect("flags parse");
        assert!(args.allow_kustomize_load_restrictions_none);
        // So are the flags refused git remotes, clones and http steps name.
        let args = Args::try_parse_from([
            "hecate-controller",
            hecate_sources::git::remote::ALLOW_LOCAL,
            hecate_steps::reach::ALLOW_LOCAL,
            "--max-checkout-size=2Gi",
        ])
        .expect("flags parse");
        assert!(args.allow_local_git && args.allow_local_http);
        assert_eq!(args.max_checkout_size, 2 << 30);
        let error = Args::try_parse_from(["hecate-controller", "--metrics-bind-address=nowhere"])
            .expect_err("a bad address is refused");
        assert!(error.to_string().contains(":PORT"), "{error}");
    }
}
