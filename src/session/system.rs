//! A session's prompt prefix, frozen: the system prompt is built once (dated with the
//! session's creation date, so that loading the session again builds the same bytes while
//! the project's files are unchanged), kept on the `Session`, and built again only for a
//! reason that is logged (the model or the MCP tools it names changed, or the skills in
//! its catalog). The tool definitions a request offers are watched
//! the same way: a change (MCP tools added or gone, `exit_plan_mode` with the mode) is
//! where the provider's prompt cache starts again, and the log says so.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::Session;
use crate::provider::ToolDef;
use crate::sync::lock;

/// What a session's requests start with.
#[derive(Debug, Default)]
pub(super) struct Prefix {
    /// The system prompt and what it was built for.
    frozen: Option<Frozen>,
    /// The tools the last request offered: a fingerprint of their definitions, and names.
    offered: Option<(u64, Vec<String>)>,
}

impl Prefix {
    /// Forgets the frozen system prompt: the next turn builds it again (the caller logs
    /// why).
    pub(super) fn thaw(&mut self) {
        self.frozen = None;
    }
}

#[derive(Debug)]
struct Frozen {
    prompt: Arc<str>,
    model: String,
    tools: Vec<String>,
    catalog: String,
}

impl Session {
    /// The system prompt for a turn of `model` offering `tools`, with the skills'
    /// `catalog`: the one built before, or `build(date)` when there is none yet, or when
    /// the model, the tools it names or the catalog changed (logged).
    pub(super) fn system_prompt(
        &self,
        model: &str,
        tools: &[&str],
        catalog: &str,
        build: impl FnOnce(&str) -> String,
    ) -> Arc<str> {
        let mut prefix = lock(&self.prefix);
        if let Some(frozen) = &prefix.frozen {
            let why = if frozen.model != model {
                "the model changed"
            } else if frozen.tools != tools {
                "the MCP tools changed"
            } else if frozen.catalog != catalog {
                "the skills changed"
            } else {
                return Arc::clone(&frozen.prompt);
            };
            log::info!("session {}: system prompt built again: {why}", self.id);
        }
        let prompt: Arc<str> = build(&self.date()).into();
        let tools = tools.iter().map(|t| t.to_string()).collect();
        let (model, catalog) = (model.to_string(), catalog.to_string());
        prefix.frozen = Some(Frozen { prompt: Arc::clone(&prompt), model, tools, catalog });
        prompt
    }

    /// The date the system prompt says: the session's creation date (YYYY-MM-DD).
    fn date(&self) -> String {
        let created = self.journal.meta().created_at;
        match created.get(..10) {
            Some(day) if is_date(day) => day.to_string(),
            _ => crate::time::today(),
        }
    }

    /// Notes the tools a request offers; a change from the previous request is logged
    /// with its reason.
    pub(super) fn watch_tools(&self, tools: &[ToolDef]) {
        let mut hasher = DefaultHasher::new();
        for tool in tools {
            (&tool.name, &tool.description, tool.parameters.to_string()).hash(&mut hasher);
        }
        let print = hasher.finish();
        let mut prefix = lock(&self.prefix);
        if let Some((before, names)) = &prefix.offered
            && *before != print
        {
            let now: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let plan = |n: &str| n == "exit_plan_mode";
            let only_mode = names
                .iter()
                .map(String::as_str)
                .filter(|n| !plan(n))
                .eq(now.iter().copied().filter(|n| !plan(n)));
            let why = if only_mode { "the mode changed" } else { "the MCP tools changed" };
            log::info!(
                "session {}: the tools offered changed ({why}): the prompt cache starts again",
                self.id
            );
        }
        prefix.offered = Some((print, tools.iter().map(|t| t.name.clone()).collect()));
    }
}

/// Whether `text` is a date `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    text.len() == 10
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
}

#[cfg(test)]
mod tests {
    use super::is_date;

    #[test]
    fn only_a_calendar_date_is_taken_from_the_creation_time() {
        assert!(is_date("2026-12-02"));
        assert!(!is_date("2026-12-0"));
        assert!(!is_date("20261202XX"));
    }
}
