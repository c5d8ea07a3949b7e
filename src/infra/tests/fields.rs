//! What the gate reads besides the tier: paths, prefixes, lines, the lone terraform call,
//! the directories whose code runs; and that odd input never panics.

use std::path::{Path, PathBuf};

use super::{CWD, run};
use crate::infra::{PathUse, Tier};

#[test]
fn paths_say_what_is_read_and_written() {
    let got = run("cat ~/.aws/credentials");
    assert_eq!(got.tier, Tier::Read);
    assert!(
        got.paths.contains(&(PathBuf::from("/home/u/.aws/credentials"), PathUse::Read)),
        "{got:?}"
    );
    let got = run("grep -iepassword ~/.aws/credentials");
    assert!(
        got.paths.contains(&(PathBuf::from("/home/u/.aws/credentials"), PathUse::Read)),
        "{got:?}"
    );
    let got = run("echo x > main.tf");
    assert_eq!((got.tier, got.file_only), (Tier::Mutate, true));
    assert_eq!(got.paths, vec![(PathBuf::from("/work/proj/main.tf"), PathUse::Write)]);
    let got = run("echo x > terraform.tfstate");
    assert_eq!((got.tier, got.file_only), (Tier::Destroy, false));
    assert_eq!(run("rm -rf target").tier, Tier::Mutate);
    assert_eq!(run("rm -rf modules").tier, Tier::Destroy);
    assert!(!run("rm -rf target").file_only);
    assert!(run("touch a && mkdir b && cp a b/ && sed -i s/x/y/ a").file_only);
    assert!(!run("echo x > a && npm install").file_only);
    let got = run("cat <<EOF > main.tf\nresource \"x\" \"y\" {}\nEOF");
    assert_eq!((got.tier, got.file_only), (Tier::Mutate, true));
    // A `cd` in a subshell does not last: both directories are judged.
    let got = run("(cd a/b); echo x > ../../x");
    assert!(got.paths.contains(&(PathBuf::from("/x"), PathUse::Write)), "{got:?}");
    let got = run("cd infra && cat ../secrets.env > /dev/null");
    assert!(
        got.paths.contains(&(PathBuf::from("/work/proj/secrets.env"), PathUse::Read)),
        "{got:?}"
    );
    assert!(!got.paths.iter().any(|(p, _)| p == Path::new("/dev/null")));
}

#[test]
fn prefixes_name_what_always_remembers() {
    let prefixes = |src| run(src).prefixes;
    assert_eq!(prefixes("terraform fmt -recursive"), Some(vec!["terraform fmt".to_string()]));
    let want = vec!["git commit".to_string(), "git push".to_string()];
    assert_eq!(prefixes("git commit -m x && git push"), Some(want));
    assert_eq!(prefixes("make test"), Some(vec!["make test".to_string()]));
    assert_eq!(prefixes("npm run build"), Some(vec!["npm run build".to_string()]));
    assert_eq!(prefixes("kubectl -n x apply -f a.yaml"), Some(vec!["kubectl apply".to_string()]));
    assert_eq!(prefixes("aws s3 cp a s3://b/a"), Some(vec!["aws s3 cp".to_string()]));
    assert_eq!(prefixes("git status && ls"), Some(vec![]));
    assert_eq!(prefixes("python -c 'print(1)'"), None);
    assert_eq!(prefixes("t=git; $t push"), None);
    assert_eq!(prefixes("eval ls"), None);
    assert_eq!(run("/usr/bin/git  status").lines, vec!["git status".to_string()]);
    assert_eq!(
        run("X=1 git status | wc -l").lines,
        vec!["git status".to_string(), "wc -l".to_string()]
    );
}

#[test]
fn the_lone_terraform_call_is_extracted() {
    let got = run("TF_VAR_x=1 terraform -chdir=infra apply -var-file=prod.tfvars -auto-approve");
    let call = got.terraform.expect("a lone apply");
    assert!(call.dir.ends_with("infra"), "{call:?}");
    assert_eq!(call.global, vec!["-chdir=infra".to_string()]);
    assert_eq!(call.plan_args, vec!["-var-file=prod.tfvars".to_string()]);
    assert!(call.apply_args.is_empty() && call.unknown.is_empty() && !call.destroy);
    assert_eq!(call.assigns, vec![("TF_VAR_x".to_string(), "1".to_string())]);
    assert_eq!(got.tier, Tier::Destroy);
    let call = run("cd infra && terraform destroy -target=a.b").terraform.expect("a lone destroy");
    assert!(call.destroy && call.dir == Path::new("/work/proj/infra"));
    assert_eq!(call.plan_args, vec!["-target=a.b".to_string()]);
    let call = run("terraform apply tfplan").terraform.expect("a saved plan");
    assert_eq!(call.plan_file.as_deref(), Some("tfplan"));
    let call = run("tofu apply -var-file x.tfvars -lock=false -parallelism 4 -input=false")
        .terraform
        .expect("tofu");
    assert_eq!(call.plan_args, ["-var-file", "x.tfvars", "-lock=false", "-parallelism", "4"]);
    assert_eq!(call.apply_args, ["-lock=false", "-parallelism", "4"]);
    let call = run("terraform apply -frobnicate").terraform.expect("unknown options are kept");
    assert_eq!(call.unknown, ["-frobnicate"]);
    assert!(run("TF_LOG=debug terraform apply -auto-approve 2>&1").terraform.is_some());
    let got = run("terraform init && terraform apply");
    assert_eq!((got.terraform, got.tier), (None, Tier::Destroy));
    assert!(got.reasons.iter().any(|r| r.contains("cannot be shown first")), "{:?}", got.reasons);
    assert_eq!(run("echo yes | terraform apply").terraform, None);
}

#[test]
fn code_runs_where_terraform_and_scripts_look() {
    let runs = |src| run(src).runs_code_in;
    assert!(runs("terraform plan").contains(&PathBuf::from(CWD)));
    assert!(runs("cd infra && terraform validate").contains(&PathBuf::from("/work/proj/infra")));
    assert!(runs("python tools/gen.py").contains(&PathBuf::from("/work/proj/tools")));
    assert!(
        runs("ansible-playbook --check plays/site.yml")
            .contains(&PathBuf::from("/work/proj/plays"))
    );
    assert!(!runs("terraform version").contains(&PathBuf::from(CWD)));
}

#[test]
fn odd_input_never_panics_and_opaque_is_at_least_mutate() {
    let odd = [
        "",
        " ",
        ";;",
        "&&",
        "|",
        "'",
        "\"",
        "$(",
        "`",
        "\\",
        "cd",
        "cd ~",
        "terraform",
        "terraform -chdir=",
        "git -C",
        "git -c",
        "kubectl -n",
        "helm --kube-context",
        "aws --profile",
        "rm -",
        "rm --",
        "sed",
        "sed -e",
        "awk",
        "find -exec",
        "find . -exec ;",
        "tar",
        "cp",
        "make -C",
        "python -m",
        "> x",
        "< x",
        "x=1",
        "$x",
        "${x}",
        "é ü ∂",
        "ls \u{0}",
        "terraform apply -var",
        "sed 's/a",
        "awk '\"",
        "sed 's/\\",
        "sed '/\\",
        "printf '\\'",
        "ssh -i",
        "git push +",
        "aws s3",
        "gcloud",
        "az",
    ];
    for src in odd {
        let got = run(src);
        if got.opaque {
            assert!(got.tier >= Tier::Mutate, "{src:?}");
        }
    }
    assert!(run("cat $(which terraform)").tier >= Tier::Mutate);
}
