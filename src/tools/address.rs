//! Which network targets are internal: loopback, private, link-local (cloud metadata),
//! shared CGNAT space, unspecified, multicast and broadcast addresses, their IPv4-mapped
//! and embedded IPv6 forms, and the well-known names of metadata services.

use std::net::{IpAddr, Ipv4Addr};

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

pub(super) fn internal_name(host: &str) -> Option<&'static str> {
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
