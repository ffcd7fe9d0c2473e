// `/settings/`: the installation as the signed-in person sees it — who they are, the
// Fides servers and clusters their Gates use (each probed by the server: reachability
// is its answer, never guessed here), telemetry, who holds Hecate's roles — and the
// three settings writes: a Gate's evidence settings, connecting a cluster, granting a
// role — each read-only, saying why, for someone the cluster would not let use it (the
// rights `GET {ns}/rights` reports; the grant form only for who may list the grants).
// Drawn once per visit (the probes take seconds; a live redraw would also wipe a
// half-filled form). Errors loading it are a red banner on the page; a write's refusal
// is said beside its button.

import { refuseBeside } from "../actions.js";
import { API, ApiError, Unauthenticated, get, nsPath, post, put } from "../api.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import * as notice from "../notice.js";
import * as rights from "../rights.js";

/** The page is drawn on its own terms: no event stream, no redraw on changes. */
export const live = "self";

/** The roles the grant form offers (the server also accepts hecate-flux-operator). */
const ROLES = ["hecate-viewer", "hecate-promoter", "hecate-approver"];

/** Why a 403 is not a bug, per form. */
const FORBIDDEN = {
  evidence: "Changing a Gate's evidence settings needs update on Gates in this namespace; the cluster decides who has it.",
  cluster: "Connecting a cluster stores a Secret: it needs create on Secrets in this namespace.",
  grant: "Granting a role needs create on ClusterRoleBindings, which only cluster administrators usually hold.",
};

function banner(...parts) {
  return h("div", { class: ["message", "error"], role: "alert" }, h("div", { class: "text" }, ...parts));
}

function reachability(reachable, yes, no) {
  return h(
    "span",
    { class: ["badge", reachable ? "health-Healthy" : "health-Degraded"], "data-reachable": String(Boolean(reachable)) },
    h("span", { class: "dot", "aria-hidden": "true" }),
    reachable ? yes : no,
  );
}

function list(items) {
  return items && items.length ? items.join(", ") : h("span", { class: "muted" }, "none");
}

/**
 * Sends a form's write; reports success in the notice area, and a refusal beside the
 * form's button (where the eye is), an expired session in the notice.
 */
async function submit(kind, form, run, report, after) {
  const button = form.querySelector("button[type=submit]");
  if (button) button.disabled = true;
  notice.show("pending", "Asking the cluster…");
  try {
    const answer = await run();
    notice.show("ok", ...report(answer));
    form.reset();
    if (after) after();
  } catch (error) {
    if (error instanceof Unauthenticated) {
      notice.show("error", h("strong", null, "Your session has expired."), " Sign in again. Nothing was changed.");
    } else {
      const text =
        error instanceof ApiError && error.status === 403
          ? `Not permitted: ${error.message}. ${FORBIDDEN[kind]}`
          : `It did not work: ${error.message || String(error)}`;
      notice.clear();
      if (button) refuseBeside(button, text);
    }
  } finally {
    if (button) button.disabled = false;
  }
}

/**
 * A form's controls, read-only — with why, in words tied to them — when the caller's
 * rights here say they may not perform `operation` (the cluster's answer, `GET
 * {ns}/rights`); as they are when they may, or when the rights are unknown.
 */
function guarded(kind, operation, may, ...controls) {
  const why = rights.whyNot(may, operation);
  if (!why) return h("fieldset", { class: "plain" }, ...controls);
  const id = `${kind}-why-not`;
  return [
    h("p", { id, class: "why-not", "data-why-not": operation }, why),
    h("fieldset", { class: "plain", disabled: true, "aria-describedby": id }, ...controls),
  ];
}

function field(id, label, control, hint) {
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hint ? h("p", { class: "muted small" }, hint) : null);
}

function evidenceForm(ns, gates, refresh, may) {
  const gate =
    gates.length > 0
      ? h("select", { id: "evidence-gate", name: "gate", required: true }, gates.map((g) => h("option", { value: g }, g)))
      : h("input", { id: "evidence-gate", name: "gate", required: true, autocomplete: "off" });
  const form = h(
    "form",
    {
      id: "evidence-form",
      class: "settings-form",
      onsubmit: (event) => {
        event.preventDefault();
        const data = new FormData(form);
        const name = String(data.get("gate") || "").trim();
        const body = { serverURL: String(data.get("serverURL") || "").trim(), fidesEnvironment: String(data.get("fidesEnvironment") || "").trim() };
        const secret = String(data.get("credentialsRef") || "").trim();
        if (secret) body.credentialsRef = { name: secret };
        submit(
          "evidence",
          form,
          () => put(nsPath(ns, "gates", name, "evidence"), body),
          (answer) => [h("strong", null, "Saved: "), `${answer.gate}. `, h("span", { class: "server-text" }, answer.note)],
          refresh,
        );
      },
    },
    h("h3", null, "Set a Gate's evidence server"),
    h("p", { class: "warning" }, "A Gate applied from git (Flux) is restored by Flux: change it in git too, or this change will be undone."),
    guarded(
      "evidence",
      "setGateEvidence",
      may,
      field("evidence-gate", "Gate", gate),
      field("evidence-server", "Fides server URL", h("input", { id: "evidence-server", name: "serverURL", type: "url", autocomplete: "off" }), "An http or https address. Empty: the server Hecate is configured with."),
      field("evidence-environment", "Fides environment (UUID)", h("input", { id: "evidence-environment", name: "fidesEnvironment", required: true, autocomplete: "off" })),
      field("evidence-secret", "Secret with the API key (optional)", h("input", { id: "evidence-secret", name: "credentialsRef", autocomplete: "off" }), "Its key is token; Hecate uses it only once it is labelled hecate.dev/usable=true. Empty keeps the Gate's current one."),
      h("button", { type: "submit", "data-action": "evidence" }, "Save evidence settings"),
    ),
  );
  return form;
}

function clusterForm(ns, refresh, may) {
  const form = h(
    "form",
    {
      id: "cluster-form",
      class: "settings-form",
      onsubmit: (event) => {
        event.preventDefault();
        const data = new FormData(form);
        const body = { name: String(data.get("name") || "").trim(), kubeconfig: String(data.get("kubeconfig") || "") };
        submit(
          "cluster",
          form,
          () => post(nsPath(ns, "clusters"), body),
          (answer) => [h("strong", null, answer.created ? "Connected: " : "Credentials replaced: "), `Secret ${answer.secret}. It is probed below.`],
          refresh,
        );
      },
    },
    h("h3", null, "Connect a cluster"),
    h("p", { class: "warning" }, "Use a long-lived token: a bound service-account token (kubectl create token) expires within hours, and the cluster then rejects it."),
    guarded(
      "cluster",
      "connectCluster",
      may,
      field("cluster-name", "Name", h("input", { id: "cluster-name", name: "name", required: true, autocomplete: "off", placeholder: "production-eu" }), `Kept as a Secret of that name in ${ns}.`),
      field("cluster-kubeconfig", "Kubeconfig", h("textarea", { id: "cluster-kubeconfig", name: "kubeconfig", required: true, rows: "6", spellcheck: "false" })),
      h("button", { type: "submit", "data-action": "cluster" }, "Connect"),
    ),
  );
  return form;
}

function grantForm(refresh) {
  const form = h(
    "form",
    {
      id: "grant-form",
      class: "settings-form",
      onsubmit: (event) => {
        event.preventDefault();
        const data = new FormData(form);
        const body = { subject: String(data.get("subject") || "").trim(), kind: String(data.get("kind") || "User"), role: String(data.get("role") || "") };
        submit(
          "grant",
          form,
          () => post(`${API}/rbac/grants`, body),
          (answer) => [h("strong", null, answer.created ? "Granted: " : "Already granted: "), `ClusterRoleBinding ${answer.binding}.`],
          refresh,
        );
      },
    },
    h("h3", null, "Grant a role"),
    field("grant-subject", "User or group", h("input", { id: "grant-subject", name: "subject", required: true, autocomplete: "off" })),
    field("grant-kind", "Kind", h("select", { id: "grant-kind", name: "kind" }, h("option", { value: "User" }, "User"), h("option", { value: "Group" }, "Group"))),
    field("grant-role", "Role", h("select", { id: "grant-role", name: "role" }, ROLES.map((r) => h("option", { value: r }, r)))),
    h("button", { type: "submit", "data-action": "grant" }, "Grant"),
  );
  return form;
}

export async function render(ctx) {
  const { ns } = ctx;
  ctx.title("Settings");
  const [settings, grants, gates, may] = await Promise.all([
    get(`${API}/settings`, { signal: ctx.signal }).then(
      (value) => ({ value }),
      (error) => {
        if (error && error.name === "AbortError") throw error;
        return { error };
      },
    ),
    get(`${API}/rbac/grants`, { signal: ctx.signal }).then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    get(nsPath(ns, "gates"), { signal: ctx.signal }).catch(() => []),
    // What the caller may change here: the forms they may not use are read-only.
    rights.load(ns),
  ]);
  const refresh = () => ctx.refresh();
  const head = c.title("Settings");
  if (settings.error) {
    return h(
      "div",
      { class: "page" },
      head,
      banner(h("strong", null, "Could not load the settings: "), h("span", { class: "server-text" }, settings.error.message || String(settings.error))),
    );
  }
  const s = settings.value;
  const home = s.home || {};
  const gateNames = (gates || []).map((g) => g.metadata.name);
  const identity = s.identity || {};

  const installation = c.section(
    "This installation",
    null,
    c.facts([
      ["Version", s.version],
      ["Signed in as", h("span", { id: "identity" }, identity.name)],
      ["Groups", list(identity.groups)],
    ]),
  );

  const logs = c.section(
    "Logs and traces",
    null,
    h("p", null, "The server's and the controller's logs:"),
    h("pre", { class: "command" }, `kubectl logs -n ${home.namespace || "hecate-system"} deploy/hecate-api\nkubectl logs -n ${home.namespace || "hecate-system"} deploy/hecate-controller`),
    h(
      "p",
      { id: "telemetry" },
      "Traces: ",
      s.telemetry && s.telemetry.configured ? h("code", null, s.telemetry.endpoint) : "not configured (OTEL_EXPORTER_OTLP_ENDPOINT is not set).",
    ),
  );

  const servers = s.fides || [];
  const evidence = c.section(
    "Evidence servers",
    null,
    servers.length
      ? c.table(
          "Fides servers the Gates you may read use",
          ["Server", "Reachable", "Gates", "Environments"],
          servers.map((f) => ({
            attrs: { "data-server": f.serverURL },
            cells: [f.serverURL, [reachability(f.reachable, "Reachable", "Unreachable"), f.detail ? h("p", { class: "server-text small" }, f.detail) : null], list(f.gates), list(f.environments)],
          })),
        )
      : c.empty("No Gate you may read names a Fides server."),
    evidenceForm(ns, gateNames, refresh, may),
  );

  const rows = [];
  if (home.inCluster) {
    rows.push({
      attrs: { "data-cluster": "home" },
      cells: [h("span", null, "This cluster ", c.pill("home")), reachability(true, "Connected", "Not connected"), home.server || "", h("span", { class: "muted" }, "where Hecate runs")],
    });
  }
  for (const cluster of s.clusters || []) {
    const name = cluster.secret.split("/").pop();
    const unused = cluster.reachable && !(cluster.gates || []).length;
    rows.push({
      attrs: { "data-cluster": cluster.secret },
      cells: [
        cluster.secret,
        reachability(cluster.reachable, "Connected", "Not connected"),
        list(cluster.gates),
        cluster.reachable
          ? unused
            ? h("span", { class: "muted" }, "No Gate uses it yet: name it in a Gate's watch as ", h("code", null, `clusterRef: {name: ${name}}`))
            : ""
          : h("span", { class: "server-text" }, cluster.detail || ""),
      ],
    });
  }
  const clusters = c.section(
    "Connected clusters",
    null,
    rows.length ? c.table("Clusters Hecate reaches", ["Cluster", "Status", "Gates", "Detail"], rows) : c.empty("No cluster is connected, and Hecate does not run in one."),
    clusterForm(ns, refresh, may),
  );

  let people;
  if (grants.error instanceof ApiError && grants.error.status === 403) {
    people = c.section("Who may use Hecate", null, h("p", { class: "muted", id: "grants-hidden" }, "You may not see who holds Hecate's roles: that needs list on ClusterRoleBindings."));
  } else if (grants.error) {
    people = c.section("Who may use Hecate", null, banner(h("strong", null, "Could not load the grants: "), h("span", { class: "server-text" }, grants.error.message || String(grants.error))), grantForm(refresh));
  } else {
    const list = grants.value.grants || [];
    people = c.section(
      "Who may use Hecate",
      null,
      list.length
        ? c.table(
            "Who holds Hecate's roles",
            ["Subject", "Kind", "Role", "Granted by", "Binding"],
            list.map((g) => ({ attrs: { "data-binding": g.binding }, cells: [g.subject, g.kind, g.role, g.grantedBy || h("span", { class: "muted" }, "outside Hecate"), g.binding] })),
          )
        : c.empty("Nobody holds Hecate's roles cluster-wide."),
      grantForm(refresh),
    );
  }

  return h("div", { class: "page settings" }, head, installation, logs, evidence, clusters, people);
}
