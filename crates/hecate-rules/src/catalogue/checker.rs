//! The health checkers a Gate's `watch[].uses` may name — the one list — each with
//! its `with:` judged as the checker reads it.

use serde_json::Value;

use super::flux::FluxConfig;

/// A health checker (spec controller.md §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Checker {
    /// `flux`: the Flux objects a Gate's environment runs on.
    Flux,
}

impl Checker {
    /// Every checker, by name.
    pub const ALL: &'static [Checker] = &[Checker::Flux];

    /// Its `uses:` name.
    pub const fn name(self) -> &'static str {
        match self {
            Checker::Flux => "flux",
        }
    }

    /// The checker called `uses`, if there is one.
    pub fn named(uses: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == uses)
    }

    /// Whether `with` is a check this checker can make for a Gate in `namespace`,
    /// judged before any crossing. Whether the controller refuses references to other
    /// namespaces is the controller's flag; it judges that when it checks.
    pub fn check(self, with: Option<&Value>, namespace: &str) -> Result<(), String> {
        match self {
            Checker::Flux => FluxConfig::decode(with)
                .and_then(|config| config.validate(namespace, false))
                .map(drop)
                .map_err(|e| e.to_string()),
        }
    }
}

/// Every checker's name, comma-separated: how a message lists them.
pub fn names() -> String {
    super::listed(Checker::ALL, Checker::name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_flux_check_is_judged_as_the_checker_reads_it() {
        let flux = Checker::named("flux").unwrap();
        let good = json!({"resources": [{"kind": "Kustomization", "name": "app"}]});
        assert_eq!(flux.check(Some(&good), "shop"), Ok(()));
        let none = flux.check(None, "shop").unwrap_err();
        assert!(none.contains("no resources"), "{none}");
        let unknown = json!({"resources": [{"kind": "Widget", "name": "app"}]});
        assert!(flux.check(Some(&unknown), "shop").is_err());
        assert_eq!(Checker::named("prometheus"), None);
        assert_eq!(names(), "flux");
    }
}
