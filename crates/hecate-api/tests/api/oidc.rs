//! Browser sign-in through OpenID Connect (surfaces §2.5, OIDC mode) against a real
//! OIDC provider on loopback HTTPS with its own CA (`hecate_testenv::oidc`): the
//! login redirect, each failure row of `/auth/callback` as its own test, the session
//! cookie, logout, and start-up checks.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hecate_api::oidc::{Oidc, OidcArgs, STATE_COOKIE, Settings, VERIFIER_COOKIE};
use hecate_testenv::oidc::{Behaviour, Provider, User};
use reqwest::StatusCode;
use reqwest::header::{LOCATION, SET_COOKIE};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

const CLIENT_ID: &str = "hecate";

/// hecate-api's `/auth/*` routes on loopback, signing in through `provider`.
struct Sso {
    provider: Provider,
    base: String,
    /// Follows no redirects, trusts the provider's CA.
    http: reqwest::Client,
    serving: tokio::task::JoinHandle<()>,
}

impl Drop for Sso {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// One run of `/auth/login` and the provider's sign-in: where the provider sent the
/// browser back, and the cookies login set.
struct Started {
    login: reqwest::Response,
    cookies: Vec<String>,
    back: String,
}

impl Started {
    fn cookie(&self, name: &str) -> String {
        cookie_value(&self.cookies, name).unwrap_or_default()
    }

    /// The `Cookie` header a browser would send back.
    fn cookie_header(&self) -> String {
        format!(
            "{STATE_COOKIE}={}; {VERIFIER_COOKIE}={}",
            self.cookie(STATE_COOKIE),
            self.cookie(VERIFIER_COOKIE)
        )
    }
}

fn settings(provider: &Provider, base: &str, secure: bool) -> Settings {
    Settings {
        issuer: provider.issuer(),
        client_id: CLIENT_ID.into(),
        client_secret: Some("s3cret".into()),
        redirect_url: format!("{base}/auth/callback"),
        scopes: vec!["profile".into(), "email".into(), "groups".into()],
        secure_cookie: secure,
    }
}

async fn sso(secure: bool) -> Sso {
    let provider = Provider::start(User::new("ada@example.com", &["hecate-admins"])).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let oidc = Oidc::discover(
        &settings(&provider, &base, secure),
        &[provider.ca_pem().as_bytes().to_vec()],
    )
    .await
    .unwrap();
    let app = Arc::new(oidc).router();
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .add_root_certificate(reqwest::Certificate::from_pem(provider.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    Sso {
        provider,
        base,
        http,
        serving,
    }
}

fn set_cookies(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

fn cookie_value(cookies: &[String], name: &str) -> Option<String> {
    cookies
        .iter()
        .find_map(|c| c.strip_prefix(&format!("{name}=")))
        .map(|rest| rest.split(';').next().unwrap_or_default().to_string())
}

fn location(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

fn query(url: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

fn param(url: &str, name: &str) -> Option<String> {
    query(url)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

impl Sso {
    /// `/auth/login`, then the provider's sign-in, stopping before the callback.
    async fn start(&self) -> Started {
        let login = self
            .http
            .get(format!("{}/auth/login", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(login.status(), StatusCode::FOUND);
        let cookies = set_cookies(&login);
        let to_provider = location(&login);
        let signed_in = self.http.get(&to_provider).send().await.unwrap();
        assert_eq!(signed_in.status(), StatusCode::FOUND, "{to_provider}");
        let back = location(&signed_in);
        assert!(
            back.starts_with(&format!("{}/auth/callback?", self.base)),
            "{back}"
        );
        Started {
            login,
            cookies,
            back,
        }
    }

    /// The browser's return to `/auth/callback` at `url` with `cookies`.
    async fn callback(&self, url: &str, cookies: &str) -> reqwest::Response {
        let mut request = self.http.get(url);
        if !cookies.is_empty() {
            request = request.header(reqwest::header::COOKIE, cookies);
        }
        request.send().await.unwrap()
    }

    /// How many times the provider's token endpoint was asked.
    fn exchanges(&self) -> usize {
        self.provider
            .served()
            .iter()
            .filter(|(request, _)| request.path == "/token")
            .count()
    }
}

/// What a failed callback must leave: no session, the sign-in's cookies cleared.
fn assert_no_session_and_flow_cleared(cookies: &[String]) {
    assert!(
        cookie_value(cookies, "hecate_session").is_none(),
        "{cookies:?}"
    );
    for name in [STATE_COOKIE, VERIFIER_COOKIE] {
        assert!(
            cookies.contains(&format!(
                "{name}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
            )),
            "{name} not cleared: {cookies:?}"
        );
    }
}

#[tokio::test]
async fn login_redirects_to_the_provider_with_state_and_an_s256_challenge() {
    let sso = sso(true).await;
    let started = sso.start().await;
    let state = started.cookie(STATE_COOKIE);
    let verifier = started.cookie(VERIFIER_COOKIE);
    // 32 random bytes each, base64url without padding.
    assert_eq!(URL_SAFE_NO_PAD.decode(&state).unwrap().len(), 32);
    assert_eq!(URL_SAFE_NO_PAD.decode(&verifier).unwrap().len(), 32);
    assert_ne!(state, verifier);
    assert_eq!(
        started.cookies,
        vec![
            format!("{STATE_COOKIE}={state}; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax"),
            format!(
                "{VERIFIER_COOKIE}={verifier}; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax"
            ),
        ]
    );
    let to = location(&started.login);
    assert!(
        to.starts_with(&format!("{}/authorize?", sso.provider.issuer())),
        "{to}"
    );
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    for (name, value) in [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", &format!("{}/auth/callback", sso.base)),
        ("scope", "openid profile email groups"),
        ("state", &state),
        ("nonce", &state),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
    ] {
        assert_eq!(param(&to, name).as_deref(), Some(value), "{name} in {to}");
    }
    // A second login is a new sign-in.
    let again = sso.start().await;
    assert_ne!(again.cookie(STATE_COOKIE), state);
    assert_ne!(again.cookie(VERIFIER_COOKIE), verifier);
}

#[tokio::test]
async fn callback_sets_the_id_token_as_the_session_for_as_long_as_it_lives() {
    let sso = sso(true).await;
    let started = sso.start().await;
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(location(&answer), "/");
    let cookies = set_cookies(&answer);
    let token = cookie_value(&cookies, "hecate_session").unwrap();
    let session = cookies
        .iter()
        .find(|c| c.starts_with("hecate_session="))
        .unwrap();
    let max_age: u64 = session
        .split("; ")
        .find_map(|a| a.strip_prefix("Max-Age="))
        .unwrap()
        .parse()
        .unwrap();
    assert!((3590..=3600).contains(&max_age), "{session}");
    assert_eq!(
        session,
        &format!(
            "hecate_session={token}; Path=/; Max-Age={max_age}; HttpOnly; Secure; SameSite=Lax"
        )
    );
    // The raw ID token the provider issued, for this client and this sign-in.
    let claims: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(token.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["email"], "ada@example.com");
    assert_eq!(claims["aud"], CLIENT_ID);
    assert_eq!(claims["iss"], sso.provider.issuer());
    assert_eq!(claims["nonce"], started.cookie(STATE_COOKIE));
    for name in [STATE_COOKIE, VERIFIER_COOKIE] {
        assert!(
            cookies.contains(&format!(
                "{name}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
            )),
            "{cookies:?}"
        );
    }
    // The code was exchanged once, with the client's credentials and the verifier
    // (the provider checks the PKCE challenge).
    let exchanges: Vec<_> = sso
        .provider
        .served()
        .into_iter()
        .filter(|(request, _)| request.path == "/token")
        .collect();
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0].1, 200);
    let form = String::from_utf8(exchanges[0].0.body.clone()).unwrap();
    assert!(form.contains(&format!(
        "code_verifier={}",
        started.cookie(VERIFIER_COOKIE)
    )));
}

#[tokio::test]
async fn callback_that_did_not_start_here_is_400_and_asks_the_provider_nothing() {
    let sso = sso(true).await;
    let started = sso.start().await;
    let state = started.cookie(STATE_COOKIE);
    let verifier = started.cookie(VERIFIER_COOKIE);
    let without_state = started
        .back
        .split('?')
        .next()
        .map(|base| format!("{base}?code={}", param(&started.back, "code").unwrap()))
        .unwrap();
    let other_state = started.back.replace(&state, "forged-state");
    for (url, cookies) in [
        // No cookies: the login never happened in this browser.
        (started.back.clone(), String::new()),
        // The state cookie differs from the state sent back.
        (
            started.back.clone(),
            format!("{STATE_COOKIE}=other; {VERIFIER_COOKIE}={verifier}"),
        ),
        (other_state, started.cookie_header()),
        // No state in the query.
        (without_state, started.cookie_header()),
        // No verifier cookie, or an empty one.
        (started.back.clone(), format!("{STATE_COOKIE}={state}")),
        (
            started.back.clone(),
            format!("{STATE_COOKIE}={state}; {VERIFIER_COOKIE}="),
        ),
        // An empty state cookie and an empty state.
        (
            started.back.replace(&state, ""),
            format!("{STATE_COOKIE}=; {VERIFIER_COOKIE}={verifier}"),
        ),
    ] {
        let answer = sso.callback(&url, &cookies).await;
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{url} {cookies}");
        // No session, and the sign-in in progress is left alone.
        assert_eq!(set_cookies(&answer), Vec::<String>::new());
        let text = answer.text().await.unwrap();
        assert!(text.contains("did not start here"), "{text}");
    }
    assert_eq!(sso.exchanges(), 0);
    // The real sign-in still completes.
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
}

#[tokio::test]
async fn callback_with_the_providers_error_is_403() {
    let sso = sso(true).await;
    sso.provider.set(Behaviour::Deny);
    let started = sso.start().await;
    assert_eq!(
        param(&started.back, "error").as_deref(),
        Some("access_denied")
    );
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    assert_no_session_and_flow_cleared(&set_cookies(&answer));
    // The provider's words are quoted as text, never sniffed as a page.
    assert_eq!(answer.headers()["x-content-type-options"], "nosniff");
    assert!(
        answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = answer.text().await.unwrap();
    assert!(text.contains("access_denied"), "{text}");
    assert_eq!(sso.exchanges(), 0);
}

#[tokio::test]
async fn callback_whose_code_exchange_fails_is_502() {
    let sso = sso(true).await;
    sso.provider.set(Behaviour::RefuseCodes);
    let started = sso.start().await;
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::BAD_GATEWAY);
    assert_no_session_and_flow_cleared(&set_cookies(&answer));
    assert_eq!(sso.exchanges(), 1);
}

#[tokio::test]
async fn callback_replaying_a_used_code_is_502() {
    let sso = sso(true).await;
    let started = sso.start().await;
    let first = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(first.status(), StatusCode::FOUND);
    // The browser (or an attacker holding its cookies) comes back with the same code.
    let again = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(again.status(), StatusCode::BAD_GATEWAY);
    assert_no_session_and_flow_cleared(&set_cookies(&again));
}

#[tokio::test]
async fn callback_without_an_id_token_is_502_and_mentions_openid() {
    let sso = sso(true).await;
    sso.provider.set(Behaviour::NoIdToken);
    let started = sso.start().await;
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::BAD_GATEWAY);
    assert_no_session_and_flow_cleared(&set_cookies(&answer));
    let text = answer.text().await.unwrap();
    assert!(text.contains("openid"), "{text}");
}

#[tokio::test]
async fn callback_with_an_id_token_that_does_not_verify_is_403() {
    let sso = sso(true).await;
    for behaviour in [
        Behaviour::BadSignature,
        Behaviour::WrongAudience,
        Behaviour::Expired,
        Behaviour::WrongIssuer,
        Behaviour::WrongNonce,
    ] {
        sso.provider.set(behaviour);
        let started = sso.start().await;
        let answer = sso.callback(&started.back, &started.cookie_header()).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{behaviour:?}");
        assert_no_session_and_flow_cleared(&set_cookies(&answer));
        let text = answer.text().await.unwrap();
        assert!(
            text.contains("ID token was not accepted"),
            "{behaviour:?}: {text}"
        );
    }
}

#[tokio::test]
async fn a_provider_rotating_its_keys_is_followed_at_most_once_a_minute() {
    let sso = sso(true).await;
    let discoveries = |sso: &Sso| {
        sso.provider
            .served()
            .iter()
            .filter(|(r, _)| r.path == "/.well-known/openid-configuration")
            .count()
    };
    assert_eq!(discoveries(&sso), 1);
    // Signed by a key the server has not seen: it discovers the provider again.
    sso.provider.rotate();
    let started = sso.start().await;
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(discoveries(&sso), 2);
    // Once a minute at most: a second rotation within it is refused, and costs the
    // provider nothing.
    sso.provider.rotate();
    let started = sso.start().await;
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    assert_no_session_and_flow_cleared(&set_cookies(&answer));
    assert_eq!(discoveries(&sso), 2);
}

#[tokio::test]
async fn logout_clears_the_session_and_is_post_only() {
    let sso = sso(true).await;
    let answer = sso
        .http
        .post(format!("{}/auth/logout", sso.base))
        .header(reqwest::header::COOKIE, "hecate_session=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        set_cookies(&answer),
        vec!["hecate_session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax".to_string()]
    );
    let get = sso
        .http
        .get(format!("{}/auth/logout", sso.base))
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(set_cookies(&get).is_empty());
}

#[tokio::test]
async fn the_insecure_cookie_flag_drops_secure_and_nothing_else() {
    let sso = sso(false).await;
    let started = sso.start().await;
    for cookie in &started.cookies {
        assert!(
            cookie.ends_with("; Path=/; Max-Age=600; HttpOnly; SameSite=Lax"),
            "{cookie}"
        );
    }
    let answer = sso.callback(&started.back, &started.cookie_header()).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    for cookie in set_cookies(&answer) {
        assert!(!cookie.contains("Secure"), "{cookie}");
        assert!(cookie.ends_with("; HttpOnly; SameSite=Lax"), "{cookie}");
    }
}

/// `/auth/config` is answered with a provider and without one: the UI asks it on every
/// sign-in page and must never meet a 404.
#[tokio::test]
async fn the_ui_learns_where_sign_in_starts() {
    let sso = sso(true).await;
    // The server as it runs with a provider: its routes and the provider's.
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let nowhere = hecate_api::AppState::new(client, vec![]);
    for (signs_in, expected) in [
        (
            true,
            serde_json::json!({"oidc": true, "login": "/auth/login", "logout": "/auth/logout"}),
        ),
        (false, serde_json::json!({"oidc": false})),
    ] {
        let state = if signs_in {
            nowhere.clone().with_oidc_sign_in()
        } else {
            nowhere.clone()
        };
        let app = hecate_api::router(state);
        let app = if signs_in {
            let provider = &sso.provider;
            let oidc = Oidc::discover(
                &settings(provider, &sso.base, true),
                &[provider.ca_pem().as_bytes().to_vec()],
            )
            .await
            .unwrap();
            Arc::new(oidc).router().merge(app)
        } else {
            app
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let answer = sso
            .http
            .get(format!("{base}/auth/config"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(
            serde_json::from_str::<Value>(&answer.text().await.unwrap()).unwrap(),
            expected
        );
    }
}

#[tokio::test]
async fn discovery_failure_stops_start_up() {
    let provider = Provider::start(User::new("ada@example.com", &[])).await;
    let base = "http://127.0.0.1:1";
    // The provider's CA not trusted.
    let error = Oidc::discover(&settings(&provider, base, true), &[])
        .await
        .unwrap_err();
    assert!(format!("{error:#}").contains("discovering"), "{error:#}");
    // Nothing listening there.
    let nowhere = Settings {
        issuer: "https://127.0.0.1:1".into(),
        ..settings(&provider, base, true)
    };
    let error = Oidc::discover(&nowhere, &[provider.ca_pem().as_bytes().to_vec()])
        .await
        .unwrap_err();
    assert!(format!("{error:#}").contains("discovering"), "{error:#}");
    // An issuer whose document names another issuer.
    let impostor = Settings {
        issuer: format!("{}/", provider.issuer().replace("127.0.0.1", "localhost")),
        ..settings(&provider, base, true)
    };
    let error = Oidc::discover(&impostor, &[provider.ca_pem().as_bytes().to_vec()])
        .await
        .unwrap_err();
    assert!(format!("{error:#}").contains("discovering"), "{error:#}");
}

#[test]
fn flags_name_what_is_missing() {
    use clap::Parser as _;
    let parse = |line: &[&str]| {
        hecate_api::Args::try_parse_from(std::iter::once("hecate-api").chain(line.iter().copied()))
            .unwrap()
            .oidc
    };
    // No issuer: no browser sign-in, whatever else is given.
    assert_eq!(
        parse(&["--oidc-client-id=hecate"]).settings(None).unwrap(),
        None
    );
    let error = parse(&["--oidc-issuer=https://id.example"])
        .settings(None)
        .unwrap_err();
    assert!(error.to_string().contains("--oidc-client-id"), "{error}");
    let error = parse(&[
        "--oidc-issuer=https://id.example",
        "--oidc-client-id=hecate",
    ])
    .settings(None)
    .unwrap_err();
    assert!(error.to_string().contains("--oidc-redirect-url"), "{error}");
    let full = parse(&[
        "--oidc-issuer=https://id.example",
        "--oidc-client-id=hecate",
        "--oidc-redirect-url=https://hecate.example/auth/callback",
    ]);
    assert_eq!(
        full.settings(Some("s3cret".into())).unwrap(),
        Some(Settings {
            issuer: "https://id.example".into(),
            client_id: "hecate".into(),
            client_secret: Some("s3cret".into()),
            redirect_url: "https://hecate.example/auth/callback".into(),
            scopes: vec!["profile".into(), "email".into(), "groups".into()],
            secure_cookie: true,
        })
    );
    // Scopes: blanks and `openid` (always asked for) dropped; the insecure cookie.
    let scoped = OidcArgs {
        scopes: vec![" openid".into(), "".into(), "email ".into(), "email".into()],
        insecure_cookie: true,
        ..full.clone()
    };
    let settings = scoped.settings(Some(" ".into())).unwrap().unwrap();
    assert_eq!(settings.scopes, vec!["email".to_string()]);
    assert!(!settings.secure_cookie);
    assert_eq!(settings.client_secret, None);
}
