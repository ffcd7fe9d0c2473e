//! Which addresses a step's HTTP request may reach (issue 30). An `http` step's URL is a
//! Gate author's text and its answer is recorded in the Passage, so without a rule a
//! tenant reads whatever answers on the controller's own host: its metrics and probes,
//! a sidecar on loopback (a mesh proxy's admin port, a secrets agent that adds the
//! controller's own token), the cloud's metadata service on link-local.
//!
//! - The controller's own listeners ([`Reach::own`]: metrics, probes) are refused
//!   always, on any address of this host.
//! - This host's other addresses — loopback, link-local, unspecified (`0.0.0.0` reaches
//!   loopback), and any address an interface here holds (the Pod's own IP) — only with
//!   `--allow-local-http` ([`Reach::local`]).
//!
//! The URL is judged before the request (a literal address, or every address its name
//! resolves to). Then each request is sent by a client of its own ([`Reach::client`])
//! that judges every address it connects to, with its port, when it connects: its
//! name resolution judges each address it answers with the port the URL (or the
//! redirect being followed) names — those addresses are the ones connected to — and
//! its redirect policy judges a literal address (which nothing resolves). So a name
//! that resolves elsewhere first and here next (DNS rebinding), or a redirect to a
//! name that resolves here, reaches neither this host without `--allow-local-http` nor
//! the controller's own listeners ever (DECISION 149).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

/// The flag that lets `http` steps call this host's own addresses.
pub const ALLOW_LOCAL: &str = "--allow-local-http";

/// What requests may reach, as the operator set it.
#[derive(Clone, Debug, Default)]
pub struct Reach {
    /// `--allow-local-http`: this host's addresses (loopback, link-local, its
    /// interfaces') may be called.
    pub local: bool,
    /// Where the controller itself listens (metrics, probes): never called.
    pub own: Vec<SocketAddr>,
}

/// A request refused for where it leads; the sentence says where and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl Reach {
    /// Whether a request may connect to `addr` (of `host`, as the URL names it).
    pub fn judge(&self, host: &str, addr: SocketAddr) -> Result<(), Refused> {
        let ip = addr.ip().to_canonical();
        let at = SocketAddr::new(ip, addr.port());
        let shown = if host.trim_matches(['[', ']']) == ip.to_string() {
            at.to_string()
        } else {
            format!("{host} ({at})")
        };
        let own = self.own.iter().any(|own| {
            let listens = own.ip().to_canonical();
            own.port() == addr.port()
                && (listens == ip
                    || ip.is_unspecified()
                    || (listens.is_unspecified() && is_local(ip)))
        });
        if own {
            return Err(Refused(format!(
                "{shown} is where the controller itself serves (its metrics or probes): \
                 no step may call it"
            )));
        }
        self.judge_ip(&shown, ip)
    }

    /// The part of [`Reach::judge`] that needs no port: a local address without
    /// `--allow-local-http`.
    fn judge_ip(&self, shown: &str, ip: IpAddr) -> Result<(), Refused> {
        if self.local || !is_local(ip) {
            return Ok(());
        }
        Err(Refused(format!(
            "{shown} is an address of the controller's own host (loopback, link-local or \
             one of its interfaces), where its sidecars and a cloud's metadata service \
             answer: http steps call it only when the controller runs with {ALLOW_LOCAL}"
        )))
    }

    /// Judges every address `url` leads to, before a request: its literal address, or
    /// each one its name resolves to now. A name that does not resolve is left to the
    /// request, which fails on it as unreachable.
    pub async fn judge_url(&self, url: &reqwest::Url) -> Result<(), Refused> {
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Ok(());
        };
        if let Some(ip) = literal(host) {
            return self.judge(host, SocketAddr::new(ip, port));
        }
        let Ok(found) = tokio::net::lookup_host((host, port)).await else {
            return Ok(());
        };
        for addr in found {
            self.judge(host, addr)?;
        }
        Ok(())
    }

    /// Judges what `url` names without resolving it, for a redirect (the policy cannot
    /// wait for DNS): a literal address, and `localhost` as loopback. Other names are
    /// judged by [`Reach::resolver`] when the request resolves them.
    pub fn judge_literal(&self, url: &reqwest::Url) -> Result<(), Refused> {
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Ok(());
        };
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        let ip = match literal(host) {
            Some(ip) => ip,
            None if name == "localhost" || name.ends_with(".localhost") => {
                IpAddr::V4(Ipv4Addr::LOCALHOST)
            }
            None => return Ok(()),
        };
        self.judge(host, SocketAddr::new(ip, port))
    }

    /// A client for one request to `url` and the redirects `redirects` lets it
    /// follow, trusting what every client of the controller trusts: it connects only
    /// to addresses [`Reach::judge`] allows, judged with their ports when it connects.
    /// Fails only when the TLS backend cannot start.
    pub fn client(
        &self,
        url: &reqwest::Url,
        redirects: Redirects,
    ) -> Result<reqwest::Client, reqwest::Error> {
        let guard = self.guard();
        guard.expect(url);
        let (judge, ports) = (self.clone(), guard.ports.clone());
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            // Recorded before the policy lets it go: the connection resolves later.
            ports.expect(attempt.url());
            let previous = attempt.previous().len();
            // reqwest's default: the first of `previous` is the request itself.
            let left = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() != attempt.url().origin());
            match redirects {
                Redirects::None => attempt.stop(),
                Redirects::SameOrigin if left || previous >= 10 => attempt.stop(),
                _ if previous > 10 => attempt.error("too many redirects"),
                _ => match judge.judge_literal(attempt.url()) {
                    Err(refused) => attempt.error(refused),
                    Ok(()) => attempt.follow(),
                },
            }
        });
        hecate_sources::tls::client_builder()
            .redirect(policy)
            .dns_resolver(Arc::new(guard))
            .build()
    }

    /// The resolver of one [`Reach::client`]: it judges each address a name resolves
    /// to with the ports that client's URLs name for it. The proxies the environment
    /// names (`HTTPS_PROXY`, …) are the operator's and resolve freely.
    fn guard(&self) -> Guard {
        let trusted = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .iter()
        .filter_map(|key| std::env::var(key).ok())
        .filter_map(|proxy| proxy_host(&proxy))
        .collect();
        Guard {
            reach: Arc::new(self.clone()),
            trusted,
            ports: Ports::default(),
        }
    }
}

/// Which redirects a [`Reach::client`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// None: a redirect is the answer.
    None,
    /// Up to ten, anywhere the reach allows.
    Anywhere,
    /// Up to ten within the first URL's origin; one that leaves it is the answer
    /// (a request carrying Secrets' values: reqwest drops `Authorization` on a redirect
    /// to another host but keeps every other header).
    SameOrigin,
}

/// The ports one client's URLs name for each host, lower case: what its resolver
/// judges that host's addresses with.
#[derive(Clone, Debug, Default)]
struct Ports(Arc<Mutex<Vec<(String, u16)>>>);

impl Ports {
    fn expect(&self, url: &reqwest::Url) {
        if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
            let entry = (host.trim_end_matches('.').to_ascii_lowercase(), port);
            let mut ports = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if !ports.contains(&entry) {
                ports.push(entry);
            }
        }
    }

    /// The ports named for `host`.
    fn of(&self, host: &str) -> Vec<u16> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let ports = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        ports
            .iter()
            .filter(|(h, _)| *h == host)
            .map(|(_, port)| *port)
            .collect()
    }
}

/// The host of a proxy setting (`http://proxy:3128`, or `proxy:3128` without a scheme),
/// lower case.
fn proxy_host(proxy: &str) -> Option<String> {
    let proxy = proxy.trim();
    if proxy.is_empty() {
        return None;
    }
    let url = if proxy.contains("://") {
        reqwest::Url::parse(proxy)
    } else {
        reqwest::Url::parse(&format!("http://{proxy}"))
    };
    url.ok()?.host_str().map(str::to_ascii_lowercase)
}

/// `host` (as a URL writes it, IPv6 in brackets) as an address, if it is one.
fn literal(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Whether `ip` reaches this host: loopback, unspecified, link-local, or held by one of
/// its interfaces — an address a socket can be bound to here.
pub fn is_local(ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.is_unicast_link_local(),
    };
    ip.is_loopback()
        || ip.is_unspecified()
        || link_local
        || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// The resolver of a [`Reach::client`].
#[derive(Debug)]
struct Guard {
    reach: Arc<Reach>,
    trusted: Vec<String>,
    ports: Ports,
}

impl Guard {
    fn expect(&self, url: &reqwest::Url) {
        self.ports.expect(url);
    }
}

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let reach = self.reach.clone();
        let host = name.as_str().to_string();
        let trusted = self.trusted.iter().any(|t| t.eq_ignore_ascii_case(&host));
        // A name no URL of this client named (none should be): judged as if it were
        // asked for on each of the controller's own ports, and on another.
        let mut ports = self.ports.of(&host);
        if ports.is_empty() {
            ports = reach.own.iter().map(SocketAddr::port).collect();
            ports.push(0);
        }
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !trusted {
                for addr in &found {
                    for port in &ports {
                        reach.judge(&host, SocketAddr::new(addr.ip(), *port))?;
                    }
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

/// The refusal somewhere in `error`'s causes, if one is why it failed.
pub fn refusal<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e Refused> {
    let mut cause = Some(error);
    while let Some(now) = cause {
        if let Some(refused) = now.downcast_ref::<Refused>() {
            return Some(refused);
        }
        cause = now.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn this_hosts_addresses_are_local() {
        for ip in [
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "0.0.0.0",
            "::",
            "::ffff:127.0.0.1",
            "169.254.169.254",
            "fe80::1",
        ] {
            assert!(is_local(ip.parse().expect("an IP")), "{ip}");
        }
        for ip in ["93.184.215.14", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_local(ip.parse().expect("an IP")), "{ip}");
        }
    }

    #[test]
    fn local_addresses_need_the_flag_and_the_controllers_own_never_open() {
        let strict = Reach {
            local: false,
            own: vec![addr("0.0.0.0:8080"), addr("127.0.0.1:8081")],
        };
        let lenient = Reach {
            local: true,
            ..strict.clone()
        };
        for target in ["127.0.0.1:9000", "[::1]:9000", "169.254.169.254:80"] {
            let why = strict.judge("h", addr(target)).expect_err(target);
            assert!(why.0.contains(ALLOW_LOCAL), "{why}");
            assert_eq!(lenient.judge("h", addr(target)), Ok(()), "{target}");
        }
        for target in [
            "127.0.0.1:8080",
            "[::ffff:127.0.0.1]:8080",
            "0.0.0.0:8081",
            "127.0.0.1:8081",
        ] {
            for reach in [&strict, &lenient] {
                let why = reach.judge("h", addr(target)).expect_err(target);
                assert!(why.0.contains("the controller itself serves"), "{why}");
            }
        }
        // Port 8081 listens on loopback only: another loopback address is no listener
        // of the controller's.
        assert_eq!(lenient.judge("h", addr("127.0.0.2:8081")), Ok(()));
        for reach in [&strict, &lenient] {
            assert_eq!(reach.judge("h", addr("93.184.215.14:8080")), Ok(()));
        }
        let why = strict
            .judge("localhost", addr("127.0.0.1:9000"))
            .expect_err("local");
        assert!(why.0.starts_with("localhost (127.0.0.1:9000) is"), "{why}");
    }

    #[tokio::test]
    async fn urls_are_judged_by_what_they_lead_to() {
        let strict = Reach {
            local: false,
            own: vec![addr("127.0.0.1:8080")],
        };
        let lenient = Reach {
            local: true,
            ..strict.clone()
        };
        let url = |text: &str| reqwest::Url::parse(text).expect("a URL");
        for target in [
            "http://127.0.0.1:9000/",
            "http://localhost:9000/",
            "http://[::1]:9000/",
            // Other spellings of loopback, as a URL parser reads them.
            "http://2130706433:9000/",
            "http://0x7f.1:9000/",
        ] {
            assert!(strict.judge_url(&url(target)).await.is_err(), "{target}");
            assert!(strict.judge_literal(&url(target)).is_err(), "{target}");
            assert_eq!(lenient.judge_url(&url(target)).await, Ok(()), "{target}");
        }
        for target in ["http://localhost:8080/metrics", "http://127.0.0.1:8080/"] {
            assert!(lenient.judge_url(&url(target)).await.is_err(), "{target}");
            assert!(lenient.judge_literal(&url(target)).is_err(), "{target}");
        }
        // A name that does not resolve is the request's to fail on.
        assert_eq!(
            strict.judge_url(&url("http://nowhere.invalid:8080/")).await,
            Ok(())
        );
    }

    /// The requests' own resolution refuses a local answer: what a name that changed
    /// its answer after the check (DNS rebinding), or a redirect to a name, leads to —
    /// and, with local addresses allowed, the controller's own listeners, judged with
    /// the port the URL names.
    #[tokio::test]
    async fn the_resolver_judges_each_answer_with_its_port() {
        use reqwest::dns::Resolve as _;
        let name = |text: &str| text.parse::<reqwest::dns::Name>().expect("a name");
        let url = |text: &str| reqwest::Url::parse(text).expect("a URL");
        let own = vec![addr("127.0.0.1:8080")];
        let guard = |local: bool, asked: &str| {
            let guard = Reach {
                local,
                own: own.clone(),
            }
            .guard();
            guard.expect(&url(asked));
            guard
        };
        let strict = guard(false, "http://localhost:9000/");
        let Err(error) = strict.resolve(name("localhost")).await else {
            panic!("localhost resolved");
        };
        let refused = refusal(error.as_ref()).expect("a refusal");
        assert!(refused.0.starts_with("localhost ("), "{refused}");
        assert!(refused.0.contains(ALLOW_LOCAL), "{refused}");
        let lenient = guard(true, "http://localhost:9000/");
        let found: Vec<SocketAddr> = lenient
            .resolve(name("localhost"))
            .await
            .expect("allowed")
            .collect();
        assert!(found.iter().all(|a| a.ip().is_loopback()), "{found:?}");
        // The controller's own port: refused however it is named, local or not.
        for asked in ["http://LocalHost:8080/metrics", "http://localhost.:8080/"] {
            let Err(error) = guard(true, asked).resolve(name("localhost")).await else {
                panic!("{asked} resolved");
            };
            let refused = refusal(error.as_ref()).expect("a refusal");
            assert!(
                refused
                    .0
                    .starts_with("localhost (127.0.0.1:8080) is where the controller"),
                "{refused}"
            );
        }
        // A name no URL of the client named is judged on the controller's ports.
        let unnamed = Reach {
            local: true,
            own: own.clone(),
        }
        .guard();
        assert!(unnamed.resolve(name("localhost")).await.is_err());
        // The operator's proxy resolves, wherever it is.
        let proxied = Guard {
            reach: Arc::new(Reach::default()),
            trusted: vec!["localhost".into()],
            ports: Ports::default(),
        };
        assert!(proxied.resolve(name("LocalHost")).await.is_ok());
    }

    #[test]
    fn proxies_are_named_by_their_host() {
        assert_eq!(
            proxy_host("http://proxy.corp:3128"),
            Some("proxy.corp".into())
        );
        assert_eq!(proxy_host("Proxy:3128"), Some("proxy".into()));
        assert_eq!(proxy_host(""), None);
    }
}
