//! Where a server's connection may go. A URL a client sent is judged like a `web_fetch`
//! target: its host is resolved once and the name and every address judged
//! (`tools::address`); an internal one (loopback, private, link-local, metadata) is refused
//! unless the node allows it (`IAC_CODE_MCP_INTERNAL=allow`), and the connection goes only
//! to the addresses judged, so a name cannot resolve elsewhere later. The node's own
//! entries (`settings.json`, an approved `.mcp.json`) are its user's choice and go as
//! written. A project server starts only while its file's approval holds, the programs
//! it runs included: checked at every start, a restart too.

use std::time::Instant;

use super::Setup;
use super::project;
use super::spec::{Origin, ServerSpec};
use crate::tools::address::{self, Judged, Unjudged};

/// A pinned agent for the HTTP server of `spec` at `url`: `None` (the session's config will
/// do) unless it is a client's URL
/// under `IAC_CODE_MCP_INTERNAL=deny`, then one pinned to the public addresses judged.
pub(super) fn agent_for(
    spec: &ServerSpec,
    url: &str,
    setup: &Setup,
    deadline: Instant,
) -> Result<Option<ureq::Agent>, String> {
    if spec.origin != Origin::Client || setup.client_internal {
        return Ok(None);
    }
    let shown = spec.transport.describe();
    let uri: ureq::http::Uri = url.parse().map_err(|_| format!("'{shown}' is not a valid URL"))?;
    let https = uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https"));
    let host = uri.host().ok_or_else(|| format!("'{shown}' names no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let never = crossbeam_channel::never::<()>();
    // A name that is internal by itself is refused before any lookup.
    let judged = match address::internal_name(&host) {
        Some(why) => Judged { addrs: Vec::new(), internal: Some(why.to_string()) },
        None => {
            address::judge(&host, port, deadline, &never, "mcp-dns").map_err(|why| match why {
                Unjudged::Unresolved => format!("{host} does not resolve"),
                Unjudged::Cancelled => "cancelled".to_string(),
                Unjudged::NoThread(err) => format!("cannot start the resolver thread: {err}"),
            })?
        }
    };
    if let Some(why) = judged.internal {
        return Err(format!(
            "{shown} is {why}: a client's MCP server may not reach internal addresses of \
             this node (its operator may allow it: IAC_CODE_MCP_INTERNAL=allow, or \
             mcpInternal in settings.json)"
        ));
    }
    Ok(Some(address::pinned(setup.agent.config().clone(), &host, judged.addrs)))
}

/// Whether `spec` may start now: a project's server only while its file's approval holds.
pub(super) fn may_start(spec: &ServerSpec, setup: &Setup) -> Result<(), String> {
    match (&setup.approvals, spec.origin) {
        (Some(config_dir), Origin::Project) => project::still_approved(&setup.cwd, config_dir),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::spec::Transport;
    use std::time::Duration;

    #[test]
    fn a_project_server_starts_only_while_its_approval_holds() {
        let dir = std::env::temp_dir().join(format!("iac-mcp-reach-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let config = dir.join("config");
        std::fs::write(dir.join("srv.py"), "print(1)").unwrap();
        let file = r#"{"mcpServers":{"a":{"command":"python3","args":["srv.py"]}}}"#;
        std::fs::write(dir.join(project::FILE), file).unwrap();
        let second = Duration::from_secs(1);
        let mut setup = crate::mcp::setup(&dir, second, second, None);
        setup.approvals = Some(config.clone());
        let transport = Transport::Stdio { command: "python3".into(), args: vec![], env: vec![] };
        let spec = |origin| ServerSpec { name: "a".into(), transport: transport.clone(), origin };
        assert!(may_start(&spec(Origin::Project), &setup).is_err(), "not approved yet");
        assert_eq!(may_start(&spec(Origin::Settings), &setup), Ok(()), "the node's own");
        project::ProjectFile::find(&dir).unwrap().approve(&config).unwrap();
        assert_eq!(may_start(&spec(Origin::Project), &setup), Ok(()));
        std::fs::write(dir.join("srv.py"), "print(2)").unwrap();
        let why = may_start(&spec(Origin::Project), &setup).unwrap_err();
        assert!(why.contains("srv.py changed since .mcp.json was approved"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_clients_internal_url_is_refused_before_any_connection() {
        let second = Duration::from_secs(1);
        let mut setup = crate::mcp::setup(std::path::Path::new("/"), second, second, None);
        setup.client_internal = false;
        let at = |url: &str, origin| ServerSpec {
            name: "w".into(),
            transport: Transport::Http { url: url.into(), headers: vec![] },
            origin,
        };
        let deadline = Instant::now() + second;
        for url in [
            "http://127.0.0.1:9/mcp",
            "http://[::1]/mcp",
            "http://169.254.169.254/",
            "http://localhost:8080/",
            "https://metadata.google.internal/",
        ] {
            let refused = agent_for(&at(url, Origin::Client), url, &setup, deadline).err();
            let why = refused.unwrap_or_else(|| panic!("{url} is internal"));
            assert!(why.contains("IAC_CODE_MCP_INTERNAL=allow"), "{why}");
            assert!(agent_for(&at(url, Origin::Settings), url, &setup, deadline).is_ok());
        }
        let url = "http://93.184.215.14/mcp";
        assert!(agent_for(&at(url, Origin::Client), url, &setup, deadline).is_ok(), "public");
    }
}
