//! Reading what a Kubernetes mutation would send: `kubectl run`'s pod, where `-f` finds
//! its files (after `cd`, `-R`, clusters, comma lists), what cannot be read, and the copy
//! that runs.

use std::path::Path;

use super::*;

fn pod_of(command: &str) -> Found {
    let script = crate::shell::parse(command);
    let mut found = Found::default();
    run_pod(&script.commands[0], &mut found);
    found
}

#[test]
fn kubectl_run_becomes_the_pod_it_would_create() {
    let found = pod_of("kubectl run dbg --image=busybox --privileged -- sh");
    let pod = &found.inputs[0];
    assert_eq!(pod["metadata"]["name"], "dbg");
    assert_eq!(pod["spec"]["containers"][0]["image"], "busybox");
    assert_eq!(pod["spec"]["containers"][0]["securityContext"]["privileged"], true);
    for on in ["1", "t", "True"] {
        let found = pod_of(&format!("kubectl run x --image=a:1 --privileged={on}"));
        assert_eq!(found.inputs[0]["spec"]["containers"][0]["securityContext"]["privileged"], true);
    }
    let found = pod_of("kubectl run x --image=a:1 --overrides='{\"spec\":{}}'");
    assert_eq!(found.unread.len(), 1, "--overrides cannot be judged");
}

#[test]
fn files_are_found_in_the_directory_the_command_runs_in() {
    let dir = std::env::temp_dir().join(format!("iac-policy-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("k8s/deep")).expect("test I/O");
    std::fs::write(dir.join("k8s/a.yaml"), "kind: Pod\n").expect("test I/O");
    std::fs::write(dir.join("k8s/deep/b.yml"), "kind: Pod\n").expect("test I/O");
    let names = |command: &str, at: &Path| {
        let script = crate::shell::parse(command);
        let mut found = Found::default();
        kubectl_files(script.commands.last().expect("a command"), Some(at), &mut found);
        (found.texts.len(), found.unread)
    };
    assert_eq!(names("kubectl apply -f=a.yaml", &dir.join("k8s")), (1, vec![]));
    assert_eq!(names("kubectl apply -f k8s", &dir), (1, vec![]), "not below without -R");
    assert_eq!(names("kubectl apply -R -f k8s", &dir), (2, vec![]));
    assert_eq!(names("kubectl apply -Rf k8s", &dir), (2, vec![]), "a cluster of short flags");
    assert_eq!(names("kubectl apply -f k8s/a.yaml,k8s/deep/b.yml", &dir), (2, vec![]));
    for unread in [
        "kubectl apply -f -",
        "kubectl apply -k k8s",
        "kubectl apply -f $F",
        "kubectl apply -f /dev/stdin",
        "kubectl apply -f missing.yaml",
    ] {
        assert_eq!(names(unread, &dir).1.len(), 1, "{unread}");
    }
    // A FIFO is not read (it would stall the gate).
    let fifo = dir.join("k8s/fifo.yaml");
    let made = crate::child::command("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    assert_eq!(names("kubectl apply -f fifo.yaml", &dir.join("k8s")).1.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn short_flag_clusters_are_read_as_pflag_reads_them() {
    assert_eq!(
        file_cluster("Rf"),
        Cluster::Files { recursive: true, value: None, kustomize: false }
    );
    assert_eq!(
        file_cluster("f=pod.yaml"),
        Cluster::Files { recursive: false, value: Some("pod.yaml".into()), kustomize: false }
    );
    assert_eq!(file_cluster("R"), Cluster::Recursive);
    // `-ltier=frontend` is a selector, its value holds an f: not a file.
    assert_eq!(file_cluster("ltier=frontend"), Cluster::Other);
    assert_eq!(file_cluster("Rl"), Cluster::Mixed);
    assert_eq!(file_cluster("xf"), Cluster::Mixed);
    assert_eq!(file_cluster("n"), Cluster::Other);
}

#[test]
fn helm_charts_that_render_otherwise_here_or_may_change_are_not_judged() {
    let dir = std::env::temp_dir().join(format!("iac-helm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("plain/templates")).expect("test I/O");
    std::fs::create_dir_all(dir.join("asks/templates")).expect("test I/O");
    std::fs::write(dir.join("plain/templates/pod.yaml"), "kind: Pod\n").expect("test I/O");
    let asks = "{{ if lookup \"v1\" \"Namespace\" \"\" \"x\" }}privileged: true{{ end }}\n";
    std::fs::write(dir.join("asks/templates/_h.tpl"), asks).expect("test I/O");
    let why = |command: &str| {
        let script = crate::shell::parse(command);
        helm_unjudgeable(&script.commands[0], &dir)
    };
    assert_eq!(why("helm install web ./plain"), None);
    assert_eq!(why("helm upgrade --install web plain -n prod --set a=b"), None);
    assert_eq!(why("helm install web bitnami/nginx --version 15.1.0"), None, "pinned");
    for unjudged in [
        "helm install web ./asks",
        "helm install web bitnami/nginx",
        "helm install web oci://registry/chart",
        "helm install web ./plain -f https://example.com/values.yaml",
    ] {
        assert!(why(unjudged).is_some(), "{unjudged}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
