//! Patterns the shell expands (`*`, `?`, `[…]`, `{a,b}`): whether one can name terraform
//! state (`*`, `terraform.tfstat*`, `*.backup`, `.terr*`). Knows no program.

/// The endings a state file's name has, and the names that are state whole.
const STATE_ENDINGS: &[&str] = &[".tfstate", ".tfstate.backup", ".tfstate.d"];
const STATE_NAMES: &[&str] = &[".terraform", "terraform.tfstate.d"];

/// Whether a pattern word (the last component is what matters) may match the name of a
/// terraform state file or directory. Brace groups count as `*`.
pub(super) fn may_name_state(word: &str) -> bool {
    let last = word.rsplit('/').next().unwrap_or(word);
    let pattern = elements(last);
    STATE_ENDINGS.iter().any(|e| ends(&pattern, e.as_bytes()))
        || STATE_NAMES.iter().any(|n| whole(&pattern, n.as_bytes()))
}

/// One element of a pattern.
enum Elem {
    Byte(u8),
    Any,
    Star,
    /// `[…]`: the bytes between the brackets, and whether it is negated.
    Class(Vec<u8>, bool),
}

impl Elem {
    fn matches(&self, b: u8) -> bool {
        match self {
            Elem::Byte(c) => *c == b,
            Elem::Any | Elem::Star => true,
            Elem::Class(set, negated) => class(set, b) != *negated,
        }
    }
}

/// Whether `b` is in a bracket expression's body (`a-z`, single bytes).
fn class(set: &[u8], b: u8) -> bool {
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == b'-' {
            if (set[i]..=set[i + 2]).contains(&b) {
                return true;
            }
            i += 3;
        } else {
            if set[i] == b {
                return true;
            }
            i += 1;
        }
    }
    false
}

/// The elements of a pattern; `{…}` is a star, `\x` a literal, an unclosed `[` a literal.
fn elements(word: &str) -> Vec<Elem> {
    let b = word.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'*' => out.push(Elem::Star),
            b'?' => out.push(Elem::Any),
            b'\\' if i + 1 < b.len() => {
                i += 1;
                out.push(Elem::Byte(b[i]));
            }
            b'{' => match b[i..].iter().position(|&c| c == b'}') {
                Some(end) => {
                    out.push(Elem::Star);
                    i += end;
                }
                None => out.push(Elem::Byte(b'{')),
            },
            b'[' => {
                let negated = matches!(b.get(i + 1), Some(b'!' | b'^'));
                let start = i + 1 + usize::from(negated);
                // A `]` right after the opening is part of the set.
                let close = b.get(start + 1..).and_then(|r| r.iter().position(|&c| c == b']'));
                match close {
                    Some(end) => {
                        let end = start + 1 + end;
                        out.push(Elem::Class(b[start..end].to_vec(), negated));
                        i = end;
                    }
                    None => out.push(Elem::Byte(b'[')),
                }
            }
            c => out.push(Elem::Byte(c)),
        }
        i += 1;
    }
    out
}

/// Whether the pattern matches some name ending in `tail`: matched from the right, a star
/// can take the rest of the tail, and whatever precedes can match something.
fn ends(pattern: &[Elem], tail: &[u8]) -> bool {
    let (mut p, mut t) = (pattern.len(), tail.len());
    while t > 0 {
        if p == 0 {
            return false;
        }
        let elem = &pattern[p - 1];
        if matches!(elem, Elem::Star) {
            return true;
        }
        if !elem.matches(tail[t - 1]) {
            return false;
        }
        p -= 1;
        t -= 1;
    }
    true
}

/// Whether the pattern matches `name` whole (with backtracking over stars).
fn whole(pattern: &[Elem], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(Elem::Star) => {
                star = Some((p, n));
                p += 1;
            }
            Some(e) if e.matches(name[n]) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|e| matches!(e, Elem::Star))
}

#[cfg(test)]
mod tests {
    use super::may_name_state;

    #[test]
    fn patterns_that_can_name_state() {
        for word in ["*", "terraform.tfstat*", "*.backup", ".terr*", "x/*", "terraform.tfstat[e]"] {
            assert!(may_name_state(word), "{word}");
        }
        for word in ["*.txt", "*.tf", "main.?f", "[!t]*.json", "logs/*.log", "a{b,c}.md"] {
            assert!(!may_name_state(word), "{word}");
        }
        assert!(may_name_state("terraform.{tfstate,x}"));
        assert!(may_name_state("*.tf*"));
        assert!(!may_name_state("*.tfvars"));
    }
}
