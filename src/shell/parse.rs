//! The grammar: lists, pipelines, compound commands and simple commands, flattened into
//! `Script::commands` in the order they are read. Each simple command is handed to
//! `unwrap`; anything unexpected stops the parse and is named in `Script::opaque`.

use super::lex::{Op, Parser, Redir, Tok, op_text};
use super::unwrap::unwrap;
use super::{MAX_COPIES, MAX_DEPTH, MAX_INPUT, Redirect, RedirectKind, Script, Simple, short};

/// Reserved words that end a list.
const CLOSERS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}"];

/// Parses `src` nested `depth` deep.
pub(super) fn parse_at(src: &str, depth: usize) -> Script {
    let refuse = |reason: &str| Script {
        commands: Vec::new(),
        opaque: vec![reason.to_string()],
        runs_hidden: false,
    };
    if src.len() > MAX_INPUT {
        return refuse("longer than 64 KiB");
    }
    if depth > MAX_DEPTH {
        return refuse("nested too deeply");
    }
    let mut p = Parser::new(src, depth);
    p.list();
    if !matches!(p.peek(), Tok::Eof) {
        p.unexpected();
    }
    let late = p.names.finish();
    p.out.runs_hidden |= !late.is_empty();
    p.out.opaque.extend(late);
    p.out
}

impl Parser<'_> {
    /// Parses `src` (a backtick's or a here-document's text) one level deeper.
    pub(super) fn sub_parse(&mut self, src: &str) {
        if src.len() > MAX_INPUT || self.depth + 1 > MAX_DEPTH {
            return self.merge(parse_at(src, self.depth + 1));
        }
        let mut sub = Parser::new(src, self.depth + 1);
        sub.names = self.names.child();
        sub.list();
        if !matches!(sub.peek(), Tok::Eof) {
            sub.unexpected();
        }
        self.merge(sub.out);
        self.names.absorb(sub.names);
    }

    /// The rest of `$(…)`, `<(…)` or `>(…)`, from after the opening parenthesis.
    pub(super) fn subst(&mut self) {
        if self.enter() {
            self.list();
            self.expect_op(Op::RParen, "an unclosed $(");
            self.leave();
        }
    }

    /// Commands separated by `;`, `&` and newlines, up to what closes the list.
    fn list(&mut self) {
        loop {
            self.newlines();
            let closer = CLOSERS.contains(&self.keyword());
            if closer || matches!(self.peek(), Tok::Eof | Tok::Op(Op::RParen | Op::DSemi)) {
                return;
            }
            let committed = self.and_or();
            if !matches!(self.peek(), Tok::Op(Op::Semi | Op::Amp | Op::Newline)) {
                return;
            }
            // In the background, the list ran in a subshell: its assignments are not ours.
            if matches!(self.next(), Tok::Op(Op::Amp)) {
                committed.iter().for_each(|name| self.names.forget(name));
            }
        }
    }

    /// An and-or list; returns the variables its first pipeline set to literal numbers
    /// (they are known from then on: the first pipeline always runs).
    fn and_or(&mut self) -> Vec<String> {
        self.pipeline();
        let committed = self.names.commit();
        loop {
            if !matches!(self.peek(), Tok::Op(Op::And | Op::Or)) {
                return committed;
            }
            self.next();
            self.newlines();
            self.pipeline();
            self.names.drop_pending();
        }
    }

    fn pipeline(&mut self) {
        while matches!(self.peek(), Tok::Word(w) if w.keyword() == Some("!")) {
            self.next();
        }
        let mut piped = false;
        loop {
            let start = self.out.commands.len();
            self.command();
            if piped {
                self.out.commands.iter_mut().skip(start).for_each(|c| c.piped = true);
            }
            if !matches!(self.peek(), Tok::Op(Op::Pipe | Op::PipeAll)) {
                return;
            }
            // A command of a pipeline runs in a subshell: its assignments are not ours.
            self.names.drop_pending();
            self.next();
            self.newlines();
            piped = true;
        }
    }

    fn command(&mut self) {
        let keyword = self.keyword();
        if keyword.is_empty() {
            return self.simple();
        }
        if matches!(keyword, "?" | "then" | "elif" | "else" | "fi" | "do" | "done" | "in")
            || matches!(keyword, "esac" | "}")
        {
            return self.unexpected();
        }
        let start = self.out.commands.len();
        self.next();
        if !self.enter() {
            return;
        }
        match keyword {
            "(" if self.byte(self.pos) == Some(b'(') => {
                self.pos += 1;
                self.arith();
            }
            "(" => {
                self.list();
                self.expect_op(Op::RParen, "an unclosed (");
            }
            "{" => {
                self.list();
                self.expect_keyword("}");
            }
            "if" => self.if_clause(),
            "while" | "until" => self.do_group(),
            "for" => self.for_clause(),
            "case" => self.case_clause(),
            "[[" => self.test_clause(),
            _ => self.function(),
        }
        self.leave();
        self.compound_redirects(start);
    }

    fn if_clause(&mut self) {
        loop {
            self.list();
            self.expect_keyword("then");
            self.list();
            match self.keyword() {
                "elif" => {
                    self.next();
                }
                "else" => {
                    self.next();
                    self.list();
                    return self.expect_keyword("fi");
                }
                _ => return self.expect_keyword("fi"),
            }
        }
    }

    /// `LIST; do LIST; done`: the rest of `while` and `until`.
    fn do_group(&mut self) {
        self.list();
        self.expect_keyword("do");
        self.list();
        self.expect_keyword("done");
    }

    fn for_clause(&mut self) {
        if self.at_op(Op::LParen) && self.byte(self.pos) == Some(b'(') {
            self.next();
            self.pos += 1;
            self.arith();
        } else {
            if !matches!(self.next(), Tok::Word(_)) {
                return self.fail("a for without a name");
            }
            self.newlines();
            if self.keyword() == "in" {
                self.next();
                while matches!(self.peek(), Tok::Word(_)) {
                    self.next();
                }
            }
        }
        if self.at_op(Op::Semi) {
            self.next();
        }
        self.newlines();
        self.expect_keyword("do");
        self.list();
        self.expect_keyword("done");
    }

    fn case_clause(&mut self) {
        if !matches!(self.next(), Tok::Word(_)) {
            return self.fail("a case without a word");
        }
        self.newlines();
        self.expect_keyword("in");
        loop {
            self.newlines();
            if matches!(self.keyword(), "esac" | "?") {
                return self.expect_keyword("esac");
            }
            if self.at_op(Op::LParen) {
                self.next();
            }
            loop {
                let pattern = matches!(self.next(), Tok::Word(_));
                match self.next() {
                    Tok::Op(Op::Pipe) if pattern => {}
                    Tok::Op(Op::RParen) if pattern => break,
                    _ => return self.fail("a bad case pattern"),
                }
            }
            self.list();
            if self.at_op(Op::DSemi) {
                self.next();
            } else if self.keyword() != "esac" {
                return self.expect_keyword("esac");
            }
        }
    }

    /// `[[ … ]]`: one command named `[[`, whose operators are words.
    fn test_clause(&mut self) {
        let mut s = Simple { argv: vec!["[[".into()], dynamic: vec![false], ..Simple::default() };
        loop {
            let (text, dynamic) = match self.next() {
                Tok::Word(w) => (w.text, w.dynamic),
                Tok::Op(op @ (Op::And | Op::Or | Op::LParen | Op::RParen | Op::Pipe)) => {
                    (op_text(op).to_string(), false)
                }
                Tok::Redir(None, Redir::Read) => ("<".into(), false),
                Tok::Redir(None, Redir::Write) => (">".into(), false),
                _ => {
                    self.fail("an unclosed [[");
                    break;
                }
            };
            let end = text == "]]" && !dynamic;
            s.argv.push(text);
            s.dynamic.push(dynamic);
            if end {
                break;
            }
        }
        self.finish(s);
    }

    /// `function NAME [()] BODY`, after `function`.
    fn function(&mut self) {
        match self.next() {
            Tok::Word(w) => {
                let parens = self.at_op(Op::LParen);
                self.define(&w.text, parens);
            }
            _ => self.fail("a function without a name"),
        }
    }

    /// A function definition from its `(` (when `parens`): its body is parsed, as it may be
    /// called, and the script is opaque.
    fn define(&mut self, name: &str, parens: bool) {
        self.out.opaque.push(format!("defines a function: {}", short(name)));
        if parens {
            self.next();
            self.expect_op(Op::RParen, "a bad function definition");
        }
        self.newlines();
        if self.enter() {
            self.command();
            self.leave();
        }
    }

    /// Redirections after a compound command apply to every command inside it.
    fn compound_redirects(&mut self, start: usize) {
        let end = self.out.commands.len();
        let mut redirects = Vec::new();
        while let Tok::Redir(..) = self.peek() {
            if let Tok::Redir(fd, op) = self.next()
                && let Some(r) = self.redirect(fd, op)
            {
                redirects.push(r);
            }
        }
        if redirects.is_empty() {
            return;
        }
        if start == end {
            let s = Simple { redirects, ..Simple::default() };
            return self.out.commands.push(s);
        }
        if (end - start).saturating_mul(redirects.len()) > MAX_COPIES {
            return self.out.opaque.push("too many redirections to copy".into());
        }
        for c in self.out.commands.get_mut(start..end).unwrap_or_default() {
            c.redirects.extend(redirects.iter().cloned());
        }
    }

    fn simple(&mut self) {
        let mut s = Simple::default();
        loop {
            match self.next() {
                Tok::Word(w) => {
                    if s.argv.is_empty()
                        && let Some((name_end, value_start)) = w.assign
                    {
                        let name = w.text.get(..name_end).unwrap_or_default().to_string();
                        let value = w.text.get(value_start..).unwrap_or_default().to_string();
                        s.assigns.push((name, value));
                        continue;
                    }
                    let first = s.argv.is_empty() && s.assigns.is_empty() && s.redirects.is_empty();
                    if first && self.at_op(Op::LParen) {
                        return self.define(&w.text, true);
                    }
                    s.argv.push(w.text);
                    s.dynamic.push(w.dynamic);
                }
                Tok::Redir(fd, op) => s.redirects.extend(self.redirect(fd, op)),
                other => {
                    self.push_back(other);
                    break;
                }
            }
        }
        self.finish(s);
    }

    fn finish(&mut self, s: Simple) {
        let (depth, bare) = (self.depth, s.argv.is_empty());
        for (name, value) in &s.assigns {
            self.names.assign(name, value, bare, depth == 0);
        }
        let start = self.out.commands.len();
        unwrap(s, &mut |text: &str| parse_at(text, depth + 1), &mut self.out);
        let mut reasons = Vec::new();
        for c in self.out.commands.get(start..).unwrap_or_default() {
            reasons.extend(self.names.command(c));
        }
        self.out.runs_hidden |= !reasons.is_empty();
        self.out.opaque.extend(reasons);
    }

    /// Reads a redirection's target after its operator.
    fn redirect(&mut self, fd: Option<u32>, op: Redir) -> Option<Redirect> {
        let Tok::Word(w) = self.next() else {
            self.fail("a redirection without a target");
            return None;
        };
        let text = w.text.as_str();
        let number = !w.dynamic && (text == "-" || text.bytes().all(|c| c.is_ascii_digit()));
        let kind = match op {
            Redir::Read => RedirectKind::Read,
            Redir::Write | Redir::Clobber | Redir::WriteAll => RedirectKind::Write,
            Redir::Append | Redir::AppendAll => RedirectKind::Append,
            Redir::ReadWrite => RedirectKind::ReadWrite,
            Redir::DupIn => RedirectKind::Dup,
            Redir::DupOut if number && !text.is_empty() => RedirectKind::Dup,
            // `>&file` writes stdout and stderr to the file.
            Redir::DupOut => RedirectKind::Write,
            Redir::HereDoc | Redir::HereDocDash => {
                self.here_doc(text, op == Redir::HereDocDash, w.quoted);
                RedirectKind::HereDoc
            }
            Redir::HereStr => RedirectKind::HereString,
        };
        let dynamic = w.dynamic && kind != RedirectKind::HereDoc;
        Some(Redirect { fd, kind, target: w.text, dynamic })
    }
}
