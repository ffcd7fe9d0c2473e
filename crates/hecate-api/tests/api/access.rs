//! Who may do what: authentication and the authorisation matrix, as the cluster
//! decides it.

use hecate_ops::Operation;
use hecate_testenv::Identity::{self, *};
use hecate_testenv::RequestLog;
use hecate_testenv::fixtures::{gate, gate_spec, passage};
use hecate_types::{
    Beacon, BeaconSpec, GateOccupant, GateStatus, Health, HealthReport, ImageWatch, Passage,
    WatchSource,
};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::ResourceExt as _;
use kube::api::{Api, ObjectMeta, PostParams};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn no_token_or_an_unknown_one_is_401() {
    let server = Server::start().await;
    for path in [
        "/api/v1alpha1/namespaces",
        "/api/v1alpha1/overview",
        "/api/v1alpha1/namespaces/{ns}/gates",
        "/api/v1alpha1/namespaces/{ns}/watch",
    ] {
        let none = server.get(path, None).await;
        assert_eq!(none.status, 401, "{path}");
        assert!(
            none.headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("Bearer")
        );
        assert!(
            none.headers["content-type"]
                .to_str()
                .unwrap()
                .contains("json"),
            "never HTML"
        );
        assert_eq!(
            none.json(),
            serde_json::json!({"error": "authentication required", "status": "unauthorized"})
        );
        let forged = server
            .send(reqwest::Method::GET, path, Some("forged"), None)
            .await;
        assert_eq!(forged.status, 401, "{path}");
    }
    let poll = server
        .post("/api/v1alpha1/namespaces/{ns}/beacons/app/poll", None, None)
        .await;
    assert_eq!(poll.status, 401);
}

#[tokio::test]
async fn the_matrix() {
    let server = Server::start().await;
    server.pipeline().await;
    let gates = "/api/v1alpha1/namespaces/{ns}/gates";
    for (who, status) in [
        (CiBot, 403),
        (Alice, 200),
        (Bob, 200),
        (Carol, 200),
        (Admin, 200),
    ] {
        assert_eq!(
            server.get(gates, Some(who)).await.status,
            status,
            "{who} reading"
        );
    }
    let denied = server.get(gates, Some(CiBot)).await;
    assert_eq!(
        denied.json()["error"],
        format!("ci-bot may not list gates in {}", server.ns())
    );

    // Approving is carol's; promoting bob's; alice only reads.
    let approve = "/api/v1alpha1/namespaces/{ns}/bundles/b1/approve";
    for who in [Alice, Bob, CiBot] {
        let answer = server
            .post(approve, Some(who), Some(r#"{"gate":"staging"}"#))
            .await;
        assert_eq!(answer.status, 403, "{who} approving: {}", answer.body);
        assert!(
            answer.body.contains("may not update bundles/status"),
            "{}",
            answer.body
        );
    }
    let promote = "/api/v1alpha1/namespaces/{ns}/gates/staging/promote";
    for who in [Alice, Carol, CiBot] {
        let answer = server
            .post(promote, Some(who), Some(r#"{"bundle":"b1"}"#))
            .await;
        assert_eq!(answer.status, 403, "{who} promoting: {}", answer.body);
        assert!(
            answer.body.contains("may not create passages"),
            "{}",
            answer.body
        );
    }
    let approved = server
        .post(approve, Some(Carol), Some(r#"{"gate":"staging"}"#))
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.json()["approvedBy"], "carol");
    let promoted = server
        .post(promote, Some(Bob), Some(r#"{"bundle":"b1"}"#))
        .await;
    assert_eq!(promoted.status, 200, "{}", promoted.body);
    assert_eq!(
        promoted.json()["spec"]["actor"],
        "bob",
        "the actor is the caller"
    );
    let passage = promoted.json()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    let abort = format!("/api/v1alpha1/namespaces/{{ns}}/passages/{passage}/abort");
    for who in [Alice, Carol, CiBot] {
        assert_eq!(
            server.post(&abort, Some(who), None).await.status,
            403,
            "{who} aborting"
        );
    }
    let aborted = server.post(&abort, Some(Bob), None).await;
    assert_eq!(
        (aborted.status, aborted.json()["abortedBy"].as_str()),
        (200, Some("bob")),
        "{}",
        aborted.body
    );

    let poll = "/api/v1alpha1/namespaces/{ns}/beacons/app/poll";
    for who in [Alice, Bob, Carol] {
        assert_eq!(
            server.post(poll, Some(who), None).await.status,
            403,
            "{who} polling needs update beacons"
        );
    }
}

#[tokio::test]
async fn namespaces_and_overview_show_only_what_the_caller_may_read() {
    let server = Server::start().await;
    server.pipeline().await;
    let names = |who: Identity| {
        let server = &server;
        async move {
            server
                .get("/api/v1alpha1/namespaces", Some(who))
                .await
                .json()["namespaces"]
                .as_array()
                .unwrap()
                .clone()
        }
    };
    let ns = serde_json::Value::from(server.ns());
    assert!(names(Alice).await.contains(&ns));
    assert!(names(Admin).await.contains(&ns));
    let hidden = server.get("/api/v1alpha1/namespaces", Some(CiBot)).await;
    assert_eq!(
        hidden.status, 200,
        "reading nothing is an empty answer, not a refusal"
    );
    assert!(
        !hidden.json()["namespaces"]
            .as_array()
            .unwrap()
            .contains(&ns)
    );

    let overview = server.get("/api/v1alpha1/overview", Some(CiBot)).await;
    assert_eq!(overview.status, 200);
    assert!(
        !overview.body.contains(server.ns()),
        "nothing from a namespace ci-bot may not read"
    );
    assert!(!overview.body.contains("\"namespaces\":null"));
    let alice = server
        .get("/api/v1alpha1/overview", Some(Alice))
        .await
        .json();
    let mine = alice["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == ns)
        .unwrap()
        .clone();
    assert_eq!(mine["gates"][0]["name"], "staging");
    assert_eq!(mine["gates"][0]["state"], "Ready");
}

#[tokio::test]
async fn a_burst_of_requests_costs_one_token_review() {
    let server = Server::start().await;
    server.pipeline().await;
    let before = server.state.metrics().encode();
    // All at once: the first asks, the others wait for its answer.
    let statuses = futures::future::join_all(
        (0..10).map(|_| server.get("/api/v1alpha1/namespaces/{ns}/gates", Some(Alice))),
    )
    .await
    .into_iter()
    .map(|answer| answer.status)
    .collect::<Vec<_>>();
    assert_eq!(statuses, [200; 10]);
    let after = server.state.metrics().encode();
    let count = |text: &str, cache: &str, result: &str| -> u64 {
        text.lines()
            .find(|l| {
                l.starts_with("hecate_api_auth_cache_total")
                    && l.contains(&format!("cache=\"{cache}\""))
                    && l.contains(&format!("result=\"{result}\""))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(
        count(&after, "token_review", "miss") - count(&before, "token_review", "miss"),
        1,
        "{after}"
    );
    assert_eq!(
        count(&after, "token_review", "hit") - count(&before, "token_review", "hit"),
        9
    );
    assert_eq!(
        count(&after, "access_review", "miss") - count(&before, "access_review", "miss"),
        1,
        "reads are cached briefly"
    );
}

/// The TokenReviews and SubjectAccessReviews the server's client sent, in that order.
fn reviews(log: &RequestLog) -> (usize, usize) {
    let requests = log.requests();
    let count = |prefix: &str| requests.iter().filter(|r| r.starts_with(prefix)).count();
    (
        count("POST /apis/authentication.k8s.io/v1/tokenreviews"),
        count("POST /apis/authorization.k8s.io/v1/subjectaccessreviews"),
    )
}

/// API #30: a token the cluster does not know is 401, and the answer repeats nothing of
/// what the TokenReview said (its error would help someone guessing tokens). One
/// TokenReview is asked, and no access question for a caller nobody vouched for.
#[tokio::test]
async fn api30_a_forged_token_learns_nothing_from_the_401() {
    let (server, log) = Server::start_recording().await;
    // What the cluster itself says about the token.
    let review = Api::<TokenReview>::all(server.env.admin.clone())
        .create(
            &PostParams::default(),
            &TokenReview {
                spec: TokenReviewSpec {
                    token: Some("forged".into()),
                    audiences: None,
                },
                ..TokenReview::default()
            },
        )
        .await
        .unwrap()
        .status
        .unwrap_or_default();
    assert_ne!(review.authenticated, Some(true));
    let said = review.error.clone().unwrap_or_default();
    assert!(
        !said.is_empty(),
        "the TokenReview gives a reason: {review:?}"
    );

    log.clear();
    let answer = server
        .send(
            reqwest::Method::GET,
            "/api/v1alpha1/namespaces/{ns}/gates",
            Some("forged"),
            None,
        )
        .await;
    assert_eq!(answer.status, 401);
    assert!(
        answer.headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("Bearer")
    );
    assert_eq!(
        answer.json(),
        json!({"error": "authentication required", "status": "unauthorized"}),
        "the same answer as no token at all"
    );
    assert!(
        !answer.body.contains(&said),
        "{said:?} leaked: {}",
        answer.body
    );
    assert!(!answer.body.contains("forged"), "{}", answer.body);
    assert_eq!(reviews(&log), (1, 0), "{:?}", log.requests());
}

/// API #31: a caller the cluster knows but who may do nothing is 403, after exactly one
/// TokenReview and exactly one SubjectAccessReview.
#[tokio::test]
async fn api31_a_known_caller_with_no_rights_costs_one_access_review() {
    let (server, log) = Server::start_recording().await;
    server.pipeline().await;
    log.clear();
    let answer = server
        .get("/api/v1alpha1/namespaces/{ns}/gates", Some(CiBot))
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(reviews(&log), (1, 1), "{:?}", log.requests());
}

/// API #37: each write asks its own question, asked afresh every time (one
/// SubjectAccessReview per request), and the 403 names the permission that was missing
/// — abort's included, with no body and a Passage that does not exist.
#[tokio::test]
async fn api37_each_write_names_the_permission_it_asked_for() {
    let (server, log) = Server::start_recording().await;
    server.pipeline().await;
    let ns = server.ns().to_string();
    for (path, body, permission) in [
        (
            "/api/v1alpha1/namespaces/{ns}/gates/staging/promote",
            Some(r#"{"bundle":"b1"}"#),
            "create passages",
        ),
        (
            "/api/v1alpha1/namespaces/{ns}/bundles/b1/approve",
            Some(r#"{"gate":"staging"}"#),
            "update bundles/status",
        ),
        (
            "/api/v1alpha1/namespaces/{ns}/passages/p-1/abort",
            None,
            "patch passages",
        ),
        (
            "/api/v1alpha1/namespaces/{ns}/beacons/app/poll",
            None,
            "update beacons",
        ),
    ] {
        for _ in 0..2 {
            log.clear();
            let answer = server.post(path, Some(CiBot), body).await;
            assert_eq!(answer.status, 403, "{path}: {}", answer.body);
            assert_eq!(
                answer.json(),
                json!({"error": format!("ci-bot may not {permission} in {ns}"), "status": "forbidden"}),
                "{path}"
            );
            let (_, access_reviews) = reviews(&log);
            assert_eq!(access_reviews, 1, "{path}: {:?}", log.requests());
        }
    }
    assert!(
        server
            .env
            .api::<Passage>()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "nothing was written"
    );
}

/// API #45: a caller allowed to poll (the deployed `hecate-poker` role: `update
/// beacons` and nothing else, not even reading) gets 200 and the token written to the
/// Beacon; a reader gets 403 naming the permission.
#[tokio::test]
async fn api45_a_poker_polls_and_gets_the_token() {
    let server = Server::start().await;
    server
        .env
        .create(RoleBinding {
            metadata: ObjectMeta {
                name: Some("ci-bot-poker".into()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: "hecate-poker".into(),
            },
            subjects: Some(vec![hecate_testenv::rbac::subject(CiBot)]),
        })
        .await;
    hecate_testenv::rbac::await_access(&server.env, CiBot, "update", "beacons", "").await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "r".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    server.env.create(Beacon::new("app", spec)).await;
    let poll = "/api/v1alpha1/namespaces/{ns}/beacons/app/poll";

    let answer = server.post(poll, Some(CiBot), None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let polled = answer.json();
    assert_eq!(
        (polled["namespace"].as_str(), polled["beacon"].as_str()),
        (Some(server.ns()), Some("app"))
    );
    let token = polled["requestedAt"].as_str().unwrap();
    assert!(!token.is_empty(), "{polled}");
    let stored: Beacon = server.env.api().get("app").await.unwrap();
    assert_eq!(
        stored.annotations().get("reconcile.fluxcd.io/requestedAt"),
        Some(&token.to_string()),
        "the answer is the token the Beacon was given"
    );

    let reader = server.post(poll, Some(Alice), None).await;
    assert_eq!(reader.status, 403, "{}", reader.body);
    assert_eq!(
        reader.json()["error"],
        format!("alice may not update beacons in {}", server.ns())
    );
}

/// API #83: the event stream asks exactly the question the operation catalogue gives
/// [`Operation::Watch`] — `list gates` in the path's namespace. A caller without it
/// — even one who may get and watch Gates — is 403 (after one SubjectAccessReview),
/// named so; granted exactly that (a Role in the namespace with that verb on that
/// resource) the stream opens.
#[tokio::test]
async fn api83_the_stream_asks_what_the_catalogue_says() {
    let permission = Operation::Watch.permission();
    assert_eq!(
        (
            permission.verb,
            permission.group,
            permission.resource_path().as_str()
        ),
        ("list", "hecate.dev", "gates"),
        "the catalogue's question for the stream"
    );
    let (server, log) = Server::start_recording().await;
    server.pipeline().await;
    let path = format!(
        "{}/api/v1alpha1/namespaces/{}/watch",
        server.base,
        server.ns()
    );
    // A caller of this test's own, so that no other test sees it gain rights (ci-bot
    // must stay a caller with none: the UI tests show it reading nothing).
    let (user, token) = new_caller(&server.env, "stream-reader").await;
    let open = || {
        let request = server
            .http
            .get(&path)
            .bearer_auth(&token)
            .timeout(std::time::Duration::from_secs(2));
        async move { request.send().await.unwrap() }
    };

    // Other rights on Gates are not the question asked.
    allow(&server.env, "stream-reader", &["get", "watch"]).await;
    await_allowed(&server.env, &user, "watch", &server.env.namespace).await;
    log.clear();
    let refused = open().await;
    assert_eq!(refused.status(), 403);
    let body: serde_json::Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(
        body["error"],
        format!("{user} may not {permission} in {}", server.ns())
    );
    assert_eq!(reviews(&log), (1, 1), "{:?}", log.requests());

    // … exactly the catalogue's permission is.
    allow(&server.env, "stream-reader", &[permission.verb]).await;
    await_listing(&server.env, &user, &server.env.namespace).await;
    // Reads' answers are cached for 5 s (docs/DECISIONS.md 23): wait out the refusal.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(8);
    loop {
        let answer = open().await;
        if answer.status() == 200 {
            assert_eq!(answer.headers()["content-type"], "text/event-stream");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}",
            answer.status()
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// Lets ServiceAccount `account` of `env`'s namespace use `verbs` on Gates there,
/// through a Role and RoleBinding named after them.
async fn allow(env: &hecate_testenv::TestEnv, account: &str, verbs: &[&str]) {
    let name = format!("{account}-{}", verbs.join("-"));
    env.create(Role {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["hecate.dev".into()]),
            resources: Some(vec!["gates".into()]),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            ..PolicyRule::default()
        }]),
    })
    .await;
    env.create(RoleBinding {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "Role".into(),
            name,
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: account.into(),
            namespace: Some(env.namespace.clone()),
            ..Subject::default()
        }]),
    })
    .await;
}

/// A caller only this test knows: a new ServiceAccount in `env`'s namespace, and a
/// token for it. Its username is `system:serviceaccount:<namespace>:<name>`.
async fn new_caller(env: &hecate_testenv::TestEnv, name: &str) -> (String, String) {
    let accounts: Api<ServiceAccount> = Api::namespaced(env.admin.clone(), &env.namespace);
    accounts
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    ..ObjectMeta::default()
                },
                ..ServiceAccount::default()
            },
        )
        .await
        .unwrap();
    let token = accounts
        .create_token_request(name, &PostParams::default(), &TokenRequest::default())
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    (
        format!("system:serviceaccount:{}:{name}", env.namespace),
        token,
    )
}

/// Waits until the cluster lets `user` list Gates in `namespace`.
async fn await_listing(env: &hecate_testenv::TestEnv, user: &str, namespace: &str) {
    await_allowed(env, user, "list", namespace).await;
}

/// Waits until the cluster lets `user` `verb` Gates in `namespace`.
async fn await_allowed(env: &hecate_testenv::TestEnv, user: &str, verb: &str, namespace: &str) {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.into()),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(namespace.into()),
                group: Some("hecate.dev".into()),
                resource: Some("gates".into()),
                verb: Some(verb.into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let answer = Api::<SubjectAccessReview>::all(env.admin.clone())
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{user} never got {verb} gates"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Gate `name` (suspended or not) of `health` (none: it has not reported), entered at
/// each of `entered`.
async fn gate_with_history(
    env: &hecate_testenv::TestEnv,
    name: &str,
    suspended: bool,
    health: Option<Health>,
    entered: &[jiff::Timestamp],
) {
    let mut spec = gate_spec(&[], false);
    spec.suspend = suspended;
    let mut created = gate(env, name, spec).await;
    created.status = Some(GateStatus {
        health: health.map(|status| HealthReport {
            status,
            issues: vec![],
            details: None,
            observed_at: None,
            since: None,
        }),
        history: entered
            .iter()
            .enumerate()
            .map(|(i, at)| GateOccupant {
                bundle: format!("b{i}"),
                digest: String::new(),
                passage: format!("{name}-{i}"),
                entered_at: hecate_types::Time(*at),
                actor: String::new(),
                verified: None,
            })
            .collect(),
        ..GateStatus::default()
    });
    env.write_status(&created).await;
}

/// Lets ServiceAccount `name` of `owner`'s namespace read Hecate objects in `env`'s
/// namespace (the deployed `hecate-viewer` role), and waits until it may.
async fn let_read(
    owner: &hecate_testenv::TestEnv,
    name: &str,
    user: &str,
    env: &hecate_testenv::TestEnv,
) {
    env.create(RoleBinding {
        metadata: ObjectMeta {
            name: Some(format!("{name}-viewer")),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-viewer".into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: name.into(),
            namespace: Some(owner.namespace.clone()),
            ..Subject::default()
        }]),
    })
    .await;
    await_listing(env, user, &env.namespace).await;
}

/// `GET /api/v1alpha1/overview` with `token`, which must answer 200.
async fn overview_as(server: &Server, token: &str) -> Answer {
    let answer = server
        .send(
            reqwest::Method::GET,
            "/api/v1alpha1/overview",
            Some(token),
            None,
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer
}

/// The namespaces an Overview lists, in its order.
fn listed(overview: &serde_json::Value) -> Vec<String> {
    overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["namespace"].as_str().unwrap().to_string())
        .collect()
}

/// API #65, #71, #73 (ops AC-136, AC-141, AC-143) through the overview route, callers
/// only this test knows (so no other test's grants can show up): one who may read
/// `acme` but not `finance` sees `acme` alone — its Gate, totals without `finance`'s
/// degraded Gate and failed Passage, today's crossings without `finance`'s — and
/// nothing named after `finance`; one who may read nothing gets 200 and an empty
/// Overview, never null. An administrator sees both, so the test's data is there.
#[tokio::test]
async fn api65_api71_api73_the_overview_shows_only_what_the_caller_may_read() {
    let server = Server::start().await;
    let acme = &server.env;
    let finance = hecate_testenv::TestEnv::new().await;
    let now = jiff::Timestamp::now();
    gate_with_history(acme, "production", false, Some(Health::Healthy), &[now]).await;
    gate_with_history(
        &finance,
        "payments",
        false,
        Some(Health::Degraded),
        &[now, now],
    )
    .await;
    let mut failed = passage(
        &finance,
        "payments-1",
        "payments",
        "b9",
        hecate_types::PassagePhase::Failed,
    )
    .await;
    failed.status.as_mut().unwrap().finished_at = Some(hecate_types::Time(now));
    finance.write_status(&failed).await;

    let (reader, reader_token) = new_caller(acme, "overview-reader").await;
    let_read(acme, "overview-reader", &reader, acme).await;
    let (_, newcomer_token) = new_caller(acme, "overview-newcomer").await;

    let everything = overview_as(&server, &server.token(Admin)).await.json();
    assert!(listed(&everything).contains(&finance.namespace));
    assert!(listed(&everything).contains(&acme.namespace));

    let answer = overview_as(&server, &reader_token).await;
    let seen = answer.json();
    assert_eq!(listed(&seen), std::slice::from_ref(&acme.namespace), "#65");
    assert_eq!(seen["namespaces"][0]["gates"][0]["name"], "production");
    let totals = &seen["totals"];
    assert_eq!(
        (
            &totals["gates"],
            &totals["healthy"],
            &totals["degraded"],
            &totals["failed"]
        ),
        (&json!(1), &json!(1), &json!(0), &json!(0)),
        "#65: {totals}"
    );
    let today = &seen["activity"][13];
    assert_eq!(
        (&today["crossed"], &today["failed"]),
        (&json!(1), &json!(0)),
        "#73: {today}"
    );
    assert!(!answer.body.contains("payments"), "{}", answer.body);
    assert!(!answer.body.contains(&finance.namespace), "{}", answer.body);

    let answer = overview_as(&server, &newcomer_token).await;
    assert!(
        answer.body.contains(r#""namespaces":[]"#),
        "#71: {}",
        answer.body
    );
    assert_eq!(answer.json()["totals"]["gates"], 0);
    assert_eq!(answer.json()["activity"].as_array().unwrap().len(), 14);
}

/// API #66 – #69, #72, #74 (ops AC-137 – AC-140, AC-142, AC-144) through the overview
/// route, for a caller only this test knows who may read two namespaces: both listed,
/// in order of name, each Gate's health (`Unknown` when it never reported), the running
/// Passage named, a suspended Gate marked, the totals over both, and fourteen days of
/// crossings and failures with today last.
#[tokio::test]
async fn api66_to_api69_api72_api74_the_overview_route_counts_across_namespaces() {
    let server = Server::start().await;
    let acme = &server.env;
    let team_b = hecate_testenv::TestEnv::new().await;
    let now = jiff::Timestamp::now();
    let two_days_ago = now - jiff::SignedDuration::from_hours(48);
    gate_with_history(
        acme,
        "production",
        false,
        Some(Health::Healthy),
        &[now, now, two_days_ago],
    )
    .await;
    gate_with_history(acme, "staging", false, Some(Health::Degraded), &[]).await;
    gate_with_history(acme, "qa", true, None, &[]).await;
    gate_with_history(&team_b, "production", false, Some(Health::Progressing), &[]).await;
    passage(
        acme,
        "app-1-production",
        "production",
        "app-1",
        hecate_types::PassagePhase::Running,
    )
    .await;
    let mut failed = passage(
        acme,
        "app-0-staging",
        "staging",
        "app-0",
        hecate_types::PassagePhase::Failed,
    )
    .await;
    failed.status.as_mut().unwrap().finished_at = Some(hecate_types::Time(now));
    acme.write_status(&failed).await;

    let (reader, token) = new_caller(acme, "two-namespaces").await;
    let_read(acme, "two-namespaces", &reader, acme).await;
    let_read(acme, "two-namespaces", &reader, &team_b).await;

    let seen = overview_as(&server, &token).await.json();
    let mut expected = vec![acme.namespace.clone(), team_b.namespace.clone()];
    expected.sort();
    assert_eq!(listed(&seen), expected, "#66: by name");
    assert_eq!(
        seen["totals"],
        json!({
            "gates": 4, "healthy": 1, "progressing": 1, "degraded": 1, "unknown": 1,
            "suspended": 1, "eligible": 0, "ahead": 0, "running": 1, "failed": 1,
        }),
        "#66 – #69"
    );
    let acme_gates = seen["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == acme.namespace.as_str())
        .unwrap()["gates"]
        .as_array()
        .unwrap()
        .clone();
    let gate = |name: &str| {
        acme_gates
            .iter()
            .find(|g| g["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {acme_gates:?}"))
            .clone()
    };
    assert_eq!(
        (&gate("qa")["health"], &gate("qa")["suspended"]),
        (&json!("Unknown"), &json!(true)),
        "#67, #69"
    );
    assert_eq!(gate("production")["running"], "app-1-production", "#68");
    assert!(gate("staging").get("running").is_none(), "#68");
    assert_eq!(gate("staging")["health"], "Degraded");

    let activity = seen["activity"].as_array().unwrap();
    assert_eq!(activity.len(), 14, "#72, #74");
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date().to_string();
    assert_eq!(
        (
            &activity[13]["date"],
            &activity[13]["crossed"],
            &activity[13]["failed"]
        ),
        (&json!(today), &json!(2), &json!(1)),
        "#72"
    );
    assert_eq!(
        (&activity[11]["crossed"], &activity[11]["failed"]),
        (&json!(1), &json!(0)),
        "#72"
    );
}
