//! Tests of settings edits: typed values and sections found by any spelling.

use std::path::Path;

use serde_json::{Value, json};

use super::*;

#[test]
fn values_are_typed_by_key() {
    assert_eq!(typed("maxTokens", " 8192 ").expect("a number"), json!(8192));
    assert_eq!(typed("images", "Yes").expect("a boolean"), json!(true));
    assert_eq!(typed("images", "off").expect("a boolean"), json!(false));
    assert_eq!(typed("models", "a, b,,c ").expect("a list"), json!(["a", "b", "c"]));
    assert_eq!(typed("apiKey", "sk-1").expect("a string"), json!("sk-1"));
    assert_eq!(typed("caFile", "/etc/ca.pem").expect("a path"), json!("/etc/ca.pem"));
    let relative = typed("caFile", "ca.pem").expect("a path");
    assert!(Path::new(relative.as_str().expect("a string")).is_absolute(), "{relative}");
    for (key, raw) in [("maxTokens", "lots"), ("images", "maybe"), ("model", "  ")] {
        assert!(matches!(typed(key, raw), Err(Error::Usage(_))), "{key}={raw}");
    }
}

#[test]
fn sections_are_found_by_any_spelling_and_emptied_ones_go() {
    let path = Path::new("/x/settings.json");
    let mut root: Map<String, Value> = serde_json::from_value(json!({
        "provider": "lmstudio",
        "providers": {"LM Studio": {"model": "a"}}
    }))
    .expect("an object");
    edit_section(&mut root, "lmstudio", "baseUrl", Change::Set("http://h:1/v1"), path)
        .expect("edited");
    assert_eq!(
        Value::Object(root.clone()),
        json!({"provider": "lmstudio", "providers": {"LM Studio": {"model": "a", "baseUrl": "http://h:1/v1"}}})
    );
    edit_section(&mut root, "lmstudio", "model", Change::Unset, path).expect("edited");
    edit_section(&mut root, "lmstudio", "baseUrl", Change::Unset, path).expect("edited");
    assert_eq!(Value::Object(root.clone()), json!({"provider": "lmstudio"}));
    let err = edit_section(&mut root, "vllm", "modle", Change::Set("x"), path)
        .expect_err("an unknown key");
    assert!(err.to_string().contains("unknown key 'modle'"), "{err}");
}
