// The agent's questions in the conversation: a permission (buttons, the plan summary as a
// table, a destroy-tier question in red with plain words and never an "always" choice)
// and an `ask_user` form (elicitation). A new question takes the keyboard focus; answered,
// it stays as a record of what was chosen.

import { h, announce } from "./dom.js";
import { questionBody } from "./tools.js";

let serial = 0;

export class PermissionEntry {
  constructor(params, resolve) {
    this.params = params;
    this.resolve = resolve;
    this.answer = null;
    this.n = ++serial;
    const call = params.toolCall || {};
    // The tier, never the title's words, says a call destroys.
    this.destroy = call._meta?.iacCode?.tier === "destroy";
    // No "always" for a destroy: each one is asked.
    this.options = (params.options || []).filter((o) => !(this.destroy && /always/.test(o.kind)));
  }

  build() {
    return h("li", { class: "entry question permission" + (this.destroy ? " destroy" : ""), role: "group",
      "aria-labelledby": `q${this.n}`, "data-tier": this.destroy ? "destroy" : (this.params.toolCall?._meta?.iacCode?.tier || "") });
  }

  refresh(el) {
    const call = this.params.toolCall || {};
    const heading = this.destroy ? "This destroys or replaces infrastructure" : "Permission needed";
    el.replaceChildren(
      h("h3", { id: `q${this.n}` }, this.destroy ? "⚠ " : "", heading),
      h("p", { class: "q-title" }, call.title || ""),
      h("div", { class: "q-body" }, questionBody(call.content)),
      this.answer ? h("p", { class: "answered", role: "status" }, this.answer) : this.buttons(),
    );
    if (!this.answer && !this.focused) {
      this.focused = true;
      setTimeout(() => (el.querySelector(this.destroy ? "button.reject" : "button") || el).focus(), 0);
      announce(`${heading}: ${call.title || ""}`);
    }
  }

  buttons() {
    const row = h("div", { class: "q-actions" });
    for (const o of this.options) {
      const allow = o.kind.startsWith("allow");
      const label = this.destroy && allow ? `${o.name}: destroy` : o.name;
      row.append(h("button", { type: "button", class: (allow ? "allow" : "reject") + (this.destroy && allow ? " danger" : ""),
        "data-option-id": o.optionId, "data-kind": o.kind, onclick: () => this.choose(o) }, label));
    }
    return row;
  }

  choose(option) {
    if (this.answer) return;
    this.answer = `Answered: ${option.name}`;
    this.resolve({ outcome: { outcome: "selected", optionId: option.optionId } });
    this.log?.touch(this);
  }

  /** The turn was cancelled or the question withdrawn. */
  withdraw(why) {
    if (this.answer) return;
    this.answer = why;
    this.resolve({ outcome: { outcome: "cancelled" } });
    this.log?.touch(this);
  }
}

export class FormEntry {
  constructor(requestId, params, resolve) {
    this.requestId = requestId;
    this.params = params;
    this.resolve = resolve;
    this.answer = null;
    this.n = ++serial;
  }

  build() {
    return h("li", { class: "entry question elicit", role: "group", "aria-labelledby": `q${this.n}` });
  }

  refresh(el) {
    if (this.answer) {
      el.replaceChildren(h("h3", { id: `q${this.n}` }, "Question"), h("p", {}, this.params.message || ""), h("p", { class: "answered", role: "status" }, this.answer));
      return;
    }
    if (this.form) return;
    const schema = this.params.requestedSchema || {};
    const required = new Set(schema.required || []);
    const fields = Object.entries(schema.properties || {}).map(([name, prop], k) => field(`f${this.n}-${k}`, name, prop, required.has(name)));
    this.form = h("form", { onsubmit: (e) => { e.preventDefault(); this.submit(schema); } },
      fields,
      h("div", { class: "q-actions" },
        h("button", { type: "submit", class: "allow" }, "Answer"),
        h("button", { type: "button", class: "reject", onclick: () => this.finish({ action: "decline" }, "Declined") }, "Decline"),
        h("button", { type: "button", onclick: () => this.finish({ action: "cancel" }, "Dismissed") }, "Dismiss")));
    el.replaceChildren(h("h3", { id: `q${this.n}` }, "The agent asks"), h("p", {}, this.params.message || ""), this.form);
    setTimeout(() => (this.form.querySelector("input,select,textarea,button") || el).focus(), 0);
    announce(`The agent asks: ${this.params.message || ""}`);
  }

  submit(schema) {
    const content = {};
    for (const [name, prop] of Object.entries(schema.properties || {})) {
      const inputs = [...this.form.querySelectorAll(`[name="${CSS.escape(name)}"]`)];
      if (prop.type === "boolean") content[name] = inputs[0].checked;
      else if (prop.type === "array") content[name] = inputs.filter((i) => i.checked).map((i) => i.value);
      else if (inputs[0].value === "") continue;
      else if (prop.type === "number" || prop.type === "integer") content[name] = Number(inputs[0].value);
      else content[name] = inputs[0].value;
    }
    this.finish({ action: "accept", content }, "Answered: " + Object.entries(content).map(([k, v]) => `${k} = ${Array.isArray(v) ? v.join(", ") : v}`).join("; "));
  }

  finish(result, label) {
    if (this.answer) return;
    this.answer = label;
    this.resolve(result);
    this.log?.touch(this);
  }

  withdraw(why) {
    if (this.answer) return;
    this.answer = why;
    this.resolve({ action: "cancel" });
    this.log?.touch(this);
  }
}

function field(id, name, prop, required) {
  const label = prop.title || name;
  const help = prop.description ? h("small", { id: id + "-d" }, prop.description) : null;
  const described = help ? id + "-d" : null;
  const choices = prop.enum || (prop.oneOf || []).map((o) => o.const);
  const names = prop.enumNames || (prop.oneOf || []).map((o) => o.title);
  if (prop.type === "boolean") {
    return h("div", { class: "field" }, h("label", {}, h("input", { type: "checkbox", id, name, checked: !!prop.default, "aria-describedby": described }), " ", label), help);
  }
  if (prop.type === "array") {
    const items = prop.items?.enum || (prop.items?.anyOf || []).map((o) => o.const);
    return h("fieldset", { class: "field" }, h("legend", {}, label), items.map((v) =>
      h("label", {}, h("input", { type: "checkbox", name, value: v, checked: (prop.default || []).includes(v) }), " ", String(v))), help);
  }
  let input;
  if (choices.length) {
    input = h("select", { id, name, required, "aria-describedby": described },
      required ? null : h("option", { value: "" }, "—"),
      choices.map((v, k) => h("option", { value: v, selected: v === prop.default }, names[k] || String(v))));
  } else {
    const type = prop.type === "number" || prop.type === "integer" ? "number"
      : { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[prop.format] || "text";
    input = h("input", { id, name, type, required, value: prop.default ?? "", "aria-describedby": described,
      minlength: prop.minLength, maxlength: prop.maxLength, min: prop.minimum, max: prop.maximum, step: prop.type === "integer" ? 1 : (type === "number" ? "any" : null) });
  }
  return h("div", { class: "field" }, h("label", { for: id }, label, required ? " *" : ""), input, help);
}
