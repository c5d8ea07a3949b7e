//! `iac-code sessions export|import|migrate`: sessions moved between stores without loss.
//! The format is JSON lines: first `{"type":"meta", …the metadata…}`, then each journal
//! record exactly as the store keeps it (the journal's own versioned lines), so what is
//! imported replays as what was exported. Every line is checked as the journal reader reads
//! it before anything is written (`Line::read`: one record per line, known types), and a
//! mode set elsewhere stays history (`session/seal.rs`) unless `--keep-mode` restores it.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::config::{Config, Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::permission::Mode;
use crate::session::SessionId;
use crate::session::record::{Line, Record};
use crate::session::store::{self, Meta, SessionStore};
use crate::sys;

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
/// a format this build reads). Anything else is a usage error naming the line.
pub fn read_export(input: impl BufRead) -> Result<(Meta, Vec<Vec<u8>>)> {
    let mut lines = input.lines();
    let head = lines.next().transpose().map_err(Error::Stream)?.unwrap_or_default();
    let meta = meta_of(&head)?;
    let mut records = Vec::new();
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|err| match err.kind() {
            std::io::ErrorKind::InvalidData => {
                Error::Usage(format!("line {} of the input is not UTF-8; nothing imported", n + 2))
            }
            _ => Error::Stream(err),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        Line::read(line.as_bytes()).map_err(|why| {
            Error::Usage(format!("line {} of the input: {why}; nothing imported", n + 2))
        })?;
        records.push(line.into_bytes());
    }
    Ok((meta, records))
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
}
