//! Which remotes git is sent to (issue 30): remotes on the network, and the controller's
//! own disk only when the operator allows it.
//!
//! A repository URL is a Gate author's (or a Beacon author's) text, and git reads more
//! than network addresses from it: a bare path or `file://` clones a repository of the
//! controller's own disk, `ext::<command>` runs a command, `fd::` reads a descriptor,
//! any other `<name>::` or `<scheme>://` starts a `git-remote-<name>` program. Two
//! locks hold them off:
//!
//! - [`check`], before git runs: the URL is sorted by git's own rules (`transport.c`,
//!   `connect.c`) and refused with a sentence that names the flag;
//! - [`protocols`], in every git child's environment as `GIT_ALLOW_PROTOCOL`: git
//!   itself refuses any other transport — for a URL [`check`] did not see (a
//!   checkout's `origin`, a redirect, a submodule) as for one it did.

/// The flag that lets git reach the controller's own disk.
pub const ALLOW_LOCAL: &str = "--allow-local-git";

/// The transports a git child may use (`GIT_ALLOW_PROTOCOL`): HTTPS, HTTP, SSH and
/// git's own protocol, and with `local` the `file` transport (local paths, `file://`,
/// bundles). `ext` and `fd`, and every other remote helper, are never among them.
pub fn protocols(local: bool) -> &'static str {
    if local {
        "https:http:ssh:git:file"
    } else {
        "https:http:ssh:git"
    }
}

/// How git would reach a repository URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Over the network: `https://`, `http://`, `ssh://` (also `git+ssh://`,
    /// `ssh+git://`), `git://`, or scp-like `[user@]host:path`.
    Network,
    /// The controller's own disk: a path (absolute, relative, `./x:y` — a `/` before
    /// the first `:` makes it one) or `file://`.
    Local,
    /// A remote helper git would start: `<name>::<address>` (`ext::` runs a command,
    /// `fd::` reads a file descriptor) or a `<scheme>://` git does not speak itself.
    Helper(String),
}

/// How git reads `url`, by its rules: `<name>::` first (a remote helper), then a path
/// (no `:`, or a `/` before the first one), then `<scheme>://`, and otherwise the
/// scp-like SSH form.
pub fn transport(url: &str) -> Transport {
    let scheme_end = url
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_alphabetic() || (i > 0 && (c.is_ascii_digit() || "+.-".contains(c))))
        })
        .map_or(url.len(), |(i, _)| i);
    let scheme = &url[..scheme_end];
    let rest = &url[scheme_end..];
    if !scheme.is_empty() && rest.starts_with("::") {
        return Transport::Helper(scheme.to_string());
    }
    let colon = url.find(':');
    let slash = url.find('/');
    let is_path = match (colon, slash) {
        (None, _) => true,
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
    };
    if is_path {
        return Transport::Local;
    }
    if !scheme.is_empty() && rest.starts_with("://") {
        return match scheme.to_ascii_lowercase().as_str() {
            "file" => Transport::Local,
            "https" | "http" | "ssh" | "git+ssh" | "ssh+git" | "git" => Transport::Network,
            other => Transport::Helper(other.to_string()),
        };
    }
    Transport::Network
}

/// Whether git may be sent to `url`: `Err` says why not, naming [`ALLOW_LOCAL`] when
/// that is what would allow it.
pub fn check(url: &str, allow_local: bool) -> Result<(), String> {
    let shown = super::command::redact_urls(url);
    match transport(url) {
        Transport::Network => Ok(()),
        Transport::Local if allow_local => Ok(()),
        Transport::Local => Err(format!(
            "{shown:?} is a repository on the controller's own disk (a path or file://): \
             the controller fetches only from https://, http://, ssh:// and git:// remotes \
             unless it runs with {ALLOW_LOCAL}"
        )),
        Transport::Helper(name) => Err(format!(
            "{shown:?} would have git start its {name:?} remote helper on the controller \
             (a program, not a remote): the controller fetches only from https://, \
             http://, ssh:// and git:// remotes"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_sorted_as_git_sorts_them() {
        let helper = |name: &str| Transport::Helper(name.to_string());
        let cases = [
            ("https://github.com/acme/fleet.git", Transport::Network),
            ("http://127.0.0.1:8080/fleet.git", Transport::Network),
            ("ssh://git@github.com/acme/fleet.git", Transport::Network),
            ("git+ssh://git@host/r.git", Transport::Network),
            ("git://host/r.git", Transport::Network),
            ("git@github.com:acme/fleet.git", Transport::Network),
            ("host:r.git", Transport::Network),
            ("[::1]:r.git", Transport::Network),
            ("HTTPS://github.com/acme/fleet.git", Transport::Network),
            ("/srv/git/fleet.git", Transport::Local),
            ("fleet.git", Transport::Local),
            ("./fleet.git", Transport::Local),
            ("../x:y", Transport::Local),
            ("/srv/a:b", Transport::Local),
            ("file:///srv/git/fleet.git", Transport::Local),
            ("FILE:///srv/git/fleet.git", Transport::Local),
            ("file://localhost/srv/git/fleet.git", Transport::Local),
            ("", Transport::Local),
            ("ext::sh -c touch% /tmp/pwned", helper("ext")),
            ("fd::3", helper("fd")),
            ("https::https://github.com/a/b", helper("https")),
            ("testgit::/srv/r", helper("testgit")),
            ("ftp://host/r.git", helper("ftp")),
            ("s3://bucket/r.git", helper("s3")),
        ];
        for (url, want) in cases {
            assert_eq!(transport(url), want, "{url:?}");
        }
    }

    #[test]
    fn local_remotes_need_the_flag_and_helpers_are_never_allowed() {
        for url in ["/srv/git/fleet.git", "file:///srv/git/fleet.git"] {
            let why = check(url, false).expect_err(url);
            assert!(why.contains(ALLOW_LOCAL), "{why}");
            assert!(why.contains("controller's own disk"), "{why}");
            assert_eq!(check(url, true), Ok(()));
        }
        for url in ["ext::sh -c id", "fd::0"] {
            for allowed in [false, true] {
                let why = check(url, allowed).expect_err(url);
                assert!(why.contains("remote helper"), "{why}");
                assert!(!why.contains(ALLOW_LOCAL), "{why}");
            }
        }
        assert_eq!(check("https://github.com/acme/fleet.git", false), Ok(()));
        // A password in the URL stays out of the sentence.
        let why = check("file://bot:s3cret@localhost/srv/r.git", false).expect_err("local");
        assert!(!why.contains("s3cret"), "{why}");
    }

    #[test]
    fn the_allowed_transports_never_include_a_helper() {
        for local in [false, true] {
            let list: Vec<&str> = protocols(local).split(':').collect();
            assert!(!list.contains(&"ext") && !list.contains(&"fd"), "{list:?}");
            assert_eq!(list.contains(&"file"), local);
        }
    }
}
