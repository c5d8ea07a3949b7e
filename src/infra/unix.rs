//! Everyday unix programs and shell builtins: the ones that only read (their operands are
//! paths to judge), the network clients (never read), builtins that run code, wrappers the
//! parser could not peel, services, and the programs that overwrite disks.

use super::judge::{Cmd, Out};
use super::vars::reaches;
use super::word::{Words, words};
use super::{PathUse, Tier};

/// Programs that read the files they are given and change nothing.
const READS: Words = words!(
    "ls cat head tail wc grep egrep fgrep rg ag stat file du df diff cmp comm cut \
    tr nl tac rev fold column paste join expand unexpand od hexdump strings realpath readlink \
    less more tree md5sum sha1sum sha256sum sha512sum shasum cksum b2sum base64 base32 zcat zgrep \
    bzcat xzcat jq lsof fmt look iconv sum tsort wdiff"
);

/// Programs and builtins that read nothing they are given as a path and change nothing.
const QUIET: Words = words!(
    "pwd echo printf which type whereis test [ [[ true false : basename dirname \
    whoami id uname printenv sleep seq yes ps free uptime ss netstat journalctl history clear \
    tput locale nproc getconf lsblk blkid expr set unset local declare readonly typeset export \
    read wait exit return shift break continue umask getent groups last w who tty arch logname \
    users date hostname env mount ulimit dirs jobs times shopt cal factor bc numfmt mapfile \
    readarray getopts"
);

/// Builtins that run code given as words.
const CODE: Words = words!(
    "eval source . trap alias function bind coproc fc builtin complete let hash dc \
    enable"
);

/// Wrappers the parser peels; one that reaches here could not be peeled.
const WRAPPERS: Words = words!(
    "command exec nohup time timeout nice ionice stdbuf sudo doas xargs su \
    chroot unshare nsenter setsid flock watch parallel script runuser strace ltrace valgrind entr \
    chronic unbuffer faketime firejail proxychains proxychains4 torsocks at batch tmux screen \
    pkexec"
);

/// Clients that talk to the network.
const NETWORK: Words = words!(
    "curl wget nc ncat netcat socat ssh scp sftp rsync ftp telnet http https xh \
    dig nslookup host ping ping6 traceroute mtr whois aria2c lftp mosh redis-cli psql mysql mongo \
    mongosh nmap grpcurl websocat vault consul nomad"
);

/// Programs that overwrite disks or files beyond repair.
const WIPES: Words = words!(
    "dd shred truncate wipefs fdisk sfdisk gdisk cfdisk parted blkdiscard mke2fs mkswap srm"
);

/// Whether a program runs its words as a command (`nohup`, `sudo`, `env`, `watch` …).
pub(super) fn is_wrapper(name: &str) -> bool {
    name == "env" || WRAPPERS.has(name)
}

/// Whether a program changes nothing and opens none of its words.
pub(super) fn is_quiet(name: &str) -> bool {
    QUIET.has(name)
}

/// Judges one command when it is an everyday program; false when it is not one.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    out.prefix(&[name]);
    if READS.has(name) {
        read(cmd, out);
    } else if QUIET.has(name) {
        quiet(cmd, out);
    } else if CODE.has(name) {
        out.opaque(format!("{name} runs code given as words"));
    } else if WRAPPERS.has(name) {
        let bare = cmd.args.is_empty() || name == "command" && cmd.short("vV");
        if !bare {
            out.opaque(format!("{name} runs a command that could not be unwrapped"));
        }
    } else if NETWORK.has(name) {
        network(cmd, out);
    } else if WIPES.has(name) || name.starts_with("mkfs") {
        out.raise(Tier::Destroy, format!("{name} overwrites data beyond repair"));
        for (i, _) in cmd.positionals() {
            out.word(cmd, i, PathUse::Write);
        }
    } else {
        return system(cmd, out);
    }
    true
}

/// A reading program: its operands are paths (the first is a pattern for the greps).
fn read(cmd: &Cmd, out: &mut Out) {
    let mut from = 0;
    let explicit = cmd.short("ef") || cmd.has_any(words!("--regexp --file --from-file"));
    if words!("grep egrep fgrep rg ag zgrep jq").has(cmd.name)
        && !explicit
        && let Some((i, _)) = cmd.positionals().next()
    {
        from = i + 1;
    }
    if words!("tree iconv less").has(cmd.name) {
        let long = if cmd.name == "less" { "--log-file" } else { "--output" };
        super::files::output(cmd, out, long);
    }
    if cmd.name == "rg" && cmd.args.iter().any(|a| a == "--pre" || a.starts_with("--pre=")) {
        out.raise(Tier::Mutate, "rg --pre runs a program on every file");
    }
    out.operands(cmd, from, true);
}

/// A program that changes nothing, a few forms aside.
fn quiet(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let positionals = cmd.positionals().count();
    let values = words!("-d --date -f --file -r --reference --rfc-3339");
    let setting = name == "date" && cmd.words(values).iter().any(|(_, w)| !w.starts_with('+'));
    match name {
        "date" if cmd.has_any(words!("-s --set")) || setting => {
            out.raise(Tier::Mutate, "date sets the clock")
        }
        "hostname" if positionals > 0 => out.raise(Tier::Mutate, "hostname renames the machine"),
        "mount" if cmd.args.iter().any(|a| !matches!(a.as_str(), "-l" | "--show-labels")) => {
            out.raise(Tier::Mutate, "mount changes the file systems")
        }
        "ss" if cmd.short("K") || cmd.has("--kill") => {
            out.raise(Tier::Mutate, "ss -K kills sockets")
        }
        "journalctl" if cmd.args.iter().any(|a| a.starts_with("--vacuum")) => {
            out.raise(Tier::Destroy, "journalctl --vacuum deletes journal files")
        }
        "journalctl" if cmd.has_any(JOURNAL_CHANGES) => {
            out.raise(Tier::Mutate, "journalctl changes the journal")
        }
        "env" if !cmd.args.is_empty() => {
            out.opaque("env runs a command that could not be unwrapped")
        }
        "export" | "declare" | "typeset" | "readonly" | "local" | "read" | "mapfile"
        | "readarray" | "getopts" | "printf" | "set" => variables(cmd, out),
        _ => out.operands(cmd, 0, false),
    }
}

/// journalctl options that change the journal.
const JOURNAL_CHANGES: Words = words!(
    "--rotate --flush --sync --setup-keys --update-catalog \
    --relinquish-var --smart-relinquish-var"
);

/// The builtins that set variables: setting one that changes which code runs (`export PATH=…`,
/// `read PATH`, `printf -v PATH`, `export KUBECONFIG` of a value set before, `set -a`) is opaque.
fn variables(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let exporting = matches!(name, "export") || cmd.short("x");
    let mut names: Vec<&str> = Vec::new();
    match name {
        "printf" => names.extend(cmd.value("-v")),
        "read" | "mapfile" | "readarray" | "getopts" => {
            let values = words!("-a -d -i -n -N -p -t -u -C -c -O -s");
            names.extend(cmd.words(values).into_iter().map(|(_, w)| w));
        }
        "set" => {
            if cmd.short("a") || cmd.value("-o") == Some("allexport") {
                out.opaque("set -a exports every variable set after it");
            }
        }
        _ => {
            for arg in cmd.args.iter().filter(|a| !a.starts_with('-')) {
                match arg.split_once('=') {
                    Some((var, value)) => {
                        super::vars::written(var, value, cmd.cwd, out);
                        names.push(var);
                    }
                    None if exporting => names.push(arg),
                    None => {}
                }
            }
            if cmd.short("f") {
                out.opaque(format!("{name} -f defines functions"));
            }
        }
    }
    for var in names {
        if reaches(var, !exporting, out.env) {
            out.opaque(format!("sets {var}: programs may not be what they seem"));
        }
    }
    if name == "printf" {
        out.operands(cmd, 0, false);
    }
}

/// A network client: never read; the files it sends or saves are paths to judge.
fn network(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    out.raise(Tier::Mutate, format!("{name} talks to the network"));
    let runs = match name {
        "ssh" => cmd.short("oF"),
        "scp" => cmd.short("oFS"),
        "sftp" => cmd.short("oFSD"),
        "rsync" => cmd.short("e") || cmd.has_any(words!("--rsh --rsync-path")),
        "mosh" => cmd.has("--ssh"),
        _ => false,
    };
    if runs {
        out.opaque(format!("{name} runs a program its options or configuration name"));
    }
    if words!("vault consul nomad redis-cli psql mysql mongo mongosh").has(name)
        && let Some(verb) = super::scan::deleting_word(cmd.args)
    {
        out.raise(Tier::Destroy, format!("{name} asked to {verb}"));
    }
    let writes = words!("-o --output -O --output-document -P --directory-prefix");
    let reads = words!("-T --upload-file -K --config --post-file --body-file -i --input-file");
    let data = words!("-d --data --data-binary --data-raw --data-urlencode -F --form --json");
    for (i, arg) in cmd.args.iter().enumerate().skip(1) {
        let option = cmd.args[i - 1].as_str();
        let how = if writes.has(option) && name != "curl" || option == "-o" || option == "--output"
        {
            PathUse::Write
        } else if reads.has(option) || data.has(option) && arg.contains('@') {
            PathUse::Read
        } else {
            continue;
        };
        let file = arg.rsplit('@').next().unwrap_or(arg);
        if !cmd.hidden(i) && file != "-" {
            let path = cmd.resolve(out, file);
            if how == PathUse::Write { out.write(path) } else { out.read(path) }
        }
    }
    match name {
        "scp" | "rsync" | "sftp" => {
            let words: Vec<(usize, &str)> = cmd.positionals().collect();
            let upload = words.last().is_some_and(|(_, w)| w.contains(':'));
            for (k, &(i, word)) in words.iter().enumerate() {
                if !word.contains(':') {
                    let how =
                        if upload || k + 1 < words.len() { PathUse::Read } else { PathUse::Write };
                    out.word(cmd, i, how);
                }
            }
            if name == "rsync"
                && cmd
                    .args
                    .iter()
                    .any(|a| a.starts_with("--delete") || a == "--remove-source-files")
            {
                out.raise(Tier::Destroy, "rsync --delete deletes files at the destination");
            }
        }
        "ssh" | "mosh" => {
            let values = words!("-i -p -l -o -F -J -L -R -D -b -c -E -S -W -w -m -e -Q -O -B -I");
            let mut i = 0;
            let mut words = 0;
            while let Some(arg) = cmd.args.get(i) {
                if values.has(arg) {
                    i += 1;
                } else if !arg.starts_with('-') {
                    words += 1;
                }
                i += 1;
            }
            if words > 1 {
                out.opaque(format!("{name} runs a command on another machine"));
            }
            if let Some(key) = cmd.value("-i") {
                out.read(cmd.resolve(out, key));
            }
        }
        _ => {}
    }
}

/// Services, processes and machines; false for a program it does not know.
fn system(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    let first = cmd.positionals().next().map_or("", |(_, w)| w);
    match name {
        "systemctl" | "service" | "launchctl" => {
            let sub = if name == "service" {
                cmd.positionals().nth(1).map_or("", |(_, w)| w)
            } else {
                first
            };
            out.prefix(&[name, sub]);
            let read = matches!(sub, "" | "status" | "show" | "cat" | "help" | "list" | "print")
                || sub.starts_with("list-")
                || sub.starts_with("is-");
            if !read {
                out.raise(Tier::Mutate, format!("{name} {sub} changes a service"));
            }
        }
        "kill" | "pkill" | "killall" | "renice" => {
            out.raise(Tier::Mutate, format!("{name} signals processes"))
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            out.raise(Tier::Destroy, format!("{name} stops the machine"))
        }
        "crontab" if cmd.short("l") => {}
        "crontab" if cmd.short("r") => {
            out.raise(Tier::Destroy, "crontab -r deletes every cron job")
        }
        "crontab" => out.raise(Tier::Mutate, "crontab changes scheduled jobs"),
        "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd" | "sysctl" | "modprobe"
        | "swapoff" | "swapon" | "umount" | "useradd" | "userdel" | "usermod" | "passwd"
        | "chpasswd" | "visudo" => out.raise(Tier::Mutate, format!("{name} changes the machine")),
        "vi" | "vim" | "nvim" | "nano" | "emacs" | "code" | "open" | "xdg-open" => {
            out.raise(Tier::Mutate, format!("{name} opens an editor or another program"));
            for (i, _) in cmd.positionals() {
                out.word(cmd, i, PathUse::Write);
            }
        }
        _ => return false,
    }
    true
}
