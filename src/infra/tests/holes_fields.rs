//! The review's holes, by the fields the gate reads besides the tier: the paths written, the
//! prefixes "always" may remember, the lines the rules see, the directories whose code runs,
//! the secrets printed, file-only; and the cases that need real files (an existing file
//! `plan -out` would overwrite, a repository above the directory git runs in, a link).

use std::path::{Path, PathBuf};

use super::run;
use crate::infra::program::{self, Program};
use crate::infra::{PathUse, Tier, classify};

fn write(path: &str) -> (PathBuf, PathUse) {
    (PathBuf::from(path), PathUse::Write)
}

#[test]
fn writes_are_recorded_and_patterns_are_never_file_only() {
    let got = run("kubectl --log-file ~/.bashrc get pods");
    assert_eq!(got.tier, Tier::Mutate);
    assert!(got.paths.contains(&write("/home/u/.bashrc")), "{got:?}");
    let got = run("aws s3api get-object --bucket b --key k main.tf");
    assert_eq!(got.paths, vec![write("/work/proj/main.tf")]);
    assert!(run("terraform plan -out=tfplan").paths.contains(&write("/work/proj/tfplan")));
    assert!(run("terraform init -from-module=git::x").paths.contains(&write("/work/proj")));
    let got = run("git config core.fsmonitor ./x");
    assert!(got.paths.contains(&write("/work/proj/.git/config")), "{got:?}");
    for src in ["rm -f *.log", "sed -i s/a/b/ *.md", "mv *.txt old/"] {
        let got = run(src);
        assert_eq!((got.tier, got.file_only), (Tier::Mutate, false), "{src}");
    }
    assert!(run("rm -f a.log").file_only);
    let got = run("tar -cf terraform.tfstate .");
    assert!(got.paths.contains(&write("/work/proj/terraform.tfstate")), "{got:?}");
}

#[test]
fn always_is_not_offered_for_what_runs_other_code() {
    let none = [
        "make -f evil.mk test",
        "make test SHELL=./x",
        "git rebase -x 'make test' main",
        "git bisect run make test",
        "git push --receive-pack=./x origin",
        "git fetch --upload-pack=./x origin",
        "git clone -u ./x https://example.com/r.git",
        "git config alias.st status",
        "ssh -o ProxyCommand=./x host",
        "rsync -e ./x a host:b",
        "docker run -v /:/h alpine",
        "docker run --privileged alpine",
        "npx cowsay hi",
        "npm exec -- cowsay hi",
        "pnpm dlx cowsay hi",
        "yarn dlx cowsay hi",
        "uv run pytest",
        "uvx ruff check",
        "poetry run pytest",
        "pipenv run pytest",
        "conda run -n env pytest",
        "bundle exec rake",
        "helm upgrade web ./chart --post-renderer ./x",
        "kubectl exec web -- ls",
        "go env -w GOPROXY=https://evil",
        "git init --template=./hooks",
        "git clone -c core.hooksPath=./h https://example.com/r.git",
        "git archive --remote=x --exec=./evil HEAD",
        "systemd-run --user make",
        "busybox wget http://x",
    ];
    for src in none {
        let got = run(src);
        assert!(got.tier >= Tier::Mutate && got.prefixes.is_none(), "{src}: {got:?}");
    }
    assert_eq!(run("make test").prefixes, Some(vec!["make test".to_string()]));
    assert_eq!(run("docker run alpine echo").prefixes, Some(vec!["docker run".to_string()]));
    assert!(
        run("make -f evil.mk")
            .paths
            .contains(&(PathBuf::from("/work/proj/evil.mk"), PathUse::Read))
    );
}

#[test]
fn rules_see_the_canonical_line_and_the_payload() {
    let lines = |src| run(src).lines;
    assert_eq!(
        lines("terraform -chdir=. apply -destroy -auto-approve"),
        ["terraform -chdir=. apply -destroy -auto-approve", "terraform destroy -auto-approve"]
    );
    assert_eq!(
        lines("terraform -chdir=. destroy"),
        ["terraform -chdir=. destroy", "terraform destroy"]
    );
    assert_eq!(lines("tofu apply -destroy=true"), ["tofu apply -destroy=true", "tofu destroy"]);
    assert_eq!(lines("terraform destroy -auto-approve"), ["terraform destroy -auto-approve"]);
    assert_eq!(lines("terraform plan"), ["terraform plan"]);
    assert_eq!(
        lines("terragrunt run-all destroy"),
        ["terragrunt run-all destroy", "terragrunt destroy"]
    );
    assert_eq!(lines("terragrunt destroy-all"), ["terragrunt destroy-all", "terragrunt destroy"]);
    assert_eq!(lines("npx terraform destroy"), ["npx terraform destroy", "terraform destroy"]);
    assert_eq!(lines("busybox rm -rf /"), ["busybox rm -rf /", "rm -rf /"]);
    let got = run("(terraform -chdir=x apply -destroy)");
    assert_eq!(got.lines, ["terraform -chdir=x apply -destroy", "terraform destroy"]);
    assert!(got.terraform.is_some_and(|c| c.destroy));
}

#[test]
fn programs_of_the_project_are_its_code() {
    let got = run("./bin/terraform -chdir=infra destroy");
    assert_eq!((got.tier, got.terraform.is_none()), (Tier::Destroy, true));
    assert!(got.runs_code_in.contains(&PathBuf::from("/work/proj/bin")), "{got:?}");
    let got = run("./bin/terraform -chdir=infra plan");
    assert_eq!((got.tier, got.terraform.is_none()), (Tier::Mutate, true));
    assert!(got.runs_code_in.contains(&PathBuf::from("/work/proj/bin")), "{got:?}");
    let got = run("bin/cat main.tf");
    assert_eq!(got.lines, ["bin/cat main.tf", "cat main.tf"]);
    assert_eq!(got.prefixes, Some(vec!["bin/cat main.tf".to_string()]));
    let got = run("/work/proj/tools/git status");
    assert_eq!(got.tier, Tier::Mutate);
    assert!(got.runs_code_in.contains(&PathBuf::from("/work/proj/tools")), "{got:?}");
    assert_eq!(run("./bin/rm -rf x").lines, ["./bin/rm -rf x", "rm -rf x"]);
    let got = run("/opt/terraform/bin/terraform destroy");
    assert!(got.terraform.is_some() && got.tier == Tier::Destroy);
    // A link outside the project is what it points to: a link to sh is a shell.
    let dir = scratch("link");
    let link = dir.join("cat");
    if std::os::unix::fs::symlink("/bin/sh", &link).is_ok() {
        match program::linked(&link, "cat", Path::new("/work/proj")) {
            Program::Linked(name) => assert_ne!(name, "cat"),
            Program::Local(_) => {}
            Program::Plain => panic!("a link to sh judged as cat"),
        }
    }
    assert!(matches!(program::linked(Path::new("/nonexistent/x"), "x", &dir), Program::Plain));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn code_runs_in_the_project_its_config_files_and_the_repository_above() {
    let runs = |src| run(src).runs_code_in;
    let proj = PathBuf::from("/work/proj");
    assert!(runs("cd infra && terraform validate").contains(&proj));
    assert!(runs("terraform -chdir=/elsewhere plan").contains(&PathBuf::from("/elsewhere")));
    assert!(runs("ansible-playbook -i ../inv site.yml").contains(&proj));
    assert!(runs("terragrunt --working-dir live plan").contains(&proj));
    let got = run("kubectl --kubeconfig=./kc/x.yaml get pods");
    assert!(got.runs_code_in.contains(&PathBuf::from("/work/proj/kc")), "{got:?}");
    assert!(got.paths.contains(&(PathBuf::from("/work/proj/kc/x.yaml"), PathUse::Read)));
    let got = run("helm --kubeconfig ~/.kube/prod list");
    assert!(got.runs_code_in.contains(&PathBuf::from("/home/u/.kube")), "{got:?}");
    assert!(got.paths.is_empty(), "a kubeconfig outside the project is not a path to judge");
    assert!(runs("git --git-dir=sub/evil status").contains(&PathBuf::from("/work/proj/sub/evil")));
    assert!(runs("git --work-tree=wt status").contains(&PathBuf::from("/work/proj/wt")));
    let dir = scratch("repo");
    std::fs::create_dir_all(dir.join(".git")).expect("a .git");
    std::fs::create_dir_all(dir.join("sub")).expect("a subdirectory");
    let got = classify("git -C sub status", &dir, &super::env);
    assert!(got.runs_code_in.contains(&dir.join(".git")), "{got:?}");
    assert!(got.runs_code_in.contains(&dir.join("sub/.git")), "{got:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn plan_out_overwrites_only_what_is_a_saved_plan() {
    let dir = scratch("planout");
    std::fs::write(dir.join("Makefile"), "all:\n").expect("a Makefile");
    std::fs::write(dir.join("tfplan"), "").expect("a saved plan");
    let tier = |src| classify(src, &dir, &super::env).tier;
    assert_eq!(tier("terraform plan -out=Makefile"), Tier::Mutate);
    assert_eq!(tier("terraform plan -out=tfplan"), Tier::Plan);
    assert_eq!(tier("terraform plan -out=new.plan"), Tier::Plan);
    assert_eq!(tier("terraform plan -out=other.tfstate"), Tier::Destroy);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn secrets_are_named_and_the_tier_stays() {
    let secret = [
        "terraform state pull",
        "terraform output -json",
        "tofu output -raw db_password",
        "terraform show -json",
        "terragrunt output -json",
        "kubectl config view --raw",
        "kubectl get secret db -o yaml",
        "kubectl get secrets -ojson",
        "kubectl -n x get secret/db -o jsonpath={.data}",
        "kubectl get --raw /api/v1/namespaces/x/secrets",
        "gcloud auth print-access-token",
        "gcloud auth application-default print-access-token",
        "gcloud secrets versions access latest --secret=x",
        "az account get-access-token",
        "aws sts get-session-token",
        "aws sts assume-role --role-arn a --role-session-name s",
        "aws secretsmanager get-secret-value --secret-id x",
        "aws ssm get-parameter --name x --with-decryption",
        "pulumi stack export --show-secrets",
        "helm get values web --all",
        "ansible-vault view secrets.yml",
    ];
    for src in secret {
        let got = run(src);
        assert!(got.secret.is_some() && got.tier == Tier::Read, "{src}: {got:?}");
    }
    for src in ["vault kv get secret/x", "sops -d secrets.yaml", "gh auth token"] {
        assert!(run(src).secret.is_some(), "{src}");
    }
    let none = [
        "terraform output",
        "terraform state list",
        "kubectl get secrets",
        "kubectl get secret db -o name",
        "kubectl describe secret db",
        "kubectl get pods -o yaml",
        "aws ssm get-parameter --name x",
        "helm get values web",
        "ls",
    ];
    for src in none {
        assert_eq!(run(src).secret, None, "{src}");
    }
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iac-holes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
