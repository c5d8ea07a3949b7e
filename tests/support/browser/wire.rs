//! The WebDriver wire: JSON over HTTP to chromedriver on loopback. A reply's `value` is
//! the result; an error reply (`{"value": {"error", "message"}}`, any status) is an
//! `Err` naming the W3C error and chromedriver's message.

use std::time::Duration;

use serde_json::Value;

/// Longest a single WebDriver command may take (page loads and scripts have their own,
/// shorter, session timeouts).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(90);

/// Screenshots are the largest replies: a few MiB of base64 at most.
const BODY_LIMIT: u64 = 64 << 20;

/// chromedriver's base URL and a connection pool to it.
pub(crate) struct Wire {
    base: String,
    agent: ureq::Agent,
}

impl Wire {
    pub(crate) fn new(base: String) -> Wire {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(COMMAND_TIMEOUT))
            .proxy(None)
            .build()
            .into();
        Wire { base, agent }
    }

    pub(crate) fn get(&self, path: &str) -> Result<Value, String> {
        let reply = self.agent.get(format!("{}{path}", self.base)).call();
        Self::value("GET", path, reply)
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let reply = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes());
        Self::value("POST", path, reply)
    }

    pub(crate) fn delete(&self, path: &str) -> Result<Value, String> {
        let reply = self.agent.delete(format!("{}{path}", self.base)).call();
        Self::value("DELETE", path, reply)
    }

    fn value(
        method: &str,
        path: &str,
        reply: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, String> {
        let mut reply = reply.map_err(|e| format!("{method} {path}: {e}"))?;
        let status = reply.status().as_u16();
        let text = reply
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(|e| format!("{method} {path}: reading the reply: {e}"))?;
        let json: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{method} {path}: {status} {text:.300}: {e}"))?;
        let value = json.get("value").cloned().unwrap_or(Value::Null);
        match value.get("error").and_then(Value::as_str) {
            Some(error) => {
                let message = value["message"].as_str().unwrap_or("");
                Err(format!("{method} {path}: {error}: {message}"))
            }
            None if status >= 400 => Err(format!("{method} {path}: {status} {text:.300}")),
            None => Ok(value),
        }
    }
}
