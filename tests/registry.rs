//! The ACP registry entry in `deploy/registry/iac-code/`: `agent.json` valid against the
//! registry's schema and rules, agreeing with Cargo.toml and with what `deploy/release.sh`
//! writes; the icon 16×16 in `currentColor` and nothing else. The checks themselves are
//! shown to refuse broken entries and icons, so a pass means something.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::registry::{ENTRY, entry_problems, icon_problems};

fn entry() -> Value {
    let text = std::fs::read_to_string(format!("{ENTRY}/agent.json")).unwrap();
    serde_json::from_str(&text).expect("agent.json is JSON")
}

fn icon() -> String {
    std::fs::read_to_string(format!("{ENTRY}/icon.svg")).unwrap()
}

#[test]
fn the_entry_passes_the_registry_schema_and_rules() {
    let problems = entry_problems(&entry(), "iac-code");
    assert!(problems.is_empty(), "agent.json:\n{}", problems.join("\n"));
}

#[test]
fn the_entry_agrees_with_cargo_toml() {
    let entry = entry();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(entry["id"], env!("CARGO_PKG_NAME"));
    assert_eq!(entry["version"], version, "bump agent.json with deploy/release.sh");
    assert_eq!(entry["description"], env!("CARGO_PKG_DESCRIPTION"));
    assert_eq!(entry["license"], env!("CARGO_PKG_LICENSE"));
    assert_eq!(entry["repository"], env!("CARGO_PKG_REPOSITORY"));
    let binary = entry["distribution"]["binary"].as_object().unwrap();
    let mut platforms: Vec<&str> = binary.keys().map(String::as_str).collect();
    platforms.sort_unstable();
    assert_eq!(platforms, ["linux-aarch64", "linux-x86_64"]);
    for (platform, target) in binary {
        assert_eq!(target["cmd"], "./iac-code", "{platform}");
        assert_eq!(target["args"], json!(["acp"]), "{platform}");
        let url = target["archive"].as_str().unwrap();
        let file = format!("/v{version}/iac-code-{version}-{platform}.tar.gz");
        assert!(url.ends_with(&file), "{platform}: {url} does not end with {file}");
    }
}

/// The entry in the tree is what `deploy/release.sh` writes for this version: nobody edits
/// one without the other.
#[test]
fn the_entry_is_what_release_sh_writes() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/release.sh");
    let out =
        Command::new(script).arg("--manifest").env_remove("RELEASE_BASE_URL").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(format!("{ENTRY}/agent.json")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        written,
        "deploy/registry/iac-code/agent.json differs from `deploy/release.sh --manifest`"
    );

    // A base URL for the archives elsewhere is taken as given.
    let out = Command::new(script)
        .arg("--manifest")
        .env("RELEASE_BASE_URL", "https://downloads.example.com/iac-code/9.9.9/")
        .output()
        .unwrap();
    let moved: Value = serde_json::from_slice(&out.stdout).unwrap();
    let url = moved["distribution"]["binary"]["linux-x86_64"]["archive"].as_str().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        url,
        format!(
            "https://downloads.example.com/iac-code/9.9.9/iac-code-{version}-linux-x86_64.tar.gz"
        )
    );
}

#[test]
fn the_checks_refuse_broken_entries() {
    let good = entry();
    let broken = |change: &dyn Fn(&mut Value)| {
        let mut entry = good.clone();
        change(&mut entry);
        entry_problems(&entry, "iac-code")
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "platform key",
            broken(&|e| {
                let target = e["distribution"]["binary"]["linux-x86_64"].take();
                e["distribution"]["binary"]["linux-amd64"] = target;
                e["distribution"]["binary"].as_object_mut().unwrap().remove("linux-x86_64");
            }),
        ),
        (
            "no cmd",
            broken(&|e| {
                e["distribution"]["binary"]["linux-aarch64"].as_object_mut().unwrap().remove("cmd");
            }),
        ),
        ("bad id", broken(&|e| e["id"] = json!("IaC_Code"))),
        ("id not the folder", broken(&|e| e["id"] = json!("iac-coder"))),
        ("version", broken(&|e| e["version"] = json!("1.0"))),
        // A platform's target takes no other fields: the format has no place for a digest.
        (
            "sha256 in a target",
            broken(&|e| {
                e["distribution"]["binary"]["linux-x86_64"]["sha256"] = json!("00");
            }),
        ),
        ("distribution type", broken(&|e| e["distribution"]["docker"] = json!({}))),
        ("not a URL", broken(&|e| e["repository"] = json!("not a url"))),
        (
            "latest",
            broken(&|e| {
                e["distribution"]["binary"]["linux-x86_64"]["archive"] =
                    json!("https://example.com/releases/latest/download/iac-code.tar.gz");
            }),
        ),
        (
            "another version",
            broken(&|e| {
                e["distribution"]["binary"]["linux-x86_64"]["archive"] =
                    json!("https://example.com/releases/download/v0.0.9/iac-code.tar.gz");
            }),
        ),
    ];
    for (what, problems) in cases {
        assert!(!problems.is_empty(), "a broken entry ({what}) passed");
    }
}

#[test]
fn the_icon_is_16_by_16_in_current_color() {
    let svg = icon();
    let problems = icon_problems(&svg);
    assert!(problems.is_empty(), "icon.svg:\n{}", problems.join("\n"));
    assert!(svg.len() < 1024, "icon.svg is {} bytes", svg.len());
}

#[test]
fn the_icon_checks_refuse_broken_icons() {
    let svg = icon();
    let cases = [
        ("a colour", svg.replacen("stroke=\"currentColor\"", "stroke=\"#1a7f37\"", 1)),
        ("a style", svg.replacen("<path ", "<path style=\"fill:red\" ", 1)),
        ("24 wide", svg.replace("viewBox=\"0 0 16 16\"", "viewBox=\"0 0 24 24\"")),
        ("not square", svg.replace("height=\"16\"", "height=\"12\"")),
        ("no currentColor", svg.replace("currentColor", "none")),
        (
            "an image",
            svg.replacen("<path ", "<image href=\"https://example.com/a.png\"/><path ", 1),
        ),
        ("a script", svg.replacen("<path ", "<script>alert(1)</script><path ", 1)),
        ("unclosed", svg.replacen("/>", ">", 1)),
        ("unquoted", svg.replacen("width=\"16\"", "width=16", 1)),
    ];
    for (what, broken) in cases {
        assert_ne!(broken, svg, "{what}: the change did not apply");
        assert!(!icon_problems(&broken).is_empty(), "a broken icon ({what}) passed");
    }
}
