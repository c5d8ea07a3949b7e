//! The one way tests start the real `iac-code` binary, in the manner of ripgrep's
//! `TestCommand`: [`iac_code`] gives a `std::process::Command` for a [`Workspace`] (cwd
//! the project, an environment cleared but for PATH, HOME and IAC_CODE_CONFIG_DIR), and
//! [`TestCommand::fake_llm`] points it at a [`FakeLlm`]. What a caller deliberately adds
//! (arguments, IAC_CODE_LOG, more variables, stdio) stays at the call site.

use std::process::Command;

use super::fake_llm::FakeLlm;
use super::workspace::Workspace;

/// Path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_iac-code");

/// `iac-code` run in `ws.project()` with a cleared environment holding only PATH (kept
/// from the test process), HOME=`ws.root()` and IAC_CODE_CONFIG_DIR=`ws.config()`.
pub fn iac_code(ws: &Workspace) -> Command {
    let mut command = Command::new(BIN);
    command.current_dir(ws.project()).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.env("HOME", ws.root()).env("IAC_CODE_CONFIG_DIR", ws.config());
    command
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
