//! The WebSocket profile of `/acp` (RFC 6455; the ACP remote-transport draft). A GET with
//! `Upgrade: websocket` has been judged like any request (`routes::admit`: Host, Origin,
//! token; the socket's peer before that); we answer the handshake ourselves (SHA-1 and
//! base64 of the key) with `101` and the new connection's `Acp-Connection-Id`. The socket
//! is then one ACP connection (an `AcpConn` whose `Outlet` is this socket): one JSON-RPC
//! message per text frame each way, `initialize` first as over POST. tungstenite only
//! frames. This thread reads; a `ws-<id8>` thread writes (messages, pongs, a ping every
//! 15 s, the close frame). A socket silent for three pings, or gone, ends the connection
//! like a DELETE: its prompts are cancelled and its sessions freed.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig, WebSocketContext};
use tungstenite::{Bytes, Message};

use super::Hub;
use super::codes::Code;
use super::request::Request;
use super::response;
use crate::jsonrpc;

/// RFC 6455's GUID, appended to the client's key before hashing.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// A ping this often keeps the socket alive and proves the client still reads.
const HEARTBEAT: Duration = Duration::from_secs(15);
/// A client silent this long (no frame at all, pongs included) is gone.
const SILENCE: Duration = Duration::from_secs(45);
/// Longest time one write may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes queued toward a client that does not read before it is cut off.
const QUEUE_BYTES: usize = 4 << 20;

/// Whether a request asks for the WebSocket upgrade.
pub(super) fn is_upgrade(req: &Request) -> bool {
    req.method == "GET"
        && req.path == "/acp"
        && req.header("upgrade").is_some_and(|value| has_token(value, "websocket"))
}

fn has_token(value: &str, token: &str) -> bool {
    value.split(',').any(|part| part.trim().eq_ignore_ascii_case(token))
}

/// The `Sec-WebSocket-Accept` value for a client's key.
pub(crate) fn accept_key(key: &str) -> String {
    let mut sha = sha1_smol::Sha1::new();
    sha.update(key.trim().as_bytes());
    sha.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes())
}

type Refused = (u16, &'static str, &'static [(&'static str, &'static str)]);

/// The handshake's key, or the status, reason and headers of a refusal.
fn handshake_key(req: &Request) -> Result<&str, Refused> {
    if req.header("sec-websocket-version").map(str::trim) != Some("13") {
        let version = &[("Sec-WebSocket-Version", "13")];
        return Err((426, "only WebSocket version 13 is served", version));
    }
    if !req.headers.iter().any(|(name, value)| name == "connection" && has_token(value, "upgrade"))
    {
        return Err((400, "a WebSocket upgrade needs 'Connection: Upgrade'", &[]));
    }
    let key = req.header("sec-websocket-key").unwrap_or("").trim();
    let decoded = base64::engine::general_purpose::STANDARD.decode(key);
    if !decoded.is_ok_and(|bytes| bytes.len() == 16) {
        return Err((400, "Sec-WebSocket-Key must be 16 bytes in base64", &[]));
    }
    if !req.body.is_empty() {
        return Err((400, "a WebSocket upgrade has no body", &[]));
    }
    Ok(key)
}

fn config(max_message: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(16 << 10)
        .write_buffer_size(64 << 10)
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
}

/// Where every frame of a WebSocket connection goes, instead of an `AcpConn`'s streams.
pub trait Outlet: Send + Sync {
    /// Queues one JSON-RPC message; never blocks.
    fn send(&self, frame: &[u8]);
    /// The connection was closed on our side: say so to the client and end the socket.
    fn close(&self, going_away: bool);
}

/// What the writer thread sends.
enum Out {
    Text(Vec<u8>),
    Pong(Bytes),
    Close(CloseCode, &'static str),
}

/// The socket as the connection's router sees it.
struct Socket {
    tx: Sender<Out>,
    queued: Arc<AtomicUsize>,
    socket: TcpStream,
}

impl Outlet for Socket {
    fn send(&self, frame: &[u8]) {
        let queued = self.queued.fetch_add(frame.len(), Ordering::SeqCst) + frame.len();
        if queued > QUEUE_BYTES {
            // A client that does not read: its writer is stuck in a write; cut it off (the
            // reader then wakes and closes the connection).
            if queued - frame.len() <= QUEUE_BYTES {
                log::info!("websocket: the client stopped reading; closed it");
            }
            let _ = self.socket.shutdown(Shutdown::Both);
            return;
        }
        let _ = self.tx.send(Out::Text(frame.to_vec()));
    }

    fn close(&self, going_away: bool) {
        let _ = self.tx.send(if going_away {
            Out::Close(CloseCode::Away, "the server is shutting down")
        } else {
            Out::Close(CloseCode::Normal, "the connection was closed")
        });
    }
}

/// Serves one upgraded socket until it ends. `early` holds bytes the HTTP reader took
/// past the handshake's head.
pub(super) fn serve(hub: &Hub, stream: &TcpStream, req: &Request, early: Vec<u8>) {
    let key = match handshake_key(req) {
        Ok(key) => key,
        Err((status, why, headers)) => {
            let _ = response::error(stream, (status, Code::of_status(status)), why, headers, false);
            return;
        }
    };
    let (Ok(writer), Ok(shut)) = (stream.try_clone(), stream.try_clone()) else { return };
    let (tx, rx) = crossbeam_channel::unbounded();
    let queued = Arc::new(AtomicUsize::new(0));
    let socket = Socket { tx: tx.clone(), queued: Arc::clone(&queued), socket: shut };
    let conn = match hub.open(Some(Arc::new(socket))) {
        Ok(conn) => conn,
        Err(why) => {
            let busy = (503, Code::Unavailable);
            let _ = response::error(stream, busy, &why, &[("Retry-After", "1")], false);
            return;
        }
    };
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\nAcp-Connection-Id: {}\r\n\r\n",
        accept_key(key),
        conn.id
    );
    if response::write_all(stream, head.as_bytes()).is_err() {
        hub.close(&conn.id);
        return;
    }
    log::info!("connection {} opened as a WebSocket", conn.id);
    let max = usize::try_from(hub.limits.max_body).unwrap_or(usize::MAX);
    let name = format!("ws-{}", &conn.id[..8]);
    let written =
        thread::Builder::new().name(name).spawn(move || write_loop(writer, &rx, &queued, max));
    let ending = read_loop(stream, early, max, &tx, &|inbound| conn.submit(inbound));
    // Say why first, then stop the connection's work (its last answers have nowhere to go).
    let (code, why) = ending.unwrap_or((CloseCode::Away, "gone"));
    let _ = tx.send(Out::Close(code, why));
    drop(tx);
    hub.close(&conn.id);
    if let Ok(writer) = written {
        let _ = writer.join();
    }
    let _ = stream.shutdown(Shutdown::Both);
    log::info!("connection {} (WebSocket) ended: {why}", conn.id);
}

/// The reading side: a socket whose writes go nowhere (the writer thread sends the pongs
/// and the close frame that tungstenite would queue here).
struct ReadSide<'a>(&'a TcpStream);

impl Read for ReadSide<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut stream = self.0;
        stream.read(buf)
    }
}

impl Write for ReadSide<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads frames until the socket ends; the close code to send, or `None` when the client
/// is gone.
fn read_loop(
    stream: &TcpStream,
    early: Vec<u8>,
    max: usize,
    tx: &Sender<Out>,
    submit: &dyn Fn(jsonrpc::Inbound) -> bool,
) -> Option<(CloseCode, &'static str)> {
    let _ = stream.set_read_timeout(Some(SILENCE));
    let mut context = WebSocketContext::from_partially_read(early, Role::Server, Some(config(max)));
    let mut side = ReadSide(stream);
    loop {
        let message = match context.read(&mut side) {
            Ok(message) => message,
            Err(err) => return ending(&err),
        };
        match message {
            Message::Text(text) => {
                if !submit(jsonrpc::parse(text.as_bytes())) {
                    return Some((CloseCode::Policy, "the connection is closing or too busy"));
                }
            }
            Message::Binary(_) => {
                return Some((CloseCode::Unsupported, "ACP messages are text frames"));
            }
            Message::Ping(data) => {
                let _ = tx.send(Out::Pong(data));
            }
            Message::Pong(_) | Message::Frame(_) => {}
            Message::Close(_) => return Some((CloseCode::Normal, "closed by the client")),
        }
    }
}

/// The close code for a read error; `None` when the socket is gone (nothing to say).
fn ending(err: &tungstenite::Error) -> Option<(CloseCode, &'static str)> {
    use tungstenite::Error as E;
    match err {
        E::Capacity(_) => Some((CloseCode::Size, "message too big")),
        E::Utf8(_) => Some((CloseCode::Invalid, "text frames must be UTF-8")),
        E::Protocol(tungstenite::error::ProtocolError::ResetWithoutClosingHandshake) => None,
        E::Protocol(_) | E::AttackAttempt => {
            Some((CloseCode::Protocol, "WebSocket protocol error"))
        }
        E::Io(err) if matches!(err.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
            Some((CloseCode::Away, "no answer to pings"))
        }
        _ => None,
    }
}

/// Writes what the connection sends, a ping every 15 s, and the close frame
/// (then stops). Gives up on the first failed write.
fn write_loop(mut stream: TcpStream, rx: &Receiver<Out>, queued: &AtomicUsize, max: usize) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut context = WebSocketContext::new(Role::Server, Some(config(max)));
    // A ping every HEARTBEAT even while messages stream: the client's pongs are what its
    // reader sees when the client has nothing to say.
    let mut pinged = Instant::now();
    loop {
        let first = match rx.recv_timeout(HEARTBEAT.saturating_sub(pinged.elapsed())) {
            Ok(out) => Some(out),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        // Everything already waiting goes out in one flush.
        let mut next = first;
        let mut closing = false;
        let mut result = Ok(());
        while let Some(out) = next.take() {
            result = match out {
                Out::Text(bytes) => {
                    queued.fetch_sub(bytes.len(), Ordering::SeqCst);
                    match String::from_utf8(bytes) {
                        Ok(text) => context.write(&mut stream, Message::text(text)),
                        Err(_) => Ok(()),
                    }
                }
                Out::Pong(data) => context.write(&mut stream, Message::Pong(data)),
                Out::Close(code, why) => {
                    closing = true;
                    let frame = CloseFrame { code, reason: why.into() };
                    context.close(&mut stream, Some(frame))
                }
            };
            if result.is_err() || closing {
                break;
            }
            next = rx.try_recv().ok();
        }
        if result.is_ok() && !closing && pinged.elapsed() >= HEARTBEAT {
            pinged = Instant::now();
            result = context.write(&mut stream, Message::Ping(Bytes::new()));
        }
        if result.is_ok() && !closing {
            result = context.flush(&mut stream);
        }
        if result.is_err() || closing {
            break;
        }
    }
    // The client may still send its close frame; it gets no more from us.
    let _ = stream.shutdown(Shutdown::Write);
}
