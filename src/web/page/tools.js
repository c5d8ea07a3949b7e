// Tool calls as cards: kind, title, status, the command's tier, the live output (its tail,
// capped), the diff of an edit and the hooks' lines. ACP replaces a call's content with
// each update that carries content; the card redraws its body only when that happens.

import { h, tail } from "./dom.js";
import { diffView } from "./diff.js";
import { render } from "./markdown.js";

const OUTPUT_MAX = 64 * 1024;
const KIND = { read: "Read", edit: "Edit", delete: "Delete", move: "Move", search: "Search",
  execute: "Run", think: "Think", fetch: "Fetch", switch_mode: "Mode", other: "Tool" };
const STATUS = { pending: "pending", in_progress: "running", completed: "done", failed: "failed" };

export class ToolEntry {
  constructor(update) {
    this.id = update.toolCallId;
    this.title = update.title || "tool";
    this.kind = update.kind || "other";
    this.status = update.status || "pending";
    this.content = update.content || [];
    this.tier = update._meta?.iacCode?.tier || null;
    this.input = update.rawInput;
    this.version = 1;
    this.drawn = 0;
  }

  update(u) {
    if (u.title) this.title = u.title;
    if (u.kind) this.kind = u.kind;
    if (u.status) this.status = u.status;
    if (u._meta?.iacCode?.tier) this.tier = u._meta.iacCode.tier;
    if (u.content) { this.content = u.content; this.version++; }
    this.log?.touch(this);
  }

  build() {
    this.head = h("div", { class: "tool-head" });
    this.body = h("div", { class: "tool-body" });
    return h("li", { class: "entry tool", "data-tool-call-id": this.id }, h("details", { open: true }, h("summary", {}, this.head), this.body));
  }

  refresh(el) {
    el.dataset.status = this.status;
    el.dataset.kind = this.kind;
    if (this.tier) el.dataset.tier = this.tier;
    this.head.replaceChildren(...[
      h("span", { class: "kind" }, KIND[this.kind] || this.kind),
      h("span", { class: "title" }, this.title),
      this.tier ? h("span", { class: "tier tier-" + this.tier, title: "what this command does to infrastructure" }, this.tier) : null,
      h("span", { class: "status status-" + this.status }, STATUS[this.status] || this.status),
    ].filter(Boolean));
    if (this.drawn === this.version) return;
    this.drawn = this.version;
    this.body.replaceChildren(...this.content.map(block));
  }
}

/** One block of a tool call's content. */
export function block(item) {
  if (item.type === "diff") return diffView(item.path, item.oldText, item.newText);
  if (item.type === "terminal") return h("div", { class: "note" }, `terminal ${item.terminalId}`);
  const c = item.content || {};
  if (c.type === "text") return output(c.text || "");
  if (c.type === "resource_link") return h("div", { class: "note" }, c.uri || "");
  if (c.type === "image") return h("div", { class: "note" }, `[image ${c.mimeType || ""}]`);
  return h("div", { class: "note" }, `[${c.type || item.type}]`);
}

function output(text) {
  const { text: shown, cut } = tail(text, OUTPUT_MAX);
  return h("div", { class: "output" },
    cut ? h("div", { class: "note" }, `${cut.toLocaleString()} earlier characters not shown`) : null,
    h("pre", { tabindex: "0" }, shown));
}

/** A question's own content: Markdown (the plan summary is a table there). */
export function questionBody(content) {
  return (content || []).map((item) => {
    const c = item.content || {};
    if (item.type === "content" && c.type === "text") return h("div", { class: "md" }, render(c.text || ""));
    return block(item);
  });
}
