//! Kubernetes manifests as policy input: each YAML document of a file as its own JSON
//! value (conftest's way), empty documents skipped. Pure.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The documents of `text` (YAML, JSON included), each as JSON.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|err| err.to_string())?;
    Ok(docs.iter().filter(|d| !matches!(d, Yaml::Null)).map(json_of).collect())
}

fn json_of(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Integer(i) => Value::Number((*i).into()),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or_else(|| Value::String(text.clone()), Value::Number),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let key = match key {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    other => format!("{other:?}"),
                };
                map.insert(key, json_of(value));
            }
            Value::Object(map)
        }
        Yaml::Null | Yaml::BadValue | Yaml::Alias(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_document_is_one_input() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  \
                    - {name: c, image: 'nginx:1', ports: [{containerPort: 80}]}\n---\n---\n\
                    kind: Service\nspec: {ratio: 0.5, on: true}\n";
        let docs = documents(text).unwrap();
        assert_eq!(docs.len(), 2, "the empty document is skipped");
        assert_eq!(docs[0]["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
        assert_eq!(docs[0]["metadata"]["name"], "a");
        assert_eq!(docs[1]["spec"]["ratio"], 0.5);
        assert_eq!(docs[1]["spec"]["on"], true);
        assert!(documents("a: [b").is_err());
    }
}
