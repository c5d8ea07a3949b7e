//! The memory store on a real file system: layout, modes, atomic writes, names, links.

use std::os::unix::fs::PermissionsExt;

use super::*;

fn scratch(name: &str) -> (PathBuf, PathBuf, Store) {
    let dir = std::env::temp_dir().join(format!("iac-memory-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let project = dir.join("infra-live");
    std::fs::create_dir_all(project.join(".git")).expect("test I/O");
    std::fs::create_dir_all(project.join("envs/prod")).expect("test I/O");
    let config = dir.join("config");
    let store = Store::of(&config, &project.join("envs/prod"));
    (dir, project, store)
}

fn topic(name: &str, content: &str) -> Topic {
    Topic {
        name: name.to_string(),
        kind: Kind::Project,
        description: "where the state lives".to_string(),
        content: content.to_string(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("test I/O").permissions().mode() & 0o777
}

#[test]
fn memory_is_keyed_by_the_repository_root() {
    let (dir, project, store) = scratch("key");
    assert_eq!(project_root(&project.join("envs/prod")), project);
    let key = store.dir().file_name().expect("a name").to_string_lossy().into_owned();
    assert!(key.starts_with("infra-live-") && key.len() == "infra-live-".len() + 16, "{key}");
    assert!(key["infra-live-".len()..].chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(store.dir(), Store::of(&dir.join("config"), &project).dir(), "same project");
    assert_ne!(store.dir(), Store::of(&dir.join("config"), &dir).dir(), "another root");
    assert!(key_of(Path::new("/")).starts_with("root-"));
    assert!(key_of(Path::new("/srv/My Infra!!")).starts_with("my-infra-"));
    std::fs::remove_dir_all(&dir).expect("test I/O");
}

#[test]
fn a_write_is_atomic_private_and_indexed() {
    let (dir, _, store) = scratch("write");
    assert!(store.index().expect("test I/O").is_none(), "nothing yet");
    let first = store
        .write(&topic("state", "S3 bucket acme-tfstate, lock table tf-locks."))
        .expect("test I/O");
    assert!(first.old.is_none());
    assert_eq!(first.path, store.dir().join("state.md"));
    let text = std::fs::read_to_string(&first.path).expect("test I/O");
    assert!(
        text.starts_with(
            "---\nname: state\ndescription: where the state lives\ntype: project\n---\n"
        )
    );
    assert!(text.ends_with("lock table tf-locks.\n"));
    assert_eq!(store.topic("state").expect("test I/O").as_deref(), Some(text.as_str()));
    let index = store.index().expect("readable").expect("an index");
    assert_eq!(index, "# Memory\n\n- [state](state.md) (project): where the state lives\n");
    store.write(&topic("style", "for_each over count")).expect("test I/O");
    let mut again = topic("state", "Moved to GCS bucket acme-state.");
    again.kind = Kind::Reference;
    again.description = "state moved".to_string();
    let second = store.write(&again).expect("test I/O");
    assert_eq!(second.old.as_deref(), Some(text.as_str()));
    let index = store.index().expect("readable").expect("an index");
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines[2], "- [state](state.md) (reference): state moved", "{index}");
    assert_eq!(lines.len(), 4, "{index}");
    // Private, and no temp file left behind.
    assert_eq!(mode(&dir.join("config/memory")), 0o700);
    assert_eq!(mode(&store.dir()), 0o700);
    let mut names: Vec<String> = std::fs::read_dir(store.dir())
        .expect("test I/O")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".lock", "MEMORY.md", "state.md", "style.md"]);
    for name in &names {
        assert_eq!(mode(&store.dir().join(name)), 0o600, "{name}");
    }
    std::fs::remove_dir_all(&dir).expect("test I/O");
}

#[test]
fn names_are_checked_and_paths_refused() {
    for good in ["a", "vpc", "0day", "terraform_state-2", &"x".repeat(64)] {
        assert!(check_name(good).is_ok(), "{good}");
    }
    for bad in ["", "../x", "a/b", "x.md", "MEMORY", "-x", "_x", "Vpc", "a b", &"x".repeat(65)] {
        assert!(check_name(bad).is_err(), "{bad}");
    }
    let (dir, _, store) = scratch("names");
    let err = store.write(&topic("../x", "escape")).unwrap_err().to_string();
    assert!(err.contains("invalid memory name"), "{err}");
    assert!(store.topic("../../etc/passwd").is_err());
    assert!(!dir.join("config").exists(), "nothing made for a refused write");
    assert!(!dir.join("x").exists() && !dir.join("config/memory/x.md").exists());
    std::fs::remove_dir_all(&dir).expect("test I/O");
}

#[test]
fn refused_content_writes_nothing() {
    let (dir, _, store) = scratch("refused");
    let cases = [
        topic("creds", "aws_access_key_id = AKIAZ7QW4N2KX5RT3HVB"),
        topic("empty", "  \n"),
        topic("huge", &"x".repeat(MAX_CONTENT + 1)),
        Topic { description: " \n ".to_string(), ..topic("nodesc", "text") },
    ];
    for case in &cases {
        assert!(store.write(case).is_err(), "{}", case.name);
    }
    let err = store.write(&cases[0]).unwrap_err().to_string();
    assert!(err.contains("AWS access key id") && !err.contains("AKIAZ7QW4N2KX5RT3HVB"), "{err}");
    assert!(!dir.join("config").exists(), "nothing on disk");
    std::fs::remove_dir_all(&dir).expect("test I/O");
}

#[test]
fn symlinks_are_never_followed() {
    let (dir, _, store) = scratch("links");
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).expect("test I/O");
    std::fs::write(outside.join("secret.txt"), "keep me").expect("test I/O");
    // The project's memory directory is a link elsewhere: neither read nor written.
    std::fs::create_dir_all(dir.join("config/memory")).expect("test I/O");
    std::os::unix::fs::symlink(&outside, store.dir()).expect("test I/O");
    let err = store.write(&topic("state", "x")).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert!(store.index().is_err());
    assert_eq!(
        std::fs::read_dir(&outside).expect("test I/O").count(),
        1,
        "nothing written through it"
    );
    // A topic file that is a link: never read, never written through.
    std::fs::remove_file(store.dir()).expect("test I/O");
    store.write(&topic("other", "x")).expect("test I/O");
    std::os::unix::fs::symlink(outside.join("secret.txt"), store.dir().join("state.md"))
        .expect("test I/O");
    assert!(store.topic("state").is_err());
    assert!(store.write(&topic("state", "y")).is_err());
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).expect("test I/O"), "keep me");
    // An index that is a link: the same.
    std::fs::remove_file(store.dir().join("state.md")).expect("test I/O");
    std::fs::remove_file(store.dir().join(INDEX)).expect("test I/O");
    std::os::unix::fs::symlink(outside.join("secret.txt"), store.dir().join(INDEX))
        .expect("test I/O");
    assert!(store.index().is_err());
    assert!(store.write(&topic("third", "z")).is_err());
    assert!(!store.dir().join("third.md").exists(), "nothing written when the index is a link");
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).expect("test I/O"), "keep me");
    std::fs::remove_dir_all(&dir).expect("test I/O");
}
