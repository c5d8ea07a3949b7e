//! Host and Origin: the DNS-rebinding and cross-site defence of every request, judged on
//! its head. On a loopback bind `Host` must name the loopback (or an `--allowed-host`);
//! an `Origin`, when a browser sends one, must be the server's own (the web page it
//! serves, whose origin is the `Host` it was loaded from) or an `--allowed-origin`. A page
//! on any other origin, another loopback port included, is refused: without a token a
//! loopback server trusts its own user's sockets, and a browser is one of them.

use super::options::HttpArgs;

/// `Ok` if a request with these `Host` and `Origin` headers may go on, else why not.
pub(super) fn check(
    args: &HttpArgs,
    loopback: bool,
    host: Option<&str>,
    origin: Option<&str>,
) -> Result<(), String> {
    let host = host.unwrap_or("");
    let name = host_name(host);
    let host_ok = args
        .allowed_hosts
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name) || h.eq_ignore_ascii_case(host))
        || if loopback { is_loopback_name(name) } else { args.allowed_hosts.is_empty() };
    if !host_ok {
        return Err(format!("Host '{host}' is not allowed"));
    }
    if let Some(origin) = origin {
        let allowed = args.allowed_origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
            || same_origin(origin, host);
        if !allowed {
            return Err(format!("Origin '{origin}' is not allowed"));
        }
    }
    Ok(())
}

/// Whether `origin` (`http://host:port`) names the authority of the `Host` header `host`,
/// a default port written or not.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else { return false };
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => ":80",
        "https" => ":443",
        _ => return false,
    };
    let bare = |a: &str| a.strip_suffix(default).unwrap_or(a).to_ascii_lowercase();
    !host.is_empty() && !authority.contains(['/', '@']) && bare(authority) == bare(host)
}

/// The name part of a `Host` value (`[::1]:8765` → `[::1]`, `LocalHost:1` → `LocalHost`).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    host.split(':').next().unwrap_or(host)
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost") || matches!(name, "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_servers_own_origin_or_a_named_one_passes() {
        let args = HttpArgs {
            allowed_origins: vec!["https://editor.example".into()],
            ..HttpArgs::default()
        };
        let judge = |host: &str, origin: &str| check(&args, true, Some(host), Some(origin)).is_ok();
        let cases = [
            ("127.0.0.1:8765", "http://127.0.0.1:8765", true),
            ("LocalHost:8765", "http://localhost:8765", true),
            ("[::1]:8765", "http://[::1]:8765", true),
            ("127.0.0.1:8765", "https://editor.example", true),
            ("127.0.0.1:8765", "http://127.0.0.1:3000", false),
            ("127.0.0.1:8765", "http://localhost:8765", false),
            ("127.0.0.1:8765", "http://127.0.0.1", false),
            ("127.0.0.1:8765", "null", false),
            ("127.0.0.1:8765", "file://127.0.0.1:8765", false),
            ("127.0.0.1:8765", "http://user@127.0.0.1:8765", false),
            ("127.0.0.1:8765", "http://evil.example", false),
        ];
        for (host, origin, want) in cases {
            assert_eq!(judge(host, origin), want, "Host {host}, Origin {origin}");
        }
        // Behind a proxy that terminates TLS: the default port may be written or not.
        let remote = HttpArgs::default();
        let judge =
            |host: &str, origin: &str| check(&remote, false, Some(host), Some(origin)).is_ok();
        assert!(judge("iac.team.example", "https://iac.team.example"));
        assert!(judge("iac.team.example:443", "https://IAC.team.example"));
        assert!(judge("iac.team.example", "http://iac.team.example:80"));
        assert!(!judge("iac.team.example", "https://evil.example"));
        assert!(!judge("", "https://iac.team.example"));
    }

    #[test]
    fn a_loopback_bind_needs_a_loopback_host() {
        let args = HttpArgs::default();
        assert!(check(&args, true, Some("evil.example:8765"), None).is_err());
        assert!(check(&args, true, Some("localhost.evil.example"), None).is_err());
        assert!(check(&args, true, None, None).is_err());
        assert!(check(&args, true, Some("[::1]:1"), None).is_ok());
        assert!(check(&args, false, Some("anything.example"), None).is_ok());
    }
}
