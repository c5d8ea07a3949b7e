//! The terminal client (bare `iac-code`, `iac-code chat`): an ACP client of an agent in
//! the same process, reached only through JSON-RPC frames over an in-memory connection.
//! The conversation goes to the terminal's own scrollback above an inline viewport (the
//! live part, the input, a status line). One loop blocks on the terminal's events and the
//! agent's frames: nothing polls. Must not import `acp`, `session` or `agent`
//! (`tests/tidy.rs`): what the agent does reaches the screen through ACP messages only.

mod app;
mod cards;
mod flow;
mod highlight;
mod input;
mod keys;
mod markdown;
mod plain;
mod question;
mod rpc;
mod screen;
mod term;
mod theme;
mod view;

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use crossterm::event::Event;

use crate::error::{Error, Result};
use crate::jsonrpc::memory;
use app::App;
use input::History;
use keys::After;

/// How long one pass of the loop takes in events before it draws (a flood of streamed
/// pieces is drawn at most this late; keys are taken first).
const BATCH: Duration = Duration::from_millis(12);

/// What the command line asked of the session.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The project directory (the session's `cwd`).
    pub cwd: PathBuf,
    pub resume: Option<String>,
    pub continue_last: bool,
    /// `--permission-mode`, as a mode id.
    pub mode: Option<String>,
    /// Shift+Tab may reach `bypass_permissions` (the session was started with it).
    pub allow_bypass: bool,
    /// Colours allowed (no `NO_COLOR`).
    pub color: bool,
    /// The history file of this project.
    pub history: Option<PathBuf>,
    /// Line mode: a terminal that cannot move its cursor (`TERM=dumb`).
    pub plain: bool,
}

/// Call before any thread starts: SIGTERM, SIGHUP, SIGINT and SIGQUIT restore the
/// terminal, stop the commands still running and exit.
pub fn prepare() -> std::io::Result<()> {
    term::restore_on_signals()
}

/// The history file of the project `cwd`.
pub fn history_file(config_dir: &std::path::Path, cwd: &std::path::Path) -> PathBuf {
    History::file_for(config_dir, cwd)
}

/// Runs the client over `client` until the user exits; the exit status.
pub fn run(client: memory::Client, opts: Options) -> Result<u8> {
    if opts.plain {
        let history = History::open(opts.history.clone());
        return plain::run(App::new(opts, rpc::Rpc::new(client), history));
    }
    let cursor = term::enter().map_err(Error::Stream)?;
    term::restore_on_panic();
    let (tx, events) = crossbeam_channel::unbounded();
    term::resizes(tx.clone()).map_err(Error::Stream)?;
    let (resume_tx, resume_rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new()
        .name("tui-keys".into())
        .spawn(move || read_keys(&tx, &resume_rx))
        .map_err(Error::Stream)?;
    let history = History::open(opts.history.clone());
    let mut app = App::new(opts, rpc::Rpc::new(client), history);
    let result = run_loop(&mut app, &events, &resume_tx, cursor);
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            term::restore();
            return Err(err);
        }
    };
    term::restore();
    if let Some(session) = &app.session {
        let mut out = crate::sys::stdout();
        let _ = std::io::Write::write_all(
            &mut out,
            format!("Resume this session with: iac-code --resume {session}\n").as_bytes(),
        );
    }
    app.rpc.close();
    Ok(code)
}

fn run_loop(
    app: &mut App,
    events: &Receiver<Event>,
    resume_keys: &Sender<()>,
    cursor: ratatui::layout::Position,
) -> Result<u8> {
    let mut screen = screen::Screen::new(cursor).map_err(Error::Stream)?;
    app.start();
    let frames = app.rpc.frames().clone();
    loop {
        screen.draw(app).map_err(Error::Stream)?;
        if let Some(code) = app.exit {
            if app.turn {
                app.interrupt();
            }
            screen.close().map_err(Error::Stream)?;
            return Ok(code);
        }
        let mut editor_key = false;
        let (mut after, mut key) = crossbeam_channel::select_biased! {
            recv(events) -> event => match event {
                Ok(event) => {
                    editor_key = is_editor_key(&event);
                    (on_event(app, event), true)
                }
                Err(_) => { app.exit = Some(1); (After::Nothing, true) }
            },
            recv(frames) -> frame => {
                match frame {
                    Ok(frame) => on_frame(app, &frame.bytes),
                    Err(_) => {
                        app.say(theme::Role::Removed, "The agent stopped.".into());
                        app.exit = Some(1);
                    }
                }
                (After::Nothing, false)
            },
        };
        // A key is drawn at once; a burst of frames is taken for a moment before drawing
        // (a key arriving meanwhile ends the burst).
        let started = Instant::now();
        while !key && app.exit.is_none() && started.elapsed() < BATCH {
            if let Ok(event) = events.try_recv() {
                editor_key = is_editor_key(&event);
                after = on_event(app, event);
                key = true;
            } else if let Ok(frame) = frames.try_recv() {
                on_frame(app, &frame.bytes);
            } else {
                break;
            }
        }
        if after == After::Editor {
            screen.draw(app).map_err(Error::Stream)?;
            screen = screen.suspend(|| edit(app)).map_err(Error::Stream)?;
        }
        // The key thread waits after every Ctrl+G, whether or not it opened the editor
        // (in a question, the picker or a search it does not).
        if editor_key {
            let _ = resume_keys.send(());
        }
    }
}

fn on_event(app: &mut App, event: Event) -> After {
    match event {
        Event::Key(key) => app.key(key),
        Event::Paste(text) => {
            app.paste(&text);
            After::Nothing
        }
        _ => After::Nothing,
    }
}

fn on_frame(app: &mut App, bytes: &[u8]) {
    if let Ok(frame) = serde_json::from_slice::<serde_json::Value>(bytes) {
        app.frame(&frame);
    }
}

/// The key thread: forwards the terminal's events; after Ctrl+G it waits until the editor
/// is closed (so that it never reads the editor's keys).
fn read_keys(tx: &Sender<Event>, resume: &Receiver<()>) {
    while let Ok(event) = crossterm::event::read() {
        let editor = is_editor_key(&event);
        if tx.send(event).is_err() {
            return;
        }
        if editor && resume.recv().is_err() {
            return;
        }
    }
}

/// Ctrl+G, after which the key thread waits for the loop's word.
fn is_editor_key(event: &Event) -> bool {
    use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
    matches!(event, Event::Key(KeyEvent { code: KeyCode::Char('g'), modifiers, kind, .. })
        if modifiers.contains(KeyModifiers::CONTROL) && *kind != KeyEventKind::Release)
}

/// Ctrl+G: the input in `$VISUAL` or `$EDITOR` (vi if neither), read back when it exits.
fn edit(app: &mut App) {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_string());
    // A draft may hold anything: a file of our own only (0600, a fresh random name,
    // never a link or a file someone else put there).
    let name = format!("iac-code-input-{}.md", uuid::Uuid::new_v4().simple());
    let path = std::env::temp_dir().join(name);
    let written = crate::sys::own_file::options()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| std::io::Write::write_all(&mut file, app.editor.text.as_bytes()));
    if let Err(err) = written {
        app.notice = Some(format!("cannot write a temporary file for the editor: {err}"));
        return;
    }
    let mut command = crate::child::command("sh");
    command.args(["-c", &format!("{editor} \"$1\""), "sh"]).arg(&path);
    match crate::child::run_to_end(&mut command) {
        Ok(status) if status.success() => {
            if let Ok(text) = std::fs::read_to_string(&path) {
                app.editor.set(text.trim_end_matches('\n'));
            }
        }
        Ok(status) => app.notice = Some(format!("the editor exited with {status}")),
        Err(err) => app.notice = Some(format!("cannot run {editor}: {err}")),
    }
    let _ = std::fs::remove_file(&path);
}
