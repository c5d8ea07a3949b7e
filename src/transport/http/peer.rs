//! Which local user is on the other end of a loopback TCP connection. Without a token the
//! HTTP server serves only the user it runs as: the client's socket is the one whose local
//! address is our peer's and whose remote address is ours, and its owner is asked of the
//! kernel (`NETLINK_SOCK_DIAG`, one exact lookup) or read from `/proc/net/tcp` (or
//! `tcp6`) where that is not available. Checked once per TCP connection.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};

/// Without a token, only the server's own user may connect: the owner of the client's
/// socket, whatever its source address (a local user can connect to 127.0.0.1 from any
/// address of the host), must be `uid`. A peer whose socket is not on this host is a
/// remote one: refused on a loopback bind, let in only on a non-loopback bind (which
/// `--allow-insecure-remote` allows without a token). With a token nothing is checked here.
pub fn same_user(
    token: bool,
    loopback_bind: bool,
    uid: u32,
    stream: &TcpStream,
) -> Result<(), String> {
    if token {
        return Ok(());
    }
    let (Ok(local), Ok(peer)) = (stream.local_addr(), stream.peer_addr()) else {
        return Err("refused a connection: cannot tell who connected".to_string());
    };
    match owner(local, peer) {
        Some(owner) if owner == uid => Ok(()),
        Some(owner) => {
            Err(format!("refused a connection from {peer}: uid {owner} is not uid {uid}"))
        }
        None if !loopback_bind => Ok(()),
        None => Err(format!("refused a connection from {peer}: its owner cannot be found")),
    }
}

/// The uid that owns the socket at `peer` connected to `local`, if it is found: asked of
/// the kernel for that one socket (`NETLINK_SOCK_DIAG`), else looked up in
/// `/proc/net/tcp*` (kernels without `inet_diag`).
pub fn owner(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (canonical(local), canonical(peer));
    match crate::sys::tcp_owner(peer, local) {
        Ok(found) => return found,
        Err(err) => log::debug!("sock_diag: {err}; reading /proc/net/tcp instead"),
    }
    proc_owner(local, peer)
}

/// `owner` from the `/proc/net/tcp*` listing.
fn proc_owner(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let file = if peer.is_ipv4() { "/proc/net/tcp" } else { "/proc/net/tcp6" };
    let reader = BufReader::new(std::fs::File::open(file).ok()?);
    for line in reader.lines().skip(1) {
        let line = line.ok()?;
        if let Some(uid) = matching_owner(&line, peer, local) {
            return Some(uid);
        }
    }
    None
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is (that is how the kernel lists the
/// client's IPv4 socket).
fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

/// The uid of one `/proc/net/tcp*` line when its local address is `socket` and its remote
/// address is `remote` (and it has an inode: a live socket, not a time-wait remnant).
fn matching_owner(line: &str, socket: SocketAddr, remote: SocketAddr) -> Option<u32> {
    let mut fields = line.split_whitespace();
    let _slot = fields.next()?;
    let local = parse_addr(fields.next()?)?;
    let rem = parse_addr(fields.next()?)?;
    if local != socket || rem != remote {
        return None;
    }
    // st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
    let mut rest = fields.skip(4);
    let uid = rest.next()?.parse().ok()?;
    let _timeout = rest.next()?;
    let inode: u64 = rest.next()?.parse().ok()?;
    (inode != 0).then_some(uid)
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): each 32-bit word is printed
/// in the kernel's byte order.
fn parse_addr(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(u32::from_str_radix(ip, 16).ok()?.to_ne_bytes())),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                let word = u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
                chunk.copy_from_slice(&word.to_ne_bytes());
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(canonical(SocketAddr::new(ip, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_owner_of_our_own_client_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, peer) = listener.accept().unwrap();
        let local = server_side.local_addr().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let me = Some(crate::sys::effective_uid());
        assert_eq!(owner(local, peer), me);
        assert_eq!(proc_owner(local, peer), me, "the /proc fallback agrees");
        assert_eq!(crate::sys::tcp_owner(peer, local).ok().flatten(), me, "so does sock_diag");
        // Nobody owns a socket that does not exist.
        let nowhere = SocketAddr::from(([127, 0, 0, 1], 1));
        assert_eq!(owner(local, nowhere), None);
        assert_eq!(proc_owner(local, nowhere), None);
    }

    #[test]
    fn parses_kernel_addresses() {
        let v4 = parse_addr("0100007F:1F90").unwrap();
        assert_eq!(v4, SocketAddr::from(([127, 0, 0, 1], 8080)));
        let v6 = parse_addr("00000000000000000000000001000000:0050").unwrap();
        assert_eq!(v6, "[::1]:80".parse().unwrap());
        let mapped = parse_addr("0000000000000000FFFF00000100007F:0050").unwrap();
        assert_eq!(mapped, SocketAddr::from(([127, 0, 0, 1], 80)));
    }
}
