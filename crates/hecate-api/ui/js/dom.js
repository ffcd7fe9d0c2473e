// Small DOM helpers. Every string from the server becomes a text node or an attribute
// value; nothing is ever parsed as HTML (the page's CSP enforces Trusted Types, so a
// string assigned as markup would throw rather than inject).

const SVG = "http://www.w3.org/2000/svg";

// Control characters — C0 but a line break and a tab, DEL, C1 — and the bidirectional
// controls that reorder what follows them (marks, embeddings, overrides, isolates).
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text as the page shows it: each control character written as an escape, `\u{202e}`,
 * as the CLI writes it (DECISION 146). An alias, a commit's subject or a rejection's
 * reason is anyone's text: a right-to-left override in it would reverse what follows
 * (a SHA, "1 hour ago"), so it is shown, never obeyed. Every text node and every
 * attribute people read (a title, an accessible name) is set through it.
 */
export function shown(text) {
  return String(text).replace(CONTROLS, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

// The attributes whose values people read or hear; the others are data.
const READ = new Set(["title", "aria-label", "alt", "placeholder"]);

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (READ.has(key)) el.setAttribute(key, shown(value === true ? "" : value));
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === "") continue;
    el.append(child instanceof Node ? child : document.createTextNode(shown(child)));
  }
}

/** Sets `el`'s text, [`shown`]. */
export function setText(el, text) {
  el.textContent = shown(text);
}

/** `h("a", {href}, "text", child, [more])`: an element with attributes and children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** The same for SVG elements. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** A fragment of several nodes. */
export function frag(...children) {
  const f = document.createDocumentFragment();
  append(f, children);
  return f;
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

export const $ = (selector, root = document) => root.querySelector(selector);
