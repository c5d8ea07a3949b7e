//! Programs that run code: interpreters (a script runs its directory's code, inline code is
//! opaque), package managers, build tools and test runners (they run the project's code),
//! containers, and the deploy tools around terraform (cdk, helmfile, skaffold, kitchen…).

use super::judge::{Cmd, Out};
use super::path::{glob_dir, parent};
use super::word::{Words, words};
use super::{PathUse, Tier};

/// A package manager or tool with subcommands. Any subcommand in neither table mutates and
/// runs code in the cwd.
struct Tool {
    program: &'static str,
    /// The subcommands that only read.
    reads: Words,
    /// The subcommands that delete.
    deletes: Words,
}

/// The package managers and tools with subcommands.
const TOOLS: &[Tool] = &[
    Tool {
        program: "apt",
        reads: words!("list show search policy depends rdepends changelog"),
        deletes: Words::NONE,
    },
    Tool { program: "apt-get", reads: words!("check changelog"), deletes: Words::NONE },
    Tool {
        program: "apt-cache",
        reads: words!("show search policy depends rdepends showpkg stats madison"),
        deletes: Words::NONE,
    },
    Tool {
        program: "dnf",
        reads: words!("list info search repolist provides history"),
        deletes: Words::NONE,
    },
    Tool {
        program: "yum",
        reads: words!("list info search repolist provides history"),
        deletes: Words::NONE,
    },
    Tool { program: "apk", reads: words!("info search list policy"), deletes: Words::NONE },
    Tool {
        program: "brew",
        reads: words!("list ls info search outdated deps uses config doctor leaves desc"),
        deletes: Words::NONE,
    },
    Tool {
        program: "pip",
        reads: words!("list show freeze check search help inspect index debug"),
        deletes: Words::NONE,
    },
    Tool {
        program: "npm",
        reads: words!(
            "ls list ll la view info show outdated why explain search help doctor root prefix \
            whoami ping fund query"
        ),
        deletes: Words::NONE,
    },
    Tool {
        program: "yarn",
        reads: words!("list info why outdated help licenses"),
        deletes: Words::NONE,
    },
    Tool {
        program: "pnpm",
        reads: words!("list ls why outdated view info help"),
        deletes: Words::NONE,
    },
    Tool {
        program: "cargo",
        reads: words!(
            "tree metadata search version help locate-project pkgid verify-project read-manifest \
            info"
        ),
        deletes: Words::NONE,
    },
    Tool { program: "go", reads: words!("version env list doc help vet"), deletes: Words::NONE },
    Tool {
        program: "gem",
        reads: words!("list search info query specification contents env help"),
        deletes: Words::NONE,
    },
    Tool {
        program: "bundle",
        reads: words!("list show info outdated check help platform"),
        deletes: Words::NONE,
    },
    Tool {
        program: "composer",
        reads: words!("show info outdated licenses search depends why why-not validate help audit"),
        deletes: Words::NONE,
    },
    Tool { program: "poetry", reads: words!("show check search help"), deletes: Words::NONE },
    Tool { program: "uv", reads: words!("tree help"), deletes: Words::NONE },
    Tool { program: "pipx", reads: words!("list help"), deletes: Words::NONE },
    Tool { program: "conda", reads: words!("list info search"), deletes: Words::NONE },
    Tool { program: "rustup", reads: words!("show help which"), deletes: Words::NONE },
    Tool { program: "deno", reads: words!("info doc help lint check"), deletes: Words::NONE },
    Tool { program: "bun", reads: words!("pm help"), deletes: Words::NONE },
    Tool {
        program: "docker",
        reads: words!(
            "ps images logs inspect version info top stats history diff port events search ls df \
            config"
        ),
        deletes: words!("rm rmi prune down"),
    },
    Tool {
        program: "podman",
        reads: words!(
            "ps images logs inspect version info top stats history diff port events search ls df"
        ),
        deletes: words!("rm rmi prune"),
    },
    Tool {
        program: "docker-compose",
        reads: words!("ps logs config ls images top version port"),
        deletes: words!("rm down"),
    },
    Tool {
        program: "cdk",
        reads: words!("diff synth synthesize ls list doctor docs context notices acknowledge"),
        deletes: words!("destroy deploy"),
    },
    Tool {
        program: "helmfile",
        reads: words!("diff template lint list status build write-values deps repos version"),
        deletes: words!("destroy delete"),
    },
    Tool {
        program: "skaffold",
        reads: words!("render diagnose version build inspect schema"),
        deletes: words!("delete"),
    },
    Tool {
        program: "tilt",
        reads: words!("version get describe logs doctor ci"),
        deletes: words!("down"),
    },
    Tool {
        program: "kitchen",
        reads: words!("list diagnose version help"),
        deletes: words!("destroy test"),
    },
    Tool {
        program: "molecule",
        reads: words!("list syntax lint check matrix"),
        deletes: words!("destroy test"),
    },
    Tool {
        program: "serverless",
        reads: words!("info print package help"),
        deletes: words!("remove"),
    },
    Tool {
        program: "packer",
        reads: words!("validate inspect fmt version console"),
        deletes: Words::NONE,
    },
    Tool {
        program: "vagrant",
        reads: words!("status global-status ssh-config version box"),
        deletes: words!("destroy"),
    },
    Tool { program: "gh", reads: words!("status browse search help"), deletes: words!("delete") },
    Tool {
        program: "cdktf",
        reads: words!("diff synth synthesize list output help debug"),
        deletes: words!("destroy deploy apply"),
    },
];

/// Groups whose action follows (`docker volume rm`, `docker compose down`).
const GROUPS: Words = words!(
    "container image volume network system builder compose buildx context plugin \
    node service stack swarm secret config pm box repo pr issue workflow release api"
);

/// Test runners and build tools: they run the project's code.
const RUNNERS: Words = words!(
    "pytest py.test jest vitest mocha tox nox rspec phpunit bats ctest behave \
    cucumber ava karma playwright cypress make gmake cmake ninja gradle gradlew mvn mvnw ant just \
    task bazel bazelisk meson scons rake invoke nx turbo lerna earthly terratest pre-commit hatch \
    rye"
);

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
    if let Some(known) = TOOLS.iter().find(|t| t.program == name) {
        tool(cmd, known.reads, known.deletes, out);
    } else if RUNNERS.has(name) {
        runner(cmd, out);
    } else {
        return interpreter(cmd, out);
    }
    true
}

/// A tool with subcommands.
fn tool(cmd: &Cmd, reads: Words, deletes: Words, out: &mut Out) {
    let name = cmd.name;
    let values = words!(
        "-H --host --context -c --config -l --log-level -f --file -p --project-name -C \
        --chdir"
    );
    let words = cmd.words(values);
    let (mut at, mut sub) = words.first().map_or((0, ""), |&(i, w)| (i, w));
    if cmd.dynamic(at) && !sub.is_empty() {
        out.opaque(format!("the {name} subcommand is hidden: {sub}"));
        return;
    }
    let mut prefix = vec![name, sub];
    if GROUPS.has(sub)
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
    if sub.is_empty() || reads.has(sub) {
        if words!("synth synthesize diff template build render lint check vet").has(sub) {
            out.runs(cmd.cwd.to_path_buf());
        }
        return;
    }
    out.runs(cmd.cwd.to_path_buf());
    let volumes = cmd.has_any(words!("-v --volumes"));
    let compose = matches!(name, "docker" | "docker-compose" | "podman" | "nerdctl");
    let anything = matches!(name, "yarn" | "pnpm" | "bun") || sub == "run";
    let verb = anything
        .then(|| super::scan::deleting_word(cmd.args.get(at + 1..).unwrap_or(&[])))
        .flatten();
    if deletes.has(sub) && (sub != "down" || volumes || !compose) {
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
    let values = words!(
        "-C --directory -f --file --makefile -j --jobs -I -o -W -l -k -m -p -c --rootdir \
        -e"
    );
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
    let other_code = cmd
        .has_any(words!("--eval -E -I --include-dir --init-script --build-file -b"))
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
        _ if python => (words!("-c"), words!("-W -X -m")),
        "perl" => (words!("-e -E"), words!("-I -M -m")),
        "ruby" | "irb" => (words!("-e"), words!("-I -r")),
        "node" | "nodejs" => {
            (words!("-e --eval -p --print"), words!("-r --require --import --loader"))
        }
        "php" => (words!("-r"), words!("-d -c")),
        "lua" | "luajit" | "Rscript" | "julia" => (words!("-e"), Words::NONE),
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" => {
            (words!("-c -s"), words!("-o -O"))
        }
        "pwsh" | "powershell" => {
            (words!("-c -Command -command -EncodedCommand -e"), words!("-File -f"))
        }
        "osascript" | "tclsh" | "wish" | "groovy" | "jshell" | "swift" | "java" | "kotlin"
        | "scala" | "elixir" | "erl" => (words!("-e"), words!("-cp -classpath")),
        _ => return false,
    };
    out.prefix(&[name]);
    let inline = cmd.args.iter().any(|a| {
        let cluster = a.len() > 1 && a.starts_with('-') && !a.starts_with("--");
        code.has(a)
            || a.starts_with("--eval=")
            || cluster && code.iter().any(|c| c.len() == 2 && a[1..].contains(&c[1..]))
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
            let shell = code.has("-s");
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
    let host = words!(
        "-v --volume --mount --privileged --pid --network --net --cap-add --device \
        --userns --security-opt --ipc --uts --volumes-from"
    );
    if container && matches!(sub, "run" | "create") && (rest.has_any(host) || rest.short("v")) {
        return Some(format!("{name} {sub} reaches the host (volumes, privileges)"));
    }
    if name == "go" && sub == "env" && rest.has_any(words!("-w -u")) {
        return Some("go env -w changes go's configuration".to_string());
    }
    let code = words!("-toolexec -vettool -exec -overlay --toolexec --vettool --exec");
    if name == "go" && rest.has_any(code) {
        return Some(format!("go {sub} runs a program its options name"));
    }
    None
}
