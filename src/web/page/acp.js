// One ACP connection over our HTTP transport, as any client speaks it: POST /acp for
// everything the page sends (initialize answers at once with Acp-Connection-Id, the rest
// 202), GET /acp for the connection's stream and one stream per session, read with fetch
// (EventSource cannot send the token). A dropped stream comes back with Last-Event-ID and
// nothing is shown twice; a connection the server no longer knows (a restart, another
// node) is reported to `onLost`, which starts a new one.

import { readEvents } from "./sse.js";

const RETRY_MS = [100, 250, 500, 1000, 2000, 4000];

/** The server's error codes (`{"error": why, "code": code}`) that mean it no longer knows
 *  this connection: start a new one. The page acts on codes alone, never on the words. */
export const LOST_CODES = new Set(["no_connection", "unknown_connection", "connection_closed"]);

export class AuthError extends Error {}
export class LostError extends Error {}

export class Connection {
  constructor(token, handlers) {
    this.token = token;
    this.handlers = handlers; // onNotify(msg), onRequest(msg) -> Promise<result>, onLost(why), onState(s)
    this.id = null;
    this.nextId = 1;
    this.pending = new Map();
    this.streams = new Map(); // scope key -> {abort, lastId}
    this.seen = new Set();
    this.seenOrder = [];
    this.closed = false;
    this.lost = false;
  }

  headers(extra) {
    const h = { "Content-Type": "application/json", ...extra };
    if (this.token) h.Authorization = "Bearer " + this.token;
    return h;
  }

  /** `initialize`; resolves with its result once the connection stream is open. */
  async start(params) {
    const body = { jsonrpc: "2.0", id: 0, method: "initialize", params };
    const res = await fetch("/acp", { method: "POST", headers: this.headers(), body: JSON.stringify(body) });
    if (res.status === 401) throw new AuthError("the server wants a token");
    if (!res.ok) throw new Error(`initialize: HTTP ${res.status} ${(await errorBody(res)).why}`);
    this.id = res.headers.get("Acp-Connection-Id");
    const answer = await res.json();
    if (answer.error) throw new Error(answer.error.message);
    await this.openStream(null);
    return answer.result;
  }

  /** Opens (or keeps) the stream of `sessionId` (null: the connection's, the one the page
   *  uses); resolves once the server has answered, so a POST after it has its answers on it. */
  openStream(sessionId) {
    const key = sessionId || "";
    const known = this.streams.get(key);
    if (known) return known.ready;
    const stream = { lastId: null, abort: null, stopped: false, failures: 0 };
    stream.ready = new Promise((resolve, reject) => { stream.resolve = resolve; stream.reject = reject; });
    this.streams.set(key, stream);
    this.runStream(sessionId, stream);
    return stream.ready;
  }

  closeStream(sessionId) {
    const stream = this.streams.get(sessionId || "");
    if (!stream) return;
    stream.stopped = true;
    this.streams.delete(sessionId || "");
    if (stream.abort) stream.abort.abort();
  }

  async runStream(sessionId, stream) {
    while (!stream.stopped && !this.closed) {
      stream.abort = new AbortController();
      const extra = { Accept: "text/event-stream", "Acp-Connection-Id": this.id };
      if (sessionId) extra["Acp-Session-Id"] = sessionId;
      if (stream.lastId !== null) extra["Last-Event-ID"] = stream.lastId;
      try {
        const res = await fetch("/acp", { headers: this.headers(extra), signal: stream.abort.signal, cache: "no-store" });
        if (res.status === 401) { this.fail(new AuthError("the token was refused")); return; }
        if (res.status === 400 || res.status === 404) {
          const { why, code } = await errorBody(res);
          if (LOST_CODES.has(code)) { this.fail(new LostError(why)); return; }
          stream.reject(new Error(why));
          this.streams.delete(sessionId || "");
          return;
        }
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        stream.resolve();
        if (stream.failures) this.handlers.onState("connected");
        stream.failures = 0;
        await readEvents(res, (ev) => this.onEvent(stream, ev));
      } catch (err) {
        if (stream.stopped || this.closed) return;
      }
      if (stream.stopped || this.closed) return;
      // The stream ended or broke: come back after the last event we have.
      this.handlers.onState("reconnecting");
      const wait = RETRY_MS[Math.min(stream.failures, RETRY_MS.length - 1)];
      stream.failures += 1;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  onEvent(stream, ev) {
    // The server says events we asked for are no longer in its replay buffer: what the
    // page shows would have a hole, so it starts over (new connection, sessions loaded
    // again from their journals) and lets this connection go.
    if (ev.event === "replay_gap") {
      this.fail(new LostError(parsed(ev.data).error || "events were lost"), true);
      return;
    }
    if (ev.event === "error") {
      this.handlers.onNotice?.(`The server ended a stream: ${parsed(ev.data).error || ev.data}`);
      return;
    }
    if (ev.event !== "message") return;
    if (ev.id !== null) {
      const n = Number(ev.id);
      if (stream.lastId !== null && n <= stream.lastId) return;
      stream.lastId = n;
      if (this.seen.has(n)) return;
      this.seen.add(n);
      this.seenOrder.push(n);
      if (this.seenOrder.length > 20000) this.seen.delete(this.seenOrder.shift());
    }
    let msg;
    try { msg = JSON.parse(ev.data); } catch { return; }
    this.dispatch(msg);
  }

  dispatch(msg) {
    if (msg.method && msg.id !== undefined) {
      this.answerRequest(msg);
    } else if (msg.method) {
      this.handlers.onNotify(msg);
    } else if (msg.id !== undefined && this.pending.has(msg.id)) {
      const { resolve, reject } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) reject(Object.assign(new Error(msg.error.message), { code: msg.error.code, data: msg.error.data }));
      else resolve(msg.result);
    }
  }

  async answerRequest(msg) {
    const sessionId = msg.params && msg.params.sessionId;
    let reply;
    try {
      reply = { jsonrpc: "2.0", id: msg.id, result: await this.handlers.onRequest(msg) };
    } catch (err) {
      reply = { jsonrpc: "2.0", id: msg.id, error: { code: err.code || -32603, message: String(err.message || err) } };
    }
    this.post(reply, sessionId).catch(() => {});
  }

  fail(err, tell = false) {
    if (this.lost) return;
    this.lost = true;
    const bye = this.close(tell);
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
    // After the server let this connection go, so that its sessions are free to load.
    bye.finally(() => this.handlers.onLost(err));
  }

  async post(body, sessionId) {
    const extra = { "Acp-Connection-Id": this.id };
    if (sessionId) extra["Acp-Session-Id"] = sessionId;
    let res;
    try {
      res = await fetch("/acp", { method: "POST", headers: this.headers(extra), body: JSON.stringify(body) });
    } catch (err) {
      throw new Error("the server cannot be reached: " + err.message);
    }
    if (res.status === 401) { this.fail(new AuthError("the token was refused")); throw new AuthError("unauthorized"); }
    if (res.status === 400 || res.status === 404) {
      const { why, code } = await errorBody(res);
      if (LOST_CODES.has(code)) { this.fail(new LostError(why)); }
      throw Object.assign(new Error(why), { code });
    }
    if (!res.ok) throw new Error(`HTTP ${res.status} ${(await errorBody(res)).why}`);
  }

  /** A request; resolves with its result (an error rejects, with `code`). */
  request(method, params, sessionId) {
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.post({ jsonrpc: "2.0", id, method, params }, sessionId).catch((err) => {
      const waiting = this.pending.get(id);
      if (waiting) { this.pending.delete(id); waiting.reject(err); }
    });
    return answer;
  }

  notify(method, params, sessionId) {
    return this.post({ jsonrpc: "2.0", method, params }, sessionId);
  }

  /** Ends the connection (DELETE when `tell`) and its streams; resolves when done. */
  close(tell = true) {
    this.closed = true;
    for (const stream of this.streams.values()) { stream.stopped = true; stream.abort?.abort(); }
    this.streams.clear();
    if (!tell || !this.id) return Promise.resolve();
    return fetch("/acp", { method: "DELETE", headers: this.headers({ "Acp-Connection-Id": this.id }), keepalive: true })
      .catch(() => {});
  }
}

/** An error response's words (to show) and code (to act on). */
async function errorBody(res) {
  try {
    const body = await res.json();
    return { why: body.error || "", code: body.code || "" };
  } catch {
    return { why: "", code: "" };
  }
}

function parsed(data) {
  try { return JSON.parse(data) || {}; } catch { return {}; }
}
