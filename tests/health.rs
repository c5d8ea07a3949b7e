//! `GET /health` tells a caller without the token only what a balancer needs: the status,
//! and the node's name when the operator gave one; never the host name or the pid. With
//! the token (or on a server that needs none) it tells everything.

use serde_json::json;

use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

#[test]
fn health_without_the_token_says_only_the_status() {
    let ws = Workspace::new("health-brief");
    let token = ("IACCODE_ACP_HTTP_TOKEN", "s3cret");
    let server = HttpServer::spawn(&ws, None, &[], &[token]);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let pid = server.pid().to_string();
    for auth in [None, Some("Bearer wrong")] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let health = server.request("GET", "/health", &headers, b"");
        assert_eq!(health.status, 200, "{auth:?}");
        assert_eq!(health.json(), json!({"status": "ok"}), "{auth:?}");
        let body = String::from_utf8_lossy(&health.body).into_owned();
        assert!(!body.contains(host.trim()) && !body.contains(&pid), "{body}");
    }
    let full = server.request("GET", "/health", &[("Authorization", "Bearer s3cret")], b"");
    let body = full.json();
    assert_eq!(body["status"], "ok");
    assert!(body["node"].as_str().is_some_and(|n| n.ends_with(&format!("-{pid}"))), "{body}");
    assert_eq!(body["store"]["ok"], true, "{body}");
    drop(server);

    // A name the operator gave is for the balancer to see.
    let named = HttpServer::spawn(&ws, None, &["--node-id", "edge-1"], &[token]);
    let health = named.request("GET", "/health", &[], b"");
    assert_eq!(health.json(), json!({"status": "ok", "node": "edge-1"}));
}
