//! What expressions can see (spec §4.2): the crossing's [`Env`] for `if:` and
//! `with:`, and an HTTP response for the `http` step's `successIf`. Nothing else is
//! reachable — no cluster, no files, no process environment.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::eval::{Scope, Val};

/// Everything `if:` and the `${{ … }}` in a step's `with:` can read.
///
/// The engine keeps one per advance and updates it as steps run: an output is
/// inserted under its step's `as` as soon as it exists, and `failed` turns true at the
/// first fatal failure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Env {
    /// `steps.<alias>`: the output of the earlier step with `as: <alias>`, whatever its
    /// phase. A missing alias reads as null.
    pub steps: BTreeMap<String, Value>,
    /// `vars.<name>`: the Gate's variables, copied into the Passage. A missing name
    /// reads as the empty string.
    pub vars: BTreeMap<String, String>,
    /// `gate`: the Gate being crossed.
    pub gate: String,
    /// `passage`: the Passage's name.
    pub passage: String,
    /// `actor`: who asked for the crossing (`controller` for automatic ones).
    pub actor: String,
    /// `namespace`: the Passage's namespace.
    pub namespace: String,
    /// `failed`: an earlier step has already failed the Passage.
    pub failed: bool,
    /// `bundle`: the Bundle crossing — `bundle.name`, `bundle.digest`, `bundle.alias`,
    /// and its artifacts looked up by repository with `bundle.image('<repo>')`,
    /// `bundle.chart('<repo>')` and `bundle.commit('<repo>')` (by repository, never by
    /// position, so an expression stays right when a Beacon's sources are reordered).
    pub bundle: BundleView,
    /// `target`: the place this crossing reaches when the Gate spans several
    /// (DECISION 155) — `target.name`, `target.cluster` (the Secret of its kubeconfig;
    /// empty for the cluster Hecate runs in) and `target.vars.<name>`, its own values
    /// (which `vars.<name>` also reads, over the Gate's). Null for a one-place Gate.
    pub target: Option<TargetView>,
}

/// What expressions read of the target a crossing reaches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetView {
    /// Its name.
    pub name: String,
    /// The Secret holding its cluster's kubeconfig; empty: Hecate's own cluster.
    pub cluster: String,
    /// Its own values.
    pub vars: BTreeMap<String, String>,
}

impl TargetView {
    fn value(&self) -> Value {
        json!({"name": self.name, "cluster": self.cluster, "vars": self.vars})
    }
}

/// What expressions read of the Bundle crossing: the language's own view, so it needs
/// no Kubernetes types (the controller fills it from the Bundle).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BundleView {
    /// The Bundle's name.
    pub name: String,
    /// Its content address.
    pub digest: String,
    /// Its alias, if it has one.
    pub alias: String,
    /// Its images, in the Bundle's order.
    pub images: Vec<Image>,
    /// Its charts, in the Bundle's order.
    pub charts: Vec<Chart>,
    /// Its commits, in the Bundle's order.
    pub commits: Vec<Commit>,
}

/// `bundle.image('<repo>')`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// The repository, e.g. `ghcr.io/acme/api`.
    pub repo: String,
    /// The tag.
    pub tag: String,
    /// The manifest digest.
    pub digest: String,
}

/// `bundle.chart('<repo>')`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chart {
    /// The chart repository.
    pub repo: String,
    /// The chart's name.
    pub name: String,
    /// The version.
    pub version: String,
}

/// `bundle.commit('<repo>')`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commit {
    /// The git repository.
    pub repo: String,
    /// The commit.
    pub sha: String,
    /// Its branch.
    pub branch: String,
    /// Its tag.
    pub tag: String,
    /// Its message.
    pub message: String,
}

/// The artifact lookups of `bundle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BundleFn {
    Image,
    Chart,
    Commit,
}

impl BundleFn {
    /// `bundle.<name>`; a name the Bundle does not have reads as null.
    pub(super) fn member<'a>(bundle: &'a BundleView, name: &str) -> Val<'a> {
        let text = |s: &str| Val::owned(Value::String(s.to_string()));
        match name {
            "name" => text(&bundle.name),
            "digest" => text(&bundle.digest),
            "alias" => text(&bundle.alias),
            "image" => Val::Func(bundle, BundleFn::Image),
            "chart" => Val::Func(bundle, BundleFn::Chart),
            "commit" => Val::Func(bundle, BundleFn::Commit),
            _ => Val::null(),
        }
    }

    /// The first artifact of this kind whose repository is exactly `repo`, as a map;
    /// null when there is none.
    pub(super) fn find(self, bundle: &BundleView, repo: &str) -> Value {
        let found = match self {
            BundleFn::Image => bundle
                .images
                .iter()
                .find(|a| a.repo == repo)
                .map(|a| json!({"repo": a.repo, "tag": a.tag, "digest": a.digest})),
            BundleFn::Chart => bundle
                .charts
                .iter()
                .find(|a| a.repo == repo)
                .map(|a| json!({"repo": a.repo, "name": a.name, "version": a.version})),
            BundleFn::Commit => bundle.commits.iter().find(|a| a.repo == repo).map(|a| {
                json!({
                    "repo": a.repo, "sha": a.sha, "branch": a.branch,
                    "tag": a.tag, "message": a.message,
                })
            }),
        };
        found.unwrap_or(Value::Null)
    }
}

impl Scope for Env {
    /// An unknown name reads as null, as in the reference.
    fn lookup(&self, name: &str) -> Val<'_> {
        let text = |s: &str| Val::owned(Value::String(s.to_string()));
        match name {
            "steps" => Val::Steps(&self.steps),
            "vars" => Val::Vars(&self.vars),
            "gate" => text(&self.gate),
            "passage" => text(&self.passage),
            "actor" => text(&self.actor),
            "namespace" => text(&self.namespace),
            "failed" => Val::owned(Value::Bool(self.failed)),
            "always" => Val::owned(Value::Bool(true)),
            "bundle" => Val::Bundle(&self.bundle),
            "target" => self
                .target
                .as_ref()
                .map_or_else(Val::null, |target| Val::owned(target.value())),
            _ => Val::null(),
        }
    }
}

/// What `successIf` sees: the response to the `http` step's request.
pub(super) struct Response<'a> {
    pub(super) status: u16,
    pub(super) body: &'a str,
    pub(super) json: Option<&'a Value>,
}

impl Response<'_> {
    /// The only names `successIf` may use; any other is refused before evaluation.
    pub(super) const NAMES: [&'static str; 3] = ["status", "body", "json"];
}

impl Scope for Response<'_> {
    fn lookup(&self, name: &str) -> Val<'_> {
        match name {
            "status" => Val::owned(Value::from(self.status)),
            "body" => Val::owned(Value::String(self.body.to_string())),
            "json" => self
                .json
                .map_or_else(Val::null, |json| Val::Json(Cow::Borrowed(json))),
            _ => Val::null(),
        }
    }
}
