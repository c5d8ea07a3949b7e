//! The commands for scripts, each run once from `main` and printing to stdout: `-p` (one
//! turn), `doctor`, `sessions`, `config`, `mcp`, `skills`, `sandbox`, `policy`, `login`,
//! `logout`. The ACP server itself is wired in `serve`.

pub mod chat;
pub mod config;
pub mod doctor;
pub mod login;
pub mod mcp;
pub mod oneshot;
pub mod policy;
pub mod sandbox;
pub mod sessions;
pub mod skills;
pub(crate) mod transfer;
