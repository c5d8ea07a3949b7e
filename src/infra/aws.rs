//! The aws CLI: `aws [options] SERVICE [options] OPERATION`; the operation decides
//! (describe/list/get read, delete/terminate destroy, the rest mutates), operations with an
//! output file write it, a few print credentials or secret values. An option it does not know
//! never makes a read. Knows no other program.

use super::judge::{Cmd, Out};
use super::path::state_file;
use super::word::{Words, is_option, words};
use super::{PathUse, Tier};

/// aws options that take the next word when written apart.
const AWS_VALUES: Words = words!(
    "--profile --region --output --endpoint-url --query --cli-read-timeout \
    --cli-connect-timeout --ca-bundle --color --cli-binary-format"
);

/// aws options that stand alone.
const AWS_FLAGS: Words = words!(
    "--debug --no-verify-ssl --no-paginate --no-sign-request --no-cli-pager \
    --cli-auto-prompt --no-cli-auto-prompt --version --help"
);

/// `aws [options] SERVICE [options] OPERATION`: the operation decides.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) {
    let mut unclear = false;
    let at = match cmd.lead(AWS_VALUES, AWS_FLAGS) {
        Ok(Some(at)) => at,
        Ok(None) => return,
        Err(option) => {
            out.raise(Tier::Mutate, format!("unknown aws option before the service: {option}"));
            unclear = true;
            let Some((at, _)) = cmd.positionals().next() else { return };
            at
        }
    };
    let service = cmd.args[at].as_str();
    let rest = cmd.after(at);
    let op_at = match rest.lead(AWS_VALUES, AWS_FLAGS) {
        Ok(at) => at,
        Err(option) => {
            let reason = format!("unknown aws option before the operation: {option}");
            out.raise(Tier::Mutate, reason);
            unclear = true;
            rest.positionals().next().map(|(i, _)| i)
        }
    };
    let op = op_at.map_or("", |i| rest.args[i].as_str());
    if cmd.dynamic(at) || op_at.is_some_and(|i| rest.dynamic(i)) {
        out.hidden_sub(format!("the aws operation is hidden: {service} {op}"));
        return;
    }
    if unclear
        && let Some(word) = cmd
            .args
            .iter()
            .find(|w| matches!(tier(service, w, &rest), Effect::Changes(Tier::Destroy, _)))
    {
        out.raise(Tier::Destroy, format!("aws may delete: its operation is unclear ({word})"));
    }
    match op {
        "" => out.prefix(&["aws", service]),
        _ => out.prefix(&["aws", service, op]),
    }
    for word in rest.args {
        if let Some(file) = word.strip_prefix("fileb://").or_else(|| word.strip_prefix("file://")) {
            let path = rest.resolve(out, file);
            out.read(path);
        }
    }
    if let Some(reason) = secret(service, op, &rest) {
        out.secret(reason);
    }
    let effect = tier(service, op, &rest);
    if let Some(op_at) = op_at.filter(|_| outfile(service, op)) {
        out.raise(Tier::Mutate, format!("aws {service} {op} writes a file"));
        written(&rest, op_at, out);
    }
    let Effect::Changes(tier, reason) = effect else { return };
    if service == "s3" && matches!(op, "cp" | "mv" | "sync") {
        let words: Vec<(usize, &str)> = rest.positionals().skip(1).take(2).collect();
        if let Some(&(i, _)) = words.first().filter(|(i, w)| !w.contains("://") && !rest.hidden(*i))
        {
            out.word(&rest, i, PathUse::Read);
        }
        download(&rest, &words, out);
    }
    let dry = rest.args.iter().rev().find(|a| *a == "--dry-run" || *a == "--no-dry-run");
    match tier == Tier::Mutate && service == "ec2" && dry.is_some_and(|a| a == "--dry-run") {
        true => out.raise(Tier::Plan, format!("aws ec2 {op} --dry-run only checks the change")),
        false => out.raise(tier, format!("aws {} {reason}", [service, op].join(" ").trim())),
    }
}

/// Operations whose last positional word is a file they write.
fn outfile(service: &str, op: &str) -> bool {
    matches!(
        (service, op),
        ("s3api", "get-object" | "get-object-torrent" | "select-object-content")
            | ("lambda", "invoke" | "invoke-with-response-stream")
            | ("apigateway", "get-export" | "get-sdk")
            | ("polly", "synthesize-speech")
            | ("glacier", "get-job-output")
            | ("mediastore-data", "get-object")
            | ("kinesis-video-media", "get-media")
            | ("sagemaker-runtime", "invoke-endpoint")
            | ("lex-runtime", "post-content")
    )
}

/// Records as written the positional words after the operation that are not an option's
/// value (the output file).
fn written(rest: &Cmd, op_at: usize, out: &mut Out) {
    for i in op_at + 1..rest.args.len() {
        let (word, before) = (rest.args[i].as_str(), rest.args[i - 1].as_str());
        let value = is_option(before) && !before.contains('=') && !AWS_FLAGS.has(before);
        if is_option(word) || value && i - 1 != op_at {
            continue;
        }
        if rest.hidden(i) {
            out.raise(Tier::Mutate, format!("aws writes a hidden path: {word}"));
        } else {
            out.word(rest, i, PathUse::Write);
        }
    }
}

/// What an aws operation does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Effect {
    /// It only reads.
    Reads,
    /// It changes something, at this tier, for this reason.
    Changes(Tier, &'static str),
}

/// What an aws operation does; an empty or unknown one never only reads.
fn tier(service: &str, op: &str, rest: &Cmd) -> Effect {
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
        ("help", _) | (_, "help") => Effect::Reads,
        (_, "") => Effect::Changes(Tier::Mutate, "names no operation"),
        ("configure", "list" | "get" | "list-profiles") => Effect::Reads,
        ("configure", _) => Effect::Changes(Tier::Mutate, "writes the aws configuration"),
        ("s3", "ls" | "presign") => Effect::Reads,
        ("sts", _) if op.starts_with("assume-role") || op == "get-federation-token" => {
            Effect::Reads
        }
        ("rds", "generate-db-auth-token") => Effect::Reads,
        ("s3", "rm" | "rb") => Effect::Changes(Tier::Destroy, "deletes objects"),
        ("s3", "sync") if rest.has("--delete") => {
            Effect::Changes(Tier::Destroy, "--delete deletes objects")
        }
        (_, "scan" | "query" | "tail" | "wait") => Effect::Reads,
        _ if op.contains("delete") || op == "schedule-key-deletion" => {
            Effect::Changes(Tier::Destroy, "deletes resources")
        }
        _ if destroy.iter().any(|p| op.starts_with(p)) => {
            Effect::Changes(Tier::Destroy, "deletes resources")
        }
        _ if read.iter().any(|p| op.starts_with(p)) => Effect::Reads,
        _ => Effect::Changes(Tier::Mutate, "changes cloud resources"),
    }
}

/// Operations that print credentials or secret values.
fn secret(service: &str, op: &str, rest: &Cmd) -> Option<&'static str> {
    let decrypted = rest.has("--with-decryption");
    let found = match (service, op) {
        (
            "sts",
            "get-session-token"
            | "assume-role"
            | "assume-role-with-saml"
            | "assume-role-with-web-identity"
            | "get-federation-token",
        ) => "aws sts prints temporary credentials",
        ("secretsmanager", "get-secret-value" | "batch-get-secret-value") => {
            "aws secretsmanager prints secret values"
        }
        ("ssm", "get-parameter" | "get-parameters" | "get-parameters-by-path")
        | ("ssm", "get-parameter-history")
            if decrypted =>
        {
            "aws ssm --with-decryption prints secret parameters"
        }
        ("ecr" | "ecr-public", "get-login-password" | "get-authorization-token")
        | ("codeartifact", "get-authorization-token")
        | ("rds", "generate-db-auth-token")
        | ("sso", "get-role-credentials")
        | ("cognito-identity", "get-credentials-for-identity")
        | ("configure", "export-credentials") => "aws prints credentials",
        ("configure", "get")
            if rest.args.iter().any(|a| a.contains("secret") || a.contains("token")) =>
        {
            "aws configure get prints credentials"
        }
        _ => return None,
    };
    Some(found)
}

/// A copy from a bucket to a local path (`gcloud storage cp`, `gsutil cp`, `aws s3 cp`):
/// `words` are the sources then the destination; a local destination is written, and a state
/// file copied down overwrites the state.
pub(super) fn download(cmd: &Cmd, words: &[(usize, &str)], out: &mut Out) {
    let Some(&(at, dest)) = words.last().filter(|_| words.len() > 1) else { return };
    if dest == "-" || dest.contains("://") || cmd.hidden(at) {
        return;
    }
    if words.iter().any(|(_, w)| state_file(w.trim_end_matches('/'))) {
        out.raise(Tier::Destroy, format!("{} copies terraform state to {dest}", cmd.name));
    }
    out.word(cmd, at, PathUse::Write);
}
