//! Project memory: what the agent keeps between sessions about a project (durable facts,
//! the user's preferences, their feedback, where things live), per project under the config
//! dir (`store.rs`, I/O), with a `MEMORY.md` index (`index.rs`, pure) whose head goes into
//! the system prompt. Memory never holds secrets (`crate::secret`).

mod index;
mod store;

use std::path::Path;

pub use index::{Kind, for_prompt};
pub use store::{INDEX, MAX_CONTENT, Store, Topic, Written, check, check_name, project_root};

/// The system prompt's "# Memory" section for the project of `cwd`: how to use memory, and
/// the head of its index. `None` when nothing was remembered yet (or the index cannot be
/// read, which is logged).
pub fn prompt_section(config_dir: &Path, cwd: &Path) -> Option<String> {
    let store = Store::of(config_dir, cwd);
    let index = match store.index() {
        Ok(index) => index?,
        Err(err) => {
            log::warn!("memory index not read: {err}");
            return None;
        }
    };
    let body = for_prompt(index.strip_prefix(index::HEADER).unwrap_or(&index).trim_start());
    if body.trim().is_empty() {
        return None;
    }
    Some(format!(
        "\n# Memory\n\
         What you remembered about this project in earlier sessions (MEMORY.md). Read a \
         topic with read_memory(name) before you rely on it; save with write_memory what \
         will still matter next time: durable facts about the project, the user's \
         preferences, their feedback on your work. Never save secrets.\n\n{body}"
    ))
}
