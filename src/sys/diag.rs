//! The owner of one TCP socket, asked of the kernel by its exact address pair over
//! `NETLINK_SOCK_DIAG` (what `ss` uses): one request and one answer, whatever the number of
//! sockets on the host, where `/proc/net/tcp` is a listing of all of them.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NO_COOKIE: u32 = !0;

/// `nlmsghdr` followed by `inet_diag_req_v2` (with its `inet_diag_sockid`).
#[repr(C)]
struct Request {
    len: u32,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
    family: u8,
    protocol: u8,
    ext: u8,
    pad: u8,
    states: u32,
    sport: u16,
    dport: u16,
    src: [u8; 16],
    dst: [u8; 16],
    interface: u32,
    cookie: [u32; 2],
}

/// Offsets in the answer: `nlmsghdr` (16), then `inet_diag_msg`: family, state, timer,
/// retrans (4), the sockid (48), expires, rqueue, wqueue (12), uid, inode.
const UID_AT: usize = 16 + 4 + 48 + 12;
const INODE_AT: usize = UID_AT + 4;

fn bytes_of(ip: IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match ip {
        IpAddr::V4(v4) => out[..4].copy_from_slice(&v4.octets()),
        IpAddr::V6(v6) => out.copy_from_slice(&v6.octets()),
    }
    out
}

/// The uid owning the TCP socket whose local address is `socket` and whose remote address
/// is `remote` (both of one family). `Ok(None)`: no such socket.
pub fn tcp_owner(socket: SocketAddr, remote: SocketAddr) -> io::Result<Option<u32>> {
    let family = if socket.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: socket(2) with constant arguments; the descriptor is owned at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned to us, owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let request = Request {
        len: std::mem::size_of::<Request>() as u32,
        kind: SOCK_DIAG_BY_FAMILY,
        flags: NLM_F_REQUEST,
        seq: 1,
        pid: 0,
        family: family as u8,
        protocol: libc::IPPROTO_TCP as u8,
        ext: 0,
        pad: 0,
        states: !0,
        sport: socket.port().to_be(),
        dport: remote.port().to_be(),
        src: bytes_of(socket.ip()),
        dst: bytes_of(remote.ip()),
        interface: 0,
        cookie: [NO_COOKIE, NO_COOKIE],
    };
    // SAFETY: sockaddr_nl is plain data; zeroed is its "the kernel" address.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: sendto reads `request` (size given) and the address we own.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            (&request as *const Request).cast(),
            std::mem::size_of::<Request>(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut answer = [0u8; 512];
    let received = loop {
        // SAFETY: recv writes at most `answer.len()` bytes into our buffer.
        let n = unsafe { libc::recv(fd.as_raw_fd(), answer.as_mut_ptr().cast(), answer.len(), 0) };
        if n >= 0 {
            break n as usize;
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    };
    let u32_at = |at: usize| -> Option<u32> {
        answer.get(at..at + 4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    if received < 16 {
        return Err(io::Error::other("short sock_diag answer"));
    }
    let kind = u16::from_ne_bytes([answer[4], answer[5]]);
    if kind == NLMSG_ERROR {
        // nlmsgerr: a negative errno right after the header.
        let errno = u32_at(16).map_or(0, |e| e as i32);
        return match -errno {
            libc::ENOENT => Ok(None),
            0 => Ok(None),
            code => Err(io::Error::from_raw_os_error(code)),
        };
    }
    if kind != SOCK_DIAG_BY_FAMILY || received < INODE_AT + 4 {
        return Err(io::Error::other("unexpected sock_diag answer"));
    }
    let uid = u32_at(UID_AT).ok_or_else(|| io::Error::other("short sock_diag answer"))?;
    let inode = u32_at(INODE_AT).unwrap_or(0);
    Ok((inode != 0).then_some(uid))
}
