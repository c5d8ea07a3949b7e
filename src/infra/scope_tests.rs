//! Tests of the scope, on temporary directories holding a fake `.terraform` and cloud
//! profiles (Kubernetes: `scope/kube_tests.rs`). Scripts are built by hand: the shell
//! parser is not needed.

use std::path::{Path, PathBuf};

use super::*;
use crate::shell::{Script, Simple};

/// A temporary directory, removed when dropped.
pub(super) struct Temp(pub(super) PathBuf);

impl Temp {
    pub(super) fn new(name: &str) -> Temp {
        let dir = std::env::temp_dir().join(format!("iac-scope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Temp(dir)
    }

    pub(super) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, text).expect("write");
        path
    }

    pub(super) fn path(&self, rel: &str) -> String {
        self.0.join(rel).display().to_string()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A simple command with these assignments and words, none of them dynamic.
pub(super) fn with(assigns: &[(&str, &str)], argv: &[&str]) -> Simple {
    Simple {
        assigns: assigns.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        argv: argv.iter().map(|w| w.to_string()).collect(),
        dynamic: vec![false; argv.len()],
        ..Simple::default()
    }
}

pub(super) fn cmd(argv: &[&str]) -> Simple {
    with(&[], argv)
}

pub(super) fn run(commands: Vec<Simple>, cwd: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let env: Vec<(String, String)> =
        env.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    let lookup = move |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    scope(&Script { commands, ..Script::default() }, cwd, &lookup)
}

#[test]
fn terraform_reads_the_workspace_and_backend_of_its_directory() {
    let t = Temp::new("tf");
    t.write(".terraform/environment", "prod\n");
    t.write(".terraform/terraform.tfstate", r#"{"version":3,"backend":{"type":"s3","config":{}}}"#);
    let lines = run(vec![cmd(&["terraform", "apply"])], &t.0, &[]);
    assert_eq!(
        lines,
        ["terraform workspace: prod (.terraform/environment)", "terraform backend: s3"]
    );
    // TF_WORKSPACE beats the file; the command's own assignment beats the environment.
    let lines = run(vec![cmd(&["terraform", "plan"])], &t.0, &[("TF_WORKSPACE", "qa")]);
    assert_eq!(lines[0], "terraform workspace: qa (TF_WORKSPACE)");
    let own = with(&[("TF_WORKSPACE", "staging")], &["terraform", "plan"]);
    let lines = run(vec![own], &t.0, &[("TF_WORKSPACE", "qa")]);
    assert_eq!(lines[0], "terraform workspace: staging (TF_WORKSPACE)");
    // TF_DATA_DIR moves `.terraform`.
    let lines = run(vec![cmd(&["tofu", "plan"])], &t.0, &[("TF_DATA_DIR", "elsewhere")]);
    assert_eq!(lines, ["terraform workspace: default", "terraform backend: local"]);
}

#[test]
fn an_uninitialised_directory_is_the_default_workspace_on_local_state() {
    let t = Temp::new("tf-fresh");
    t.write("terraform.tfstate", "{}");
    let lines = run(vec![cmd(&["terraform", "destroy"])], &t.0, &[]);
    assert_eq!(lines, ["terraform workspace: default", "terraform backend: local"]);
    // Terragrunt's working directories are elsewhere: no guess about its backend.
    let lines = run(vec![cmd(&["terragrunt", "apply"])], &t.0, &[]);
    assert_eq!(lines, ["terraform workspace: default"]);
}

#[test]
fn cd_and_chdir_choose_the_directory() {
    let t = Temp::new("tf-dirs");
    t.write("infra/.terraform/environment", "prod");
    t.write("infra/.terraform/terraform.tfstate", r#"{"backend":{"type":"gcs"}}"#);
    t.write("other/.terraform/environment", "dev");
    let expected =
        ["terraform workspace: prod (infra/.terraform/environment)", "terraform backend: gcs"];
    let lines = run(vec![cmd(&["cd", "infra"]), cmd(&["terraform", "apply"])], &t.0, &[]);
    assert_eq!(lines, expected);
    let lines = run(vec![cmd(&["terraform", "-chdir=infra", "apply"])], &t.0, &[]);
    assert_eq!(lines, expected);
    let lines = run(
        vec![cmd(&["cd", "other"]), cmd(&["terraform", "-chdir=../infra", "apply"])],
        &t.0,
        &[],
    );
    assert_eq!(lines[0], "terraform workspace: prod (other/../infra/.terraform/environment)");
    let lines =
        run(vec![cmd(&["cd", &t.path("other")]), cmd(&["terraform", "plan"])], Path::new("/"), &[]);
    assert_eq!(
        lines[0],
        format!("terraform workspace: dev ({})", t.path("other/.terraform/environment"))
    );
    // A directory that cannot be known: no file is read, no guess is made.
    let mut dynamic = cmd(&["cd", "$DIR"]);
    dynamic.dynamic = vec![false, true];
    assert!(run(vec![dynamic, cmd(&["terraform", "apply"])], &t.0, &[]).is_empty());
    // `~` is the home directory of the environment given.
    let lines = run(
        vec![cmd(&["cd", "~/infra"]), cmd(&["terraform", "plan"])],
        Path::new("/"),
        &[("HOME", &t.path(""))],
    );
    assert_eq!(lines[0], "terraform workspace: prod (~/infra/.terraform/environment)");
}

#[test]
fn a_workspace_selected_earlier_in_the_script_applies_after_it() {
    let t = Temp::new("tf-select");
    t.write(".terraform/environment", "dev");
    let lines = run(
        vec![cmd(&["terraform", "workspace", "select", "prod"]), cmd(&["terraform", "destroy"])],
        &t.0,
        &[],
    );
    assert!(
        lines.contains(&"terraform workspace: prod (terraform workspace select)".into()),
        "{lines:?}"
    );
}

#[test]
fn terraform_shows_the_cloud_variables_its_providers_read() {
    let t = Temp::new("tf-clouds");
    let env = [
        ("AWS_PROFILE", "dev"),
        ("AWS_DEFAULT_REGION", "eu-west-1"),
        ("GOOGLE_CLOUD_PROJECT", "shop-prod"),
        ("ARM_SUBSCRIPTION_ID", "0000-1111"),
    ];
    let tf = with(&[("AWS_PROFILE", "prod")], &["terraform", "apply"]);
    let lines = run(vec![tf], &t.0, &env);
    assert_eq!(
        lines[2..],
        [
            "AWS profile: prod (AWS_PROFILE)",
            "AWS region: eu-west-1 (AWS_DEFAULT_REGION)",
            "Google Cloud project: shop-prod (GOOGLE_CLOUD_PROJECT)",
            "Azure subscription: 0000-1111 (ARM_SUBSCRIPTION_ID)",
        ]
    );
    // Only for the programs the script runs.
    assert!(run(vec![cmd(&["ls", "-la"]), cmd(&["git", "push"])], &t.0, &env).is_empty());
}

#[test]
fn cloud_clis_name_their_account() {
    let t = Temp::new("clouds");
    let own = with(&[("AWS_PROFILE", "prod")], &["aws", "s3", "rm", "s3://b", "--recursive"]);
    let lines = run(vec![own], &t.0, &[("AWS_PROFILE", "dev"), ("AWS_REGION", "eu-west-1")]);
    assert_eq!(lines, ["AWS profile: prod (AWS_PROFILE)", "AWS region: eu-west-1 (AWS_REGION)"]);
    let lines = run(
        vec![cmd(&["aws", "--profile", "x", "--region=us-east-1", "ec2", "describe-instances"])],
        &t.0,
        &[],
    );
    assert_eq!(lines, ["AWS profile: x (--profile)", "AWS region: us-east-1 (--region)"]);
    let lines = run(
        vec![cmd(&["export", "AWS_PROFILE=exported"]), cmd(&["aws", "sts", "get-caller-identity"])],
        &t.0,
        &[],
    );
    assert_eq!(lines, ["AWS profile: exported (AWS_PROFILE)"]);
    // A bare assignment reaches later commands only for a variable already exported.
    let script =
        vec![with(&[("AWS_PROFILE", "p2"), ("AWS_REGION", "r2")], &[]), cmd(&["aws", "s3", "ls"])];
    let lines = run(script, &t.0, &[("AWS_PROFILE", "p1")]);
    assert_eq!(lines, ["AWS profile: p2 (AWS_PROFILE)"]);

    t.write("gcloud/active_config", "work\n");
    t.write(
        "gcloud/configurations/config_work",
        "[core]\naccount = me@x\nproject = shop-prod\n[compute]\nproject = no\n",
    );
    let gcloud = [("CLOUDSDK_CONFIG", t.path("gcloud"))];
    let gcloud: Vec<(&str, &str)> = gcloud.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let lines = run(vec![cmd(&["gcloud", "compute", "instances", "delete", "vm"])], &t.0, &gcloud);
    assert_eq!(lines, ["Google Cloud project: shop-prod (gcloud configuration work)"]);
    let lines =
        run(vec![cmd(&["gcloud", "--project=p1", "sql", "instances", "list"])], &t.0, &gcloud);
    assert_eq!(lines, ["Google Cloud project: p1 (--project)"]);

    t.write(
        "home/.azure/azureProfile.json",
        "\u{feff}{\"subscriptions\":[{\"id\":\"s-1\",\"name\":\"Dev\",\"isDefault\":false},\
         {\"id\":\"s-2\",\"name\":\"Prod\",\"isDefault\":true}]}",
    );
    let lines =
        run(vec![cmd(&["az", "group", "delete", "-n", "rg"])], &t.0, &[("HOME", &t.path("home"))]);
    assert_eq!(lines, ["Azure subscription: Prod (s-2, default in ~/.azure/azureProfile.json)"]);
    let lines = run(vec![cmd(&["az", "vm", "list", "--subscription", "s-9"])], &t.0, &[]);
    assert_eq!(lines, ["Azure subscription: s-9 (--subscription)"]);
}

#[test]
fn lines_come_in_a_fixed_order_each_once() {
    let t = Temp::new("order");
    let script = vec![
        cmd(&["helm", "upgrade", "web", "./chart", "--kube-context", "k"]),
        cmd(&["aws", "--profile", "p", "eks", "update-kubeconfig"]),
        cmd(&["terraform", "apply"]),
        cmd(&["terraform", "apply"]),
        cmd(&["kubectl", "--context", "k", "get", "pods"]),
    ];
    let lines = run(script, &t.0, &[]);
    assert_eq!(
        lines,
        [
            "terraform workspace: default",
            "terraform backend: local",
            "kube context: k (--kube-context)",
            "kube context: k (--context)",
            "kube namespace: default",
            "kube objects: pods",
            "AWS profile: p (--profile)",
            "helm release: web",
        ]
    );
}

#[test]
fn large_or_odd_files_are_skipped_not_read() {
    let t = Temp::new("odd");
    let mut big = String::from("current-context: huge\n");
    big.push_str(&"# padding\n".repeat(120_000));
    let config = t.write("big-config", &big);
    let lines = run(
        vec![cmd(&["kubectl", "get", "pods"])],
        &t.0,
        &[("KUBECONFIG", &config.display().to_string())],
    );
    assert!(!lines.concat().contains("huge"), "{lines:?}");
    // `.terraform/environment` that is a directory, and a state that is not JSON.
    std::fs::create_dir_all(t.0.join(".terraform/environment")).expect("dir");
    t.write(".terraform/terraform.tfstate", "not json");
    assert!(run(vec![cmd(&["terraform", "plan"])], &t.0, &[]).is_empty());
    // Words missing their dynamic flags, an empty argv and a lone option never panic.
    let mut odd = cmd(&["kubectl", "-n"]);
    odd.dynamic.clear();
    let _ = run(
        vec![odd, Simple::default(), cmd(&["helm"]), cmd(&["cd"]), cmd(&["terraform", "-chdir="])],
        &t.0,
        &[],
    );
}
