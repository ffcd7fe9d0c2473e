// The bearer token lives in sessionStorage: this tab only, gone when it closes, never
// in a cookie (so no request is authenticated without the page asking for it).
// Signed in through the server's OIDC provider instead, the token is the server's
// HttpOnly session cookie, which the page never sees: the tab only remembers that
// it signed in that way, and then sends the cookie with its requests.

const KEY = "hecate.token";
const SSO = "hecate.sso";

/** Signed in through the identity provider (the session cookie carries the token). */
export function sso() {
  try {
    return sessionStorage.getItem(SSO) === "1";
  } catch {
    return false;
  }
}

export function useSso() {
  sessionStorage.setItem(SSO, "1");
}

/** Signed in either way. */
export function signedIn() {
  return Boolean(token()) || sso();
}

/** What `fetch` sends: the session cookie only when signed in through the provider. */
export function credentials() {
  return sso() && !token() ? "same-origin" : "omit";
}

export function token() {
  try {
    return sessionStorage.getItem(KEY) || "";
  } catch {
    return "";
  }
}

export function save(value) {
  sessionStorage.setItem(KEY, value);
}

export function forget() {
  try {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(SSO);
  } catch {
    // Storage disabled: there was nothing to forget.
  }
}
