//! The system prompt: who we are, the environment, how to use the tools, and the project's
//! own instructions (AGENTS.md from the cwd up to the repository root).

use std::fmt::Write;
use std::path::Path;

use crate::config::project::Project;

/// Bytes of project instructions included at most.
const MAX_INSTRUCTIONS: usize = 32 << 10;

/// Builds the system prompt, dated `date` (the session's: a session keeps one prompt).
pub fn system_prompt(
    cwd: &Path,
    model: &str,
    instructions_file: &str,
    tool_names: &[&str],
    date: &str,
) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str(
        "You are iac-code, an AI coding agent for infrastructure-as-code: Terraform and \
         OpenTofu, Kubernetes manifests and Helm charts, Ansible, shell scripts and the CI \
         that runs them. You work in the user's project through tools, carefully and \
         reversibly.\n\n",
    );
    out.push_str("# Environment\n");
    let _ = writeln!(out, "- Working directory: {}", cwd.display());
    let _ = writeln!(out, "- Platform: {} ({})", std::env::consts::OS, std::env::consts::ARCH);
    let _ = writeln!(out, "- Date: {date}");
    let _ = writeln!(out, "- Model: {model}");
    let project = Project::of(cwd);
    if project.in_git {
        let _ = writeln!(out, "- Git repository root: {}", project.root.display());
    }
    let _ = writeln!(out, "- Tools: {}", tool_names.join(", "));
    out.push_str(
        "\n# Using tools\n\
         - Read a file before you edit it; prefer edit_file for targeted changes and \
         write_file for new files.\n\
         - Paths are relative to the working directory unless absolute.\n\
         - Search with glob (file names) and grep (contents) rather than bash find/grep; \
         use bash for programs: terraform fmt/validate/plan, kubectl --dry-run, \
         ansible-lint, tests, git. Commands get no stdin: pass -auto-approve style flags \
         only when the user asked for the change.\n\
         - Hand a self-contained search or investigation to the agent tool (explore) to \
         keep your own context small.\n\
         - Some tools need the user's permission. If a call is denied, do not retry it \
         unchanged: ask the user or take another approach.\n\
         - A tool error is information: read it, fix the arguments or the plan, and go on.\n\
         - For multi-step work keep a plan with update_plan (for example: terraform plan, \
         review the changes with the user, terraform apply): send the whole list, and \
         update each step's status as you go.\n\
         - In plan mode nothing may change: read, then present the plan with \
         exit_plan_mode and let the user decide.\n\
         \n# Infrastructure work\n\
         - Never apply, destroy or deploy real infrastructure unless the user asked for it \
         explicitly; prefer plans, diffs and dry runs.\n\
         - Keep secrets out of files and output; reference variables, vaults or environment \
         variables instead.\n\
         - Follow the conventions already in the project (module layout, naming, provider \
         versions, formatting).\n\
         - Make the smallest change that does the job, and say what you changed and why.\n\
         \n# Answers\n\
         Be concise. Use Markdown. Refer to code as path:line.\n",
    );
    let instructions = project_instructions(&project, instructions_file);
    if !instructions.is_empty() {
        out.push_str("\n# Project instructions\n");
        out.push_str(&instructions);
    }
    out
}

/// Instruction files from the repository root (or the cwd alone) down to the cwd.
fn project_instructions(project: &Project, file_name: &str) -> String {
    let mut out = String::new();
    for dir in &project.dirs {
        for candidate in [dir.join(file_name), dir.join(".iac-code").join(file_name)] {
            let Ok(text) = std::fs::read_to_string(&candidate) else { continue };
            let _ = writeln!(out, "From {}:\n{}\n", candidate.display(), text.trim_end());
        }
    }
    if out.len() > MAX_INSTRUCTIONS {
        let mut end = MAX_INSTRUCTIONS;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push_str("\n[project instructions truncated]\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_environment_and_agents_md() {
        let dir = std::env::temp_dir().join(format!("iac-prompt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::create_dir_all(dir.join("envs/prod")).unwrap();
        std::fs::write(dir.join("AGENTS.md"), "Use tflint.").unwrap();
        std::fs::write(dir.join("envs/prod/AGENTS.md"), "Never touch prod state.").unwrap();
        let cwd = dir.join("envs/prod");
        let prompt = system_prompt(&cwd, "m1", "AGENTS.md", &["read_file"], "2026-01-02");
        assert!(prompt.contains(&format!("Working directory: {}", cwd.display())));
        let root = prompt.find("Use tflint.").expect("root instructions");
        let leaf = prompt.find("Never touch prod state.").expect("leaf instructions");
        assert!(root < leaf, "outermost first");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
