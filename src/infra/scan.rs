//! The lenient scan: every literal word of the raw source, quotes and backslashes dropped,
//! looked at for a dangerous pair ("terraform … destroy", "rm -rf"). It only ever raises the
//! tier of a script that could not be understood; it never lowers anything.

use super::word::{Words, words};

/// Programs and the later words that make them dangerous.
const PAIRS: &[(&[&str], &[&str])] = &[
    (
        &["terraform", "tofu", "terragrunt", "pulumi"],
        &["destroy", "-destroy", "apply", "up", "rm", "state", "force-unlock"],
    ),
    (&["kubectl", "oc"], &["delete", "drain", "replace"]),
    (&["helm"], &["uninstall", "delete", "rollback"]),
    (&["aws", "gcloud", "az"], &["rm", "rb"]),
];

/// Programs dangerous on their own.
const ALONE: Words = words!("dd shred truncate wipefs");

/// The first dangerous pair the words of `src` mention, as a phrase ("terraform destroy"):
/// read with quotes dropped (`t'erraform'`) and with quotes splitting words
/// (`-S'terraform destroy'`).
pub(super) fn danger(src: &str) -> Option<String> {
    let joined: String = src.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    let split: String =
        src.chars().map(|c| if matches!(c, '\'' | '"') { ' ' } else { c }).collect();
    pairs(&joined).or_else(|| pairs(&split.replace('\\', "")))
}

/// The first dangerous pair among the words of `cleaned`.
fn pairs(cleaned: &str) -> Option<String> {
    let words: Vec<&str> = cleaned
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+')))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        if word.contains(".tfstate") {
            return Some("terraform state".to_string());
        }
        let program = word.rsplit('/').next().unwrap_or(word);
        if ALONE.has(program) || program.starts_with("mkfs") {
            return Some(program.to_string());
        }
        let later = words.get(i + 1..).unwrap_or(&[]);
        if program == "rm" && later.iter().any(|w| recursive(w)) {
            return Some("rm -r".to_string());
        }
        if matches!(program, "aws" | "gcloud" | "az")
            && let Some(verb) =
                later.iter().find(|w| w.starts_with("delete") || w.starts_with("terminate"))
        {
            return Some(format!("{program} {verb}"));
        }
        for (programs, verbs) in PAIRS {
            if programs.contains(&program)
                && let Some(verb) = later.iter().find(|w| verbs.contains(w))
            {
                return Some(format!("{program} {verb}"));
            }
        }
    }
    None
}

/// The destroying verb among the words of a command whose program is hidden (`$TF destroy`).
pub(super) fn hidden_verb(args: &[String]) -> Option<&str> {
    const VERBS: Words = words!("destroy -destroy delete uninstall drain rb force-unlock");
    args.iter().map(String::as_str).find(|a| VERBS.has(a) || a.starts_with("terminate-"))
}

/// Words that ask a program to delete something (`eksctl delete cluster`, `vault kv delete`).
const DELETING: Words = words!(
    "delete destroy remove rm terminate purge drop uninstall wipe erase nuke \
    prune rb teardown down flushall flushdb truncate"
);

/// The first word of `args` that asks a program it does not know to delete (`delete`,
/// `destroy`, `rm`, `purge`, `delete-*`, any case): a plain word, or a word of an argument
/// holding spaces (`psql -c "DROP TABLE x"`); paths and options are not read.
pub(super) fn deleting_word(args: &[String]) -> Option<&str> {
    let mut words = args.iter().flat_map(|a| {
        let spaced = a.contains(char::is_whitespace);
        let plain = !a.starts_with('-') && !a.contains(['/', '.', '=', ':']);
        a.split(move |c: char| !spaced && c == '\0' || spaced && !(c.is_alphanumeric() || c == '-'))
            .filter(move |w| (spaced || plain) && !w.is_empty())
    });
    words.find(|w| {
        let w = w.as_bytes();
        DELETING.iter().any(|d| d.as_bytes().eq_ignore_ascii_case(w))
            || ["delete-", "destroy-", "terminate-"]
                .iter()
                .any(|p| w.len() > p.len() && w[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
    })
}

/// Whether a word is a recursive flag of rm (`-r`, `-rf`, `-fR`, `--recursive`).
fn recursive(word: &str) -> bool {
    word == "--recursive"
        || word.len() > 1
            && word.starts_with('-')
            && !word.starts_with("--")
            && word.contains(['r', 'R'])
}
