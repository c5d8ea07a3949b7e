//! The agent's questions: a permission (its options on single keys) and an `ask_user`
//! form. A destroy-tier question stands out in colour and words ("destroys or replaces
//! infrastructure"), shows its plan summary, offers no "always", and has Reject selected:
//! Enter alone never approves a destroy.

use ratatui::text::{Line, Span};
use serde_json::{Map, Value, json};

use super::markdown::Stream;
use super::theme::{Role, Theme};

/// One option of a permission question.
#[derive(Debug, Clone)]
pub struct Choice {
    pub id: String,
    pub name: String,
    pub kind: String,
    /// The key that picks it.
    pub key: char,
}

/// A `session/request_permission` waiting for an answer.
#[derive(Debug, Clone)]
pub struct Question {
    pub id: Value,
    pub title: String,
    pub destroy: bool,
    pub content: Vec<String>,
    pub choices: Vec<Choice>,
    /// The option Enter picks.
    pub selected: usize,
    /// A destroy's allow was chosen once: only the same choice again approves it (a `y`
    /// typed ahead into a question that just appeared never destroys).
    pub confirming: bool,
}

impl Question {
    pub fn new(id: Value, params: &Value) -> Question {
        let call = &params["toolCall"];
        let title = call["title"].as_str().unwrap_or("a tool call").to_string();
        // The tier, never the title's words, says a call destroys.
        let destroy =
            call.pointer("/_meta/iacCode/tier").and_then(Value::as_str) == Some("destroy");
        let mut used = Vec::new();
        let choices: Vec<Choice> = params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| {
                let kind = o["kind"].as_str()?.to_string();
                if destroy && kind == "allow_always" {
                    return None;
                }
                let key = match kind.as_str() {
                    "allow_once" => 'y',
                    "allow_always" => 'a',
                    "reject_once" => 'n',
                    _ => 'r',
                };
                let key =
                    if used.contains(&key) { char::from(b'1' + used.len() as u8) } else { key };
                used.push(key);
                Some(Choice {
                    id: o["optionId"].as_str()?.to_string(),
                    name: o["name"].as_str()?.to_string(),
                    kind,
                    key,
                })
            })
            .collect();
        let reject = choices.iter().position(|c| c.kind == "reject_once");
        let allow = choices.iter().position(|c| c.kind == "allow_once");
        // A destroy starts on a refusal; anything else on Allow once.
        let mut q = Question {
            id,
            title,
            destroy,
            content: Vec::new(),
            choices,
            selected: 0,
            confirming: false,
        };
        q.selected = if destroy { q.refusal() } else { allow.or(reject).unwrap_or(0) };
        q.content = call["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["content"]["text"].as_str().map(str::to_string))
            .collect();
        q
    }

    /// Where a destroy's selection starts and goes back to: Reject, or the first option
    /// that allows nothing.
    pub fn refusal(&self) -> usize {
        let reject = self.choices.iter().position(|c| c.kind == "reject_once");
        let refuse = self.choices.iter().position(|c| !c.kind.starts_with("allow"));
        reject.or(refuse).unwrap_or(0)
    }

    /// What is printed into the scrollback when it arrives: the heading, the title, the
    /// content (the plan summary's Markdown, its table drawn as one).
    pub fn intro(&self, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = vec![Line::default()];
        if self.destroy {
            out.push(Line::from(
                theme.span(Role::Danger, " ⚠ DESTROY: this destroys or replaces infrastructure "),
            ));
        } else {
            out.push(Line::from(theme.span(Role::Warn, "? Permission needed")));
        }
        out.push(Line::from(vec![Span::raw("  "), theme.span(Role::Strong, self.title.clone())]));
        for text in &self.content {
            let mut md = Stream::default();
            out.extend(md.push(text, theme));
            out.extend(md.finish(theme));
        }
        out
    }

    /// The live lines: the options, with their keys and the selected one marked.
    pub fn lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let head = if self.destroy {
            theme.span(Role::Danger, " ⚠ destroys or replaces infrastructure ")
        } else {
            theme.span(Role::Warn, "? Allow this?")
        };
        let mut out = vec![Line::from(head)];
        let mut row = vec![Span::raw(" ")];
        for (i, c) in self.choices.iter().enumerate() {
            let allow = c.kind.starts_with("allow");
            let name =
                if self.destroy && allow { format!("{}: destroy", c.name) } else { c.name.clone() };
            let label = format!(" [{}] {name} ", c.key);
            let role = match (i == self.selected, allow && self.destroy) {
                (true, _) => Role::Danger,
                (false, true) => Role::Removed,
                (false, false) => Role::Strong,
            };
            let style = if i == self.selected {
                theme.style(role).add_modifier(ratatui::style::Modifier::REVERSED)
            } else {
                theme.style(role)
            };
            row.push(Span::styled(label, style));
            row.push(Span::raw(" "));
        }
        out.push(Line::from(row));
        if let Some(c) = self.choices.get(self.selected).filter(|_| self.confirming) {
            out.push(Line::from(theme.span(
                Role::Danger,
                format!(" Press {} again or Enter to destroy; any other key goes back ", c.key),
            )));
            return out;
        }
        let enter = self.choices.get(self.selected).map_or("", |c| c.name.as_str());
        out.push(Line::from(
            theme.span(Role::Dim, format!(" ←/→ choose · Enter: {enter} · Esc: interrupt")),
        ));
        out
    }

    /// The option `key` picks, if any.
    pub fn by_key(&self, key: char) -> Option<&Choice> {
        self.choices.iter().find(|c| c.key == key.to_ascii_lowercase())
    }

    /// What choosing `choice` does: `true` to send it now; `false` when it is a destroy's
    /// first allow, which asks for the same choice again.
    pub fn confirm(&mut self, choice: &Choice) -> bool {
        let confirmed = std::mem::take(&mut self.confirming);
        if self.destroy && choice.kind.starts_with("allow") && !confirmed {
            self.confirming = true;
            self.selected = self.choices.iter().position(|c| c.id == choice.id).unwrap_or(0);
            return false;
        }
        true
    }

    /// The answer choosing `choice`.
    pub fn answer(choice: &Choice) -> Value {
        json!({"outcome": {"outcome": "selected", "optionId": choice.id}})
    }
}

/// An `elicitation/create` form, asked one field at a time in the input.
#[derive(Debug, Clone)]
pub struct Form {
    pub id: Value,
    /// (name, type, description, enum values, required).
    pub fields: Vec<(String, String, String, Vec<String>, bool)>,
    pub at: usize,
    pub values: Map<String, Value>,
}

impl Form {
    pub fn new(id: Value, params: &Value) -> Form {
        let schema = &params["requestedSchema"];
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let mut fields: Vec<(String, String, String, Vec<String>, bool)> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, p)| {
                let options = p["enum"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                let about =
                    p["description"].as_str().or(p["title"].as_str()).unwrap_or("").to_string();
                let kind = p["type"].as_str().unwrap_or("string").to_string();
                (name.clone(), kind, about, options, required.contains(&name.as_str()))
            })
            .collect();
        // Required fields first.
        fields.sort_by_key(|f| !f.4);
        Form { id, fields, at: 0, values: Map::new() }
    }

    /// The live lines: the field being asked.
    pub fn lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let Some((name, kind, about, options, required)) = self.fields.get(self.at) else {
            return Vec::new();
        };
        let mut head = format!("? {name} ({kind}{})", if *required { ", required" } else { "" });
        if !about.is_empty() {
            head.push_str(&format!(": {about}"));
        }
        let mut out = vec![Line::from(theme.span(Role::Warn, head))];
        if !options.is_empty() {
            let listed: Vec<String> =
                options.iter().enumerate().map(|(i, o)| format!("[{}] {o}", i + 1)).collect();
            out.push(Line::from(format!("  {}", listed.join("  "))));
        }
        out.push(Line::from(theme.span(Role::Dim, " Enter answers · Esc declines")));
        out
    }

    /// Takes the typed `text` for the current field; `Err` says why it is refused. Returns
    /// the whole answer once the last field is filled.
    pub fn give(&mut self, text: &str) -> Result<Option<Value>, String> {
        let Some((name, kind, _, options, required)) = self.fields.get(self.at).cloned() else {
            return Ok(Some(json!({"action": "accept", "content": self.values})));
        };
        let text = text.trim();
        if !text.is_empty() {
            let value = if !options.is_empty() {
                let picked =
                    text.parse::<usize>().ok().and_then(|n| options.get(n.wrapping_sub(1)));
                match picked.or_else(|| options.iter().find(|o| *o == text)) {
                    Some(o) => Value::from(o.clone()),
                    None => return Err(format!("choose one of {}", options.join(", "))),
                }
            } else {
                match kind.as_str() {
                    "boolean" => Value::from(matches!(text, "y" | "yes" | "true" | "1")),
                    "integer" => {
                        Value::from(text.parse::<i64>().map_err(|_| "a whole number".to_string())?)
                    }
                    "number" => {
                        Value::from(text.parse::<f64>().map_err(|_| "a number".to_string())?)
                    }
                    _ => Value::from(text),
                }
            };
            self.values.insert(name, value);
        } else if required {
            return Err(format!("{name} is required"));
        }
        self.at += 1;
        if self.at >= self.fields.len() {
            return Ok(Some(json!({"action": "accept", "content": self.values})));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Value {
        json!([{"optionId": "y", "name": "Allow once", "kind": "allow_once"},
               {"optionId": "a", "name": "Always allow", "kind": "allow_always"},
               {"optionId": "n", "name": "Reject", "kind": "reject_once"}])
    }

    #[test]
    fn a_destroy_has_no_always_and_enter_rejects() {
        let params = json!({"toolCall": {"title": "terraform destroy", "_meta": {"iacCode": {"tier": "destroy"}}}, "options": options()});
        let q = Question::new(json!(7), &params);
        assert!(q.destroy);
        let kinds: Vec<&str> = q.choices.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["allow_once", "reject_once"]);
        assert_eq!(q.choices[q.selected].kind, "reject_once");
        let write = Question::new(
            json!(8),
            &json!({"toolCall": {"title": "write main.tf"}, "options": options()}),
        );
        assert_eq!(write.choices[write.selected].kind, "allow_once");
        assert_eq!(write.by_key('A').map(|c| c.id.as_str()), Some("a"));
    }

    #[test]
    fn a_destroy_is_allowed_only_by_the_same_choice_twice() {
        let params = json!({"toolCall": {"title": "terraform destroy", "_meta": {"iacCode": {"tier": "destroy"}}}, "options": options()});
        let mut q = Question::new(json!(7), &params);
        let allow = q.by_key('y').cloned().expect("an allow");
        assert!(!q.confirm(&allow), "the first y only asks again");
        assert!(q.confirming);
        assert_eq!(q.choices[q.selected].kind, "allow_once", "Enter now confirms it");
        assert!(q.confirm(&allow), "the second one sends it");
        // Any other key in between goes back (the keys set `confirming` to false).
        assert!(!q.confirm(&allow));
        q.confirming = false;
        assert!(!q.confirm(&allow), "asked again after going back");
        let reject = q.by_key('n').cloned().expect("a reject");
        q.confirming = false;
        assert!(q.confirm(&reject), "a reject is sent at once");
        // No Reject offered: a destroy still starts on what allows nothing.
        let odd = json!({"toolCall": {"_meta": {"iacCode": {"tier": "destroy"}}}, "options": [
            {"optionId": "y", "name": "Allow", "kind": "allow_once"},
            {"optionId": "x", "name": "Stop", "kind": "reject_always"}]});
        let q = Question::new(json!(8), &odd);
        assert_eq!(q.choices[q.selected].id, "x");
    }

    #[test]
    fn a_form_checks_each_field() {
        let params = json!({"message": "Which region?", "requestedSchema": {"type": "object",
            "properties": {"region": {"type": "string", "enum": ["eu", "us"]}, "count": {"type": "integer"}},
            "required": ["region"]}});
        let mut form = Form::new(json!(1), &params);
        assert!(form.give("").is_err());
        assert!(form.give("asia").is_err());
        assert_eq!(form.give("2"), Ok(None));
        assert!(form.give("x").is_err());
        let done = form.give("3").unwrap().unwrap();
        assert_eq!(done, json!({"action": "accept", "content": {"region": "us", "count": 3}}));
    }
}
