// The diff of an edit (ACP `diff` content: path, oldText, newText) as a table, unified or
// side by side. Lines are compared by a longest-common-subsequence over what differs after
// the common head and tail; past MAX_CELLS the middle is shown as removed then added.

import { h } from "./dom.js";

const MAX_CELLS = 4e6;
const CONTEXT = 3;
const MAX_ROWS = 2000;

/** [{op: " " | "-" | "+", a, b, text}] with 1-based line numbers. */
export function lineDiff(oldText, newText) {
  const a = oldText ? oldText.split("\n") : [];
  const b = newText ? newText.split("\n") : [];
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const ops = [];
  for (let k = 0; k < head; k++) ops.push({ op: " ", a: k + 1, b: k + 1, text: a[k] });
  if (x.length * y.length > MAX_CELLS) {
    x.forEach((text, k) => ops.push({ op: "-", a: head + k + 1, text }));
    y.forEach((text, k) => ops.push({ op: "+", b: head + k + 1, text }));
  } else {
    const n = x.length, m = y.length;
    const table = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * (m + 1) + j] = x[i] === y[j] ? table[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(table[(i + 1) * (m + 1) + j], table[i * (m + 1) + j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { ops.push({ op: " ", a: head + i + 1, b: head + j + 1, text: x[i] }); i++; j++; }
      else if (i < n && (j === m || table[(i + 1) * (m + 1) + j] >= table[i * (m + 1) + j + 1])) { ops.push({ op: "-", a: head + i + 1, text: x[i] }); i++; }
      else { ops.push({ op: "+", b: head + j + 1, text: y[j] }); j++; }
    }
  }
  for (let k = 0; k < tail; k++) {
    const ai = a.length - tail + k, bi = b.length - tail + k;
    ops.push({ op: " ", a: ai + 1, b: bi + 1, text: a[ai] });
  }
  return ops;
}

/** The changed lines with CONTEXT lines around them, and gaps as null. */
function hunks(ops) {
  const keep = new Uint8Array(ops.length);
  ops.forEach((o, k) => {
    if (o.op !== " ") for (let d = -CONTEXT; d <= CONTEXT; d++) if (ops[k + d]) keep[k + d] = 1;
  });
  const out = [];
  let gap = false;
  ops.forEach((o, k) => {
    if (keep[k]) { out.push(o); gap = false; } else if (!gap) { out.push(null); gap = true; }
  });
  return out;
}

/** A diff block: a header with the path, counts and a unified/side-by-side switch. */
export function diffView(path, oldText, newText) {
  const ops = lineDiff(oldText || "", newText || "");
  const added = ops.filter((o) => o.op === "+").length;
  const removed = ops.filter((o) => o.op === "-").length;
  const box = h("div", { class: "diff", "data-path": path });
  const body = h("div", { class: "diff-body" });
  let split = false;
  const toggle = h("button", { type: "button", class: "small", "aria-pressed": "false", onclick: () => {
    split = !split;
    toggle.setAttribute("aria-pressed", String(split));
    toggle.textContent = split ? "Unified" : "Side by side";
    draw();
  } }, "Side by side");
  const title = oldText === null || oldText === undefined ? "new file" : `+${added} −${removed}`;
  box.append(h("div", { class: "diff-head" }, h("span", { class: "path" }, path), h("span", { class: "counts" }, title), toggle), body);
  const rows = hunks(ops);
  const draw = () => {
    body.replaceChildren(split ? sideBySide(rows) : unified(rows));
  };
  draw();
  return box;
}

function cut(rows) {
  return rows.length > MAX_ROWS ? rows.slice(0, MAX_ROWS) : rows;
}

function more(rows, cols) {
  return rows.length > MAX_ROWS ? h("tr", {}, h("td", { colspan: cols, class: "gap" }, `… ${rows.length - MAX_ROWS} more lines not shown`)) : null;
}

function unified(rows) {
  const t = h("table", { class: "diff-table unified" });
  for (const o of cut(rows)) {
    if (!o) { t.append(h("tr", {}, h("td", { colspan: 4, class: "gap" }, "⋯"))); continue; }
    const cls = o.op === "+" ? "add" : o.op === "-" ? "del" : "ctx";
    t.append(h("tr", { class: cls }, h("td", { class: "ln" }, o.a || ""), h("td", { class: "ln" }, o.b || ""),
      h("td", { class: "op", "aria-label": o.op === "+" ? "added" : o.op === "-" ? "removed" : null }, o.op), h("td", { class: "code" }, o.text)));
  }
  t.append(more(rows, 4) || "");
  return t;
}

function sideBySide(rows) {
  const t = h("table", { class: "diff-table split" });
  const list = cut(rows);
  for (let k = 0; k < list.length; k++) {
    const o = list[k];
    if (!o) { t.append(h("tr", {}, h("td", { colspan: 4, class: "gap" }, "⋯"))); continue; }
    if (o.op === " ") {
      t.append(h("tr", { class: "ctx" }, h("td", { class: "ln" }, o.a), h("td", { class: "code" }, o.text), h("td", { class: "ln" }, o.b), h("td", { class: "code" }, o.text)));
      continue;
    }
    const dels = [], adds = [];
    while (k < list.length && list[k] && list[k].op === "-") dels.push(list[k++]);
    while (k < list.length && list[k] && list[k].op === "+") adds.push(list[k++]);
    k--;
    for (let r = 0; r < Math.max(dels.length, adds.length); r++) {
      const d = dels[r], a = adds[r];
      t.append(h("tr", {}, h("td", { class: "ln" }, d ? d.a : ""), h("td", { class: d ? "code del" : "code" }, d ? d.text : ""),
        h("td", { class: "ln" }, a ? a.b : ""), h("td", { class: a ? "code add" : "code" }, a ? a.text : "")));
    }
  }
  t.append(more(rows, 4) || "");
  return t;
}
