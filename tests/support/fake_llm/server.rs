//! The fake LLM's server loop on loopback: one thread per connection, keep-alive, each
//! request recorded, chat requests answered with the next scripted [`Reply`] (a stream in
//! the OpenAI or Anthropic format, a status, a hang or a cut), anything else with a model
//! list, and `CONNECT` accepted so the fake can also act as an HTTP proxy.

use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::http::{read_request, write_json, write_stream_head};
use super::recorded::Shared;
use super::script::{Event, Reply};
use super::{anthropic, openai, pacer};

/// Body of the 500 answer given when a chat request arrives and the script is empty.
const EXHAUSTED_BODY: &str = r#"{"error":{"message":"fake llm: script exhausted"}}"#;
/// Body of every non-chat request (e.g. `GET /v1/models`).
const MODELS_BODY: &str = r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#;

pub(super) fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let conn_shared = Arc::clone(shared);
        // A failed spawn just drops the connection; the client sees an error.
        let _ = thread::Builder::new().name("fake-llm-conn".to_owned()).spawn(move || {
            // Write/read errors mean the client went away: end this connection.
            let _ = serve_connection(stream, &conn_shared);
        });
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader)? {
        let close = request.wants_close();
        if request.method == "CONNECT" {
            // Acting as an HTTP proxy: the tunnel ends here, at this same fake server.
            shared.lock().other.push(request.into_recorded());
            shared.changed.notify_all();
            writer.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
            writer.flush()?;
            continue;
        }
        if !request.is_chat() {
            shared.lock().other.push(request.into_recorded());
            shared.changed.notify_all();
            write_json(&mut writer, 200, MODELS_BODY, None)?;
        } else {
            let anthropic = request.is_anthropic();
            let recorded = request.into_recorded();
            let model = recorded
                .body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("fake-model")
                .to_owned();
            let reply = {
                let mut state = shared.lock();
                state.chat.push(recorded);
                let reply = state.script.pop_front();
                if reply.is_none() {
                    state.unexpected += 1;
                }
                reply
            };
            shared.changed.notify_all();
            match reply {
                None => write_json(&mut writer, 500, EXHAUSTED_BODY, None)?,
                Some(Reply::Status { code, body, retry_after }) => {
                    write_json(&mut writer, code, &body, retry_after.as_deref())?;
                }
                Some(Reply::Stream(events)) => {
                    write_stream_head(&mut writer)?;
                    write_any(&mut writer, &events, &model, anthropic)?;
                    writer.write_all(b"0\r\n\r\n")?;
                    writer.flush()?;
                }
                Some(Reply::Hang(events)) => {
                    // Even if the client is already gone, still record the drop below.
                    let _ = write_stream_head(&mut writer)
                        .and_then(|()| write_any(&mut writer, &events, &model, anthropic));
                    hang_until_closed(&mut reader, shared);
                    return Ok(());
                }
                Some(Reply::Paced { chunks, every_ms }) if !anthropic => {
                    write_stream_head(&mut writer)?;
                    let mut out = io::BufWriter::new(&writer);
                    openai::write_role(&mut out, &model)?;
                    out.flush()?;
                    drop(out);
                    pacer::play(
                        writer.try_clone()?,
                        &model,
                        chunks,
                        Duration::from_millis(every_ms),
                    )?;
                }
                Some(Reply::Paced { chunks, every_ms }) => {
                    let mut events = Vec::new();
                    for _ in 0..chunks {
                        events.extend([Event::Stamp, Event::Pause(every_ms)]);
                    }
                    events.extend([Event::Finish("stop"), Event::Done]);
                    write_stream_head(&mut writer)?;
                    write_any(&mut writer, &events, &model, anthropic)?;
                    writer.write_all(b"0\r\n\r\n")?;
                    writer.flush()?;
                }
                Some(Reply::Cut(events)) => {
                    write_stream_head(&mut writer)?;
                    write_any(&mut writer, &events, &model, anthropic)?;
                    let _ = writer.shutdown(Shutdown::Both);
                    return Ok(());
                }
            }
        }
        if close {
            return Ok(());
        }
    }
    Ok(())
}

/// Writes `events` in the format of the API that was called, buffered, flushed at the end.
fn write_any(w: &mut TcpStream, events: &[Event], model: &str, anthropic: bool) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 << 10, &*w);
    if anthropic {
        anthropic::write_events(&mut out, events, model)?;
    } else {
        openai::write_events(&mut out, events, model)?;
    }
    out.flush()
}

/// Reads until the client closes the connection, then records the dropped hang.
fn hang_until_closed(reader: &mut BufReader<TcpStream>, shared: &Shared) {
    let mut buf = [0u8; 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    shared.lock().hangs_dropped += 1;
    shared.changed.notify_all();
}
