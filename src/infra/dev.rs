//! Programs that run code: interpreters (a script runs its directory's code, inline code is
//! opaque), package managers, build tools and test runners (they run the project's code),
//! containers, and the deploy tools around terraform (cdk, helmfile, skaffold, kitchen…).

use super::judge::{Cmd, Out};
use super::path::{glob_dir, parent};
use super::word::listed;
use super::{PathUse, Tier};

/// Package managers and tools with subcommands: program, the subcommands that only read, and
/// those that delete (space-separated). Any other subcommand mutates and runs code in the cwd.
const TOOLS: &[(&str, &str, &str)] = &[
    ("apt", "list show search policy depends rdepends changelog", ""),
    ("apt-get", "check changelog", ""),
    ("apt-cache", "show search policy depends rdepends showpkg stats madison", ""),
    ("dnf", "list info search repolist provides history", ""),
    ("yum", "list info search repolist provides history", ""),
    ("apk", "info search list policy", ""),
    ("brew", "list ls info search outdated deps uses config doctor leaves desc", ""),
    ("pip", "list show freeze check search help inspect index debug", ""),
    (
        "npm",
        "ls list ll la view info show outdated why explain search help doctor root prefix \
            whoami ping fund query",
        "",
    ),
    ("yarn", "list info why outdated help licenses", ""),
    ("pnpm", "list ls why outdated view info help", ""),
    (
        "cargo",
        "tree metadata search version help locate-project pkgid verify-project read-manifest \
            info",
        "",
    ),
    ("go", "version env list doc help vet", ""),
    ("gem", "list search info query specification contents env help", ""),
    ("bundle", "list show info outdated check help platform", ""),
    ("composer", "show info outdated licenses search depends why why-not validate help audit", ""),
    ("poetry", "show check search help", ""),
    ("uv", "tree help", ""),
    ("pipx", "list help", ""),
    ("conda", "list info search", ""),
    ("rustup", "show help which", ""),
    ("deno", "info doc help lint check", ""),
    ("bun", "pm help", ""),
    (
        "docker",
        "ps images logs inspect version info top stats history diff port events search ls df \
            config",
        "rm rmi prune down",
    ),
    (
        "podman",
        "ps images logs inspect version info top stats history diff port events search ls df",
        "rm rmi prune",
    ),
    ("docker-compose", "ps logs config ls images top version port", "rm down"),
    (
        "cdk",
        "diff synth synthesize ls list doctor docs context notices acknowledge",
        "destroy deploy",
    ),
    (
        "helmfile",
        "diff template lint list status build write-values deps repos version",
        "destroy delete",
    ),
    ("skaffold", "render diagnose version build inspect schema", "delete"),
    ("tilt", "version get describe logs doctor ci", "down"),
    ("kitchen", "list diagnose version help", "destroy test"),
    ("molecule", "list syntax lint check matrix", "destroy test"),
    ("serverless", "info print package help", "remove"),
    ("packer", "validate inspect fmt version console", ""),
    ("vagrant", "status global-status ssh-config version box", "destroy"),
    ("gh", "status browse search help", "delete"),
    ("cdktf", "diff synth synthesize list output help debug", "destroy deploy apply"),
];

/// Groups whose action follows (`docker volume rm`, `docker compose down`).
const GROUPS: &str = "container image volume network system builder compose buildx context plugin \
    node service stack swarm secret config pm box repo pr issue workflow release api";

/// Test runners and build tools: they run the project's code.
const RUNNERS: &str = "pytest py.test jest vitest mocha tox nox rspec phpunit bats ctest behave \
    cucumber ava karma playwright cypress make gmake cmake ninja gradle gradlew mvn mvnw ant just \
    task bazel bazelisk meson scons rake invoke nx turbo lerna earthly terratest pre-commit hatch \
    rye";

/// Judges one command when it runs code; false for any other program.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let name = match cmd.name {
        "pip3" => "pip",
        "mamba" | "micromamba" => "conda",
        "bundler" => "bundle",
        "sls" => "serverless",
        "nerdctl" => "docker",
        name => name,
    };
    if let Some(&(_, reads, deletes)) = TOOLS.iter().find(|t| t.0 == name) {
        tool(cmd, reads, deletes, out);
    } else if listed(RUNNERS, name) {
        runner(cmd, out);
    } else {
        return interpreter(cmd, out);
    }
    true
}

/// A tool with subcommands.
fn tool(cmd: &Cmd, reads: &str, deletes: &str, out: &mut Out) {
    let name = cmd.name;
    let values = "-H --host --context -c --config -l --log-level -f --file -p --project-name -C \
        --chdir";
    let words = cmd.words(values);
    let (mut at, mut sub) = words.first().map_or((0, ""), |&(i, w)| (i, w));
    if cmd.dynamic(at) && !sub.is_empty() {
        out.opaque(format!("the {name} subcommand is hidden: {sub}"));
        return;
    }
    let mut prefix = vec![name, sub];
    if listed(GROUPS, sub)
        && let Some(&(i, action)) = words.get(1)
    {
        (at, sub) = (i, action);
        prefix.push(action);
    }
    if matches!(
        name,
        "npm" | "yarn" | "pnpm" | "bun" | "deno" | "poetry" | "uv" | "bundle" | "cargo" | "go"
    ) && matches!(sub, "run" | "exec" | "task" | "x")
        && let Some(&(_, script)) = words.iter().find(|&&(i, _)| i > at)
    {
        prefix.push(script);
    }
    prefix.retain(|w| !w.is_empty());
    out.prefix(&prefix);
    let all = prefix.get(1..).unwrap_or(&[]).join(" ");
    if let Some(reason) = unprefixed(name, sub, &cmd.after(at)) {
        out.raise(Tier::Mutate, reason);
        out.no_prefix();
    }
    if sub.is_empty() || listed(reads, sub) {
        if listed("synth synthesize diff template build render lint check vet", sub) {
            out.runs(cmd.cwd.to_path_buf());
        }
        return;
    }
    out.runs(cmd.cwd.to_path_buf());
    let volumes = cmd.has_any("-v --volumes");
    let compose = matches!(name, "docker" | "docker-compose" | "podman" | "nerdctl");
    let anything = matches!(name, "yarn" | "pnpm" | "bun") || sub == "run";
    let verb = anything
        .then(|| super::scan::deleting_word(cmd.args.get(at + 1..).unwrap_or(&[])))
        .flatten();
    if listed(deletes, sub) && (sub != "down" || volumes || !compose) {
        out.raise(Tier::Destroy, format!("{name} {all} deletes resources or data"));
    } else if let Some(verb) = verb {
        out.raise(Tier::Destroy, format!("{name} {all} runs a program asked to {verb}"));
    } else if sub == "eval" || name == "bun" && cmd.has("-e") {
        out.opaque(format!("{name} {sub} runs inline code"));
    } else {
        out.raise(Tier::Mutate, format!("{name} {all} installs, changes or runs code"));
    }
}

/// A test runner or build tool: `make TARGET` is its prefix, the cwd (or `-C DIR`) its code.
fn runner(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let values = "-C --directory -f --file --makefile -j --jobs -I -o -W -l -k -m -p -c --rootdir \
        -e";
    let dir = match cmd.value("-C").or_else(|| cmd.value("--directory")) {
        Some(d) => cmd.resolve(out, d),
        None => cmd.cwd.to_path_buf(),
    };
    out.runs(dir);
    if cmd.program.contains('/') {
        out.runs(parent(&cmd.resolve(out, cmd.program)));
    }
    let target = cmd.words(values).into_iter().find(|(i, w)| !w.contains('=') && !cmd.dynamic(*i));
    let file = ["-f", "--file", "--makefile", "--justfile", "--taskfile", "--rakefile"]
        .iter()
        .find_map(|o| cmd.value(o));
    if let Some(file) = file {
        out.read(cmd.resolve(out, file));
    }
    let other_code = cmd.has_any("--eval -E -I --include-dir --init-script --build-file -b")
        || build_tool(name) && cmd.words(values).iter().any(|(_, w)| w.contains('='));
    let build = [
        "make", "gmake", "just", "task", "rake", "invoke", "gradle", "gradlew", "mvn", "mvnw",
        "ant", "nx", "turbo", "lerna",
    ];
    match target.filter(|_| build.contains(&name)) {
        Some((_, target)) => out.prefix(&[name, target]),
        None => out.prefix(&[name]),
    }
    out.raise(Tier::Mutate, format!("{name} runs the project's code"));
    if file.is_some() || other_code {
        out.no_prefix();
    }
}

/// An interpreter: inline code is opaque, a script runs its directory's code; false for a
/// program that is not one.
fn interpreter(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    let python = name.starts_with("python") || name.starts_with("pypy");
    let (code, values) = match name {
        _ if python => ("-c", "-W -X -m"),
        "perl" => ("-e -E", "-I -M -m"),
        "ruby" | "irb" => ("-e", "-I -r"),
        "node" | "nodejs" => ("-e --eval -p --print", "-r --require --import --loader"),
        "php" => ("-r", "-d -c"),
        "lua" | "luajit" | "Rscript" | "julia" => ("-e", ""),
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" => {
            ("-c -s", "-o -O")
        }
        "pwsh" | "powershell" => ("-c -Command -command -EncodedCommand -e", "-File -f"),
        "osascript" | "tclsh" | "wish" | "groovy" | "jshell" | "swift" | "java" | "kotlin"
        | "scala" | "elixir" | "erl" => ("-e", "-cp -classpath"),
        _ => return false,
    };
    out.prefix(&[name]);
    let inline = cmd.args.iter().any(|a| {
        let cluster = a.len() > 1 && a.starts_with('-') && !a.starts_with("--");
        listed(code, a)
            || a.starts_with("--eval=")
            || cluster && code.split(' ').any(|c| c.len() == 2 && a[1..].contains(&c[1..]))
    });
    if inline {
        out.opaque(format!("{name} runs inline code"));
        out.no_prefix();
        return true;
    }
    if python && let Some(module) = cmd.value("-m") {
        out.prefix(&[name, "-m", module]);
        out.runs(cmd.cwd.to_path_buf());
        out.raise(Tier::Mutate, format!("{name} -m {module} runs code"));
        return true;
    }
    let version = ["--version", "-V", "-v", "--help", "-h"];
    match cmd.words(values).first() {
        Some(&(i, _)) if cmd.hidden(i) => {
            out.opaque(format!("{name} runs a hidden script: {}", cmd.args[i]))
        }
        Some(&(i, script)) => {
            let word = if cmd.dynamic(i) { glob_dir(script) } else { script };
            let path = cmd.resolve(out, word);
            out.runs(parent(&path));
            out.prefix(&[name, script]);
            let shell = listed(code, "-s");
            match shell && cmd.args.iter().any(|a| a == "-n") {
                true => out.word(cmd, i, PathUse::Read),
                false => out.raise(Tier::Mutate, format!("{name} runs {script}")),
            }
        }
        None if cmd.args.iter().any(|a| version.contains(&a.as_str())) => {}
        None => out.opaque(format!("{name} reads its program from stdin")),
    }
    true
}

/// Whether a runner is make or its kin, where `NAME=value` words change what the build runs.
fn build_tool(name: &str) -> bool {
    matches!(name, "make" | "gmake" | "just" | "rake")
}

/// Why a tool's subcommand may not be remembered by "always" (it runs what its words say, or
/// with the host's privileges); `None` when it may.
fn unprefixed(name: &str, sub: &str, rest: &Cmd) -> Option<String> {
    let container = matches!(name, "docker" | "podman" | "nerdctl");
    if container && matches!(sub, "exec" | "attach" | "debug" | "cp") {
        return Some(format!("{name} {sub} runs or copies into a container"));
    }
    let host = "-v --volume --mount --privileged --pid --network --net --cap-add --device \
        --userns --security-opt --ipc --uts --volumes-from";
    if container && matches!(sub, "run" | "create") && (rest.has_any(host) || rest.short("v")) {
        return Some(format!("{name} {sub} reaches the host (volumes, privileges)"));
    }
    if name == "go" && sub == "env" && rest.has_any("-w -u") {
        return Some("go env -w changes go's configuration".to_string());
    }
    let code = "-toolexec -vettool -exec -overlay --toolexec --vettool --exec";
    if name == "go" && rest.has_any(code) {
        return Some(format!("go {sub} runs a program its options name"));
    }
    None
}
