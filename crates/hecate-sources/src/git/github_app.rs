//! GitHub App installation tokens (spec §5.2): a git user (a step, a Beacon) whose
//! Secret holds an App's private key authenticates with a token minted for the
//! installation, used as the HTTPS password of `x-access-token`; the forge steps use
//! the same token for the host's API.
//!
//! Minting is a request signed with a JSON Web Token (RS256, issued a minute in the
//! past to allow for clock skew, valid five minutes). The JWT is three base64url
//! parts and one RSA signature, made here with `ring` (already linked through kube's
//! TLS) rather than a JWT library. Tokens live an hour; [`AppTokens`] keeps them and
//! mints a new one five minutes before the old one expires.
//!
//! The time comes from a function the cache is given ([`AppTokens::new`]), the wall
//! clock by default: a token's expiry is GitHub's wall-clock time, and a test stands
//! the cache at any moment without this crate knowing the controller's `Clock`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jiff::{SignedDuration, Timestamp};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use serde_json::{Value, json};

use super::credentials::GitHubApp;
use super::{Class, Error};

/// How far in the past a JWT says it was issued (GitHub's advice against clock skew).
const ISSUED_BEFORE: SignedDuration = SignedDuration::from_secs(60);
/// How long a JWT is valid from its issue time.
const JWT_LIFETIME: SignedDuration = SignedDuration::from_secs(5 * 60);
/// A cached token is replaced this long before it expires.
const RENEW_BEFORE: SignedDuration = SignedDuration::from_secs(5 * 60);
/// How long a token request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Installation tokens, minted on demand and cached per App installation. Clones share
/// the cache.
#[derive(Clone)]
pub struct AppTokens {
    http: reqwest::Client,
    now: Arc<dyn Fn() -> Timestamp + Send + Sync>,
    cache: Arc<Mutex<HashMap<CacheKey, Minted>>>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    base_url: String,
    issuer: String,
    installation_id: String,
}

#[derive(Clone)]
struct Minted {
    token: String,
    expires_at: Timestamp,
}

impl Default for AppTokens {
    fn default() -> Self {
        Self::new(Timestamp::now)
    }
}

impl AppTokens {
    /// An empty cache that reads the time from `now`.
    pub fn new(now: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        let http = crate::tls::client_builder()
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("hecate-controller/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Self {
            http,
            now: Arc::new(now),
            cache: Arc::default(),
        }
    }

    /// A token for `app`'s installation: the cached one while it has more than five
    /// minutes left, else a new one.
    ///
    /// Failures: a key that cannot sign or an installation ID that is not a number is
    /// a [`Config`](super::Kind::Config) error; GitHub refusing the App (401, 403, 404)
    /// [`Class::Auth`]; GitHub out of reach [`Class::Unreachable`]; any other answer
    /// [`Class::Other`].
    pub async fn token(&self, app: &GitHubApp) -> Result<String, Error> {
        let key = CacheKey {
            base_url: app.base_url.clone(),
            issuer: app.issuer.clone(),
            installation_id: app.installation_id.clone(),
        };
        let now = (self.now)();
        let cached = self.lock().get(&key).cloned();
        if let Some(minted) = cached
            && now.saturating_add(RENEW_BEFORE).unwrap_or(now) < minted.expires_at
        {
            return Ok(minted.token.clone());
        }
        let minted = self.mint(app, now).await?;
        self.lock().insert(key, minted.clone());
        Ok(minted.token)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Minted>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn mint(&self, app: &GitHubApp, now: Timestamp) -> Result<Minted, Error> {
        if app.installation_id.is_empty()
            || !app.installation_id.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(Error::config(format!(
                "installationID {:?} is not a number",
                app.installation_id
            )));
        }
        let jwt = jwt(app, now).map_err(Error::config)?;
        let url = format!(
            "{}/app/installations/{}/access_tokens",
            app.base_url, app.installation_id
        );
        let response = self
            .http
            .post(&url)
            .bearer_auth(jwt)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .send()
            .await
            .map_err(|e| {
                Error::remote(
                    Class::Unreachable,
                    format!("cannot reach {} for a GitHub App token: {e}", app.base_url),
                )
            })?;
        let status = response.status();
        let body = response.bytes().await.unwrap_or_default();
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let said = answer
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let message = format!(
                "{} refused a token for installation {}: {status} {said}",
                app.base_url, app.installation_id
            );
            let message = message.trim_end().to_string();
            return Err(match status.as_u16() {
                401 | 403 | 404 => Error::remote(Class::Auth, message),
                _ => Error::remote(Class::Other, message),
            });
        }
        let token = answer.get("token").and_then(Value::as_str);
        let expires_at = answer
            .get("expires_at")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok());
        match (token, expires_at) {
            (Some(token), Some(expires_at)) if !token.is_empty() => Ok(Minted {
                token: token.to_string(),
                expires_at,
            }),
            _ => Err(Error::remote(
                Class::Other,
                format!(
                    "{} answered a token request without token and expires_at",
                    app.base_url
                ),
            )),
        }
    }
}

/// The App's JWT at `now`: `iat` a minute back, `exp` five minutes after `iat`, `iss`
/// the client ID or (as a number) the app ID.
fn jwt(app: &GitHubApp, now: Timestamp) -> Result<String, String> {
    let key = key_pair(&app.private_key)?;
    let issued = now.as_second() - ISSUED_BEFORE.as_secs();
    let issuer = match app.issuer.parse::<u64>() {
        Ok(id) => json!(id),
        Err(_) => json!(app.issuer),
    };
    let header = json!({"alg": "RS256", "typ": "JWT"});
    let claims = json!({"iat": issued, "exp": issued + JWT_LIFETIME.as_secs(), "iss": issuer});
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signed.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "privateKey cannot sign".to_string())?;
    Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

/// The RSA key in a PEM block: `RSA PRIVATE KEY` (PKCS#1, what GitHub hands out) or
/// `PRIVATE KEY` (PKCS#8).
fn key_pair(pem: &str) -> Result<RsaKeyPair, String> {
    let mut label = None;
    let mut body = String::new();
    for line in pem.lines().map(str::trim) {
        if let Some(begin) = line.strip_prefix("-----BEGIN ") {
            label = Some(begin.trim_end_matches('-').to_string());
        } else if line.starts_with("-----END ") {
            break;
        } else if label.is_some() {
            body.push_str(line);
        }
    }
    let der = STANDARD
        .decode(body.as_bytes())
        .map_err(|_| "privateKey is not a PEM block".to_string())?;
    let parsed = match label.as_deref() {
        Some("RSA PRIVATE KEY") => RsaKeyPair::from_der(&der),
        Some("PRIVATE KEY") => RsaKeyPair::from_pkcs8(&der),
        // The label is the Secret's text: not repeated.
        Some(_) => {
            return Err(
                "privateKey's PEM block is not an RSA private key (RSA PRIVATE KEY or PRIVATE KEY)"
                    .to_string(),
            );
        }
        None => return Err("privateKey is not a PEM block".to_string()),
    };
    parsed.map_err(|e| format!("privateKey is not a usable RSA key: {e}"))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::extract::{Path, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use ring::signature::{KeyPair as _, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};

    use super::*;
    use crate::git::Kind;

    /// A fresh 2048-bit RSA key in PEM, made by `openssl`: PKCS#1 (`-traditional`, what
    /// GitHub hands out) or PKCS#8.
    async fn rsa_key(pkcs1: bool) -> String {
        let mut command = tokio::process::Command::new("openssl");
        command.args(["genrsa"]);
        if pkcs1 {
            command.arg("-traditional");
        }
        let output = command.arg("2048").output().await.expect("openssl runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("PEM is text")
    }

    /// What the fake GitHub saw and answers.
    #[derive(Clone)]
    struct Github {
        public_key: Vec<u8>,
        requests: Arc<AtomicUsize>,
        refuse: bool,
        expires_at: Timestamp,
    }

    async fn access_tokens(
        State(github): State<Github>,
        Path(installation): Path<String>,
        headers: HeaderMap,
    ) -> axum::response::Response {
        github.requests.fetch_add(1, Ordering::SeqCst);
        if github.refuse {
            return (StatusCode::UNAUTHORIZED, r#"{"message":"Bad credentials"}"#).into_response();
        }
        let bearer = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        let parts: Vec<&str> = bearer.split('.').collect();
        assert_eq!(parts.len(), 3, "a JWT has three parts: {bearer}");
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("base64url");
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &github.public_key)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the JWT is signed by the App's key");
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("b64")).expect("json");
        assert_eq!(header, json!({"alg": "RS256", "typ": "JWT"}));
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("b64")).expect("json");
        assert_eq!(claims["iss"], json!(42));
        assert_eq!(
            claims["exp"].as_i64().expect("exp") - claims["iat"].as_i64().expect("iat"),
            300
        );
        assert_eq!(
            headers.get("accept").and_then(|v| v.to_str().ok()),
            Some("application/vnd.github+json")
        );
        (
            StatusCode::CREATED,
            json!({"token": format!("ghs_{installation}"), "expires_at": github.expires_at.to_string()})
                .to_string(),
        )
            .into_response()
    }

    /// A GitHub API on a loopback port that mints tokens for a key; returns its URL.
    async fn github(state: Github) -> String {
        let app = axum::Router::new()
            .route(
                "/app/installations/{installation}/access_tokens",
                axum::routing::post(access_tokens),
            )
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn app(pem: String, base_url: String) -> GitHubApp {
        GitHubApp {
            private_key: pem,
            issuer: "42".into(),
            installation_id: "7".into(),
            base_url,
        }
    }

    #[tokio::test]
    async fn tokens_are_minted_with_a_signed_jwt_and_cached_until_near_expiry() {
        for pkcs1 in [true, false] {
            let pem = rsa_key(pkcs1).await;
            let public_key = key_pair(&pem)
                .expect("a key")
                .public_key()
                .as_ref()
                .to_vec();
            let now: Timestamp = "2026-12-01T02:00:00Z".parse().expect("a time");
            let requests = Arc::new(AtomicUsize::new(0));
            let url = github(Github {
                public_key,
                requests: requests.clone(),
                refuse: false,
                expires_at: now + SignedDuration::from_hours(1),
            })
            .await;
            let clock = Arc::new(Mutex::new(now));
            let tokens = AppTokens::new({
                let clock = clock.clone();
                move || *clock.lock().unwrap()
            });
            let advance = |by: SignedDuration| {
                let mut now = clock.lock().unwrap();
                *now = now.saturating_add(by).unwrap();
            };
            let app = app(pem, url);

            assert_eq!(tokens.token(&app).await, Ok("ghs_7".to_string()));
            advance(SignedDuration::from_mins(54));
            assert_eq!(tokens.clone().token(&app).await, Ok("ghs_7".to_string()));
            assert_eq!(
                requests.load(Ordering::SeqCst),
                1,
                "the cached token is used"
            );
            advance(SignedDuration::from_mins(2));
            assert_eq!(tokens.token(&app).await, Ok("ghs_7".to_string()));
            assert_eq!(
                requests.load(Ordering::SeqCst),
                2,
                "renewed 5 minutes early"
            );
        }
    }

    #[tokio::test]
    async fn git_authenticates_with_the_installation_token() {
        use crate::git::testing::{bare_repo, http_git};
        use crate::git::{Git, GitCredentials, Scratch, apply};

        let root = tempfile::tempdir().expect("a temporary directory");
        bare_repo(root.path(), "fleet").await;
        let base = http_git(root.path(), "x-access-token", "ghs_7").await;
        let repo = format!("{base}/fleet.git");
        let pem = rsa_key(true).await;
        let api = github(Github {
            public_key: key_pair(&pem)
                .expect("a key")
                .public_key()
                .as_ref()
                .to_vec(),
            requests: Arc::default(),
            refuse: false,
            expires_at: Timestamp::now() + SignedDuration::from_hours(1),
        })
        .await;
        let work = root.path().join("w");
        let mut git = Git::new(&work).await.expect("a private area");
        let scratch = Scratch::new(&git, "git-clone").await.expect("scratch");
        let credentials = GitCredentials::GitHubApp(app(pem.clone(), api));
        apply(
            &credentials,
            &repo,
            &mut git,
            &scratch,
            &AppTokens::default(),
        )
        .await
        .expect("a token");
        let refs = git
            .run(&work, &["ls-remote", repo.as_str()])
            .await
            .expect("git is let in with the token");
        assert!(refs.contains("\trefs/heads/main\n"), "{refs}");
        // Neither the key nor the token can reach a message.
        assert_eq!(git.redact(&format!("{pem} ghs_7")), "*** ***");
    }

    #[tokio::test]
    async fn refusals_and_bad_keys_have_their_reasons() {
        let pem = rsa_key(true).await;
        let url = github(Github {
            public_key: Vec::new(),
            requests: Arc::default(),
            refuse: true,
            expires_at: Timestamp::UNIX_EPOCH,
        })
        .await;
        let tokens = AppTokens::default();

        let refused = tokens
            .token(&app(pem.clone(), url.clone()))
            .await
            .expect_err("refused");
        assert_eq!(refused.kind, Kind::Remote(Class::Auth));
        assert!(refused.message.contains("401") && refused.message.contains("Bad credentials"));

        let bad_key = tokens
            .token(&app(
                "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----".into(),
                url.clone(),
            ))
            .await
            .expect_err("no key");
        assert_eq!(bad_key.kind, Kind::Config);
        assert!(
            bad_key.message.contains("privateKey"),
            "{}",
            bad_key.message
        );

        // A PEM block's label is the Secret's text too: not repeated.
        let other = tokens
            .token(&app(
                "-----BEGIN TOPSECRET-4-----\nAAAA\n-----END TOPSECRET-4-----".into(),
                url.clone(),
            ))
            .await
            .expect_err("not RSA");
        assert_eq!(other.kind, Kind::Config);
        assert!(
            other.message.contains("not an RSA private key")
                && !other.message.contains("TOPSECRET"),
            "{}",
            other.message
        );

        let mut odd = app(pem.clone(), url);
        odd.installation_id = "7/../../x".into();
        let odd = tokens.token(&odd).await.expect_err("not a number");
        assert_eq!(odd.kind, Kind::Config);
        assert!(odd.message.contains("installationID"), "{}", odd.message);

        let nowhere = tokens
            .token(&app(pem, "http://127.0.0.1:1".into()))
            .await
            .expect_err("unreachable");
        assert_eq!(nowhere.kind, Kind::Remote(Class::Unreachable));
    }
}
