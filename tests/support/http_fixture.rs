//! A tiny HTTP/1.1 server on loopback serving fixed routes, for `web_fetch` tests (and MCP
//! URLs that answer something else). One thread per connection; every response closes the
//! connection.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One canned response.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Route {
    /// A 200 with this content type and body.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Route {
        Route {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// A redirect to `location`.
    pub fn redirect(location: &str) -> Route {
        Route { status: 302, headers: vec![("Location".into(), location.into())], body: Vec::new() }
    }

    /// Any status with a text body.
    pub fn status(status: u16, body: &str) -> Route {
        Route {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.into(),
        }
    }
}

/// The running fixture; it stops with the test process.
pub struct HttpFixture {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
}

impl HttpFixture {
    /// Serves `routes` (path → response); anything else is a 404.
    pub fn start(routes: Vec<(&str, Route)>) -> HttpFixture {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let routes: Arc<HashMap<String, Route>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.to_string(), r)).collect());
        let hits = Arc::new(Mutex::new(Vec::new()));
        let seen = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (routes, seen) = (routes.clone(), seen.clone());
                std::thread::spawn(move || serve(stream, &routes, &seen));
            }
        });
        HttpFixture { port, hits }
    }

    /// The URL of `path` on this fixture.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The paths requested so far, in order.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, routes: &HashMap<String, Route>, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    // A request's body (a POST) is read before the answer, so closing never resets it.
    let _ = std::io::copy(&mut (&mut reader).take(length), &mut std::io::sink());
    seen.lock().unwrap().push(path.clone());
    let route = routes.get(&path).cloned().unwrap_or_else(|| Route::status(404, "not found"));
    let mut out = stream;
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        route.status,
        route.body.len()
    );
    for (name, value) in &route.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&route.body);
    let _ = out.flush();
}
