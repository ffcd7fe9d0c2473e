// On a phone the navigation folds into one "Menu" button (hecate.css shows the button
// and hides the list below 600px): it opens and closes the list, says which in
// `aria-expanded`, closes again when a page is chosen or Escape is pressed. On a wider
// screen the button is not shown and the list always is.

export function start() {
  const button = document.getElementById("menu-toggle");
  const top = document.querySelector("header.top");
  const nav = document.getElementById("nav");
  if (!button || !top || !nav) return;
  const set = (open) => {
    top.classList.toggle("menu-open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  nav.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("a[href]")) set(false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && top.classList.contains("menu-open")) {
      set(false);
      button.focus();
    }
  });
}
