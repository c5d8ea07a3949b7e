//! Which network targets are internal: loopback, private, link-local (cloud metadata),
//! shared CGNAT space, unspecified, multicast and broadcast addresses, their IPv4-mapped
//! and embedded IPv6 forms, and the well-known names of metadata services. `judge`
//! resolves a host once and judges the name and every address; `pinned` is an agent that
//! connects only to the addresses judged (no second lookup: DNS rebinding). `web_fetch`
//! judges every hop with them, and the MCP client a URL its client sent.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Instant;

use crossbeam_channel::{Receiver, select};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// What a host resolved to, and whether that is internal.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Every address it resolved to (empty: only the HTTP proxy resolves it).
    pub addrs: Vec<SocketAddr>,
    /// Why it is internal, if it is (a name only the proxy resolves counts).
    pub internal: Option<String>,
}

/// Why a host could not be judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unjudged {
    /// The cancel channel fired.
    Cancelled,
    /// It does not resolve (or not before the deadline), and no proxy would resolve it.
    Unresolved,
    /// The resolver thread could not start.
    NoThread(String),
}

/// Resolves `host` (lowercase, IPv6 without brackets) once on its own thread, giving up
/// at `deadline` or when `cancel` fires, and judges the name and every address. `thread`
/// names the resolver thread.
pub fn judge(
    host: &str,
    port: u16,
    deadline: Instant,
    cancel: &Receiver<()>,
    thread: &str,
) -> Result<Judged, Unjudged> {
    let by_name = internal_name(host);
    let literal = host.parse::<IpAddr>().ok();
    let addrs = if let Some(ip) = literal {
        vec![SocketAddr::new(ip, port)]
    } else {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let query = (host.to_string(), port);
        std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || {
                let _ = tx.send(query.to_socket_addrs().map(|a| a.collect::<Vec<_>>()));
            })
            .map_err(|err| Unjudged::NoThread(err.to_string()))?;
        let resolved = select! {
            recv(rx) -> answer => answer.ok(),
            recv(cancel) -> _ => return Err(Unjudged::Cancelled),
            recv(crossbeam_channel::at(deadline)) -> _ => None,
        };
        match resolved {
            Some(Ok(addrs)) if !addrs.is_empty() => addrs,
            // Through a proxy the proxy resolves the name: judged by the name alone.
            _ if proxied() => Vec::new(),
            _ => return Err(Unjudged::Unresolved),
        }
    };
    let by_addr = addrs.iter().find_map(|a| internal_reason(a.ip()).map(|why| (a.ip(), why)));
    let internal = by_name.map(str::to_string).or_else(|| {
        by_addr.map(
            |(ip, why)| {
                if literal.is_some() { why.to_string() } else { format!("{why} ({ip})") }
            },
        )
    });
    // A name only the proxy resolves cannot be judged here: it counts as internal.
    let internal = internal.or_else(|| {
        (addrs.is_empty() && literal.is_none())
            .then(|| "a name only the HTTP proxy resolves (it cannot be checked here)".into())
    });
    Ok(Judged { addrs, internal })
}

/// Whether an HTTP proxy is configured.
fn proxied() -> bool {
    ureq::Proxy::try_from_env().is_some()
}

/// An agent with `config` that connects to `host` only at `addrs` (the addresses judged);
/// other names (a proxy) resolve as usual.
pub fn pinned(config: ureq::config::Config, host: &str, addrs: Vec<SocketAddr>) -> ureq::Agent {
    let resolver = Pinned { host: host.to_string(), addrs };
    ureq::Agent::with_parts(config, DefaultConnector::new(), resolver)
}

/// A resolver that answers with the addresses already judged for one host.
#[derive(Debug)]
struct Pinned {
    host: String,
    addrs: Vec<SocketAddr>,
}

impl Resolver for Pinned {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
        if host.eq_ignore_ascii_case(&self.host) {
            if self.addrs.is_empty() {
                return Err(ureq::Error::HostNotFound);
            }
            let mut out = self.empty();
            for addr in self.addrs.iter().take(16) {
                out.push(*addr);
            }
            return Ok(out);
        }
        DefaultResolver::default().resolve(uri, config, timeout)
    }
}

/// Names that always mean an internal target: localhost and the cloud metadata services.
const INTERNAL_NAMES: &[&str] = &[
    "localhost",
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.com",
    "metadata.tencentyun.com",
    "100-100-100-200.metadata",
];

/// Why a host name alone is internal (a loopback or metadata service name), if it is.
pub fn internal_name(host: &str) -> Option<&'static str> {
    let host = host.trim_end_matches('.');
    if host == "localhost" || host.ends_with(".localhost") {
        return Some("a loopback name");
    }
    INTERNAL_NAMES.contains(&host).then_some("a cloud metadata service name")
}

/// Why an address is internal (not on the public Internet), if it is: loopback, private
/// (RFC 1918, `fc00::/7`), link-local (`169.254.0.0/16`, `fe80::/10`: the metadata
/// services), shared CGNAT space, unspecified, multicast or broadcast, IPv4-mapped and
/// embedded forms included.
pub fn internal_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return internal_v4(v4);
            }
            let seg = v6.segments();
            // IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96) embed an IPv4 address.
            if (seg[..6] == [0, 0, 0, 0, 0, 0] && !v6.is_loopback() && !v6.is_unspecified())
                || seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
            {
                let [a, b] = seg[6].to_be_bytes();
                let [c, d] = seg[7].to_be_bytes();
                return internal_v4(Ipv4Addr::new(a, b, c, d));
            }
            if v6.is_loopback() {
                Some("a loopback address")
            } else if v6.is_unspecified() {
                Some("the unspecified address")
            } else if seg[0] & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if seg[0] & 0xffc0 == 0xfe80 || seg[0] & 0xffc0 == 0xfec0 {
                Some("a link-local address")
            } else if seg[0] & 0xff00 == 0xff00 {
                Some("a multicast address")
            } else {
                None
            }
        }
    }
}

fn internal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address (where cloud metadata services answer)")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (CGNAT) address")
    } else if a == 0 {
        Some("an unspecified address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if a >= 240 {
        Some("a reserved or broadcast address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_named_in_every_form() {
        for internal in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            let ip: IpAddr = internal.parse().unwrap();
            assert!(internal_reason(ip).is_some(), "{internal} is internal");
        }
        for public in
            ["1.1.1.1", "8.8.8.8", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]
        {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(internal_reason(ip), None, "{public} is public");
        }
        for name in ["localhost", "api.localhost", "metadata.google.internal", "LOCALHOST."] {
            assert!(internal_name(&name.to_ascii_lowercase()).is_some(), "{name}");
        }
        assert_eq!(internal_name("example.com"), None);
    }
}
