//! Where a repository lives on its forge, judged from text alone: the repository URL
//! (HTTPS or scp-like SSH, GitLab's nested groups), which kind of host it is, the
//! public API roots, and the 140-character limit of a status description. Pure
//! functions, tested in a table each.

use crate::config::host::Provider;

/// GitHub's public API.
pub const GITHUB_API: &str = "https://api.github.com";
/// GitLab.com's API.
pub const GITLAB_API: &str = "https://gitlab.com/api/v4";

/// How many characters of a commit status description a forge shows.
pub const DESCRIPTION_LIMIT: usize = 140;

/// A repository on a forge: `host` and the path `owner/name`, where `owner` may be a
/// nested GitLab group (`platform/team`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repo {
    /// The host, lower case, without user or port (`github.com`).
    pub host: String,
    /// The user, organisation or (nested) group.
    pub owner: String,
    /// The repository's own name, without `.git`.
    pub name: String,
}

impl Repo {
    /// Reads a repository URL as people write them: `https://host/owner/name(.git)`
    /// (also `http://`, `ssh://`, `git://`, with a user or a port), or the scp-like
    /// `git@host:owner/name(.git)`. `Err` says what is wrong.
    pub fn parse(url: &str) -> Result<Self, String> {
        let text = url.trim();
        if text.is_empty() {
            return Err("the repository URL is empty".to_string());
        }
        let (authority, path) = if let Some((scheme, rest)) = text.split_once("://") {
            if !["https", "http", "ssh", "git", "git+ssh"]
                .contains(&scheme.to_ascii_lowercase().as_str())
            {
                return Err(format!(
                    "{text:?} is not a repository on a git host (scheme {scheme}://)"
                ));
            }
            rest.split_once('/').unwrap_or((rest, ""))
        } else if let hecate_sources::git::remote::Transport::Helper(name) =
            hecate_sources::git::remote::transport(text)
        {
            // `ext::…`, `fd::…`: git would run a program, not reach a host.
            return Err(format!(
                "{text:?} is not a repository on a git host (git's {name}:: remote helper)"
            ));
        } else {
            match text.split_once(':') {
                // scp-like syntax: no `/` before the colon, or it would be a path.
                Some((authority, path)) if !authority.contains('/') => (authority, path),
                _ => return Err(format!("{text:?} is not a repository URL")),
            }
        };
        let host = host_of(authority);
        if host.is_empty() {
            return Err(format!("{text:?} names no host"));
        }
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let path = path.trim_matches('/');
        let path = path
            .strip_suffix(".git")
            .unwrap_or(path)
            .trim_end_matches('/');
        let segments: Vec<&str> = path.split('/').collect();
        let usable = segments.len() >= 2
            && segments
                .iter()
                .all(|s| !s.is_empty() && *s != "." && *s != "..");
        let Some((name, owner)) = segments.split_last().filter(|_| usable) else {
            return Err(format!(
                "{text:?} does not name a repository as owner/name on its host"
            ));
        };
        Ok(Self {
            host,
            owner: owner.join("/"),
            name: (*name).to_string(),
        })
    }

    /// `owner/name`, as both APIs name the repository.
    pub fn path(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// The host of `user@host:port` (or `[v6]:port`), lower case.
fn host_of(authority: &str) -> String {
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or_default()
    };
    host.to_ascii_lowercase()
}

/// The kind of forge `host` is, when its name says: `github.com` and its subdomains
/// are GitHub, `gitlab.com` and its subdomains GitLab. Any other host (GitHub
/// Enterprise Server, self-managed GitLab) must be named with `provider`.
pub fn infer(host: &str) -> Option<Provider> {
    let host = host.trim_end_matches('.');
    let is = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
    if is("github.com") {
        Some(Provider::Github)
    } else if is("gitlab.com") {
        Some(Provider::Gitlab)
    } else {
        None
    }
}

/// The public API root of `provider`.
pub fn default_base_url(provider: Provider) -> &'static str {
    match provider {
        Provider::Github => GITHUB_API,
        Provider::Gitlab => GITLAB_API,
    }
}

/// `text` in at most `limit` characters: when longer, its first `limit - 1` and `…`.
/// Counted in characters, so a cut never splits one.
pub fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut short: String = text.chars().take(limit.saturating_sub(1)).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn repository_urls_are_read_in_both_forms() {
        let cases = [
            (
                "https://github.com/acme/fleet.git",
                "github.com",
                "acme",
                "fleet",
            ),
            (
                "https://github.com/acme/fleet",
                "github.com",
                "acme",
                "fleet",
            ),
            (
                "https://github.com/acme/fleet/",
                "github.com",
                "acme",
                "fleet",
            ),
            (
                "https://GitHub.com/acme/fleet.git",
                "github.com",
                "acme",
                "fleet",
            ),
            (
                "http://x-access-token:t@ghe.example:8443/acme/fleet",
                "ghe.example",
                "acme",
                "fleet",
            ),
            (
                "ssh://git@github.com:22/acme/fleet.git",
                "github.com",
                "acme",
                "fleet",
            ),
            (
                "git@github.com:acme/fleet.git",
                "github.com",
                "acme",
                "fleet",
            ),
            ("github.com:acme/fleet", "github.com", "acme", "fleet"),
            (
                "  git@gitlab.com:acme/fleet.git\n",
                "gitlab.com",
                "acme",
                "fleet",
            ),
            (
                "https://gitlab.com/acme/platform/team/fleet.git",
                "gitlab.com",
                "acme/platform/team",
                "fleet",
            ),
            (
                "git@gitlab.example:acme/platform/fleet.git",
                "gitlab.example",
                "acme/platform",
                "fleet",
            ),
            ("https://[::1]:8080/acme/fleet.git", "::1", "acme", "fleet"),
            (
                "https://github.com/acme/fleet.git?x=1#y",
                "github.com",
                "acme",
                "fleet",
            ),
        ];
        for (url, host, owner, name) in cases {
            let repo = Repo::parse(url).unwrap_or_else(|why| panic!("{url}: {why}"));
            assert_eq!(
                (repo.host.as_str(), repo.owner.as_str(), repo.name.as_str()),
                (host, owner, name),
                "{url}"
            );
        }
        assert_eq!(
            Repo::parse("git@gitlab.com:a/b/c.git")
                .expect("parses")
                .path(),
            "a/b/c"
        );
    }

    #[test]
    fn what_is_not_a_repository_on_a_host_is_refused() {
        let cases = [
            ("", "empty"),
            ("   ", "empty"),
            ("https://github.com/acme", "owner/name"),
            ("https://github.com/", "owner/name"),
            ("https://github.com", "owner/name"),
            ("https://github.com/acme//fleet", "owner/name"),
            ("https://github.com/acme/../fleet", "owner/name"),
            ("git@github.com:fleet.git", "owner/name"),
            ("file:///srv/git/fleet.git", "scheme file://"),
            ("ftp://example.com/a/b", "scheme ftp://"),
            ("/srv/git/fleet.git", "not a repository URL"),
            ("./fleet", "not a repository URL"),
            ("ext::sh -c id/a/b", "remote helper"),
            ("fd::3/a/b", "remote helper"),
            ("https://user@/acme/fleet", "names no host"),
            ("git@:acme/fleet", "names no host"),
        ];
        for (url, words) in cases {
            let why = Repo::parse(url).expect_err(url);
            assert!(why.contains(words), "{url:?}: {why}");
        }
    }

    #[test]
    fn the_public_hosts_say_which_forge_they_are() {
        let cases = [
            ("github.com", Some(Provider::Github)),
            ("api.github.com", Some(Provider::Github)),
            ("acme.github.com", Some(Provider::Github)),
            ("github.com.", Some(Provider::Github)),
            ("gitlab.com", Some(Provider::Gitlab)),
            ("code.gitlab.com", Some(Provider::Gitlab)),
            ("notgithub.com", None),
            ("github.com.evil.example", None),
            ("mygitlab.com", None),
            ("gitlab.example", None),
            ("ghe.acme.example", None),
        ];
        for (host, provider) in cases {
            assert_eq!(infer(host), provider, "{host}");
        }
        assert_eq!(default_base_url(Provider::Github), "https://api.github.com");
        assert_eq!(
            default_base_url(Provider::Gitlab),
            "https://gitlab.com/api/v4"
        );
    }

    #[test]
    fn descriptions_are_cut_on_a_character_boundary() {
        let long = "a".repeat(200);
        let wide = "é".repeat(141);
        let mixed = format!("{}😀😀", "x".repeat(138));
        let cases: [(&str, usize, String); 6] = [
            ("", 140, String::new()),
            ("short", 140, "short".to_string()),
            (&long[..140], 140, "a".repeat(140)),
            (&long, 140, format!("{}…", "a".repeat(139))),
            (&wide, 140, format!("{}…", "é".repeat(139))),
            (&mixed, 140, mixed.clone()),
        ];
        for (text, limit, want) in cases {
            let cut = truncate(text, limit);
            assert_eq!(cut, want, "{text:?}");
            assert!(cut.chars().count() <= limit, "{text:?}");
        }
        assert_eq!(
            truncate(&format!("{mixed}!"), 140),
            format!("{}😀…", "x".repeat(138))
        );
    }
}
