//! gcloud, az, gsutil and ansible (aws has its own file): the verb decides (describe/list
//! read, delete destroys, the rest mutates), a few print tokens or secrets; ansible-playbook
//! reads with `--check` and runs the code of the project and its playbooks' directories.
//! Knows no other program.

use super::Tier;
use super::judge::{Cmd, Out};
use super::word::{Words, is_option, words};

/// gcloud and az options that take the next word when written apart.
const VERB_VALUES: Words = words!(
    "--project --account --configuration --format --verbosity \
    --impersonate-service-account --billing-project --flags-file --trace-token --subscription \
    --output -o --query --zone --region --location -g --resource-group -n --name"
);

/// Judges one command of the family; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "gcloud" | "az" => verbs(cmd, out),
        "gsutil" => gsutil(cmd, out),
        "ansible-playbook" => playbook(cmd, out),
        name => ansible(name, cmd, out),
    }
    true
}

/// The tier of a gcloud/az command word, when it is a verb.
fn verb_tier(word: &str) -> Option<Tier> {
    const MUTATE: Words = words!(
        "create update deploy set set-value unset start stop restart reset resize \
        ssh scp import export login logout revoke activate-service-account get-credentials enable \
        disable submit run apply patch move restore rollback upgrade init execute call publish \
        cancel undelete promote switch failover invoke swap assign grant scale connect install \
        add remove attach detach"
    );
    if matches!(word, "delete" | "purge" | "destroy" | "rm" | "rb") || word.starts_with("delete-") {
        return Some(Tier::Destroy);
    }
    if word == "what-if" {
        return Some(Tier::Plan);
    }
    if MUTATE.has(word)
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
            | "ls"
            | "du"
            | "access"
    );
    (read || ["list-", "describe-", "show-", "get-", "print-"].iter().any(|p| word.starts_with(p)))
        .then_some(Tier::Read)
}

/// `gcloud GROUP… VERB` and `az GROUP… VERB`: the highest verb decides; the prefix runs up to
/// the first verb.
fn verbs(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let mut words: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if VERB_VALUES.has(arg.as_str()) {
            i += 1;
        } else if !is_option(arg) {
            // A hidden word before the verb may be any verb, `delete` included.
            if cmd.dynamic(i) && !words.iter().any(|w: &&str| verb_tier(w).is_some()) {
                out.hidden_sub(format!("the {name} command is hidden: {arg}"));
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
    let complete = cmd.value("--mode").is_some_and(|m| m.eq_ignore_ascii_case("complete"));
    let unmatched = cmd.has("--delete-unmatched-destination-objects");
    if complete || unmatched {
        out.raise(Tier::Destroy, format!("{name} {path} deletes what the source does not have"));
    }
    if let Some(reason) = verb_secret(name, &words) {
        out.secret(reason);
    }
    if name == "gcloud" && matches!(words.get(..2), Some(["storage", "cp" | "mv" | "rsync"])) {
        let words = cmd.words(VERB_VALUES);
        super::aws::download(cmd, words.get(2..).unwrap_or_default(), out);
    }
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
const PLAYBOOK_VALUES: Words = words!(
    "-i --inventory -e --extra-vars -l --limit -t --tags --skip-tags -u \
    --user -f --forks --vault-password-file --vault-id --private-key -c --connection -M \
    --module-path --become-user --start-at-task -T --timeout --ssh-common-args --ssh-extra-args \
    --scp-extra-args --sftp-extra-args --become-method"
);

/// `ansible-playbook`: `--check` reads, `--check --diff` plans, the rest mutates; every form
/// runs the code of the project and beside its playbooks (roles, plugins, inventory scripts).
fn playbook(cmd: &Cmd, out: &mut Out) {
    out.prefix(&["ansible-playbook"]);
    out.runs_project(cmd.cwd);
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        if PLAYBOOK_VALUES.has(arg.as_str()) {
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
    if cmd.has_any(words!("--syntax-check --list-tasks --list-hosts --list-tags --version")) {
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
    out.runs_project(cmd.cwd);
    // `ansible-galaxy [collection|role] VERB`.
    let grouped = matches!(words.first(), Some(&("collection" | "role")));
    let verb = words.get(usize::from(grouped)).copied().unwrap_or("");
    match name {
        "ansible" if cmd.has_any(words!("--list-hosts --version")) => {}
        "ansible" => {
            out.raise(Tier::Mutate, "ansible runs a module on hosts");
            out.no_prefix();
        }
        "ansible-lint" if cmd.has_any(words!("--fix --write")) => {
            out.write_file(cmd.cwd.to_path_buf(), "ansible-lint --fix rewrites files".to_string())
        }
        "ansible-lint" | "ansible-inventory" => out.operands(cmd, 0, false),
        "ansible-doc" | "ansible-config" => {}
        "ansible-galaxy" if matches!(verb, "list" | "info" | "search" | "verify") => {}
        "ansible-vault"
            if words.first().is_some_and(|w| matches!(*w, "view" | "encrypt_string")) =>
        {
            out.operands(cmd, 1, false)
        }
        _ => out.raise(Tier::Mutate, format!("{name} changes files or hosts")),
    }
}

/// gcloud and az commands that print tokens or secret values.
fn verb_secret(name: &str, words: &[&str]) -> Option<String> {
    let has = |w: &str| words.contains(&w);
    let token = words
        .iter()
        .any(|w| matches!(*w, "print-access-token" | "print-identity-token" | "get-access-token"));
    if token {
        return Some(format!("{name} prints an access token"));
    }
    let secret = match name {
        "gcloud" => has("secrets") && has("access") || has("generate-login-token"),
        _ => {
            has("keyvault") && has("secret") && (has("show") || has("download"))
                || has("keys") && has("list")
                || has("show-connection-string")
                || has("acr") && has("login")
        }
    };
    secret.then(|| format!("{name} prints secret values or keys"))
}

/// `gsutil [-m] COMMAND`: ls, cat, du and stat read; rm, rb and `rsync -d` destroy.
fn gsutil(cmd: &Cmd, out: &mut Out) {
    let words = cmd.words(words!("-o -h -u -i -p"));
    let Some(&(at, sub)) = words.first() else { return };
    out.prefix(&["gsutil", sub]);
    let rest = cmd.after(at);
    match sub {
        "ls" | "cat" | "du" | "stat" | "hash" | "version" | "help" => {}
        "rm" | "rb" => out.raise(Tier::Destroy, format!("gsutil {sub} deletes objects")),
        "rsync" if rest.short("d") => {
            out.raise(Tier::Destroy, "gsutil rsync -d deletes what the source does not have")
        }
        _ => {
            out.raise(Tier::Mutate, format!("gsutil {sub} changes objects or files"));
            if matches!(sub, "cp" | "mv" | "rsync") {
                super::aws::download(&rest, &rest.words(words!("-a -j -L -s -z -x")), out);
            }
        }
    }
}
