//! How the user typed the command: `hecate`, or as a plugin, `kubectl hecate` or
//! `flux hecate`. Help and fix hints then show the command as the user would type it.

use std::path::Path;

/// The command as the user types it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// `hecate`, `kubectl hecate` or `flux hecate`.
    pub(crate) name: &'static str,
}

impl Invocation {
    /// From `argv[0]`: `kubectl-hecate` is a kubectl plugin, `flux-hecate` a Flux one.
    pub(crate) fn from_argv0(argv0: &str) -> Self {
        let base = Path::new(argv0)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(argv0);
        let name = match base {
            "kubectl-hecate" => "kubectl hecate",
            "flux-hecate" => "flux hecate",
            _ => "hecate",
        };
        Self { name }
    }

    /// A command hint from hecate-ops (`hecate promote …`) as this user types it.
    pub(crate) fn rewrite(&self, hint: &str) -> String {
        match hint.strip_prefix("hecate ") {
            Some(rest) if self.name != "hecate" => format!("{} {rest}", self.name),
            _ => hint.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_modes() {
        for (argv0, name) in [
            ("hecate", "hecate"),
            ("/usr/local/bin/hecate", "hecate"),
            ("kubectl-hecate", "kubectl hecate"),
            ("/home/olaf/.krew/bin/kubectl-hecate", "kubectl hecate"),
            ("flux-hecate", "flux hecate"),
            ("/home/olaf/.fluxcd/plugins/flux-hecate", "flux hecate"),
        ] {
            assert_eq!(Invocation::from_argv0(argv0).name, name, "{argv0}");
        }
    }

    #[test]
    fn hints_follow_the_invocation() {
        let kubectl = Invocation::from_argv0("kubectl-hecate");
        assert_eq!(
            kubectl.rewrite("hecate promote staging --bundle b1 -n acme"),
            "kubectl hecate promote staging --bundle b1 -n acme"
        );
        assert_eq!(
            kubectl.rewrite("kubectl -n acme get beacons"),
            "kubectl -n acme get beacons"
        );
        assert_eq!(
            Invocation::from_argv0("hecate").rewrite("hecate approve b1"),
            "hecate approve b1"
        );
    }
}
