//! Tests of the Kubernetes scope: a fake kubeconfig (through `KUBECONFIG` in the
//! environment given, never the process's), manifests, kubectl words, Helm releases.

use super::super::tests::{Temp, cmd, run};
use super::*;

const KUBECONFIG: &str = "apiVersion: v1
clusters:
- cluster:
    server: https://prod.example
  name: prod
contexts:
- context:
    cluster: prod
    namespace: payments
    user: admin
  name: prod-eu
- name: staging
  context:
    cluster: staging
    namespace: shop # the shop
current-context: \"prod-eu\"
kind: Config
users:
- name: admin
  user:
    token: hunter2
";

const MANIFEST: &str = "# two objects
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    name: not-this-one
  name: api
  namespace: payments
spec:
  template:
    metadata:
      name: nor-this
---
apiVersion: v1
kind: Service
metadata:
    name: 'api'
";

#[test]
fn kubectl_reads_context_and_namespace_from_the_kubeconfig() {
    let t = Temp::new("kube");
    let config = t.write("kube/config", KUBECONFIG);
    let kubeconfig = format!("{}:/nonexistent", config.display());
    let env = [("KUBECONFIG", kubeconfig.as_str()), ("HOME", "/nonexistent")];
    let lines = run(vec![cmd(&["kubectl", "get", "pods"])], &t.0, &env);
    let context = format!("kube context: prod-eu (current-context in {})", config.display());
    assert_eq!(
        lines,
        [context.as_str(), "kube namespace: payments (context prod-eu)", "kube objects: pods"]
    );
    let lines = run(vec![cmd(&["kubectl", "--context=staging", "delete", "pod", "x"])], &t.0, &env);
    assert_eq!(
        lines,
        [
            "kube context: staging (--context)",
            "kube namespace: shop (context staging)",
            "kube objects: pod/x"
        ]
    );
    let lines =
        run(vec![cmd(&["kubectl", "-n", "web", "--context", "other", "get", "all"])], &t.0, &env);
    assert_eq!(lines[..2], ["kube context: other (--context)", "kube namespace: web"]);
    // `$HOME/.kube/config` when KUBECONFIG is not set, and never the token.
    t.write(".kube/config", KUBECONFIG);
    let lines = run(vec![cmd(&["kubectl", "get", "ns"])], &t.0, &[("HOME", &t.path(""))]);
    assert!(lines[0].starts_with("kube context: prod-eu (current-context in ~/"), "{lines:?}");
    assert!(!lines.concat().contains("hunter2"));
    // No kubeconfig at all: no context, the default namespace.
    let lines = run(vec![cmd(&["kubectl", "get", "ns"])], &t.0, &[]);
    assert_eq!(lines, ["kube namespace: default", "kube objects: ns"]);
}

#[test]
fn kubectl_names_the_objects_of_its_words_and_manifests() {
    let t = Temp::new("kube-objects");
    t.write("app.yaml", MANIFEST);
    t.write("deploy/a.yaml", "kind: ConfigMap\nmetadata:\n  name: one\n");
    t.write("deploy/b.yml", "---\nkind: Secret\nmetadata: # creds\n  name: \"two\"\n...\n");
    t.write("deploy/notes.txt", "kind: Ignored\n");
    let objects = |argv: &[&str]| -> Vec<String> {
        run(vec![cmd(argv)], &t.0, &[])
            .into_iter()
            .filter(|l| l.starts_with("kube objects"))
            .collect()
    };
    assert_eq!(
        objects(&["kubectl", "apply", "-f", "app.yaml"]),
        ["kube objects: Deployment/api in payments, Service/api (from app.yaml)"]
    );
    assert_eq!(
        objects(&[
            "kubectl",
            "delete",
            "--filename=deploy",
            "-f",
            "-",
            "-f",
            "https://x.test/m.yaml"
        ]),
        [
            "kube objects: ConfigMap/one, Secret/two (from deploy)",
            "kube objects: from stdin",
            "kube objects: from URL https://x.test/m.yaml",
        ]
    );
    assert_eq!(
        objects(&["kubectl", "apply", "-f", "missing.yaml"]),
        ["kube objects: from missing.yaml"]
    );
    assert_eq!(
        objects(&["kubectl", "apply", "-k", "overlays/prod"]),
        ["kube objects: from kustomization overlays/prod"]
    );
    assert_eq!(
        objects(&["kubectl", "delete", "deployment", "api", "web", "--grace-period", "0"]),
        ["kube objects: deployment/api, deployment/web"]
    );
    assert_eq!(objects(&["kubectl", "delete", "pod/x", "svc/y"]), ["kube objects: pod/x, svc/y"]);
    assert_eq!(objects(&["kubectl", "delete", "pods", "--all"]), ["kube objects: pods (all)"]);
    assert_eq!(
        objects(&["kubectl", "rollout", "restart", "deployment/api"]),
        ["kube objects: deployment/api"]
    );
    assert_eq!(
        objects(&["kubectl", "label", "node", "n1", "zone=a", "old-"]),
        ["kube objects: node/n1"]
    );
    assert_eq!(objects(&["kubectl", "drain", "n1", "--force"]), ["kube objects: node/n1"]);
    assert_eq!(
        objects(&["kubectl", "exec", "-it", "api-0", "--", "rm", "-rf", "/"]),
        ["kube objects: pod/api-0"]
    );
    assert_eq!(
        objects(&["kubectl", "create", "secret", "generic", "creds"]),
        ["kube objects: secret/creds"]
    );
}

#[test]
fn manifests_are_read_by_indentation() {
    let objects = manifest_objects(
        "kind: List\n---\nmetadata:\n  name: x\nkind: Pod\n--- # next\n\n---\n\
         kind: Namespace\nmetadata: {name: flow}\n",
    );
    assert_eq!(objects, ["List", "Pod/x", "Namespace"]);
}

#[test]
fn helm_names_its_release_and_namespace() {
    let t = Temp::new("helm");
    let lines = run(
        vec![cmd(&[
            "helm",
            "upgrade",
            "--install",
            "web",
            "./chart",
            "-n",
            "shop",
            "--kube-context",
            "prod",
            "--set",
            "a=b",
        ])],
        &t.0,
        &[],
    );
    assert_eq!(
        lines,
        ["kube context: prod (--kube-context)", "kube namespace: shop", "helm release: web"]
    );
    let lines =
        run(vec![cmd(&["helm", "uninstall", "a", "b"])], &t.0, &[("HELM_NAMESPACE", "ops")]);
    assert_eq!(
        lines,
        ["kube namespace: ops (HELM_NAMESPACE)", "helm release: a", "helm release: b"]
    );
    let lines = run(vec![cmd(&["helm", "install", "--generate-name", "./chart"])], &t.0, &[]);
    assert_eq!(lines, ["kube namespace: default"]);
}
