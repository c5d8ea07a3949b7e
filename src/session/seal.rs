//! The seal on a journal's mode records: whether this node's user put a session in a mode.
//! A store seals every mode record it appends with an HMAC-SHA256 over the session id, the
//! record's position in the journal and the mode, keyed by `<config dir>/session-key`
//! (32 random bytes in hex, created 0600 on first use, never a link, never readable by
//! others). A mode record from elsewhere (an import, a migrated copy, another tenant of a
//! shared Redis) carries no seal this key verifies, so it widens nothing when the session
//! is loaded (`Rebuilt::apply_line`). Nodes that should restore each other's modes share
//! the key file.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ring::hmac;

use super::id::SessionId;
use crate::sys::own_file;

/// The key's file in the config dir.
pub const KEY_FILE: &str = "session-key";

/// This node's sealing key, read (or made) when first needed.
#[derive(Debug, Default)]
pub struct Seal {
    /// The config dir; `None`: nothing is sealed and no seal verifies.
    dir: Option<PathBuf>,
    key: OnceLock<Option<hmac::Key>>,
}

impl Seal {
    /// The seal of the user whose config dir is `config_dir`.
    pub fn new(config_dir: &Path) -> Seal {
        Seal { dir: Some(config_dir.to_path_buf()), key: OnceLock::new() }
    }

    /// A seal that seals nothing and verifies nothing (no mode that widens is restored).
    pub fn none() -> Seal {
        Seal::default()
    }

    fn key(&self) -> Option<&hmac::Key> {
        self.key
            .get_or_init(|| {
                let dir = self.dir.as_deref()?;
                match load_or_make(dir) {
                    Ok(key) => Some(key),
                    Err(why) => {
                        log::warn!(
                            "{}: {why}; modes are not sealed, so a loaded session starts in \
                             default or plan",
                            dir.join(KEY_FILE).display()
                        );
                        None
                    }
                }
            })
            .as_ref()
    }

    /// A 32-byte key for `label` derived from this node's key (HMAC-SHA256 of the label),
    /// `None` without a usable key.
    pub fn derive(&self, label: &[u8]) -> Option<[u8; 32]> {
        let tag = hmac::sign(self.key()?, label);
        tag.as_ref().try_into().ok()
    }

    /// The seal of `mode` as the record at `index` of session `id`'s journal (hex), or
    /// `None` without a usable key.
    pub fn sign(&self, id: &SessionId, index: u64, mode: &str) -> Option<String> {
        let tag = hmac::sign(self.key()?, &message(id, index, mode));
        Some(tag.as_ref().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Whether `tag` is this key's seal of `mode` at `index` of session `id`'s journal.
    pub fn verify(&self, id: &SessionId, index: u64, mode: &str, tag: &str) -> bool {
        let (Some(key), Some(tag)) = (self.key(), hex(tag)) else { return false };
        hmac::verify(key, &message(id, index, mode), &tag).is_ok()
    }
}

/// What a seal covers; every field but the last has a fixed form, so no two differ.
fn message(id: &SessionId, index: u64, mode: &str) -> Vec<u8> {
    format!("iac-code mode record v1\0{id}\0{index}\0{mode}").into_bytes()
}

fn hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// Reads the key file, or makes it when there is none (another process making it at the
/// same time wins or loses whole: the file appears only once written).
fn load_or_make(dir: &Path) -> Result<hmac::Key, String> {
    let path = dir.join(KEY_FILE);
    if let Some(key) = read(&path)? {
        return Ok(key);
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| "no random bytes for a new key".to_string())?;
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = dir.join(format!(".{KEY_FILE}.{}", std::process::id()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(format!("{text}\n").as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::hard_link(&tmp, &path));
    let _ = std::fs::remove_file(&tmp);
    match made {
        Ok(()) => Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            read(&path)?.ok_or_else(|| "it vanished while it was made".to_string())
        }
        Err(err) => Err(format!("cannot create it: {err}")),
    }
}

/// The key in `path`: `None` if there is no such file; an error if it is a link, not a
/// regular file of ours, readable or writable by others, or not 64 hex digits.
fn read(path: &Path) -> Result<Option<hmac::Key>, String> {
    let file = match own_file::options().read(true).open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) if own_file::is_link(&err) => {
            return Err("it is a symbolic link; refusing to use it".into());
        }
        Err(err) => return Err(format!("cannot read it: {err}")),
    };
    let meta = file.metadata().map_err(|err| format!("cannot read it: {err}"))?;
    if !meta.is_file() || meta.uid() != crate::sys::effective_uid() {
        return Err("it is not a regular file of this user; refusing to use it".into());
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "other users may use it (mode {:o}); refusing it: chmod 600 it",
            meta.mode() & 0o777
        ));
    }
    let mut text = String::new();
    file.take(256).read_to_string(&mut text).map_err(|err| format!("cannot read it: {err}"))?;
    match hex(text.trim()) {
        Some(bytes) if bytes.len() == 32 => Ok(Some(hmac::Key::new(hmac::HMAC_SHA256, &bytes))),
        _ => Err("it does not hold a key (64 hex digits)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_verifies_only_for_its_key_session_place_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("iac-seal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (one, two) = (Seal::new(&dir.join("a")), Seal::new(&dir.join("b")));
        let id = SessionId::random();
        let tag = one.sign(&id, 3, "bypass_permissions").unwrap();
        let mode = std::fs::metadata(dir.join("a").join(KEY_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "made 0600");
        assert!(one.verify(&id, 3, "bypass_permissions", &tag));
        assert!(Seal::new(&dir.join("a")).verify(&id, 3, "bypass_permissions", &tag), "kept");
        assert!(!two.verify(&id, 3, "bypass_permissions", &tag), "another user's key");
        assert!(!one.verify(&SessionId::random(), 3, "bypass_permissions", &tag), "session");
        assert!(!one.verify(&id, 4, "bypass_permissions", &tag), "another place");
        assert!(!one.verify(&id, 3, "accept_edits", &tag), "another mode");
        assert!(!one.verify(&id, 3, "bypass_permissions", "zz"), "garbage");
        assert!(!Seal::none().verify(&id, 3, "bypass_permissions", &tag));
        assert_eq!(Seal::none().sign(&id, 3, "plan"), None);
        // A key others may read is no key.
        let path = dir.join("a").join(KEY_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(!Seal::new(&dir.join("a")).verify(&id, 3, "bypass_permissions", &tag));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
