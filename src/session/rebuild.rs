//! A journal's bytes read into a `Rebuilt`: pure (no file, no store), so the file store,
//! tests and the fuzz target read journals the same way.

use super::record::Rebuilt;

impl Rebuilt {
    /// A session rebuilt from a journal's bytes (`name` says where, in warnings): its
    /// complete lines only (a torn last line, which a crash can leave, is not read), each
    /// through `apply_line`, blank ones skipped; then mended.
    pub fn from_journal(bytes: &[u8], name: &dyn std::fmt::Display) -> Rebuilt {
        Rebuilt::default().with_journal(bytes, name)
    }

    /// This session (empty, maybe `trusting` a seal) rebuilt from a journal's bytes, as
    /// `from_journal` does.
    pub fn with_journal(mut self, bytes: &[u8], name: &dyn std::fmt::Display) -> Rebuilt {
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        for (n, line) in bytes[..complete].split(|b| *b == b'\n').enumerate() {
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.apply_line(line, &format_args!("{name}:{}", n + 1));
            }
        }
        self.mend();
        self
    }
}
