//! `ask_user`: a question for the user with a fixed set of answers, a short form, or a free
//! answer. With a client that renders forms (ACP `elicitation.form`) the question goes out
//! as `elicitation/create` and the answer (checked against the form), a decline or a
//! dismissal comes back to the model; otherwise the question is shown as the agent's
//! message and the turn ends, so the user answers in the next prompt. It touches nothing,
//! so it never asks permission.

use serde::Deserialize;
use serde_json::{Value, json};

use super::form::{self, Field, Form};
use super::{Access, Elicitation, Elicited, Invocation, Tool, ToolContext, ToolError, ToolKind};
use super::{ToolOutput, parse_args};

pub struct AskUser;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    question: String,
    #[serde(default)]
    options: Option<Value>,
    #[serde(default)]
    fields: Option<Value>,
    #[serde(default)]
    required: Option<Value>,
}

/// What the model reads when the question ends the turn.
const ENDS_TURN: &str = "The question is shown to the user as your message and the turn ends \
     here: their answer comes as their next message. Do nothing more now.";

impl Tool for AskUser {
    fn name(&self) -> &'static str {
        "ask_user"
    }
    fn description(&self) -> &'static str {
        "Ask the user a question you cannot settle yourself (a choice between approaches, a \
         value only they know) and wait for the answer. Give `options` for a choice of fixed \
         answers, or `fields` (with `required`) for a short form, or neither for a free \
         answer. Ask only what blocks the work, one question at a time; never ask for \
         permission to run a tool (the tools ask themselves)."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question, in one or two sentences."},
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The answers to choose from (at most 20); the user picks one."
                },
                "fields": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "enum": ["string", "number", "integer", "boolean"]},
                            "title": {"type": "string"},
                            "description": {"type": "string"},
                            "enum": {"type": "array", "items": {"type": "string"}},
                            "minimum": {"type": "number"},
                            "maximum": {"type": "number"},
                            "default": {}
                        },
                        "required": ["type"]
                    },
                    "description": "A short form (at most 10 fields): field name → {type: string|number|integer|boolean, title?, description?, enum? (strings), minimum?, maximum?, default?}."
                },
                "required": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The names of the fields the user must fill in."
                }
            },
            "required": ["question"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    fn access(&self) -> Access {
        // It changes nothing: the question is the user's to answer.
        Access::Read
    }
    fn offers_always(&self) -> bool {
        false
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let question = args.get("question").and_then(Value::as_str).unwrap_or("");
        Invocation::plain(format!("Ask: {}", crate::text::one_line(question, " ", 200)))
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let question = args.question.trim();
        if question.is_empty() || question.chars().count() > form::MAX_TEXT {
            let why =
                format!("question must be non-empty and at most {} characters", form::MAX_TEXT);
            return Err(ToolError::Model(why));
        }
        let form = form::read(args.options.as_ref(), args.fields.as_ref(), args.required.as_ref())
            .map_err(|why| ToolError::Model(format!("ask_user: {why}")))?;
        let schema = form.schema();
        let request = Elicitation { message: question, schema: &schema };
        let answer = ctx.network.elicit(&request).map_err(ToolError::Model)?;
        outcome(&form, question, answer)
    }
}

/// What the model gets for an answer.
fn outcome(form: &Form, question: &str, answer: Elicited) -> Result<ToolOutput, ToolError> {
    let said = |text: &str, action: &str| ToolOutput {
        text: text.to_string(),
        raw: json!({"action": action}),
        ..ToolOutput::default()
    };
    match answer {
        Elicited::Accepted(content) => {
            form.check(&content).map_err(|why| {
                ToolError::Model(format!(
                    "The client's answer does not fit the form ({why}); the question stays \
                     unanswered. Ask again or go on without it."
                ))
            })?;
            let text = form.answer_text(&content);
            Ok(ToolOutput {
                text,
                raw: json!({"action": "accept", "content": content}),
                ..ToolOutput::default()
            })
        }
        Elicited::Declined => Ok(said(
            "The user declined to answer. Go on without it if you can; otherwise stop and say \
             what you need.",
            "decline",
        )),
        Elicited::Cancelled => {
            Ok(said("The user dismissed the question without answering.", "cancel"))
        }
        Elicited::Unsupported => {
            Ok(ToolOutput { ask: Some(as_text(form, question)), ..said(ENDS_TURN, "shown") })
        }
    }
}

/// The question as a message to read, for a client that renders no form: the options
/// numbered, the fields listed with what each takes.
fn as_text(form: &Form, question: &str) -> String {
    let mut out = question.trim().to_string();
    match form {
        Form::Free => {}
        Form::Choice(options) => {
            out.push_str("\n\n");
            let lines: Vec<String> =
                options.iter().enumerate().map(|(i, o)| format!("{}. {o}", i + 1)).collect();
            out.push_str(&lines.join("\n"));
        }
        Form::Fields(fields) => {
            out.push('\n');
            for field in fields {
                out.push_str(&format!("\n- {}", line(field)));
            }
        }
    }
    out
}

/// One line of the text form: `name (what it takes, required): description`.
fn line(field: &Field) -> String {
    let mut what = vec![field.kind.said().to_string()];
    if !field.choices.is_empty() {
        what = vec![format!("one of: {}", field.choices.join(", "))];
    }
    match (field.minimum, field.maximum) {
        (Some(low), Some(high)) => what.push(format!("{low} to {high}")),
        (Some(low), None) => what.push(format!("at least {low}")),
        (None, Some(high)) => what.push(format!("at most {high}")),
        (None, None) => {}
    }
    if field.required {
        what.push("required".to_string());
    }
    let label = field.title.as_deref().unwrap_or(&field.name);
    match &field.description {
        Some(description) => format!("{label} ({}): {description}", what.join(", ")),
        None => format!("{label} ({})", what.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice() -> Form {
        Form::Choice(vec!["a".into(), "b".into()])
    }

    #[test]
    fn each_answer_reads_plainly_to_the_model() {
        let content = json!({"answer": "b"}).as_object().cloned().unwrap();
        let accepted = outcome(&choice(), "Which?", Elicited::Accepted(content)).unwrap();
        assert_eq!(accepted.text, "The user chose: b");
        assert_eq!(accepted.raw, json!({"action": "accept", "content": {"answer": "b"}}));
        assert!(accepted.ask.is_none());
        let declined = outcome(&choice(), "Which?", Elicited::Declined).unwrap();
        assert!(declined.text.contains("declined"), "{}", declined.text);
        let cancelled = outcome(&choice(), "Which?", Elicited::Cancelled).unwrap();
        assert!(cancelled.text.contains("dismissed"), "{}", cancelled.text);
        let shown = outcome(&choice(), "Which?", Elicited::Unsupported).unwrap();
        assert_eq!(shown.ask.as_deref(), Some("Which?\n\n1. a\n2. b"));
        assert_eq!(shown.text, ENDS_TURN);
    }

    #[test]
    fn a_question_reads_as_text_when_no_form_is_rendered() {
        let spec = json!({
            "bucket": {"type": "string", "title": "Bucket", "description": "its name"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
            "tier": {"type": "string", "enum": ["hot", "cold"]}
        });
        let form = form::read(None, Some(&spec), Some(&json!(["bucket"]))).unwrap();
        let text = as_text(&form, "Details, please:");
        assert!(text.starts_with("Details, please:\n\n- "), "{text}");
        assert!(text.contains("- Bucket (text, required): its name"), "{text}");
        assert!(text.contains("- replicas (a whole number, 1 to 5)"), "{text}");
        assert!(text.contains("- tier (one of: hot, cold)"), "{text}");
        assert_eq!(as_text(&choice(), "Where?"), "Where?\n\n1. a\n2. b");
        assert_eq!(as_text(&Form::Free, "  Which region?\n"), "Which region?");
    }

    #[test]
    fn an_answer_that_does_not_fit_is_the_models_error() {
        let content = json!({"answer": "c"}).as_object().cloned().unwrap();
        match outcome(&choice(), "Which?", Elicited::Accepted(content)) {
            Err(ToolError::Model(why)) => assert!(why.contains("does not fit the form"), "{why}"),
            other => panic!("expected a model error, got {other:?}"),
        }
    }
}
