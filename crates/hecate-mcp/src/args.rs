//! The command line, and what it amounts to once checked: [`Args::check`] turns flags
//! into a [`Plan`] or says which flags contradict each other, before anything touches
//! the network.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use hecate_types::names::is_dns_label;

/// The Hecate MCP server: Hecate's operations layer as Model Context Protocol tools.
///
/// An agent asks why a release is not moving (`why_stuck`), what the Gates, Bundles
/// and Passages are, what happened (`audit`) and what the compliance record says
/// (`evidence`). It is read-only unless started with --allow-writes, which adds
/// `promote`, `rollback` and `abort`. There is no `approve` tool in any configuration: approval is a
/// segregation-of-duties control that stays with people.
///
/// It reaches the cluster as kubectl does (--kubeconfig, else $KUBECONFIG, else
/// ~/.kube/config, else the in-cluster service account). It speaks MCP over stdio by
/// default, or streamable HTTP with --listen.
///
/// Exit codes: 0 stopped cleanly, 1 could not start or failed (the reason is on stderr),
/// 2 the command line does not parse.
#[derive(Parser, Debug, Clone, Default)]
#[command(name = "hecate-mcp", version)]
pub struct Args {
    /// Namespace for tools called without a `namespace` argument (default: the
    /// kubeconfig context's, else `default`).
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,

    /// Also offer the `promote`, `rollback` and `abort` tools. Needs --actor, or --auth kubernetes
    /// (then each caller is the actor).
    #[arg(long)]
    pub allow_writes: bool,

    /// Who authorised this server's writes; Passages record `mcp:<actor>`.
    #[arg(long, value_name = "NAME")]
    pub actor: Option<String>,

    /// Serve streamable HTTP on HOST:PORT instead of stdio, e.g. 127.0.0.1:8085.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,

    /// Browser origins allowed over HTTP (comma-separated, e.g.
    /// http://localhost:3000). A request carrying any other Origin is refused before
    /// anything else; with none given, every request with an Origin is refused.
    #[arg(long, value_name = "ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,

    /// Host headers accepted over HTTP (comma-separated `host` or `host:port`; `*` for
    /// any). Default: localhost, 127.0.0.1, ::1 and the --listen host. Set it to the
    /// ingress's hostname when serving behind one.
    #[arg(long, value_name = "HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Allow --listen on a non-loopback address without authentication.
    #[arg(long)]
    pub insecure: bool,

    /// How HTTP callers are authenticated. `kubernetes`: each request carries a bearer
    /// token the cluster accepts (TokenReview); each tool call is authorised as that
    /// caller (SubjectAccessReview), and writes record the caller as the actor.
    #[arg(long, value_enum, default_value_t = Auth::None)]
    pub auth: Auth,

    /// The kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, else
    /// in-cluster).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current one).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// The Fides server for Gates that name none in `evidence.serverURL`.
    #[arg(
        long,
        env = "FIDES_SERVER_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub fides_server: Option<String>,
}

/// How HTTP callers are authenticated.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    /// Nobody is asked who they are: whoever reaches the port acts with the server's
    /// Kubernetes credentials.
    #[default]
    None,
    /// A bearer token per request, reviewed by the cluster; tool calls authorised as
    /// the caller.
    Kubernetes,
}

/// Who the server's writes are recorded as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Read-only: `promote`, `rollback` and `abort` do not exist.
    Off,
    /// Writes record this actor (already `mcp:`-prefixed).
    As(String),
    /// Writes record the authenticated caller (`--auth kubernetes`).
    AsCaller,
}

/// The recorded actor of writes made with `--actor NAME` is `mcp:NAME`, so the audit
/// trail shows the write came through an agent.
pub const ACTOR_PREFIX: &str = "mcp:";

/// How the server talks to its client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http(Http),
}

/// The HTTP transport's settings, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Http {
    /// The host to bind (empty: every interface).
    pub host: String,
    /// The port to bind (0: any free one).
    pub port: u16,
    /// Allowed browser origins, normalised (`scheme://host:port`).
    pub allowed_origins: Vec<String>,
    /// Allowed `Host` headers; empty means any.
    pub allowed_hosts: Vec<String>,
    /// Whether callers must present a bearer token the cluster accepts.
    pub kubernetes_auth: bool,
}

/// What the flags ask for, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// stdio or HTTP.
    pub transport: Transport,
    /// Whether (and as whom) writes are offered.
    pub writes: Writes,
    /// `--namespace`, if given.
    pub namespace: Option<String>,
}

/// Flags that cannot be served as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct FlagError(pub String);

fn flag_error(message: impl Into<String>) -> FlagError {
    FlagError(message.into())
}

impl Args {
    /// The plan, or why these flags cannot be served. Touches nothing outside the
    /// process.
    pub fn check(&self) -> Result<Plan, FlagError> {
        let auth = self.auth == Auth::Kubernetes;
        let actor = self.actor.as_deref().map(str::trim);
        let writes = match (self.allow_writes, actor, auth) {
            (false, None, _) => Writes::Off,
            (false, Some(_), _) => {
                return Err(flag_error(
                    "--actor names who authorised writes, but writes are off: add --allow-writes, or drop --actor",
                ));
            }
            (true, Some(_), true) => {
                return Err(flag_error(
                    "--actor cannot be combined with --auth kubernetes: each caller is the actor of their own writes",
                ));
            }
            (true, Some(""), false) => return Err(flag_error("--actor must not be empty")),
            (true, Some(name), false) => Writes::As(format!("{ACTOR_PREFIX}{name}")),
            (true, None, true) => Writes::AsCaller,
            (true, None, false) => {
                return Err(flag_error(
                    "--allow-writes needs --actor NAME (who authorised this server's writes), or --auth kubernetes with --listen",
                ));
            }
        };
        if let Some(namespace) = &self.namespace
            && !is_dns_label(namespace)
        {
            return Err(flag_error(format!(
                "--namespace {namespace:?} is not a valid namespace name"
            )));
        }
        let Some(listen) = &self.listen else {
            let http_only = [
                (auth, "--auth kubernetes"),
                (self.insecure, "--insecure"),
                (!self.allowed_origins.is_empty(), "--allowed-origins"),
                (!self.allowed_hosts.is_empty(), "--allowed-hosts"),
            ];
            if let Some((_, flag)) = http_only.iter().find(|(given, _)| *given) {
                return Err(flag_error(format!(
                    "{flag} applies to the HTTP transport only: add --listen HOST:PORT"
                )));
            }
            return Ok(Plan {
                transport: Transport::Stdio,
                writes,
                namespace: self.namespace.clone(),
            });
        };
        let (host, port) = split_host_port(listen)?;
        if !is_loopback(&host) && !auth && !self.insecure {
            let shown = if host.is_empty() {
                "every interface".to_string()
            } else {
                host.clone()
            };
            return Err(flag_error(format!(
                "--listen {listen} would serve {shown} with no authentication: anyone who reaches the port could use the tools; add --auth kubernetes, or --insecure if something in front of it authenticates"
            )));
        }
        let allowed_origins = self
            .allowed_origins
            .iter()
            .filter(|o| !o.trim().is_empty())
            .map(|o| normalise_origin(o))
            .collect::<Result<Vec<_>, _>>()?;
        let allowed_hosts = allowed_hosts(&self.allowed_hosts, &host);
        Ok(Plan {
            transport: Transport::Http(Http {
                host,
                port,
                allowed_origins,
                allowed_hosts,
                kubernetes_auth: auth,
            }),
            writes,
            namespace: self.namespace.clone(),
        })
    }
}

/// `host:port` → (host, port), as Go's `SplitHostPort`: IPv6 hosts in brackets, the
/// host may be empty (every interface), the port must be a number.
pub fn split_host_port(listen: &str) -> Result<(String, u16), FlagError> {
    let wrong = || {
        flag_error(format!(
            "--listen wants host:port (e.g. 127.0.0.1:8085), not {listen:?}"
        ))
    };
    let (host, port) = if let Some(rest) = listen.strip_prefix('[') {
        let (host, port) = rest.split_once("]:").ok_or_else(wrong)?;
        (host, port)
    } else {
        let (host, port) = listen.rsplit_once(':').ok_or_else(wrong)?;
        if host.contains(':') {
            return Err(wrong());
        }
        (host, port)
    };
    let port = port.parse::<u16>().map_err(|_| wrong())?;
    Ok((host.to_string(), port))
}

/// Whether `host` is only reachable from this machine: `localhost` or a loopback IP.
/// An empty host means every interface, so it is not.
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A browser origin as browsers send it: lower-case `scheme://host[:port]`, without a
/// path or trailing slash. `HTTP://LocalHost:3000/` → `http://localhost:3000`.
pub fn normalise_origin(origin: &str) -> Result<String, FlagError> {
    let wrong = |why: &str| {
        flag_error(format!(
            "--allowed-origins {origin:?} {why}: write it as scheme://host[:port], e.g. http://localhost:3000"
        ))
    };
    let trimmed = origin.trim();
    let (scheme, rest) = trimmed
        .split_once("://")
        .ok_or_else(|| wrong("has no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
    {
        return Err(wrong("has no valid scheme"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') || authority.contains(char::is_whitespace) {
        return Err(wrong("has no host"));
    }
    let authority = authority.to_ascii_lowercase();
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']').ok_or_else(|| wrong("has no host"))?;
            match after {
                "" => (host, None),
                after => (
                    host,
                    Some(
                        after
                            .strip_prefix(':')
                            .ok_or_else(|| wrong("has no host"))?,
                    ),
                ),
            }
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority.as_str(), None),
        },
    };
    if host.is_empty() {
        return Err(wrong("has no host"));
    }
    if port.is_some_and(|port| port.parse::<u16>().is_err()) {
        return Err(wrong("has an invalid port"));
    }
    Ok(format!("{scheme}://{authority}"))
}

/// The `Host` allow-list: what was given (`*` means any, i.e. an empty list), else the
/// loopback names plus the host being bound, when it is a specific one.
fn allowed_hosts(given: &[String], bind_host: &str) -> Vec<String> {
    let given: Vec<String> = given
        .iter()
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
        .collect();
    if given.iter().any(|h| h == "*") {
        return Vec::new();
    }
    if !given.is_empty() {
        return given;
    }
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    let bind_host = bind_host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let wildcard = bind_host.is_empty()
        || bind_host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_unspecified());
    if !wildcard && !hosts.contains(&bind_host) {
        hosts.push(bind_host);
    }
    hosts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(line: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("hecate-mcp").chain(line.iter().copied())).unwrap()
    }

    fn refusal(line: &[&str]) -> String {
        args(line).check().unwrap_err().0
    }

    #[test]
    fn loopback_is_recognised() {
        for host in [
            "localhost",
            "LocalHost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["0.0.0.0", "10.0.0.1", "example.com", "", "::"] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn the_default_is_read_only_stdio() {
        let plan = args(&[]).check().unwrap();
        assert_eq!(plan.transport, Transport::Stdio);
        assert_eq!(plan.writes, Writes::Off);
    }

    #[test]
    fn writes_need_an_actor_and_an_actor_needs_writes() {
        assert!(refusal(&["--allow-writes"]).contains("--actor"));
        assert!(refusal(&["--actor", "ada"]).contains("--allow-writes"));
        assert!(refusal(&["--allow-writes", "--actor", " "]).contains("empty"));
        let plan = args(&["--allow-writes", "--actor", "ada"]).check().unwrap();
        assert_eq!(plan.writes, Writes::As("mcp:ada".into()));
    }

    #[test]
    fn with_kubernetes_auth_the_caller_is_the_actor() {
        let plan = args(&[
            "--listen",
            "127.0.0.1:0",
            "--auth",
            "kubernetes",
            "--allow-writes",
        ])
        .check()
        .unwrap();
        assert_eq!(plan.writes, Writes::AsCaller);
        let line = [
            "--listen",
            "127.0.0.1:0",
            "--auth",
            "kubernetes",
            "--allow-writes",
            "--actor",
            "ada",
        ];
        assert!(refusal(&line).contains("each caller is the actor"));
    }

    #[test]
    fn http_flags_need_listen() {
        for line in [
            &["--auth", "kubernetes"][..],
            &["--insecure"],
            &["--allowed-origins", "http://localhost:3000"],
            &["--allowed-hosts", "mcp.example.com"],
        ] {
            assert!(refusal(line).contains("--listen"), "{line:?}");
        }
    }

    #[test]
    fn binding_the_world_needs_insecure_or_auth() {
        for listen in ["0.0.0.0:8085", ":8085", "10.0.0.1:8085", "example.com:8085"] {
            let message = refusal(&["--listen", listen, "--allow-writes", "--actor", "ada"]);
            assert!(message.contains("--insecure"), "{listen}: {message}");
        }
        assert!(
            args(&["--listen", "0.0.0.0:8085", "--insecure"])
                .check()
                .is_ok()
        );
        assert!(
            args(&["--listen", "0.0.0.0:8085", "--auth", "kubernetes"])
                .check()
                .is_ok()
        );
        assert!(args(&["--listen", "[::1]:8085"]).check().is_ok());
        assert!(args(&["--listen", "localhost:8085"]).check().is_ok());
    }

    #[test]
    fn listen_must_be_host_port() {
        for listen in [
            "8085",
            "localhost",
            "::1:8085",
            "localhost:http",
            "[::1]8085",
        ] {
            assert!(
                refusal(&["--listen", listen]).contains("host:port"),
                "{listen}"
            );
        }
        assert_eq!(split_host_port(":8085").unwrap(), (String::new(), 8085));
        assert_eq!(split_host_port("[::1]:1").unwrap(), ("::1".into(), 1));
    }

    #[test]
    fn origins_are_normalised_and_must_have_a_scheme_and_host() {
        assert_eq!(
            normalise_origin("HTTP://LocalHost:3000/").unwrap(),
            "http://localhost:3000"
        );
        assert_eq!(
            normalise_origin("https://app.example.com/some/path").unwrap(),
            "https://app.example.com"
        );
        assert_eq!(
            normalise_origin("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        for bad in ["localhost:3000", "http://", "://x", "http://host:port"] {
            assert!(normalise_origin(bad).is_err(), "{bad}");
        }
        let message = refusal(&[
            "--listen",
            "127.0.0.1:0",
            "--allowed-origins",
            "localhost:3000",
        ]);
        assert!(message.contains("scheme://host"), "{message}");
    }

    #[test]
    fn the_host_allow_list_defaults_to_loopback_and_the_bound_name() {
        assert_eq!(
            allowed_hosts(&[], "127.0.0.1"),
            ["localhost", "127.0.0.1", "::1"]
        );
        assert_eq!(
            allowed_hosts(&[], "mcp.internal"),
            ["localhost", "127.0.0.1", "::1", "mcp.internal"]
        );
        assert_eq!(
            allowed_hosts(&[], "0.0.0.0"),
            ["localhost", "127.0.0.1", "::1"]
        );
        assert_eq!(
            allowed_hosts(&["MCP.example.com".into()], "0.0.0.0"),
            ["mcp.example.com"]
        );
        assert!(allowed_hosts(&["*".into()], "0.0.0.0").is_empty());
    }

    #[test]
    fn names_are_checked() {
        // The rules themselves are hecate-types' (`names`), tested there.
        assert!(refusal(&["--namespace", "Not_A_Namespace"]).contains("namespace"));
    }
}
