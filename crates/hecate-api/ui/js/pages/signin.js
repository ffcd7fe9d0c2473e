// Sign in with a bearer token the Kubernetes API server accepts. The token is checked
// with one read before it is kept (in this tab's sessionStorage only). When the server
// signs browsers in through an OpenID Connect provider (`/auth/config` says `oidc`;
// the server answers it either way), the page offers "Sign in with SSO" instead: the provider's ID token comes back as the
// server's HttpOnly session cookie, and one read with that cookie tells whether this
// browser is signed in already (back from the provider, or in another tab).

import { API, ApiError, get } from "../api.js";
import { h, setText } from "../dom.js";
import * as notice from "../notice.js";
import * as session from "../session.js";

/** The SSO panel, when the server has a provider; the token form otherwise. */
async function sso(page, form, onSignedIn) {
  let config;
  try {
    const answer = await fetch("/auth/config", { credentials: "omit", cache: "no-store", headers: { Accept: "application/json" } });
    if (!answer.ok) return;
    config = await answer.json();
  } catch {
    return; // no provider: the token form stays
  }
  if (!config || config.oidc !== true || typeof config.login !== "string") return;
  try {
    const signedIn = await fetch(`${API}/namespaces`, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
    if (signedIn.ok) {
      session.useSso();
      notice.clear();
      onSignedIn();
      return;
    }
  } catch {
    // Not answered: offer the sign-in anyway.
  }
  // A full navigation: the server answers with a redirect to the provider.
  const button = h("button", { type: "button", id: "sign-in-sso", class: "primary", onclick: () => location.assign(config.login) }, "Sign in with SSO");
  form.replaceWith(
    h(
      "div",
      { class: "sign-in" },
      h(
        "p",
        { class: "muted" },
        "Sign in with your organisation's identity provider. Hecate then acts as you: the cluster decides what you may see and do, and every action is recorded as you.",
      ),
      h("div", { class: "buttons" }, button),
    ),
  );
  if (page.isConnected) button.focus();
}

export function render({ onSignedIn }) {
  const error = h("p", { id: "sign-in-error", class: "error-text", role: "alert" });
  const input = h("input", {
    id: "token",
    name: "token",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "token-help sign-in-error",
  });
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  const form = h(
    "form",
    {
      class: "sign-in",
      onsubmit: async (event) => {
        event.preventDefault();
        const token = input.value.trim();
        error.textContent = "";
        if (!token) {
          error.textContent = "Paste a token first.";
          input.focus();
          return;
        }
        button.disabled = true;
        try {
          // Any authenticated read tells whether the cluster accepts the token.
          await get(`${API}/namespaces`, { token });
          session.save(token);
          notice.clear();
          onSignedIn();
        } catch (e) {
          setText(
            error,
            e instanceof ApiError && e.status === 401
              ? "The cluster did not accept this token. Check that it is a bearer token for this cluster and that it has not expired."
              : `Could not check the token: ${e.message || e}`,
          );
          input.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    h("label", { for: "token" }, "Bearer token"),
    input,
    h(
      "p",
      { id: "token-help", class: "muted" },
      "Hecate asks the Kubernetes API server who the token belongs to and what they may do; every action is recorded as them. ",
      "Use a token the cluster accepts: for a ServiceAccount, ",
      h("code", null, "kubectl create token <name>"),
      "; for the local demo, the tokens it prints. ",
      "The token stays in this browser tab (session storage), is sent only to this server, and is forgotten when you sign out or close the tab.",
    ),
    h("div", { class: "buttons" }, button),
    error,
  );
  const page = h("div", { class: "page narrow" }, h("h1", { tabindex: "-1" }, "Sign in to Hecate"), form);
  sso(page, form, onSignedIn);
  return page;
}
