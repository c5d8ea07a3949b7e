//! The terminal: raw mode, bracketed paste and the inline viewport's back end, restored
//! however the client ends (a normal exit, a panic through the hook, SIGTERM, SIGHUP,
//! SIGINT or SIGQUIT through a signal thread). The back end answers ratatui's cursor questions from what it
//! last did, so the terminal is asked where the cursor is only once, at start-up, before
//! the input thread owns the keyboard.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::{cursor, event, execute, terminal};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

use crate::sys;

/// Whether the terminal is in raw mode because of us (what a restore must undo).
static RAW: AtomicBool = AtomicBool::new(false);

/// Raw mode and bracketed paste on; the cursor's row as the terminal reports it.
pub fn enter() -> io::Result<Position> {
    terminal::enable_raw_mode()?;
    RAW.store(true, Ordering::SeqCst);
    let mut out = sys::stdout();
    // Disambiguated keys where the terminal offers them (kitty's protocol): Shift+Enter
    // is then told from Enter. A terminal without the protocol ignores the request.
    let keys = event::KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES;
    execute!(out, event::EnableBracketedPaste, event::PushKeyboardEnhancementFlags(keys))?;
    match cursor::position() {
        Ok((x, y)) => Ok(Position { x, y }),
        Err(err) => {
            // A terminal that does not report its cursor: start on a fresh bottom row.
            log::warn!("the terminal did not report the cursor's position: {err}");
            let (_, rows) = terminal::size().unwrap_or((80, 24));
            out.write_all(b"\r\n")?;
            out.flush()?;
            Ok(Position { x: 0, y: rows.saturating_sub(1) })
        }
    }
}

/// Undoes `enter` (idempotent): cooked mode, no bracketed paste, a visible cursor.
pub fn restore() {
    if RAW.swap(false, Ordering::SeqCst) {
        let mut out = sys::stdout();
        let _ = execute!(
            out,
            event::PopKeyboardEnhancementFlags,
            event::DisableBracketedPaste,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Restores the terminal before a panic's message is printed, when the panic is the
/// client's own (the calling thread's): the agent's threads catch theirs, and the client
/// goes on drawing.
pub fn restore_on_panic() {
    let client = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == client {
            restore();
            let _ = sys::stdout().write_all(b"\r\n");
        }
        previous(info);
    }));
}

/// SIGTERM, SIGHUP, SIGINT and SIGQUIT (a `kill` from outside: in raw mode the keys send
/// none), blocked in this thread (so in every thread it starts later) and received by a
/// thread that restores the terminal and exits 128 + the signal.
pub fn restore_on_signals() -> io::Result<()> {
    let signals = [sys::SIGTERM, sys::SIGHUP, sys::SIGINT, sys::SIGQUIT];
    // SIGWINCH too, taken by `resizes` alone: crossterm's own handler would make its event
    // source return a resize and drop the keys that became readable with it (its epoll is
    // edge-triggered: they would wait for the next key).
    sys::block_signals(&[sys::SIGWINCH])?;
    sys::block_signals(&signals)?;
    std::thread::Builder::new().name("tui-signals".into()).spawn(move || {
        if let Ok(signal) = sys::wait_signal(&signals) {
            restore();
            crate::child::kill_descendants();
            let _ = sys::stdout().write_all(b"\r\n");
            std::process::exit(128 + signal);
        }
    })?;
    Ok(())
}

/// A thread that turns each SIGWINCH (blocked everywhere by `restore_on_signals`) into a
/// resize event for the loop.
pub fn resizes(tx: crossbeam_channel::Sender<event::Event>) -> io::Result<()> {
    std::thread::Builder::new().name("tui-resize".into()).spawn(move || {
        while sys::wait_signal(&[sys::SIGWINCH]).is_ok() {
            let (cols, rows) = terminal::size().unwrap_or((80, 24));
            if tx.send(event::Event::Resize(cols, rows)).is_err() {
                return;
            }
        }
    })?;
    Ok(())
}

/// Crossterm's back end, answering cursor questions from its own record.
pub struct Tty {
    inner: CrosstermBackend<io::Stdout>,
    cursor: Position,
}

impl Tty {
    /// A back end whose cursor starts at `cursor`.
    pub fn new(cursor: Position) -> Tty {
        Tty { inner: CrosstermBackend::new(sys::stdout()), cursor }
    }

    /// Clears from row `top` to the bottom of the screen and leaves the cursor there.
    pub fn clear_from(&mut self, top: u16) -> io::Result<()> {
        self.set_cursor_position(Position { x: 0, y: top })?;
        self.inner.clear_region(ClearType::AfterCursor)?;
        Backend::flush(&mut self.inner)
    }
}

impl Backend for Tty {
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)?;
        let rows = self.size()?.height;
        self.cursor.y = self.cursor.y.saturating_add(n).min(rows.saturating_sub(1));
        Ok(())
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        let rows = self.size()?.height;
        Ok(Position { x: self.cursor.x, y: self.cursor.y.min(rows.saturating_sub(1)) })
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let position = position.into();
        self.cursor = position;
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}
