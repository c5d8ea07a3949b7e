// One open session, shown in its own tab: the conversation, the plan as a checklist, the
// mode and model switchers (config options), the context and cost meter, and the prompt.
// It turns the session's `session/update`s and the agent's questions into entries.

import { h, compact, announce } from "./dom.js";
import { Log } from "./log.js";
import { render } from "./markdown.js";
import { ToolEntry } from "./tools.js";
import { PermissionEntry, FormEntry } from "./questions.js";
import { Composer } from "./composer.js";

class TextEntry {
  constructor(role, messageId, text) {
    this.role = role;
    this.messageId = messageId;
    this.text = text || "";
  }
  build() {
    if (this.role === "thought") {
      this.body = h("pre", { class: "thought-text" });
      return h("li", { class: "entry msg thought" }, h("details", {}, h("summary", {}, "Thinking"), this.body));
    }
    this.body = h("div", { class: "md" });
    return h("li", { class: "entry msg " + this.role, "data-message-id": this.messageId || "" },
      h("div", { class: "who" }, this.role === "user" ? "You" : this.role === "agent" ? "Agent" : "Note"), this.body);
  }
  refresh() {
    if (this.role === "thought") { this.body.textContent = this.text; return; }
    // A long message is parsed again at most four times a second while it streams.
    const now = performance.now();
    if (this.text.length > 20000 && this.drawnAt && now - this.drawnAt < 250) {
      if (!this.later) this.later = setTimeout(() => { this.later = null; this.log?.touch(this); }, 250);
      return;
    }
    this.drawnAt = now;
    this.body.replaceChildren(render(this.text));
  }
  add(text) {
    this.text += text;
    this.log?.touch(this);
  }
}

export class SessionView {
  constructor(conn, id, cwd, app) {
    this.conn = conn;
    this.id = id;
    this.cwd = cwd;
    this.app = app;
    this.title = "New session";
    this.tools = new Map();
    this.questions = new Map();
    this.last = null;
    this.log = new Log();
    this.options = h("div", { class: "options" });
    this.meter = h("div", { class: "meter", role: "status", "aria-label": "Context and cost" }, "—");
    this.plan = h("ol", { class: "plan-list", "aria-label": "Plan" });
    this.planBox = h("details", { class: "plan", open: true, hidden: true }, h("summary", {}, "Plan"), this.plan);
    this.composer = new Composer({ onSend: (text) => this.prompt(text), onCancel: () => this.cancel() });
    this.heading = h("h2", { class: "session-title" }, this.title);
    const name = h("input", { type: "text", "aria-label": "New title", required: true });
    const rename = h("form", { class: "rename", hidden: true, onsubmit: (e) => {
      e.preventDefault();
      rename.hidden = true;
      if (name.value.trim()) this.prompt(`/rename ${name.value.trim()}`);
    } }, name, h("button", { type: "submit", class: "small" }, "Save"));
    const renameButton = h("button", { type: "button", class: "small", onclick: () => {
      rename.hidden = !rename.hidden;
      name.value = this.title;
      if (!rename.hidden) name.focus();
    } }, "Rename");
    this.panel = h("section", { class: "session", role: "tabpanel", "data-session-id": id, tabindex: "-1" },
      h("header", { class: "session-head" }, this.heading, renameButton, rename, this.options, this.meter),
      this.planBox, this.log.element, this.composer.element);
  }

  setTitle(title) {
    this.title = title || this.title;
    this.heading.textContent = this.title;
    this.app.retitle(this);
  }

  note(text) {
    this.log.push(new TextEntry("note", null, text));
    this.last = null;
  }

  text(role, update) {
    const id = update.messageId || null;
    const piece = update.content?.type === "text" ? update.content.text : `[${update.content?.type}]`;
    if (this.last && this.last.role === role && (this.last.messageId === id || !id)) {
      this.last.add(piece);
      return;
    }
    this.last = this.log.push(new TextEntry(role, id, piece));
  }

  onUpdate(u) {
    switch (u.sessionUpdate) {
      case "agent_message_chunk": return this.text("agent", u);
      case "user_message_chunk": return this.text("user", u);
      case "agent_thought_chunk": return this.text("thought", u);
      case "tool_call": {
        this.last = null;
        const known = this.tools.get(u.toolCallId);
        if (known) return known.update(u);
        const entry = new ToolEntry(u);
        this.tools.set(u.toolCallId, entry);
        return this.log.push(entry);
      }
      case "tool_call_update": {
        const entry = this.tools.get(u.toolCallId);
        if (entry) entry.update(u);
        else this.onUpdate({ ...u, sessionUpdate: "tool_call" });
        return;
      }
      case "plan": return this.showPlan(u.entries || []);
      case "available_commands_update": this.composer.commands = u.availableCommands || []; return;
      case "config_option_update": return this.showOptions(u.configOptions || []);
      case "current_mode_update": return;
      case "session_info_update": if (u.title) this.setTitle(u.title); return;
      case "usage_update": return this.showUsage(u);
      default: return;
    }
  }

  showPlan(entries) {
    this.planBox.hidden = !entries.length;
    const mark = { completed: "✓", in_progress: "▶", pending: "○" };
    this.plan.replaceChildren(...entries.map((e) => h("li", { class: "plan-" + e.status, "aria-current": e.status === "in_progress" ? "step" : null },
      h("input", { type: "checkbox", disabled: true, checked: e.status === "completed", "aria-label": e.status.replace("_", " ") }),
      h("span", { class: "mark", "aria-hidden": "true" }, mark[e.status] || ""), " ", e.content)));
  }

  showOptions(options) {
    this.configOptions = options;
    this.options.replaceChildren(...options.map((o) => {
      const id = `opt-${this.id}-${o.id}`;
      if (o.type === "boolean") {
        return h("label", { class: "opt" }, h("input", { type: "checkbox", id, "data-config-id": o.id, checked: !!o.currentValue,
          onchange: (e) => this.setOption(o.id, e.target.checked) }), " ", o.name);
      }
      const flat = (o.options || []).flatMap((x) => x.options ? x.options : [x]);
      return h("label", { class: "opt" }, o.name + " ",
        h("select", { id, "data-config-id": o.id, onchange: (e) => this.setOption(o.id, e.target.value) },
          flat.map((x) => h("option", { value: x.value, selected: x.value === o.currentValue }, x.name || x.value))));
    }));
  }

  async setOption(configId, value) {
    try {
      const result = await this.conn.request("session/set_config_option", { sessionId: this.id, configId, value }, this.id);
      if (result?.configOptions) this.showOptions(result.configOptions);
    } catch (err) {
      this.note(`Could not change ${configId}: ${err.message}`);
      if (this.configOptions) this.showOptions(this.configOptions);
    }
  }

  showUsage(u) {
    this.usage = u;
    const parts = [];
    if (u.size) parts.push(`context ${compact(u.used)} / ${compact(u.size)} (${Math.round((100 * u.used) / u.size)} %)`);
    if (u.cost) parts.push(`${u.cost.currency === "USD" ? "$" : u.cost.currency + " "}${u.cost.amount.toFixed(4)}`);
    this.meter.textContent = parts.join(" · ") || "—";
    if (u.size) this.meter.style.setProperty("--used", Math.min(100, (100 * u.used) / u.size).toFixed(1) + "%");
  }

  async prompt(text) {
    this.last = null;
    this.log.push(new TextEntry("user", null, text));
    this.last = null;
    this.log.toEnd(false);
    this.composer.setRunning(true);
    this.app.busy(this, true);
    try {
      const result = await this.conn.request("session/prompt", { sessionId: this.id, prompt: [{ type: "text", text }] }, this.id);
      if (result.stopReason && result.stopReason !== "end_turn") this.note(`Turn ended: ${result.stopReason.replace("_", " ")}`);
      // The log is not a live region (every streamed piece would be read out): the
      // reply's beginning is said once it is complete.
      const reply = [...this.log.entries].reverse().find((e) => e.role === "agent");
      announce(reply ? `The agent replied: ${reply.text.slice(0, 300)}` : "The agent finished");
    } catch (err) {
      this.note(`The prompt failed: ${err.message}`);
    } finally {
      this.last = null;
      this.composer.setRunning(false);
      this.app.busy(this, false);
    }
  }

  cancel() {
    this.conn.notify("session/cancel", { sessionId: this.id }, this.id).catch(() => {});
    for (const q of this.questions.values()) q.withdraw("Cancelled");
  }

  /** A request of the agent for this session: a permission or a form. */
  ask(msg) {
    this.last = null;
    return new Promise((resolve) => {
      const done = (r) => { this.questions.delete(msg.id); this.app.asking(this, this.questions.size > 0); resolve(r); };
      const entry = msg.method === "session/request_permission" ? new PermissionEntry(msg.params, done) : new FormEntry(msg.id, msg.params, done);
      this.questions.set(msg.id, entry);
      this.app.asking(this, true);
      this.log.push(entry);
      this.log.toEnd(false);
    });
  }

  /** Focuses the first unanswered question; whether there was one. */
  focusQuestion() {
    const button = this.panel.querySelector(".question:not(:has(.answered)) button, .question:not(:has(.answered)) input, .question:not(:has(.answered)) select");
    if (!button) return false;
    button.focus();
    return true;
  }

  withdraw(requestId) {
    const q = this.questions.get(requestId);
    if (q) q.withdraw("Withdrawn by the agent");
  }

  /** Before a replay: a clean slate. */
  reset() {
    this.log.clear();
    this.tools.clear();
    for (const q of this.questions.values()) q.withdraw("The connection was replaced");
    this.last = null;
  }
}
