//! A small hand-written highlighter for the code a reply shows most: HCL (Terraform),
//! YAML, JSON, shell and diff. One line at a time, no grammar files: comments, strings,
//! numbers, keywords, keys and the diff's added and removed lines.

use ratatui::text::Span;

use super::theme::{Role, Theme};

/// The languages it knows, by a fence's info string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Hcl,
    Yaml,
    Json,
    Shell,
    Diff,
    Plain,
}

impl Lang {
    /// The language a fence names (```hcl, ```terraform, ```sh …).
    pub fn of(info: &str) -> Lang {
        match info.split_whitespace().next().unwrap_or("").to_ascii_lowercase().as_str() {
            "hcl" | "terraform" | "tf" | "tfvars" => Lang::Hcl,
            "yaml" | "yml" => Lang::Yaml,
            "json" | "jsonc" => Lang::Json,
            "sh" | "bash" | "shell" | "console" | "zsh" => Lang::Shell,
            "diff" | "patch" => Lang::Diff,
            _ => Lang::Plain,
        }
    }
}

const HCL_WORDS: &[&str] = &[
    "resource",
    "data",
    "variable",
    "output",
    "module",
    "provider",
    "locals",
    "terraform",
    "for_each",
    "count",
    "for",
    "in",
    "if",
    "dynamic",
    "lifecycle",
    "depends_on",
    "moved",
    "import",
    "check",
    "removed",
];
const SHELL_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "do", "done", "case", "esac", "in",
    "function", "export", "local", "return", "set", "unset", "cd", "echo",
];
const LITERALS: &[&str] = &["true", "false", "null", "yes", "no", "on", "off", "~"];

/// `line` of `lang` as styled spans (every character kept, in order).
pub fn line(lang: Lang, text: &str, theme: &Theme) -> Vec<Span<'static>> {
    match lang {
        Lang::Plain => vec![Span::raw(text.to_string())],
        Lang::Diff => {
            let role = match text.as_bytes().first() {
                Some(b'+') if !text.starts_with("+++") => Some(Role::Added),
                Some(b'-') if !text.starts_with("---") => Some(Role::Removed),
                Some(b'@') => Some(Role::Hunk),
                _ if text.starts_with("+++") || text.starts_with("---") => Some(Role::Strong),
                _ => None,
            };
            match role {
                Some(role) => vec![theme.span(role, text)],
                None => vec![Span::raw(text.to_string())],
            }
        }
        _ => tokens(lang, text, theme),
    }
}

fn tokens(lang: Lang, text: &str, theme: &Theme) -> Vec<Span<'static>> {
    let chars: Vec<char> = text.chars().collect();
    let mut spans = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    let first_word = chars.iter().position(|c| !c.is_whitespace()).unwrap_or(0);
    let flush = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            spans.push(Span::raw(std::mem::take(plain)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let comment = match lang {
            Lang::Json => false,
            Lang::Hcl => c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')),
            _ => c == '#' && (i == 0 || chars[i - 1].is_whitespace()),
        };
        if comment {
            flush(&mut plain, &mut spans);
            spans.push(theme.span(Role::Comment, chars[i..].iter().collect::<String>()));
            return spans;
        }
        if c == '"' || (c == '\'' && matches!(lang, Lang::Shell | Lang::Yaml)) {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' && c == '"' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            flush(&mut plain, &mut spans);
            let s: String = chars[i..end].iter().collect();
            // A JSON or YAML key is the string before a colon.
            let key = matches!(lang, Lang::Json | Lang::Yaml)
                && chars[end..].iter().find(|c| !c.is_whitespace()) == Some(&':');
            spans.push(theme.span(if key { Role::Key } else { Role::String }, s));
            i = end;
            continue;
        }
        if c.is_alphanumeric() || c == '_' || (c == '-' && lang == Lang::Yaml) {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || matches!(chars[j], '_' | '-' | '.'))
            {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let before_colon = chars.get(j) == Some(&':');
            let number = word.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-')
                && word.starts_with(|c: char| c.is_ascii_digit());
            let literal = LITERALS.contains(&word.as_str()) && lang != Lang::Shell;
            let keyword = match lang {
                Lang::Hcl => HCL_WORDS.contains(&word.as_str()),
                Lang::Shell => SHELL_WORDS.contains(&word.as_str()),
                _ => false,
            };
            let role = if number || literal {
                Some(Role::Number)
            } else if lang == Lang::Yaml && before_colon && i == first_word {
                Some(Role::Key)
            } else if keyword {
                Some(Role::Keyword)
            } else if lang == Lang::Shell && i == first_word {
                Some(Role::Strong)
            } else {
                None
            };
            match role {
                Some(role) => {
                    flush(&mut plain, &mut spans);
                    spans.push(theme.span(role, word));
                }
                None => plain.push_str(&word),
            }
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    flush(&mut plain, &mut spans);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(lang: Lang, text: &str) -> Vec<(String, bool)> {
        let theme = Theme { color: true };
        line(lang, text, &theme)
            .into_iter()
            .map(|s| {
                (s.content.to_string(), s.style.fg.is_some() || !s.style.add_modifier.is_empty())
            })
            .collect()
    }

    #[test]
    fn every_language_keeps_the_text_and_marks_its_tokens() {
        let cases = [
            (Lang::Hcl, "resource \"aws_s3_bucket\" \"b\" { # note"),
            (Lang::Yaml, "name: 'web' # x"),
            (Lang::Json, "{\"a\": [1, true, \"s\\\"q\"]}"),
            (Lang::Shell, "terraform plan -out=tf.plan && echo \"done\""),
            (Lang::Diff, "-  input = \"one\""),
        ];
        for (lang, text) in cases {
            let spans = roles(lang, text);
            let joined: String = spans.iter().map(|(s, _)| s.as_str()).collect();
            assert_eq!(joined, text, "{lang:?}");
            assert!(spans.iter().any(|(_, styled)| *styled), "{lang:?}: nothing highlighted");
        }
        assert_eq!(roles(Lang::Hcl, "resource")[0], ("resource".into(), true));
        assert_eq!(Lang::of("terraform"), Lang::Hcl);
        assert_eq!(Lang::of("rust"), Lang::Plain);
    }
}
