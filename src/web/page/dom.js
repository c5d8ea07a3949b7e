// Building the page's DOM from data. Every string goes in as text (textContent, attribute
// values), never as markup: the server also forbids string-to-markup with Trusted Types.

/** An element: `h("button", {class: "x", onclick: f}, "text", child)`. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "value" || key === "checked") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children: nodes, strings (as text), arrays of them; skips null. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Removes every child of `el`. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** `n` with a thousands separator and at most one decimal in k/M. */
export function compact(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e4) return Math.round(n / 1e3) + "k";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

/** Keeps the last `max` characters of `text`, saying how much was left out. */
export function tail(text, max) {
  if (text.length <= max) return { text, cut: 0 };
  return { text: text.slice(text.length - max), cut: text.length - max };
}

/** Says `message` to screen readers through the page's live region. */
export function announce(message) {
  const live = document.getElementById("announce");
  if (live) live.textContent = message;
}
