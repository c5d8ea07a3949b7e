//! The plan behind a terraform apply or destroy question: `plan -out` (or the model's own
//! saved plan, copied first) and `show -json`, run like any bash command (own process
//! group, the call's deadline, cancel, live output) in a private scratch directory under
//! the config dir. The call then runs `apply <that plan file>`: exactly what was shown,
//! or, if the state moved on meanwhile, terraform's own "saved plan is stale" error.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::infra::TfCall;
use crate::infra::plan::{PlanSummary, summarise};
use crate::tools::run::{End, execute_in, sandbox_spec};
use crate::tools::{ToolContext, ToolError};

/// The scratch directory's name in the config dir.
const PLANS: &str = "plans";
/// The largest `show -json` read.
const MAX_JSON: u64 = 64 << 20;
/// Output of a failed plan shown to the model, at most.
const MAX_ERROR_CHARS: usize = 8_000;

/// A computed plan.
pub(super) struct Planned {
    pub summary: PlanSummary,
    /// The command that applies exactly this plan.
    pub apply: String,
    /// Files to remove when the call ends.
    pub scratch: Vec<PathBuf>,
    /// The plan file and its bytes as summarised.
    pub shown: (PathBuf, Vec<u8>),
    /// The plan's `show -json`, for the team's policies.
    pub json: Vec<u8>,
}

/// `s` quoted for the shell (bash or `/bin/sh`).
pub(super) fn quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+%".contains(&b)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The private scratch directory (0700).
fn scratch_dir(config_dir: &Path) -> Result<PathBuf, ToolError> {
    let dir = config_dir.join(PLANS);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|err| ToolError::Model(format!("cannot create {}: {err}", dir.display())))?;
    Ok(dir)
}

/// A new private file (0600) in the scratch directory holding `bytes`, named `*.{ext}`.
pub(super) fn scratch_file(config_dir: &Path, ext: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let dir = scratch_dir(config_dir).map_err(|err| std::io::Error::other(format!("{err:?}")))?;
    let path = dir.join(format!("{}.{ext}", uuid::Uuid::new_v4().simple()));
    let mut file =
        crate::sys::own_file::options().write(true).create_new(true).mode(0o600).open(&path)?;
    file.write_all(bytes)?;
    Ok(path)
}

/// Plans `tf` (or reads its saved plan) and summarises the plan.
pub(super) fn plan(
    tf: &TfCall,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Planned, ToolError> {
    let dir = scratch_dir(ctx.config_dir)?;
    let id = uuid::Uuid::new_v4().simple().to_string();
    let plan_file = dir.join(format!("{id}.tfplan"));
    let json_file = dir.join(format!("{id}.json"));
    let scratch = vec![plan_file.clone(), json_file.clone()];
    let result = run_planned(tf, (&plan_file, &json_file), timeout, ctx);
    let (summary, json) = match result.and_then(|()| read_summary(&json_file)) {
        Ok(read) => read,
        Err(err) => {
            remove_scratch(&scratch);
            return Err(err);
        }
    };
    let shown = match std::fs::read(&plan_file) {
        Ok(bytes) => bytes,
        Err(err) => {
            remove_scratch(&scratch);
            return Err(ToolError::Model(format!("cannot read the saved plan: {err}")));
        }
    };
    let apply = command(tf, "apply -input=false", &tf.apply_args, &quote(&path_text(&plan_file)));
    Ok(Planned { summary, apply, scratch, shown: (plan_file, shown), json })
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// `cd DIR && ENV=… terraform GLOBAL… SUB ARGS… LAST`, every word quoted.
fn command(tf: &TfCall, sub: &str, args: &[String], last: &str) -> String {
    let mut text = format!("cd {} &&", quote(&path_text(&tf.dir)));
    for (name, value) in &tf.assigns {
        text.push_str(&format!(" {name}={}", quote(value)));
    }
    text.push_str(&format!(" {}", quote(&tf.program)));
    // The directory is already the working one.
    for global in tf.global.iter().filter(|g| !g.starts_with("-chdir")) {
        text.push_str(&format!(" {}", quote(global)));
    }
    text.push_str(&format!(" {sub}"));
    for arg in args {
        text.push_str(&format!(" {}", quote(arg)));
    }
    if !last.is_empty() {
        text.push_str(&format!(" {last}"));
    }
    text
}

/// Runs the plan in the sandbox a plan gets (the network and the credentials, a copy of
/// the state), writing its files in the sandbox's own directory and moving them to
/// `files` (ours: outside the sandbox's reach) after; as the user where the sandbox
/// cannot be built (the gate asked first then).
fn run_planned(
    tf: &TfCall,
    files: (&Path, &Path),
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    if !crate::child::sandbox().usable() {
        return run(tf, files, timeout, ctx, None);
    }
    let profile = crate::sandbox::Profile::Cloud(crate::sandbox::State::Scratch);
    let spec = sandbox_spec(profile, ctx)?;
    let inside = |path: &Path| spec.tmp.join(path.file_name().unwrap_or_default());
    let (plan_in, json_in) = (inside(files.0), inside(files.1));
    let mut result = run(tf, (&plan_in, &json_in), timeout, ctx, Some(&spec));
    if result.is_ok() {
        for (from, to) in [(&plan_in, files.0), (&json_in, files.1)] {
            if let Err(err) = std::fs::copy(from, to) {
                result = Err(ToolError::Model(format!("cannot keep the plan: {err}")));
            }
        }
    }
    spec.clean();
    result
}

fn run(
    tf: &TfCall,
    (plan_file, json_file): (&Path, &Path),
    timeout: Duration,
    ctx: &ToolContext,
    spec: Option<&crate::sandbox::Spec>,
) -> Result<(), ToolError> {
    let planned = quote(&path_text(plan_file));
    let first = match &tf.plan_file {
        // The model's saved plan, copied first: what is shown is what is applied, even if
        // the file in the project changes while the question is open.
        Some(saved) => {
            let from = tf.dir.join(saved);
            std::fs::copy(&from, plan_file).map_err(|err| {
                ToolError::Model(format!("cannot read the saved plan {}: {err}", from.display()))
            })?;
            String::new()
        }
        None => {
            let mut args = vec![format!("-out={}", path_text(plan_file))];
            if tf.destroy {
                args.push("-destroy".to_string());
            }
            args.extend(tf.plan_args.iter().cloned());
            format!("{} && ", command(tf, "plan -input=false", &args, ""))
        }
    };
    let show = command(tf, "show -json", &[], &planned);
    let script = format!("{first}{show} > {}", quote(&path_text(json_file)));
    let captured = capture(&script, timeout, ctx, spec)?;
    match captured.code {
        Ok(0) => Ok(()),
        Ok(code) => {
            let output = format!("{}\n{}", captured.stderr.trim(), captured.stdout.trim());
            Err(ToolError::Model(format!(
                "The plan failed (exit code {code}): nothing was asked and nothing applied.\n{}",
                crate::text::clip(output.trim(), MAX_ERROR_CHARS)
            )))
        }
        Err(why) => Err(ToolError::Model(format!(
            "The plan was stopped ({why}): nothing was asked and nothing applied."
        ))),
    }
}

/// How a command run for the gate ended: its exit code (`None`: cancelled or
/// timed out, and why), and its output.
pub(super) struct Captured {
    pub code: Result<i32, String>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` as the bash tool would (its own process group, the deadline, the
/// cancel, live output to the client) and returns what it printed.
pub(super) fn capture(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    spec: Option<&crate::sandbox::Spec>,
) -> Result<Captured, ToolError> {
    let run = execute_in(command, timeout, ctx, spec)?;
    let code = match run.end {
        End::Exited(status) => Ok(status.code().unwrap_or(128 + status.signal().unwrap_or(0))),
        End::TimedOut => Err(format!("timed out after {} s", timeout.as_secs_f64())),
        End::Cancelled => Err("cancelled by the user".to_string()),
    };
    Ok(Captured { code, stdout: run.stdout.text(), stderr: run.stderr.text() })
}

fn read_summary(json_file: &Path) -> Result<(PlanSummary, Vec<u8>), ToolError> {
    let mut bytes = Vec::new();
    std::fs::File::open(json_file)
        .and_then(|f| f.take(MAX_JSON + 1).read_to_end(&mut bytes))
        .map_err(|err| ToolError::Model(format!("cannot read the plan's JSON: {err}")))?;
    if bytes.len() as u64 > MAX_JSON {
        return Err(ToolError::Model("the plan's JSON is over 64 MiB: not shown".into()));
    }
    let summary = summarise(&bytes)
        .map_err(|err| ToolError::Model(format!("cannot read the plan: {err}")))?;
    Ok((summary, bytes))
}

/// Removes a call's scratch files (a saved plan and its JSON).
pub fn remove_scratch(files: &[PathBuf]) {
    for file in files {
        let _ = std::fs::remove_file(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(quote("-var-file=prod.tfvars"), "-var-file=prod.tfvars");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
