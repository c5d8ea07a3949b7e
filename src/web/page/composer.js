// The prompt box: Enter sends, Shift+Enter breaks the line, Escape cancels a running turn.
// A leading "/" offers the session's commands (`available_commands_update`) as a listbox:
// arrows move, Tab or Enter completes, Escape closes.

import { h } from "./dom.js";

let serial = 0;

export class Composer {
  constructor({ onSend, onCancel }) {
    this.commands = [];
    this.running = false;
    this.choice = -1;
    const n = ++serial;
    this.listId = `cmds${n}`;
    this.input = h("textarea", { class: "prompt", rows: 3, placeholder: "Ask, or type / for commands", "aria-label": "Prompt",
      role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": this.listId,
      oninput: () => this.suggest(), onkeydown: (e) => this.key(e) });
    this.list = h("ul", { class: "commands", id: this.listId, role: "listbox", "aria-label": "Commands", hidden: true });
    this.send = h("button", { type: "submit", class: "send" }, "Send");
    this.stop = h("button", { type: "button", class: "cancel", disabled: true, onclick: () => onCancel() }, "Cancel");
    this.element = h("form", { class: "composer", onsubmit: (e) => { e.preventDefault(); this.submit(onSend); } },
      this.list, this.input, h("div", { class: "composer-actions" }, this.send, this.stop));
  }

  setRunning(running) {
    this.running = running;
    this.stop.disabled = !running;
    this.send.disabled = running;
    this.element.dataset.running = String(running);
  }

  submit(onSend) {
    const text = this.input.value.trim();
    if (!text || this.running) return;
    this.input.value = "";
    this.close();
    onSend(text);
  }

  matches() {
    const text = this.input.value;
    if (!text.startsWith("/") || /\s/.test(text)) return [];
    const typed = text.slice(1).toLowerCase();
    return this.commands.filter((c) => c.name.toLowerCase().startsWith(typed)).slice(0, 12);
  }

  suggest() {
    const found = this.matches();
    this.list.replaceChildren(...found.map((c, k) => h("li", { id: `${this.listId}-${k}`, role: "option", "aria-selected": "false", "data-name": c.name,
      onmousedown: (e) => { e.preventDefault(); this.complete(c); } },
    h("span", { class: "cmd" }, "/" + c.name), " ", h("span", { class: "desc" }, c.description || ""),
    c.input?.hint ? h("span", { class: "hint" }, " " + c.input.hint) : null)));
    this.list.hidden = !found.length;
    this.input.setAttribute("aria-expanded", String(!!found.length));
    this.select(found.length ? 0 : -1);
  }

  select(k) {
    this.choice = k;
    [...this.list.children].forEach((li, n) => li.setAttribute("aria-selected", String(n === k)));
    if (k >= 0) this.input.setAttribute("aria-activedescendant", `${this.listId}-${k}`);
    else this.input.removeAttribute("aria-activedescendant");
  }

  complete(command) {
    this.input.value = "/" + command.name + " ";
    this.close();
    this.input.focus();
  }

  close() {
    this.list.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.select(-1);
  }

  key(e) {
    const open = !this.list.hidden;
    const found = open ? this.matches() : [];
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      this.select((this.choice + step + found.length) % found.length);
    } else if (open && (e.key === "Tab" || e.key === "Enter") && this.choice >= 0 && !e.shiftKey) {
      e.preventDefault();
      this.complete(found[this.choice]);
    } else if (e.key === "Escape") {
      if (open) this.close();
      else if (this.running) this.stop.click();
    } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.element.requestSubmit();
    }
  }
}
