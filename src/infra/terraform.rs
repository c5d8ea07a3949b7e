//! terraform and tofu: which subcommands read, plan, mutate or destroy, what `plan -out`
//! writes, which print secrets, the canonical line the rules also see, and the apply/destroy
//! call the gate may plan before asking. Knows no other program.

use std::path::PathBuf;

use super::judge::{Cmd, Out};
use super::path::{basename, exists, glob_dir, resolve, state_file};
use super::word::{is_option, words};
use super::{TfCall, Tier};

/// One option of apply and destroy, by its name without dashes. Options in no table are
/// dropped from the plan's line.
struct TfOption {
    name: &'static str,
    /// Takes a value when written apart (`-var x=1`).
    takes_value: bool,
    /// Kept for `plan`.
    for_plan: bool,
    /// Kept for applying the saved plan.
    for_saved_plan: bool,
}

/// The options of apply and destroy that terraform's plan and saved-plan apply take over.
const OPTIONS: &[TfOption] = &[
    TfOption { name: "var", takes_value: true, for_plan: true, for_saved_plan: false },
    TfOption { name: "var-file", takes_value: true, for_plan: true, for_saved_plan: false },
    TfOption { name: "target", takes_value: true, for_plan: true, for_saved_plan: false },
    TfOption { name: "replace", takes_value: true, for_plan: true, for_saved_plan: false },
    TfOption { name: "exclude", takes_value: true, for_plan: true, for_saved_plan: false },
    TfOption { name: "refresh", takes_value: false, for_plan: true, for_saved_plan: false },
    TfOption { name: "refresh-only", takes_value: false, for_plan: true, for_saved_plan: false },
    TfOption { name: "lock", takes_value: false, for_plan: true, for_saved_plan: true },
    TfOption { name: "lock-timeout", takes_value: true, for_plan: true, for_saved_plan: true },
    TfOption { name: "parallelism", takes_value: true, for_plan: true, for_saved_plan: true },
    TfOption { name: "compact-warnings", takes_value: false, for_plan: true, for_saved_plan: true },
    TfOption { name: "no-color", takes_value: false, for_plan: true, for_saved_plan: true },
    TfOption { name: "state", takes_value: true, for_plan: true, for_saved_plan: true },
    TfOption { name: "state-out", takes_value: true, for_plan: false, for_saved_plan: true },
    TfOption { name: "backup", takes_value: true, for_plan: false, for_saved_plan: true },
    TfOption { name: "auto-approve", takes_value: false, for_plan: false, for_saved_plan: false },
    TfOption { name: "input", takes_value: false, for_plan: false, for_saved_plan: false },
    TfOption { name: "json", takes_value: false, for_plan: false, for_saved_plan: false },
];

/// Judges terraform and tofu; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    terraform(cmd, out);
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
        out.hidden_sub(format!("the {} subcommand is hidden: {sub}", cmd.name));
        return;
    }
    if help {
        return;
    }
    canonical(cmd.name, i > 0, sub, cmd.args.get(i + 1..).unwrap_or(&[]), out);
    let rest = Cmd {
        args: cmd.args.get(i + 1..).unwrap_or(&[]),
        dynamic: cmd.dynamic.get(i + 1..).unwrap_or(&[]),
        cwd: &dir,
        ..*cmd
    };
    if !matches!(sub.as_str(), "version" | "fmt" | "help") {
        out.runs_project(&dir);
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
pub(super) fn subcommand(name: &str, sub: &str, rest: &Cmd, out: &mut Out) {
    let next = rest.positionals().next().map(|(_, w)| w);
    out.prefix(&[name, sub]);
    match sub {
        "version" | "validate" | "show" | "output" | "graph" | "console" | "metadata"
        | "modules" | "help" => {
            if matches!(sub, "show" | "output") && rest.has_any(words!("-json --json -raw --raw")) {
                out.secret(format!("{name} {sub} -json prints sensitive values in plain text"));
            }
            out.operands(rest, 0, false)
        }
        "fmt"
            if rest.has_any(words!("-check --check")) || rest.value("-write") == Some("false") =>
        {
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
            plan_out(name, rest, out);
            out.operands(rest, 0, false);
        }
        "init" if rest.has_any(words!("-migrate-state -force-copy")) => {
            out.raise(Tier::Destroy, format!("{name} init -migrate-state moves the state"))
        }
        "init" if rest.has_any(words!("-from-module --from-module")) => {
            let reason = format!("{name} init -from-module copies a module into the directory");
            out.raise(Tier::Mutate, reason);
            out.write(rest.cwd.to_path_buf());
        }
        "init" | "get" => {
            out.raise(Tier::Plan, format!("{name} {sub} downloads modules and providers"));
            out.operands(rest, 0, false);
        }
        "state" | "workspace" | "providers" => {
            let next = next.unwrap_or("");
            out.prefix(&[name, sub, next]);
            match (sub, next) {
                ("state", "pull") => {
                    out.secret(format!(
                        "{name} state pull prints the state, which holds every attribute in \
                         plain text"
                    ));
                }
                ("state", "list" | "show" | "identities" | "")
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
        let Some(known) = OPTIONS.iter().find(|o| o.name == option) else {
            match option == "destroy" && sub == "apply" && (!inline || destroy_flag(arg)) {
                true => call.destroy = true,
                false => call.unknown.push(arg.clone()),
            }
            continue;
        };
        let mut words = vec![arg.clone()];
        if known.takes_value
            && !inline
            && let Some(value) = rest.args.get(i)
        {
            if rest.hidden(i) {
                call.unknown.push(value.clone());
            }
            words.push(value.clone());
            i += 1;
        }
        if known.for_plan {
            call.plan_args.extend(words.iter().cloned());
        }
        if known.for_saved_plan {
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

/// `plan -out=FILE` (and `-generate-config-out=FILE`) writes FILE: terraform state destroys,
/// an existing file that is not a saved plan is overwritten (a mutation), a hidden one too.
fn plan_out(name: &str, rest: &Cmd, out: &mut Out) {
    for option in ["-out", "--out", "-generate-config-out", "--generate-config-out"] {
        let Some(file) = rest.value(option) else { continue };
        if file.is_empty() || file.contains(['$', '`', '*', '?', '[']) {
            out.raise(Tier::Mutate, format!("{name} plan writes a hidden path: {file}"));
            continue;
        }
        let base = basename(file);
        let plan = base == "tfplan" || base.ends_with(".tfplan") || base.ends_with(".plan");
        if state_file(file) {
            out.raise(Tier::Destroy, format!("{name} plan {option} overwrites terraform state"));
        } else if option.ends_with("-out") && !plan && exists(rest.cwd, file) {
            out.raise(Tier::Mutate, format!("{name} plan {option} overwrites {file}"));
        }
        out.write(rest.resolve(out, file));
    }
}

/// Adds the canonical line of a terraform-like call (`global`: options came before the
/// subcommand) when it differs from the written one: global options dropped, `apply -destroy`
/// written `destroy`. Deny rules such as `bash(terraform destroy*)` then see it.
pub(super) fn canonical(name: &str, global: bool, sub: &str, rest: &[String], out: &mut Out) {
    let destroy = sub == "apply" && rest.iter().any(|a| destroy_flag(a));
    if !global && !destroy {
        return;
    }
    let mut line = format!("{name} {}", if destroy { "destroy" } else { sub });
    for word in rest.iter().filter(|a| !destroy || !destroy_flag(a)) {
        line.push(' ');
        line.push_str(word);
    }
    out.extra_line(line);
}

/// Whether a word is `-destroy` (or `--destroy`, `-destroy=true` and the other true values Go
/// reads).
fn destroy_flag(word: &str) -> bool {
    let bare = word.strip_prefix("--").or_else(|| word.strip_prefix('-')).unwrap_or("");
    bare == "destroy"
        || bare
            .strip_prefix("destroy=")
            .is_some_and(|v| matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True"))
}
