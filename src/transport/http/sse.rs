//! One SSE stream's socket and the two ways onto it. The router, on the thread that sends
//! a frame, writes straight to the socket when the stream is idle (nothing queued, nobody
//! writing) and the socket takes the bytes at once: a streamed piece then wakes no other
//! thread. Everything else (a backlog, a client that reads slowly, the rest of a partial
//! write, heartbeats, the end) goes through the stream's own thread, which blocks on the
//! socket with a deadline. Both hold the stream's `Lane` while writing, and whoever takes
//! it first writes the bytes a partial write left owed, so the chunked body is never torn.

use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, select, tick};

use super::codes::Code;
use super::response::{self, Writer};
use crate::sync::lock;
use crate::sys;

/// Bytes of waiting frames written together at most.
const COALESCE_BYTES: usize = 64 << 10;
/// Largest write buffer a stream keeps between writes (a burst's larger one is let go).
const KEPT_BUFFER: usize = 16 << 10;
/// How often an idle SSE stream checks that its client is still there.
const LIVENESS: Duration = Duration::from_secs(1);
/// SSE comment heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// What the stream's thread is given to write.
pub enum Frame {
    /// A JSON-RPC frame and its number, to be written as one SSE event.
    Event(u64, Arc<[u8]>),
    /// Events already framed, the last numbered `last` (a direct write that found the
    /// stream's thread writing).
    Framed(u64, Vec<u8>),
    /// A direct write left `len` bytes owed in the lane, up to event `last`.
    Owed { last: u64, len: usize },
    /// A final error note, after what is queued; the stream then ends.
    Final(Arc<[u8]>),
}

/// Progress of one stream, shared by the router and the stream's thread.
#[derive(Default)]
pub struct Progress {
    /// Bytes queued to the stream's thread and not yet written.
    pub queued: AtomicUsize,
    /// The last sequence number written to the socket (0: none).
    pub written: AtomicU64,
    /// The response head is out: events may be written.
    pub started: AtomicBool,
}

/// Write access to one stream's socket, and the bytes a partial direct write left, which
/// whoever writes next must write first.
#[derive(Default)]
pub struct Lane {
    owed: Mutex<Owed>,
}

#[derive(Default)]
struct Owed {
    bytes: Vec<u8>,
    /// The stream's thread stopped writing (a failed write, a client gone, the end): the
    /// router must not write directly either, or it would write after a torn chunk, or
    /// count as written what nobody reads. Set under the lane, so no direct write slips in.
    closed: bool,
}

/// What a direct write did.
pub enum Direct {
    /// All written.
    Sent,
    /// Give this to the stream's thread.
    Queue(Frame, usize),
    /// The socket failed: the stream is dead.
    Dead,
}

/// Writes `bytes` (events up to `last`) straight to an idle stream's socket, without
/// waiting. Call only while nothing is queued to the stream's thread, under the
/// connection's lock (which orders the frames).
pub fn write_direct(
    socket: &TcpStream,
    lane: &Lane,
    progress: &Progress,
    last: u64,
    bytes: &[u8],
) -> Direct {
    let Ok(mut owed) = lane.owed.try_lock() else {
        // The stream's thread is writing (a heartbeat): it takes these after.
        return Direct::Queue(Frame::Framed(last, bytes.to_vec()), bytes.len());
    };
    if owed.closed || !owed.bytes.is_empty() {
        // Queued, they count as undelivered once the stream is let go.
        return Direct::Queue(Frame::Framed(last, bytes.to_vec()), bytes.len());
    }
    let sent = match sys::send_now(socket, bytes) {
        Ok(sent) => sent,
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => 0,
        Err(err) => {
            log::debug!("stream write failed before frame {last}: {err}");
            return Direct::Dead;
        }
    };
    if sent == bytes.len() {
        progress.written.fetch_max(last, Ordering::SeqCst);
        return Direct::Sent;
    }
    owed.bytes.extend_from_slice(&bytes[sent..]);
    let len = owed.bytes.len();
    Direct::Queue(Frame::Owed { last, len }, len)
}

/// The stream's own end of the channel.
pub struct Stream {
    /// Frames to write, in order (the backlog first).
    pub rx: Receiver<Frame>,
    /// Identifies this stream among the scope's successive streams.
    pub generation: u64,
    /// Shared with the router.
    pub progress: Arc<Progress>,
    /// Shared with the router.
    pub lane: Arc<Lane>,
    /// Frames the client asked for (by `Last-Event-ID`) that the buffer no longer holds.
    pub gap: Option<(u64, u64)>,
}

/// Writes `bytes` under the lane, after what it owes. A failure closes the lane before
/// letting it go: the socket may be mid-chunk.
fn write_locked(socket: &mut Writer<'_>, lane: &Lane, bytes: &[u8]) -> io::Result<()> {
    write_under(socket, &mut lock(&lane.owed), bytes)
}

/// `write_locked` with the lane already held.
fn write_under(socket: &mut Writer<'_>, owed: &mut Owed, bytes: &[u8]) -> io::Result<()> {
    let mut write = || {
        if !owed.bytes.is_empty() {
            socket.write_all(&owed.bytes)?;
            owed.bytes.clear();
        }
        socket.write_all(bytes)
    };
    let written = write();
    if written.is_err() {
        owed.closed = true;
    }
    written
}

/// Runs on the stream's thread: writes the head, then what the router queues, until the
/// stream is stopped, taken over, closed, or its client goes away. Then the lane is
/// closed: the router writes nothing more to this socket.
pub fn write_stream(stream: &TcpStream, events: &Stream) {
    serve(stream, events);
    lock(&events.lane.owed).closed = true;
}

fn serve(stream: &TcpStream, events: &Stream) {
    let mut socket = Writer::new(stream);
    let lane = &*events.lane;
    let mut out = Vec::new();
    response::start_sse(&mut out);
    if let Some((from, to)) = events.gap {
        let why = format!("events {from} to {to} are no longer in the replay buffer");
        let gap = Code::ReplayGap.as_str();
        let note = serde_json::json!({ "error": why, "code": gap, "from": from, "to": to });
        response::sse_named(&mut out, gap, note.to_string().as_bytes());
    }
    if write_locked(&mut socket, lane, &out).is_err() {
        return;
    }
    events.progress.started.store(true, Ordering::SeqCst);
    let heartbeat = tick(HEARTBEAT);
    let liveness = tick(LIVENESS);
    loop {
        out.clear();
        select! {
            recv(events.rx) -> frame => {
                let Ok(frame) = frame else {
                    // Closed by the server: end the stream cleanly.
                    break;
                };
                // Frames that are already waiting go out in the same write.
                let mut next = Some(frame);
                let (mut last, mut sent, mut note) = (0, 0, None);
                while let Some(frame) = next.take() {
                    match frame {
                        Frame::Event(seq, bytes) => {
                            response::push_sse_event(&mut out, seq, &bytes);
                            (last, sent) = (seq, sent + bytes.len());
                        }
                        Frame::Framed(seq, bytes) => {
                            out.extend_from_slice(&bytes);
                            (last, sent) = (seq, sent + bytes.len());
                        }
                        Frame::Owed { last: seq, len } => (last, sent) = (seq, sent + len),
                        Frame::Final(text) => {
                            note = Some(text);
                            break;
                        }
                    }
                    if out.len() < COALESCE_BYTES {
                        next = events.rx.try_recv().ok();
                    }
                }
                if let Some(note) = &note {
                    response::sse_error(&mut out, note);
                }
                if let Err(err) = write_locked(&mut socket, lane, &out) {
                    log::debug!("stream write failed before frame {last}: {err}");
                    return;
                }
                if out.capacity() > KEPT_BUFFER {
                    out = Vec::new();
                }
                // `written` first: the router writes directly only once nothing is queued,
                // and its newer number must not be overwritten by this older one.
                events.progress.written.fetch_max(last, Ordering::SeqCst);
                events.progress.queued.fetch_sub(sent, Ordering::SeqCst);
                if note.is_some() {
                    break;
                }
            }
            recv(heartbeat) -> _ => {
                response::sse_comment(&mut out, "keep-alive");
                if write_locked(&mut socket, lane, &out).is_err() {
                    return;
                }
            }
            // A client that went away is noticed without waiting for a write to fail, so
            // its scope's frames go elsewhere (or wait) instead of into a dead socket.
            recv(liveness) -> _ => {
                // Under the lane: no direct write can land between the look and the close.
                let mut owed = lock(&lane.owed);
                if sys::peer_closed(stream) {
                    owed.closed = true;
                    return;
                }
            }
        }
    }
    // The end of the body, and the lane closed with it: nothing may follow it.
    out.clear();
    response::end_chunks(&mut out);
    let mut owed = lock(&lane.owed);
    let _ = write_under(&mut socket, &mut owed, &out);
    owed.closed = true;
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::TcpListener;

    use super::*;

    /// Reads a chunked body to its end and returns the data of its chunks.
    fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
        let mut data = Vec::new();
        loop {
            let line_end = bytes.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(std::str::from_utf8(&bytes[..line_end]).unwrap(), 16)
                .unwrap();
            bytes = &bytes[line_end + 2..];
            if size == 0 {
                assert_eq!(bytes, b"\r\n", "the body ends after its last chunk");
                return data;
            }
            data.extend_from_slice(&bytes[..size]);
            assert_eq!(&bytes[size..size + 2], b"\r\n", "a chunk is whole");
            bytes = &bytes[size + 2..];
        }
    }

    #[test]
    fn direct_writes_that_fill_the_socket_hand_the_rest_over_and_nothing_is_torn() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let progress = Arc::new(Progress::default());
        let lane = Arc::new(Lane::default());
        let stream = Stream {
            rx,
            generation: 1,
            progress: Arc::clone(&progress),
            lane: Arc::clone(&lane),
            gap: None,
        };
        let socket = server.try_clone().unwrap();
        let writer = std::thread::spawn(move || write_stream(&socket, &stream));
        // The head comes first; only then may the router write.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            client.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        // The writer says so just after its head is written.
        while !progress.started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // The client reads nothing while the router writes events of 64 KiB, the way
        // `AcpConn::route` does: directly while nothing is queued, else through the queue.
        let payload = |seq: u64| format!("{{\"n\":\"{}\"}}", seq.to_string().repeat(20_000));
        let (mut direct, mut owed) = (0, 0);
        let count = 200;
        for seq in 1..=count {
            let json: Arc<[u8]> = Arc::from(payload(seq).as_bytes());
            if progress.queued.load(Ordering::SeqCst) == 0 {
                let mut bytes = Vec::new();
                response::push_sse_event(&mut bytes, seq, &json);
                match write_direct(&server, &lane, &progress, seq, &bytes) {
                    Direct::Sent => direct += 1,
                    Direct::Queue(frame, len) => {
                        owed += usize::from(matches!(frame, Frame::Owed { .. }));
                        progress.queued.fetch_add(len, Ordering::SeqCst);
                        tx.send(frame).unwrap();
                    }
                    Direct::Dead => panic!("the socket is alive"),
                }
            } else {
                progress.queued.fetch_add(json.len(), Ordering::SeqCst);
                tx.send(Frame::Event(seq, json)).unwrap();
            }
        }
        assert!(direct > 0, "the first events went straight to the socket");
        assert_eq!(owed, 1, "the socket filled up once, mid-event, and the rest was handed over");
        drop(tx);
        let mut body = Vec::new();
        let reader = std::thread::spawn(move || {
            client.read_to_end(&mut body).unwrap();
            body
        });
        writer.join().unwrap();
        assert_eq!(progress.written.load(Ordering::SeqCst), count);
        assert_eq!(progress.queued.load(Ordering::SeqCst), 0);
        // The stream's thread has ended: the router writes nothing more to its socket.
        let after = write_direct(&server, &lane, &progress, count + 1, b"late");
        assert!(matches!(after, Direct::Queue(Frame::Framed(_, _), 4)), "queued, not sent");
        drop(server);
        let text = String::from_utf8(dechunk(&reader.join().unwrap())).unwrap();
        let events: Vec<&str> = text.split_terminator("\n\n").collect();
        assert_eq!(events.len(), count as usize);
        for (event, seq) in events.iter().zip(1..) {
            let want = format!("event: message\ndata: {}\nid: {seq}\nretry: 5000", payload(seq));
            assert!(*event == want, "event {seq} arrived whole and in order");
        }
    }
}
