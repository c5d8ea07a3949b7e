//! Wire types of signing in: the methods `initialize` offers, `authenticate`'s params, and
//! the agent's `auth` capabilities (`logout`).

use serde::{Deserialize, Serialize};

use super::Empty;

/// One entry of `authMethods`: without `type` it is handled by us through `authenticate`;
/// `type: "terminal"` is run by the client as our command with `args` appended.
#[derive(Debug, Serialize)]
pub struct AuthMethod {
    pub id: &'static str,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `terminal`, or none (an `agent` method).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// A terminal method's arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<&'static str>,
}

/// `agentCapabilities.auth`.
#[derive(Debug, Default, Serialize)]
pub struct AgentAuthCapabilities {
    /// `logout` (`{}` = supported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logout: Option<Empty>,
}

/// `authenticate` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateRequest {
    /// One of the ids `initialize` offered.
    pub method_id: String,
}
