//! kubectl (and oc), helm, kustomize and k9s: which subcommands read, only compute a change
//! (`--dry-run`), change live objects or delete them. Knows no other program.

use super::Tier;
use super::judge::{Cmd, Out};
use super::word::{Words, is_option, words};

/// kubectl options that take the next word when written apart.
const KUBECTL_VALUES: Words = words!(
    "--context -n --namespace --kubeconfig --cluster --user -s --server \
    --token --as --as-group --as-uid --request-timeout --certificate-authority \
    --client-certificate --client-key --tls-server-name --cache-dir -v --v --log-file --profile \
    --profile-output --username --password --vmodule --log-dir"
);

/// kubectl options that stand alone.
const KUBECTL_FLAGS: Words = words!(
    "--insecure-skip-tls-verify --match-server-version \
    --warnings-as-errors --disable-compression --logtostderr --alsologtostderr --skip-headers -h \
    --help"
);

/// helm options that take the next word when written apart.
const HELM_VALUES: Words = words!(
    "--kube-context -n --namespace --kubeconfig --registry-config \
    --repository-cache --repository-config --burst-limit --qps --kube-apiserver --kube-token \
    --kube-as-user --kube-as-group --kube-ca-file --kube-tls-server-name --content-cache"
);

/// helm options that stand alone.
const HELM_FLAGS: Words = words!("--debug --kube-insecure-skip-tls-verify -h --help");

/// Where the subcommand of a kubectl, oc or helm command line is (`args`: the words after
/// the program), past the leading options as the classifier reads them; `Err` names an
/// unknown leading option (what follows it cannot be told apart from its value).
pub fn subcommand_at(program: &str, args: &[String]) -> Result<Option<usize>, String> {
    let (values, flags) = match program {
        "helm" => (HELM_VALUES, HELM_FLAGS),
        _ => (KUBECTL_VALUES, KUBECTL_FLAGS),
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !is_option(arg) {
            return Ok(Some(i));
        }
        if values.has(arg) {
            i += 1;
        } else if !arg.contains('=') && !flags.has(arg) {
            return Err(arg.clone());
        }
        i += 1;
    }
    Ok(None)
}

/// Judges one command of the family; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "kubectl" | "oc" => kubectl(cmd, out),
        "helm" => helm(cmd, out),
        "kustomize" => kustomize(cmd, out),
        _ => {
            out.prefix(&["k9s"]);
            if !cmd
                .args
                .iter()
                .any(|a| matches!(a.as_str(), "version" | "info" | "help" | "-h" | "--help"))
            {
                out.raise(Tier::Mutate, "k9s can change anything in the cluster");
            }
        }
    }
    true
}

/// Finds the subcommand past the leading options; an unknown option is a mutation, and a
/// destroying word anywhere then counts.
fn subcommand(
    cmd: &Cmd,
    values: Words,
    flags: Words,
    verbs: &[&str],
    out: &mut Out,
) -> Option<usize> {
    match cmd.lead(values, flags) {
        Ok(at) => at,
        Err(option) => {
            out.raise(
                Tier::Mutate,
                format!("unknown {} option before the subcommand: {option}", cmd.name),
            );
            if cmd.args.iter().any(|a| verbs.contains(&a.as_str())) {
                out.raise(
                    Tier::Destroy,
                    format!("{} may delete: its subcommand is unclear", cmd.name),
                );
            }
            cmd.positionals().next().map(|(i, _)| i)
        }
    }
}

/// kubectl subcommands that take `--dry-run`.
const KUBECTL_DRY: Words = words!(
    "annotate apply autoscale create delete drain cordon uncordon expose \
    label patch replace run scale set taint"
);

/// Whether the `--dry-run` in effect makes it a computation: the last one before `--` (after
/// it, the words are a container's), with a value the program reads as one (kubectl: `client`
/// or `server`; helm also bare and `true`). Anything else (`=false`, `=0`, `=none`, hidden)
/// changes things for real.
fn dry_run(cmd: &Cmd, helm: bool) -> bool {
    let mut dry = false;
    for (i, arg) in cmd.args.iter().enumerate() {
        if arg == "--" {
            break;
        }
        let value = if arg == "--dry-run" { Some("") } else { arg.strip_prefix("--dry-run=") };
        if let Some(v) = value {
            dry = !cmd.dynamic(i)
                && (matches!(v, "client" | "server") || helm && matches!(v, "" | "true"));
        }
    }
    dry
}

/// The files kubectl and helm read and write besides their subcommand's: a kubeconfig (its
/// exec credential plugins run, from its directory; read, when in the project), logs and
/// profiles (written).
fn side_files(cmd: &Cmd, out: &mut Out) {
    if let Some(file) = cmd.value("--kubeconfig").filter(|f| !f.is_empty()) {
        let path = cmd.resolve(out, file);
        out.runs(super::path::parent(&path));
        if path.starts_with(out.root) {
            out.read(path);
        }
    }
    if cmd.name == "helm" {
        return;
    }
    let profile = cmd.value("--profile").is_some_and(|p| p != "none");
    for option in ["--log-file", "--log-dir", "--profile-output"] {
        let file = match cmd.value(option) {
            Some(file) => file,
            None if option == "--profile-output" && profile => "profile.pprof",
            None => continue,
        };
        out.raise(Tier::Mutate, format!("{} {option} writes {file}", cmd.name));
        if file.contains(['$', '`']) {
            continue;
        }
        let path = cmd.resolve(out, file);
        out.write(path);
    }
}

#[expect(clippy::too_many_lines, reason = "one arm per kubectl verb: the table of what each does")]
fn kubectl(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let verbs = ["delete", "drain", "replace"];
    let Some(at) = subcommand(cmd, KUBECTL_VALUES, KUBECTL_FLAGS, &verbs, out) else { return };
    let sub = cmd.args[at].as_str();
    if cmd.dynamic(at) {
        out.hidden_sub(format!("the {name} subcommand is hidden: {sub}"));
        return;
    }
    let rest = cmd.after(at);
    let next = rest.positionals().next().map_or("", |(_, w)| w);
    out.prefix(&[name, sub]);
    side_files(cmd, out);
    secrets(sub, next, &rest, out);
    let dry = dry_run(cmd, false)
        && (KUBECTL_DRY.has(sub)
            || matches!((sub, next), ("rollout", "undo") | ("auth", "reconcile")));
    match sub {
        "get" | "describe" | "explain" | "logs" | "top" | "api-resources" | "api-versions"
        | "version" | "cluster-info" | "events" | "wait" | "completion" | "options" | "plugin" => {
            out.operands(&rest, 0, false)
        }
        "diff" => {
            out.operands(&rest, 0, false);
            let sources = ["-f", "--filename", "-k", "--kustomize"];
            let mut any = false;
            for (i, word) in rest.args.iter().enumerate() {
                if i > 0 && sources.contains(&rest.args[i - 1].as_str()) && !rest.dynamic(i) {
                    any = true;
                    let path = rest.resolve(out, word);
                    out.runs(if path.extension().is_some() {
                        super::path::parent(&path)
                    } else {
                        path
                    });
                }
            }
            if !any {
                out.runs(cmd.cwd.to_path_buf());
            }
            if let Some(tool) = (out.env)("KUBECTL_EXTERNAL_DIFF") {
                let program = tool.split_whitespace().next().unwrap_or("");
                if !matches!(super::path::basename(program), "diff" | "colordiff" | "dyff" | "") {
                    out.raise(
                        Tier::Mutate,
                        format!("kubectl diff runs KUBECTL_EXTERNAL_DIFF={tool}"),
                    );
                }
            }
        }
        "kustomize" => plugins(&rest, out),
        "auth" | "config" | "rollout" => {
            out.prefix(&[name, sub, next]);
            match (sub, next) {
                ("auth", "can-i" | "whoami")
                | (
                    "config",
                    "view" | "get-contexts" | "current-context" | "get-clusters" | "get-users" | "",
                )
                | ("rollout", "status" | "history") => {}
                ("config", _) => {
                    out.raise(Tier::Mutate, format!("{name} config {next} changes the kubeconfig"))
                }
                _ if dry => out
                    .raise(Tier::Plan, format!("{name} {sub} --dry-run only computes the change")),
                _ => out.raise(Tier::Mutate, format!("{name} {sub} {next} changes live objects")),
            }
        }
        "delete" | "drain" if dry => {
            out.raise(Tier::Plan, format!("{name} {sub} --dry-run only computes the change"))
        }
        "delete" => out.raise(Tier::Destroy, format!("{name} delete removes live objects")),
        "drain" => out.raise(Tier::Destroy, format!("{name} drain evicts every pod of a node")),
        "replace" | "apply" if dry => {
            out.raise(Tier::Plan, format!("{name} {sub} --dry-run only computes the change"))
        }
        "replace" | "apply" if rest.has("--force") => {
            out.raise(Tier::Destroy, format!("{name} {sub} --force deletes and recreates objects"))
        }
        "apply" if rest.has("--prune") => out.raise(
            Tier::Destroy,
            format!("{name} apply --prune deletes objects missing from the manifests"),
        ),
        "apply" | "create" | "patch" | "replace" | "scale" | "label" | "annotate" | "set"
        | "edit" | "expose" | "autoscale" | "run" | "cordon" | "uncordon" | "taint" | "cp"
        | "exec" | "attach" | "port-forward" | "proxy" | "debug" | "certificate" => match dry {
            true => {
                out.raise(Tier::Plan, format!("{name} {sub} --dry-run only computes the change"))
            }
            false => {
                out.raise(Tier::Mutate, format!("{name} {sub} changes live objects"));
                if matches!(sub, "exec" | "attach" | "debug") {
                    out.no_prefix();
                }
                if sub == "cp"
                    && let Some((i, file)) = rest.positionals().last()
                    && !file.contains(':')
                {
                    out.word(&rest, i, super::PathUse::Write);
                }
            }
        },
        _ => out.raise(Tier::Mutate, format!("{name} {sub} may change live objects")),
    }
}

fn helm(cmd: &Cmd, out: &mut Out) {
    let verbs = ["uninstall", "delete", "del", "un", "rollback"];
    let Some(at) = subcommand(cmd, HELM_VALUES, HELM_FLAGS, &verbs, out) else { return };
    let sub = cmd.args[at].as_str();
    if cmd.dynamic(at) {
        out.hidden_sub(format!("the helm subcommand is hidden: {sub}"));
        return;
    }
    let rest = cmd.after(at);
    let next = rest.positionals().next().map_or("", |(_, w)| w);
    out.prefix(&["helm", sub]);
    side_files(cmd, out);
    if cmd.has("--post-renderer") {
        out.opaque("helm runs a post-renderer program");
    }
    if sub == "get"
        && (matches!(next, "all" | "manifest")
            || next == "values" && rest.has_any(words!("--all -a")))
    {
        out.secret(format!("helm get {next} prints the release's values and secrets"));
    }
    let dry = dry_run(cmd, true);
    match sub {
        "list" | "ls" | "status" | "get" | "template" | "lint" | "show" | "inspect" | "history"
        | "hist" | "version" | "search" | "env" | "verify" | "completion" | "help" => {
            out.operands(&rest, 0, false)
        }
        "dependency" | "dep" | "dependencies" | "repo" | "plugin" => {
            out.prefix(&["helm", sub, next]);
            match next {
                "list" | "ls" | "" => {}
                _ if sub == "plugin" => {
                    out.raise(Tier::Mutate, "helm plugin installs code that helm runs")
                }
                _ => out.raise(Tier::Mutate, format!("helm {sub} {next} downloads charts")),
            }
        }
        "install" | "upgrade" | "uninstall" | "delete" | "del" | "un" | "rollback" if dry => {
            out.raise(Tier::Plan, format!("helm {sub} --dry-run only renders the change"))
        }
        "install" | "upgrade" => out.raise(Tier::Mutate, format!("helm {sub} changes a release")),
        "uninstall" | "delete" | "del" | "un" => {
            out.raise(Tier::Destroy, "helm uninstall deletes a release")
        }
        "rollback" => out.raise(Tier::Destroy, "helm rollback reverts a release"),
        _ => out.raise(Tier::Mutate, format!("helm {sub} may change something")),
    }
}

/// `kustomize build` reads unless plugins may run; `edit`/`create` rewrite kustomization.yaml.
fn kustomize(cmd: &Cmd, out: &mut Out) {
    let Some((at, sub)) = cmd.positionals().next() else { return };
    out.prefix(&["kustomize", sub]);
    let rest = cmd.after(at);
    match sub {
        "build" => plugins(&rest, out),
        "version" | "help" | "completion" => {}
        "edit" | "create" | "init" => {
            let file = cmd.cwd.join("kustomization.yaml");
            out.write_file(file, format!("kustomize {sub} rewrites kustomization.yaml"));
        }
        _ => out.raise(Tier::Mutate, format!("kustomize {sub} may change files")),
    }
}

/// A kustomize build: reads its directories; plugins and exec functions run code.
fn plugins(rest: &Cmd, out: &mut Out) {
    out.operands(rest, 0, false);
    let options = ["--enable-alpha-plugins", "--enable-exec", "--enable-star", "--enable-helm"];
    if rest.args.iter().any(|a| is_option(a) && options.iter().any(|o| a.starts_with(o))) {
        out.raise(Tier::Mutate, "kustomize runs plugins or helm");
    }
}

/// kubectl commands that print secrets: `config view --raw`, `get secret … -o yaml|json|…`,
/// `get --raw …/secrets`, `create token`.
fn secrets(sub: &str, next: &str, rest: &Cmd, out: &mut Out) {
    let reason = match (sub, next) {
        ("config", "view") if rest.has("--raw") => "kubectl config view --raw prints credentials",
        ("create", "token") => "kubectl create token prints a token",
        ("get", _) => {
            let secret = rest.positionals().any(|(_, w)| {
                let kinds = w.split('/').next().unwrap_or("");
                kinds.split(',').any(|k| matches!(k.split('.').next(), Some("secret" | "secrets")))
            });
            let glued =
                rest.args.iter().find_map(|a| a.strip_prefix("-o").filter(|v| !v.is_empty()));
            let format = rest.value("-o").or_else(|| rest.value("--output")).or(glued);
            let raw = rest.value("--raw").is_some_and(|p| p.contains("secrets"));
            if !raw && (!secret || matches!(format.unwrap_or(""), "" | "name" | "wide")) {
                return;
            }
            "kubectl get secret prints the secrets' data"
        }
        _ => return,
    };
    out.secret(reason);
}
