//! Session ids: a UUID in its hyphenated form, lowercase. Parsed once, where the wire (or the
//! command line) is decoded; everything below takes a `SessionId`, so no path or store key
//! is ever made from unchecked text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// A checked, normalised session id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// A new random id.
    pub fn random() -> SessionId {
        SessionId(uuid::Uuid::new_v4().hyphenated().to_string())
    }

    /// Checks `text`: a hyphenated UUID, in any case. Anything else is refused
    /// (`Error::InvalidParams`) before it can reach a path.
    pub fn parse(text: &str) -> Result<SessionId> {
        match uuid::Uuid::parse_str(text) {
            Ok(uuid) if text.len() == 36 => Ok(SessionId(uuid.hyphenated().to_string())),
            _ => {
                let shown: String = text.chars().take(64).collect();
                Err(Error::InvalidParams(format!("invalid session id '{shown}': expected a UUID")))
            }
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        SessionId::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_uuids() {
        let good = "0b0c8f4e-3f0a-4c1e-9d3a-2b6f1e4d5c7a";
        assert_eq!(SessionId::parse(good).unwrap().as_str(), good);
        assert_eq!(SessionId::parse(&good.to_uppercase()).unwrap().as_str(), good);
        for bad in [
            "",
            "../../etc",
            "0b0c8f4e3f0a4c1e9d3a2b6f1e4d5c7a",
            &"a".repeat(10_000),
            "{0b0c8f4e-3f0a-4c1e-9d3a-2b6f1e4d5c7a}",
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad:.40}");
        }
        let decoded: SessionId =
            serde_json::from_str(&format!("\"{}\"", good.to_uppercase())).unwrap();
        assert_eq!(decoded.as_str(), good, "decoding normalises");
        assert!(serde_json::from_str::<SessionId>("\"../x\"").is_err());
    }
}
