// The bearer token lives in sessionStorage: this tab only, gone when it closes, never
// in a cookie (so no request is authenticated without the page asking for it).

const KEY = "hecate.token";

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
  } catch {
    // Storage disabled: there was nothing to forget.
  }
}
