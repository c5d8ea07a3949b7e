//! The HTTP+SSE transport on our own small HTTP/1.1 layer: `std::net`, one thread per TCP
//! connection, blocking I/O, `httparse` for heads. Secure by default (loopback, optional
//! bearer token, Host and Origin checks), bounded everywhere (connections, heads, bodies,
//! read and write deadlines, replay buffers), and stopped cleanly by SIGTERM/SIGINT.

mod codes;
mod conn;
pub(crate) mod fuzz;
mod options;
mod origin;
mod peer;
mod request;
mod response;
mod routes;
mod sse;
mod ws;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use codes::Code;
use conn::AcpConn;
use request::{Limits, ReadError, Reader};
use ws::Outlet;

pub use options::{Engine, Engines, HttpArgs, Options};

use crate::error::{Error, Result};
use crate::sync::lock;
use crate::sys;

/// Time for a new connection to start its first request.
const FIRST_REQUEST: Duration = Duration::from_secs(10);
/// Time a kept-alive connection may stay silent between requests.
const KEEP_ALIVE_IDLE: Duration = Duration::from_secs(60);
/// Listen backlog.
const BACKLOG: i32 = 4096;

/// Everything the connection threads share.
pub(crate) struct Hub {
    engines: Arc<dyn Engines>,
    conns: Mutex<HashMap<String, Arc<AcpConn>>>,
    token: Option<String>,
    loopback: bool,
    args: HttpArgs,
    limits: Limits,
    stopping: AtomicBool,
    open_sockets: AtomicUsize,
    /// Our effective uid: the one user served without a token.
    uid: u32,
}

impl Hub {
    fn get(&self, id: &str) -> Option<Arc<AcpConn>> {
        lock(&self.conns).get(id).cloned()
    }

    /// A new ACP connection; a WebSocket's frames all go to its `outlet`.
    fn open(&self, outlet: Option<Arc<dyn Outlet>>) -> std::result::Result<Arc<AcpConn>, String> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err("the server is shutting down".to_string());
        }
        if lock(&self.conns).len() >= self.args.max_connections {
            return Err("too many ACP connections".to_string());
        }
        let conn = AcpConn::start(self.engines.start(), self.args.sse_buffer, outlet)
            .map_err(|err| format!("cannot start a connection: {err}"))?;
        lock(&self.conns).insert(conn.id.clone(), Arc::clone(&conn));
        Ok(conn)
    }

    fn close(&self, id: &str) {
        let conn = lock(&self.conns).remove(id);
        if let Some(conn) = conn {
            conn.close(self.stopping.load(Ordering::SeqCst));
            log::info!("connection {id} closed");
        }
    }

    fn authorized(&self, req: &request::Request) -> bool {
        let Some(token) = &self.token else { return true };
        let given =
            req.header("authorization").and_then(|h| h.strip_prefix("Bearer ")).unwrap_or("");
        constant_time_eq(given.trim().as_bytes(), token.as_bytes())
    }

    /// DNS-rebinding defence (`origin.rs`).
    fn check_origin(&self, req: &request::Request) -> std::result::Result<(), String> {
        origin::check(&self.args, self.loopback, req.header("host"), req.header("origin"))
    }
}

/// Compares without an early exit on the first differing byte (the time depends only on
/// the length of `b`, the secret's, never on where `a` differs).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, y) in b.iter().enumerate() {
        diff |= a.get(i).copied().unwrap_or(0) ^ y;
    }
    diff == 0
}

/// Resolves the address to bind and refuses a non-loopback one without a token (unless
/// `--allow-insecure-remote`).
pub fn check_bind(host: &str, port: u16, token: bool, args: &HttpArgs) -> Result<SocketAddr> {
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|err| Error::Usage(format!("invalid --host '{host}': {err}")))?
        .next()
        .ok_or_else(|| Error::Usage(format!("--host '{host}' resolves to nothing")))?;
    if !addr.ip().is_loopback() && !token && !args.allow_insecure_remote {
        return Err(Error::Usage(format!(
            "refusing to listen on {} without IACCODE_ACP_HTTP_TOKEN: set a token, or pass \
             --allow-insecure-remote",
            addr.ip()
        )));
    }
    Ok(addr)
}

/// Binds, reports the address through `ready`, and serves until SIGTERM or SIGINT.
pub fn serve(
    engines: Arc<dyn Engines>,
    options: Options,
    ready: &mut dyn FnMut(&str),
) -> Result<()> {
    let addr = check_bind(&options.host, options.port, options.token.is_some(), &options.args)?;
    let loopback = addr.ip().is_loopback();
    sys::block_termination_signals().map_err(Error::Stream)?;
    let listener = TcpListener::bind(addr)
        .map_err(|err| Error::Usage(format!("cannot listen on {addr}: {err}")))?;
    let _ = sys::set_backlog(&listener, BACKLOG);
    let local = listener.local_addr().map_err(Error::Stream)?;
    let limits = Limits {
        max_head: 64 << 10,
        max_headers: 64,
        max_body: options.args.max_body,
        head_timeout: Duration::from_secs(options.args.request_timeout),
        body_timeout: Duration::from_secs(options.args.request_timeout),
    };
    let hub = Arc::new(Hub {
        engines,
        conns: Mutex::default(),
        token: options.token,
        loopback,
        args: options.args,
        limits,
        stopping: AtomicBool::new(false),
        open_sockets: AtomicUsize::new(0),
        uid: sys::effective_uid(),
    });
    start_signal_thread(Arc::clone(&hub), local)?;
    start_reaper(Arc::clone(&hub))?;
    let shown = match local.ip() {
        IpAddr::V6(ip) => format!("http://[{ip}]:{}/acp", local.port()),
        IpAddr::V4(ip) => format!("http://{ip}:{}/acp", local.port()),
    };
    log::info!("listening on {shown}");
    match &hub.token {
        Some(_) => log::info!("protection: a bearer token (IACCODE_ACP_HTTP_TOKEN) is required"),
        None => log::info!(
            "protection: no token; only uid {} (this server's user) may connect over loopback",
            hub.uid
        ),
    }
    ready(&shown);
    accept_loop(&hub, &listener);
    shutdown(&hub);
    Ok(())
}

fn accept_loop(hub: &Arc<Hub>, listener: &TcpListener) {
    let mut n: u64 = 0;
    for stream in listener.incoming() {
        if hub.stopping.load(Ordering::SeqCst) {
            return;
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(err) => {
                // Out of descriptors or memory: back off instead of spinning.
                log::warn!("accept failed: {err}");
                thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if hub.open_sockets.load(Ordering::SeqCst) >= hub.args.max_connections {
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = response::error(
                &stream,
                (503, Code::Unavailable),
                "too many connections",
                &[("Retry-After", "1")],
                false,
            );
            continue;
        }
        n += 1;
        hub.open_sockets.fetch_add(1, Ordering::SeqCst);
        let worker = Arc::clone(hub);
        let spawned = thread::Builder::new().name(format!("http-{n}")).spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| serve_socket(&worker, &stream)));
            if outcome.is_err() {
                log::error!("a request handler panicked; its connection was closed");
            }
            worker.open_sockets.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(err) = spawned {
            hub.open_sockets.fetch_sub(1, Ordering::SeqCst);
            log::warn!("cannot start a connection thread: {err}");
        }
    }
}

fn serve_socket(hub: &Hub, stream: &TcpStream) {
    let _ = stream.set_nodelay(true);
    if let Err(why) = peer::same_user(hub.token.is_some(), hub.loopback, hub.uid, stream) {
        log::warn!("{why}");
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let body = format!(
            "{why}. Without IACCODE_ACP_HTTP_TOKEN this server serves only the user who \
             started it; set IACCODE_ACP_HTTP_TOKEN (and send it as a bearer token) to let \
             other users in"
        );
        let _ = response::error(stream, (403, Code::Forbidden), &body, &[], false);
        linger(stream);
        return;
    }
    let mut reader = Reader::new(stream);
    let mut idle = FIRST_REQUEST;
    loop {
        let mut go_on = || response::write_all(stream, b"HTTP/1.1 100 Continue\r\n\r\n");
        let mut admit = |head: &request::Request| routes::admit(hub, head);
        let request = match reader.next(&hub.limits, idle, &mut admit, &mut go_on) {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Refused(refusal)) => {
                let status = (refusal.status, Code::of_status(refusal.status));
                let _ = response::error(stream, status, &refusal.why, &refusal.headers, false);
                linger(stream);
                return;
            }
            Err(ReadError::Io(err)) => {
                log::debug!("connection dropped: {err}");
                return;
            }
            Err(ReadError::Status(status, why)) => {
                let _ = response::error(stream, (status, Code::of_status(status)), why, &[], false);
                linger(stream);
                return;
            }
        };
        idle = KEEP_ALIVE_IDLE;
        if hub.stopping.load(Ordering::SeqCst) {
            let shutting = (503, Code::Unavailable);
            let _ = response::error(stream, shutting, "the server is shutting down", &[], false);
            return;
        }
        if ws::is_upgrade(&request) {
            return ws::serve(hub, stream, &request, reader.take_buffered());
        }
        match routes::handle(hub, stream, request) {
            routes::Next::KeepAlive => {}
            routes::Next::Close => return,
        }
    }
}

/// After an early error, lets the client's pending bytes drain briefly so that closing
/// does not reset the connection before the client read the answer.
fn linger(stream: &TcpStream) {
    use std::io::Read;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 8192];
    let mut reader = stream;
    for _ in 0..128 {
        match reader.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn start_signal_thread(hub: Arc<Hub>, local: SocketAddr) -> Result<()> {
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Ok(signal) = sys::wait_for_termination() {
                log::info!("signal {signal}: shutting down");
                hub.stopping.store(true, Ordering::SeqCst);
                // Wake the accept loop.
                let _ = TcpStream::connect_timeout(&wake_address(local), Duration::from_secs(1));
            }
        })
        .map(|_| ())
        .map_err(Error::Stream)
}

fn wake_address(local: SocketAddr) -> SocketAddr {
    match local.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::from(([127, 0, 0, 1], local.port())),
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::from(([0, 0, 0, 0, 0, 0, 0, 1], local.port()))
        }
        _ => local,
    }
}

/// Closes connections that overflowed or stayed idle too long.
fn start_reaper(hub: Arc<Hub>) -> Result<()> {
    let idle = Duration::from_secs(hub.args.idle_timeout);
    let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(1));
    thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            while !hub.stopping.load(Ordering::SeqCst) {
                thread::sleep(every);
                let stale: Vec<(String, bool)> = lock(&hub.conns)
                    .values()
                    .filter(|c| c.is_closed() || c.idle_for(idle))
                    .map(|c| (c.id.clone(), c.is_closed()))
                    .collect();
                for (id, overflowed) in stale {
                    if !overflowed {
                        log::info!("connection {id} expired after {} s idle", idle.as_secs());
                    }
                    let hub = Arc::clone(&hub);
                    let _ =
                        thread::Builder::new().name("close".into()).spawn(move || hub.close(&id));
                }
            }
        })
        .map(|_| ())
        .map_err(Error::Stream)
}

/// Stops: every connection cancels its prompts, syncs its journals and ends its streams.
fn shutdown(hub: &Arc<Hub>) {
    let ids: Vec<String> = lock(&hub.conns).keys().cloned().collect();
    let closers: Vec<_> = ids
        .into_iter()
        .filter_map(|id| {
            let hub = Arc::clone(hub);
            thread::Builder::new().name("close".into()).spawn(move || hub.close(&id)).ok()
        })
        .collect();
    for closer in closers {
        let _ = closer.join();
    }
    // Let the stream writers finish what was queued (the prompts' `cancelled` answers)
    // and end their streams.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while hub.open_sockets.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    log::info!("all connections closed");
}
