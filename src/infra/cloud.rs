//! Cloud CLIs (aws, gcloud, az) and ansible: the operation or verb decides (describe/list
//! read, delete destroys, the rest mutates); ansible-playbook reads with `--check` and runs
//! the code of its playbooks' directories. Knows no other program.

use super::Tier;
use super::judge::{Cmd, Out};
use super::word::{is_option, listed};

/// aws options that take the next word when written apart.
const AWS_VALUES: &str = "--profile --region --output --endpoint-url --query --cli-read-timeout \
    --cli-connect-timeout --ca-bundle --color --cli-binary-format";

/// aws options that stand alone.
const AWS_FLAGS: &str = "--debug --no-verify-ssl --no-paginate --no-sign-request --no-cli-pager \
    --cli-auto-prompt --no-cli-auto-prompt --version --help";

/// gcloud and az options that take the next word when written apart.
const VERB_VALUES: &str = "--project --account --configuration --format --verbosity \
    --impersonate-service-account --billing-project --flags-file --trace-token --subscription \
    --output -o --query --zone --region --location -g --resource-group -n --name";

/// Judges one command of the family; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "aws" => aws(cmd, out),
        "gcloud" | "az" => verbs(cmd, out),
        "ansible-playbook" => playbook(cmd, out),
        name => ansible(name, cmd, out),
    }
    true
}

/// `aws [options] SERVICE OPERATION`: the operation decides.
fn aws(cmd: &Cmd, out: &mut Out) {
    let at = match cmd.lead(AWS_VALUES, AWS_FLAGS) {
        Ok(Some(at)) => at,
        Ok(None) => return,
        Err(option) => {
            out.raise(Tier::Mutate, format!("unknown aws option before the service: {option}"));
            let Some((at, _)) = cmd.positionals().next() else { return };
            at
        }
    };
    let service = cmd.args[at].as_str();
    let rest = cmd.after(at);
    let op_at = rest.lead(AWS_VALUES, AWS_FLAGS).ok().flatten();
    let op = op_at.map_or("", |i| rest.args[i].as_str());
    if cmd.dynamic(at) || op_at.is_some_and(|i| rest.dynamic(i)) {
        out.opaque(format!("the aws operation is hidden: {service} {op}"));
        return;
    }
    out.prefix(&["aws", service, op]);
    for word in rest.args {
        if let Some(file) = word.strip_prefix("fileb://").or_else(|| word.strip_prefix("file://")) {
            let path = rest.resolve(out, file);
            out.read(path);
        }
    }
    let (tier, reason) = aws_tier(service, op, &rest);
    if tier == Tier::Read {
        return;
    }
    if service == "s3" && matches!(op, "cp" | "mv" | "sync") {
        let words: Vec<(usize, &str)> = rest.positionals().skip(1).take(2).collect();
        for (k, &(i, word)) in words.iter().enumerate() {
            if !word.starts_with("s3://") && !rest.hidden(i) {
                let how = if k == 0 { super::PathUse::Read } else { super::PathUse::Write };
                out.word(&rest, i, how);
            }
        }
    }
    match tier == Tier::Mutate && service == "ec2" && rest.has("--dry-run") {
        true => out.raise(Tier::Plan, format!("aws ec2 {op} --dry-run only checks the change")),
        false => out.raise(tier, format!("aws {service} {op} {reason}")),
    }
}

/// The tier of an aws operation, and why.
fn aws_tier(service: &str, op: &str, rest: &Cmd) -> (Tier, &'static str) {
    let read = [
        "describe-",
        "list-",
        "get-",
        "head-",
        "lookup-",
        "search-",
        "batch-get-",
        "filter-",
        "validate-",
        "estimate-",
    ];
    let destroy = ["terminate-", "remove-", "deregister-", "purge-", "destroy-"];
    match (service, op) {
        ("configure", "list" | "get" | "list-profiles") | (_, "") => (Tier::Read, ""),
        ("configure", _) => (Tier::Mutate, "writes the aws configuration"),
        ("s3", "ls" | "presign") => (Tier::Read, ""),
        ("s3", "rm" | "rb") => (Tier::Destroy, "deletes objects"),
        ("s3", "sync") if rest.has("--delete") => (Tier::Destroy, "--delete deletes objects"),
        (_, "scan" | "query" | "tail" | "wait" | "help") => (Tier::Read, ""),
        _ if op.contains("delete") || op == "schedule-key-deletion" => {
            (Tier::Destroy, "deletes resources")
        }
        _ if destroy.iter().any(|p| op.starts_with(p)) => (Tier::Destroy, "deletes resources"),
        _ if read.iter().any(|p| op.starts_with(p)) => (Tier::Read, ""),
        _ => (Tier::Mutate, "changes cloud resources"),
    }
}

/// The tier of a gcloud/az command word, when it is a verb.
fn verb_tier(word: &str) -> Option<Tier> {
    const MUTATE: &str = "create update deploy set set-value unset start stop restart reset resize \
        ssh scp import export login logout revoke activate-service-account get-credentials enable \
        disable submit run apply patch move restore rollback upgrade init execute call publish \
        cancel undelete promote switch failover invoke swap assign grant scale connect install \
        add remove attach detach";
    if word == "delete" || word.starts_with("delete-") || word == "purge" {
        return Some(Tier::Destroy);
    }
    if word == "what-if" {
        return Some(Tier::Plan);
    }
    if listed(MUTATE, word)
        || ["add-", "remove-", "set-", "attach-", "detach-"].iter().any(|p| word.starts_with(p))
    {
        return Some(Tier::Mutate);
    }
    let read = matches!(
        word,
        "list"
            | "describe"
            | "show"
            | "read"
            | "info"
            | "version"
            | "exists"
            | "wait"
            | "tail"
            | "get"
            | "help"
            | "check-name"
    );
    (read || ["list-", "describe-", "show-", "get-", "print-"].iter().any(|p| word.starts_with(p)))
        .then_some(Tier::Read)
}

/// `gcloud GROUP… VERB` and `az GROUP… VERB`: the highest verb decides; the prefix runs up to
/// the first verb.
fn verbs(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if listed(VERB_VALUES, arg.as_str()) {
            i += 1;
        } else if !is_option(arg) {
            if cmd.dynamic(i) && words.is_empty() {
                out.opaque(format!("the {name} command is hidden: {arg}"));
                return;
            }
            words.push(arg.as_str());
        }
        i += 1;
    }
    let mut tier = None;
    let mut end = words.len().min(3);
    for (k, word) in words.iter().enumerate() {
        if let Some(t) = verb_tier(word) {
            if tier.is_none() {
                end = k + 1;
            }
            tier = tier.max(Some(t));
        }
    }
    let mut prefix = vec![name];
    prefix.extend(&words[..end]);
    out.prefix(&prefix);
    let path = words[..end].join(" ");
    match tier {
        None if words.is_empty() => {}
        Some(Tier::Read) => {}
        None => out.raise(Tier::Mutate, format!("{name} {path}: an unknown command")),
        Some(Tier::Plan) => {
            out.raise(Tier::Plan, format!("{name} {path} only computes the change"))
        }
        Some(Tier::Destroy) => out.raise(Tier::Destroy, format!("{name} {path} deletes resources")),
        Some(t) => out.raise(t, format!("{name} {path} changes cloud resources")),
    }
}

/// ansible-playbook options that take the next word when written apart.
const PLAYBOOK_VALUES: &str = "-i --inventory -e --extra-vars -l --limit -t --tags --skip-tags -u \
    --user -f --forks --vault-password-file --vault-id --private-key -c --connection -M \
    --module-path --become-user --start-at-task -T --timeout --ssh-common-args --ssh-extra-args \
    --scp-extra-args --sftp-extra-args --become-method";

/// `ansible-playbook`: `--check` reads, `--check --diff` plans, the rest mutates; every form
/// runs the code beside its playbooks (roles, plugins, inventory scripts).
fn playbook(cmd: &Cmd, out: &mut Out) {
    out.prefix(&["ansible-playbook"]);
    out.runs(cmd.cwd.to_path_buf());
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if listed(PLAYBOOK_VALUES, arg.as_str()) {
            i += 1;
        } else if !is_option(arg) && !cmd.hidden(i) {
            let path =
                cmd.resolve(out, if cmd.dynamic(i) { super::path::glob_dir(arg) } else { arg });
            out.runs(super::path::parent(&path));
        }
        i += 1;
    }
    out.operands(cmd, 0, false);
    let check = cmd.has("--check") || cmd.short("C");
    let diff = cmd.has("--diff") || cmd.short("D");
    if cmd.has_any("--syntax-check --list-tasks --list-hosts --list-tags --version") {
        return;
    }
    match (check, diff) {
        (true, true) => {
            out.raise(Tier::Plan, "ansible-playbook --check --diff only computes the change")
        }
        (true, false) => {}
        _ => out.raise(Tier::Mutate, "ansible-playbook changes hosts"),
    }
}

/// The other ansible programs.
fn ansible(name: &str, cmd: &Cmd, out: &mut Out) {
    let words: Vec<&str> = cmd.positionals().map(|(_, w)| w).collect();
    out.prefix(&[name, words.first().copied().unwrap_or("")]);
    match name {
        "ansible" if cmd.has_any("--list-hosts --version") => {}
        "ansible" => {
            out.runs(cmd.cwd.to_path_buf());
            out.raise(Tier::Mutate, "ansible runs a module on hosts");
            out.no_prefix();
        }
        "ansible-lint" if cmd.has_any("--fix --write") => {
            out.write_file(cmd.cwd.to_path_buf(), "ansible-lint --fix rewrites files".to_string())
        }
        "ansible-lint" | "ansible-inventory" => {
            out.runs(cmd.cwd.to_path_buf());
            out.operands(cmd, 0, false);
        }
        "ansible-doc" | "ansible-config" => {}
        "ansible-galaxy"
            if words.iter().any(|w| matches!(*w, "list" | "info" | "search" | "verify")) => {}
        "ansible-vault"
            if words.first().is_some_and(|w| matches!(*w, "view" | "encrypt_string")) =>
        {
            out.operands(cmd, 1, false)
        }
        _ => out.raise(Tier::Mutate, format!("{name} changes files or hosts")),
    }
}
