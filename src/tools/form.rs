//! The form `ask_user` puts to the user: a fixed set of answers, a few typed fields (the
//! subset of JSON Schema that ACP's and MCP's form elicitation allows: string, number,
//! integer and boolean fields, string enums, bounds, required), or one line of free text.
//! Read from the model's arguments (every flaw a message for the model), sent as the
//! `requestedSchema`, and the client's answer checked against it before the model sees it
//! (shown as text when nobody renders forms: `ask_user`). Pure.

use serde_json::{Map, Value, json};

/// Most answers to choose from.
pub const MAX_OPTIONS: usize = 20;
/// Most fields of a form.
pub const MAX_FIELDS: usize = 10;
/// Longest question, option, title or description, in characters.
pub const MAX_TEXT: usize = 2_000;

/// The one field of a question with options or a free answer.
const ANSWER: &str = "answer";

/// What the user is asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// Pick one of these.
    Choice(Vec<String>),
    /// Fill in these fields.
    Fields(Vec<Field>),
    /// Type an answer.
    Free,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub kind: Kind,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The allowed values (string fields only).
    pub choices: Vec<String>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub default: Option<Value>,
    pub required: bool,
}

/// A field's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Number,
    Integer,
    Boolean,
}

/// Each type, its name in a schema, and how it reads to a person.
const KINDS: [(Kind, &str, &str); 4] = [
    (Kind::String, "string", "text"),
    (Kind::Number, "number", "a number"),
    (Kind::Integer, "integer", "a whole number"),
    (Kind::Boolean, "boolean", "yes or no"),
];

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        KINDS.iter().find(|(_, id, _)| *id == name).map(|(kind, _, _)| *kind)
    }

    fn id(self) -> &'static str {
        KINDS.iter().find(|(kind, _, _)| *kind == self).map_or("string", |(_, id, _)| id)
    }

    /// How the type reads to a person.
    pub fn said(self) -> &'static str {
        KINDS.iter().find(|(kind, _, _)| *kind == self).map_or("text", |(_, _, said)| said)
    }

    /// Whether `value` has this type.
    fn holds(self, value: &Value) -> bool {
        match self {
            Kind::String => value.is_string(),
            Kind::Number => value.is_number(),
            Kind::Integer => {
                value.is_i64()
                    || value.is_u64()
                    || value.as_f64().is_some_and(|n| n.fract() == 0.0 && n.is_finite())
            }
            Kind::Boolean => value.is_boolean(),
        }
    }
}

/// The keys a field may have.
const FIELD_KEYS: [&str; 7] =
    ["type", "title", "description", "enum", "minimum", "maximum", "default"];

/// Reads the form of `ask_user`'s arguments: `options`, or `fields` with `required`, or
/// neither (a free answer). `Err` says what to fix.
pub fn read(
    options: Option<&Value>,
    fields: Option<&Value>,
    required: Option<&Value>,
) -> Result<Form, String> {
    match (options, fields) {
        (Some(_), Some(_)) => Err("give either options or fields, not both".to_string()),
        (Some(options), None) => {
            if required.is_some() {
                return Err("required goes with fields, not with options".to_string());
            }
            read_options(options).map(Form::Choice)
        }
        (None, Some(fields)) => read_fields(fields, required).map(Form::Fields),
        (None, None) if required.is_some() => Err("required goes with fields".to_string()),
        (None, None) => Ok(Form::Free),
    }
}

fn read_options(options: &Value) -> Result<Vec<String>, String> {
    let list = options.as_array().ok_or("options must be an array of strings")?;
    if list.is_empty() || list.len() > MAX_OPTIONS {
        return Err(format!("options must hold 1 to {MAX_OPTIONS} answers"));
    }
    strings(list, "options")
}

/// Distinct, non-empty strings of bounded length.
fn strings(list: &[Value], what: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for item in list {
        let text = item.as_str().map(str::trim).ok_or(format!("{what} must all be strings"))?;
        if text.is_empty() || text.chars().count() > MAX_TEXT {
            return Err(format!("{what} must be non-empty and at most {MAX_TEXT} characters"));
        }
        if out.iter().any(|seen| seen == text) {
            return Err(format!("{what} holds '{text}' twice"));
        }
        out.push(text.to_string());
    }
    Ok(out)
}

fn read_fields(fields: &Value, required: Option<&Value>) -> Result<Vec<Field>, String> {
    let map = fields.as_object().ok_or("fields must be an object: field name → its schema")?;
    if map.is_empty() || map.len() > MAX_FIELDS {
        return Err(format!("fields must hold 1 to {MAX_FIELDS} fields"));
    }
    let required = match required {
        None => Vec::new(),
        Some(list) => {
            strings(list.as_array().ok_or("required must be an array of field names")?, "required")?
        }
    };
    if let Some(unknown) = required.iter().find(|name| !map.contains_key(name.as_str())) {
        return Err(format!("required names '{unknown}', which is not a field"));
    }
    map.iter()
        .map(|(name, spec)| {
            read_field(name, spec, required.contains(name))
                .map_err(|why| format!("field '{name}': {why}"))
        })
        .collect()
}

fn read_field(name: &str, spec: &Value, required: bool) -> Result<Field, String> {
    let good_name = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !good_name {
        return Err("a name is a letter, then letters, digits or _ (64 at most)".to_string());
    }
    let spec = spec.as_object().ok_or("its schema must be an object")?;
    if let Some(key) = spec.keys().find(|key| !FIELD_KEYS.contains(&key.as_str())) {
        return Err(format!(
            "'{key}' is not supported; a field may have {}",
            FIELD_KEYS.join(", ")
        ));
    }
    let kind = spec.get("type").and_then(Value::as_str).and_then(Kind::of).ok_or(
        "type must be string, number, integer or boolean (a multiple choice is a string with enum)",
    )?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match spec.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= MAX_TEXT => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key} must be a string of at most {MAX_TEXT} characters")),
        }
    };
    let number = |key: &str| -> Result<Option<f64>, String> {
        match spec.get(key) {
            None => Ok(None),
            Some(_) if !matches!(kind, Kind::Number | Kind::Integer) => {
                Err(format!("{key} goes with number and integer fields only"))
            }
            Some(value) if kind.holds(value) => Ok(value.as_f64()),
            Some(_) => Err(format!("{key} must be {}", kind.said())),
        }
    };
    let choices = match spec.get("enum") {
        None => Vec::new(),
        Some(_) if kind != Kind::String => {
            return Err("enum goes with string fields only".to_string());
        }
        Some(Value::Array(list)) if !list.is_empty() && list.len() <= MAX_OPTIONS => {
            strings(list, "enum")?
        }
        Some(_) => return Err(format!("enum must hold 1 to {MAX_OPTIONS} strings")),
    };
    let field = Field {
        name: name.to_string(),
        kind,
        title: text("title")?,
        description: text("description")?,
        choices,
        minimum: number("minimum")?,
        maximum: number("maximum")?,
        default: spec.get("default").cloned(),
        required,
    };
    if let (Some(low), Some(high)) = (field.minimum, field.maximum)
        && low > high
    {
        return Err("minimum is above maximum".to_string());
    }
    if let Some(default) = &field.default
        && let Err(why) = field.check(default)
    {
        return Err(format!("default: {why}"));
    }
    Ok(field)
}

impl Field {
    /// Whether `value` fits this field.
    fn check(&self, value: &Value) -> Result<(), String> {
        if !self.kind.holds(value) {
            return Err(format!("expected {}, got {value}", self.kind.said()));
        }
        if !self.choices.is_empty()
            && !self.choices.iter().any(|c| Some(c.as_str()) == value.as_str())
        {
            return Err(format!("{value} is not one of {}", self.choices.join(", ")));
        }
        let n = value.as_f64();
        if let (Some(n), Some(low)) = (n, self.minimum)
            && n < low
        {
            return Err(format!("{value} is below the minimum {low}"));
        }
        if let (Some(n), Some(high)) = (n, self.maximum)
            && n > high
        {
            return Err(format!("{value} is above the maximum {high}"));
        }
        Ok(())
    }

    fn schema(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), json!(self.kind.id()));
        if let Some(title) = &self.title {
            out.insert("title".into(), json!(title));
        }
        if let Some(description) = &self.description {
            out.insert("description".into(), json!(description));
        }
        if !self.choices.is_empty() {
            out.insert("enum".into(), json!(self.choices));
        }
        let bound = |n: f64| if self.kind == Kind::Integer { json!(n as i64) } else { json!(n) };
        if let Some(low) = self.minimum {
            out.insert("minimum".into(), bound(low));
        }
        if let Some(high) = self.maximum {
            out.insert("maximum".into(), bound(high));
        }
        if let Some(default) = &self.default {
            out.insert("default".into(), default.clone());
        }
        Value::Object(out)
    }
}

impl Form {
    /// The fields as the client sees them: a choice and a free answer are one required
    /// string field, `answer`.
    fn fields(&self) -> Vec<Field> {
        let answer = |choices: Vec<String>| Field {
            name: ANSWER.to_string(),
            kind: Kind::String,
            title: Some("Answer".to_string()),
            description: None,
            choices,
            minimum: None,
            maximum: None,
            default: None,
            required: true,
        };
        match self {
            Form::Choice(options) => vec![answer(options.clone())],
            Form::Fields(fields) => fields.clone(),
            Form::Free => vec![answer(Vec::new())],
        }
    }

    /// The `requestedSchema` of an `elicitation/create`.
    pub fn schema(&self) -> Value {
        let fields = self.fields();
        let properties: Map<String, Value> =
            fields.iter().map(|f| (f.name.clone(), f.schema())).collect();
        let required: Vec<&str> =
            fields.iter().filter(|f| f.required).map(|f| f.name.as_str()).collect();
        json!({"type": "object", "properties": properties, "required": required})
    }

    /// Checks what the user accepted against the form: every field known, of its type and
    /// bounds, the required ones present. A `null` counts as absent.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), String> {
        let fields = self.fields();
        for (name, value) in content {
            let field = fields
                .iter()
                .find(|f| &f.name == name)
                .ok_or_else(|| format!("'{name}' is not a field of the form"))?;
            if !value.is_null() {
                field.check(value).map_err(|why| format!("'{name}': {why}"))?;
            }
        }
        match fields.iter().find(|f| f.required && content.get(&f.name).is_none_or(Value::is_null))
        {
            Some(missing) => Err(format!("the required field '{}' is missing", missing.name)),
            None => Ok(()),
        }
    }

    /// What the model reads of an accepted answer (already checked).
    pub fn answer_text(&self, content: &Map<String, Value>) -> String {
        match self {
            Form::Choice(_) | Form::Free => {
                let answer = content.get(ANSWER).and_then(Value::as_str).unwrap_or_default();
                let verb = if matches!(self, Form::Choice(_)) { "chose" } else { "answered" };
                format!("The user {verb}: {answer}")
            }
            Form::Fields(fields) => {
                // In the form's order, absent ones left out.
                let answered: Map<String, Value> = fields
                    .iter()
                    .filter_map(|f| {
                        content
                            .get(&f.name)
                            .filter(|v| !v.is_null())
                            .map(|v| (f.name.clone(), v.clone()))
                    })
                    .collect();
                format!("The user answered: {}", Value::Object(answered))
            }
        }
    }
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
