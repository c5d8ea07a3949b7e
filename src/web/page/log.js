// The conversation as a windowed list: every entry is kept as data, and at most MAX of
// them are in the DOM at once, the ones around what is on screen. Scrolling near an edge
// brings the next page in and lets the far one go; new entries while the reader is at the
// bottom follow. Work is batched per animation frame, so a stream of thousands of updates
// (a replayed 10,000-message session, a huge tool output) never blocks the page.

import { h } from "./dom.js";

const MAX = 240;
const PAGE = 60;

/** An entry: `build()` makes its element, `refresh(el)` brings it up to date. */
export class Log {
  constructor() {
    this.entries = [];
    this.start = 0;
    this.end = 0;
    this.dirty = new Set();
    this.frame = 0;
    this.list = h("ol", { class: "log-list", "aria-label": "Conversation" });
    this.top = h("li", { class: "sentinel", "aria-hidden": "true" });
    this.bottom = h("li", { class: "sentinel", "aria-hidden": "true" });
    this.jump = h("button", { type: "button", class: "jump", hidden: true, onclick: () => this.toEnd(true) }, "↓ Latest");
    this.scroller = h("div", { class: "log", role: "log", "aria-live": "off", tabindex: "0" }, this.list);
    this.list.append(this.top, this.bottom);
    // Following the newest entries: left only when the reader scrolls up (the position
    // goes back), taken again at the bottom. Content that grows below never ends it.
    this.atBottom = true;
    this.lastTop = 0;
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      if (s.scrollTop < this.lastTop - 2) this.atBottom = false;
      if (s.scrollHeight - s.scrollTop - s.clientHeight < 48) this.atBottom = true;
      this.lastTop = s.scrollTop;
      this.jump.hidden = this.atBottom && this.end === this.entries.length;
    });
    // An entry that grows after it was drawn (a long reply laid out, a diff opened) keeps
    // a following reader at the bottom.
    new ResizeObserver(() => {
      if (this.atBottom) {
        this.scroller.scrollTop = this.scroller.scrollHeight;
        this.lastTop = this.scroller.scrollTop;
      }
    }).observe(this.list);
    this.observer = new IntersectionObserver((seen) => this.edges(seen), { root: this.scroller, rootMargin: "800px 0px" });
    this.observer.observe(this.top);
    this.observer.observe(this.bottom);
  }

  get element() {
    return h("div", { class: "log-wrap" }, this.scroller, this.jump);
  }

  push(entry) {
    entry.log = this;
    this.entries.push(entry);
    this.schedule();
    return entry;
  }

  /** The entry changed: redraw it on the next frame if it is shown. */
  touch(entry) {
    if (entry.el) { this.dirty.add(entry); this.schedule(); }
  }

  clear() {
    for (let k = this.start; k < this.end; k++) this.drop(this.entries[k]);
    this.entries = [];
    this.start = this.end = 0;
    this.atBottom = true;
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.flush(); });
  }

  flush() {
    if (this.atBottom && this.end < this.entries.length) {
      // Show the tail: render what came, and let the head of the window go.
      const from = Math.max(this.end, this.entries.length - MAX);
      if (from > this.end) { for (let k = this.start; k < this.end; k++) this.drop(this.entries[k]); this.start = this.end = from; }
      for (let k = this.end; k < this.entries.length; k++) this.bottom.before(this.node(this.entries[k]));
      this.end = this.entries.length;
      while (this.end - this.start > MAX) this.drop(this.entries[this.start++]);
    }
    for (const entry of this.dirty) if (entry.el) entry.refresh(entry.el);
    this.dirty.clear();
    if (this.atBottom) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.lastTop = this.scroller.scrollTop;
    }
    this.jump.hidden = this.atBottom && this.end === this.entries.length;
  }

  node(entry) {
    if (!entry.el) { entry.el = entry.build(); entry.refresh(entry.el); }
    return entry.el;
  }

  drop(entry) {
    if (entry && entry.el) { entry.el.remove(); entry.el = null; }
  }

  edges(seen) {
    for (const e of seen) {
      if (!e.isIntersecting) continue;
      if (e.target === this.top && this.start > 0) this.grow(true);
      if (e.target === this.bottom && this.end < this.entries.length) this.grow(false);
    }
  }

  grow(up) {
    const s = this.scroller;
    if (up) {
      const from = Math.max(0, this.start - PAGE);
      const before = s.scrollHeight;
      const frag = document.createDocumentFragment();
      for (let k = from; k < this.start; k++) frag.append(this.node(this.entries[k]));
      this.top.after(frag);
      this.start = from;
      s.scrollTop += s.scrollHeight - before;
      while (this.end - this.start > MAX) this.drop(this.entries[--this.end]);
    } else {
      const to = Math.min(this.entries.length, this.end + PAGE);
      for (let k = this.end; k < to; k++) this.bottom.before(this.node(this.entries[k]));
      this.end = to;
      while (this.end - this.start > MAX) {
        const el = this.entries[this.start].el;
        const height = el ? el.offsetHeight : 0;
        this.drop(this.entries[this.start++]);
        s.scrollTop -= height;
      }
    }
    // Our own moves are not the reader's.
    this.lastTop = s.scrollTop;
  }

  /** Back to the newest entries. */
  toEnd(focus) {
    for (let k = this.start; k < this.end; k++) this.drop(this.entries[k]);
    this.start = this.end = Math.max(0, this.entries.length - PAGE);
    this.atBottom = true;
    this.flush();
    if (focus) this.scroller.focus();
  }

  /** How many entries are in the DOM (for tests and the status line). */
  get rendered() {
    return this.end - this.start;
  }
}
