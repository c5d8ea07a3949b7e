//! A loopback TCP proxy for the "network cut" and "failover" tests: it forwards each
//! connection to the current backend (one thread per direction), [`CutProxy::cut`] ends
//! every connection open at that moment (both sockets, both ways) while new ones keep
//! working, [`CutProxy::set_backend`] sends later connections to another server (a
//! second node), and [`CutProxy::swallow`] makes the network eat what the server sends
//! (it leaves the server's socket and never reaches the client), as a link that dies
//! silently does before anyone notices.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One forwarded connection: the client's socket and the backend's.
struct Link {
    id: u64,
    client: TcpStream,
    backend: TcpStream,
}

impl Link {
    fn close(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.backend.shutdown(Shutdown::Both);
    }
}

struct Shared {
    backend: Mutex<SocketAddr>,
    open: Mutex<Vec<Link>>,
    accepted: AtomicUsize,
    next_id: AtomicU64,
    stopped: AtomicBool,
    /// Bytes from backends are read and dropped instead of forwarded.
    swallowing: AtomicBool,
    swallowed: AtomicUsize,
}

impl Shared {
    fn forget(&self, id: u64) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).retain(|l| l.id != id);
    }
}

/// The running proxy; it stops, closing every connection, on drop.
pub struct CutProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl CutProxy {
    /// Listens on `127.0.0.1:0`, forwarding to `backend`.
    pub fn start(backend: SocketAddr) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared {
            backend: Mutex::new(backend),
            open: Mutex::new(Vec::new()),
            accepted: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            swallowing: AtomicBool::new(false),
            swallowed: AtomicUsize::new(0),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                accept(&accepting, client);
            }
        });
        CutProxy { addr, shared }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Ends every connection open now; returns how many.
    pub fn cut(&self) -> usize {
        let links =
            std::mem::take(&mut *self.shared.open.lock().unwrap_or_else(PoisonError::into_inner));
        for link in &links {
            link.close();
        }
        self.shared.swallowing.store(false, Ordering::SeqCst);
        links.len()
    }

    /// Sends the connections accepted from now on to `backend`.
    pub fn set_backend(&self, backend: SocketAddr) {
        *self.shared.backend.lock().unwrap_or_else(PoisonError::into_inner) = backend;
    }

    /// How many connections the proxy has accepted in all.
    pub fn connections(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// From now on (until [`CutProxy::cut`]), what servers send is read and dropped: the
    /// server sees it leave, the client never gets it. Returns the bytes dropped so far.
    pub fn swallow(&self) -> usize {
        self.shared.swallowing.store(true, Ordering::SeqCst);
        self.shared.swallowed.load(Ordering::SeqCst)
    }

    /// The bytes dropped while swallowing.
    pub fn swallowed(&self) -> usize {
        self.shared.swallowed.load(Ordering::SeqCst)
    }

    /// Waits (polling, at most `timeout`) until at least `bytes` were swallowed; returns
    /// how many were.
    pub fn wait_swallowed(&self, bytes: usize, timeout: std::time::Duration) -> usize {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let now = self.swallowed();
            if now >= bytes {
                return now;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "only {now} of {bytes} bytes left the server"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// How many connections are open now.
    pub fn open(&self) -> usize {
        self.shared.open.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag and drops the listener.
        let _ = TcpStream::connect(self.addr);
        self.cut();
    }
}

/// Connects `client` to the current backend and starts copying both ways; a backend that
/// refuses closes the client's connection.
fn accept(shared: &Arc<Shared>, client: TcpStream) {
    shared.accepted.fetch_add(1, Ordering::SeqCst);
    let target = *shared.backend.lock().unwrap_or_else(PoisonError::into_inner);
    let Ok(backend) = TcpStream::connect(target) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = backend.set_nodelay(true);
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let clones = (client.try_clone(), backend.try_clone(), client.try_clone(), backend.try_clone());
    let (Ok(c1), Ok(b1), Ok(c2), Ok(b2)) = clones else {
        let _ = client.shutdown(Shutdown::Both);
        let _ = backend.shutdown(Shutdown::Both);
        return;
    };
    shared.open.lock().unwrap_or_else(PoisonError::into_inner).push(Link { id, client, backend });
    let done = Arc::new(AtomicUsize::new(0));
    for (from, to, toward_client) in [(c1, b1, false), (b2, c2, true)] {
        let (shared, done) = (Arc::clone(shared), Arc::clone(&done));
        std::thread::spawn(move || {
            pipe(from, to, toward_client.then_some(&*shared));
            if done.fetch_add(1, Ordering::SeqCst) == 1 {
                shared.forget(id);
            }
        });
    }
}

/// Copies until the end of `from`, then passes the end on to `to`; toward a client
/// (`swallow` given), drops what it reads while the proxy swallows.
fn pipe(mut from: TcpStream, mut to: TcpStream, swallow: Option<&Shared>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) if swallow.is_some_and(|s| s.swallowing.load(Ordering::SeqCst)) => {
                if let Some(shared) = swallow {
                    shared.swallowed.fetch_add(n, Ordering::SeqCst);
                }
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    let _ = from.shutdown(Shutdown::Both);
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
