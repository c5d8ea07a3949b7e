//! A session's vault kept for load and resume: `<config dir>/vaults/<session id>` (0600, in
//! a 0700 directory), its values and placeholders sealed with ChaCha20-Poly1305 under a key
//! derived from this node's session key (`seal.rs`), the session id as associated data.
//! Written at the end of every turn. A node without the file or the key (another node, a
//! moved config dir) cannot open it: the session's earlier placeholders stay unknown, which
//! the log says when the session opens and the model is told when it uses one.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use super::id::SessionId;
use super::seal::Seal;
use crate::secret::Vault;

/// The directory of kept vaults in the config dir.
const DIR: &str = "vaults";
/// What the sealing key is derived for.
const LABEL: &[u8] = b"iac-code session vault v1";

fn path(config_dir: &Path, id: &SessionId) -> PathBuf {
    config_dir.join(DIR).join(id.as_str())
}

fn key(config_dir: &Path) -> Option<LessSafeKey> {
    let bytes = Seal::new(config_dir).derive(LABEL)?;
    UnboundKey::new(&CHACHA20_POLY1305, &bytes).ok().map(LessSafeKey::new)
}

/// Keeps `vault` for session `id` (nothing when it is empty); failures are logged.
pub(super) fn save(config_dir: &Path, id: &SessionId, vault: &Vault) {
    if !vault.on() || vault.is_empty() {
        return;
    }
    if let Err(why) = try_save(config_dir, id, vault) {
        log::warn!("session {id}: its placeholders are not kept for load and resume: {why}");
    }
}

fn try_save(config_dir: &Path, id: &SessionId, vault: &Vault) -> Result<(), String> {
    let key = key(config_dir).ok_or("no session key")?;
    let mut plain = serde_json::to_vec(&vault.entries()).map_err(|e| e.to_string())?;
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new().fill(&mut nonce).map_err(|_| "no random bytes")?;
    let aad = Aad::from(id.as_str().as_bytes());
    key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), aad, &mut plain)
        .map_err(|_| "sealing failed")?;
    let dir = config_dir.join(DIR);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| e.to_string())?;
    let target = path(config_dir, id);
    let temp = dir.join(format!(".{}.tmp", id.as_str()));
    let mut file = crate::sys::own_file::options()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|e| e.to_string())?;
    file.write_all(&nonce).and_then(|()| file.write_all(&plain)).map_err(|e| e.to_string())?;
    std::fs::rename(&temp, &target).map_err(|e| e.to_string())
}

/// Takes back what was kept for session `id` into `vault`; says plainly when it cannot.
pub(super) fn load(config_dir: &Path, id: &SessionId, vault: &Vault) {
    let file = path(config_dir, id);
    let Ok(bytes) = std::fs::read(&file) else {
        log::info!(
            "session {id}: no kept placeholders on this node; those of its earlier turns \
             cannot be restored"
        );
        return;
    };
    let opened = key(config_dir).and_then(|key| {
        let (nonce, sealed) = bytes.split_at_checked(NONCE_LEN)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let aad = Aad::from(id.as_str().as_bytes());
        let plain = key.open_in_place(nonce, aad, &mut sealed).ok()?;
        serde_json::from_slice::<Vec<[String; 3]>>(plain).ok()
    });
    match opened {
        Some(entries) => vault.restore_entries(entries),
        None => log::warn!(
            "session {id}: its kept placeholders are sealed with another node's key (or \
             damaged): those of its earlier turns cannot be restored"
        ),
    }
}

/// Forgets what was kept for session `id`.
pub(super) fn remove(config_dir: &Path, id: &SessionId) {
    let _ = std::fs::remove_file(path(config_dir, id));
}
