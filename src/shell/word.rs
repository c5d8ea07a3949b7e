//! The inside of a word: quotes, escapes, `$…` expansions and backticks, after quote
//! removal. A substitution's commands are parsed (by the grammar, nested) as they are met.

use super::lex::{Parser, Word};

/// Which expansion `skip_expansion` reads.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `${…}`
    Param,
    /// `$((…))` and `((…))`
    Arith,
    /// `$[…]`, the old arithmetic
    Bracket,
}

/// What a `$` turned out to be.
#[derive(PartialEq)]
enum Dollar {
    Literal,
    Quoted,
    Dynamic,
}

impl Parser<'_> {
    pub(super) fn read_word(&mut self) -> Word {
        let start = self.pos;
        let mut buf = Vec::new();
        let (mut dynamic, mut quoted) = (false, false);
        // An unquoted `[` seen (a later `]` makes a glob); `{` seen, then `,` or `.` seen.
        let (mut bracket, mut brace) = (false, 0u8);
        while let Some(c) = self.byte(self.pos) {
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' => break,
                b'<' | b'>' if self.byte(self.pos + 1) != Some(b'(') => break,
                b'<' | b'>' => {
                    let from = self.pos;
                    self.pos += 2;
                    self.subst();
                    buf.extend_from_slice(self.bytes().get(from..self.pos).unwrap_or_default());
                    dynamic = true;
                }
                b'\\' => {
                    quoted = true;
                    match self.byte(self.pos + 1) {
                        Some(b'\n') => {}
                        Some(next) => buf.push(next),
                        None => buf.push(b'\\'),
                    }
                    self.pos = (self.pos + 2).min(self.bytes().len());
                }
                b'\'' => {
                    quoted = true;
                    self.single(&mut buf);
                }
                b'"' => {
                    quoted = true;
                    self.pos += 1;
                    dynamic |= self.double(&mut buf, false);
                }
                b'$' => match self.dollar(&mut buf, false) {
                    Dollar::Literal => {}
                    Dollar::Quoted => quoted = true,
                    Dollar::Dynamic => dynamic = true,
                },
                b'`' => {
                    self.backtick(&mut buf);
                    dynamic = true;
                }
                _ => {
                    match c {
                        b'*' | b'?' => dynamic = true,
                        b'[' => bracket = true,
                        b']' if bracket => dynamic = true,
                        b'{' => brace = brace.max(1),
                        b',' | b'.' if brace > 0 => brace = 2,
                        b'}' if brace == 2 => dynamic = true,
                        _ => {}
                    }
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
        let raw = self.bytes().get(start..self.pos).unwrap_or_default();
        Word { text: text(buf), dynamic, quoted, assign: assignment(raw) }
    }

    /// Reads `'…'` from its opening quote.
    fn single(&mut self, buf: &mut Vec<u8>) {
        let from = self.pos + 1;
        let rest = self.bytes().get(from..).unwrap_or_default();
        match rest.iter().position(|&c| c == b'\'') {
            Some(n) => {
                buf.extend_from_slice(rest.get(..n).unwrap_or_default());
                self.pos = from + n + 1;
            }
            None => {
                buf.extend_from_slice(rest);
                self.fail("an unclosed quote");
            }
        }
    }

    /// Reads the inside of `"…"` past its closing quote, or a whole here-document body when
    /// `heredoc`; returns whether it held an expansion.
    pub(super) fn double(&mut self, buf: &mut Vec<u8>, heredoc: bool) -> bool {
        let mut dynamic = false;
        while let Some(c) = self.byte(self.pos) {
            match c {
                b'"' if !heredoc => {
                    self.pos += 1;
                    return dynamic;
                }
                b'\\' => match self.byte(self.pos + 1) {
                    Some(b'\n') => self.pos += 2,
                    Some(next @ (b'$' | b'`' | b'"' | b'\\')) => {
                        buf.push(next);
                        self.pos += 2;
                    }
                    _ => {
                        buf.push(b'\\');
                        self.pos += 1;
                    }
                },
                b'$' => dynamic |= self.dollar(buf, true) == Dollar::Dynamic,
                b'`' => {
                    self.backtick(buf);
                    dynamic = true;
                }
                _ => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
        if !heredoc {
            self.fail("an unclosed double quote");
        }
        dynamic
    }

    /// Reads what starts with `$`; an expansion is copied as written.
    fn dollar(&mut self, buf: &mut Vec<u8>, in_double: bool) -> Dollar {
        let start = self.pos;
        match self.byte(start + 1) {
            Some(b'(') if self.byte(start + 2) == Some(b'(') => {
                self.pos = start + 3;
                self.arith();
            }
            Some(b'(') => {
                self.pos = start + 2;
                self.subst();
            }
            Some(b'{') => {
                self.pos = start + 2;
                self.param();
            }
            Some(b'[') => {
                self.pos = start + 2;
                self.skip_expansion(Kind::Bracket);
            }
            Some(b'\'') if !in_double => {
                self.pos = start + 2;
                self.ansi_c(buf);
                return Dollar::Quoted;
            }
            Some(b'"') if !in_double => {
                self.pos = start + 1;
                return Dollar::Quoted;
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => self.pos = start + 2,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let rest = self.bytes().get(start + 1..).unwrap_or_default();
                let n =
                    rest.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                self.pos = start + 1 + n;
            }
            _ => {
                buf.push(b'$');
                self.pos = start + 1;
                return Dollar::Literal;
            }
        }
        buf.extend_from_slice(self.bytes().get(start..self.pos).unwrap_or_default());
        Dollar::Dynamic
    }

    /// Reads `$'…'` past its closing quote, decoding the escapes.
    fn ansi_c(&mut self, buf: &mut Vec<u8>) {
        while let Some(c) = self.byte(self.pos) {
            self.pos += 1;
            match c {
                b'\'' => return,
                b'\\' => self.ansi_escape(buf),
                _ => buf.push(c),
            }
        }
        self.fail("an unclosed $'");
    }

    fn ansi_escape(&mut self, buf: &mut Vec<u8>) {
        let Some(e) = self.byte(self.pos) else { return };
        self.pos += 1;
        let byte = match e {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 7,
            b'b' => 8,
            b'e' | b'E' => 27,
            b'f' => 12,
            b'v' => 11,
            b'\\' | b'\'' | b'"' | b'?' => e,
            b'c' => {
                let Some(c) = self.byte(self.pos) else { return };
                self.pos += 1;
                c & 0x1f
            }
            b'0'..=b'7' => {
                self.pos -= 1;
                (self.number(8, 3).unwrap_or_default() & 0xff) as u8
            }
            b'x' | b'u' | b'U' => {
                let max = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                match self.number(16, max) {
                    Some(n) if e == b'x' => n as u8,
                    Some(n) => {
                        let c = char::from_u32(n).unwrap_or(char::REPLACEMENT_CHARACTER);
                        buf.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        return;
                    }
                    None => {
                        buf.extend_from_slice(&[b'\\', e]);
                        return;
                    }
                }
            }
            _ => {
                buf.extend_from_slice(&[b'\\', e]);
                return;
            }
        };
        buf.push(byte);
    }

    /// Up to `max` digits in `radix`, if there is one.
    fn number(&mut self, radix: u32, max: usize) -> Option<u32> {
        let (mut value, mut n) = (0u32, 0);
        while n < max
            && let Some(d) = self.byte(self.pos).and_then(|c| char::from(c).to_digit(radix))
        {
            value = value.wrapping_mul(radix).wrapping_add(d);
            self.pos += 1;
            n += 1;
        }
        (n > 0).then_some(value)
    }

    /// Reads `` `…` `` from its opening backtick; its commands are parsed again, nested.
    fn backtick(&mut self, buf: &mut Vec<u8>) {
        let start = self.pos;
        self.pos += 1;
        let mut inner = Vec::new();
        loop {
            match self.byte(self.pos) {
                None => {
                    self.fail("an unclosed backtick");
                    break;
                }
                Some(b'`') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') if matches!(self.byte(self.pos + 1), Some(b'`' | b'\\' | b'$')) => {
                    inner.push(self.byte(self.pos + 1).unwrap_or_default());
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        buf.extend_from_slice(self.bytes().get(start..self.pos).unwrap_or_default());
        self.sub_parse(&text(inner));
    }

    /// Skips the rest of `${…}`, `$((…))` or `$[…]`, parsing the substitutions inside, and
    /// checks what bash would evaluate in it (`names.rs`).
    fn skip_expansion(&mut self, kind: Kind) {
        if !self.enter() {
            return;
        }
        let arith = kind == Kind::Arith;
        let start = self.pos;
        let (mut scratch, mut parens) = (Vec::new(), 0usize);
        let mut end = None;
        loop {
            scratch.clear();
            match self.byte(self.pos) {
                None => {
                    self.fail("an unclosed expansion");
                    break;
                }
                Some(b'}') if kind == Kind::Param => {
                    end = Some(self.pos);
                    self.pos += 1;
                    break;
                }
                Some(b'[') if kind == Kind::Bracket => {
                    parens += 1;
                    self.pos += 1;
                }
                Some(b']') if kind == Kind::Bracket && parens > 0 => {
                    parens -= 1;
                    self.pos += 1;
                }
                Some(b']') if kind == Kind::Bracket => {
                    end = Some(self.pos);
                    self.pos += 1;
                    break;
                }
                Some(b'(') if arith => {
                    parens += 1;
                    self.pos += 1;
                }
                Some(b')') if arith && parens > 0 => {
                    parens -= 1;
                    self.pos += 1;
                }
                Some(b')') if arith && self.byte(self.pos + 1) == Some(b')') => {
                    end = Some(self.pos);
                    self.pos += 2;
                    break;
                }
                Some(b')') if arith => {
                    self.fail("an unclear $(( … ))");
                    break;
                }
                Some(b'\\') => self.pos = (self.pos + 2).min(self.bytes().len()),
                Some(b'\'') => self.single(&mut scratch),
                Some(b'"') => {
                    self.pos += 1;
                    self.double(&mut scratch, false);
                }
                Some(b'$') => {
                    self.dollar(&mut scratch, true);
                }
                Some(b'`') => self.backtick(&mut scratch),
                Some(_) => self.pos += 1,
            }
        }
        let inner = self.bytes().get(start..end.unwrap_or(self.pos)).unwrap_or_default();
        let inner = String::from_utf8_lossy(inner);
        let checked = match kind {
            Kind::Param => self.names.param(&inner),
            _ => self.names.arith(&inner),
        };
        if let Err(reason) = checked {
            self.out.opaque.push(reason);
            self.out.runs_hidden = true;
        }
        self.leave();
    }

    /// The rest of `${…}`, from after the brace.
    fn param(&mut self) {
        self.skip_expansion(Kind::Param);
    }

    /// The rest of `$((…))` or `((…))`, from after the two parentheses.
    pub(super) fn arith(&mut self) {
        self.skip_expansion(Kind::Arith);
    }
}

/// The text of a word's bytes; only `$'\xHH'` escapes can make them invalid UTF-8.
fn text(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// For a word written `NAME=…` or `NAME+=…` with an unquoted, valid name: where the name
/// ends and the value starts.
fn assignment(raw: &[u8]) -> Option<(usize, usize)> {
    let n = raw.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    if n == 0 || raw.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    match raw.get(n..) {
        Some([b'=', ..]) => Some((n, n + 1)),
        Some([b'+', b'=', ..]) => Some((n, n + 2)),
        _ => None,
    }
}
