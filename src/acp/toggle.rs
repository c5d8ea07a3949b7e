//! On/off settings as config options: a `boolean` option to a client that takes them
//! (`clientCapabilities.session.configOptions.boolean`), an `on`/`off` select otherwise;
//! and reading the value `session/set_config_option` sets, in either form.

use serde_json::Value;

use super::types::{SessionConfigOption, SessionConfigSelectOption};
use crate::jsonrpc::RpcError;

/// The `thinking` option: whether the model is asked to reason.
pub(super) fn thinking(on: bool, boolean: bool) -> SessionConfigOption {
    toggle(
        "thinking",
        "Thinking",
        "Whether the model reasons before it answers (its thinking budget or reasoning effort)",
        "thought_level",
        on,
        boolean,
    )
}

fn toggle(
    id: &str,
    name: &str,
    description: &str,
    category: &str,
    on: bool,
    boolean: bool,
) -> SessionConfigOption {
    let choice = |value: &str, name: &str| SessionConfigSelectOption {
        value: value.into(),
        name: name.into(),
        description: None,
    };
    let (kind, current_value, options) = if boolean {
        ("boolean", Value::Bool(on), None)
    } else {
        let value = if on { "on" } else { "off" };
        (
            "select",
            Value::String(value.into()),
            Some(vec![choice("on", "On"), choice("off", "Off")]),
        )
    };
    SessionConfigOption {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        category: category.into(),
        kind,
        current_value,
        options,
    }
}

/// The value set for the on/off option `id`: a boolean (`{"type": "boolean", "value":
/// true}`), or the select's `on`/`off` (also `true`/`false`).
pub(super) fn on_off(id: &str, value: &Value) -> Result<bool, RpcError> {
    match value {
        Value::Bool(on) => Ok(*on),
        Value::String(text) => match text.as_str() {
            "on" | "true" => Ok(true),
            "off" | "false" => Ok(false),
            other => Err(RpcError::invalid_params(format!(
                "value of '{id}' must be 'on' or 'off' (or a boolean), got '{other}'"
            ))),
        },
        other => Err(RpcError::invalid_params(format!(
            "value of '{id}' must be a boolean or 'on'/'off', got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_off_reads_both_forms_and_refuses_the_rest() {
        assert!(on_off("t", &Value::Bool(true)).unwrap());
        assert!(!on_off("t", &Value::String("off".into())).unwrap());
        assert!(on_off("t", &Value::String("on".into())).unwrap());
        assert!(on_off("t", &Value::String("maybe".into())).is_err());
        assert!(on_off("t", &serde_json::json!(1)).is_err());
    }

    #[test]
    fn a_toggle_is_a_boolean_only_for_a_client_that_takes_them() {
        let boolean = serde_json::to_value(thinking(true, true)).unwrap();
        assert_eq!(boolean["type"], "boolean");
        assert_eq!(boolean["currentValue"], true);
        assert!(boolean.get("options").is_none());
        let select = serde_json::to_value(thinking(false, false)).unwrap();
        assert_eq!(select["type"], "select");
        assert_eq!(select["currentValue"], "off");
        assert_eq!(select["options"].as_array().map(Vec::len), Some(2));
    }
}
