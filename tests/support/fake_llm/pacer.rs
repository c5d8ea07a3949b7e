//! The pacer of `Reply::Paced` streams: one thread for every paced stream of the process.
//! It sleeps until the soonest piece is due (never waking twice within a millisecond),
//! writes every piece due by then, and ends each stream after its last piece.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender};

use super::http::Out;
use super::openai;
use super::script::Event;

/// Shortest sleep between two rounds: pieces due within it are written together.
const TICK: Duration = Duration::from_millis(1);

struct Job {
    socket: TcpStream,
    model: String,
    left: usize,
    every: Duration,
    next: Instant,
    done: Sender<io::Result<()>>,
}

/// Streams `chunks` stamped pieces, one every `every`, then the finish and `[DONE]`, on
/// `socket` (its response head and role chunk already written); returns when the stream
/// is whole, or failed.
pub(super) fn play(
    socket: TcpStream,
    model: &str,
    chunks: usize,
    every: Duration,
) -> io::Result<()> {
    let (done, finished) = crossbeam_channel::bounded(1);
    let job =
        Job { socket, model: model.to_owned(), left: chunks, every, next: Instant::now(), done };
    pacer().send(job).map_err(|_| io::Error::other("the pacer stopped"))?;
    finished.recv().unwrap_or_else(|_| Err(io::Error::other("the pacer stopped")))
}

fn pacer() -> &'static Sender<Job> {
    static PACER: OnceLock<Sender<Job>> = OnceLock::new();
    PACER.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        std::thread::Builder::new()
            .name("fake-llm-pacer".to_owned())
            .spawn(move || {
                let mut jobs: Vec<Job> = Vec::new();
                let mut last_round = Instant::now();
                loop {
                    let soonest = jobs.iter().map(|j| j.next).min();
                    let got = match soonest {
                        Some(due) => {
                            let at = due.max(last_round + TICK);
                            rx.recv_timeout(at.saturating_duration_since(Instant::now()))
                        }
                        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    };
                    match got {
                        Ok(job) => jobs.push(job),
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                    let now = Instant::now();
                    if now < last_round + TICK && jobs.iter().all(|j| j.next > now) {
                        continue;
                    }
                    last_round = now;
                    jobs.retain_mut(|job| {
                        if job.next > now {
                            return true;
                        }
                        match step(job) {
                            Ok(true) => true,
                            Ok(false) => {
                                let _ = job.done.send(Ok(()));
                                false
                            }
                            Err(err) => {
                                let _ = job.done.send(Err(err));
                                false
                            }
                        }
                    });
                }
            })
            .expect("the fake LLM's pacer thread starts");
        tx
    })
}

/// Writes a job's next piece (or, after its last one, its end); whether it goes on.
fn step(job: &mut Job) -> io::Result<bool> {
    let mut out: Out<'_> = io::BufWriter::with_capacity(1024, &job.socket);
    if job.left == 0 {
        openai::write_more(&mut out, &[Event::Finish("stop"), Event::Done], &job.model)?;
        out.write_all(b"0\r\n\r\n")?;
        out.flush()?;
        return Ok(false);
    }
    openai::write_more(&mut out, &[Event::Stamp], &job.model)?;
    out.flush()?;
    job.left -= 1;
    job.next += job.every;
    Ok(true)
}
