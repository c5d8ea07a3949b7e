//! Unit tests of `ask_user`'s form: what the model may write, the schema sent, and the
//! check of an answer.

use serde_json::{Map, Value, json};

use super::*;

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn fields(spec: Value, required: Value) -> Result<Form, String> {
    read(None, Some(&spec), Some(&required))
}

#[test]
fn options_become_one_required_enum_field() {
    let form = read(Some(&json!(["staging", " production "])), None, None).expect("as written");
    assert_eq!(form, Form::Choice(vec!["staging".into(), "production".into()]));
    let schema = form.schema();
    assert_eq!(schema["properties"]["answer"]["enum"], json!(["staging", "production"]));
    assert_eq!(schema["required"], json!(["answer"]));
    assert!(form.check(&object(json!({"answer": "staging"}))).is_ok());
    let wrong = form.check(&object(json!({"answer": "dev"}))).unwrap_err();
    assert!(wrong.contains("not one of staging, production"), "{wrong}");
    assert!(form.check(&object(json!({}))).unwrap_err().contains("required field 'answer'"));
    assert_eq!(form.answer_text(&object(json!({"answer": "staging"}))), "The user chose: staging");
}

#[test]
fn bad_arguments_say_what_to_fix() {
    let cases = [
        (read(Some(&json!([])), None, None), "1 to 20"),
        (read(Some(&json!(["a", "a"])), None, None), "'a' twice"),
        (read(Some(&json!([1])), None, None), "strings"),
        (read(Some(&json!(["a"])), Some(&json!({})), None), "not both"),
        (read(None, None, Some(&json!(["x"]))), "required goes with fields"),
        (fields(json!({"n": {"type": "array"}}), json!([])), "type must be"),
        (
            fields(json!({"n": {"type": "string", "pattern": "x"}}), json!([])),
            "'pattern' is not supported",
        ),
        (
            fields(json!({"n": {"type": "boolean", "enum": ["a"]}}), json!([])),
            "enum goes with string",
        ),
        (
            fields(json!({"n": {"type": "string", "minimum": 1}}), json!([])),
            "minimum goes with number",
        ),
        (
            fields(json!({"n": {"type": "integer", "minimum": 5, "maximum": 1}}), json!([])),
            "above maximum",
        ),
        (fields(json!({"n": {"type": "integer", "default": "x"}}), json!([])), "default"),
        (fields(json!({"9n": {"type": "string"}}), json!([])), "a name is a letter"),
        (fields(json!({"n": {"type": "string"}}), json!(["m"])), "'m', which is not a field"),
        (fields(json!({}), json!([])), "1 to 10 fields"),
    ];
    for (result, expected) in cases {
        let err = result.unwrap_err();
        assert!(err.contains(expected), "{err} should say {expected}");
    }
}

#[test]
fn typed_fields_are_checked_with_their_bounds() {
    let form = fields(
        json!({
            "bucket": {"type": "string", "title": "Bucket", "description": "its name"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "tier": {"type": "string", "enum": ["hot", "cold"]}
        }),
        json!(["bucket", "replicas"]),
    )
    .expect("as written");
    let schema = form.schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["replicas"],
        json!({"type": "integer", "minimum": 1, "maximum": 5, "default": 2})
    );
    assert_eq!(schema["properties"]["bucket"]["title"], "Bucket");
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .expect("as written")
        .iter()
        .map(|v| v.as_str().expect("as written"))
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["bucket", "replicas"]);

    let good = object(
        json!({"bucket": "logs", "replicas": 3, "ratio": 0.5, "force": true, "tier": "cold"}),
    );
    assert!(form.check(&good).is_ok());
    assert!(
        form.check(&object(json!({"bucket": "logs", "replicas": 3.0}))).is_ok(),
        "3.0 is whole"
    );
    let bad = [
        (json!({"bucket": "logs", "replicas": 9}), "above the maximum"),
        (json!({"bucket": "logs", "replicas": 1.5}), "whole number"),
        (json!({"bucket": "logs", "replicas": 2, "force": "yes"}), "yes or no"),
        (json!({"bucket": "logs", "replicas": 2, "tier": "warm"}), "not one of"),
        (json!({"bucket": "logs", "replicas": 2, "color": "red"}), "'color' is not a field"),
        (json!({"bucket": null, "replicas": 2}), "required field 'bucket'"),
        (json!({"bucket": 7, "replicas": 2}), "expected text"),
    ];
    for (content, expected) in bad {
        let err = form.check(&object(content.clone())).unwrap_err();
        assert!(err.contains(expected), "{content}: {err} should say {expected}");
    }
    let text = form.answer_text(&object(json!({"force": false, "bucket": "logs", "tier": null})));
    assert!(text.starts_with("The user answered: {"), "{text}");
    assert!(text.contains(r#""bucket":"logs""#) && text.contains(r#""force":false"#), "{text}");
    assert!(!text.contains("tier"), "absent fields are left out: {text}");
}

#[test]
fn no_options_and_no_fields_is_a_free_answer() {
    let form = read(None, None, None).expect("as written");
    assert_eq!(form, Form::Free);
    assert_eq!(form.schema()["properties"]["answer"]["type"], "string");
    assert!(form.check(&object(json!({"answer": "use eu-west-1"}))).is_ok());
    assert_eq!(form.answer_text(&object(json!({"answer": "eu"}))), "The user answered: eu");
}
