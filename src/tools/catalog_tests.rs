//! The catalog of built-in tools: names, files, rules' list, descriptions and schemas.

use super::*;

#[test]
fn catalog_is_well_formed() {
    let registry = Registry::builtin();
    let mut names = std::collections::HashSet::new();
    for tool in registry.iter() {
        let name = tool.name();
        assert!(names.insert(name), "duplicate tool {name}");
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
        // `rules` sits below `tools` and keeps its own list of the names a rule may use.
        assert!(crate::rules::BUILTIN_TOOLS.contains(&name), "{name}: not in rules' list");
        let file = format!("{}/src/tools/{name}.rs", env!("CARGO_MANIFEST_DIR"));
        assert!(Path::new(&file).exists(), "{name} must live in {file}");
        assert!(!tool.description().is_empty() && tool.description().len() <= 1024);
        let schema = tool.schema();
        if let Err(err) = jsonschema::meta::validate(&schema) {
            panic!("{name}: its schema is not a valid JSON Schema: {err}");
        }
        assert!(jsonschema::validator_for(&schema).is_ok(), "{name}");
        assert_eq!(schema["type"], "object", "{name}");
        let props = schema["properties"].as_object().expect("properties");
        for req in schema["required"].as_array().into_iter().flatten() {
            assert!(props.contains_key(req.as_str().expect("a string")), "{name}: {req}");
        }
        for (prop, spec) in props {
            assert!(spec["description"].is_string(), "{name}.{prop} has no description");
        }
    }
}
