//! iac-code: an AI coding agent for infrastructure-as-code that speaks the Agent Client
//! Protocol. `main.rs` is a thin entry; everything testable lives here.

pub mod acp;
pub mod agent;
pub mod cancel;
pub mod child;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub mod history;
pub mod hooks;
pub mod infra;
pub mod jsonrpc;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod policy;
pub mod provider;
pub mod rules;
pub mod sandbox;
pub mod secret;
mod serve;
pub mod session;
pub mod shell;
pub mod skills;
pub mod sync;
mod sys;
pub mod text;
pub mod time;
pub mod tools;
pub mod transport;
pub mod tui;
pub mod web;

pub use serve::serve_acp;
