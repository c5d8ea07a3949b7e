//! The Kubernetes side of the scope: context and namespace (flags, then the kubeconfig,
//! read by a line scan), the objects a `kubectl` command names or reads from manifests, and
//! the Helm release.

use std::path::Path;

use super::{Kind, LARGE, Lines, Vars, args, read_capped, resolve, show};
use crate::infra::word::{Words, words};
use crate::shell::Simple;

/// Options of kubectl and helm that take a value (as the next word), space-separated.
const VALUED: Words = words!(
    "\
    -n --namespace --context --kube-context --cluster --user --kubeconfig -f --filename -k \
    --kustomize -l --selector -o --output -c --container --field-selector -s --server \
    --token --as --as-group --request-timeout --timeout --grace-period --type -p --patch \
    --image --replicas --port --target-port --for --sort-by --template --subresource \
    --overrides --field-manager --values --set --set-string --set-file --set-json \
    --set-literal --version --repo --description --post-renderer --post-renderer-args \
    --username --password --ca-file --cert-file --key-file --keyring --history-max --max \
    --revision --registry-config --repository-config --repository-cache --kube-apiserver \
    --kube-token --kube-as-user --kube-as-group --kube-ca-file --burst-limit --qps \
    --name-template --labels --deletion-propagation --current-replicas --resource-version \
    --min --cpu-percent"
);

/// kubectl verbs followed by `TYPE NAME…` or `TYPE/NAME…`, space-separated.
const OBJECT_VERBS: Words = words!(
    "\
    get describe delete edit patch label annotate scale expose autoscale wait create rollout \
    set taint"
);

/// At most this many objects are named per line, and manifests read per directory.
const MAX_LISTED: usize = 50;

/// A command's words split into options (name, value) and positional words.
#[derive(Default)]
struct Parsed {
    options: Vec<(String, Option<String>)>,
    words: Vec<(String, bool)>,
}

impl Parsed {
    fn new(cmd: &Simple) -> Parsed {
        let mut parsed = Parsed::default();
        let mut it = args(cmd);
        while let Some((word, dynamic)) = it.next() {
            if word == "--" {
                break;
            }
            if !word.starts_with('-') || word == "-" {
                parsed.words.push((word.clone(), dynamic));
            } else if let Some((name, value)) = word.split_once('=') {
                parsed.options.push((name.into(), Some(value.into())));
            } else if VALUED.iter().any(|v| v == word) {
                parsed.options.push((word.clone(), it.next().map(|(v, _)| v.clone())));
            } else if let Some(value) = ["-n", "-f", "-l", "-k"].iter().find_map(|short| {
                word.strip_prefix(short).filter(|v| !v.is_empty()).map(|v| (short, v))
            }) {
                parsed.options.push((value.0.to_string(), Some(value.1.into())));
            } else {
                parsed.options.push((word.clone(), None));
            }
        }
        parsed
    }

    /// The values of any of `names`, in order.
    fn values<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(n, _)| names.contains(&n.as_str()))
            .filter_map(|(_, v)| v.as_deref())
    }

    fn value(&self, names: &[&str]) -> Option<String> {
        self.values(names).last().map(str::to_string)
    }

    fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(n, _)| names.contains(&n.as_str()))
    }
}

/// Context, namespace, objects and release for one kubectl, helm or kustomize command.
pub(super) fn scope(
    lines: &mut Lines,
    program: &str,
    cmd: &Simple,
    dir: Option<&Path>,
    vars: &Vars,
) {
    let p = Parsed::new(cmd);
    let helm = program == "helm";
    let config_file = match p.value(&["--kubeconfig"]) {
        Some(file) => resolve(dir, &file, vars),
        None => match vars.get("KUBECONFIG") {
            Some(list) => {
                list.split(':').find(|f| !f.is_empty()).and_then(|f| resolve(dir, f, vars))
            }
            None => vars.get("HOME").map(|h| Path::new(&h).join(".kube/config")),
        },
    };
    let config = config_file.as_deref().and_then(|f| Some((f, read_capped(f, LARGE)?)));
    let context_flag = if helm { "--kube-context" } else { "--context" };
    let context = match p.value(&[context_flag]) {
        Some(c) => Some((c, context_flag.to_string())),
        None => match (helm, vars.get("HELM_KUBECONTEXT")) {
            (true, Some(c)) => Some((c, "HELM_KUBECONTEXT".into())),
            _ => config.as_ref().and_then(|(file, text)| {
                Some((current_context(text)?, format!("current-context in {}", show(file, vars))))
            }),
        },
    };
    if let Some((name, source)) = &context {
        lines.add(Kind::KubeContext, format!("kube context: {name} ({source})"));
    }
    let namespace = if p.has(&["-A", "--all-namespaces"]) {
        "all (--all-namespaces)".to_string()
    } else if let Some(ns) = p.value(&["-n", "--namespace"]) {
        ns
    } else if let Some(ns) = vars.get("HELM_NAMESPACE").filter(|_| helm) {
        format!("{ns} (HELM_NAMESPACE)")
    } else {
        let of_context = context
            .as_ref()
            .zip(config.as_ref())
            .and_then(|((name, _), (_, text))| Some((name, context_namespace(text, name)?)));
        match of_context {
            Some((name, ns)) => format!("{ns} (context {name})"),
            None => "default".into(),
        }
    };
    lines.add(Kind::KubeNamespace, format!("kube namespace: {namespace}"));
    match program {
        "kubectl" => objects(lines, &p, dir, vars),
        "helm" => release(lines, &p),
        _ => {}
    }
}

/// The objects a kubectl command names, and those of its `-f` manifests.
fn objects(lines: &mut Lines, p: &Parsed, dir: Option<&Path>, vars: &Vars) {
    let mut named = Vec::new();
    let words: Vec<&str> = p.words.iter().map(|(w, _)| w.as_str()).collect();
    match words[..] {
        ["cordon" | "uncordon" | "drain", ref nodes @ ..] => {
            named.extend(nodes.iter().map(|n| format!("node/{n}")));
        }
        ["exec" | "attach" | "logs" | "port-forward", pod, ..] => {
            named.push(if pod.contains('/') { pod.to_string() } else { format!("pod/{pod}") });
        }
        [verb, ref rest @ ..] if OBJECT_VERBS.iter().any(|v| v == verb) => {
            let mut rest: Vec<&str> = rest
                .iter()
                .filter(|w| !w.contains('=') && !w.ends_with('-') && !w.contains(':'))
                .copied()
                .collect();
            // `rollout restart …`, `set image …`; `create secret generic NAME`.
            if matches!(verb, "rollout" | "set") && !rest.is_empty() {
                rest.remove(0);
            } else if verb == "create"
                && matches!(rest[..], ["secret" | "service" | "svc", _, _, ..])
            {
                rest.remove(1);
            }
            if rest.iter().any(|w| w.contains('/')) {
                named.extend(rest.iter().filter(|w| w.contains('/')).map(|w| w.to_string()));
            } else if let [kind, names @ ..] = &rest[..] {
                if !names.is_empty() {
                    named.extend(names.iter().map(|n| format!("{kind}/{n}")));
                } else if p.has(&["--all"]) {
                    named.push(format!("{kind} (all)"));
                } else if let Some(sel) = p.value(&["-l", "--selector"]) {
                    named.push(format!("{kind} (-l {sel})"));
                } else {
                    named.push(kind.to_string());
                }
            }
        }
        _ => {}
    }
    if !named.is_empty() {
        lines.add(Kind::KubeObjects, format!("kube objects: {}", listed(&named)));
    }
    for source in p.values(&["-f", "--filename"]) {
        let line = if source == "-" {
            "kube objects: from stdin".to_string()
        } else if source.contains("://") {
            format!("kube objects: from URL {source}")
        } else {
            match from_manifests(dir, source, vars) {
                Some(found) if !found.is_empty() => {
                    format!("kube objects: {} (from {source})", listed(&found))
                }
                _ => format!("kube objects: from {source}"),
            }
        };
        lines.add(Kind::KubeObjects, line);
    }
    for source in p.values(&["-k", "--kustomize"]) {
        lines.add(Kind::KubeObjects, format!("kube objects: from kustomization {source}"));
    }
}

/// The objects of a manifest file, or of the `*.yaml`/`*.yml` files of a directory (at
/// most 4 MiB in all).
fn from_manifests(dir: Option<&Path>, source: &str, vars: &Vars) -> Option<Vec<String>> {
    if source.contains('$') || source.contains('`') {
        return None;
    }
    let path = resolve(dir, source, vars)?;
    let mut files = Vec::new();
    if std::fs::metadata(&path).ok()?.is_dir() {
        for entry in std::fs::read_dir(&path).ok()?.flatten().take(10 * MAX_LISTED) {
            let file = entry.path();
            if file.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                files.push(file);
            }
        }
        files.sort();
        files.truncate(MAX_LISTED);
    } else {
        files.push(path);
    }
    let (mut found, mut budget) = (Vec::new(), 4 * LARGE);
    for file in files {
        let text = read_capped(&file, LARGE.min(budget))?;
        budget = budget.saturating_sub(text.len() as u64);
        found.extend(manifest_objects(&text));
    }
    Some(found)
}

/// `Kind/name` (and ` in namespace`) of each document of a YAML manifest: the top-level
/// `kind:` and the `name:`/`namespace:` directly under `metadata:`.
fn manifest_objects(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for doc in split_documents(text) {
        let (mut kind, mut name, mut namespace) = (None, None, None);
        let mut meta_indent: Option<Option<usize>> = None;
        for line in doc {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.len() - line.trim_start_matches(' ').len();
            if indent == 0 {
                let rest = trimmed.strip_prefix("metadata:").map(str::trim);
                let is_meta = rest.is_some_and(|r| r.is_empty() || r.starts_with('#'));
                meta_indent = is_meta.then_some(None);
                kind = value_of(trimmed, "kind").or(kind);
            } else if let Some(at) = &mut meta_indent
                && *at.get_or_insert(indent) == indent
            {
                name = value_of(trimmed, "name").or(name);
                namespace = value_of(trimmed, "namespace").or(namespace);
            }
        }
        if let Some(kind) = kind {
            let mut object = match name {
                Some(name) => format!("{kind}/{name}"),
                None => kind,
            };
            if let Some(ns) = namespace {
                object.push_str(&format!(" in {ns}"));
            }
            out.push(object);
        }
    }
    out
}

/// The documents of a YAML stream, split on `---` lines.
fn split_documents(text: &str) -> Vec<Vec<&str>> {
    let mut docs = vec![Vec::new()];
    for line in text.lines() {
        let marker =
            line.starts_with("---") && line[3..].chars().next().is_none_or(char::is_whitespace);
        if marker {
            docs.push(Vec::new());
        } else if let Some(doc) = docs.last_mut() {
            doc.push(line);
        }
    }
    docs
}

/// The scalar value of `key: value` (quotes and a trailing comment removed).
fn value_of(line: &str, key: &str) -> Option<String> {
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    let rest = match rest.find(" #") {
        Some(at) => &rest[..at],
        None => rest,
    };
    let value = rest.trim();
    let value = ['"', '\'']
        .iter()
        .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
        .unwrap_or(value);
    let plain = !value.is_empty() && !value.starts_with(['{', '[', '&', '*', '|', '>']);
    plain.then(|| value.to_string())
}

/// The `current-context:` of a kubeconfig.
fn current_context(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.starts_with("current-context:"))
        .and_then(|l| value_of(l, "current-context"))
}

/// The namespace of context `name` in a kubeconfig, by a scan of its `contexts:` list.
fn context_namespace(text: &str, name: &str) -> Option<String> {
    let mut in_contexts = false;
    let (mut this_name, mut this_ns): (Option<String>, Option<String>) = (None, None);
    let mut result = None;
    let mut finish = |n: &mut Option<String>, ns: &mut Option<String>| {
        if n.as_deref() == Some(name) && result.is_none() {
            result = ns.take();
        }
        (*n, *ns) = (None, None);
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !line.starts_with([' ', '-']) {
            finish(&mut this_name, &mut this_ns);
            in_contexts = trimmed == "contexts:";
            continue;
        }
        if !in_contexts {
            continue;
        }
        let item = line.trim_start_matches(' ');
        if let Some(first) = item.strip_prefix('-') {
            finish(&mut this_name, &mut this_ns);
            if let Some(n) = value_of(first.trim(), "name") {
                this_name = Some(n);
            }
            continue;
        }
        this_name = value_of(trimmed, "name").or(this_name);
        this_ns = value_of(trimmed, "namespace").or(this_ns);
    }
    finish(&mut this_name, &mut this_ns);
    result
}

/// The release a helm command acts on: the first word after the verb (every word, for
/// `uninstall`).
fn release(lines: &mut Lines, p: &Parsed) {
    let words: Vec<&str> = p.words.iter().map(|(w, _)| w.as_str()).collect();
    let releases: &[&str] = match words[..] {
        ["uninstall" | "delete" | "del" | "un", ref names @ ..] => names,
        ["install" | "i", ..] if p.has(&["--generate-name", "-g"]) => &[],
        ["install" | "i" | "upgrade" | "rollback", ref rest @ ..] => &rest[..rest.len().min(1)],
        _ => &[],
    };
    for name in releases {
        lines.add(Kind::HelmRelease, format!("helm release: {name}"));
    }
}

/// Up to [`MAX_LISTED`] names, comma-separated, then how many more.
fn listed(names: &[String]) -> String {
    let mut out = names.iter().take(MAX_LISTED).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > MAX_LISTED {
        out.push_str(&format!(" and {} more", names.len() - MAX_LISTED));
    }
    out
}

#[cfg(test)]
#[path = "kube_tests.rs"]
mod tests;
