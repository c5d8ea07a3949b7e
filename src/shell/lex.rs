//! Tokens of shell source, read from a cursor the grammar (`parse.rs`) shares: a `$(…)` in a
//! word (read by `word.rs`) hands the cursor back to the grammar, so nested code is read once,
//! in one pass. Also skips here-document bodies. Knows syntax, nothing about programs.

use super::names::Names;
use super::{MAX_DEPTH, Script, short};

/// The parser's state: the source, a cursor, one token of lookahead and what was found.
pub(super) struct Parser<'a> {
    src: &'a str,
    pub(super) pos: usize,
    /// How many constructs enclose the cursor; `enter` keeps it under `MAX_DEPTH`.
    pub(super) depth: usize,
    pub(super) out: Script,
    peeked: Option<Tok>,
    /// Here-documents whose bodies start after the next newline.
    heredocs: Vec<HereDoc>,
    /// Set by `fail`: the rest of the source is skipped.
    dead: bool,
    /// What the script does with its variables, for what bash evaluates as arithmetic.
    pub(super) names: Names,
}

/// A here-document waiting for its body.
struct HereDoc {
    delim: String,
    strip_tabs: bool,
    quoted: bool,
}

/// One token.
pub(super) enum Tok {
    Word(Word),
    Op(Op),
    /// A redirection operator and the file descriptor written before it.
    Redir(Option<u32>, Redir),
    Eof,
}

/// A control operator, or a newline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    And,
    Or,
    Semi,
    /// `;;`, `;&` or `;;&`: the end of a `case` branch.
    DSemi,
    Amp,
    Pipe,
    PipeAll,
    LParen,
    RParen,
    Newline,
}

/// A redirection operator.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Redir {
    Read,
    Write,
    Clobber,
    Append,
    ReadWrite,
    DupIn,
    DupOut,
    WriteAll,
    AppendAll,
    HereDoc,
    HereDocDash,
    HereStr,
}

/// A word after quote removal; expansions stay as written.
pub(super) struct Word {
    pub(super) text: String,
    /// It holds an expansion whose value is unknown here.
    pub(super) dynamic: bool,
    /// It held quotes or backslashes.
    pub(super) quoted: bool,
    /// For `NAME=value` and `NAME+=value`: where the name ends and where the value starts.
    pub(super) assign: Option<(usize, usize)>,
}

impl Word {
    /// The word, when nothing in it was quoted or expanded (so it may be a reserved word).
    pub(super) fn keyword(&self) -> Option<&str> {
        (!self.quoted && !self.dynamic).then_some(self.text.as_str())
    }
}

/// Words reserved at the start of a command.
const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in", "case",
    "esac", "{", "}", "function", "[[",
];

/// Longest first, so that a prefix never hides a longer operator.
const REDIRS: &[(&str, Redir)] = &[
    ("<<<", Redir::HereStr),
    ("<<-", Redir::HereDocDash),
    ("<<", Redir::HereDoc),
    ("<&", Redir::DupIn),
    ("<>", Redir::ReadWrite),
    ("<", Redir::Read),
    (">>", Redir::Append),
    (">|", Redir::Clobber),
    (">&", Redir::DupOut),
    (">", Redir::Write),
    ("&>>", Redir::AppendAll),
    ("&>", Redir::WriteAll),
];

const OPS: &[(&str, Op)] = &[
    (";;&", Op::DSemi),
    (";;", Op::DSemi),
    (";&", Op::DSemi),
    (";", Op::Semi),
    ("&&", Op::And),
    ("&", Op::Amp),
    ("||", Op::Or),
    ("|&", Op::PipeAll),
    ("|", Op::Pipe),
    ("(", Op::LParen),
    (")", Op::RParen),
];

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, depth: usize) -> Self {
        let out = Script::default();
        Parser {
            src,
            pos: 0,
            depth,
            out,
            peeked: None,
            heredocs: Vec::new(),
            dead: false,
            names: Names::default(),
        }
    }

    pub(super) fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    pub(super) fn byte(&self, at: usize) -> Option<u8> {
        self.bytes().get(at).copied()
    }

    /// Records why the rest cannot be understood (the first reason only) and skips it.
    pub(super) fn fail(&mut self, reason: &str) {
        if !self.dead {
            self.dead = true;
            self.out.opaque.push(reason.to_string());
        }
        self.pos = self.src.len();
        self.peeked = Some(Tok::Eof);
        self.heredocs.clear();
    }

    /// Steps one construct deeper; false (and the rest skipped) when that is too deep.
    pub(super) fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            self.fail("nested too deeply");
            return false;
        }
        self.depth += 1;
        true
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Adds what a nested parse found.
    pub(super) fn merge(&mut self, other: Script) {
        self.out.commands.extend(other.commands);
        self.out.opaque.extend(other.opaque);
        self.out.runs_hidden |= other.runs_hidden;
    }

    pub(super) fn peek(&mut self) -> &Tok {
        if self.peeked.is_none() {
            let tok = self.lex();
            self.peeked = Some(tok);
        }
        self.peeked.as_ref().unwrap_or(&Tok::Eof)
    }

    pub(super) fn next(&mut self) -> Tok {
        match self.peeked.take() {
            Some(tok) => tok,
            None => self.lex(),
        }
    }

    /// Puts back a token just taken by `next`.
    pub(super) fn push_back(&mut self, tok: Tok) {
        self.peeked = Some(tok);
    }

    /// Registers a here-document; its body is skipped after the next newline.
    pub(super) fn here_doc(&mut self, delim: &str, strip_tabs: bool, quoted: bool) {
        self.heredocs.push(HereDoc { delim: delim.to_string(), strip_tabs, quoted });
    }

    fn line_end(&self, from: usize) -> usize {
        let rest = self.bytes().get(from..).unwrap_or_default();
        rest.iter().position(|&c| c == b'\n').map_or(self.src.len(), |n| from + n)
    }

    fn lex(&mut self) -> Tok {
        let b = self.bytes();
        loop {
            match b.get(self.pos) {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if b.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                Some(b'#') => self.pos = self.line_end(self.pos),
                _ => break,
            }
        }
        let rest = b.get(self.pos..).unwrap_or_default();
        match rest {
            [] => return Tok::Eof,
            [b'\n', ..] => {
                self.pos += 1;
                self.read_heredocs();
                return Tok::Op(Op::Newline);
            }
            [b'<' | b'>', b'(', ..] => return Tok::Word(self.read_word()),
            _ => {}
        }
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        let after = rest.get(digits..).unwrap_or_default();
        let redir = REDIRS.iter().find(|(op, _)| {
            after.starts_with(op.as_bytes()) && (digits == 0 || !op.starts_with('&'))
        });
        if let Some((op, redir)) = redir {
            let fd = self.src.get(self.pos..self.pos + digits).and_then(|d| d.parse().ok());
            self.pos += digits + op.len();
            return Tok::Redir(fd, *redir);
        }
        if let Some((op, o)) = OPS.iter().find(|(op, _)| rest.starts_with(op.as_bytes())) {
            self.pos += op.len();
            return Tok::Op(*o);
        }
        Tok::Word(self.read_word())
    }

    pub(super) fn unexpected(&mut self) {
        let what = match self.peek() {
            Tok::Word(w) => short(&w.text),
            Tok::Op(op) => op_text(*op).to_string(),
            Tok::Redir(..) => "a redirection".to_string(),
            Tok::Eof => "the end".to_string(),
        };
        self.fail(&format!("unexpected {what}"));
    }

    /// The reserved word (or `(`) the next token is, `""` for another word or a
    /// redirection, `"?"` for an operator or the end.
    pub(super) fn keyword(&mut self) -> &'static str {
        match self.peek() {
            Tok::Word(w) => {
                let word = w.keyword();
                KEYWORDS.iter().copied().find(|k| Some(*k) == word).unwrap_or("")
            }
            Tok::Redir(..) => "",
            Tok::Op(Op::LParen) => "(",
            Tok::Op(_) | Tok::Eof => "?",
        }
    }

    pub(super) fn at_op(&mut self, op: Op) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    pub(super) fn newlines(&mut self) {
        while self.at_op(Op::Newline) {
            self.next();
        }
    }

    pub(super) fn expect_op(&mut self, op: Op, reason: &str) {
        if !matches!(self.next(), Tok::Op(o) if o == op) {
            self.fail(reason);
        }
    }

    pub(super) fn expect_keyword(&mut self, keyword: &str) {
        if !matches!(self.next(), Tok::Word(w) if w.keyword() == Some(keyword)) {
            self.fail(&format!("expected {keyword}"));
        }
    }

    /// Skips the bodies of the here-documents registered on the line that just ended; the
    /// substitutions in a body with an unquoted delimiter are parsed.
    fn read_heredocs(&mut self) {
        let b = self.bytes();
        for doc in std::mem::take(&mut self.heredocs) {
            let (start, mut end) = (self.pos, b.len());
            while self.pos < b.len() {
                let line_start = self.pos;
                let line_end = self.line_end(line_start);
                self.pos = (line_end + 1).min(b.len());
                let mut line = b.get(line_start..line_end).unwrap_or_default();
                while doc.strip_tabs
                    && let [b'\t', rest @ ..] = line
                {
                    line = rest;
                }
                if line == doc.delim.as_bytes() {
                    end = line_start;
                    break;
                }
            }
            let body = self.src.get(start..end).unwrap_or_default();
            if !doc.quoted && body.contains(['$', '`']) {
                let mut sub = Parser::new(body, self.depth + 1);
                sub.names = self.names.child();
                sub.double(&mut Vec::new(), true);
                self.merge(sub.out);
                self.names.absorb(sub.names);
            }
        }
    }
}

pub(super) fn op_text(op: Op) -> &'static str {
    match op {
        Op::And => "&&",
        Op::Or => "||",
        Op::Semi => ";",
        Op::DSemi => ";;",
        Op::Amp => "&",
        Op::Pipe => "|",
        Op::PipeAll => "|&",
        Op::LParen => "(",
        Op::RParen => ")",
        Op::Newline => "a newline",
    }
}
