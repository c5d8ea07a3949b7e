//! Issue 32, item 1: the parser and the classifier fail closed. What bash evaluates as
//! arithmetic or as a name, a hidden program or subcommand, variables that make a reader
//! write, and reads that reach terraform state by a pattern or a recursive walk; each
//! attack with the tier it must get, the ordinary commands beside it that keep theirs, and
//! the fields the gate reads (opacity, "always", the rules' lines and patterns, written
//! paths, secrets).

use std::path::{Path, PathBuf};

use super::{check_table, env, run};
use crate::infra::{Classified, PathUse, Tier, classify};

/// Each line: the expected tier, then the command.
const TABLE: &str = r#"
destroy  x='a[$(terraform destroy -auto-approve -input=false >/dev/null)]'; echo ${b[x]}
destroy  x='a[$(rm -rf modules)]'; echo $((x))
mutate   echo ${b[x]}
mutate   echo "${b[$x]}"
mutate   echo ${#b[x]}
mutate   echo ${s:x:1}
mutate   echo ${s: -x}
mutate   echo ${a[@]:$(id -u)}
mutate   echo ${#a[$(id -u)]}
mutate   echo $[x]
mutate   echo $((x + 1))
mutate   (( x ))
mutate   let x++
mutate   [[ $x -eq 1 ]]
mutate   [[ 1 -lt n ]]
mutate   [[ -v a[$x] ]]
mutate   [[ -v $n ]]
mutate   test -v "a[$x]"
mutate   [ -v 'a[x]' ]
mutate   declare -i n=$x
mutate   local -i n=x
mutate   typeset -i n; n=$x
mutate   declare -n r=x
mutate   read -r "a[$x]" < main.tf
mutate   read -r 'a[x]' < main.tf
mutate   printf -v "$n" '%s' x
mutate   printf -v 'a[x]' '%s' x
mutate   unset 'a[x]'
mutate   export "$n"=1
mutate   mapfile -t "a[$x]" < main.tf
mutate   getopts ab "$n"
mutate   wait -n -p "$n"
mutate   a[$x]=1
mutate   echo ${!x}
mutate   git commit -m "${b[x]}"
mutate   mkdir "${b[x]}"
destroy  T=destroy; terraform $T -auto-approve
destroy  terraform $T
destroy  tofu "$sub" -auto-approve
destroy  terragrunt $cmd
destroy  pulumi $cmd
destroy  kubectl $verb ns prod
destroy  kubectl -n prod $verb ns prod
destroy  helm $verb web
destroy  git $sub
destroy  aws ec2 $op --instance-ids i-1
destroy  gcloud compute instances $verb vm1
destroy  az vm $verb -n x
destroy  t=terraform; $t plan
destroy  t=git; $t status
destroy  t=kubectl; ${t} get pods
destroy  t=rm; $t -rf x
destroy  a=terra b=form; $a$b version
mutate   t=touch; $t M
mutate   $t M
mutate   /usr/bin/tou?h M
mutate   eval "$x"
destroy  GIT_TRACE=terraform.tfstate git --version
destroy  GIT_TRACE_PACKET=prod.tfstate git status
destroy  GIT_TRACE2_EVENT=terraform.tfstate git log
destroy  GIT_TRACE2_PERF=x.tfstate.backup git diff
destroy  env GIT_TRACE_SETUP=terraform.tfstate git status
destroy  export GIT_TRACE_CURL=terraform.tfstate; git --version
destroy  TF_LOG_PATH=terraform.tfstate terraform version
destroy  HISTFILE=terraform.tfstate bash -c ls
mutate   GIT_TRACE=/tmp/trace git --version
mutate   GIT_TRACE=trace.log git status
mutate   GIT_TRACE=1 git status
mutate   GIT_TRACE=$f git status
mutate   LESSHISTFILE=notes.txt less main.tf
mutate   TF_LOG_PATH=tf.log terraform validate
mutate   PAGER='sh -c id' git log
mutate   GIT_PAGER=id git log
mutate   MANPAGER=id man ls
mutate   EDITOR=id git commit
mutate   VISUAL=id crontab -e
mutate   GIT_EDITOR=id git commit
mutate   GIT_SSH_COMMAND=id git fetch
mutate   GIT_EXTERNAL_DIFF=id git diff
mutate   KUBECTL_EXTERNAL_DIFF=id kubectl diff -f a.yaml
mutate   LD_PRELOAD=./x.so ls
mutate   BASH_ENV=./x.sh bash -c ls
mutate   ENV=./x.sh sh -c ls
mutate   PROMPT_COMMAND=id bash -i
mutate   GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log
mutate   export GIT_PAGER=id; git log
read     i=3; echo $((i + 1))
read     i=3; n=$((i * 2)); echo ${s:i:2}
read     echo ${a[0]} ${#a[@]} ${a[@]} ${x:-default} ${#x}
read     echo $((1 + 2)) $[3 * 4]
read     (( 1 + 2 ))
read     [[ $x == foo ]] && [[ -f main.tf ]]
read     [[ $# -eq 0 ]] && echo none
read     printf -v out '%s' x
read     read -r line < main.tf
read     for f in *.tf; do echo "$f"; done
read     n=$(wc -l < main.tf); echo "$n"
read     git -C infra log --oneline
read     kubectl -n "$NS" get pods
read     aws --profile "$P" s3 ls
read     git log -n "$N"
read     TRACE=x git status
read     LOG_PATHS=x git status
"#;

#[test]
fn every_form_of_the_review_gets_its_tier() {
    assert!(check_table(TABLE) >= 100);
}

/// What bash evaluates is opaque: at least a mutation, never "always", the raw text given
/// to the deny rules.
#[test]
fn evaluated_values_are_opaque_and_never_always() {
    for src in [
        "echo ${b[x]}",
        "mkdir \"${b[x]}\"",
        "git commit -m \"${b[x]}\"",
        "touch ${s:n}",
        "read -r \"a[$x]\" < f",
        "declare -i n=$x",
        "cat <<EOF\n${b[x]}\nEOF",
        "cat <<EOF\n$((x))\nEOF",
    ] {
        let got = run(src);
        assert!(got.opaque, "{src}: {got:?}");
        assert!(got.tier >= Tier::Mutate, "{src}");
        assert_eq!(got.prefixes, None, "{src}: no always");
    }
    for src in ["i=3; echo $((i + 1))", "echo ${a[0]}", "printf -v out '%s' x"] {
        assert!(!run(src).opaque, "{src}");
    }
    assert!(!run("cat <<'EOF'\n${b[x]}\nEOF").opaque, "a quoted here-document expands nothing");
}

/// A hidden program: the rules see what a known assignment makes it, and a pattern that any
/// program's deny rule may meet.
#[test]
fn a_hidden_program_reaches_the_rules() {
    let got = run("t=touch; $t M");
    assert!(got.lines.contains(&"touch M".to_string()), "{:?}", got.lines);
    assert!(got.patterns.contains(&"* M".to_string()), "{:?}", got.patterns);
    assert!(got.opaque && got.prefixes.is_none());
    let glob = run("/usr/bin/tou?h M");
    assert!(glob.patterns.contains(&"*h M".to_string()), "{:?}", glob.patterns);
    let split = run("a=tou b=ch; ${a}${b} M; ${a}x");
    assert!(split.lines.contains(&"touch M".to_string()), "{:?}", split.lines);
    assert!(split.lines.contains(&"toux".to_string()), "{:?}", split.lines);
    for code in [
        "eval \"$x\"",
        "eval 'tou\"\"ch M'",
        "trap 'tou\"\"ch M' EXIT",
        "bash --rcfile x -c 'tou\"\"ch M'",
        "x='a[$(tou\"\"ch M)]'; echo ${b[x]}",
        "echo ${!x}",
    ] {
        assert!(run(code).patterns.contains(&"*".to_string()), "{code}: {:?}", run(code).patterns);
    }
    assert_eq!(run("i=3; echo ${b[i]}").patterns, ["echo *"], "only its own hidden word");
    assert!(run("sh -c \"$x\"").patterns.contains(&"*".to_string()));
    for wrapped in ["nohup $t M", "command $t M", "sudo $t M", "timeout 5 $t M", "env $t M"] {
        let got = run(&format!("t=touch; {wrapped}"));
        let any = |p: &String| p == "*" || p == "* M";
        assert!(got.patterns.iter().any(any), "{wrapped}: {:?}", got.patterns);
    }
    assert_eq!(run("rm $flags /").patterns, ["rm * /"]);
    assert!(run("ls -la && git status").patterns.is_empty());
    assert!(run("rm *.log").patterns.is_empty(), "a glob among the words is written as is");
}

fn written(got: &Classified, path: &str) -> bool {
    got.paths.contains(&(PathBuf::from(path), PathUse::Write))
}

/// A variable naming a file a program writes: its value is a written path.
#[test]
fn trace_and_log_variables_are_written_paths() {
    let got = run("GIT_TRACE=terraform.tfstate git --version");
    assert_eq!(got.tier, Tier::Destroy);
    assert!(written(&got, "/work/proj/terraform.tfstate"), "{:?}", got.paths);
    let outside = run("GIT_TRACE=/etc/cron.d/x git status");
    assert!(written(&outside, "/etc/cron.d/x"), "{:?}", outside.paths);
    let home = run("export GIT_TRACE2_EVENT=~/.bashrc; git log");
    assert!(written(&home, "/home/u/.bashrc"), "{:?}", home.paths);
    let switch = run("GIT_TRACE=1 git status");
    assert!(switch.paths.iter().all(|(_, u)| *u == PathUse::Read), "{:?}", switch.paths);
}

/// A fresh directory under the system's temporary directory, with a module.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iac-gate-holes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("modules/net")).expect("a scratch directory");
    std::fs::write(dir.join("main.tf"), "").expect("main.tf");
    std::fs::write(dir.join("modules/net/main.tf"), "").expect("a module");
    dir
}

fn classify_in(dir: &Path, src: &str) -> Classified {
    classify(src, dir, &env)
}

/// Reads that reach state without naming it ask as reading it by name does: the state
/// file is a path they read, and their output holds secrets.
#[test]
fn reads_by_pattern_or_walk_reach_state_on_disk() {
    let project = scratch("project");
    std::fs::write(project.join("terraform.tfstate"), "{}").expect("state");
    let backend = scratch("backend");
    std::fs::create_dir_all(backend.join(".terraform")).expect(".terraform");
    std::fs::write(backend.join(".terraform/terraform.tfstate"), "{}").expect("backend state");
    let reaching = [
        "grep -r VALUE .",
        "grep -rn VALUE",
        "grep -R VALUE ./",
        "egrep --recursive VALUE .",
        "rg VALUE",
        "rg -n VALUE .",
        "cat *.tfstat?",
        "cat *",
        "tail -n 50 *",
        "head *",
        "less *",
        "strings *",
        "base64 terraform.t*",
        "find . -name '*.json' -exec cat {} +",
        "find . -type f -exec head {} \\;",
        "sort *",
        "awk 1 *",
        "sed -n p *",
        "jq . *.tfstate*",
        "grep -ril password",
        "zgrep -r x .",
        "diff -r . modules",
    ];
    for src in reaching {
        let got = classify_in(&project, src);
        assert!(got.secret.is_some(), "{src}: {got:?}");
        let state = project.join("terraform.tfstate");
        assert!(got.paths.contains(&(state, PathUse::Read)), "{src}: {:?}", got.paths);
    }
    for src in ["grep -r token .", "cat .terraform/*", "rg x", "cat */*", "git grep token"] {
        assert!(classify_in(&backend, src).secret.is_some(), "{src}");
    }
    let clean = [
        "cat main.tf",
        "ls *",
        "wc -l *",
        "grep x *.tf",
        "grep -r x modules",
        "rg x modules",
        "cat modules/*/main.tf",
        "find . -name '*.tf'",
        "du -sh *",
        "echo *",
        "sort -r main.tf",
        "diff -r modules modules",
    ];
    for src in clean {
        let got = classify_in(&project, src);
        assert_eq!(got.secret, None, "{src}: {got:?}");
        assert_eq!(got.tier, Tier::Read, "{src}");
    }
    let _ = std::fs::remove_dir_all(&project);
    let _ = std::fs::remove_dir_all(&backend);
}

/// A walk too large to look through is taken to reach state (fail closed).
#[test]
fn a_walk_too_large_to_look_through_is_taken_to_reach_state() {
    let big = scratch("big");
    for n in 0..4_100 {
        std::fs::write(big.join(format!("f{n:05}.txt")), "").expect("a file");
    }
    let got = classify_in(&big, "grep -r x .");
    assert!(got.secret.as_deref().is_some_and(|s| s.contains("too large")), "{got:?}");
    let got = classify_in(&big, "grep -r x modules");
    assert_eq!(got.secret, None, "a small directory is looked through");
    let _ = std::fs::remove_dir_all(&big);
}
