// Markdown to DOM, without raw HTML: every piece of text becomes a text node, so a model
// or a tool can never put markup or script in the page (`<img onerror>` stays text). Block
// forms: paragraphs, ATX headings, fenced code, lists (nested by indentation, task boxes),
// block quotes, GFM tables, rules. Inline: code, bold, italic, strike, links (http, https,
// mailto only; others stay text).

import { h } from "./dom.js";

const LIMIT = 200000; // longer text is shown as plain text: rendering must stay cheap
const LINE_LIMIT = 4000; // a longer line gets no inline forms (their search is bounded per line)

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

// Every pattern is anchored and linear: a hostile line must not make the page spin.
const fence = /^ {0,3}(`{3,}|~{3,})[ \t]*([\w+-]*)/;
const headingStart = /^ {0,3}(#{1,6})(?:[ \t]+|$)/;
const item = /^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;

/** `# Title ##` → [level, "Title"], or null. */
function heading(line) {
  const m = headingStart.exec(line);
  if (!m) return null;
  let text = line.slice(m[0].length).trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  if (end === 0 || text[end - 1] === " " || text[end - 1] === "\t") text = text.slice(0, end).trimEnd();
  return [m[1].length, text];
}

/** `---`, `* * *`, `___`. */
function isRule(line) {
  const s = line.replace(/[ \t]/g, "");
  return s.length >= 3 && /^[-*_]$/.test(s[0]) && s.split(s[0]).every((x) => x === "") && line.search(/\S/) < 4;
}

/** `| --- | :-: |`: every cell dashes with optional colons. */
function isTableSep(line) {
  if (!line.includes("-")) return false;
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|")) s = s.slice(0, -1);
  return s.split("|").every((c) => /^:?-+:?$/.test(c.trim()));
}

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
    } else if ((m = heading(line))) {
      parent.append(inline(h("h" + Math.min(m[0] + 2, 6), { class: "md-h" }), m[1]));
      i++;
    } else if (isRule(line)) {
      parent.append(h("hr"));
      i++;
    } else if (line.trimStart().startsWith(">")) {
      const body = [];
      while (i < lines.length && lines[i].trimStart().startsWith(">")) body.push(lines[i++].trimStart().replace(/^>\s?/, ""));
      const quote = h("blockquote");
      blocks(body, quote);
      parent.append(quote);
    } else if (line.includes("|") && i + 1 < lines.length && isTableSep(lines[i + 1])) {
      i = table(lines, i, parent);
    } else if (item.test(line)) {
      i = list(lines, i, parent);
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !fence.test(lines[i]) && !heading(lines[i]) &&
        !(para.length && item.test(lines[i])) && !lines[i].trimStart().startsWith(">") && !isRule(lines[i])) {
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

// Spans are bounded in length, so that an unclosed one costs at most that much per start.
const SPAN = /\*\*([^*]{1,1000})\*\*|__([^_]{1,1000})__|~~([^~]{1,1000})~~|\*([^*\s][^*]{0,1000})\*|(?<![\w])_([^_\s][^_]{0,1000})_(?![\w])|\[([^\]]{1,1000})\]\(([^)\s]{1,2000})(?:\s+"[^"]{0,200}")?\)|(https?:\/\/[^\s<>()]{1,2000})/;

/** Appends `text`'s inline Markdown to `el`; returns `el`. Code spans are found by hand
 *  (a run of backticks and the next run of the same length), the rest by SPAN. */
export function inline(el, text) {
  if (text.length > LINE_LIMIT) return el.append(text), el;
  let at = 0;
  while (at < text.length) {
    const tick = text.indexOf("`", at);
    if (tick < 0) break;
    let run = tick;
    while (text[run] === "`") run++;
    const ticks = run - tick;
    let close = run;
    for (;;) {
      close = text.indexOf("`".repeat(ticks), close);
      if (close < 0) break;
      let after = close + ticks;
      if (text[after] !== "`") break;
      while (text[after] === "`") after++;
      close = after;
    }
    if (close < 0) {
      spans(el, text.slice(at, run));
      at = run;
      continue;
    }
    spans(el, text.slice(at, tick));
    const code = text.slice(run, close);
    el.append(h("code", {}, code.trim() || code));
    at = close + ticks;
  }
  if (at < text.length) spans(el, text.slice(at));
  return el;
}

function spans(el, text) {
  let rest = text;
  while (rest) {
    const m = SPAN.exec(rest);
    if (!m) { el.append(rest); break; }
    if (m.index) el.append(rest.slice(0, m.index));
    if (m[1] || m[2]) el.append(inline(h("strong"), m[1] || m[2]));
    else if (m[3]) el.append(inline(h("del"), m[3]));
    else if (m[4] || m[5]) el.append(inline(h("em"), m[4] || m[5]));
    else if (m[6]) el.append(link(m[6], m[7]));
    else if (m[8]) el.append(link(trimUrl(m[8]), trimUrl(m[8])), m[8].slice(trimUrl(m[8]).length));
    rest = rest.slice(m.index + m[0].length);
  }
}

/** A bare URL without the punctuation that usually ends the sentence around it. */
function trimUrl(url) {
  let end = url.length;
  while (end > 8 && ".,;:!?'\")".includes(url[end - 1])) end--;
  return url.slice(0, end);
}

function link(label, href) {
  let url;
  try { url = new URL(href, location.href); } catch { return label; }
  if (!["http:", "https:", "mailto:"].includes(url.protocol)) return label === href ? label : `${label} (${href})`;
  const a = h("a", { href: url.href, rel: "noopener noreferrer nofollow", target: "_blank" });
  return inline(a, label);
}
