//! The cases of the Beacon matrix (issue #17: every source kind × new version, ignored
//! versions, credentials wanted and refused, a source that goes down and comes back,
//! two Beacons on one source, retention) that the other files leave out, each against
//! a real server: CNCF Distribution for OCI charts, a Helm repository over HTTPS with a
//! CA of its own, bare git repositories, and a stand-in `ResourceSetInputProvider` CRD
//! on the real API server. Also §1.2's `EmitFailed` (a Bundle the API server refuses,
//! through a ResourceQuota) and §1.7's acceptance check (a slow-to-fail source polled
//! once per interval by the running controller).

use std::sync::{Arc, Mutex};

use hecate_testenv::Identity;
use hecate_testenv::https::{Https, Reply};
use hecate_testenv::registry::{Distribution, PASSWORD};
use hecate_types::ProviderWatch;
use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use pretty_assertions::assert_eq;

use super::sources::{PROVIDER, base64_encode, chart, secret, with_secret};
use super::wire::trusting;
use super::*;

/// A Beacon reconciler on the system clock over a new namespace. Retention orders
/// Bundles by the creation time the controller writes (to the nanosecond); the other
/// files' manual clock stands still, and would make every Bundle as new as the next.
async fn live() -> Beacons {
    let env = TestEnv::new().await;
    let reconciler = reconciler(&env, Duration::from_secs(30), Arc::new(SystemClock));
    Beacons { env, reconciler }
}

/// The artifacts of the Bundle Beacon `name` names as its latest.
async fn latest_artifacts(b: &Beacons, name: &str) -> Vec<Artifact> {
    let latest = b.beacon(name).await.status.unwrap().latest_bundle;
    assert!(!latest.is_empty(), "Beacon {name} names no Bundle");
    b.env
        .api::<Bundle>()
        .get(&latest)
        .await
        .unwrap()
        .spec
        .artifacts
}

/// The artifacts of Beacon `beacon`'s Bundles, sorted.
async fn all_artifacts(b: &Beacons, beacon: &str) -> Vec<Vec<Artifact>> {
    let mut all: Vec<Vec<Artifact>> = b
        .bundles(beacon)
        .await
        .into_iter()
        .map(|bundle| bundle.spec.artifacts)
        .collect();
    all.sort_by_key(|a| format!("{a:?}"));
    all
}

fn retaining(mut spec: BeaconSpec, retain: i32) -> BeaconSpec {
    spec.retain = Some(retain);
    spec
}

// ---------------------------------------------------------------------------------
// OCI charts.

/// §1.3 `chart` from an OCI registry that wants credentials: refused without them and
/// with wrong ones; served, a new version is exactly one more Bundle and prereleases
/// are never chosen; a second Beacon on the repository emits its own; the registry
/// going down is a readable condition at the interval, and coming back recovers with
/// nothing emitted twice; `retain: 1` collects the oldest.
#[tokio::test]
async fn oci_charts_new_versions_credentials_outage_two_beacons_and_retention() {
    let b = live().await;
    let mut registry = Distribution::start(true).await;
    for version in ["0.3.0", "0.4.0", "0.5.0-rc.1"] {
        registry.image("charts/api", version, version).await;
    }
    let oci = format!("oci://{}", registry.repo("charts/api"));
    secret(
        &b,
        "registry",
        &[("username", "bot"), ("password", PASSWORD)],
    )
    .await;
    secret(&b, "wrong", &[("username", "bot"), ("password", "nope")]).await;
    let version = |v: &str| vec![Artifact::chart(oci.clone(), "", v)];

    // Credentials wanted, and refused.
    b.create("anonymous", spec(vec![chart(&oci, "", "")])).await;
    b.reconcile("anonymous").await;
    let message = b.refused("anonymous", "ResolveFailed").await;
    assert!(message.contains("credentials"), "{}", message);
    b.create(
        "wrong",
        spec(vec![with_secret(chart(&oci, "", ""), "wrong")]),
    )
    .await;
    b.reconcile("wrong").await;
    let ready = b.ready("wrong").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(
        ready.message.contains("refused") && !ready.message.contains("nope"),
        "{}",
        ready.message
    );
    assert!(b.bundles("anonymous").await.is_empty() && b.bundles("wrong").await.is_empty());

    // Served: the highest release, one Bundle; re-polling emits nothing.
    let watch = || with_secret(chart(&oci, "", ""), "registry");
    b.create("api", retaining(spec(vec![watch()]), 1)).await;
    b.reconcile("api").await;
    assert_eq!(all_artifacts(&b, "api").await, [version("0.4.0")]);
    b.reconcile("api").await;
    assert_eq!(b.bundles("api").await.len(), 1, "re-polling emits nothing");

    // A new version: exactly one more Bundle, and latestBundle names it.
    registry.image("charts/api", "0.5.0", "0.5.0").await;
    b.reconcile("api").await;
    assert_eq!(b.bundles("api").await.len(), 2);
    assert_eq!(latest_artifacts(&b, "api").await, version("0.5.0"));
    b.reconcile("api").await;
    assert_eq!(b.bundles("api").await.len(), 2);

    // A second Beacon on the same repository, within ~0.4: its own Bundle.
    b.create(
        "pinned",
        spec(vec![with_secret(chart(&oci, "", "~0.4"), "registry")]),
    )
    .await;
    b.reconcile("pinned").await;
    let pinned = b.bundles("pinned").await;
    assert_eq!(pinned.len(), 1);
    assert!(pinned[0].name_any().starts_with("pinned-"));
    assert_eq!(pinned[0].spec.artifacts, version("0.4.0"));
    assert_eq!(b.bundles("api").await.len(), 2, "each Beacon emits its own");

    // The registry goes down: a condition in words, at the interval; the latest stays.
    let latest = b.beacon("api").await.status.unwrap().latest_bundle;
    registry.stop().await;
    let outcome = b.reconcile("api").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("api", "ResolveFailed").await;
    assert!(
        message.starts_with("watch[0]: ") && message.contains("unreachable"),
        "{message}"
    );
    assert_eq!(b.beacon("api").await.status.unwrap().latest_bundle, latest);

    // It comes back: Discovered again, nothing emitted twice.
    registry.restart().await;
    b.reconcile("api").await;
    assert_eq!(b.ready("api").await.reason, "Discovered");
    assert_eq!(b.beacon("api").await.status.unwrap().latest_bundle, latest);
    assert_eq!(b.bundles("api").await.len(), 2);

    // retain: 1 — the latest, and the newest other; 0.4.0 goes.
    registry.image("charts/api", "0.6.0", "0.6.0").await;
    b.reconcile("api").await;
    assert_eq!(
        all_artifacts(&b, "api").await,
        [version("0.5.0"), version("0.6.0")]
    );
    assert_eq!(b.bundles("pinned").await.len(), 1, "another Beacon's stay");
}

// ---------------------------------------------------------------------------------
// A Helm repository over HTTPS.

/// What the Helm repository serves: down (`503`) or its index, with an ETag.
struct Served {
    down: bool,
    etag: String,
    index: String,
}

fn index(versions: &[&str]) -> String {
    let mut text = "apiVersion: v1\nentries:\n  api:\n".to_string();
    for version in versions {
        text.push_str(&format!("    - version: {version}\n"));
    }
    text.push_str("  web:\n    - version: 0.1.0\n");
    text
}

/// A Helm repository at `/charts` over HTTPS with a CA of its own, behind basic
/// authentication (`bot`/[`PASSWORD`]), serving what `served` says.
async fn helm_repository(served: Arc<Mutex<Served>>) -> Https {
    let expected = format!("Basic {}", base64_encode(&format!("bot:{PASSWORD}")));
    Https::start(move |request| {
        let served = served.lock().unwrap();
        if served.down {
            return Reply::status(503);
        }
        if request.path != "/charts/index.yaml" {
            return Reply::status(404);
        }
        if request.header("authorization") != Some(expected.as_str()) {
            return Reply::status(401).header("www-authenticate", "Basic realm=\"charts\"");
        }
        if request.header("if-none-match") == Some(served.etag.as_str()) {
            return Reply::status(304).header("etag", &served.etag);
        }
        Reply::ok(served.index.clone()).header("etag", &served.etag)
    })
    .await
}

/// §1.3 `chart` from an HTTPS Helm repository with its own CA: two Beacons on one
/// repository each emit their own; a new version is one more Bundle for the Beacon
/// whose range takes it and none for the other; prereleases are never chosen; the
/// repository answering 503 is a readable condition at the interval, and its return
/// recovers with nothing emitted twice; `retain: 1` collects the oldest. (Credentials
/// refused and the CA not trusted: `wire::a_helm_repository_over_https_with_its_own_ca`.)
#[tokio::test]
async fn a_helm_repository_over_https_two_beacons_outage_and_retention() {
    let b = live().await;
    let served = Arc::new(Mutex::new(Served {
        down: false,
        etag: "\"1\"".into(),
        index: index(&["1.0.0", "1.0.1", "1.1.0", "2.0.0-rc.1"]),
    }));
    let server = helm_repository(served.clone()).await;
    let repo = server.url("/charts");
    let publish = |etag: &str, versions: &[&str]| {
        let mut served = served.lock().unwrap();
        served.etag = format!("\"{etag}\"");
        served.index = index(versions);
    };
    secret(&b, "helm", &[("username", "bot"), ("password", PASSWORD)]).await;
    let trusted = trusting(&b.env, server.ca_pem());
    let ns = b.env.namespace.clone();
    let reconcile = |name: &'static str| {
        let (trusted, ns) = (&trusted, ns.clone());
        async move { trusted.reconcile_named(&ns, name).await.unwrap() }
    };
    let watch = |constraint: &str| with_secret(chart(&repo, "api", constraint), "helm");
    let version = |v: &str| vec![Artifact::chart(repo.clone(), "api", v)];

    b.create("api", retaining(spec(vec![watch("^1")]), 1)).await;
    b.create("patch", spec(vec![watch("~1.0")])).await;
    for name in ["api", "patch"] {
        reconcile(name).await;
        reconcile(name).await;
    }
    assert_eq!(all_artifacts(&b, "api").await, [version("1.1.0")]);
    assert_eq!(all_artifacts(&b, "patch").await, [version("1.0.1")]);

    // 1.2.0 and a prerelease: one more Bundle for `api`, none for `patch`.
    publish("2", &["1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.3.0-rc.1"]);
    reconcile("api").await;
    reconcile("patch").await;
    assert_eq!(b.bundles("api").await.len(), 2);
    assert_eq!(latest_artifacts(&b, "api").await, version("1.2.0"));
    assert_eq!(all_artifacts(&b, "patch").await, [version("1.0.1")]);

    // Down: a condition in words, at the interval; the latest stays.
    let latest = b.beacon("api").await.status.unwrap().latest_bundle;
    served.lock().unwrap().down = true;
    let outcome = reconcile("api").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("api", "ResolveFailed").await;
    assert!(
        message.starts_with("watch[0]: ") && message.contains("503"),
        "{message}"
    );
    assert_eq!(b.beacon("api").await.status.unwrap().latest_bundle, latest);

    // Back: Discovered, nothing emitted twice (the index is unchanged: a 304).
    served.lock().unwrap().down = false;
    reconcile("api").await;
    assert_eq!(b.ready("api").await.reason, "Discovered");
    assert_eq!(server.served().last().map(|(_, status)| *status), Some(304));
    assert_eq!(b.beacon("api").await.status.unwrap().latest_bundle, latest);
    assert_eq!(b.bundles("api").await.len(), 2);

    // retain: 1 — the latest, and the newest other; 1.1.0 goes.
    publish("3", &["1.1.0", "1.2.0", "1.3.0"]);
    reconcile("api").await;
    assert_eq!(
        all_artifacts(&b, "api").await,
        [version("1.2.0"), version("1.3.0")]
    );
    assert_eq!(b.bundles("patch").await.len(), 1, "another Beacon's stay");
}

// ---------------------------------------------------------------------------------
// Git.

/// §1.3 `git`: two Beacons on one repository's branch each emit their own Bundle of
/// the same commit, and one more each for a new commit; a tags Beacon emits exactly one
/// Bundle per new tag in range, never a prerelease or one out of range; a remote that
/// disappears is a readable condition at the interval, and its return recovers with
/// nothing emitted twice.
#[tokio::test]
async fn git_two_beacons_new_tags_and_a_remote_that_comes_back() {
    let b = live().await;
    let repo = Repo::new();
    let first = repo.commit("one");
    repo.tag("v1.0.0", false);
    let releases = || {
        tags(
            &repo.url,
            TagWatch {
                constraint: "^1".into(),
                ..TagWatch::default()
            },
        )
    };
    b.create("head", spec(vec![branch(&repo.url, "main")]))
        .await;
    b.create("twin", spec(vec![branch(&repo.url, "main")]))
        .await;
    b.create("releases", spec(vec![releases()])).await;
    for name in ["head", "twin", "releases"] {
        b.reconcile(name).await;
        b.reconcile(name).await;
    }
    let head = b.bundles("head").await;
    let twin = b.bundles("twin").await;
    assert_eq!((head.len(), twin.len()), (1, 1));
    assert_eq!(
        resolved(&head[0].spec.artifacts),
        [commit(&repo.url, &first, "main", "")]
    );
    assert_eq!(head[0].spec.digest, twin[0].spec.digest, "the same content");
    assert_ne!(head[0].name_any(), twin[0].name_any(), "each Beacon's own");
    assert_eq!(
        resolved(&all_artifacts(&b, "releases").await.concat()),
        [commit(&repo.url, &first, "", "v1.0.0")]
    );

    // A new commit, tagged v1.1.0: one more Bundle for each.
    let second = repo.commit("two");
    repo.tag("v1.1.0", true);
    for name in ["head", "twin", "releases"] {
        b.reconcile(name).await;
        b.reconcile(name).await;
        assert_eq!(b.bundles(name).await.len(), 2, "{name}");
    }
    assert_eq!(
        resolved(&latest_artifacts(&b, "twin").await),
        [commit(&repo.url, &second, "main", "")]
    );
    let releases = latest_artifacts(&b, "releases").await;
    assert_eq!(
        resolved(&releases),
        [commit(&repo.url, &second, "", "v1.1.0")]
    );
    // The tag's Bundle brings the commits since the previous tag's (DECISION 140).
    let brought: Vec<&str> = releases[0]
        .commit
        .iter()
        .flat_map(|c| &c.commits)
        .map(|c| c.subject.as_str())
        .collect();
    assert_eq!(brought, ["two"]);

    // A prerelease and a tag out of range: nothing for the tags Beacon.
    repo.commit("three");
    repo.tag("v1.2.0-rc.1", false);
    repo.tag("v2.0.0", false);
    b.reconcile("releases").await;
    assert_eq!(b.bundles("releases").await.len(), 2);
    assert_eq!(
        resolved(&latest_artifacts(&b, "releases").await),
        [commit(&repo.url, &second, "", "v1.1.0")]
    );

    // The remote goes away: a condition in words, at the interval; the latest stays.
    let bare = repo.dir.path().join("app.git");
    let moved = repo.dir.path().join("app.moved");
    let latest = b.beacon("head").await.status.unwrap().latest_bundle;
    std::fs::rename(&bare, &moved).unwrap();
    let outcome = b.reconcile("head").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("head", "ResolveFailed").await;
    assert!(
        message.starts_with("watch[0]: listing the refs of file://"),
        "{}",
        message
    );
    assert_eq!(b.beacon("head").await.status.unwrap().latest_bundle, latest);

    // It comes back (with the commit made before): one Bundle for it, then nothing.
    std::fs::rename(&moved, &bare).unwrap();
    b.reconcile("head").await;
    b.reconcile("head").await;
    assert_eq!(b.ready("head").await.reason, "Discovered");
    assert_eq!(b.bundles("head").await.len(), 3);

    // Exactly one of branch and tags: both, or neither, is ResolveFailed.
    let mut both = branch(&repo.url, "main");
    if let Some(git) = &mut both.git {
        git.tags = Some(TagWatch::default());
    }
    let neither = branch(&repo.url, "");
    for (name, watch, words) in [
        ("both", both, "not both"),
        ("neither", neither, "set branch or tags"),
    ] {
        b.create(name, spec(vec![watch])).await;
        b.reconcile(name).await;
        let ready = b.ready(name).await;
        assert_eq!(ready.reason, "ResolveFailed", "{name}");
        assert!(ready.message.contains(words), "{name}: {}", ready.message);
        assert!(b.bundles(name).await.is_empty());
    }
}

// ---------------------------------------------------------------------------------
// Providers.

/// Writes provider `name`'s status: Ready, exporting `inputs`.
async fn export(api: &Api<DynamicObject>, name: &str, inputs: serde_json::Value) {
    let status = serde_json::json!({"status": {
        "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                        "message": "ok", "lastTransitionTime": "2026-08-10T12:00:00Z"}],
        "exportedInputs": inputs,
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// Creates provider `name` with `url`.
async fn provider(api: &Api<DynamicObject>, name: &str, url: &str) {
    let object: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": PROVIDER.api_version(),
        "kind": PROVIDER.kind,
        "metadata": {"name": name},
        "spec": {"type": "GitHubPullRequest", "url": url},
    }))
    .unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
}

fn watching(provider: &str) -> WatchSource {
    WatchSource {
        provider: Some(ProviderWatch {
            name: provider.into(),
        }),
        ..WatchSource::default()
    }
}

/// §1.3 `provider`: two Beacons on one provider each emit their own; a new first input
/// is one more Bundle each, and re-polling emits nothing; only the first input counts
/// (never re-sorted); a tag input is an image with `oci://` stripped; a controller not
/// allowed to read providers says so in the API server's words; a provider deleted and
/// made again recovers with nothing emitted twice; `retain: 1` collects the oldest.
#[tokio::test]
async fn providers_new_inputs_two_beacons_refusal_outage_and_retention() {
    let b = live().await;
    hecate_testenv::flux::install(&b.env.admin, &[PROVIDER])
        .await
        .unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(
        b.env.admin.clone(),
        &b.env.namespace,
        &PROVIDER.api_resource(),
    );
    let url = "https://github.com/acme/app";
    let (a, c, z) = ("a".repeat(40), "c".repeat(40), "f".repeat(40));
    let input = |sha: &str, title: &str| serde_json::json!({"id": title, "sha": sha, "branch": "feature", "title": title});
    let found = |sha: &str, title: &str| {
        vec![Artifact {
            commit: Some(CommitArtifact {
                repo: url.into(),
                sha: sha.into(),
                branch: "feature".into(),
                tag: String::new(),
                message: title.into(),
                author: String::new(),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        }]
    };
    provider(&api, "prs", url).await;
    export(&api, "prs", serde_json::json!([input(&a, "A")])).await;

    b.create("first", retaining(spec(vec![watching("prs")]), 1))
        .await;
    b.create("second", spec(vec![watching("prs")])).await;
    for name in ["first", "second"] {
        b.reconcile(name).await;
        b.reconcile(name).await;
        assert_eq!(all_artifacts(&b, name).await, [found(&a, "A")], "{name}");
    }

    // A new first input (the provider sorts; an older one after it, and one that
    // would sort higher by Hecate's rules, change nothing): one more Bundle each.
    export(
        &api,
        "prs",
        serde_json::json!([input(&c, "C"), input(&z, "Z"), input(&a, "A")]),
    )
    .await;
    for name in ["first", "second"] {
        b.reconcile(name).await;
        b.reconcile(name).await;
        assert_eq!(b.bundles(name).await.len(), 2, "{name}");
        assert_eq!(latest_artifacts(&b, name).await, found(&c, "C"), "{name}");
    }

    // A tag input is an image, the repository without `oci://`.
    provider(&api, "images", "oci://ghcr.io/acme/api").await;
    export(
        &api,
        "images",
        serde_json::json!([{"id": "1", "tag": "1.2.3", "digest": "sha256:aaa"}]),
    )
    .await;
    b.create("image", spec(vec![watching("images")])).await;
    b.reconcile("image").await;
    assert_eq!(
        latest_artifacts(&b, "image").await,
        [Artifact::image("ghcr.io/acme/api", "1.2.3", "sha256:aaa")]
    );

    // A controller that may not read providers: the API server's sentence, no dump.
    let refused = BeaconReconciler {
        client: b.env.admin.clone(),
        sources: Arc::new(Resolver {
            client: b.env.client(Identity::Alice).await,
            git: Git::new(Duration::from_secs(30)).within(hecate_sources::git::Limits::local()),
            app_tokens: AppTokens::default(),
            http: hecate_controller::beacon::resolver::http_client().unwrap(),
            registries: Default::default(),
            indexes: Default::default(),
        }),
        clock: Arc::new(SystemClock),
        events: Events::new(b.env.admin.clone(), "beacon-controller", None),
        metrics: Default::default(),
    };
    b.create("forbidden", spec(vec![watching("prs")])).await;
    refused
        .reconcile_named(&b.env.namespace, "forbidden")
        .await
        .unwrap();
    let message = b.refused("forbidden", "ResolveFailed").await;
    assert!(
        message.contains("forbidden") && message.contains("alice") && !message.contains("Status {"),
        "{}",
        message
    );
    assert!(b.bundles("forbidden").await.is_empty());

    // The provider is deleted: a condition in words, at the interval; the latest stays.
    let latest = b.beacon("first").await.status.unwrap().latest_bundle;
    api.delete("prs", &DeleteParams::default()).await.unwrap();
    eventually(Duration::from_secs(10), "the provider gone", || async {
        api.get_opt("prs").await.unwrap().is_none().then_some(())
    })
    .await;
    let outcome = b.reconcile("first").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("first", "ResolveFailed").await;
    assert!(message.contains("does not exist"), "{message}");
    assert_eq!(
        b.beacon("first").await.status.unwrap().latest_bundle,
        latest
    );

    // Made again, exporting the same input: Discovered, nothing emitted twice.
    provider(&api, "prs", url).await;
    export(&api, "prs", serde_json::json!([input(&c, "C")])).await;
    b.reconcile("first").await;
    assert_eq!(b.ready("first").await.reason, "Discovered");
    assert_eq!(
        b.beacon("first").await.status.unwrap().latest_bundle,
        latest
    );
    assert_eq!(b.bundles("first").await.len(), 2);

    // retain: 1 — the latest, and the newest other; A goes.
    export(&api, "prs", serde_json::json!([input(&z, "Z")])).await;
    b.reconcile("first").await;
    assert_eq!(
        all_artifacts(&b, "first").await,
        [found(&c, "C"), found(&z, "Z")]
    );
    assert_eq!(b.bundles("second").await.len(), 2, "another Beacon's stay");
}

// ---------------------------------------------------------------------------------
// Images.

/// §1.8 for an image watch: `retain: 2` keeps the latest and the two newest others as
/// new tags arrive; `retain: 0` keeps everything.
#[tokio::test]
async fn images_retention() {
    let b = live().await;
    let registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    b.create(
        "app",
        retaining(spec(vec![super::sources::image(&repo, "", &[])]), 2),
    )
    .await;
    b.create(
        "all",
        retaining(spec(vec![super::sources::image(&repo, "", &[])]), 0),
    )
    .await;
    let mut digests = Vec::new();
    for version in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"] {
        let (digest, _) = registry.image("team/app", version, version).await;
        digests.push(Artifact::image(repo.clone(), version, digest));
        b.reconcile("app").await;
        b.reconcile("all").await;
    }
    assert_eq!(
        all_artifacts(&b, "app").await,
        digests[2..]
            .iter()
            .map(|a| vec![a.clone()])
            .collect::<Vec<_>>()
    );
    assert_eq!(b.bundles("all").await.len(), 5);
}

// ---------------------------------------------------------------------------------
// EmitFailed, and the no-spin acceptance check.

/// §1.2 step 6: a Bundle the API server refuses (here a ResourceQuota of no Bundles)
/// is `Ready=False` `EmitFailed`, in the API server's words; the status is written
/// (what was discovered, when) and the reconcile fails, so the controller backs off;
/// no Event, no Bundle. Once the quota goes, the next poll emits.
#[tokio::test]
async fn a_bundle_the_api_server_refuses_is_emit_failed() {
    let b = live().await;
    let repo = Repo::new();
    let head = repo.commit("one");
    let quotas = Api::<ResourceQuota>::namespaced(b.env.admin.clone(), &b.env.namespace);
    let hard = [("count/bundles.hecate.dev".to_string(), Quantity("0".into()))];
    b.env
        .create(ResourceQuota {
            metadata: ObjectMeta {
                name: Some("no-bundles".into()),
                ..ObjectMeta::default()
            },
            spec: Some(ResourceQuotaSpec {
                hard: Some(hard.clone().into()),
                ..ResourceQuotaSpec::default()
            }),
            status: None,
        })
        .await;
    // What kube-controller-manager would write: the quota is enforced from its status.
    let status = serde_json::json!({"status": {
        "hard": {"count/bundles.hecate.dev": "0"},
        "used": {"count/bundles.hecate.dev": "0"},
    }});
    quotas
        .patch_status(
            "no-bundles",
            &PatchParams::default(),
            &Patch::Merge(&status),
        )
        .await
        .unwrap();
    // The API server's admission reads quotas from its own watch: wait until it does.
    let probe = Bundle::new(
        "probe",
        BundleSpec {
            beacon: "probe".into(),
            artifacts: vec![Artifact::commit(&repo.url, &head)],
            ..BundleSpec::default()
        },
    );
    eventually(Duration::from_secs(20), "the quota enforced", || async {
        let bundles = b.env.api::<Bundle>();
        match bundles.create(&PostParams::default(), &probe).await {
            Ok(_) => {
                bundles
                    .delete("probe", &DeleteParams::default())
                    .await
                    .unwrap();
                None
            }
            Err(kube::Error::Api(status)) if status.code == 403 => Some(()),
            Err(error) => panic!("{error}"),
        }
    })
    .await;

    b.create("app", spec(vec![branch(&repo.url, "main")])).await;
    let error = b
        .reconciler
        .reconcile_named(&b.env.namespace, "app")
        .await
        .expect_err("a refused Bundle fails the reconcile");
    assert!(
        matches!(error, hecate_controller::beacon::Error::Emit { .. }),
        "{error}"
    );
    let message = b.refused("app", "EmitFailed").await;
    assert!(
        message.starts_with("could not create Bundle app-")
            && message.contains("exceeded quota")
            && !message.contains("Status {"),
        "{}",
        message
    );
    let status = b.beacon("app").await.status.unwrap();
    assert_eq!(status.discovered, [commit(&repo.url, &head, "main", "")]);
    assert!(status.last_polled.is_some());
    assert!(status.latest_bundle.is_empty());
    assert!(b.bundles("app").await.is_empty());
    assert_eq!(b.emissions().await, 0);

    quotas
        .delete("no-bundles", &DeleteParams::default())
        .await
        .unwrap();
    let outcome = eventually(Duration::from_secs(20), "the Bundle", || async {
        b.reconciler
            .reconcile_named(&b.env.namespace, "app")
            .await
            .ok()
    })
    .await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    assert_eq!(b.ready("app").await.reason, "Discovered");
    assert_eq!(b.bundles("app").await.len(), 1);
    assert_eq!(b.emissions().await, 1);
}

/// §1.7's acceptance check, on a shorter clock: with a 1-hour interval and a source
/// that accepts and never answers (each poll gives up after 2 s), the running
/// controller polls once and writes its condition once — its own status write, the
/// failure included, never wakes it, and a failing source is not a backoff loop.
#[tokio::test]
async fn a_slow_failing_source_is_polled_once_an_interval() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    join_shard(&env, &ns, &ns).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controller::run(
        env.admin.clone(),
        reconciler(&env, Duration::from_secs(2), Arc::new(SystemClock)),
        hecate_controller::scope::Scope::start(
            &env.admin,
            Some(&format!("{}={ns}", crate::process::SHARD_LABEL)),
        ),
        async move {
            let _ = stopped.await;
        },
    ));
    // The controller's first look at the shard (its namespace listing) comes before the
    // Beacon, so nothing but the Beacon itself asks for its first poll.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let b = Beacons::over(env.clone(), Duration::from_secs(2));
    let url = format!("http://{addr}/app.git");
    b.create("app", spec(vec![branch(&url, "main")])).await;

    let first = eventually(Duration::from_secs(30), "the first poll", || async {
        b.beacon("app")
            .await
            .status
            .filter(|s| s.last_polled.is_some())
    })
    .await;
    b.refused("app", "ResolveFailed").await;
    let version = b.beacon("app").await.resource_version();
    // Five times the time a poll takes to fail: a loop would have polled again.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let after = b.beacon("app").await;
    assert_eq!(after.resource_version(), version, "polled again unasked");
    assert_eq!(after.status.unwrap().last_polled, first.last_polled);

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the controller stops when told")
        .unwrap();
    hold.abort();
}
