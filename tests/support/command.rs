//! The one way tests start the real `iac-code` binary, in the manner of ripgrep's
//! `TestCommand`: [`iac_code`] gives a `std::process::Command` for a [`Workspace`] (cwd
//! the project, an environment cleared but for PATH, HOME and IAC_CODE_CONFIG_DIR), and
//! [`TestCommand::fake_llm`] points it at a [`FakeLlm`]. What a caller deliberately adds
//! (arguments, IAC_CODE_LOG, more variables, stdio) stays at the call site.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use super::fake_llm::FakeLlm;
use super::workspace::Workspace;

/// Path of the binary under test: `IAC_CODE_BIN` when set (`.ci/run` runs the suite
/// again against the static musl release binary users get), else the build of this crate.
pub static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("IAC_CODE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_iac-code").to_string())
});

/// `iac-code` run in `ws.project()` with a cleared environment holding only PATH (kept
/// from the test process), HOME=`ws.root()` and IAC_CODE_CONFIG_DIR=`ws.config()`.
pub fn iac_code(ws: &Workspace) -> Command {
    let mut command = Command::new(&*BIN);
    command.current_dir(ws.project()).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.env("HOME", ws.root()).env("IAC_CODE_CONFIG_DIR", ws.config());
    // The suite against another session store (`.ci/run` runs it on Redis too): each
    // workspace gets its own key prefix, so tests never see each other's sessions.
    if let Some(store) = store_under_test() {
        let name = ws.root().file_name().map(|n| n.to_string_lossy().into_owned());
        let prefix: String = name
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        command
            .env("IAC_CODE_SESSION_STORE", store)
            .env("IAC_CODE_REDIS_PREFIX", format!("{prefix}:"));
    }
    command
}

/// Runs `command` with `stdin` written to its input (then closed), its output piped;
/// what it exited with and wrote.
pub fn run_with_input(command: &mut Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// An output's exit code (-1 for a signal), stdout and stderr as text.
pub fn code_and_texts(out: &Output) -> (i32, String, String) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Whether the suite runs on the file store; a test of the file store's own files says
/// it is skipped otherwise (under CI too: `.ci/run` runs the suite again on Redis).
pub fn on_file_store() -> bool {
    let Some(store) = store_under_test() else { return true };
    let why = format!("it checks the file store's files, and the sessions are in {store}");
    super::skip::skip(&why, super::skip::Ci::Skips);
    false
}

/// The session store the suite runs against, when not the file store
/// (`IAC_TEST_SESSION_STORE`, a Redis URL).
pub fn store_under_test() -> Option<String> {
    std::env::var("IAC_TEST_SESSION_STORE").ok().filter(|s| !s.is_empty())
}

/// The environment that points the agent at `llm`: the OpenAI-compatible provider, its
/// base URL, a test key and the model `fake-model`.
pub fn llm_env(llm: &FakeLlm) -> Vec<(String, String)> {
    vec![
        ("IAC_CODE_PROVIDER".to_owned(), "openai_compatible".to_owned()),
        ("IAC_CODE_BASE_URL".to_owned(), llm.base_url()),
        ("IAC_CODE_API_KEY".to_owned(), "sk-test".to_owned()),
        ("IAC_CODE_MODEL".to_owned(), "fake-model".to_owned()),
    ]
}

/// Test-only additions to `std::process::Command`.
pub trait TestCommand {
    /// Adds [`llm_env`] for `llm`.
    fn fake_llm(&mut self, llm: &FakeLlm) -> &mut Self;
}

impl TestCommand for Command {
    fn fake_llm(&mut self, llm: &FakeLlm) -> &mut Self {
        self.envs(llm_env(llm))
    }
}
