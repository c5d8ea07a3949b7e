//! What bash evaluates as arithmetic or as a name, as a table: the forms that hide code in a
//! value (opaque) and the ordinary scripts that stay understood.

use crate::shell::parse;

/// What bash evaluates as arithmetic or as a name (issue 32): (script, whether it is
/// opaque). A value evaluated there may hold `a[$(…)]`, which bash runs; only literal
/// numbers and variables this script set to literal numbers are safe.
const EVALUATED: &[(&str, bool)] = &[
    // The attack and its forms: a variable whose value is not known, evaluated.
    ("x='a[$(terraform destroy)]'; echo ${b[x]}", true),
    ("echo ${b[x]}", true),
    ("echo ${b[$x]}", true),
    ("echo \"${b[$x]}\"", true),
    ("cat <<EOF\n${b[x]}\nEOF", true),
    ("echo ${#b[x]}", true),
    ("echo ${s:x}", true),
    ("echo ${s:1:x}", true),
    ("echo ${s: -x}", true),
    ("echo ${a[@]:$(id -u)}", true),
    ("echo ${a[@]:n:2}", true),
    ("echo $[x]", true),
    ("echo $[x + 1]", true),
    ("echo $((x))", true),
    ("echo $(( ${x} + 1 ))", true),
    ("(( x ))", true),
    ("(( a[0] ))", true),
    ("let x++", true),
    ("let 'y = x'", true),
    ("[[ $x -eq 1 ]]", true),
    ("[[ 1 -lt x ]]", true),
    ("[[ -v $n ]]", true),
    ("[[ -v a[$x] ]]", true),
    ("[[ -R a[x] ]]", true),
    ("test -v \"a[$x]\"", true),
    ("[ -v 'a[x]' ]", true),
    ("declare -i n=$x", true),
    ("declare -i n; n=$x", true),
    ("declare -i n; read n", true),
    ("local -i n=x", true),
    ("typeset -i n=\"$1\"", true),
    ("declare -n r=x", true),
    ("read -r \"a[$x]\"", true),
    ("read -r 'a[x]'", true),
    ("read -a \"$n\"", true),
    ("printf -v \"$n\" '%s' x", true),
    ("printf -v 'a[$(id)]' 1", true),
    ("printf -va[x] 1", true),
    ("unset 'a[x]'", true),
    ("export \"$n\"=1", true),
    ("declare \"a[$x]\"=1", true),
    ("mapfile -t \"a[$x]\" < f", true),
    ("readarray -C cb lines < f", true),
    ("getopts ab \"$n\"", true),
    ("wait -n -p \"$n\"", true),
    ("echo ${!x}", true),
    ("echo ${x@P}", true),
    ("i=3 | cat; echo $((i))", true),
    ("i=3 & echo $((i))", true),
    ("true && i=3; echo $((i))", true),
    ("(i=3); echo $((i))", true),
    ("echo $(i=3); echo $((i))", true),
    ("if true; then i=3; fi; echo $((i))", true),
    ("echo $((i)); i=3", true),
    ("i=3; echo $((i)); i=$x", true),
    ("i=3; while true; do echo $((i)); read i; done", true),
    ("i=3; : ${i:='a[$(id)]'}; echo $((i))", true),
    ("i=abc; echo $((i))", true),
    ("sh -c 'echo $((i))'", true),
    ("for ((i=0; i<3; i++)); do :; done", true),
    ("echo $(( $(id -u) + 1 ))", true),
    ("echo $(( \"$x\" ))", true),
    // What stays understood: literals, known numbers, patterns, plain names.
    ("(( 1 + 2 ))", false),
    ("echo $((1 + 2)) $[3 * 4] $((16#ff + 0x1f + 2#101))", false),
    ("i=3; echo $((i+1))", false),
    ("i=3; echo $(( $i * 2 )) ${i} $(( ${i} ))", false),
    ("i=3 j=-4; (( i > j )) && echo ${s:i:j}", false),
    ("i=3; let i++ 'i = i + 1'", false),
    ("i=3 && echo $((i))", false),
    ("i=3; echo `echo $((i))`", false),
    ("i=3; cat <<EOF\n$((i))\nEOF", false),
    ("echo ${a[0]} ${a[@]} ${#a[@]} ${#a[*]} ${a[*]:1:2} ${#x} ${x:-y} ${x:+y} ${x:?y}", false),
    ("echo ${!a[@]} ${!pre*} ${!}", false),
    ("echo \"${a[1]}\" ${x/a/b} ${x#a} ${x%%b}", false),
    ("[[ $x == foo ]] && [[ -f main.tf ]] && [[ -n $x && $x != *.tf ]]", false),
    ("[[ $# -eq 0 || $? -ne 1 || ${#x} -gt 3 ]]", false),
    ("[[ $opt == -v ]]", false),
    ("test -v HOME && [ -v PATH ] && [[ -v a[1] ]]", false),
    ("[ \"$x\" -eq 1 ]", false),
    ("printf -v out '%s' x; read -r line; read -rp 'Go? ' ans; read -a arr", false),
    ("mapfile -t lines < f; readarray -d '' files < f; getopts ab opt", false),
    ("unset x a[1]; unset -f f; export FOO=$x BAR; declare -a list; local y=$z", false),
    ("declare -i n=3; n=4; echo $((n))", false),
    ("wait -n -p pid", false),
    ("echo $((RANDOM % 10)) $((SECONDS)) ${a[LINENO]}", false),
    ("RANDOM=x; echo $((RANDOM % 10))", true),
    ("read SECONDS; echo $((SECONDS))", true),
    ("i=0; while (( i < 3 )); do i=$((i + 1)); done; echo $((i))", false),
    ("i=0; j=$((i + 1)); echo ${a[j]}", false),
    ("i=0; i=$(( $x )); echo $((i))", true),
    ("i=0; i=$((1))$x; echo $((i))", true),
    ("case $x in a) echo ${a[0]};; esac", false),
];

#[test]
fn what_bash_evaluates_is_understood_only_when_its_operands_are_known() {
    let mut wrong = Vec::new();
    for (src, opaque) in EVALUATED {
        let got = parse(src);
        if got.opaque.is_empty() == *opaque {
            wrong.push(format!("{src:?}: want opaque={opaque}, got {:?}", got.opaque));
        }
    }
    assert!(wrong.is_empty(), "{} of {}:\n{}", wrong.len(), EVALUATED.len(), wrong.join("\n"));
}

/// Many known variables and many nested parses stay fast: what a nested parse inherits is
/// bounded.
#[test]
fn many_variables_and_substitutions_stay_linear() {
    let mut src = String::new();
    for n in 0..3_000 {
        src.push_str(&format!("i{n}=1;"));
    }
    src.push_str(&"echo `a` $((i1));".repeat(1_500));
    let start = std::time::Instant::now();
    let script = parse(&src);
    assert!(script.opaque.is_empty(), "{:?}", script.opaque.first());
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}
