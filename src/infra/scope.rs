//! What a command would act on: the Terraform workspace and backend, the Kubernetes context,
//! namespace and objects, the cloud account, the Helm release. Shown to the human with the
//! permission question. Reads a few small local files (capped; anything odd skips the line)
//! and never runs anything.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::shell::{Script, Simple};

mod kube;

/// The largest Terraform file read (`.terraform/environment`, its `terraform.tfstate`).
const SMALL: u64 = 64 * 1024;
/// The largest kubeconfig, manifest or cloud profile read.
pub(super) const LARGE: u64 = 1024 * 1024;

/// The kinds of line, in the order they are shown.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Workspace,
    Backend,
    KubeContext,
    KubeNamespace,
    KubeObjects,
    AwsProfile,
    AwsRegion,
    GcpProject,
    AzureSubscription,
    HelmRelease,
}

/// Lines gathered per kind.
#[derive(Default)]
pub(super) struct Lines([Vec<String>; 10]);

impl Lines {
    /// Adds a line of `kind`.
    pub(super) fn add(&mut self, kind: Kind, line: String) {
        self.0[kind as usize].push(line);
    }

    /// Every line in the order of the kinds, each once.
    fn finish(self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in self.0.into_iter().flatten() {
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }
}

/// The environment one command sees: its own assignments, then those the script exported
/// earlier, then the caller's.
pub(super) struct Vars<'a> {
    own: &'a [(String, String)],
    script: &'a [(String, String)],
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Vars<'_> {
    /// A variable's value, if set and not empty.
    pub(super) fn get(&self, name: &str) -> Option<String> {
        let set = |list: &[(String, String)]| {
            list.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.clone())
        };
        set(self.own)
            .or_else(|| set(self.script))
            .or_else(|| (self.env)(name))
            .filter(|v| !v.is_empty())
    }

    /// The first of `names` that is set, as `value (NAME)`.
    fn first(&self, names: &[&str]) -> Option<String> {
        names.iter().find_map(|n| self.get(n).map(|v| format!("{v} ({n})")))
    }
}

/// Lines such as `terraform workspace: prod (TF_WORKSPACE)`, `kube context: prod-eu
/// (current-context in ~/.kube/config)`, `AWS profile: prod (AWS_PROFILE)`, for the
/// programs in `script` only: deduplicated, in the order workspace, backend, kube context,
/// namespace, objects, AWS profile, region, Google Cloud project, Azure subscription, Helm
/// release. `cwd` is where the script starts; `env` its environment.
pub fn scope(script: &Script, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut lines = Lines::default();
    let mut selected: Option<String> = None;
    walk(script, cwd, env, |cmd, program, dir, vars| {
        let vars = &vars;
        match program {
            "terraform" | "tofu" | "terragrunt" => {
                terraform(&mut lines, cmd, dir, cwd, vars, &mut selected);
            }
            "kubectl" | "helm" | "kustomize" => {
                kube::scope(&mut lines, program, cmd, dir, vars);
            }
            "aws" => {
                let profile = flag(cmd, "--profile").map(|p| format!("{p} (--profile)"));
                if let Some(p) =
                    profile.or_else(|| vars.first(&["AWS_PROFILE", "AWS_DEFAULT_PROFILE"]))
                {
                    lines.add(Kind::AwsProfile, format!("AWS profile: {p}"));
                }
                let region = flag(cmd, "--region").map(|r| format!("{r} (--region)"));
                if let Some(r) =
                    region.or_else(|| vars.first(&["AWS_REGION", "AWS_DEFAULT_REGION"]))
                {
                    lines.add(Kind::AwsRegion, format!("AWS region: {r}"));
                }
            }
            "gcloud" => {
                let project = flag(cmd, "--project")
                    .map(|p| format!("{p} (--project)"))
                    .or_else(|| vars.first(&["CLOUDSDK_CORE_PROJECT"]))
                    .or_else(|| gcloud_project(cmd, vars));
                if let Some(p) = project {
                    lines.add(Kind::GcpProject, format!("Google Cloud project: {p}"));
                }
            }
            "az" => {
                let sub = flag(cmd, "--subscription")
                    .map(|s| format!("{s} (--subscription)"))
                    .or_else(|| azure_subscription(vars));
                if let Some(s) = sub {
                    lines.add(Kind::AzureSubscription, format!("Azure subscription: {s}"));
                }
            }
            _ => {}
        }
    });
    lines.finish()
}

/// The directory each command of `script` runs in (`cd`, `pushd` and `popd` followed;
/// `None` where it cannot be known: a hidden `cd $X`, `popd`, `cd -`).
pub fn dirs(
    script: &Script,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Option<PathBuf>> {
    let mut out = Vec::with_capacity(script.commands.len());
    walk_all(script, cwd, env, |_, dir, _| out.push(dir.map(Path::to_path_buf)));
    out
}

/// Calls `f` with each command that has a program, its program, the directory it runs in
/// and the environment it sees.
fn walk(
    script: &Script,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    mut f: impl FnMut(&Simple, &str, Option<&Path>, Vars),
) {
    walk_all(script, cwd, env, |cmd, dir, vars| {
        if let Some(program) = cmd.program() {
            f(cmd, program, dir, vars);
        }
    });
}

/// Calls `f` with every command of `script` (bare assignments too), the directory it runs
/// in and the environment it sees; follows `cd`, `pushd`, `popd` and `export`.
fn walk_all(
    script: &Script,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    mut f: impl FnMut(&Simple, Option<&Path>, Vars),
) {
    let mut dir = Some(cwd.to_path_buf());
    let mut exported: Vec<(String, String)> = Vec::new();
    for cmd in &script.commands {
        f(cmd, dir.as_deref(), Vars { own: &cmd.assigns, script: &exported, env });
        let vars = Vars { own: &cmd.assigns, script: &exported, env };
        let Some(program) = cmd.program() else {
            // `X=1` alone changes the environment of later commands only if X is exported.
            let before = Vars { own: &[], script: &exported, env };
            let known: Vec<_> =
                cmd.assigns.iter().filter(|(n, _)| before.get(n).is_some()).cloned().collect();
            exported.extend(known);
            continue;
        };
        match program {
            "cd" | "pushd" => dir = change_dir(dir.as_deref(), cmd, &vars),
            "popd" => dir = None,
            "export" => {
                let words =
                    cmd.argv.iter().zip(cmd.dynamic.iter().chain(std::iter::repeat(&false)));
                let mut set = Vec::new();
                for (word, dynamic) in words.skip(1) {
                    if let Some((name, value)) = word.split_once('=')
                        && !dynamic
                    {
                        set.push((name.to_string(), value.to_string()));
                    }
                }
                exported.extend(set);
            }
            _ => {}
        }
    }
}

/// Where `cd`/`pushd` goes; `None` when it cannot be known.
fn change_dir(dir: Option<&Path>, cmd: &Simple, vars: &Vars) -> Option<PathBuf> {
    let mut words =
        args(cmd).filter(|(w, _)| !matches!(w.as_str(), "-L" | "-P" | "-e" | "-@" | "--"));
    match words.next() {
        None => vars.get("HOME").map(PathBuf::from),
        Some((_, true)) => None,
        Some((w, false)) if w == "-" => None,
        Some((w, false)) => resolve(dir, w, vars),
    }
}

/// The words after the program, with whether each is dynamic.
pub(super) fn args(cmd: &Simple) -> impl Iterator<Item = (&String, bool)> {
    cmd.argv
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, w)| (w, cmd.dynamic.get(i).copied().unwrap_or(false)))
}

/// The value of `--name X` or `--name=X`; a dynamic value is shown as written.
pub(super) fn flag(cmd: &Simple, name: &str) -> Option<String> {
    let mut words = cmd.argv.iter().skip(1);
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if word == name {
            return words.next().cloned();
        }
        if let Some(value) = word.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(value.to_string());
        }
    }
    None
}

/// `word` as a path: `~` is the home directory, a relative path is under `dir`.
pub(super) fn resolve(dir: Option<&Path>, word: &str, vars: &Vars) -> Option<PathBuf> {
    if word == "~" || word.starts_with("~/") {
        let home = PathBuf::from(vars.get("HOME")?);
        return Some(home.join(word.trim_start_matches('~').trim_start_matches('/')));
    }
    let path = Path::new(word);
    if path.is_absolute() { Some(path.to_path_buf()) } else { dir.map(|d| d.join(path)) }
}

/// A path for a person: under the home directory as `~/…`.
pub(super) fn show(path: &Path, vars: &Vars) -> String {
    if let Some(home) = vars.get("HOME")
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// A regular file's text, if it is at most `cap` bytes. Never opens a FIFO or a device.
pub(super) fn read_capped(path: &Path, cap: u64) -> Option<String> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > cap {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).trim_start_matches('\u{feff}').to_string())
}

/// Workspace, backend and the cloud variables the providers read, for one `terraform`.
fn terraform(
    lines: &mut Lines,
    cmd: &Simple,
    dir: Option<&Path>,
    cwd: &Path,
    vars: &Vars,
    selected: &mut Option<String>,
) {
    let mut tf_dir = dir.map(Path::to_path_buf);
    let mut rest = Vec::new();
    for (word, dynamic) in args(cmd) {
        if let Some(d) = word.strip_prefix("-chdir=").or_else(|| word.strip_prefix("--chdir=")) {
            tf_dir = if dynamic { None } else { resolve(tf_dir.as_deref(), d, vars) };
        } else if rest.is_empty() && word.starts_with('-') {
            continue;
        } else {
            rest.push((word.as_str(), dynamic));
        }
    }
    let data =
        tf_dir.as_ref().map(|d| d.join(vars.get("TF_DATA_DIR").unwrap_or(".terraform".into())));
    // Relative to where the script starts, unless that is `/`.
    let shown = |p: &Path| match p.strip_prefix(cwd) {
        Ok(rel) if cwd.parent().is_some() => rel.display().to_string(),
        _ => show(p, vars),
    };
    let workspace = if let Some(w) = vars.get("TF_WORKSPACE") {
        Some(format!("{w} (TF_WORKSPACE)"))
    } else if let Some(w) = selected.clone() {
        Some(format!("{w} (terraform workspace select)"))
    } else if let Some(data) = &data {
        let file = data.join("environment");
        match read_capped(&file, SMALL).map(|t| t.trim().to_string()) {
            Some(w) if !w.is_empty() => Some(format!("{w} ({})", shown(&file))),
            _ if !file.exists() => Some("default".into()),
            _ => None,
        }
    } else {
        None
    };
    if let Some(w) = workspace {
        lines.add(Kind::Workspace, format!("terraform workspace: {w}"));
    }
    if let Some(data) = &data {
        let file = data.join("terraform.tfstate");
        let backend = match read_capped(&file, SMALL) {
            Some(text) => serde_json::from_str::<serde_json::Value>(&text).ok().map(|state| {
                let kind = state.pointer("/backend/type").and_then(|t| t.as_str());
                kind.unwrap_or("local").to_string()
            }),
            None if file.exists() => None,
            // Terragrunt keeps its working directories elsewhere.
            None => (cmd.program() != Some("terragrunt")).then(|| "local".to_string()),
        };
        if let Some(b) = backend {
            lines.add(Kind::Backend, format!("terraform backend: {b}"));
        }
    }
    // A literal `terraform workspace select|new NAME` applies to the commands after it.
    if let [("workspace", false), ("select" | "new", false), .., (name, false)] = rest[..]
        && !name.starts_with('-')
    {
        *selected = Some(name.to_string());
    }
    let clouds: [(Kind, &str, &[&str]); 4] = [
        (Kind::AwsProfile, "AWS profile", &["AWS_PROFILE"]),
        (Kind::AwsRegion, "AWS region", &["AWS_REGION", "AWS_DEFAULT_REGION"]),
        (
            Kind::GcpProject,
            "Google Cloud project",
            &["GOOGLE_CLOUD_PROJECT", "GOOGLE_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"],
        ),
        (Kind::AzureSubscription, "Azure subscription", &["ARM_SUBSCRIPTION_ID"]),
    ];
    for (kind, label, names) in clouds {
        if let Some(value) = vars.first(names) {
            lines.add(kind, format!("{label}: {value}"));
        }
    }
}

/// The project of gcloud's active configuration (`--configuration`,
/// `CLOUDSDK_ACTIVE_CONFIG_NAME`, or the `active_config` file).
fn gcloud_project(cmd: &Simple, vars: &Vars) -> Option<String> {
    let base = match vars.get("CLOUDSDK_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(vars.get("HOME")?).join(".config/gcloud"),
    };
    let name = flag(cmd, "--configuration")
        .or_else(|| vars.get("CLOUDSDK_ACTIVE_CONFIG_NAME"))
        .or_else(|| read_capped(&base.join("active_config"), SMALL).map(|t| t.trim().to_string()))
        .unwrap_or_else(|| "default".into());
    if name.contains('/') || name.is_empty() {
        return None;
    }
    let text = read_capped(&base.join("configurations").join(format!("config_{name}")), SMALL)?;
    let mut core = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            core = line == "[core]";
        } else if core
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "project"
            && !value.trim().is_empty()
        {
            return Some(format!("{} (gcloud configuration {name})", value.trim()));
        }
    }
    None
}

/// The default subscription in the Azure CLI's `azureProfile.json`.
fn azure_subscription(vars: &Vars) -> Option<String> {
    let base = match vars.get("AZURE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(vars.get("HOME")?).join(".azure"),
    };
    let file = base.join("azureProfile.json");
    let profile: serde_json::Value = serde_json::from_str(&read_capped(&file, LARGE)?).ok()?;
    let subs = profile.get("subscriptions")?.as_array()?;
    let default =
        subs.iter().find(|s| s.get("isDefault").and_then(|d| d.as_bool()) == Some(true))?;
    let name = default.get("name").and_then(|n| n.as_str());
    let id = default.get("id").and_then(|n| n.as_str());
    let shown = match (name, id) {
        (Some(name), Some(id)) => format!("{name} ({id}, default in {})", show(&file, vars)),
        (Some(one), None) | (None, Some(one)) => {
            format!("{one} (default in {})", show(&file, vars))
        }
        (None, None) => return None,
    };
    Some(shown)
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
