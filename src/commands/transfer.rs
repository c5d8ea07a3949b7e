//! `iac-code sessions export|import|migrate`: sessions moved between stores without loss.
//! The format is JSON lines: first `{"type":"meta", …the metadata…}`, then each journal
//! record exactly as the store keeps it (the journal's own versioned lines), so what is
//! imported replays as what was exported. Every line is checked as the journal reader reads
//! it before anything is written (`Line::read`: one record per line, known types), and a
//! mode set elsewhere stays history (`session/seal.rs`) unless `--keep-mode` restores it.
//! Input is read a line at a time with `jsonrpc::read_capped_line`: never more than
//! `record::MAX_LINE` of a line in memory, and a longer line is refused by its number.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::config::{Config, Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::gate::Mode;
use crate::jsonrpc::{LineRead, read_capped_line};
use crate::session::SessionId;
use crate::session::record::{Line, MAX_LINE, Record};
use crate::session::store::{self, Meta, SessionStore};
use crate::sys;

// A record of the largest message a client may send over stdio is imported.
const _: () = assert!(MAX_LINE > crate::transport::stdio::MAX_LINE);

/// Writes session `id` of `store` to stdout.
pub fn export(store: &dyn SessionStore, id: &str) -> Result<u8> {
    let id = SessionId::parse(id).map_err(|e| Error::Usage(e.to_string()))?;
    let Some((meta, lines)) = store.export(&id)? else {
        crate::logging::stderr_line(&format!("iac-code: error: session not found: {id}"));
        return Ok(1);
    };
    let mut out = sys::stdout().lock();
    let mut head = match serde_json::to_value(&meta) {
        Ok(Value::Object(map)) => map,
        _ => return Err(Error::Internal("cannot encode the session's metadata".into())),
    };
    head.insert("type".into(), Value::String("meta".into()));
    // A record with a line break in it would come back as two.
    if let Some(n) = lines.iter().position(|line| line.contains(&b'\n')) {
        return Err(Error::Usage(format!(
            "session {id}: record {}: a record holds a line break (one record per line); \
             not exported",
            n + 1
        )));
    }
    if let Some(n) = lines.iter().position(|line| line.len() > MAX_LINE) {
        return Err(Error::Usage(format!(
            "session {id}: record {} is longer than {} MiB, which an import refuses; not \
             exported",
            n + 1,
            MAX_LINE >> 20
        )));
    }
    writeln!(out, "{}", Value::Object(head)).map_err(Error::Stream)?;
    for line in &lines {
        out.write_all(line).and_then(|()| out.write_all(b"\n")).map_err(Error::Stream)?;
    }
    out.flush().map_err(Error::Stream)?;
    Ok(0)
}

/// Creates a session in `store` from export lines on stdin. With `keep_mode`, the session
/// starts in the mode its lines end in (sealed here anew); otherwise a mode set elsewhere
/// is history only, and what is not restored is said.
pub fn import(store: &dyn SessionStore, keep_mode: bool) -> Result<u8> {
    let (meta, records) = read_export(std::io::stdin().lock())?;
    let last_mode = records.iter().rev().find_map(|line| match Line::read(line).ok()?.record {
        Record::Mode { mode } => Some(mode),
        _ => None,
    });
    if keep_mode && let Some(mode) = last_mode.as_deref().filter(|m| Mode::from_id(m).is_none()) {
        return Err(Error::Usage(format!("the input ends in an unknown mode '{mode}'")));
    }
    let id = SessionId::parse(&meta.session_id).map_err(|e| Error::Usage(e.to_string()))?;
    store.import(meta, &records)?;
    let starts = store.peek(&id)?.and_then(|(_, rebuilt)| rebuilt.mode);
    let mut said = format!("imported {id} ({} records)", records.len());
    match last_mode.filter(|mode| Some(mode) != starts.as_ref()) {
        Some(mode) if keep_mode => {
            if let Err(err) = keep(store, &id, &mode) {
                // Nothing half done: the session goes again.
                let _ = store.delete(&id);
                return Err(err);
            }
            said.push_str(&format!("; it starts in mode {mode} (--keep-mode)"));
        }
        Some(mode) => said.push_str(&format!(
            "; its mode {mode} was not set here, so it is not restored: it starts in {} \
             (--keep-mode restores it)",
            starts.as_deref().unwrap_or("default")
        )),
        None => {}
    }
    let mut out = sys::stdout().lock();
    writeln!(out, "{said}").map_err(Error::Stream)?;
    Ok(0)
}

/// Reads what `export` wrote: the metadata line, then the journal records (blank lines
/// skipped), each checked as the journal reader checks a line (one record, a known type,
/// a format this build reads). Anything else is a usage error naming the line, and so is a
/// line over `record::MAX_LINE`, of which no more than that is ever held.
pub fn read_export(input: impl BufRead) -> Result<(Meta, Vec<Vec<u8>>)> {
    read_export_capped(input, MAX_LINE)
}

/// `read_export` with lines of at most `cap` bytes.
fn read_export_capped(mut input: impl BufRead, cap: usize) -> Result<(Meta, Vec<Vec<u8>>)> {
    let mut meta = None;
    let mut records = Vec::new();
    for n in 1.. {
        let mut line = Vec::new();
        match read_capped_line(&mut input, &mut line, cap).map_err(Error::Stream)? {
            LineRead::Eof => break,
            LineRead::TooLong => {
                return Err(Error::Usage(format!(
                    "line {n} of the input is longer than {} (the longest journal line an \
                     import reads); nothing imported",
                    size(cap)
                )));
            }
            LineRead::Line => {}
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let text = std::str::from_utf8(&line).map_err(|_| {
            Error::Usage(format!("line {n} of the input is not UTF-8; nothing imported"))
        })?;
        if n == 1 {
            meta = Some(meta_of(text)?);
            continue;
        }
        if text.trim().is_empty() {
            continue;
        }
        Line::read(&line).map_err(|why| {
            Error::Usage(format!("line {n} of the input: {why}; nothing imported"))
        })?;
        records.push(line);
    }
    Ok((meta_of_input(meta)?, records))
}

/// The metadata read from the first line, or the error of an empty input.
fn meta_of_input(meta: Option<Meta>) -> Result<Meta> {
    match meta {
        Some(meta) => Ok(meta),
        None => meta_of(""),
    }
}

/// `bytes` for a message: in MiB when whole ones.
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Records `mode` as the imported session's own (the store seals it).
fn keep(store: &dyn SessionStore, id: &SessionId, mode: &str) -> Result<()> {
    let (journal, _) = store
        .open(id)?
        .ok_or_else(|| Error::Internal(format!("session {id} vanished while imported")))?;
    journal.append(&Record::Mode { mode: mode.to_string() })?;
    journal.sync()
}

fn meta_of(head: &str) -> Result<Meta> {
    let mut map: Map<String, Value> = match serde_json::from_str(head) {
        Ok(Value::Object(map)) if map.get("type") == Some(&Value::String("meta".into())) => map,
        _ => {
            return Err(Error::Usage(
                "the input must start with the metadata line of 'iac-code sessions export'".into(),
            ));
        }
    };
    map.remove("type");
    let meta: Meta = serde_json::from_value(Value::Object(map))
        .map_err(|err| Error::Usage(format!("the metadata line is not valid: {err}")))?;
    SessionId::parse(&meta.session_id).map_err(|e| Error::Usage(e.to_string()))?;
    Ok(meta)
}

/// Copies every session of `from` into the store `to` names.
pub fn migrate(from: &dyn SessionStore, config: &Config, to: &str) -> Result<u8> {
    struct Target<'a>(&'a str);
    impl Env for Target<'_> {
        fn get(&self, name: &str) -> Option<String> {
            match name {
                "IAC_CODE_SESSION_STORE" => Some(self.0.to_string()),
                _ => ProcessEnv.get(name),
            }
        }
    }
    let target_config = Config::from_env(&Target(to))?;
    if target_config.store == config.store {
        return Err(Error::Usage("--to names the store the sessions are in already".into()));
    }
    let target = store::open(&target_config)?;
    let (mut copied, mut skipped, mut failed, mut refused) = (0, 0, 0, 0);
    for meta in from.list()? {
        let Ok(id) = SessionId::parse(&meta.session_id) else { continue };
        if target.exists(&id) {
            skipped += 1;
            continue;
        }
        let moved = from.export(&id).and_then(|found| match found {
            Some((meta, lines)) => target.import(meta, &lines),
            None => Ok(()),
        });
        match moved {
            Ok(()) => copied += 1,
            // A record that is not one journal record (`check_lines`): nothing is copied.
            Err(Error::Usage(why)) => {
                refused += 1;
                crate::logging::stderr_line(&format!(
                    "iac-code: error: session {id}: {why}; not copied"
                ));
            }
            Err(err) => {
                failed += 1;
                crate::logging::stderr_line(&format!("iac-code: error: session {id}: {err}"));
            }
        }
    }
    let mut out = sys::stdout().lock();
    writeln!(
        out,
        "copied {copied} sessions to {}, skipped {skipped} already there, {failed} failed, \
         {refused} refused",
        target.name()
    )
    .map_err(Error::Stream)?;
    Ok(if refused > 0 { 2 } else { u8::from(failed > 0) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"type":"meta","v":1,"sessionId":"0195d3a0-1c2b-7c3d-8e4f-0123456789ab","cwd":"/p","createdAt":"t","updatedAt":"t"}"#;

    #[test]
    fn an_export_reads_back_and_a_bad_line_is_named_by_its_number() {
        let good = format!("{META}\n\n{{\"v\":1,\"ts\":\"t\",\"type\":\"clear\"}}\n");
        let (meta, records) = read_export(good.as_bytes()).unwrap();
        assert_eq!((meta.cwd.as_str(), records.len()), ("/p", 1));
        // Blank lines count: the fifth line is the bad one.
        let bad = format!("{good}   \n[1]\n");
        let err = read_export(bad.as_bytes()).unwrap_err();
        let said = err.to_string();
        assert!(said.starts_with("line 5 of the input: ") && said.ends_with("nothing imported"));
        let odd = [META.as_bytes(), b"\n\xff\n"].concat();
        let err = read_export(&odd[..]).unwrap_err();
        assert_eq!(err.to_string(), "line 2 of the input is not UTF-8; nothing imported");
        assert!(matches!(read_export(&b"not an export\n"[..]), Err(Error::Usage(_))));
    }

    #[test]
    fn a_line_over_the_cap_is_refused_by_its_number_and_never_held_whole() {
        let record = "{\"v\":1,\"ts\":\"t\",\"type\":\"clear\"}";
        // The metadata line is the longest that fits.
        let cap = META.len();
        let fits = format!("{META}\n{record}\r\n");
        let (_, records) = read_export_capped(fits.as_bytes(), cap).unwrap();
        assert_eq!(records, vec![record.as_bytes().to_vec()], "the CR of a CRLF goes");
        let long = format!("{META}\n{record}\n\n{}\n{record}\n", "x".repeat(cap + 1));
        let err = read_export_capped(long.as_bytes(), cap).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "line 4 of the input is longer than {cap} bytes (the longest journal line an \
                 import reads); nothing imported"
            )
        );
        let err = read_export_capped(long.as_bytes(), 10).unwrap_err();
        assert!(err.to_string().starts_with("line 1 of the input is longer than 10 bytes"));
        assert!(matches!(read_export(&b""[..]), Err(Error::Usage(_))));
        assert_eq!(size(MAX_LINE), "64 MiB");
    }
}
