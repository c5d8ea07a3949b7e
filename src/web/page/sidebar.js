// The sessions of a directory: list, new, open (load, with its history), resume (without
// it), fork and delete. Renaming is done in the session's own tab (`/rename`).

import { h, announce } from "./dom.js";

export class Sidebar {
  constructor(app) {
    this.app = app;
    this.cursor = null;
    this.cwd = h("input", { id: "cwd", type: "text", spellcheck: "false", autocomplete: "off", "aria-describedby": "cwd-help" });
    this.list = h("ul", { id: "sessions", class: "sessions", "aria-label": "Sessions" });
    this.more = h("button", { type: "button", class: "small", hidden: true, onclick: () => this.refresh(true) }, "More");
    this.error = h("p", { class: "error", role: "alert", hidden: true });
    this.element = h("nav", { class: "sidebar", "aria-label": "Sessions" },
      h("form", { class: "cwd-form", onsubmit: (e) => { e.preventDefault(); this.refresh(false); } },
        h("label", { for: "cwd" }, "Directory"), this.cwd,
        h("small", { id: "cwd-help" }, "An absolute path on the server"),
        h("div", { class: "row" },
          h("button", { type: "submit", class: "small" }, "List"),
          h("button", { type: "button", id: "new-session", onclick: () => this.app.create(this.cwd.value.trim()) }, "New session"))),
      this.error, this.list, this.more);
  }

  fail(message) {
    this.error.hidden = !message;
    this.error.textContent = message || "";
  }

  async refresh(next) {
    const cwd = this.cwd.value.trim();
    if (!next) { this.cursor = null; this.list.replaceChildren(); }
    this.fail("");
    try {
      const params = cwd ? { cwd } : {};
      if (next && this.cursor) params.cursor = this.cursor;
      const result = await this.app.conn.request("session/list", params);
      this.cursor = result.nextCursor || null;
      this.more.hidden = !this.cursor;
      for (const s of result.sessions || []) this.list.append(this.row(s));
      if (!this.list.children.length) this.list.append(h("li", { class: "empty" }, "No sessions here yet"));
      localStorage.setItem("iac-code-cwd", cwd);
    } catch (err) {
      this.fail(`Cannot list sessions: ${err.message}`);
    }
  }

  row(s) {
    const title = s.title || "Untitled session";
    const when = s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "";
    let armed = null;
    const del = h("button", { type: "button", class: "small reject", "aria-label": `Delete ${title}`, onclick: async () => {
      if (!armed) {
        del.textContent = "Confirm delete";
        del.setAttribute("aria-label", `Confirm: delete ${title} for good`);
        announce(`Press again to delete ${title}`);
        armed = setTimeout(() => { armed = null; del.textContent = "Delete"; del.setAttribute("aria-label", `Delete ${title}`); }, 6000);
        return;
      }
      clearTimeout(armed);
      try {
        await this.app.conn.request("session/delete", { sessionId: s.sessionId });
        this.app.closeTab(s.sessionId, false);
        li.remove();
      } catch (err) { this.fail(`Cannot delete: ${err.message}`); }
    } }, "Delete");
    const act = (label, how) => h("button", { type: "button", class: "small", "aria-label": `${label} ${title}`,
      onclick: () => this.app.open(s.sessionId, s.cwd || this.cwd.value.trim(), how, title) }, label);
    const li = h("li", { "data-session-id": s.sessionId },
      h("div", { class: "s-title" }, title), h("div", { class: "s-when" }, when),
      h("div", { class: "row" }, act("Open", "load"), act("Resume", "resume"), act("Fork", "fork"), del));
    return li;
  }
}
