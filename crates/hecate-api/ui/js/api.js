// The API client: same origin, the bearer token in the Authorization header, JSON in
// and out. Errors carry the server's own `error` text, which pages show verbatim.

import * as session from "./session.js";

export const API = "/api/v1alpha1";

export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code || "";
  }
}

/** 401: no token, or one the cluster no longer accepts. */
export class Unauthenticated extends ApiError {
  constructor(message) {
    super(401, message || "authentication required");
    this.name = "Unauthenticated";
  }
}

let onUnauthenticated = () => {};

/** What to do when any request answers 401 (the shell signs out and says why). */
export function whenUnauthenticated(handler) {
  onUnauthenticated = handler;
}

const enc = encodeURIComponent;

/** `/api/v1alpha1/namespaces/<ns>/<parts…>`, each part escaped. */
export function nsPath(ns, ...parts) {
  return `${API}/namespaces/${enc(ns)}${parts.map((p) => "/" + enc(p)).join("")}`;
}

async function request(method, path, { body, signal, token } = {}) {
  const headers = { Accept: "application/json" };
  const bearer = token ?? session.token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const init = { method, headers, signal, credentials: token === undefined ? session.credentials() : "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    throw new ApiError(0, `the Hecate API server did not answer (${e && e.message ? e.message : e})`);
  }
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (response.ok) return json;
  const message = (json && typeof json.error === "string" && json.error) || response.statusText || `HTTP ${response.status}`;
  if (response.status === 401) {
    const error = new Unauthenticated(message);
    if (token === undefined) onUnauthenticated(error);
    throw error;
  }
  throw new ApiError(response.status, message, json && json.code);
}

export const get = (path, options) => request("GET", path, options);
export const post = (path, body, options) => request("POST", path, { ...options, body });
export const put = (path, body, options) => request("PUT", path, { ...options, body });

/** `GET /healthz`: needs no token. */
export async function version() {
  const answer = await fetch("/healthz", { credentials: "omit", cache: "no-store" });
  if (!answer.ok) throw new ApiError(answer.status, answer.statusText);
  return (await answer.json()).version;
}
