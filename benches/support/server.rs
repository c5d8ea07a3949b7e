//! The benches' HTTP server: the binary started as `acp --transport http --port 0` (the
//! caller's command, its arguments and environment) and the `host:port` it says it
//! listens on.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Starts `command` with stdout piped and stderr dropped, and reads the first line it
/// prints (`iac-code listening on http://HOST:PORT/acp`): the child and `HOST:PORT`.
pub fn start_http(command: &mut Command) -> (Child, String) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("iac-code listening on ").expect("the server's address");
    let addr = url.trim_start_matches("http://").trim_end_matches("/acp").to_string();
    (child, addr)
}
