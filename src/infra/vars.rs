//! Variables whose value changes which code runs or which files and configurations programs
//! read and write (`PATH`, `LD_PRELOAD`, `KUBECONFIG`, `TF_LOG_PATH`, `GOTOOLCHAIN`): setting
//! one (`X=… cmd`, `export`, `env`, `read`, `printf -v`) makes a script opaque. Variables that
//! name a file programs write (`GIT_TRACE*`, `*_LOG_PATH`, `HISTFILE`) make a command at
//! least a mutation, and their value a written path. Knows no program.

use std::path::Path;

use super::judge::Out;
use super::word::{Words, words};
use super::{Tier, path};

/// Variables that change which code runs, whatever their value.
const RISKY: Words = words!(
    "PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PROMPT_COMMAND IFS \
    PS0 PS1 PS2 PS4 SHELLOPTS BASHOPTS CDPATH HOME SHELL ZDOTDIR PYTHONPATH PYTHONSTARTUP \
    PYTHONHOME PYTHONUSERBASE NODE_OPTIONS PERL5OPT PERL5LIB RUBYOPT RUBYLIB GIT_SSH \
    GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_ASKPASS GIT_EXEC_PATH GIT_DIR \
    PAGER EDITOR VISUAL SSH_ASKPASS SUDO_ASKPASS MANPAGER LESSOPEN LESSCLOSE LESS BROWSER \
    KUBECTL_EXTERNAL_DIFF KUBE_EDITOR HELM_PLUGINS KUBECONFIG GOFLAGS GOTOOLCHAIN GOPROXY \
    GOSUMDB GONOSUMDB GONOSUMCHECK GOPRIVATE GONOPROXY GOINSECURE GOENV GOEXPERIMENT CC CXX CPP \
    FC AR LD PKG_CONFIG TF_CLI_CONFIG_FILE TF_PLUGIN_CACHE_DIR CLOUDSDK_PYTHON \
    GOOGLE_APPLICATION_CREDENTIALS BUNDLE_GEMFILE JAVA_TOOL_OPTIONS _JAVA_OPTIONS \
    JDK_JAVA_OPTIONS MAKEFLAGS MAKEFILES GNUMAKEFLAGS RUSTC RUSTC_WRAPPER \
    RUSTC_WORKSPACE_WRAPPER OPENSSL_CONF WGETRC ANSIBLE_LIBRARY ANSIBLE_INVENTORY"
);

/// Name prefixes of such variables.
const PREFIXES: &[&str] = &["DYLD_", "GIT_CONFIG", "LD_", "CGO_", "TF_CLI_ARGS"];

/// Name endings of variables that name a file, a directory, a configuration or a program.
const SUFFIXES: &[&str] = &[
    "_PATH", "_FILE", "_DIR", "_DIRS", "_CONFIG", "_HOME", "_COMMAND", "_CMD", "_PROGRAM",
    "_EDITOR", "_PAGER", "_ASKPASS", "_PLUGINS",
];

/// Whether setting this variable changes which code runs or which files programs use. Terraform
/// input variables (`TF_VAR_*`) and plain settings (`TF_LOG`, `TF_WORKSPACE`, `AWS_PROFILE`,
/// `AWS_REGION`) are harmless.
pub(super) fn risky_var(name: &str) -> bool {
    always(name) || named_path(name)
}

/// Whether a variable set by the script reaches the programs it runs: assigned before a
/// program (`X=1 cmd`), or a bare assignment (`X=1`) of a variable that is exported already
/// (in `env`) or that changes the shell itself.
pub(super) fn reaches(name: &str, bare: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
    if !risky_var(name) {
        return false;
    }
    !bare || always(name) || env(name).is_some()
}

/// The listed variables and prefixes.
fn always(name: &str) -> bool {
    let npm = name.get(..11).is_some_and(|p| p.eq_ignore_ascii_case("npm_config_"));
    RISKY.has(name) || PREFIXES.iter().any(|p| name.starts_with(p)) || npm
}

/// Variables named for a path or a program (`TF_LOG_PATH`, `AWS_CONFIG_FILE`); not `TF_VAR_*`.
fn named_path(name: &str) -> bool {
    !name.starts_with("TF_VAR_") && SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Variables whose value is a file the program writes (a trace, a log, a history): even a
/// read-tier program (`GIT_TRACE=terraform.tfstate git --version`) writes there.
const WRITES: Words = words!(
    "HISTFILE LESSHISTFILE SSLKEYLOGFILE NODE_REPL_HISTORY PSQL_HISTORY \
    SQLITE_HISTORY MYSQL_HISTFILE PYTHONHISTFILE REDISCLI_HISTFILE GNUPLOT_HISTORY"
);

/// Name endings of such variables.
const WRITES_SUFFIXES: &[&str] =
    &["_LOG_PATH", "_LOG_FILE", "_LOGFILE", "_HISTFILE", "_TRACE_FILE"];

/// Whether a variable names a file programs write (`GIT_TRACE*`, `TF_LOG_PATH`, `HISTFILE`).
pub(super) fn writes_file(name: &str) -> bool {
    name.starts_with("GIT_TRACE")
        || WRITES.has(name)
        || WRITES_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// A variable set for the programs that follow: when it names a file they write, the
/// command is at least a mutation and the file a written path (terraform state: destroy).
/// A value that is a switch or a descriptor (`1`, `true`, `2`) writes no file.
pub(super) fn written(name: &str, value: &str, cwd: &Path, out: &mut Out) {
    if !writes_file(name) {
        return;
    }
    out.raise(Tier::Mutate, format!("sets {name}: the program writes where it says"));
    let switch = ["", "true", "false", "yes", "no", "on", "off"]
        .iter()
        .any(|s| value.eq_ignore_ascii_case(s))
        || value.bytes().all(|c| c.is_ascii_digit());
    if switch || matches!(value, "/dev/null" | "/dev/stderr" | "/dev/stdout") {
        return;
    }
    if value.contains(['$', '`']) {
        out.raise(Tier::Mutate, format!("sets {name} to a hidden path: {value}"));
        return;
    }
    match path::resolve(value, cwd, out.home) {
        Some(file) => out.write(file),
        None => out.raise(Tier::Mutate, format!("sets {name} to a path in an unknown home")),
    }
}
