// The page: signs in (the token lives in sessionStorage, sent as Authorization; no
// cookie), holds one ACP connection, opens sessions in tabs, routes the server's messages
// to them, and starts over on a new connection when the server lost this one (a restart,
// another node), reloading every open session. Everything arrives on the connection's one
// stream (the server sends a session's messages there when no stream of its own is
// open): a browser keeps at most six HTTP/1.1 connections to a server, for all its tabs,
// and a stream per session would soon leave none for the page's requests.

import { h, announce } from "./dom.js";
import { Connection, AuthError } from "./acp.js";
import { SessionView } from "./session.js";
import { Sidebar } from "./sidebar.js";

const TOKEN = "iac-code-token";
const INIT = {
  protocolVersion: 1,
  clientCapabilities: {
    fs: { readTextFile: false, writeTextFile: false },
    terminal: false,
    elicitation: { form: {} },
    session: { configOptions: { boolean: {} } },
  },
  clientInfo: { name: "iac-code-web", title: "iac-code web", version: "1" },
};

class App {
  constructor() {
    this.views = new Map();
    this.early = new Map();
    this.closed = new Set();
    this.generation = 0;
    this.active = null;
    this.conn = null;
    this.status = document.getElementById("status");
    this.tabs = document.getElementById("tabs");
    this.panels = document.getElementById("panels");
    this.banner = document.getElementById("banner");
    this.sidebar = new Sidebar(this);
    document.getElementById("side").append(this.sidebar.element);
    document.getElementById("signin").addEventListener("submit", (e) => {
      e.preventDefault();
      const token = document.getElementById("token").value.trim();
      sessionStorage.setItem(TOKEN, token);
      document.getElementById("token").value = "";
      this.connect();
    });
    document.getElementById("signout").addEventListener("click", () => {
      sessionStorage.removeItem(TOKEN);
      this.conn?.close();
      location.reload();
    });
    this.tabs.addEventListener("keydown", (e) => this.tabKeys(e));
  }

  setState(state, text) {
    this.status.dataset.state = state;
    this.status.textContent = text;
  }

  say(text, kind) {
    this.banner.hidden = !text;
    this.banner.textContent = text || "";
    this.banner.dataset.kind = kind || "info";
  }

  handlers() {
    return {
      onNotify: (msg) => this.notify(msg),
      onRequest: (msg) => this.request(msg),
      onLost: (err) => this.lost(err),
      onState: (s) => this.setState(s, s === "connected" ? "Connected" : "Reconnecting…"),
      onNotice: (text) => this.say(text, "warn"),
    };
  }

  async connect() {
    const token = sessionStorage.getItem(TOKEN) || "";
    this.setState("connecting", "Connecting…");
    const conn = new Connection(token, this.handlers());
    let result;
    try {
      result = await conn.start(INIT);
    } catch (err) {
      if (err instanceof AuthError) return this.signIn(token ? "The server refused that token." : "");
      this.setState("lost", "Cannot reach the server");
      this.say(`Cannot connect: ${err.message}. Retrying…`, "error");
      setTimeout(() => this.connect(), 2000);
      return;
    }
    const first = !this.conn;
    const generation = ++this.generation;
    this.conn = conn;
    document.body.dataset.signedIn = "true";
    document.getElementById("signin-box").hidden = true;
    document.getElementById("app").hidden = false;
    this.setState("connected", "Connected");
    if (first) {
      const cwd = localStorage.getItem("iac-code-cwd") || result?._meta?.iacCode?.cwd || "";
      this.sidebar.cwd.value = cwd;
      this.sidebar.refresh(false);
      return;
    }
    // A new connection after a lost one: every open session comes back, with its history.
    let reloaded = 0;
    for (const view of this.views.values()) {
      // Lost again while reloading: the newer connection reloads everything itself.
      if (generation !== this.generation) return;
      view.conn = conn;
      view.reset();
      try {
        const answer = await conn.request("session/load", { sessionId: view.id, cwd: view.cwd, mcpServers: [] }, view.id);
        if (answer?.configOptions) view.showOptions(answer.configOptions);
        view.note("The connection to the server was replaced (a restart or another node); this session was reloaded.");
        reloaded++;
      } catch (err) {
        view.note(`This session could not be reloaded: ${err.message}`);
      }
    }
    this.say(`The server connection was lost and made again; ${reloaded} session(s) reloaded.`, "warn");
    this.sidebar.refresh(false);
  }

  signIn(why) {
    document.getElementById("app").hidden = true;
    document.getElementById("signin-box").hidden = false;
    document.getElementById("signin-why").textContent = why || "";
    this.setState("signed-out", "Signed out");
    document.getElementById("token").focus();
  }

  lost(err) {
    if (err instanceof AuthError) return this.signIn("The server refused the token.");
    this.setState("lost", "Connection lost: reconnecting");
    this.say("The server no longer knows this connection (a restart or a failover): reconnecting…", "warn");
    announce("Connection lost, reconnecting");
    for (const view of this.views.values()) view.composer.setRunning(false);
    this.connect();
  }

  notify(msg) {
    const p = msg.params || {};
    if (msg.method === "session/update") {
      const view = this.views.get(p.sessionId);
      if (view) view.onUpdate(p.update || {});
      else if (!this.closed.has(p.sessionId)) {
        const list = this.early.get(p.sessionId) || [];
        if (list.length < 1000) list.push(p.update || {});
        this.early.set(p.sessionId, list);
      }
    } else if (msg.method === "$/cancel_request") {
      for (const view of this.views.values()) view.withdraw(p.requestId);
    }
  }

  request(msg) {
    const view = this.views.get(msg.params?.sessionId);
    if (view && (msg.method === "session/request_permission" || msg.method === "elicitation/create")) {
      if (this.active !== view) this.say(`"${view.title}" asks a question.`, "warn");
      return view.ask(msg);
    }
    return Promise.reject(Object.assign(new Error(`${msg.method} is not supported by the web client`), { code: -32601 }));
  }

  async create(cwd) {
    try {
      const result = await this.conn.request("session/new", { cwd, mcpServers: [] });
      const view = this.add(result.sessionId, cwd, "New session");
      if (result.configOptions) view.showOptions(result.configOptions);
      this.sidebar.refresh(false);
    } catch (err) {
      this.sidebar.fail(`Cannot start a session: ${err.message}`);
    }
  }

  async open(id, cwd, how, title) {
    if (this.views.has(id) && how !== "fork") return this.activate(this.views.get(id));
    try {
      if (how === "fork") {
        const result = await this.conn.request("session/fork", { sessionId: id, cwd, mcpServers: [] });
        const view = this.add(result.sessionId, cwd, `${title} (fork)`);
          if (result.configOptions) view.showOptions(result.configOptions);
        view.note(`Forked from "${title}": the conversation so far goes on here; the original is unchanged.`);
        this.sidebar.refresh(false);
        return;
      }
      const view = this.add(id, cwd, title);
      const result = await this.conn.request("session/" + how, { sessionId: id, cwd, mcpServers: [] }, id);
      if (result?.configOptions) view.showOptions(result.configOptions);
      if (how === "resume") view.note("Resumed: earlier messages are not shown (Open shows them).");
    } catch (err) {
      this.closeTab(id, false);
      this.sidebar.fail(`Cannot ${how === "load" ? "open" : how} the session: ${err.message}`);
    }
  }

  add(id, cwd, title) {
    const view = new SessionView(this.conn, id, cwd, this);
    this.views.set(id, view);
    this.closed.delete(id);
    const label = h("span", { class: "tab-label" }, title);
    const close = h("button", { type: "button", class: "tab-close", "aria-label": `Close ${title}`, tabindex: "-1",
      onclick: (e) => { e.stopPropagation(); this.closeTab(id, true); } }, "×");
    view.tab = h("div", { class: "tab", role: "tab", id: `tab-${id}`, "aria-controls": `panel-${id}`, "aria-selected": "false",
      "aria-keyshortcuts": "ArrowLeft ArrowRight Delete",
      tabindex: "-1", "data-session-id": id, onclick: () => this.activate(view) }, label, close);
    view.tabLabel = label;
    view.panel.id = `panel-${id}`;
    view.panel.setAttribute("aria-labelledby", `tab-${id}`);
    view.setTitle(title);
    this.tabs.append(view.tab);
    this.panels.append(view.panel);
    for (const update of this.early.get(id) || []) view.onUpdate(update);
    this.early.delete(id);
    this.activate(view);
    return view;
  }

  activate(view) {
    this.active = view;
    for (const v of this.views.values()) {
      const on = v === view;
      v.tab.setAttribute("aria-selected", String(on));
      v.tab.tabIndex = on ? 0 : -1;
      v.panel.hidden = !on;
    }
    document.getElementById("empty").hidden = true;
    view.log.flush();
    // A question waiting there gets the focus; else the prompt box.
    if (!view.focusQuestion()) view.composer.input.focus();
  }

  tabKeys(e) {
    const list = [...this.views.values()];
    const at = list.indexOf(this.active);
    let next = null;
    if (e.key === "ArrowRight") next = list[(at + 1) % list.length];
    if (e.key === "ArrowLeft") next = list[(at - 1 + list.length) % list.length];
    if (e.key === "Delete" && this.active) { this.closeTab(this.active.id, true); return; }
    if (next) { e.preventDefault(); this.activate(next); next.tab.focus(); }
  }

  closeTab(id, tell) {
    const view = this.views.get(id);
    if (!view) return;
    if (tell) this.conn.request("session/close", { sessionId: id }, id).catch(() => {});
    view.tab.remove();
    view.panel.remove();
    this.views.delete(id);
    // What still comes for it (the end of a reply) is not kept for a later tab.
    this.closed.add(id);
    this.early.delete(id);
    const rest = [...this.views.values()];
    if (rest.length) this.activate(rest[rest.length - 1]);
    else { this.active = null; document.getElementById("empty").hidden = false; }
  }

  retitle(view) {
    if (view.tabLabel) view.tabLabel.textContent = view.title;
    const row = this.sidebar.list.querySelector(`li[data-session-id="${CSS.escape(view.id)}"] .s-title`);
    if (row) row.textContent = view.title;
  }

  busy(view, running) {
    view.tab?.classList.toggle("running", running);
  }

  asking(view, asking) {
    view.tab?.classList.toggle("asking", asking);
    if (!asking && ![...this.views.values()].some((v) => v.questions.size)) this.say("");
  }
}

window.addEventListener("pagehide", () => window.iacCode?.conn?.close());
const app = new App();
window.iacCode = app;
app.connect();
