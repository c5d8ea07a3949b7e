//! The tools around terraform: terragrunt (its hooks run, what it passes on is judged as
//! terraform), pulumi (preview reads, up and destroy destroy) and the terraform linters
//! (tflint, checkov, tfsec). Knows no other program.

use super::Tier;
use super::judge::{Cmd, Out};
use super::path::resolve;
use super::terraform::subcommand;
use super::word::{Words, is_option, words};

/// Judges one command of the family; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "terragrunt" => terragrunt(cmd, out),
        "pulumi" => pulumi(cmd, out),
        _ => linter(cmd, out),
    }
    true
}

/// Terragrunt options that take a value when written apart.
const TG_VALUES: Words = words!(
    "--terragrunt-working-dir --working-dir --terragrunt-config --config \
    --log-level --terragrunt-log-level --terragrunt-iam-role --iam-assume-role \
    --terragrunt-parallelism --parallelism --terragrunt-include-dir --terragrunt-exclude-dir \
    --queue-include-dir --queue-exclude-dir --terragrunt-source --source \
    --terragrunt-download-dir --download-dir --terragrunt-tfpath --tf-path --filter"
);

/// `terragrunt [run-all|run [--all] [--]|stack run] SUBCOMMAND` (and `apply-all`…): its hooks
/// run in every command, what it passes on to terraform is judged as terraform, and `exec`
/// runs its payload.
fn terragrunt(cmd: &Cmd, out: &mut Out) {
    let dir = match cmd.value("--working-dir").or_else(|| cmd.value("--terragrunt-working-dir")) {
        Some(d) => resolve(d, cmd.cwd, out.home).unwrap_or_else(|| cmd.cwd.join(d)),
        None => cmd.cwd.to_path_buf(),
    };
    out.runs_project(&dir);
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if TG_VALUES.has(arg.as_str()) {
            i += 1;
        } else if !is_option(arg) {
            words.push(i);
        }
        i += 1;
    }
    let word = |k: usize| words.get(k).map_or("", |&i| cmd.args[i].as_str());
    let mut k = 0;
    let mut all = "";
    if matches!(word(0), "run-all" | "run") {
        all = word(0);
        k = 1;
    } else if word(0) == "stack" && word(1) == "run" {
        all = "stack run";
        k = 2;
    }
    let written = word(k);
    let Some(&at) = words.get(k) else { return };
    if cmd.dynamic(at) {
        out.hidden_sub(format!("the terragrunt subcommand is hidden: {written}"));
        return;
    }
    let sub = match written.strip_suffix("-all") {
        Some(base) if matches!(base, "apply" | "destroy" | "plan" | "validate" | "output") => base,
        _ => written,
    };
    if sub == "exec" {
        let dash = cmd.args[at..].iter().position(|a| a == "--").map(|d| d + at + 1);
        let start = dash.or_else(|| words.get(k + 1).copied());
        if let Some(start) = start {
            super::wrappers::payload(cmd, start, out);
        }
        out.raise(Tier::Mutate, "terragrunt exec runs a command with its hooks");
        out.no_prefix();
        return;
    }
    super::terraform::canonical(
        "terragrunt",
        at > 0 || sub != written,
        sub,
        cmd.args.get(at + 1..).unwrap_or(&[]),
        out,
    );
    let rest = Cmd {
        args: cmd.args.get(at + 1..).unwrap_or(&[]),
        dynamic: cmd.dynamic.get(at + 1..).unwrap_or(&[]),
        cwd: &dir,
        ..*cmd
    };
    let check = cmd.has_any(words!("--check --terragrunt-check --diff"));
    match sub {
        "apply" => out.raise(Tier::Destroy, "terragrunt apply whose plan cannot be shown first"),
        "destroy" => {
            out.raise(Tier::Destroy, "terragrunt destroy deletes every resource in its state")
        }
        "backend" if matches!(word(k + 1), "delete" | "migrate") => out.raise(
            Tier::Destroy,
            format!("terragrunt backend {} deletes or moves the state", word(k + 1)),
        ),
        "hclfmt" | "hcl" if !check && (sub == "hclfmt" || word(k + 1) == "fmt") => out
            .write_file(cmd.cwd.to_path_buf(), "terragrunt hclfmt rewrites .hcl files".to_string()),
        "hclfmt"
        | "hcl"
        | "graph-dependencies"
        | "terragrunt-info"
        | "info"
        | "dag"
        | "find"
        | "list"
        | "validate-inputs"
        | "output-module-groups"
        | "hclvalidate" => out.operands(&rest, 0, false),
        "render-json" | "render" => out.raise(Tier::Mutate, "terragrunt render writes a file"),
        _ => subcommand("terragrunt", sub, &rest, out),
    }
    let prefix: Vec<&str> =
        ["terragrunt", all, written].into_iter().filter(|w| !w.is_empty()).collect();
    out.prefix(&prefix);
}

/// `pulumi SUBCOMMAND`: preview reads (running the program), up and destroy destroy.
fn pulumi(cmd: &Cmd, out: &mut Out) {
    const VALUES: Words = words!("--cwd -C --stack -s --color --config-file --tracing");
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if VALUES.has(arg.as_str()) {
            i += 1;
        } else if !is_option(arg) {
            if cmd.dynamic(i) && words.len() < 2 {
                out.hidden_sub(format!("the pulumi subcommand is hidden: {arg}"));
                return;
            }
            words.push(arg.as_str());
        }
        i += 1;
    }
    let dir = match cmd.value("--cwd").or_else(|| cmd.value("-C")) {
        Some(d) => resolve(d, cmd.cwd, out.home).unwrap_or_else(|| cmd.cwd.join(d)),
        None => cmd.cwd.to_path_buf(),
    };
    let sub = words.first().copied().unwrap_or("");
    let next = words.get(1).copied().unwrap_or("");
    out.prefix(&["pulumi", sub]);
    if !matches!(sub, "" | "version" | "whoami" | "about" | "help" | "login" | "logout") {
        out.runs(dir);
    }
    let (tier, reason) = match (sub, next) {
        (
            "" | "preview" | "pre" | "version" | "whoami" | "about" | "help" | "logs" | "schema",
            _,
        )
        | ("stack", "" | "ls" | "output" | "history" | "export" | "graph")
        | ("config", "" | "get")
        | ("plugin" | "policy", "ls") => (Tier::Read, ""),
        ("up" | "update", _) => (Tier::Destroy, "pulumi up whose plan cannot be shown first"),
        ("watch", _) => (Tier::Destroy, "pulumi watch deploys every change as it is saved"),
        ("stack", "import") => (Tier::Destroy, "pulumi stack import replaces the stack's state"),
        ("destroy" | "down" | "dn", _) => {
            (Tier::Destroy, "pulumi destroy deletes every resource in its stack")
        }
        ("stack", "rm") => (Tier::Destroy, "pulumi stack rm deletes a stack"),
        ("state", "delete") => {
            (Tier::Destroy, "pulumi state delete drops a resource from the state")
        }
        ("refresh" | "import" | "state" | "cancel", _) => {
            (Tier::Mutate, "pulumi changes the stack's state")
        }
        _ => (Tier::Mutate, "pulumi changes something"),
    };
    if cmd.has("--show-secrets") || (sub, next) == ("config", "get") {
        out.secret(format!(
            "pulumi {} prints secret values in plain text",
            [sub, next].join(" ").trim()
        ));
    }
    if let Some(file) = cmd.value("--file").filter(|_| (sub, next) == ("stack", "export")) {
        out.write_file(cmd.resolve(out, file), format!("pulumi stack export writes {file}"));
    }
    if matches!(sub, "stack" | "config" | "state" | "plugin" | "policy") {
        out.prefix(&["pulumi", sub, next]);
    }
    out.raise(tier, reason);
}

/// tflint, checkov and tfsec read and report; `--fix` and output files write.
fn linter(cmd: &Cmd, out: &mut Out) {
    out.prefix(&[cmd.name]);
    out.runs(cmd.cwd.to_path_buf());
    if cmd.has("--fix") {
        out.write_file(cmd.cwd.to_path_buf(), format!("{} --fix rewrites files", cmd.name));
    } else if cmd.has("--init") {
        out.raise(Tier::Plan, "tflint --init downloads plugins");
    }
    for option in ["--output-file-path", "--out", "-O"] {
        if let Some(file) = cmd.value(option) {
            out.write_file(cmd.resolve(out, file), format!("{} writes {file}", cmd.name));
        }
    }
    if let Some(dir) =
        cmd.value("--external-checks-dir").or_else(|| cmd.value("--custom-check-dir"))
    {
        out.runs(cmd.resolve(out, dir));
    }
    out.operands(cmd, 0, false);
}
