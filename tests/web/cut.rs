//! The cutting proxy itself, between plain sockets and two echo servers: a cut ends a
//! live transfer, a connection made after it works, and `set_backend` moves only the
//! connections that come later.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::cut_proxy::CutProxy;

/// An echo server that puts `tag` before each piece it sends back.
fn echo(tag: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    let mut reply = tag.as_bytes().to_vec();
                    reply.extend_from_slice(&buf[..n]);
                    if stream.write_all(&reply).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

fn connect(proxy: &CutProxy) -> TcpStream {
    let stream = TcpStream::connect(proxy.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
}

/// Sends `text` and reads the whole answer of `want` bytes.
fn round_trip(stream: &mut TcpStream, text: &str, want: usize) -> String {
    stream.write_all(text.as_bytes()).unwrap();
    let mut got = vec![0u8; want];
    stream.read_exact(&mut got).unwrap();
    String::from_utf8(got).unwrap()
}

#[test]
fn a_cut_ends_live_connections_and_new_ones_work() {
    let proxy = CutProxy::start(echo("A:"));
    let mut first = connect(&proxy);
    let mut second = connect(&proxy);
    assert_eq!(round_trip(&mut first, "hello", 7), "A:hello");
    assert_eq!(round_trip(&mut second, "there", 7), "A:there");
    assert_eq!(proxy.open(), 2);
    assert_eq!(proxy.cut(), 2);
    for stream in [&mut first, &mut second] {
        let mut buf = [0u8; 16];
        match stream.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => panic!("{n} bytes after the cut"),
            Err(e) => assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "the cut did not end the connection: {e}"
            ),
        }
    }
    assert_eq!(proxy.cut(), 0, "nothing is left open");
    let mut after = connect(&proxy);
    assert_eq!(round_trip(&mut after, "again", 7), "A:again");
    assert_eq!(proxy.connections(), 3);
}

#[test]
fn set_backend_moves_only_later_connections() {
    let proxy = CutProxy::start(echo("A:"));
    let mut old = connect(&proxy);
    assert_eq!(round_trip(&mut old, "x", 3), "A:x");
    proxy.set_backend(echo("B:"));
    let mut new = connect(&proxy);
    assert_eq!(round_trip(&mut new, "y", 3), "B:y");
    assert_eq!(round_trip(&mut old, "z", 3), "A:z", "an open connection stays where it was");
    assert_eq!(proxy.cut(), 2);
}

#[test]
fn a_closed_connection_leaves_the_open_list() {
    let proxy = CutProxy::start(echo("A:"));
    let mut stream = connect(&proxy);
    assert_eq!(round_trip(&mut stream, "q", 3), "A:q");
    drop(stream);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while proxy.open() > 0 {
        assert!(std::time::Instant::now() < deadline, "the closed connection is still listed");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(proxy.cut(), 0);
}
