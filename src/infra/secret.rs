//! The secrets a command prints or carries: the output of the programs without a family of
//! their own here (vault, gh, sops, 1Password's op, pass, ansible-vault view), and any
//! command whose own words hold a secret (`secret::find`, the one notion of what a secret
//! is: `curl -H 'Authorization: Bearer ghp_…'`, `echo AKIA…`). The families judge their
//! own (terraform state and outputs, kubectl secrets, cloud tokens). The tier is not touched.

use super::judge::{Cmd, Out};
use super::word::words;

/// How the reason of a command whose own words hold a secret starts (the gate tells it
/// from the reasons of commands that print secrets).
pub const HOLDS_SECRET: &str = "the command itself holds a secret";

/// Marks `cmd` as printing secrets when it does.
pub(super) fn check(cmd: &Cmd, out: &mut Out) {
    let mut words = cmd.positionals().map(|(_, w)| w);
    let first = words.next().unwrap_or("");
    let second = words.next().unwrap_or("");
    let reason = match (cmd.name, first, second) {
        ("vault", "kv", "get" | "list") | ("vault", "read" | "print", _) => {
            "vault prints secret values"
        }
        ("vault", "token", "create" | "lookup") => "vault prints a token",
        ("gh", "auth", "token") => "gh auth token prints the GitHub token",
        ("sops", "decrypt", _) => "sops prints the decrypted file",
        ("sops", ..) if cmd.has_any(words!("-d --decrypt")) || cmd.short("d") => {
            "sops prints the decrypted file"
        }
        ("op", "read" | "inject", _) | ("op", "item", "get") => "op prints secret values",
        ("pass" | "gopass", "show", _) => "pass prints a password",
        ("pass" | "gopass", w, "") if !w.is_empty() && !matches!(w, "ls" | "list" | "find") => {
            "pass prints a password"
        }
        ("ansible-vault", "view", _) => "ansible-vault prints the decrypted file",
        _ => {
            let line = super::word::line(cmd.program, cmd.args);
            if let Some(why) = crate::secret::find(&line) {
                out.secret(format!("{HOLDS_SECRET}: {why}"));
            }
            return;
        }
    };
    out.secret(reason);
}
