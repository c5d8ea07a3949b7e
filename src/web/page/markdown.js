// Markdown to DOM, without raw HTML: every piece of text becomes a text node, so a model
// or a tool can never put markup or script in the page (`<img onerror>` stays text). Block
// forms: paragraphs, ATX headings, fenced code, lists (nested by indentation, task boxes),
// block quotes, GFM tables, rules. Inline: code, bold, italic, strike, links (http, https,
// mailto only; others stay text).

import { h } from "./dom.js";

const LIMIT = 200000; // longer text is shown as plain text: rendering must stay cheap

/** A fragment rendering `text`. */
export function render(text) {
  const frag = document.createDocumentFragment();
  if (text.length > LIMIT) {
    frag.append(h("pre", { class: "plain" }, text));
    return frag;
  }
  blocks(text.replace(/\r\n?/g, "\n").split("\n"), frag);
  return frag;
}

const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const rule = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const tableSep = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function blocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let m;
    if ((m = fence.exec(line))) {
      const close = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(close)) body.push(lines[i++]);
      i++;
      const code = h("code", {}, body.join("\n"));
      if (m[2]) code.dataset.lang = m[2];
      parent.append(h("pre", {}, code));
    } else if ((m = heading.exec(line))) {
      parent.append(inline(h("h" + Math.min(m[1].length + 2, 6), { class: "md-h" }), m[2]));
      i++;
    } else if (rule.test(line)) {
      parent.append(h("hr"));
      i++;
    } else if (line.trimStart().startsWith(">")) {
      const body = [];
      while (i < lines.length && lines[i].trimStart().startsWith(">")) body.push(lines[i++].trimStart().replace(/^>\s?/, ""));
      const quote = h("blockquote");
      blocks(body, quote);
      parent.append(quote);
    } else if (line.includes("|") && i + 1 < lines.length && tableSep.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i = table(lines, i, parent);
    } else if (item.test(line)) {
      i = list(lines, i, parent);
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !fence.test(lines[i]) && !heading.test(lines[i]) &&
        !(para.length && item.test(lines[i])) && !lines[i].trimStart().startsWith(">") && !rule.test(lines[i])) {
        para.push(lines[i++].trim());
      }
      const p = h("p");
      para.forEach((text, n) => { if (n) p.append(h("br")); inline(p, text); });
      parent.append(p);
    }
  }
}

function list(lines, i, parent) {
  const first = item.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const el = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) el.setAttribute("start", parseInt(first[2], 10));
  while (i < lines.length) {
    const m = item.exec(lines[i]);
    if (!m || m[1].length !== indent) break;
    const li = h("li");
    let text = m[3];
    const task = /^\[([ xX])\]\s+/.exec(text);
    if (task) {
      li.append(h("input", { type: "checkbox", disabled: true, checked: task[1] !== " ", "aria-label": task[1] !== " " ? "done" : "not done" }), " ");
      text = text.slice(task[0].length);
    }
    inline(li, text);
    i++;
    const sub = [];
    while (i < lines.length && lines[i].trim() && (/^\s+/.exec(lines[i]) || [""])[0].length > indent) sub.push(lines[i++]);
    if (sub.length) blocks(sub.map((l) => l.slice(Math.min(indent + 2, l.search(/\S/)))), li);
    el.append(li);
  }
  parent.append(el);
  return i;
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const out = [];
  let cell = "";
  let code = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c === "\\" && s[k + 1] === "|") { cell += "|"; k++; continue; }
    if (c === "`") code = !code;
    if (c === "|" && !code) { out.push(cell.trim()); cell = ""; continue; }
    cell += c;
  }
  out.push(cell.trim());
  return out;
}

function table(lines, i, parent) {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : ""));
  const t = h("table", { class: "md-table" });
  const tr = h("tr");
  head.forEach((c, n) => tr.append(inline(h("th", { scope: "col", class: align[n] ? "al-" + align[n] : null }), c)));
  t.append(h("thead", {}, tr));
  const body = h("tbody");
  i += 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const row = h("tr");
    const values = cells(lines[i]);
    head.forEach((_, n) => row.append(inline(h("td", { class: align[n] ? "al-" + align[n] : null }), values[n] || "")));
    body.append(row);
    i++;
  }
  t.append(body);
  parent.append(h("div", { class: "table-wrap" }, t));
  return i;
}

const SPAN = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|~~([^~]+)~~|\*([^*\s][^*]*)\*|(?<![\w])_([^_\s][^_]*)_(?![\w])|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;

/** Appends `text`'s inline Markdown to `el`; returns `el`. */
export function inline(el, text) {
  let rest = text;
  let guard = 0;
  while (rest && guard++ < 10000) {
    const m = SPAN.exec(rest);
    if (!m) { el.append(rest); break; }
    if (m.index) el.append(rest.slice(0, m.index));
    if (m[1]) el.append(h("code", {}, m[2].trim() || m[2]));
    else if (m[3] || m[4]) el.append(inline(h("strong"), m[3] || m[4]));
    else if (m[5]) el.append(inline(h("del"), m[5]));
    else if (m[6] || m[7]) el.append(inline(h("em"), m[6] || m[7]));
    else if (m[8]) el.append(link(m[8], m[9]));
    else if (m[10]) el.append(link(m[10], m[10]));
    rest = rest.slice(m.index + m[0].length);
  }
  return el;
}

function link(label, href) {
  let url;
  try { url = new URL(href, location.href); } catch { return label; }
  if (!["http:", "https:", "mailto:"].includes(url.protocol)) return label === href ? label : `${label} (${href})`;
  const a = h("a", { href: url.href, rel: "noopener noreferrer nofollow", target: "_blank" });
  return inline(a, label);
}
