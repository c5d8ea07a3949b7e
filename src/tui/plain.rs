//! Line mode, for a terminal that cannot move its cursor (`TERM=dumb`: an editor's shell
//! buffer, a serial console): the same client and the same ACP messages, but each
//! finished line is printed as plain text, a line typed is a message (or the key of a
//! question's option, or a form's answer), and nothing but text and newlines is written.
//! Ctrl+C is the terminal's own (it ends the process); end of input exits.

use std::io::{BufRead, Write};

use crossbeam_channel::Sender;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use super::app::App;
use crate::error::{Error, Result};
use crate::sys;

/// Runs `app` in line mode until input ends or the user exits.
pub fn run(mut app: App) -> Result<u8> {
    let (tx, lines) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("tui-lines".into())
        .spawn(move || read_lines(&tx))
        .map_err(Error::Stream)?;
    let mut out = sys::stdout();
    let frames = app.rpc.frames().clone();
    app.start();
    let mut shown: Option<(Value, usize)> = None;
    let mut prompted = false;
    loop {
        for line in app.out.drain(..) {
            writeln!(out, "{line}").map_err(Error::Stream)?;
        }
        let asking = match (&app.question, &app.form) {
            (Some(q), _) => Some((q.id.clone(), 0, q.lines(&app.theme))),
            (None, Some(f)) => Some((f.id.clone(), f.at, f.lines(&app.theme))),
            (None, None) => None,
        };
        if let Some((id, at, lines)) = asking
            && shown.as_ref() != Some(&(id.clone(), at))
        {
            for line in lines {
                writeln!(out, "{line}").map_err(Error::Stream)?;
            }
            shown = Some((id, at));
        }
        if let Some(notice) = app.notice.take() {
            writeln!(out, "({notice})").map_err(Error::Stream)?;
        }
        if app.exit.is_some() {
            break;
        }
        let idle =
            app.session.is_some() && !app.turn && app.question.is_none() && app.form.is_none();
        if idle && !prompted {
            write!(out, "> ").map_err(Error::Stream)?;
            prompted = true;
        }
        out.flush().map_err(Error::Stream)?;
        crossbeam_channel::select! {
            recv(lines) -> line => match line {
                Ok(Some(text)) => {
                    prompted = false;
                    typed(&mut app, &text);
                }
                _ => app.exit = Some(0),
            },
            recv(frames) -> frame => match frame {
                Ok(frame) => {
                    if let Ok(frame) = serde_json::from_slice::<Value>(&frame.bytes) {
                        app.frame(&frame);
                    }
                }
                Err(_) => app.exit = Some(1),
            },
        }
    }
    app.end_flow();
    for line in app.out.drain(..) {
        writeln!(out, "{line}").map_err(Error::Stream)?;
    }
    if app.turn {
        app.interrupt();
    }
    if let Some(session) = &app.session {
        writeln!(out, "Resume this session with: iac-code --resume {session}")
            .map_err(Error::Stream)?;
    }
    let code = app.exit.unwrap_or(0);
    app.rpc.close();
    Ok(code)
}

/// A line typed: a question's key (or Enter), a form's answer, or a message.
fn typed(app: &mut App, text: &str) {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let one = text.trim();
    if app.question.is_some() {
        let code = match one.chars().next() {
            Some(c) if one.chars().count() == 1 => KeyCode::Char(c),
            _ => KeyCode::Enter,
        };
        app.key(key(code));
        return;
    }
    app.editor.set(text);
    app.key(key(KeyCode::Enter));
}

fn read_lines(tx: &Sender<Option<String>>) {
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        match line {
            Ok(line) => {
                if tx.send(Some(line)).is_err() {
                    return;
                }
            }
            Err(_) => break,
        }
    }
    let _ = tx.send(None);
}
