//! One test binary: black-box tests that spawn the real `iac-code` and speak the wire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared harness: fake LLM, ACP client, schema validation, workspaces.
mod support;

// Command line, help, version, exit codes, man page drift.
mod cli;
// JSON-RPC framing, errors, and the session methods that need no LLM.
mod protocol;
// The same rules in process, over an in-memory connection: no binary, no socket.
mod dispatch;
// Streamed conversations, tool calls, stop reasons, usage.
mod prompt;
// Bursts of streamed pieces: one update each, in order, every character kept.
mod streaming;
// The permission gate and session modes.
mod permission;
// The infrastructure gate: tiers, plans in the question, rules, state files (real terraform).
mod infra;
// Policy as code: the team's Rego on the gate's plans and manifests, policy eval|test|list.
mod policy;
// Issue 32: the parser fails closed; each hole asks or is refused, with real terraform.
mod gate_holes;
// Cancellation and shutdown.
mod cancel;
// The file and search tools, and path judgement.
mod tools;
// The bash tool: output, caps, timeout and cancel of whole process trees.
mod bash;
// web_fetch against a local HTTP fixture.
mod web_fetch;
// The agent tool and its sub-agents.
mod sub_agent;
// Durable sessions: journal, load, resume, fork, delete, list, commands, compaction.
mod sessions;
// The HTTP+SSE transport.
mod http;
// Session streams opened before their session is known, and their cap.
mod http_streams;
// The WebSocket profile of `/acp`.
mod ws;
// Commands for scripts: -p, doctor, sessions, install.sh.
mod scripts;
// The Anthropic Messages provider, and proxies.
mod anthropic;
// Provider failures: configuration, HTTP errors, retries, broken streams.
mod provider;
// The client's files and terminals, through a test editor.
mod client_tools;
// What an editor sees: plans, leaving plan mode, session info, $/cancel_request.
mod editor;
// The hardening: other users, internal addresses, races, secrets, daemons, framing.
mod security;
// MCP servers over stdio, Streamable HTTP and SSE: tools, the gate, failures, clean-up.
mod mcp;
// MCP over HTTP, ACP over HTTP, reopened sessions, settings and project files, `iac-code mcp`.
mod mcp_more;
// What MCP entries may make the node do: approved programs, internal URLs, a client's stdio.
mod mcp_trust;
// `/health` without the token: the status, never the host or the pid.
mod health;
// What one MCP server can cost a session: definitions, names, images, logs, streams.
mod mcp_caps;
// Titles the client gets: one printable bounded line, whose claim it is first.
mod titles;
// Agent Skills: the catalog, the skill tool, approval, commands, narrowing, compaction.
mod skills;
// The token economy: a byte-stable prefix, cache breakpoints and hints, usage and cost.
mod tokens;
// Sessions in a real Redis shared by several nodes: leases, fencing, failover.
mod redis_store;
// Which mode a loaded, imported or migrated session starts in; records checked on the way.
mod mode_trust;
// Nodes behind a real HAProxy (deploy/), failover without losing history.
mod cluster;
// Issue 33: secrets out of the model's context, restored in tool input (real terraform).
mod redact;
// Project memory: written in one session, in the next one's system prompt; no secrets.
mod memory;
// Hooks: PreToolUse blocks in bypass mode, terraform fmt after writes, timeouts, Stop loops.
mod hooks;
// The terminal client through a pseudo-terminal, its screen read with vt100.
mod tui;
// Project rules checked over the source tree.
mod tidy;
// The ACP registry entry (deploy/registry/): schema, rules, Cargo.toml, the icon.
mod registry;
// The bundled Agent Skills: format, tools named, guarded commands, links.
mod bundled_skills;
// The bundled skills' examples run for real (terraform, kubectl, helm, ansible when present).
mod bundled_skills_run;
// Schema 1.21's stable features: message ids, additional directories, boolean options.
mod acp_current;
// Signing in: `iac-code login` through a pty, `logout`, ACP's authenticate and logout.
mod login;
// ask_user: a form through elicitation/create (accepted, declined, cancelled), or the
// question as the turn's last message when the client renders no form, and in -p.
mod ask_user;
// _session/steering: into a running turn, a new turn when idle, promptRequired, replay.
mod steering;
// The OS sandbox: secrets, network, protected files, processes, escapes; its fallback.
mod sandbox;
