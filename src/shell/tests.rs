//! Tests of the shell parser: a table of scripts and what they run, the commands that must
//! be found whatever their disguise, and inputs that must neither panic nor take long.

use super::{RedirectKind, Script, Simple, parse};

/// One command as a line: `|` when piped, `wrapper: ` each, `NAME=value `, the words (a
/// dynamic one in `<…>`), then ` [Kind fd:target]` per redirection (`*` when dynamic).
fn show_one(s: &Simple) -> String {
    let mut out = String::new();
    if s.piped {
        out.push('|');
    }
    for w in &s.wrappers {
        out += &format!("{w}: ");
    }
    for (name, value) in &s.assigns {
        out += &format!("{name}={value} ");
    }
    let words: Vec<String> = (s.argv.iter().zip(&s.dynamic))
        .map(|(w, d)| if *d { format!("<{w}>") } else { w.clone() })
        .collect();
    out += &words.join(" ");
    for r in &s.redirects {
        let fd = r.fd.map(|fd| fd.to_string()).unwrap_or_default();
        let star = if r.dynamic { "*" } else { "" };
        out += &format!(" [{:?}{fd}:{}{star}]", r.kind, r.target);
    }
    out.trim().to_string()
}

fn show(script: &Script) -> String {
    script.commands.iter().map(show_one).collect::<Vec<_>>().join(" ; ")
}

/// (script, its commands as `show` writes them, whether it is opaque).
const CASES: &[(&str, &str, bool)] = &[
    // Words and quoting.
    ("terraform destroy", "terraform destroy", false),
    ("  ls \t -la  ", "ls -la", false),
    ("", "", false),
    ("# only a comment", "", false),
    ("echo a # a comment\nls", "echo a ; ls", false),
    ("echo 'a  b' \"c  d\"", "echo a  b c  d", false),
    ("\\terraform destroy", "terraform destroy", false),
    ("ter\"ra\"form de'st'roy", "terraform destroy", false),
    ("echo \"a\\\"b\\$c\\d\"", "echo a\"b$c\\d", false),
    ("echo $'a\\tb\\x41\\u00e9\\101\\'' $\"x\"", "echo a\tbAéA' x", false),
    ("echo a\\\nb", "echo ab", false),
    ("ls \\\n  -l", "ls -l", false),
    ("echo é ünï 日本", "echo é ünï 日本", false),
    ("echo a$ 'x'$", "echo a$ x$", false),
    ("echo $'\\xff' \"${x:-\"y\"}\"", "echo \u{fffd} <${x:-\"y\"}>", false),
    // Operators.
    ("a && b || c ; d & e", "a ; b ; c ; d ; e", false),
    ("echo yes | terraform destroy", "echo yes ; |terraform destroy", false),
    ("a |& b | c", "a ; |b ; |c", false),
    ("! a | b", "a ; |b", false),
    ("a\nb\n\n  c\n", "a ; b ; c", false),
    ("a &&\n b |\n c", "a ; b ; |c", false),
    // Compound commands.
    ("(cd x && terraform destroy)", "cd x ; terraform destroy", false),
    ("{ a; b; }", "a ; b", false),
    ("{ a; b; } > out", "a [Write:out] ; b [Write:out]", false),
    ("echo y | (a; b)", "echo y ; |a ; |b", false),
    ("if a; then b; elif c; then d; else e; fi", "a ; b ; c ; d ; e", false),
    ("while a; do b; done", "a ; b", false),
    ("until a\ndo\n  b\ndone", "a ; b", false),
    ("for f in a $(ls) c; do rm \"$f\"; done", "ls ; rm <$f>", false),
    ("for f\ndo rm $f; done", "rm <$f>", false),
    ("for ((i=0; i<3; i++)); do echo $i; done", "echo <$i>", true),
    ("case $x in a|b) echo a;; (*) rm -rf /;; esac", "echo a ; rm -rf /", false),
    ("case x in\n a) ;;\nesac", "", false),
    ("case x in a) ls;& b) id;;& esac", "ls ; id", false),
    ("function f() { ls; } > log", "ls [Write:log]", true),
    ("f() { terraform destroy; }; f", "terraform destroy ; f", true),
    ("function g { ls; }", "ls", true),
    (
        "[[ -f a && $x == *.tf ]] && terraform plan",
        "[[ -f a && <$x> == <*.tf> ]] ; terraform plan",
        false,
    ),
    ("[ -f x ] && ls", "[ -f x ] ; ls", false),
    ("(( i++ )) && ls", "ls", true),
    ("echo $((1 + 2))", "echo <$((1 + 2))>", false),
    ("[[ $x -eq 1 ]]", "[[ <$x> -eq 1 ]]", true),
    ("printf -v 'a[$(terraform destroy)]' 1", "printf -v a[$(terraform destroy)] 1", true),
    ("echo ${x@P} ${!y}", "echo <${x@P}> <${!y}>", true),
    ("bash --rcfile ./evil -c true", "bash --rcfile ./evil -c true", true),
    // Substitutions.
    ("true && $(terraform destroy)", "true ; terraform destroy ; <$(terraform destroy)>", true),
    ("echo `terraform destroy`", "terraform destroy ; echo <`terraform destroy`>", false),
    ("echo \"$(ls \"a b\")\"", "ls a b ; echo <$(ls \"a b\")>", false),
    ("diff <(ls a) >(wc -l)", "ls a ; wc -l ; diff <<(ls a)> <>(wc -l)>", false),
    ("echo $((1 + $(id -u)))", "id -u ; echo <$((1 + $(id -u)))>", true),
    ("echo ${x:-$(whoami)} ${#y}", "whoami ; echo <${x:-$(whoami)}> <${#y}>", false),
    ("echo `echo \\`id\\``", "id ; echo <`id`> ; echo <`echo \\`id\\``>", false),
    ("echo $(echo $(id))", "id ; echo <$(id)> ; echo <$(echo $(id))>", false),
    ("echo $(case x in a) id;; esac)", "id ; echo <$(case x in a) id;; esac)>", false),
    // Expansions in words.
    ("rm *.tf ?", "rm <*.tf> <?>", false),
    ("ls ~/x ~", "ls ~/x ~", false),
    ("echo {a,b} {} {x} {1..3}", "echo <{a,b}> {} {x} <{1..3}>", false),
    ("echo a[1] [ ']'", "echo <a[1]> [ ]", false),
    ("$t destroy", "<$t> destroy", true),
    ("t=terraform; $t destroy", "t=terraform ; <$t> destroy", true),
    ("\"$t\" destroy", "<$t> destroy", true),
    ("$(echo rm) -rf /", "echo rm ; <$(echo rm)> -rf /", true),
    ("A=1 B='x y' cmd C=2", "A=1 B=x y cmd C=2", false),
    ("A+=1 a=$(id)", "id ; A=1 a=$(id)", false),
    // Redirections.
    ("ls > out 2>&1", "ls [Write:out] [Dup2:1]", false),
    (
        "ls >> a 2>> b < c <> d >| e",
        "ls [Append:a] [Append2:b] [Read:c] [ReadWrite:d] [Write:e]",
        false,
    ),
    ("ls &> a &>> b >&- 3<&0", "ls [Write:a] [Append:b] [Dup:-] [Dup3:0]", false),
    ("ls >& f 2>$log", "ls [Write:f] [Write2:$log*]", false),
    ("cat <<< \"$x\"", "cat [HereString:$x*]", false),
    ("cat <<EOF\nhi $(rm -rf /)\nEOF\nls", "rm -rf / ; cat [HereDoc:EOF] ; ls", false),
    ("cat <<'EOF'\n$(rm x)\nEOF", "cat [HereDoc:EOF]", false),
    ("cat <<-EOF && ls\n\tx\n\tEOF\necho y", "cat [HereDoc:EOF] ; ls ; echo y", false),
    ("cat <<EOF | sh\nrm x\nEOF", "cat [HereDoc:EOF] ; |sh", false),
    ("cat <<EOF\n`id`\nEOF", "id ; cat [HereDoc:EOF]", false),
    ("cat << \"E\"\n$(id)\nE", "cat [HereDoc:E]", false),
    ("> out", "[Write:out]", false),
    ("(( x )) > f", "[Write:f]", true),
    // Wrappers.
    ("bash -c 'terraform destroy'", "sh -c: terraform destroy", false),
    ("env X=1 terraform destroy", "env: X=1 terraform destroy", false),
    ("env -i -u HOME - PATH=/bin terraform destroy", "env: PATH=/bin terraform destroy", false),
    ("env", "env", false),
    ("env X=1", "env X=1", false),
    ("env X=$v ls", "env <X=$v> ls", true),
    ("command -v terraform", "command -v terraform", false),
    ("command -p terraform destroy", "command: terraform destroy", false),
    ("command -V x; command -- rm x", "command -V x ; command: rm x", false),
    ("exec -a name ls", "exec: ls", false),
    (
        "env -C /tmp --unset=A ls; stdbuf --output=L ls",
        "env -C /tmp --unset=A ls ; stdbuf: ls",
        true,
    ),
    ("sudo; xargs; timeout 5; a=1 b=2", "sudo ; xargs ; timeout 5 ; a=1 b=2", false),
    ("nohup --weird ls", "nohup --weird ls", true),
    ("exec terraform destroy", "exec: terraform destroy", false),
    ("exec >log 2>&1", "exec [Write:log] [Dup2:1]", false),
    (
        "time -p nice -n 5 ionice -c3 stdbuf -oL terraform destroy",
        "time: nice: ionice: stdbuf: terraform destroy",
        false,
    ),
    ("nice -10 ls", "nice: ls", false),
    ("timeout 60 nohup terraform destroy", "timeout: nohup: terraform destroy", false),
    ("timeout -s KILL --foreground 5m terraform destroy", "timeout: terraform destroy", false),
    ("timeout $t terraform destroy", "timeout <$t> terraform destroy", true),
    ("sudo -u x terraform destroy", "sudo: terraform destroy", false),
    ("sudo -E --user=x -- FOO=1 terraform destroy", "sudo: FOO=1 terraform destroy", false),
    ("doas -u root terraform destroy", "doas: terraform destroy", false),
    ("sudo -i terraform destroy", "sudo -i terraform destroy", true),
    ("env -S 'terraform destroy'", "env -S terraform destroy", true),
    ("xargs terraform destroy", "xargs: terraform destroy", false),
    ("ls | xargs -0 -n1 -I{} rm {}", "ls ; |xargs: rm {}", false),
    ("find . -exec terraform destroy \\;", "find . ; find -exec: terraform destroy", false),
    (
        "find . -name '*.tf' -execdir rm {} + -delete",
        "find . -name *.tf -delete ; find -exec: rm {}",
        false,
    ),
    ("find . -exec {} \\;", "find . ; find -exec: {}", true),
    ("find . -ok sh -c 'rm \"$1\"' _ {} ';'", "find . ; find -exec: sh -c: rm <$1>", false),
    ("sh -c \"bash -c 'terraform destroy'\"", "sh -c: sh -c: terraform destroy", false),
    ("bash -lc 'a; b' > log", "sh -c: a [Write:log] ; sh -c: b [Write:log]", false),
    ("sh -ec -- 'ls'", "sh -c: ls", false),
    ("bash -o pipefail --norc -c ls", "sh -c: ls", false),
    ("bash script.sh", "bash script.sh", false),
    ("bash -x script.sh; sh -c 'a' x y", "bash -x script.sh ; sh -c: a", false),
    ("sh -c '' > f", "sh -c  [Write:f]", false),
    ("find . -delete", "find . -delete", false),
    ("sh -c \"$cmd\"", "sh -c <$cmd>", true),
    ("bash -c", "bash -c", false),
    (
        "env X=1 timeout 5 bash -c 'terraform destroy'",
        "env: timeout: sh -c: X=1 terraform destroy",
        false,
    ),
    ("/usr/bin/env /opt/tf/bin/terraform destroy", "env: /opt/tf/bin/terraform destroy", false),
    ("echo yes | sh -c 'terraform destroy'", "echo yes ; |sh -c: terraform destroy", false),
    ("X=1 sudo env Y=2 nohup xargs -r tf", "sudo: env: nohup: xargs: X=1 Y=2 tf", false),
    ("sudo find / -exec sh -c 'id' \\;", "sudo: find / ; sudo: find -exec: sh -c: id", false),
    // Commands that run code the words do not show.
    ("eval \"$x\"", "eval <$x>", true),
    ("source ./env.sh", "source ./env.sh", true),
    (". ./env.sh", ". ./env.sh", true),
    ("alias ls='rm -rf'", "alias ls=rm -rf", true),
    ("trap 'rm x' EXIT", "trap rm x EXIT", true),
    // What cannot be read whole.
    ("echo 'unclosed", "echo unclosed", true),
    ("echo \"unclosed $(id)", "id ; echo <unclosed $(id)>", true),
    ("echo $(ls", "ls ; echo <$(ls>", true),
    ("ls )", "ls", true),
    ("if true; then ls", "true ; ls", true),
    ("a=(1 2)", "a=", true),
    ("ls &&", "ls", true),
    ("ls ;; ls", "ls", true),
    ("echo $((cd x); ls)", "echo <$((cd x); ls)>", true),
    ("{ ls }", "ls }", true),
];

#[test]
fn the_table_of_scripts() {
    let mut failures = Vec::new();
    for (src, want, opaque) in CASES {
        let got = parse(src);
        if show(&got) != *want || got.opaque.is_empty() == *opaque {
            failures.push(format!(
                "{src:?}\n  want {want:?} opaque={opaque}\n  got  {:?} {:?}",
                show(&got),
                got.opaque
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Disguises of `terraform destroy`: each must show it, with the program's name.
#[test]
fn terraform_destroy_is_found_in_every_disguise() {
    let disguises = [
        "bash -c 'terraform destroy'",
        "env X=1 terraform destroy",
        "/opt/terraform/bin/terraform destroy",
        "\\terraform destroy",
        "echo yes | terraform destroy",
        "terraform -chdir=infra destroy",
        "find . -exec terraform destroy \\;",
        "xargs terraform destroy",
        "(cd x && terraform destroy)",
        "true && $(terraform destroy)",
        "echo `terraform destroy`",
        "if true; then terraform destroy; fi",
        "sudo -u x terraform destroy",
        "timeout 60 nohup terraform destroy",
        "sh -c \"bash -c 'terraform destroy'\"",
        "env X=1 timeout 5 bash -c 'terraform destroy'",
        "$'terraform' \"destroy\"",
        "t\\erra''form des\"\"troy",
        "cat <<EOF\n$(terraform destroy)\nEOF",
        "f() { terraform destroy; }",
        "case x in *) terraform destroy;; esac",
        "echo ${x:-`terraform destroy`}",
        "nice -n 19 ionice -c3 stdbuf -oL -eL time terraform destroy",
        "command exec nohup doas terraform destroy",
        "echo | sudo -E env -u A -- B=1 xargs -0 sh -ec 'terraform destroy'",
    ];
    for src in disguises {
        let script = parse(src);
        let found = script.commands.iter().any(|c| {
            c.program() == Some("terraform")
                && c.argv
                    .iter()
                    .skip(1)
                    .find(|w| !w.starts_with('-'))
                    .is_some_and(|w| w == "destroy")
        });
        assert!(found, "{src:?}: {:?}", show(&script));
    }
    let piped = parse("echo yes | terraform destroy");
    assert!(piped.commands[1].piped && !piped.commands[0].piped);
    let chdir = parse("terraform -chdir=infra destroy");
    assert_eq!(chdir.commands[0].argv, ["terraform", "-chdir=infra", "destroy"]);
    let path = parse("/opt/terraform/bin/terraform destroy");
    assert_eq!(path.commands[0].argv[0], "/opt/terraform/bin/terraform");
    assert!(!parse("t=terraform; $t destroy").opaque.is_empty());
}

#[test]
fn a_bare_assignment_is_a_command_without_words() {
    let script = parse("t='terraform'");
    assert_eq!(script.commands.len(), 1);
    let s = &script.commands[0];
    assert_eq!(s.assigns, [("t".to_string(), "terraform".to_string())]);
    assert!(s.argv.is_empty() && s.program().is_none() && script.opaque.is_empty());
}

#[test]
fn redirections_keep_their_descriptor_and_kind() {
    let script = parse("cmd 2>&1 >out <<EOF\nbody\nEOF");
    let kinds: Vec<_> = script.commands[0].redirects.iter().map(|r| (r.fd, r.kind)).collect();
    use RedirectKind::*;
    assert_eq!(kinds, [(Some(2), Dup), (None, Write), (None, HereDoc)]);
    assert_eq!(script.commands[0].redirects[0].target, "1");
}

#[test]
fn words_say_which_parts_are_unknown() {
    let s = &parse("ls \"$HOME\" '$HOME' ~ x\\*").commands[0];
    assert_eq!(s.argv, ["ls", "$HOME", "$HOME", "~", "x*"]);
    assert_eq!(s.dynamic, [false, true, false, false, false]);
}

/// The reason names the hidden program.
#[test]
fn a_hidden_program_is_named() {
    let script = parse("\"$t\" destroy");
    assert_eq!(script.opaque, ["the program is hidden: $t"]);
}

/// Inputs that are wrong in every way; none may panic, and each must be read quickly.
#[test]
fn malformed_input_neither_panics_nor_hangs() {
    // One input per `¦`; continuation lines lose their leading blanks.
    let mut inputs: Vec<String> =
        "'¦\"¦`¦$(¦${¦$((¦$'¦$\"¦\\¦(¦)¦{¦}¦((¦))¦<<¦<<EOF¦<<-¦<<<¦>&¦&>¦2>¦|¦\
        ||¦&&¦;;¦;;&¦!¦if¦then¦fi¦for¦for (( ¦case¦case x in¦case x in (¦esac¦while¦do¦done¦\
        function¦f()¦[[¦]]¦a=(¦$(`)¦`$(`¦${$(}¦\"$(\"¦'$('¦$(( $( ))¦<(¦>(¦cat <<E\n$(¦\
        cat <<E\n`¦echo \\¦sh -c¦sh -c '¦env -¦env -u¦sudo -u¦find -exec¦find -exec ;¦\
        xargs -I¦timeout¦$'\\x'¦$'\\u{'¦$'\\c'¦$'\\U110000'¦é$(ü¦`é¦a\u{0}b¦\r\n\r\n¦\
        #\n#¦; ; ;¦& &¦| |¦f() f() f()¦case x in a) ls;; b¦[[ a ¦for x in a b¦echo ${x:-'}"
            .split('¦')
            .map(str::to_string)
            .collect();
    for open in
        ["(", "$(", "{ ", "if ", "`", "${", "$((", "[[ ", "f() ", "function f ", "for x do "]
    {
        inputs.push(open.repeat(10_000));
    }
    inputs.push("sh -c \\\"".repeat(2_000));
    inputs.push("nohup ".repeat(10_000) + "ls");
    inputs.push("find . ".to_string() + &"-exec a ; ".repeat(1_000));
    inputs.push("X=1 ".repeat(2_000) + "bash -c '" + &"a;".repeat(2_000) + "'");
    inputs.push("{ ".repeat(10) + &"a;".repeat(5_000) + &"} > f ".repeat(10));
    inputs.push("cat ".to_string() + &"<<E ".repeat(5_000) + "\n" + &"x\n".repeat(5_000));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let alphabet: Vec<char> =
        " \t\n'\"`$(){}[]<>|&;\\#=*?~!-+0123456789abcEFsh-cxargsfind é".chars().collect();
    for _ in 0..3_000 {
        let mut s = String::new();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        for _ in 0..(seed >> 33) % 120 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s.push(alphabet[((seed >> 33) % alphabet.len() as u64) as usize]);
        }
        inputs.push(s);
    }
    let start = std::time::Instant::now();
    for input in &inputs {
        let script = parse(input);
        for c in &script.commands {
            assert_eq!(c.argv.len(), c.dynamic.len(), "{input:?}");
        }
    }
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn deep_nesting_and_long_input_are_opaque() {
    let deep = ["(", "( ", "$(", "if ", "`", "{ ", "${"].map(|open| open.repeat(10_000));
    for src in deep.into_iter().chain(["a ".repeat(40_000)]) {
        let script = parse(&src);
        assert!(!script.opaque.is_empty(), "{}", &src[..10]);
    }
    let nested = |n: usize| "( ".repeat(n) + "ls" + &" )".repeat(n);
    assert_eq!(show(&parse(&nested(15))), "ls");
    assert!(!parse(&nested(17)).opaque.is_empty());
    let many = "a | ".repeat(10_000) + "b";
    assert_eq!(parse(&many).commands.len(), 10_001);
}
