//! A loopback OpenID Connect provider, served over HTTPS with a CA of its own
//! ([`crate::https`]): discovery, the signing keys (JWKS), an authorization endpoint
//! that signs the test's user in at once, and a token endpoint that checks PKCE and
//! issues RS256-signed ID tokens. What it does wrong on purpose is set per test
//! ([`Behaviour`]), for the failures a relying party must handle.
//!
//! ```no_run
//! # async fn example() {
//! use hecate_testenv::oidc::{Provider, User};
//! let provider = Provider::start(User::new("ada@example.com", &["hecate-admins"])).await;
//! let issuer = provider.issuer(); // https://127.0.0.1:<port>
//! let ca = provider.ca_pem(); // what a relying party trusts it with
//! # }
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::https::{Https, Reply, Request};

/// The key IDs of the provider's two signing keys: it signs with the first until
/// [`Provider::rotate`].
pub const KEY_IDS: [&str; 2] = ["hecate-test-1", "hecate-test-2"];

/// A fixed 2048-bit RSA test key (PKCS#8): ring signs with RSA but cannot make RSA
/// keys, and tests need none of their own.
const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDSjVL350O6yMZE
uYPh0EXsWdwf7srXjO+i/zOAyITzBvxNRHrDnEpOMtqlSAnqQtX26qciz2YIkzG2
/B8L8G7mGnYwDFeafQyxWMNHIoy83Rk1C87Og5RyTvQIM0iaZuh74NedaqK862Le
8PUnRlBYMFsBkZav5BdEF/R4P7F88RklOl2LnX0P/T9VnJXiKYh7rQUK7tOtaJad
eFP0BbkLKAuycpQmv8XW9lGIseW5DZfYBnEDPHszMkzoS/ZPjPl9stWWR42ycTHu
etn+dhFupjrKRQP/fixFn4W3+StwdPG296kdSYObMv28UzuiNRZXP+NlxPDisc2t
P4WuDj+5AgMBAAECggEAGe+wvbruO+8JhWO43DM0udWj6QcYU48X4eM/6+hHgExm
/fmmibwR5yoahuul1QagpsbnCcG0lu/S2vCZvnXCo3O1BVwv2mb3Dk2Z2IRoA8fU
mBU5R3Ur7xzMsMnocqSklMXwqYJ+Q3lXd5EFEe52bTafr0TI5CfbudadlcZ6zaII
EqZ8V0RY5XCeQtoPxteXNYUhYOf8k6g1uDLxTux2P27Wcq74uJhnfQntKqK5ybkb
VPsZ4w/kzlulE2Ft4Aa4eIwK0TmE4YPCbHiVevOnwQxrt3nNgpHdrYCN6WCWchBd
ijdFD+ldyBl+rdBe24stRDx9BhzqwsTAWytDOoaaRQKBgQD6iKuaC1ONO69l/HT0
Asb2HJ+eQRbQP1PD1WM/RDe+VwEj6lwVGFs9FxDjtFo49JFUnq0IFRV5mi+pHkYB
0JKLy3HoSfbwQGx0Qp2YTD95Y12yeoILso1vYvwaS0qUg5poXYpm0heZ1O/LxDCT
liF+WFRUDb+Aqz6Ye4hgbv844wKBgQDXJVb0BrhZHYoTtm/xwTdxlDhnhEJS6H29
70mT2cPbsa0Dcs3+Mqpr+Ve9R0wGDOp0kCCm615orlZXlnIcqLDH11a7eOOvhPYP
kpc1mO+CC9k8TfAH/EnOH80CyBaCzMzZn0qXJUmEAA/tFX9zwlEF9Ibe0sZmzvqb
t5wdjB7zswKBgQDq7Ols454PW55XlendPhVvhtuuO/62fAuCIUCVfNSAqXkqQoLi
TRqRKGXv/5hyu/LjVH+QiqS+iHSUswyWewxQBg/j8CecleydADJjM2x52VFtIS98
5It3nWwlA+EFbnqFzuEPFYaH+4J4opmiay8xGIbK4rFmaC2kMoJpWuv8XQKBgHRa
UktI8xvm2MzOZn41Q3nech6xrXjPGWnF5mHabIz86xepV/Q4jGg2ghfwXhILnCSL
6cy8D+PHHRTjXTVYmbqKH/LlbyV2X+iOG861thn7tHFjqQN4kqWyFxqBAYOdpM+w
0RMq7DZCHlrWvIXrOgxhcStCjF//YhMi2oA0Tmz3AoGAEN08xa5MTzcQcEM9JT3j
wK7Mj1KO+25yy2ks4HWayOG3sWmAvwTpZN6Z6kc+hhtu6BxCNzLzEvNaeZqxp0l4
kmMgZHxlDHAPKNUguiamijC5pepn9TRaRdr7Y01dq2ADY7fu3Txh337E2b0Uyz2N
0StyrYhmT5GLECDDTKokIFM=
-----END PRIVATE KEY-----";

/// The key it rotates to, made as the first.
const TEST_KEY_2: &str = "-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCzqG7wO+j/0s7w
sE/Btum5FMgwbpMs0zdC/xMZcZzqmXUxhdSJ3WyRAYaSbFwsKQ9oZW+eSQ8tO+vS
kuVawNDZXZYdssHpBfG408RALYRmR5q/2Tmx14uU9XDRtW+DdAiXfkp410cnisAv
y6/tlZJZStDQPXSWp5dQrplQifXu1CMbdbqFST1BuyjTy8+QRlieSxjx8MX5x6/m
reWHSkDq9LfzUQMhkZAzIfN5CVHtTfIJtbOxK5d9qU/GoOHzb4F5cFeajFkOWt1k
VypbRkhGlvtoK2H23CXuZCPHw/8v8gUwzOy+YVbVOQBe5xwPTx9ln17fnRROXtyQ
Rd9nR+37AgMBAAECggEABpLdLFEk32d5RvlMkcv9lVYbVRpWrEc2OG9Y5Y9wrGzd
CujYtAq0FEI4CFeKr9r4w1si0Gnf8knFATl6xu1TNwDjo0aNLdeX1ql4/tgrhgqM
sQRjxgwbAWJRtHqtD+RJBDIMy4slAV9kVNthHpJgfn/sUBJPl8ueD8ezuGyz4P82
aHFymIqu28ENph0Vblrifm204PW2SVqOcGP8uB0B0j/t1VWUw0vwMsYR8hjE/tAS
EVe9bDRSedQGPMBu/SOBLnvqThpkqBrClUwwOO7lDLWVIJgi+lDprBcFk0eoljbh
0VzgQcTOl4Qqrv1gMrb7Dnvl3tgu4mogcM6ehxAsMQKBgQDj7V2uDqJ2PYVAuEoo
0Y535iqaZHKQ07eeX5eZAcOF/mT+0p30iycbY3/ByFJs2QSfF+XQpVQCnmQqlFL3
FZRfmex5j7fFsTx8YTsIrL0q6/u6AmIWAEjMhuYoQq/1MMtB2IzGy/JLjaJoU4Ro
4oakQzUlGbLKbt64nYb8y3CBNwKBgQDJyR5X1YcHPJZDlEaOrZqJQMCzpVfbJYu2
ry6FTgrmj0idcy1jeKm1pHnDgCvITMDL2sX70ctWuWzZ9Sskj3HWSpSmhwT2KpQp
64qRcSN8MfjKc/TmEeqtNQeE/SdE8HnQxRE3Ytcy9U4xONtro5VDQGsKuKv443MG
YkyDoVFrXQKBgQDIDIEJkRy0rOB04otscikaQTEpW3pWdQyXe41CJRMoWxTnt5Id
nbjQSC9MtPbrRDrTLBVwYHtw5PZDjPWYmh8lHaM5OpPwdtQA0xIOVhaeQospQog2
iT9cDBacRZPMn2v2ugstPLnH6GMgMBVqPVAxgi92Ba0wEcl3vgNJg4GWVwKBgFMF
YGqa+9dKYjijxPPnEXHvJlnDaYZMyFL9eJJ4LZv2z9WYEdCfUJPffAmnrlvW2GwH
MvYMtzCTUenLKVj9e8TDIq3xV2VA13z34Cc++W6b0NTbKKOQM5HYA6P/1CxVFImE
yzSSgiABNY6i6gQ7Zaop0uCyYm8gha7WusxdjvYxAoGAbHeijSyDa6VY0/PTG4R7
FrTIbKPcLd6F+7lG9N/zRe0+jtBc6wf2RZTjVk4K9t8dNlsG6+4628dx9zrAm05A
XiHvTIfbLovVTlseMhKLyj5ZPof5uln6rdsg4aFAT39M5Y+MTHSzhdehKFR7tzNr
JdVjKRhmlCFPP68LZKQRoO8=
-----END PRIVATE KEY-----";

/// Who the authorization endpoint signs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The `email` claim (also `preferred_username`); the `sub` is derived from it.
    pub email: String,
    /// The `groups` claim.
    pub groups: Vec<String>,
}

impl User {
    /// A user with this e-mail address and these groups.
    pub fn new(email: &str, groups: &[&str]) -> Self {
        Self {
            email: email.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }
}

/// What the provider does wrong on purpose; the default is nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Behaviour {
    /// Everything as it should be.
    #[default]
    Correct,
    /// The authorization endpoint sends the browser back with `error=access_denied`.
    Deny,
    /// The token endpoint refuses every code (`400 invalid_grant`).
    RefuseCodes,
    /// The token endpoint answers without an `id_token`.
    NoIdToken,
    /// ID tokens carry a signature that does not verify.
    BadSignature,
    /// ID tokens are for another audience.
    WrongAudience,
    /// ID tokens expired an hour ago.
    Expired,
    /// ID tokens name another issuer.
    WrongIssuer,
    /// ID tokens carry another nonce than the one asked for.
    WrongNonce,
}

/// A code the authorization endpoint issued, and what it was issued for.
struct Grant {
    client_id: String,
    redirect_uri: String,
    nonce: Option<String>,
    challenge: String,
}

struct Shared {
    issuer: OnceLock<String>,
    user: User,
    /// The signing keys with their public halves as JWKs.
    keys: Vec<(RsaKeyPair, Value)>,
    /// Which key signs, and is the only one published.
    current: std::sync::atomic::AtomicUsize,
    behaviour: Mutex<Behaviour>,
    codes: Mutex<HashMap<String, Grant>>,
    counter: AtomicU64,
}

/// A running provider; it stops when dropped.
pub struct Provider {
    https: Https,
    shared: Arc<Shared>,
}

impl Provider {
    /// Starts a provider on a free loopback port that signs `user` in.
    ///
    /// # Panics
    ///
    /// When the test key does not load or no port can be bound.
    pub async fn start(user: User) -> Self {
        let keys = [TEST_KEY, TEST_KEY_2]
            .iter()
            .zip(KEY_IDS)
            .map(|(pem, kid)| load(pem, kid))
            .collect();
        let shared = Arc::new(Shared {
            issuer: OnceLock::new(),
            user,
            keys,
            current: std::sync::atomic::AtomicUsize::new(0),
            behaviour: Mutex::new(Behaviour::Correct),
            codes: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
        });
        let handler = shared.clone();
        let https = Https::start(move |request| handler.answer(request)).await;
        let _ = shared.issuer.set(https.url(""));
        Self { https, shared }
    }

    /// The issuer URL, `https://127.0.0.1:<port>` (no trailing slash).
    pub fn issuer(&self) -> String {
        self.https.url("")
    }

    /// The CA certificate (PEM) a relying party trusts the provider with.
    pub fn ca_pem(&self) -> &str {
        self.https.ca_pem()
    }

    /// Rotates the signing key: from now on ID tokens are signed with the other key,
    /// and only it is published (tokens signed before no longer verify).
    pub fn rotate(&self) {
        self.shared.current.fetch_xor(1, Ordering::SeqCst);
    }

    /// From now on, do this wrong (or nothing: [`Behaviour::Correct`]).
    pub fn set(&self, behaviour: Behaviour) {
        if let Ok(mut current) = self.shared.behaviour.lock() {
            *current = behaviour;
        }
    }

    /// The requests answered so far, oldest first, with the status each got.
    pub fn served(&self) -> Vec<(Request, u16)> {
        self.https.served()
    }

    /// A correctly signed ID token for `audience`, valid for `lifetime` seconds.
    pub fn id_token(&self, audience: &str, nonce: Option<&str>, lifetime: i64) -> String {
        self.shared
            .sign(&self.shared.claims(audience, nonce, lifetime, None))
    }
}

impl Shared {
    fn issuer(&self) -> String {
        self.issuer.get().cloned().unwrap_or_default()
    }

    fn key(&self) -> &(RsaKeyPair, Value) {
        &self.keys[self.current.load(Ordering::SeqCst) % self.keys.len()]
    }

    fn behaviour(&self) -> Behaviour {
        self.behaviour.lock().map(|b| *b).unwrap_or_default()
    }

    fn answer(&self, request: &Request) -> Reply {
        let (path, query) = request
            .path
            .split_once('?')
            .unwrap_or((request.path.as_str(), ""));
        match (request.method.as_str(), path) {
            ("GET", "/.well-known/openid-configuration") => self.discovery(),
            ("GET", "/keys") => json_reply(200, &json!({"keys": [self.key().1]})),
            ("GET", "/authorize") => self.authorize(&pairs(query)),
            ("POST", "/token") => self.token(&pairs(&String::from_utf8_lossy(&request.body))),
            _ => Reply::status(404),
        }
    }

    fn discovery(&self) -> Reply {
        let issuer = self.issuer();
        json_reply(
            200,
            &json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/keys"),
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "profile", "email", "groups"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                "code_challenge_methods_supported": ["S256"],
                "claims_supported": ["sub", "email", "groups", "preferred_username"],
            }),
        )
    }

    /// Signs the user in at once and sends the browser back with a code.
    fn authorize(&self, query: &HashMap<String, String>) -> Reply {
        let get = |name: &str| query.get(name).cloned().unwrap_or_default();
        let Ok(mut back) = reqwest::Url::parse(&get("redirect_uri")) else {
            return Reply::status(400);
        };
        if get("response_type") != "code"
            || get("code_challenge_method") != "S256"
            || get("code_challenge").is_empty()
            || !get("scope").split(' ').any(|s| s == "openid")
        {
            return Reply::status(400);
        }
        if self.behaviour() == Behaviour::Deny {
            back.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", "the user said no")
                .append_pair("state", &get("state"));
            return Reply::status(302).header("location", back.as_str());
        }
        let code = format!("code-{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1);
        if let Ok(mut codes) = self.codes.lock() {
            codes.insert(
                code.clone(),
                Grant {
                    client_id: get("client_id"),
                    redirect_uri: get("redirect_uri"),
                    nonce: query.get("nonce").cloned(),
                    challenge: get("code_challenge"),
                },
            );
        }
        back.query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &get("state"));
        Reply::status(302).header("location", back.as_str())
    }

    /// Exchanges a code (once, with the PKCE verifier it was issued for) for tokens.
    fn token(&self, form: &HashMap<String, String>) -> Reply {
        let refuse = |why: &str| {
            json_reply(
                400,
                &json!({"error": "invalid_grant", "error_description": why}),
            )
        };
        let behaviour = self.behaviour();
        if behaviour == Behaviour::RefuseCodes {
            return refuse("this provider refuses every code today");
        }
        if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
            return json_reply(400, &json!({"error": "unsupported_grant_type"}));
        }
        let grant = form
            .get("code")
            .and_then(|code| self.codes.lock().ok()?.remove(code));
        let Some(grant) = grant else {
            return refuse("unknown or used code");
        };
        if form.get("redirect_uri") != Some(&grant.redirect_uri) {
            return refuse("the redirect URI differs");
        }
        let verifier = form.get("code_verifier").cloned().unwrap_or_default();
        if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != grant.challenge {
            return refuse("the PKCE verifier does not match");
        }
        let mut answer = json!({
            "access_token": format!("access-{}", self.counter.fetch_add(1, Ordering::Relaxed)),
            "token_type": "Bearer",
            "expires_in": 3600,
        });
        if behaviour != Behaviour::NoIdToken {
            let claims = self.claims(
                &grant.client_id,
                grant.nonce.as_deref(),
                3600,
                Some(behaviour),
            );
            let token = self.signed(&claims, behaviour == Behaviour::BadSignature);
            answer["id_token"] = Value::String(token);
        }
        json_reply(200, &answer)
    }

    fn claims(
        &self,
        audience: &str,
        nonce: Option<&str>,
        lifetime: i64,
        behaviour: Option<Behaviour>,
    ) -> Value {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or_default();
        let (iat, exp) = match behaviour {
            Some(Behaviour::Expired) => (now - 7200, now - 3600),
            _ => (now, now + lifetime),
        };
        let issuer = match behaviour {
            Some(Behaviour::WrongIssuer) => "https://impostor.example".to_string(),
            _ => self.issuer(),
        };
        let audience = match behaviour {
            Some(Behaviour::WrongAudience) => "someone-else",
            _ => audience,
        };
        let mut claims = json!({
            "iss": issuer,
            "sub": format!("user-{}", hex::encode(&Sha256::digest(self.user.email.as_bytes())[..8])),
            "aud": audience,
            "iat": iat,
            "exp": exp,
            "email": self.user.email,
            "email_verified": true,
            "preferred_username": self.user.email,
            "groups": self.user.groups,
        });
        match (behaviour, nonce) {
            (Some(Behaviour::WrongNonce), _) => claims["nonce"] = json!("not-the-one-asked-for"),
            (_, Some(nonce)) => claims["nonce"] = json!(nonce),
            _ => {}
        }
        claims
    }

    /// `claims` as a compact JWS, RS256 with the test key.
    fn sign(&self, claims: &Value) -> String {
        self.signed(claims, false)
    }

    /// The same; `corrupt`: with one bit of the signature flipped (well-formed, and
    /// not the key's).
    fn signed(&self, claims: &Value, corrupt: bool) -> String {
        let (key, jwk) = self.key();
        let header = json!({"alg": "RS256", "typ": "JWT", "kid": jwk["kid"]});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut signature = vec![0; key.public().modulus_len()];
        key.sign(
            &RSA_PKCS1_SHA256,
            &SystemRandom::new(),
            input.as_bytes(),
            &mut signature,
        )
        .expect("RS256 signing");
        if corrupt && let Some(byte) = signature.get_mut(17) {
            *byte ^= 1;
        }
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

/// A PKCS#8 PEM key and its JWK as `kid`.
fn load(pem: &str, kid: &str) -> (RsaKeyPair, Value) {
    let der = STANDARD
        .decode(
            pem.lines()
                .filter(|line| !line.starts_with("-----"))
                .collect::<String>(),
        )
        .expect("the test key is base64");
    let key = RsaKeyPair::from_pkcs8(&der).expect("the test key is an RSA key");
    let (n, e) = rsa_public(key.public().as_ref()).expect("an RSA public key");
    let jwk = json!({
        "kty": "RSA",
        "use": "sig",
        "alg": "RS256",
        "kid": kid,
        "n": URL_SAFE_NO_PAD.encode(n),
        "e": URL_SAFE_NO_PAD.encode(e),
    });
    (key, jwk)
}

fn json_reply(status: u16, body: &Value) -> Reply {
    Reply {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("cache-control".into(), "no-store".into()),
        ],
        body: body.to_string().into_bytes(),
    }
}

/// A query string's or form body's pairs, decoded (the last of a name wins).
fn pairs(encoded: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{encoded}"))
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// The modulus and exponent of a DER `RSAPublicKey` (PKCS#1), big-endian, without
/// leading zeros.
fn rsa_public(der: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&found, rest) = input.split_first()?;
        if found != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (length, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let count = usize::from(first & 0x7f);
            let (bytes, rest) = (rest.get(..count)?, rest.get(count..)?);
            (
                bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b)),
                rest,
            )
        };
        Some((rest.get(..length)?, rest.get(length..)?))
    }
    let strip = |int: &[u8]| {
        let start = int.iter().position(|b| *b != 0).unwrap_or(int.len());
        int[start..].to_vec()
    };
    let (sequence, _) = element(der, 0x30)?;
    let (n, rest) = element(sequence, 0x02)?;
    let (e, _) = element(rest, 0x02)?;
    Some((strip(n), strip(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_keys_give_2048_bit_moduli_and_the_usual_exponent() {
        for (pem, kid) in [TEST_KEY, TEST_KEY_2].into_iter().zip(KEY_IDS) {
            let (_, jwk) = load(pem, kid);
            assert_eq!(jwk["kid"], kid);
            assert_eq!(jwk["e"], "AQAB");
            let n = URL_SAFE_NO_PAD
                .decode(jwk["n"].as_str().unwrap_or_default())
                .unwrap_or_default();
            assert_eq!(n.len(), 256);
        }
        let der = STANDARD
            .decode(
                TEST_KEY
                    .lines()
                    .filter(|l| !l.starts_with("-----"))
                    .collect::<String>(),
            )
            .unwrap_or_default();
        let key = RsaKeyPair::from_pkcs8(&der).map_err(|e| e.to_string());
        let Ok(key) = key else {
            panic!("{key:?}");
        };
        let (n, e) = rsa_public(key.public().as_ref()).unwrap_or_default();
        assert_eq!(n.len(), 256);
        assert_eq!(e, vec![1, 0, 1]);
    }
}
