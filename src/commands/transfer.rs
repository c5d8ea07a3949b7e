//! `iac-code sessions export|import|migrate`: sessions moved between stores without loss.
//! The format is JSON lines: first `{"type":"meta", …the metadata…}`, then each journal
//! record exactly as the store keeps it (the journal's own versioned lines), so what is
//! imported replays as what was exported.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::config::{Config, Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::session::SessionId;
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
    writeln!(out, "{}", Value::Object(head)).map_err(Error::Stream)?;
    for line in &lines {
        out.write_all(line).and_then(|()| out.write_all(b"\n")).map_err(Error::Stream)?;
    }
    out.flush().map_err(Error::Stream)?;
    Ok(0)
}

/// Creates a session in `store` from export lines on stdin.
pub fn import(store: &dyn SessionStore) -> Result<u8> {
    let (meta, records) = read_export(std::io::stdin().lock())?;
    let id = meta.session_id.clone();
    store.import(meta, &records)?;
    let mut out = sys::stdout().lock();
    writeln!(out, "imported {id} ({} records)", records.len()).map_err(Error::Stream)?;
    Ok(0)
}

/// Reads what `export` wrote: the metadata line, then the journal records (blank lines
/// skipped). Anything else is a usage error naming the line.
pub fn read_export(input: impl BufRead) -> Result<(Meta, Vec<Vec<u8>>)> {
    let mut lines = input.lines();
    let head = lines.next().transpose().map_err(Error::Stream)?.unwrap_or_default();
    let meta = meta_of(&head)?;
    let mut records = Vec::new();
    for (n, line) in lines.enumerate() {
        let line = line.map_err(Error::Stream)?;
        if line.trim().is_empty() {
            continue;
        }
        if serde_json::from_str::<Value>(&line).map_or(true, |v| !v.is_object()) {
            return Err(Error::Usage(format!(
                "line {} of the input is not a journal record",
                n + 2
            )));
        }
        records.push(line.into_bytes());
    }
    Ok((meta, records))
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
    let (mut copied, mut skipped, mut failed) = (0, 0, 0);
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
            Err(err) => {
                failed += 1;
                crate::logging::stderr_line(&format!("iac-code: error: session {id}: {err}"));
            }
        }
    }
    let mut out = sys::stdout().lock();
    writeln!(
        out,
        "copied {copied} sessions to {}, skipped {skipped} already there, {failed} failed",
        target.name()
    )
    .map_err(Error::Stream)?;
    Ok(u8::from(failed > 0))
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
        assert_eq!(err.to_string(), "line 5 of the input is not a journal record");
        assert!(matches!(read_export(&b"not an export\n"[..]), Err(Error::Usage(_))));
    }
}
