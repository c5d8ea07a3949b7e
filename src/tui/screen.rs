//! The inline viewport: lines to keep are inserted above it (into the terminal's
//! scrollback), the live rows drawn in it, its height following what it holds (the
//! viewport is made anew at the same place when the height changes).

use std::io;

use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::app::App;
use super::term::{self, Tty};
use super::theme::wrap;
use super::view;

/// Rows inserted into the scrollback at a time.
const CHUNK: usize = 500;

pub struct Screen {
    terminal: Terminal<Tty>,
    height: u16,
    area: Rect,
    /// The terminal's size when the viewport was made.
    size: Size,
}

impl Screen {
    /// A viewport of two rows with its top at `cursor`'s row.
    pub fn new(cursor: Position) -> io::Result<Screen> {
        Screen::at(Position { x: 0, y: cursor.y }, 2)
    }

    fn at(cursor: Position, height: u16) -> io::Result<Screen> {
        let options = TerminalOptions { viewport: Viewport::Inline(height) };
        let mut terminal = Terminal::with_options(Tty::new(cursor), options)?;
        let area = terminal.get_frame().area();
        let size = terminal.size()?;
        Ok(Screen { terminal, height, area, size })
    }

    /// Prints what the app has to keep, then draws the viewport.
    pub fn draw(&mut self, app: &mut App) -> io::Result<()> {
        let size = self.terminal.size()?;
        if size != self.size {
            self.rebuild(size)?;
        }
        let width = size.width.max(1);
        if !app.out.is_empty() {
            let rows: Vec<Line<'static>> =
                app.out.drain(..).flat_map(|l| wrap(&l, width)).collect();
            for chunk in rows.chunks(CHUNK) {
                let lines = chunk.to_vec();
                let n = u16::try_from(lines.len()).unwrap_or(u16::MAX);
                self.terminal
                    .insert_before(n, |buf| Paragraph::new(lines).render(buf.area, buf))?;
            }
        }
        let (mut rows, mut cursor) = view::rows(app, width);
        // Never taller than the screen: the live rows above the input give way first.
        let max = usize::from(size.height.saturating_sub(1).max(3));
        if rows.len() > max {
            let cut = rows.len() - max;
            rows.drain(..cut);
            cursor.y = cursor.y.saturating_sub(u16::try_from(cut).unwrap_or(u16::MAX));
        }
        let want = u16::try_from(rows.len()).unwrap_or(u16::MAX);
        if want != self.height {
            self.regrow(want)?;
        }
        let mut area = self.area;
        self.terminal.draw(|frame| {
            area = frame.area();
            Paragraph::new(rows).render(area, frame.buffer_mut());
            frame.set_cursor_position(Position { x: area.x + cursor.x, y: area.y + cursor.y });
        })?;
        self.area = area;
        Ok(())
    }

    /// After a resize: the old viewport cleared and a new one made where it was (as far
    /// up as it must to fit), so ratatui never guesses where the cursor went.
    fn rebuild(&mut self, size: Size) -> io::Result<()> {
        let height = self.height.min(size.height.max(1));
        let top = self.area.y.min(size.height.saturating_sub(height));
        self.terminal.backend_mut().clear_from(top)?;
        *self = Screen::at(Position { x: 0, y: top }, height)?;
        Ok(())
    }

    /// The viewport made anew, `height` rows tall, from the same top row.
    fn regrow(&mut self, height: u16) -> io::Result<()> {
        let top = self.terminal.get_frame().area().y;
        self.terminal.backend_mut().clear_from(top)?;
        *self = Screen::at(Position { x: 0, y: top }, height)?;
        Ok(())
    }

    /// Clears the viewport and leaves the cursor at its top (for what is printed after).
    pub fn close(mut self) -> io::Result<()> {
        let top = self.terminal.get_frame().area().y;
        self.terminal.backend_mut().clear_from(top)
    }

    /// Gives the terminal to `f` (an editor), then a new viewport where the cursor is.
    pub fn suspend(self, f: impl FnOnce()) -> io::Result<Screen> {
        self.close()?;
        term::restore();
        f();
        let cursor = term::enter()?;
        Screen::new(cursor)
    }
}
