//! The policy step's own parts: which lines are applies, `kubectl run`'s pod, where
//! `kubectl -f` finds its files.

use super::*;

fn found(command: &str) -> Option<String> {
    let c = crate::infra::classify(command, Path::new("/p"), &|_| None);
    apply_line(&c.lines, &c.patterns).map(str::to_string)
}

#[test]
fn applies_and_destroys_are_found_in_every_form_and_plans_are_not() {
    for command in [
        "terraform init && terraform apply -auto-approve",
        "terraform -chdir=infra apply -destroy",
        "tofu destroy",
        "cd x && terragrunt run-all apply",
        "terragrunt destroy-all",
        "./bin/terraform apply",
        "T=destroy; terraform $T -auto-approve",
    ] {
        assert!(found(command).is_some(), "{command}");
    }
    for not in [
        "terraform init && terraform plan -destroy",
        "terraform workspace new apply-test",
        "terraform state list",
        "kubectl apply -f x.yaml",
    ] {
        assert_eq!(found(not), None, "{not}");
    }
}

#[test]
fn kubectl_run_becomes_the_pod_it_would_create() {
    let script = crate::shell::parse("kubectl run dbg --image=busybox --privileged -- sh");
    let pod = run_pod(&script.commands[0]);
    assert_eq!(pod["metadata"]["name"], "dbg");
    assert_eq!(pod["spec"]["containers"][0]["image"], "busybox");
    assert_eq!(pod["spec"]["containers"][0]["securityContext"]["privileged"], true);
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
    for unread in ["kubectl apply -f -", "kubectl apply -k k8s", "kubectl apply -f $F"] {
        assert_eq!(names(unread, &dir).1.len(), 1, "{unread}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
