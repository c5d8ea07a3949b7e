//! What a Terraform plan would do, from `terraform show -json <planfile>`: counts per
//! action, the addresses it deletes or replaces (and why), drift, and a Markdown rendering
//! for the permission question. Pure: no I/O. Attribute values are never read, so nothing
//! sensitive can reach the summary.

use serde_json::Value;

use crate::infra::Tier;

/// At most this many rows in each list of [`PlanSummary::render`].
const MAX_ROWS: usize = 50;
/// Longer strings (addresses, reasons, context lines) are cut to this many characters.
const MAX_CHARS: usize = 300;

/// The summary of one plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanSummary {
    /// Resources created (`["create"]`).
    pub add: usize,
    /// Resources updated in place (`["update"]`).
    pub change: usize,
    /// Resources destroyed and created again, in either order.
    pub replace: usize,
    /// Resources destroyed (`["delete"]`).
    pub destroy: usize,
    /// Resources imported (`change.importing`), whatever else happens to them.
    pub import: usize,
    /// Resources Terraform stops managing without destroying them (`["forget"]`).
    pub forget: usize,
    /// Data sources read during apply (their configuration was unknown at plan time).
    pub read: usize,
    /// Every address deleted or replaced, in plan order.
    pub removals: Vec<Removal>,
    /// Changes made outside Terraform: `address (actions in words)`.
    pub drift: Vec<String>,
    /// Root outputs whose value changes.
    pub outputs_changed: usize,
    /// Whether Terraform would apply this plan (false when it changes nothing).
    pub applyable: bool,
    /// Whether planning failed part-way: the plan is then incomplete.
    pub errored: bool,
    /// Terraform's version from the JSON.
    pub terraform_version: Option<String>,
}

/// One address the plan deletes or replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The resource instance's address (`module.db.aws_db_instance.main[0]`).
    pub address: String,
    /// `delete`, `replace (destroy before create)` or `replace (create before destroy)`.
    pub action: String,
    /// Terraform's `action_reason` in words; unknown reasons as written.
    pub reason: Option<String>,
    /// The address before a `moved` block, if it moved.
    pub previous_address: Option<String>,
}

/// Summarises the output of `terraform show -json <planfile>` (also OpenTofu's). Errors,
/// never panics, on anything that is not a plan of format 1.x.
pub fn summarise(show_json: &[u8]) -> Result<PlanSummary, String> {
    let doc: Value = serde_json::from_slice(show_json).map_err(|e| {
        format!("the plan is not JSON (expected `terraform show -json <planfile>`): {e}")
    })?;
    let Some(top) = doc.as_object() else {
        return Err("not a Terraform plan: the JSON is not an object".into());
    };
    let Some(format) = top.get("format_version").and_then(Value::as_str) else {
        return Err("not a Terraform plan: no format_version".into());
    };
    if format.split('.').next() != Some("1") {
        return Err(format!("unsupported plan format_version {format:?} (this reads 1.x)"));
    }
    if !top.get("planned_values").is_some_and(Value::is_object) {
        return Err(
            "not a Terraform plan: no planned_values (a state rather than a plan file?)".into()
        );
    }
    let mut s = PlanSummary {
        terraform_version: top.get("terraform_version").and_then(Value::as_str).map(str::to_string),
        errored: flag(top.get("errored"), "errored")?.unwrap_or(false),
        ..PlanSummary::default()
    };
    for (i, rc) in list(top.get("resource_changes"), "resource_changes")?.iter().enumerate() {
        count(&mut s, rc).map_err(|e| format!("resource_changes[{i}]: {e}"))?;
    }
    for (i, rc) in list(top.get("resource_drift"), "resource_drift")?.iter().enumerate() {
        let (address, actions) = entry(rc).map_err(|e| format!("resource_drift[{i}]: {e}"))?;
        if actions != ["no-op"] {
            s.drift.push(format!("{address} ({})", drift_words(&actions)));
        }
    }
    match top.get("output_changes") {
        None | Some(Value::Null) => {}
        Some(Value::Object(outputs)) => {
            for (name, change) in outputs {
                let actions = actions(change.get("actions"))
                    .map_err(|e| format!("output_changes.{name}: {e}"))?;
                if actions != ["no-op"] {
                    s.outputs_changed += 1;
                }
            }
        }
        Some(_) => return Err("output_changes is not an object".into()),
    }
    let changes = s.add + s.change + s.replace + s.destroy + s.import + s.forget;
    s.applyable = flag(top.get("applyable"), "applyable")?
        .unwrap_or(!s.errored && changes + s.outputs_changed > 0);
    Ok(s)
}

/// Adds one `resource_changes` entry to the counts.
fn count(s: &mut PlanSummary, rc: &Value) -> Result<(), String> {
    let (address, actions) = entry(rc)?;
    let change = rc.get("change").unwrap_or(&Value::Null);
    if rc.get("mode").and_then(Value::as_str) == Some("data") {
        if actions.iter().any(|a| a == "read") {
            s.read += 1;
        }
        return Ok(());
    }
    if change.get("importing").is_some_and(|v| !v.is_null()) {
        s.import += 1;
    }
    let removal = match actions.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["no-op"] => None,
        ["create"] => {
            s.add += 1;
            None
        }
        ["update"] => {
            s.change += 1;
            None
        }
        ["read"] => {
            s.read += 1;
            None
        }
        ["forget"] => {
            s.forget += 1;
            None
        }
        ["delete"] => {
            s.destroy += 1;
            Some("delete")
        }
        ["delete", "create"] => {
            s.replace += 1;
            Some("replace (destroy before create)")
        }
        ["create", "delete"] => {
            s.replace += 1;
            Some("replace (create before destroy)")
        }
        _ => return Err(format!("{address}: unknown actions {actions:?}")),
    };
    if let Some(action) = removal {
        let text = |key: &str| rc.get(key).and_then(Value::as_str).map(str::to_string);
        s.removals.push(Removal {
            address,
            action: action.into(),
            reason: text("action_reason").map(|r| reason_words(&r)),
            previous_address: text("previous_address"),
        });
    }
    Ok(())
}

/// An entry's address and `change.actions`.
fn entry(rc: &Value) -> Result<(String, Vec<String>), String> {
    let Some(address) = rc.get("address").and_then(Value::as_str) else {
        return Err("no address".into());
    };
    let actions = actions(rc.get("change").and_then(|c| c.get("actions")))
        .map_err(|e| format!("{address}: {e}"))?;
    Ok((address.to_string(), actions))
}

/// A list of action names.
fn actions(v: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(Value::Array(items)) = v else { return Err("no list of actions".into()) };
    let names: Option<Vec<String>> = items.iter().map(|a| a.as_str().map(str::to_string)).collect();
    match names {
        Some(names) if !names.is_empty() => Ok(names),
        _ => Err("actions are not a list of names".into()),
    }
}

/// A top-level list that may be missing (Terraform leaves empty lists out).
fn list<'a>(v: Option<&'a Value>, name: &str) -> Result<&'a [Value], String> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("{name} is not a list")),
    }
}

/// A boolean that may be missing.
fn flag(v: Option<&Value>, name: &str) -> Result<Option<bool>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("{name} is not a boolean")),
    }
}

/// Terraform's `action_reason` in words.
fn reason_words(reason: &str) -> String {
    match reason {
        "replace_because_tainted" => "tainted",
        "replace_because_cannot_update" => "cannot be updated in place",
        "replace_by_request" => "replacement requested",
        "replace_by_triggers" => "triggers changed",
        "delete_because_no_resource_config" => "no longer in configuration",
        "delete_because_wrong_repetition" => "count or for_each changed",
        "delete_because_count_index" => "count index removed",
        "delete_because_each_key" => "for_each key removed",
        "delete_because_no_module" => "module removed",
        "delete_because_no_move_target" => "moved to an address not in configuration",
        other => other,
    }
    .to_string()
}

/// What happened outside Terraform, from a drift entry's actions.
fn drift_words(actions: &[String]) -> String {
    match actions.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["update"] => "changed".into(),
        ["delete"] => "deleted".into(),
        ["create"] => "created".into(),
        ["delete", "create"] | ["create", "delete"] => "replaced".into(),
        _ => actions
            .iter()
            .map(|a| a.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect())
            .collect::<Vec<String>>()
            .join(", "),
    }
}

impl PlanSummary {
    /// The tier of applying this plan: `Destroy` if anything is destroyed or replaced
    /// (forgetting is not destroying), else `Mutate`.
    pub fn tier(&self) -> Tier {
        if self.destroy + self.replace > 0 { Tier::Destroy } else { Tier::Mutate }
    }

    /// `Plan: 1 to add, 0 to change, 1 to replace, 2 to destroy` (then imports and
    /// forgets when there are any), or `No changes.`
    pub fn headline(&self) -> String {
        if self.add + self.change + self.replace + self.destroy + self.import + self.forget == 0 {
            return "No changes.".into();
        }
        let mut line = format!(
            "Plan: {} to add, {} to change, {} to replace, {} to destroy",
            self.add, self.change, self.replace, self.destroy
        );
        if self.import > 0 {
            line.push_str(&format!(", {} to import", self.import));
        }
        if self.forget > 0 {
            line.push_str(&format!(", {} to forget", self.forget));
        }
        line
    }

    /// Markdown for the permission question: the headline, the caller's `context` lines
    /// (workspace, backend, …) as a list, a table of removals and a list of drift, each at
    /// most 50 rows. Only addresses, actions and reasons: never an attribute value.
    pub fn render(&self, context: &[String]) -> String {
        let mut out = format!("**{}**\n", self.headline());
        if self.errored {
            out.push_str("\n**Planning errored: this plan is incomplete.**\n");
        } else if !self.applyable {
            out.push_str("\nTerraform would not apply this plan.\n");
        }
        let mut extra = Vec::new();
        if self.outputs_changed > 0 {
            extra.push(format!("{} output value(s) change", self.outputs_changed));
        }
        if self.read > 0 {
            extra.push(format!("{} data source(s) read during apply", self.read));
        }
        if !extra.is_empty() {
            out.push_str(&format!("\n{}.\n", extra.join("; ")));
        }
        if !context.is_empty() {
            out.push('\n');
            let lines = context.iter().map(|c| format!("- {}\n", text(c)));
            bounded(&mut out, lines, context.len());
        }
        if !self.removals.is_empty() {
            out.push_str(
                "\nDestroyed or replaced:\n\n| address | action | why |\n| --- | --- | --- |\n",
            );
            let rows = self.removals.iter().map(|r| {
                let mut address = code(&r.address, true);
                if let Some(old) = &r.previous_address {
                    address.push_str(&format!(" (was {})", code(old, true)));
                }
                let why = r.reason.as_deref().map_or_else(|| "—".to_string(), text);
                format!("| {address} | {} | {why} |\n", text(&r.action))
            });
            bounded(&mut out, rows, self.removals.len());
        }
        if !self.drift.is_empty() {
            out.push_str("\nChanged outside Terraform:\n\n");
            let rows = self.drift.iter().map(|d| match d.rsplit_once(" (") {
                Some((address, words)) => format!("- {} ({}\n", code(address, false), text(words)),
                None => format!("- {}\n", text(d)),
            });
            bounded(&mut out, rows, self.drift.len());
        }
        out
    }
}

/// Appends at most [`MAX_ROWS`] of `rows`, then how many were left out.
fn bounded(out: &mut String, rows: impl Iterator<Item = String>, total: usize) {
    rows.take(MAX_ROWS).for_each(|r| out.push_str(&r));
    if total > MAX_ROWS {
        out.push_str(&format!("\n… and {} more\n", total - MAX_ROWS));
    }
}

/// `s` without control characters (line breaks and tabs become spaces), cut to
/// [`MAX_CHARS`] characters.
fn clean(s: &str) -> String {
    let mut out: String = s
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' => Some(' '),
            c if c.is_control() || invisible(c) => None,
            c => Some(c),
        })
        .take(MAX_CHARS + 1)
        .collect();
    if out.chars().count() > MAX_CHARS {
        out = out.chars().take(MAX_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// Zero-width and bidirectional formatting characters, which can disguise text.
fn invisible(c: char) -> bool {
    let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    bidi || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}')
}

/// Plain text safe in a table cell or a list item: cleaned, Markdown punctuation escaped.
fn text(s: &str) -> String {
    let mut out = String::new();
    for c in clean(s).chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '!' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span holding `s` (cleaned), fenced with more backticks than it contains; in a
/// table cell (`cell`) its `|` are escaped, which GitHub-flavoured Markdown requires even
/// inside code. A backslash there could undo that escape, so such a cell is plain text.
fn code(s: &str, cell: bool) -> String {
    if cell && s.contains('\\') {
        return text(s);
    }
    let s = clean(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() { " " } else { "" };
    let body = if cell { s.replace('|', "\\|") } else { s };
    format!("{fence}{pad}{body}{pad}{fence}")
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
