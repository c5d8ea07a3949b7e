//! Infrastructure knowledge: judges every command of a shell script by what it does to
//! infrastructure (`Tier`), with the paths it names, the prefixes an "always" answer may
//! remember, the secrets a command prints and the terraform call the gate may plan first.
//! Pure: it never asks anyone and does no I/O beyond `Path::exists`, resolving a program
//! that is a symbolic link and a bounded look for terraform state where a read with a
//! pattern or a recursive walk goes (`state.rs`); it knows programs, `shell` knows syntax.

mod aws;
mod cloud;
mod dev;
mod files;
mod finish;
mod git;
mod glob;
mod judge;
mod kube;
mod path;
pub mod plan;
mod program;
mod programs;
mod scan;
pub mod scope;
mod secret;
mod stacks;
mod state;
mod stream;
mod terraform;
#[cfg(test)]
mod tests;
mod unix;
mod vars;
mod walk;
mod word;
mod wrappers;

use std::path::{Path, PathBuf};

use crate::shell::{self, Script};

pub use kube::subcommand_at as kube_subcommand_at;
pub use path::holds_state;
pub use programs::runs_programs;
pub use secret::HOLDS_SECRET;
pub use state::terraform_owned;

use judge::{Cmd, Out};
use program::Program;
use walk::Walk;

/// How much a command can change, from nothing to losing infrastructure; a script takes the
/// highest tier of its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Changes nothing (`ls`, `terraform show`, `kubectl get`).
    Read,
    /// Computes a change without making it (`terraform plan`, `kubectl apply --dry-run`).
    Plan,
    /// Changes files, repositories or live infrastructure in a way that can be undone or
    /// repaired (`git commit`, `kubectl apply`, `npm install`); anything unknown.
    Mutate,
    /// May lose data or infrastructure (`terraform destroy`, `rm -rf`, `git push --force`).
    Destroy,
}

impl Tier {
    /// The tier's id, for settings and messages.
    pub fn id(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Plan => "plan",
            Tier::Mutate => "mutate",
            Tier::Destroy => "destroy",
        }
    }
}

/// How a command uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathUse {
    Read,
    Write,
}

/// What `classify` found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub tier: Tier,
    /// Why the tier is what it is, one short phrase each, most serious first, e.g.
    /// "terraform destroy deletes every resource in its state", "rm -r outside build output",
    /// "the program is hidden: $t". Empty for plain reads.
    pub reasons: Vec<String>,
    /// What an "always" answer remembers: the prefix (program basename + subcommand, e.g.
    /// "terraform fmt", "git commit", "make test", "kubectl apply", "npm install") of each
    /// command at Mutate tier, deduplicated; a program of the project's keeps its path
    /// ("./deploy.sh"). `None` when some mutate-tier command has no safe prefix (opaque
    /// script, dynamic program, interpreter with inline code, a command that runs what its
    /// words or files say: `make -f`, `git rebase -x`, `git config` setting a value, `ssh -o`,
    /// `docker run -v`, `npx`/`uv run` and the other package runners, `kubectl exec`) — then
    /// "always" is not offered. Destroy tier never gets "always" (the gate enforces it; still
    /// filled).
    pub prefixes: Option<Vec<String>>,
    /// Each simple command as one normalised line: program basename, then the words, space
    /// separated (`/usr/bin/git  status` → "git status"); bare assignments left out. A program
    /// of the project's (written as a relative path, or inside the project or /tmp) keeps its
    /// path (`./bin/terraform plan`), and brings a second line by its basename ("terraform
    /// plan"); a link outside the project is named by its target's basename.
    /// Rules such as `bash(git *)` are matched against these lines: the rules engine denies if
    /// any line matches a deny rule and allows only if every line matches an allow rule. So a
    /// command may bring more lines, right after its own: the payload of a wrapper that runs
    /// one (`npx terraform destroy` → also "terraform destroy"; also busybox, uv run,
    /// systemd-run …), and for terraform, tofu and terragrunt the canonical form when it
    /// differs: global options dropped, `apply -destroy` as `destroy`, terragrunt's
    /// `run-all`/`run --all`/`*-all`/`stack run` dropped (`terraform -chdir=. apply -destroy
    /// -auto-approve` → also "terraform destroy -auto-approve"). Both forms must pass an
    /// allow rule; either may meet a deny rule.
    pub lines: Vec<String>,
    /// The commands not known word for word, as patterns for the deny and ask rules: each
    /// hidden part (`$x`, `${…}`, `$(…)`, a backtick, a glob in the program) written `*`
    /// (`$t M` → "* M", `/usr/bin/tou?h x` → "*h x"); the code of `eval` and of `sh -c` with a
    /// hidden string as a command of its own ("*"). A rule matches such a pattern when some
    /// command it may stand for matches the rule, so a hidden program never slips past a
    /// deny rule on any program.
    pub patterns: Vec<String>,
    /// Paths the commands name, absolute (resolved against the cwd in effect, `~/` expanded
    /// with HOME from `env`), with how they are used: every non-option argument of a read- or
    /// plan-tier command that looks like a path (contains `/`, starts with `~` or `.`, or has
    /// an extension) or that exists relative to the cwd; redirect targets (`>`: Write,
    /// `<`: Read; `/dev/null`, `/dev/stdout`, `/dev/stderr` left out); the written paths of
    /// file-only mutations (and of `rm`, `chmod` and the like) and every file a command is
    /// known to write whatever its tier (`plan -out=FILE`, `kubectl --log-file FILE`, `aws s3api
    /// get-object … FILE`, `git config`'s file); writing terraform state (`*.tfstate*`) is
    /// Destroy, whoever writes it. The caller judges them against
    /// the path rules (outside the project, sensitive files such as ~/.aws/credentials or
    /// *.tfstate ask every time).
    pub paths: Vec<(PathBuf, PathUse)>,
    /// The tier is Mutate and every mutation in it only changes files in known paths
    /// (redirections, `touch`, `mkdir`, `cp`, `mv`, `tee`, `sed -i`, `ln`, `terraform fmt`,
    /// non-recursive `rm`): accept_edits mode may run it when all written paths are inside the
    /// project. False for read and plan tiers (nothing to accept) and for Destroy, and when a
    /// file-changing command is given a pattern (`rm -f *.log`: which files it names is not
    /// known here; one that may name terraform state, like `*`, is Destroy).
    pub file_only: bool,
    /// Directories whose files the commands execute or feed to code of theirs (terraform/tofu/
    /// terragrunt subcommands other than version/fmt/help, and the ansible programs: the
    /// project (the session's cwd) and their own directory, since local modules and inventory
    /// scripts may live anywhere in it; `kubectl diff`, `make`, test runners, `./script.sh`,
    /// `python x.py`, a program of the project's, a `--kubeconfig` file's directory; git: the
    /// `.git` of the directory it runs in and of the nearest repository above it, and
    /// `--git-dir`/`--work-tree`). The
    /// gate asks before such a read- or plan-tier command runs if a file below one of them was
    /// written in this session without a person's answer.
    pub runs_code_in: Vec<PathBuf>,
    /// A lone terraform/tofu apply or destroy (the only command of the script, maybe after
    /// `cd DIR &&`, with env assignments), whose plan the gate computes before asking. Never
    /// for a program of the project's (`./bin/terraform`) nor a wrapper's payload (`npx
    /// terraform`): the gate would run that program itself before asking.
    pub terraform: Option<TfCall>,
    /// Whether any part could not be understood (parser opaque, hidden program, interpreter code).
    pub opaque: bool,
    /// Why the command's output holds secrets, when it does ("terraform state pull prints the
    /// state, which holds every attribute in plain text"): `terraform state pull`, `output
    /// -json|-raw`, `show -json`; `kubectl config view --raw`, `kubectl get secret -o yaml`;
    /// cloud access tokens and secret values (`gcloud auth print-access-token`, `aws
    /// secretsmanager get-secret-value`, `aws ssm get-parameter --with-decryption` …); `pulumi
    /// … --show-secrets`, `vault kv get`, `helm get values --all`, `sops -d`. The tier stays what
    /// it is (Read for most); the gate asks, without offering "always", in every mode but
    /// bypass, since the output goes to the model.
    pub secret: Option<String>,
    /// The highest tier among the script's infrastructure clients (terraform, tofu,
    /// terragrunt, pulumi, kubectl, oc, helm, aws, gcloud, gsutil, az, ansible*), when the
    /// script was understood whole, holds at least one, and its other commands only read:
    /// what may reach the network with the user's credentials in the sandbox, for the
    /// operation it was judged to be. `None`: nothing in it gets them (local commands,
    /// anything opaque, a program of the project's, an interpreter, a build runner).
    pub cloud: Option<Tier>,
}

/// A terraform or tofu apply/destroy the gate can plan before asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfCall {
    /// argv[0] as written (`terraform`, `/opt/bin/tofu`).
    pub program: String,
    /// The working directory terraform acts in: cwd + `cd` + `-chdir` (absolute).
    pub dir: PathBuf,
    /// The global options before the subcommand as written (`-chdir=infra`).
    pub global: Vec<String>,
    /// `terraform destroy`, or `apply -destroy` (then `-destroy` is not in `plan_args`: the
    /// gate adds it when planning).
    pub destroy: bool,
    /// `apply PLANFILE`: the saved plan file as written.
    pub plan_file: Option<String>,
    /// Options that shape the plan and are passed to `plan`, as written (a value written apart
    /// is its own word): -var, -var-file, -target, -replace, -exclude (tofu), -refresh,
    /// -refresh-only, -lock, -lock-timeout, -parallelism, -compact-warnings, -no-color, -state
    /// (legacy); not -auto-approve, -input, -json, -out.
    pub plan_args: Vec<String>,
    /// Options kept when applying the saved plan (-lock, -lock-timeout, -parallelism,
    /// -no-color, -compact-warnings, -state, -state-out, -backup); never -var/-var-file/
    /// -target/-replace (terraform refuses them with a saved plan).
    pub apply_args: Vec<String>,
    /// Environment assignments written with the command (`TF_WORKSPACE=prod terraform apply`).
    pub assigns: Vec<(String, String)>,
    /// Options it could not place (also words with a hidden value, and `TF_CLI_ARGS*`
    /// settings): the gate then does not rewrite the call (it asks as destroy).
    pub unknown: Vec<String>,
}

/// Parses and classifies `src`. `env` reads the environment the command will run in (HOME,
/// KUBECTL_EXTERNAL_DIFF, variables a bare assignment would change …). Pure: no I/O except
/// `Path::exists` checks on path-like arguments relative to the cwd and on the `.git` above
/// it, and resolving a program outside the project that is a symbolic link.
pub fn classify(src: &str, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Classified {
    classify_script(&shell::parse(src), src, cwd, env)
}

/// Classifies an already parsed script; `src` is its text, for the lenient scan.
pub fn classify_script(
    script: &Script,
    src: &str,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Classified {
    let home = env("HOME");
    let mut out = Out::new(cwd, home.as_deref(), env);
    for reason in &script.opaque {
        out.opaque(reason.clone());
    }
    if script.runs_hidden {
        out.patterns.push("*".to_string());
    }
    // Script holds no subshell boundaries: after a `cd` in a script with subshells or pipes,
    // the directory in effect is either the one tracked or the session's; judge both.
    let dual = walk::subshells(src, script);
    let mut walk =
        Walk { dir: cwd.to_path_buf(), hidden: false, real: 0, lone: None, values: Vec::new() };
    for simple in &script.commands {
        out.begin();
        walk.command(simple, cwd, dual, &mut out);
        out.end();
    }
    let lone = walk.lone == Some(true)
        && walk.real == 1
        && out.tf.len() == 1
        && !walk.hidden
        && script.opaque.is_empty()
        && !out.opaque;
    let peeled = script.commands.iter().any(|c| !c.wrappers.is_empty());
    if let Some(word) = program::local_wrapper(src, cwd).filter(|_| peeled) {
        out.opaque(format!("a wrapper of the project's may run anything: {word}"));
    }
    if out.opaque
        && let Some(phrase) = scan::danger(src)
    {
        out.raise(Tier::Destroy, format!("hidden: it mentions {phrase}"));
    }
    out.finish(lone)
}

/// Judges one simple command by its program's family; an unknown program is a mutation.
fn judge_command(cmd: &Cmd, out: &mut Out) {
    out.client(is_client(cmd.name));
    secret::check(cmd, out);
    if wrappers::judge(cmd, out) {
        return;
    }
    let known = match cmd.name {
        "terraform" | "tofu" => terraform::judge(cmd, out),
        "terragrunt" | "tflint" | "checkov" | "tfsec" | "pulumi" => stacks::judge(cmd, out),
        "kubectl" | "oc" | "helm" | "kustomize" | "k9s" => kube::judge(cmd, out),
        "aws" => {
            aws::judge(cmd, out);
            true
        }
        "gcloud" | "az" | "gsutil" => cloud::judge(cmd, out),
        name if name.starts_with("ansible") => cloud::judge(cmd, out),
        "git" => git::judge(cmd, out),
        _ => {
            unix::judge(cmd, out)
                || files::judge(cmd, out)
                || stream::judge(cmd, out)
                || dev::judge(cmd, out)
        }
    };
    if !known {
        out.raise(Tier::Mutate, format!("unknown program: {}", cmd.name));
        if cmd.program.contains('/') {
            out.runs(path::parent(&cmd.resolve(out, cmd.program)));
        }
        out.prefix_sub(cmd, 0);
        if let Some(verb) = scan::deleting_word(cmd.args) {
            out.raise(Tier::Destroy, format!("{}: an unknown program asked to {verb}", cmd.name));
        }
    }
}

/// Whether `name` is an infrastructure client: it reaches a cloud or a cluster with the
/// user's credentials to do its work.
fn is_client(name: &str) -> bool {
    matches!(
        name,
        "terraform"
            | "tofu"
            | "terragrunt"
            | "pulumi"
            | "kubectl"
            | "oc"
            | "helm"
            | "aws"
            | "gcloud"
            | "gsutil"
            | "az"
    ) || name.starts_with("ansible")
}

/// Judges a command whose program is where `located` says: a file of the project's is its
/// own code (at least Mutate, no terraform call the gate would run first, its directory's
/// code runs), whatever its name says.
fn judge_located(cmd: &Cmd, located: &Program, out: &mut Out) {
    let Program::Local(file) = located else { return judge_command(cmd, out) };
    let before = out.tf.len();
    judge_command(cmd, out);
    out.tf.truncate(before);
    // Not the infrastructure client its name says: the project's code.
    out.client(false);
    let program = cmd.program;
    out.raise(Tier::Mutate, format!("runs a program of the project's: {program}"));
    out.runs(path::parent(file));
    out.prefix_sub(&Cmd { name: program, ..*cmd }, 0);
    // Also by its name, for the deny rules (`./bin/rm -rf x` meets `bash(rm *)`).
    let named = word::line(cmd.name, cmd.args);
    if let Some(phrase) = scan::danger(&named) {
        out.raise(Tier::Destroy, format!("a program of the project's asked to: {phrase}"));
    }
    out.extra_line(named);
}

/// Judges the payload of `find -exec` or a wrapper: the words from `args[from]` on, as a
/// command of its own in the same directory.
fn judge_payload(cmd: &Cmd, from: usize, out: &mut Out) {
    let Some(program) = cmd.args.get(from) else { return };
    if cmd.dynamic(from) {
        out.opaque(format!("the program is hidden: {program}"));
        return;
    }
    let located = program::locate(program, cmd.cwd, out.root, out.home);
    let name = match &located {
        Program::Linked(name) => name.as_str(),
        _ => path::basename(program),
    };
    let dynamic = cmd.dynamic.get(from + 1..).unwrap_or(&[]);
    let inner =
        Cmd { name, program, args: cmd.args.get(from + 1..).unwrap_or(&[]), dynamic, ..*cmd };
    judge_located(&inner, &located, out);
}
