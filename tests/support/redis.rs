//! A real `redis-server` for the tests: started on a free loopback port with no
//! persistence and its own directory, stopped on drop. A test that cannot find the
//! program says so and is skipped (`.ci/run` installs Debian's redis-server, so CI runs
//! them all).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Redis server.
pub struct Redis {
    child: Child,
    pub port: u16,
}

impl Redis {
    /// Starts one, or says why not (the caller skips its test).
    #[allow(clippy::print_stderr)]
    pub fn start(dir: &Path) -> Option<Redis> {
        let program = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
            .into_iter()
            .find(|p| Path::new(p).exists());
        let Some(program) = program else {
            let why = "redis-server is not installed (apt-get install redis-server)";
            super::skip::skip(why, super::skip::Ci::Fails);
            return None;
        };
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir).ok()?;
        let child = Command::new(program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "no", "--protected-mode", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let mut redis = Redis { child, port };
        // A bounded wait for another program to come up (ours: one that exited lost the
        // port to someone else, whose PING must not count).
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if redis.child.try_wait().ok().flatten().is_some() {
                panic!("redis-server exited at start (port {port} taken?)");
            }
            if redis.command("PING").is_some_and(|reply| reply.starts_with("+PONG")) {
                return Some(redis);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not answer on port {port}");
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The store URL for the agent.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Sends one inline command; the first line of the reply.
    pub fn command(&self, line: &str) -> Option<String> {
        Redis::command_at(self.port, line)
    }

    /// Sends one inline command to the server on `port`: the first line of the reply, or a
    /// bulk string's value.
    pub fn command_at(port: u16, line: &str) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        stream.write_all(format!("{line}\r\n").as_bytes()).ok()?;
        let mut reader = BufReader::new(stream);
        let mut reply = String::new();
        reader.read_line(&mut reply).ok()?;
        // A bulk string: its value is on the next line.
        if reply.starts_with('$') && !reply.starts_with("$-1") {
            reply.clear();
            reader.read_line(&mut reply).ok()?;
        }
        Some(reply)
    }

    /// Sends one command as a RESP array (binary-safe arguments, quotes and line breaks
    /// included); the first line of the reply.
    pub fn call(&self, args: &[&[u8]]) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut frame = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            frame.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            frame.extend_from_slice(arg);
            frame.extend_from_slice(b"\r\n");
        }
        stream.write_all(&frame).ok()?;
        let mut reply = String::new();
        BufReader::new(stream).read_line(&mut reply).ok()?;
        Some(reply)
    }

    /// The keys matching `pattern`.
    pub fn keys(&self, pattern: &str) -> usize {
        let reply = self.command(&format!("KEYS {pattern}")).unwrap_or_default();
        reply.trim_start_matches('*').trim().parse().unwrap_or(0)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
