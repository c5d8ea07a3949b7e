//! Programs that run a command given as their words: package runners (`npx`, `npm exec`,
//! `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`, `uv run`, `poetry run`, `pipenv run`, `conda run`,
//! `bundle exec`), multi-call binaries (`busybox rm -rf /` is `rm -rf /`) and `systemd-run`.
//! The payload is judged as the command itself (`npx terraform destroy` destroys) and brings
//! its own line for the rules; a runner makes it at least a mutation with no "always" (the
//! package or environment it runs may be anything). An option it does not know, or code given
//! as a string, is opaque.

use super::judge::{Cmd, Out};
use super::path::basename;
use super::word::{Words, is_option, line, words};
use super::{Tier, judge_payload};

/// How a runner takes its options before the payload.
struct Runner {
    /// Options that take the next word (or `=value`).
    values: Words,
    /// Options that stand alone.
    flags: Words,
    /// Options whose value is code (`npx -c 'cmd'`), or that run elsewhere.
    blind: Words,
}

const NPX: Runner = Runner {
    values: words!(
        "-p --package --registry --cache --userconfig --prefix --node-options --workspace -w"
    ),
    flags: words!(
        "-y --yes --no --no-install --ignore-existing -q --quiet -s --silent --prefer-offline \
        --prefer-online --offline --verbose -d --dd --ddd --workspaces --include-workspace-root"
    ),
    blind: words!("-c --call --shell"),
};
const PNPM: Runner = Runner {
    values: words!("--package --allow-build --filter -F --workspace-concurrency"),
    flags: words!("-s --silent -r --recursive --parallel --no-bail --report-summary"),
    blind: words!("-c --shell-mode"),
};
const YARN: Runner = Runner {
    values: words!("-p --package"),
    flags: words!("-q --quiet --bun -b"),
    blind: Words::NONE,
};
const UV: Runner = Runner {
    values: words!(
        "--with --with-editable --with-requirements --python -p --package --extra --group \
        --only-group --no-group --env-file --index --default-index --index-url -i \
        --extra-index-url --find-links -f --cache-dir --config-file --directory --project --from"
    ),
    flags: words!(
        "--isolated --no-sync --frozen --locked --no-project --all-extras --all-groups --no-dev \
        --dev --only-dev --no-default-groups --active --no-active -q --quiet -v --verbose \
        --offline --no-cache -n --no-env-file --exact --upgrade -U --no-config --refresh \
        --all-packages --no-editable --compile-bytecode --script -s --gui-script"
    ),
    blind: words!("-m --module"),
};
const POETRY: Runner = Runner {
    values: words!("-C --directory -P --project --python -n --name --cwd -p --prefix --gemfile"),
    flags: words!(
        "-q --quiet -v -vv -vvv --verbose --no-interaction --ansi --no-ansi --no-plugins \
        --no-cache --live-stream --no-capture-output --debug-wrapper-scripts \
        --keep-file-descriptors"
    ),
    blind: Words::NONE,
};
const SYSTEMD_RUN: Runner = Runner {
    values: words!(
        "-u --unit -p --property --description --slice --working-directory --uid --gid \
        --nice --service-type --on-active --on-boot --on-startup --on-unit-active \
        --on-unit-inactive --on-calendar --on-clock-change --on-timezone-change \
        --timer-property --path-property --socket-property"
    ),
    flags: words!(
        "--user --system --scope -t --pty -P --pipe -q --quiet --wait -G --collect -r \
        --remain-after-exit --same-dir --no-block --no-ask-password --send-sighup"
    ),
    blind: words!("-E --setenv -H --host -M --machine -S --shell"),
};

/// The programs that may run a payload (some only with a subcommand).
const RUNNERS: Words = words!(
    "busybox toybox npx pnpx bunx uvx systemd-run npm pnpm yarn bun uv poetry \
    pipenv conda mamba micromamba bundle bundler"
);

/// Judges `cmd` when its program runs a payload; false for any other program.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    if !RUNNERS.has(name) {
        return false;
    }
    let sub = cmd.positionals().next();
    let sub_word = sub.map_or("", |(_, w)| w);
    let after = sub.map_or(0, |(i, _)| i + 1);
    let (runner, from) = match (name, sub_word) {
        ("busybox" | "toybox", _) => return multi_call(cmd, out),
        ("npx" | "pnpx", _) => (&NPX, 0),
        ("bunx", _) => (&YARN, 0),
        ("uvx", _) => (&UV, 0),
        ("systemd-run", _) => (&SYSTEMD_RUN, 0),
        ("npm", "exec" | "x") => (&NPX, after),
        ("pnpm", "dlx" | "exec") => (&PNPM, after),
        ("yarn", "dlx" | "exec") | ("bun", "x") => (&YARN, after),
        ("uv", "run") => (&UV, after),
        ("uv", "tool") if cmd.args.get(after).is_some_and(|w| w == "run") => (&UV, after + 1),
        ("poetry" | "pipenv", "run") => (&POETRY, after),
        ("conda" | "mamba" | "micromamba", "run") => (&POETRY, after),
        ("bundle" | "bundler", "exec") => (&POETRY, after),
        _ => return false,
    };
    if sub.is_some_and(|(i, _)| cmd.args[..i].iter().any(|a| is_option(a))) && from > 0 {
        // Options before the subcommand: its words cannot be placed safely.
        out.opaque(format!("{name} {sub_word} with options before it"));
        out.no_prefix();
        return true;
    }
    let what = match start(cmd, from, runner) {
        Ok(Some(at)) => {
            payload(cmd, at, out);
            cmd.args[at].as_str()
        }
        Ok(None) => "what it installs",
        Err(option) => {
            out.opaque(format!("{name} {option} runs code that cannot be seen"));
            option
        }
    };
    out.raise(Tier::Mutate, format!("{name} runs {what} in a package, environment or unit"));
    out.no_prefix();
    true
}

/// Judges the payload at `args[at]` as a command of its own, with its own line; the gate
/// plans no terraform call inside it.
pub(super) fn payload(cmd: &Cmd, at: usize, out: &mut Out) {
    let Some(program) = cmd.args.get(at) else { return };
    if !cmd.dynamic(at) {
        out.extra_line(line(basename(program), cmd.args.get(at + 1..).unwrap_or(&[])));
    }
    let before = out.tf.len();
    judge_payload(cmd, at, out);
    out.tf.truncate(before);
}

/// Where the payload starts, from `args[from]`: `Ok(None)` when there is none, `Err` with an
/// option that hides what runs (or that is not known).
fn start<'a>(cmd: &Cmd<'a>, from: usize, runner: &Runner) -> Result<Option<usize>, &'a str> {
    let mut i = from;
    while let Some(arg) = cmd.args.get(i) {
        if arg == "--" {
            return Ok((i + 1 < cmd.args.len()).then_some(i + 1));
        }
        if !is_option(arg) {
            return Ok(Some(i));
        }
        let option = arg.split_once('=').map_or(arg.as_str(), |(o, _)| o);
        if runner.blind.has(option) || cmd.hidden(i) {
            return Err(arg);
        }
        if runner.values.has(option) {
            i += usize::from(option.len() == arg.len());
        } else if !runner.flags.has(option) {
            return Err(arg);
        }
        i += 1;
    }
    Ok(None)
}

/// `busybox APPLET …`, `toybox APPLET …`: the applet is the program.
fn multi_call(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.args.first().map(String::as_str) {
        None | Some("--list" | "--list-full" | "--help") => {}
        Some(option) if is_option(option) => {
            out.raise(Tier::Mutate, format!("{} {option} may change the system", cmd.name));
        }
        Some(_) => payload(cmd, 0, out),
    }
    out.no_prefix();
    true
}
