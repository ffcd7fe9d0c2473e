// Sign in with a bearer token the Kubernetes API server accepts. The token is checked
// with one read before it is kept (in this tab's sessionStorage only).

import { API, ApiError, get } from "../api.js";
import { h } from "../dom.js";
import * as notice from "../notice.js";
import * as session from "../session.js";

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
          error.textContent =
            e instanceof ApiError && e.status === 401
              ? "The cluster did not accept this token. Check that it is a bearer token for this cluster and that it has not expired."
              : `Could not check the token: ${e.message || e}`;
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
  return h("div", { class: "page narrow" }, h("h1", { tabindex: "-1" }, "Sign in to Hecate"), form);
}
