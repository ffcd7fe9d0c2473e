//! Browser sign-in with OpenID Connect (surfaces §2.5, OIDC mode).
//!
//! It adds no identity model: the ID token the provider issues **is** the Kubernetes
//! bearer token. The cluster's kube-apiserver must trust the same issuer and client
//! ID (`--oidc-issuer-url`, `--oidc-client-id`); the server keeps the token in the
//! `hecate_session` cookie, which [`crate::auth`] already reads, and every request is
//! then reviewed by the cluster as any other.
//!
//! - discovery runs before the server listens ([`Oidc::discover`]): a bad issuer
//!   stops start-up;
//! - `GET /auth/login`: a state and a PKCE verifier (32 random bytes each,
//!   base64url) in short-lived cookies, then 302 to the provider with the S256
//!   challenge; the state is also the ID token's nonce;
//! - `GET /auth/callback`: the state checked against its cookie, the code exchanged
//!   with the verifier, the ID token verified by `openidconnect` (signature against
//!   the provider's keys, issuer, audience = client ID, expiry, nonce), then the
//!   session cookie for as long as the token lives;
//! - `POST /auth/logout`: the session cookie cleared;
//! - `GET /auth/config` (the UI's routes answer it, with or without a provider:
//!   [`config`]): tells the web UI that sign-in goes through the provider.
//!
//! Every cookie is `Path=/; HttpOnly; SameSite=Lax`, and `Secure` unless
//! `--oidc-insecure-cookie`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, post};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse as _, reqwest,
};

use crate::auth::SESSION_COOKIE;

/// The cookie holding a sign-in's state between login and callback.
pub const STATE_COOKIE: &str = "hecate_oidc_state";
/// The cookie holding a sign-in's PKCE verifier between login and callback.
pub const VERIFIER_COOKIE: &str = "hecate_oidc_verifier";
/// Seconds a sign-in may take between login and callback.
const FLOW_SECONDS: u64 = 600;
/// How long a request to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(30);
/// The least time between two discoveries after start-up (a provider rotating its
/// signing keys is followed; a stream of forged tokens cannot make us hammer it).
const REDISCOVER_EVERY: Duration = Duration::from_secs(60);

/// The OIDC flags of `hecate-api`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OidcArgs {
    /// Sign browsers in with this OpenID Connect issuer (the cluster must trust the
    /// same issuer and client ID). The client secret comes from
    /// $HECATE_OIDC_CLIENT_SECRET only.
    #[arg(long = "oidc-issuer", env = "HECATE_OIDC_ISSUER", value_name = "URL")]
    pub issuer: Option<String>,
    /// The client ID registered with the issuer.
    #[arg(
        long = "oidc-client-id",
        env = "HECATE_OIDC_CLIENT_ID",
        value_name = "ID"
    )]
    pub client_id: Option<String>,
    /// This server's public URL followed by /auth/callback.
    #[arg(
        long = "oidc-redirect-url",
        env = "HECATE_OIDC_REDIRECT_URL",
        value_name = "URL"
    )]
    pub redirect_url: Option<String>,
    /// Scopes to ask for besides `openid`, comma-separated.
    #[arg(
        long = "oidc-scopes",
        env = "HECATE_OIDC_SCOPES",
        value_delimiter = ',',
        default_value = "profile,email,groups",
        value_name = "SCOPES"
    )]
    pub scopes: Vec<String>,
    /// Leave `Secure` off the cookies, for local development over plain HTTP.
    #[arg(long = "oidc-insecure-cookie")]
    pub insecure_cookie: bool,
}

/// Browser sign-in, as configured: what discovery needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The issuer URL.
    pub issuer: String,
    /// The client ID.
    pub client_id: String,
    /// The client secret; none for a public client.
    pub client_secret: Option<String>,
    /// Where the provider sends the browser back.
    pub redirect_url: String,
    /// The scopes besides `openid`.
    pub scopes: Vec<String>,
    /// Whether cookies carry `Secure`.
    pub secure_cookie: bool,
}

impl OidcArgs {
    /// The settings these flags ask for (`None`: no issuer, no browser sign-in), with
    /// the client secret from the environment.
    pub fn settings(&self, client_secret: Option<String>) -> anyhow::Result<Option<Settings>> {
        let given = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let Some(issuer) = given(&self.issuer) else {
            return Ok(None);
        };
        let client_id = given(&self.client_id)
            .context("--oidc-client-id (HECATE_OIDC_CLIENT_ID) is required with --oidc-issuer")?;
        let redirect_url = given(&self.redirect_url).context(
            "--oidc-redirect-url (HECATE_OIDC_REDIRECT_URL) is required with --oidc-issuer: \
             this server's public URL followed by /auth/callback",
        )?;
        let mut scopes: Vec<String> = Vec::new();
        for scope in self.scopes.iter().map(|s| s.trim()) {
            if !scope.is_empty() && scope != "openid" && !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_string());
            }
        }
        Ok(Some(Settings {
            issuer,
            client_id,
            client_secret: client_secret.filter(|s| !s.trim().is_empty()),
            redirect_url,
            scopes,
            secure_cookie: !self.insecure_cookie,
        }))
    }
}

/// The client after discovery: authorization and token endpoints known.
type Provider = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
    EndpointMaybeSet,
>;

/// A discovered provider, ready to sign browsers in.
pub struct Oidc {
    /// The client as last discovered: replaced when the provider's keys change.
    client: std::sync::RwLock<Arc<Provider>>,
    settings: Settings,
    http: reqwest::Client,
    /// When discovery last ran again: it does, on a token signed by an unknown key,
    /// at most once per [`REDISCOVER_EVERY`].
    discovered: tokio::sync::Mutex<std::time::Instant>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.settings.issuer)
            .field("client_id", &self.settings.client_id)
            .field("scopes", &self.settings.scopes)
            .field("secure", &self.settings.secure_cookie)
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// Discovers the issuer (its configuration document and signing keys); the
    /// provider is reached trusting the web's CAs and `roots` (PEM certificates).
    pub async fn discover(settings: &Settings, roots: &[Vec<u8>]) -> anyhow::Result<Self> {
        let mut http = reqwest::Client::builder()
            // Following redirects would let the provider's answers steer our requests.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT);
        for pem in roots {
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .context("reading the CA certificates to trust the OIDC issuer with")?
            {
                http = http.add_root_certificate(cert);
            }
        }
        let http = http.build().context("making an HTTP client")?;
        let client = Self::client(settings, &http).await?;
        Ok(Self {
            client: std::sync::RwLock::new(Arc::new(client)),
            settings: settings.clone(),
            http,
            // The first token signed by an unknown key may look again at once.
            discovered: tokio::sync::Mutex::new(
                std::time::Instant::now()
                    .checked_sub(REDISCOVER_EVERY)
                    .unwrap_or_else(std::time::Instant::now),
            ),
        })
    }

    /// Discovery: the provider's configuration and signing keys, as a client.
    async fn client(settings: &Settings, http: &reqwest::Client) -> anyhow::Result<Provider> {
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .with_context(|| format!("the OIDC issuer {:?} is not a URL", settings.issuer))?;
        let redirect = RedirectUrl::new(settings.redirect_url.clone()).with_context(|| {
            format!(
                "the OIDC redirect URL {:?} is not a URL",
                settings.redirect_url
            )
        })?;
        let metadata = CoreProviderMetadata::discover_async(issuer, http)
            .await
            .map_err(|e| anyhow::anyhow!(hecate_types::error_chain(&e)))
            .with_context(|| format!("discovering the OIDC issuer {}", settings.issuer))?;
        let token = metadata.token_endpoint().cloned().with_context(|| {
            format!(
                "discovering the OIDC issuer {}: it names no token endpoint",
                settings.issuer
            )
        })?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(settings.client_id.clone()),
            settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect)
        .set_token_uri(token))
    }

    /// The client as last discovered.
    fn current(&self) -> Arc<Provider> {
        match self.client.read() {
            Ok(client) => client.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Discovers the provider again — its signing keys may have rotated — unless that
    /// was done less than [`REDISCOVER_EVERY`] ago; the new client, if there is one.
    async fn rediscover(&self) -> Option<Arc<Provider>> {
        let mut discovered = self.discovered.lock().await;
        if discovered.elapsed() < REDISCOVER_EVERY {
            return None;
        }
        *discovered = std::time::Instant::now();
        match Self::client(&self.settings, &self.http).await {
            Ok(client) => {
                let client = Arc::new(client);
                match self.client.write() {
                    Ok(mut current) => *current = client.clone(),
                    Err(poisoned) => *poisoned.into_inner() = client.clone(),
                }
                tracing::info!(issuer = %self.settings.issuer, "discovered the OIDC issuer again: its signing keys may have changed");
                Some(client)
            }
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "discovering the OIDC issuer again failed");
                None
            }
        }
    }

    /// The `/auth/*` routes.
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route("/auth/login", get(login))
            .route("/auth/callback", get(callback))
            .route("/auth/logout", post(logout))
            .with_state(self)
    }

    /// `name=value` with this server's cookie attributes; `max_age` 0 clears it.
    fn cookie(&self, name: &str, value: &str, max_age: u64) -> HeaderValue {
        let secure = if self.settings.secure_cookie {
            "; Secure"
        } else {
            ""
        };
        let cookie =
            format!("{name}={value}; Path=/; Max-Age={max_age}; HttpOnly{secure}; SameSite=Lax");
        // Names are ours; values are base64url or a JWT (base64url and dots).
        HeaderValue::from_str(&cookie).unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

/// A plain-text answer.
fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    let mut response = (status, format!("{}\n", text.into())).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // The provider's error words are quoted: text, never sniffed as a page.
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A 302 to `location` setting `cookies`.
fn redirect(location: &str, cookies: Vec<HeaderValue>) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for cookie in cookies {
        headers.append(header::SET_COOKIE, cookie);
    }
    response
}

/// The answer of `GET /auth/config`, for the web UI: whether sign-in goes through the
/// provider (`oidc`), and then where it starts and ends. The server answers it whether
/// or not it has a provider (`AppState::with_oidc_sign_in`), so the UI asks without
/// meeting a 404.
pub(crate) fn config(oidc: bool) -> Response {
    let answer = if oidc {
        serde_json::json!({"oidc": true, "login": "/auth/login", "logout": "/auth/logout"})
    } else {
        serde_json::json!({"oidc": false})
    };
    let mut response = axum::Json(answer).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /auth/login`: to the provider, with a fresh state and PKCE challenge.
async fn login(State(oidc): State<Arc<Oidc>>) -> Response {
    let state = CsrfToken::new_random_len(32);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let nonce = Nonce::new(state.secret().clone());
    let asked = state.clone();
    let client = oidc.current();
    let mut request = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            move || asked,
            move || nonce,
        )
        .set_pkce_challenge(challenge);
    for scope in &oidc.settings.scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    let (url, _, _) = request.url();
    redirect(
        url.as_str(),
        vec![
            oidc.cookie(STATE_COOKIE, state.secret(), FLOW_SECONDS),
            oidc.cookie(VERIFIER_COOKIE, verifier.secret(), FLOW_SECONDS),
        ],
    )
}

/// The value of cookie `name`, if sent and not empty.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

/// `GET /auth/callback`: the provider's answer, checked, made a session.
async fn callback(
    State(oidc): State<Arc<Oidc>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let params: Vec<(String, String)> = url_pairs(query.as_deref().unwrap_or_default());
    let param = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let state = cookie(&headers, STATE_COOKIE);
    let verifier = cookie(&headers, VERIFIER_COOKIE);
    let (Some(state), Some(verifier)) = (state, verifier) else {
        return plain(
            StatusCode::BAD_REQUEST,
            "this sign-in did not start here (its cookies are missing or expired): start again at /auth/login",
        );
    };
    if !param("state").is_some_and(|given| same(given, &state)) {
        return plain(
            StatusCode::BAD_REQUEST,
            "this sign-in did not start here (the state does not match): start again at /auth/login",
        );
    }
    // From here on the sign-in is over, whatever happens: its cookies go.
    let cleared = vec![
        oidc.cookie(STATE_COOKIE, "", 0),
        oidc.cookie(VERIFIER_COOKIE, "", 0),
    ];
    let fail = |status: StatusCode, text: String| {
        let mut response = plain(status, text);
        for cookie in &cleared {
            response
                .headers_mut()
                .append(header::SET_COOKIE, cookie.clone());
        }
        response
    };
    if let Some(error) = param("error") {
        let described = param("error_description")
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return fail(
            StatusCode::FORBIDDEN,
            format!("the identity provider refused the sign-in: {error}{described}"),
        );
    }
    let Some(code) = param("code").filter(|c| !c.is_empty()) else {
        return fail(
            StatusCode::BAD_REQUEST,
            "the identity provider sent no authorization code".into(),
        );
    };
    let client = oidc.current();
    let answer = client
        .exchange_code(AuthorizationCode::new(code.to_string()))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier))
        .request_async(&oidc.http)
        .await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(error = %hecate_types::error_chain(&error), "OIDC code exchange failed");
            return fail(
                StatusCode::BAD_GATEWAY,
                format!(
                    "the identity provider did not exchange the code: {}",
                    hecate_types::error_chain(&error)
                ),
            );
        }
    };
    let Some(id_token) = answer.id_token() else {
        return fail(
            StatusCode::BAD_GATEWAY,
            "the identity provider returned no ID token: is `openid` among the client's allowed scopes?".into(),
        );
    };
    let nonce = Nonce::new(state);
    let mut verified = id_token
        .claims(&client.id_token_verifier(), &nonce)
        .map(|claims| claims.expiration());
    // Signed by a key we do not know: the provider may have rotated its keys.
    if let Err(ClaimsVerificationError::SignatureVerification(_)) = verified
        && let Some(client) = oidc.rediscover().await
    {
        verified = id_token
            .claims(&client.id_token_verifier(), &nonce)
            .map(|claims| claims.expiration());
    }
    let expires = match verified {
        Ok(expires) => expires,
        Err(error) => {
            tracing::warn!(error = %hecate_types::error_chain(&error), "an OIDC ID token was refused");
            return fail(
                StatusCode::FORBIDDEN,
                format!(
                    "the ID token was not accepted: {}",
                    hecate_types::error_chain(&error)
                ),
            );
        }
    };
    let lives = expires.timestamp() - jiff::Timestamp::now().as_second();
    let mut cookies = vec![oidc.cookie(
        SESSION_COOKIE,
        &id_token.to_string(),
        u64::try_from(lives).unwrap_or(0).max(1),
    )];
    cookies.extend(cleared.iter().cloned());
    redirect("/", cookies)
}

/// `POST /auth/logout`: the session cookie cleared.
async fn logout(State(oidc): State<Arc<Oidc>>) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .append(header::SET_COOKIE, oidc.cookie(SESSION_COOKIE, "", 0));
    response
}

/// A query string's pairs, percent-decoded.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    openidconnect::url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The CAs the platform adds, as OpenSSL's variables name them: `SSL_CERT_FILE` (a
/// PEM bundle) and the PEM files in `SSL_CERT_DIR`. A private issuer is trusted this
/// way; the web's CAs always are.
pub fn platform_roots() -> Vec<Vec<u8>> {
    let mut roots = Vec::new();
    if let Some(file) = std::env::var_os("SSL_CERT_FILE")
        && let Ok(pem) = std::fs::read(file)
    {
        roots.push(pem);
    }
    if let Some(dir) = std::env::var_os("SSL_CERT_DIR")
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for entry in entries.flatten() {
            if let Ok(pem) = std::fs::read(entry.path())
                && pem.starts_with(b"-----BEGIN")
            {
                roots.push(pem);
            }
        }
    }
    roots
}
