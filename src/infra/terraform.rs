//! terraform, tofu, terragrunt, pulumi and the terraform linters (tflint, checkov, tfsec):
//! which subcommands read, plan, mutate or destroy, and the apply/destroy call the gate may
//! plan before asking. Knows no other program.

use std::path::PathBuf;

use super::judge::{Cmd, Out};
use super::path::{glob_dir, resolve};
use super::word::{is_option, listed};
use super::{TfCall, Tier};

/// Options of apply and destroy: name, takes a value when written apart, kept for `plan`,
/// kept for applying the saved plan. Options that are in neither are dropped.
const OPTIONS: &[(&str, bool, bool, bool)] = &[
    ("var", true, true, false),
    ("var-file", true, true, false),
    ("target", true, true, false),
    ("replace", true, true, false),
    ("exclude", true, true, false),
    ("refresh", false, true, false),
    ("refresh-only", false, true, false),
    ("lock", false, true, true),
    ("lock-timeout", true, true, true),
    ("parallelism", true, true, true),
    ("compact-warnings", false, true, true),
    ("no-color", false, true, true),
    ("state", true, true, true),
    ("state-out", true, false, true),
    ("backup", true, false, true),
    ("auto-approve", false, false, false),
    ("input", false, false, false),
    ("json", false, false, false),
];

/// Judges one command of the family; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "terraform" | "tofu" => terraform(cmd, out),
        "terragrunt" => terragrunt(cmd, out),
        "pulumi" => pulumi(cmd, out),
        _ => linter(cmd, out),
    }
    true
}

/// `terraform [global options] SUBCOMMAND [args]`.
fn terraform(cmd: &Cmd, out: &mut Out) {
    let mut dir = cmd.cwd.to_path_buf();
    let (mut global, mut unknown, mut help) = (Vec::new(), Vec::new(), false);
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i).filter(|a| is_option(a)) {
        global.push(arg.clone());
        let chdir = arg.strip_prefix("-chdir=").or_else(|| arg.strip_prefix("--chdir="));
        if cmd.hidden(i) {
            unknown.push(arg.clone());
            out.raise(Tier::Mutate, format!("works in a hidden directory: {arg}"));
        } else if let Some(to) = chdir {
            dir = resolve(to, cmd.cwd, out.home).unwrap_or_else(|| cmd.cwd.join(to));
        } else if matches!(
            arg.as_str(),
            "-help" | "-h" | "--help" | "-version" | "-v" | "--version"
        ) {
            help = true;
        } else {
            unknown.push(arg.clone());
        }
        i += 1;
    }
    let Some(sub) = cmd.args.get(i) else { return };
    if cmd.dynamic(i) {
        out.opaque(format!("the {} subcommand is hidden: {sub}", cmd.name));
        return;
    }
    if help {
        return;
    }
    let rest = Cmd {
        args: &cmd.args[i + 1..],
        dynamic: cmd.dynamic.get(i + 1..).unwrap_or(&[]),
        cwd: &dir,
        ..*cmd
    };
    if !matches!(sub.as_str(), "version" | "fmt" | "help") {
        out.runs(dir.clone());
    }
    if matches!(sub.as_str(), "apply" | "destroy") {
        let call = call(cmd, global, dir.clone(), sub, &rest, unknown, out);
        let name = cmd.name;
        let reason = match (sub.as_str(), call.destroy) {
            ("apply", false) => String::new(),
            ("apply", true) => format!("{name} apply -destroy deletes every resource in its state"),
            _ => format!("{name} destroy deletes every resource in its state"),
        };
        out.raise(Tier::Destroy, reason);
        out.tf.push(call);
        out.prefix(&[name, sub]);
        return;
    }
    subcommand(cmd.name, sub, &rest, out);
}

/// The tier of a terraform subcommand other than apply/destroy (also for terragrunt, which
/// passes them on); `rest` holds the words after it, in terraform's directory.
fn subcommand(name: &str, sub: &str, rest: &Cmd, out: &mut Out) {
    let next = rest.positionals().next().map(|(_, w)| w);
    out.prefix(&[name, sub]);
    match sub {
        "version" | "validate" | "show" | "output" | "graph" | "console" | "metadata"
        | "modules" | "help" => out.operands(rest, 0, false),
        "fmt" if rest.has_any("-check --check") || rest.value("-write") == Some("false") => {
            out.operands(rest, 0, false)
        }
        "fmt" => {
            let mut any = false;
            for (i, word) in rest.positionals() {
                any = true;
                if rest.hidden(i) {
                    out.raise(Tier::Mutate, format!("{name} fmt rewrites a hidden path: {word}"));
                    continue;
                }
                let path = rest.resolve(out, if rest.dynamic(i) { glob_dir(word) } else { word });
                out.write_file(path, format!("{name} fmt rewrites {word}"));
            }
            if !any {
                out.write_file(rest.cwd.to_path_buf(), format!("{name} fmt rewrites .tf files"));
            }
        }
        "plan" => {
            out.raise(Tier::Plan, format!("{name} plan computes a change"));
            if let Some(file) = rest.value("-out").or_else(|| rest.value("--out")) {
                out.write(rest.resolve(out, file));
            }
            out.operands(rest, 0, false);
        }
        "init" if rest.has_any("-migrate-state -force-copy") => {
            out.raise(Tier::Destroy, format!("{name} init -migrate-state moves the state"))
        }
        "init" | "get" => {
            out.raise(Tier::Plan, format!("{name} {sub} downloads modules and providers"));
            out.operands(rest, 0, false);
        }
        "state" | "workspace" | "providers" => {
            let next = next.unwrap_or("");
            out.prefix(&[name, sub, next]);
            match (sub, next) {
                ("state", "list" | "show" | "pull" | "identities" | "")
                | ("workspace", "show" | "list" | "")
                | ("providers", "schema" | "") => out.operands(rest, 1, false),
                ("state", "rm" | "mv" | "push" | "replace-provider") => {
                    out.raise(Tier::Destroy, format!("{name} state {next} rewrites the state"))
                }
                ("workspace", "delete") => out.raise(
                    Tier::Destroy,
                    format!("{name} workspace delete drops a workspace's state"),
                ),
                _ => out
                    .raise(Tier::Mutate, format!("{name} {sub} {next} changes the configuration")),
            }
        }
        "force-unlock" => {
            out.raise(Tier::Destroy, format!("{name} force-unlock may corrupt the state"))
        }
        "import" | "taint" | "untaint" | "refresh" => {
            out.raise(Tier::Mutate, format!("{name} {sub} changes the state"))
        }
        "test" => out.raise(Tier::Mutate, format!("{name} test creates real resources")),
        _ => out.raise(Tier::Mutate, format!("{name} {sub} changes something")),
    }
}

/// The apply/destroy call: where it acts and how its options split between `plan` and
/// applying the saved plan.
fn call(
    cmd: &Cmd,
    global: Vec<String>,
    dir: PathBuf,
    sub: &str,
    rest: &Cmd,
    unknown: Vec<String>,
    out: &Out,
) -> TfCall {
    let mut call = TfCall {
        program: cmd.program.to_string(),
        dir,
        global,
        destroy: sub == "destroy",
        plan_file: None,
        plan_args: Vec::new(),
        apply_args: Vec::new(),
        assigns: cmd.simple.assigns.clone(),
        unknown,
    };
    let mut i = 0;
    while let Some(arg) = rest.args.get(i) {
        i += 1;
        if rest.hidden(i - 1) {
            call.unknown.push(arg.clone());
            continue;
        }
        if !is_option(arg) {
            match call.plan_file {
                None if sub == "apply" => call.plan_file = Some(arg.clone()),
                _ => call.unknown.push(arg.clone()),
            }
            continue;
        }
        let bare = arg.trim_start_matches('-');
        let (option, inline) = bare.split_once('=').map_or((bare, false), |(o, _)| (o, true));
        let Some(&(_, apart, plan, apply)) = OPTIONS.iter().find(|o| o.0 == option) else {
            match option == "destroy" && sub == "apply" && !inline {
                true => call.destroy = true,
                false => call.unknown.push(arg.clone()),
            }
            continue;
        };
        let mut words = vec![arg.clone()];
        if apart
            && !inline
            && let Some(value) = rest.args.get(i)
        {
            if rest.hidden(i) {
                call.unknown.push(value.clone());
            }
            words.push(value.clone());
            i += 1;
        }
        if plan {
            call.plan_args.extend(words.iter().cloned());
        }
        if apply {
            call.apply_args.extend(words);
        }
    }
    for var in ["TF_CLI_ARGS", "TF_CLI_ARGS_plan", "TF_CLI_ARGS_apply", "TF_CLI_ARGS_destroy"] {
        if call.assigns.iter().any(|(k, _)| k == var) || (out.env)(var).is_some() {
            call.unknown.push(var.to_string());
        }
    }
    call
}

/// Terragrunt options that take a value when written apart.
const TG_VALUES: &str = "--terragrunt-working-dir --working-dir --terragrunt-config --config \
    --log-level --terragrunt-log-level --terragrunt-iam-role --iam-assume-role \
    --terragrunt-parallelism --parallelism --terragrunt-include-dir --terragrunt-exclude-dir \
    --queue-include-dir --queue-exclude-dir --terragrunt-source --source \
    --terragrunt-download-dir --download-dir --terragrunt-tfpath --tf-path --filter";

/// `terragrunt [run-all|run [--all] [--]] SUBCOMMAND`: its hooks run in every command, and
/// what it passes on to terraform is judged as terraform.
fn terragrunt(cmd: &Cmd, out: &mut Out) {
    out.runs(cmd.cwd.to_path_buf());
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if listed(TG_VALUES, arg.as_str()) {
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
    }
    let sub = word(k);
    let Some(&at) = words.get(k) else { return };
    if cmd.dynamic(at) {
        out.opaque(format!("the terragrunt subcommand is hidden: {sub}"));
        return;
    }
    let rest = Cmd {
        args: &cmd.args[at + 1..],
        dynamic: cmd.dynamic.get(at + 1..).unwrap_or(&[]),
        ..*cmd
    };
    let check = cmd.has_any("--check --terragrunt-check --diff");
    match sub {
        "apply" => out.raise(Tier::Destroy, "terragrunt apply whose plan cannot be shown first"),
        "destroy" => {
            out.raise(Tier::Destroy, "terragrunt destroy deletes every resource in its state")
        }
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
        ["terragrunt", all, sub].into_iter().filter(|w| !w.is_empty()).collect();
    out.prefix(&prefix);
}

/// `pulumi SUBCOMMAND`: preview reads (running the program), up and destroy destroy.
fn pulumi(cmd: &Cmd, out: &mut Out) {
    const VALUES: &str = "--cwd -C --stack -s --color --config-file --tracing";
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if listed(VALUES, arg.as_str()) {
            i += 1;
        } else if !is_option(arg) {
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
