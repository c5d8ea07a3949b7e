//! Where start-up runs in the static binary's code, and the tool that keeps it together.
//!
//! The kernel maps a file's code 64 KiB at a time around each page a process touches, so
//! idle memory and start-up time grow with the number of 64 KiB windows start-up touches,
//! not with the code it runs. `link/startup.ld` gathers the functions that start-up and
//! `initialize` run into one output section, `.text.iac_start`, ahead of `.text` (`build.rs`
//! passes it to the static release link, and has the linker write its map beside the
//! binary). This bench measures, on the static binary after `initialize`, with a provider
//! configured and without one (start-up then logs a warning):
//! - the code pages resident, inside and outside that section;
//! - with `perf` (Debian's `linux-perf`) and its page-fault tracepoint: the functions
//!   start-up still runs outside the section before it answers `initialize`. A new
//!   start-up path, a new toolchain or new dependency versions add to them (a pattern
//!   that names an instance of a generic function carries its hash, which those change).
//!
//! `BENCH_RELAYOUT=1 cargo bench --bench layout` rewrites `link/startup.ld`: it drops the
//! patterns that match nothing, adds the functions found outside the section, relinks and
//! traces again until none is left (a fault shows only the first function touched in each
//! window, so it takes a few rounds). Run with `cargo bench --bench layout` after
//! `cargo build --release --target x86_64-unknown-linux-musl`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;

use regex::Regex;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = "target/x86_64-unknown-linux-musl/release/iac-code";
const MAP: &str = "target/x86_64-unknown-linux-musl/release/iac-code.map";
const SCRIPT: &str = "link/startup.ld";
const SECTION: &str = ".text.iac_start";
const PAGE: u64 = 4096;

/// An input section of the link, from the map: its address, size, name and the object it
/// came from (`path/libc.a(member.lo)` for an archive member).
struct Input {
    addr: u64,
    size: u64,
    name: String,
    object: String,
}

/// What the linker map says: every input section placed in the image, where the start-up
/// section lies, and the script's patterns that matched at least one section.
struct LinkMap {
    inputs: Vec<Input>,
    start: (u64, u64),
    matched: BTreeSet<String>,
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

fn read_map(path: &Path) -> LinkMap {
    let text = std::fs::read_to_string(path).expect("read the linker map");
    let body = text.split_once("Linker script and memory map").expect("a GNU ld map").1;
    let (mut inputs, mut start, mut matched) = (Vec::new(), (0, 0), BTreeSet::new());
    let (mut pending, mut pattern, mut in_start) = (None::<String>, None::<String>, false);
    let mut lines = body.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with(' ') && !line.is_empty() {
            // An output section: its address and size follow, on this line or the next.
            let mut fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() == 1 && lines.peek().is_some_and(|l| l.trim_start().starts_with("0x")) {
                fields.extend(lines.next().unwrap_or_default().split_whitespace());
            }
            in_start = fields[0] == SECTION;
            if in_start && fields.len() >= 3 {
                start = (hex(fields[1]).unwrap_or(0), hex(fields[2]).unwrap_or(0));
            }
            pattern = None;
            continue;
        }
        let trimmed = line.trim_start();
        if in_start && trimmed.starts_with('*') && !trimmed.starts_with("*fill*") {
            pattern = Some(trimmed.to_string());
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let named = line.starts_with(" .");
        match fields.as_slice() {
            [name] if named => pending = Some(name.to_string()),
            [name, addr, size, object @ ..] if named && !object.is_empty() => {
                push_input(&mut inputs, name, addr, size, object, &pattern, &mut matched);
                pending = None;
            }
            [addr, size, object @ ..] if pending.is_some() && !object.is_empty() => {
                let name = pending.take().unwrap_or_default();
                push_input(&mut inputs, &name, addr, size, object, &pattern, &mut matched);
            }
            _ => pending = None,
        }
    }
    inputs.sort_by_key(|i| i.addr);
    LinkMap { inputs, start, matched }
}

fn push_input(
    inputs: &mut Vec<Input>,
    name: &str,
    addr: &str,
    size: &str,
    object: &[&str],
    pattern: &Option<String>,
    matched: &mut BTreeSet<String>,
) {
    let (Some(addr), Some(size)) = (hex(addr), hex(size)) else { return };
    if size == 0 || !name.starts_with(".text") {
        return;
    }
    if let Some(p) = pattern {
        matched.insert(p.clone());
    }
    inputs.push(Input { addr, size, name: name.to_string(), object: object.join(" ") });
}

impl LinkMap {
    /// The index of the input section holding `addr`.
    fn input_at(&self, addr: u64) -> Option<usize> {
        let i = self.inputs.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        (addr < self.inputs[i].addr + self.inputs[i].size).then_some(i)
    }

    fn in_start(&self, addr: u64) -> bool {
        addr >= self.start.0 && addr < self.start.0 + self.start.1
    }
}

/// A section name with what changes between builds made a wildcard: the legacy mangling's
/// hash, the v0 mangling's crate disambiguators.
fn generalise(name: &str) -> String {
    static LEGACY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"17h[0-9a-f]{16}E$").unwrap());
    static V0: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"Cs[0-9A-Za-z]+_").unwrap());
    V0.replace_all(&LEGACY.replace(name, "17h*"), "Cs*_").into_owned()
}

/// The linker-script pattern that places `input`: by name without its hash when that
/// names one function, else (an instance of a generic function) exactly. A C archive
/// (musl's libc.a, 68 KiB linked) goes in whole: its functions call each other across
/// members, and a round finds one member per 64 KiB window.
fn pattern(input: &Input, names: &HashMap<String, usize>) -> String {
    let archive = Regex::new(r"([^/]+\.a)\([^)]+\)$").unwrap();
    if let Some(m) = archive.captures(&input.object) {
        return format!("*{}:*(.text .text.*)", &m[1]);
    }
    if input.object.ends_with(".rcgu.o") {
        let general = generalise(&input.name);
        let name = if names.get(&general) == Some(&1) { general } else { input.name.clone() };
        return format!("*({name})");
    }
    let file = Path::new(&input.object).file_name().unwrap().to_string_lossy().into_owned();
    format!("*{file}({})", input.name)
}

/// The static binary, started and answering `initialize`, under `perf` when `traced`.
struct Run {
    child: Child,
    pid: u32,
    trace: Option<std::path::PathBuf>,
}

fn start(bin: &Path, traced: bool, configured: bool) -> Run {
    let home = std::env::temp_dir().join("iac-code-bench-layout");
    std::fs::create_dir_all(&home).unwrap();
    let trace = traced.then(|| home.join("faults.perf"));
    let mut cmd = match &trace {
        Some(data) => {
            let mut cmd = Command::new("perf");
            cmd.args(["record", "-q", "-e", "exceptions:page_fault_user"]);
            cmd.args(["-e", "syscalls:sys_enter_write", "-o"]);
            cmd.arg(data).arg("--").arg(bin);
            cmd
        }
        None => Command::new(bin),
    };
    cmd.arg("acp").env_clear().env("HOME", &home).env("IAC_CODE_LOG", "warn");
    if configured {
        cmd.env("IAC_CODE_BASE_URL", "http://127.0.0.1:9/v1").env("IAC_CODE_MODEL", "m");
    }
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let line = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
    writeln!(child.stdin.as_mut().unwrap(), "{line}").unwrap();
    let mut answer = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut answer).unwrap();
    assert!(answer.contains("\"result\""), "initialize failed: {answer}");
    let pid = if traced {
        // perf's child is the binary.
        let children = format!("/proc/{0}/task/{0}/children", child.id());
        let text = std::fs::read_to_string(children).unwrap();
        text.split_whitespace().next().expect("perf's child").parse().unwrap()
    } else {
        child.id()
    };
    Run { child, pid, trace }
}

impl Run {
    /// Where the binary's image starts, and its executable mapping.
    fn image(&self) -> (u64, (u64, u64)) {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid)).unwrap();
        let (mut base, mut exec) = (None, (0, 0));
        for line in maps.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || !f[5].ends_with("iac-code") {
                continue;
            }
            let (lo, hi) = f[0].split_once('-').unwrap();
            let range =
                (u64::from_str_radix(lo, 16).unwrap(), u64::from_str_radix(hi, 16).unwrap());
            if f[2].trim_start_matches('0').is_empty() {
                base.get_or_insert(range.0);
            }
            if f[1].contains('x') {
                exec = range;
            }
        }
        (base.expect("the binary's mapping"), exec)
    }

    /// The resident pages of `range`, from `/proc/<pid>/pagemap` (bit 63: present).
    fn resident(&self, range: (u64, u64)) -> Vec<u64> {
        let mut pagemap = std::fs::File::open(format!("/proc/{}/pagemap", self.pid)).unwrap();
        pagemap.seek(SeekFrom::Start(range.0 / PAGE * 8)).unwrap();
        let mut raw = vec![0u8; ((range.1 - range.0) / PAGE * 8) as usize];
        pagemap.read_exact(&mut raw).unwrap();
        raw.chunks(8)
            .enumerate()
            .filter(|(_, e)| u64::from_le_bytes((*e).try_into().unwrap()) >> 63 == 1)
            .map(|(i, _)| range.0 + i as u64 * PAGE)
            .collect()
    }

    fn vm_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Ends the run; with a trace, the image offsets of the instruction fetches that
    /// faulted before the answer to `initialize` was written, in order.
    fn finish(mut self, base: u64, exec: (u64, u64)) -> Vec<u64> {
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
        let Some(data) = self.trace else { return Vec::new() };
        let out = Command::new("perf").args(["script", "-F", "trace", "-i"]).arg(&data).output();
        let out = out.unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |line: &str, key: &str| {
            line.split_whitespace().find_map(|w| w.strip_prefix(key)).and_then(hex)
        };
        let mut fetches = Vec::new();
        for line in text.lines() {
            // The first write to anything but stderr (logs) is the answer; what runs after
            // it (the shutdown at the end of input) is not start-up.
            if line.contains("fd: ") && !line.contains("fd: 0x00000002") {
                break;
            }
            // Bit 4 of the error code: an instruction fetch.
            if let (Some(addr), Some(code)) = (field(line, "address="), field(line, "error_code="))
                && code & 0x10 != 0
                && addr >= exec.0
                && addr < exec.1
            {
                fetches.push(addr - base);
            }
        }
        fetches
    }
}

/// Whether `perf` can record the tracepoints here (it needs the events and, usually, root
/// or `kernel.perf_event_paranoid` <= 1).
fn perf_works() -> bool {
    let data = std::env::temp_dir().join("iac-code-bench-layout-probe.perf");
    let mut probe = Command::new("perf");
    probe.args(["record", "-q", "-e", "exceptions:page_fault_user"]);
    probe.args(["-e", "syscalls:sys_enter_write", "-o"]).arg(&data).args(["--", "true"]);
    let works = probe.stdout(Stdio::null()).stderr(Stdio::null()).status();
    let _ = std::fs::remove_file(&data);
    works.is_ok_and(|s| s.success())
}

/// What one start of the binary showed.
struct Look {
    rss_kib: u64,
    inside: u64,
    outside: u64,
    faults: usize,
    /// The inputs outside the start-up section that start-up ran, in order.
    strays: Vec<usize>,
}

/// One start of the binary, with a provider configured or without one (start-up then
/// logs a warning, another path): what is resident after `initialize` and (traced) where
/// start-up ran outside the start-up section.
fn look(map: &LinkMap, traced: bool, configured: bool) -> Look {
    let bin = Path::new(ROOT).join(BIN);
    let run = start(&bin, traced, configured);
    let (base, exec) = run.image();
    let pages = run.resident(exec);
    let rss_kib = run.vm_rss_kib();
    let inside = pages.iter().filter(|&&p| map.in_start(p - base)).count() as u64;
    let outside = pages.len() as u64 - inside;
    let faults = run.finish(base, exec);
    let mut strays = Vec::new();
    for off in &faults {
        if map.in_start(*off) {
            continue;
        }
        if let Some(i) = map.input_at(*off)
            && !strays.contains(&i)
        {
            strays.push(i);
        }
    }
    Look { rss_kib, inside, outside, faults: faults.len(), strays }
}

fn report(map: &LinkMap, traced: bool) {
    let kib = |pages: u64| (pages * PAGE / 1024) as f64;
    for configured in [true, false] {
        let seen = look(map, traced, configured);
        let label = if configured { "provider set" } else { "no provider" };
        println!(
            "[{label}] after initialize: VmRSS {} KiB; code resident {} KiB ({} KiB in {SECTION}, {} KiB outside); {SECTION} is {} KiB",
            seen.rss_kib,
            kib(seen.inside + seen.outside),
            kib(seen.inside),
            kib(seen.outside),
            map.start.1 / 1024
        );
        summary::info(&format!("[{label}] idle RSS after initialize"), seen.rss_kib as f64, "KiB");
        let resident = kib(seen.inside + seen.outside);
        summary::info(&format!("[{label}] code resident after initialize"), resident, "KiB");
        summary::info(&format!("[{label}]   outside {SECTION}"), kib(seen.outside), "KiB");
        if traced {
            let strays = &seen.strays;
            println!(
                "[{label}] instruction-fetch faults: {} ({} outside {SECTION})",
                seen.faults,
                strays.len()
            );
            for &i in strays.iter().take(20) {
                println!("  outside: {}", map.inputs[i].name);
            }
            summary::at_most(
                &format!("[{label}] start-up functions found outside {SECTION}"),
                strays.len() as f64,
                4.0,
                "",
            );
        }
    }
    summary::info(&format!("{SECTION} size"), (map.start.1 / 1024) as f64, "KiB");
}

fn read_patterns(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('*') && l.ends_with(')'))
        .map(String::from)
        .collect()
}

fn write_script(path: &Path, patterns: &[String]) {
    let mut text = String::from(
        "/* Start-up code first: the functions that start-up and `initialize` run, gathered\n   \
         ahead of .text so that they share a few 64 KiB windows (the kernel maps code around\n   \
         each page touched). Used for the static release link (build.rs). Generated, in\n   \
         the order first run, by `BENCH_RELAYOUT=1 cargo bench --bench layout`; a pattern\n   \
         that matches nothing is harmless, and the bench says when start-up runs code\n   \
         outside this section. */\n\
         SECTIONS\n{\n  .text.iac_start :\n  {\n",
    );
    for p in patterns {
        text.push_str("    ");
        text.push_str(p);
        text.push('\n');
    }
    text.push_str("  }\n}\nINSERT BEFORE .text;\n");
    std::fs::write(path, text).unwrap();
}

fn build() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--target", "x86_64-unknown-linux-musl", "--bin", "iac-code"])
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(status.success(), "the static build failed");
}

fn relayout() {
    let script = Path::new(ROOT).join(SCRIPT);
    for round in 1..=15 {
        build();
        let map = read_map(&Path::new(ROOT).join(MAP));
        let mut names = HashMap::new();
        for input in &map.inputs {
            *names.entry(generalise(&input.name)).or_insert(0) += 1;
        }
        let old = read_patterns(&script);
        let kept: Vec<String> = old.iter().filter(|p| map.matched.contains(*p)).cloned().collect();
        let mut added = Vec::new();
        for _ in 0..3 {
            let configured = [true, false].into_iter();
            for i in configured.flat_map(|c| look(&map, true, c).strays) {
                let p = pattern(&map.inputs[i], &names);
                if !kept.contains(&p) && !added.contains(&p) {
                    added.push(p);
                }
            }
        }
        println!(
            "round {round}: kept {} patterns, dropped {}, added {}",
            kept.len(),
            old.len() - kept.len(),
            added.len()
        );
        if added.is_empty() && kept.len() == old.len() {
            return;
        }
        write_script(&script, &[kept, added].concat());
    }
    println!("still finding start-up code outside {SECTION} after 15 rounds");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench --bench layout` to measure");
        return;
    }
    let traced = perf_works();
    if !traced {
        println!(
            "perf cannot record exceptions:page_fault_user here (Debian: linux-perf; root or kernel.perf_event_paranoid <= 1): resident pages only"
        );
    }
    if std::env::var_os("BENCH_RELAYOUT").is_some() {
        assert!(traced, "BENCH_RELAYOUT needs perf");
        relayout();
    }
    let (bin, map) = (Path::new(ROOT).join(BIN), Path::new(ROOT).join(MAP));
    if !bin.exists() || !map.exists() {
        println!(
            "no static binary and linker map: cargo build --release --target x86_64-unknown-linux-musl"
        );
        return;
    }
    report(&read_map(&map), traced);
    summary::print("layout");
}
