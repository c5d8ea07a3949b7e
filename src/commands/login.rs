//! `iac-code login` and `iac-code logout`. In a terminal, login asks for a provider preset,
//! its base URL, the model and the API key (read with echo off, never shown), tests them
//! with a one-token request (`provider::probe`), and only then stores them in
//! settings.json (`config::login::store`: locked, atomic, 0600). For scripts the same comes
//! from `--preset`, `--base-url`, `--model` and `--api-key-stdin`. Logout removes what
//! login stored (`config::login::clear`). Prompts and results go to stdout.

use std::io::{self, BufRead, IsTerminal, Read, StdinLock, Write};
use std::os::fd::AsFd;

use crate::cancel::CancelToken;
use crate::cli::LoginArgs;
use crate::config::login::{self, Login, PresetInfo};
use crate::config::{Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::provider::probe;
use crate::sys;

/// Answers that may be wrong before login gives up.
const TRIES: usize = 5;
/// The longest key read.
const MAX_KEY: usize = 16 << 10;
/// The variables that override what login stores.
const OVERRIDES: [&str; 4] =
    ["IAC_CODE_PROVIDER", "IAC_CODE_BASE_URL", "IAC_CODE_MODEL", "IAC_CODE_API_KEY"];

/// The user stopped (Ctrl-C, Ctrl-D): exit 130, nothing stored.
struct Cancelled;

/// Runs `iac-code login`; returns the exit code.
pub fn login(args: &LoginArgs) -> Result<u8> {
    let env = ProcessEnv;
    let stdin = io::stdin();
    let chosen = if !args.key_stdin && stdin.is_terminal() {
        let mut term = Term { input: stdin.lock() };
        match term.ask(args) {
            Ok(Ok(login)) => login,
            Ok(Err(Cancelled)) => {
                say("\nlogin cancelled; nothing was saved")?;
                return Ok(130);
            }
            Err(err) => return Err(err),
        }
    } else {
        scripted(args)?
    };
    let provider = chosen.provider_config(&env)?;
    if args.no_test {
        say("not tested (--no-test)")?;
    } else {
        say(&format!(
            "testing {} at {} with model {} (a one-token request)...",
            chosen.preset, provider.base_url, provider.model
        ))?;
        if let Err(failure) = probe::one_token(&provider, &CancelToken::new()) {
            return Err(Error::NotConfigured(format!(
                "the provider did not accept the test request ({}): {failure}; nothing was \
                 saved (check the base URL, the model and the key; --no-test saves without \
                 testing)",
                failure.kind.id()
            )));
        }
        say("the provider answered")?;
    }
    let path = login::store(&env, &chosen)?;
    say(&format!(
        "signed in: {} at {}, model {}; saved to {}",
        chosen.preset,
        provider.base_url,
        provider.model,
        path.display()
    ))?;
    for var in OVERRIDES.iter().filter(|v| env.get(v).is_some()) {
        say(&format!("note: {var} is set in the environment and wins over settings.json"))?;
    }
    Ok(0)
}

/// Runs `iac-code logout`; returns the exit code.
pub fn logout() -> Result<u8> {
    let env = ProcessEnv;
    let cleared = login::clear(&env)?;
    if cleared.removed.is_empty() {
        say(&format!("no stored credentials in {}", cleared.path.display()))?;
    } else {
        say(&format!(
            "signed out: removed {} from {}",
            cleared.removed.join(", "),
            cleared.path.display()
        ))?;
    }
    for var in OVERRIDES.iter().filter(|v| env.get(v).is_some()) {
        say(&format!("note: {var} is set in the environment; logout cannot unset it"))?;
    }
    Ok(0)
}

/// A login from the flags and stdin, for scripts.
fn scripted(args: &LoginArgs) -> Result<Login> {
    let Some(name) = &args.preset else {
        return Err(Error::Usage(
            "stdin is not a terminal: for scripts pass --preset <NAME> (and --base-url, \
             --model, --api-key-stdin as needed); see iac-code --help"
                .into(),
        ));
    };
    let preset = known(name)?;
    let api_key = if args.key_stdin {
        let mut text = String::new();
        io::stdin().take(MAX_KEY as u64).read_to_string(&mut text).map_err(Error::Stream)?;
        let key = text.lines().next().unwrap_or_default().trim().to_string();
        if key.is_empty() {
            return Err(Error::Usage("--api-key-stdin: stdin held no key".into()));
        }
        Some(key)
    } else if preset.needs_key {
        return Err(Error::Usage(format!(
            "provider '{}' needs an API key: pass --api-key-stdin and write the key to stdin",
            preset.name
        )));
    } else {
        None
    };
    let base_url = args.base_url.clone().or(preset.base_url.map(str::to_string));
    let Some(base_url) = base_url else {
        return Err(Error::Usage(format!("provider '{}' needs --base-url", preset.name)));
    };
    let model = args.model.clone().or(preset.default_model.map(str::to_string));
    let Some(model) = model else {
        return Err(Error::Usage(format!("provider '{}' needs --model", preset.name)));
    };
    Ok(Login { preset: preset.name, base_url, model, api_key })
}

fn known(name: &str) -> Result<PresetInfo> {
    login::preset(name).ok_or_else(|| {
        let names: Vec<&str> = login::presets().iter().map(|p| p.name).collect();
        Error::Usage(format!("unknown preset '{name}': expected one of {}", names.join(", ")))
    })
}

fn say(line: &str) -> Result<()> {
    let mut out = sys::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(Error::Stream)
}

/// The terminal login talks to.
struct Term {
    input: StdinLock<'static>,
}

/// An answer, or the user stopped.
type Answer<T> = Result<std::result::Result<T, Cancelled>>;

impl Term {
    fn ask(&mut self, args: &LoginArgs) -> Answer<Login> {
        let preset = match &args.preset {
            Some(name) => known(name)?,
            None => match self.preset()? {
                Ok(preset) => preset,
                Err(Cancelled) => return Ok(Err(Cancelled)),
            },
        };
        let base_url = match (&args.base_url, preset.base_url) {
            (Some(url), _) => url.clone(),
            (None, default) => match self.until("Base URL", default, |url| {
                (url.starts_with("http://") || url.starts_with("https://"))
                    .then(|| url.to_string())
                    .ok_or("it must start with http:// or https://")
            })? {
                Ok(url) => url,
                Err(Cancelled) => return Ok(Err(Cancelled)),
            },
        };
        let model = match (&args.model, preset.default_model) {
            (Some(model), _) => model.clone(),
            (None, default) => match self.until("Model", default, |m| Ok(m.to_string()))? {
                Ok(model) => model,
                Err(Cancelled) => return Ok(Err(Cancelled)),
            },
        };
        let api_key = match self.key(preset.needs_key)? {
            Ok(key) => key,
            Err(Cancelled) => return Ok(Err(Cancelled)),
        };
        Ok(Ok(Login { preset: preset.name, base_url, model, api_key }))
    }

    fn preset(&mut self) -> Answer<PresetInfo> {
        let all = login::presets();
        let mut list = String::from("Provider presets:\n");
        for (i, p) in all.iter().enumerate() {
            let url = p.base_url.unwrap_or("(you give the base URL)");
            let key = if p.needs_key { ", API key" } else { "" };
            list.push_str(&format!("  {:>2}  {:<21} {url}{key}\n", i + 1, p.name));
        }
        prompt(&list)?;
        let question = format!("Preset (1-{} or a name)", all.len());
        self.until(&question, None, |answer| match answer.parse::<usize>() {
            Ok(n) if (1..=all.len()).contains(&n) => Ok(all[n - 1]),
            Ok(_) => Err("no preset has that number"),
            Err(_) => login::preset(answer).ok_or("no preset has that name"),
        })
    }

    /// Asks `question` until `check` takes the answer (an empty answer is `default`).
    fn until<T>(
        &mut self,
        question: &str,
        default: Option<&str>,
        check: impl Fn(&str) -> std::result::Result<T, &'static str>,
    ) -> Answer<T> {
        for _ in 0..TRIES {
            let shown = default.map(|d| format!(" [{d}]")).unwrap_or_default();
            prompt(&format!("{question}{shown}: "))?;
            let mut line = String::new();
            if self.input.read_line(&mut line).map_err(Error::Stream)? == 0 {
                return Ok(Err(Cancelled));
            }
            let answer = match (line.trim(), default) {
                ("", Some(default)) => default,
                ("", None) => {
                    say("  an answer is needed")?;
                    continue;
                }
                (answer, _) => answer,
            };
            match check(answer) {
                Ok(value) => return Ok(Ok(value)),
                Err(why) => say(&format!("  {why}"))?,
            }
        }
        Err(Error::Usage(format!("no usable answer to '{question}'; nothing was saved")))
    }

    /// The API key, typed with echo off.
    fn key(&mut self, needed: bool) -> Answer<Option<String>> {
        for _ in 0..TRIES {
            let key = {
                // Echo goes off before the question shows, so nothing typed after it echoes.
                let _hidden = sys::tty::Hidden::new(io::stdin().as_fd()).map_err(Error::Stream)?;
                let optional = if needed { "" } else { ", empty for none" };
                prompt(&format!("API key (not shown{optional}): "))?;
                let read = self.hidden_line();
                say("")?;
                match read? {
                    Ok(key) => key,
                    Err(Cancelled) => return Ok(Err(Cancelled)),
                }
            };
            match (key.trim(), needed) {
                ("", true) => say("  this provider needs a key")?,
                ("", false) => return Ok(Ok(None)),
                (key, _) => return Ok(Ok(Some(key.to_string()))),
            }
        }
        Err(Error::Usage("no API key was given; nothing was saved".into()))
    }

    /// One line typed with echo and line editing off: Backspace and Ctrl-U edit it, Ctrl-C
    /// and Ctrl-D (on an empty line) cancel.
    fn hidden_line(&mut self) -> Answer<String> {
        let mut bytes = Vec::new();
        loop {
            let mut byte = [0u8];
            if self.input.read(&mut byte).map_err(Error::Stream)? == 0 {
                return Ok(Err(Cancelled));
            }
            match byte[0] {
                b'\r' | b'\n' => break,
                0x03 => return Ok(Err(Cancelled)),
                0x04 if bytes.is_empty() => return Ok(Err(Cancelled)),
                0x7f | 0x08 => {
                    // A whole UTF-8 character goes.
                    while let Some(b) = bytes.pop() {
                        if b & 0xC0 != 0x80 {
                            break;
                        }
                    }
                }
                0x15 => bytes.clear(),
                b if b < 0x20 => {}
                b if bytes.len() < MAX_KEY => bytes.push(b),
                _ => {}
            }
        }
        String::from_utf8(bytes)
            .map(Ok)
            .map_err(|_| Error::Usage("the key is not valid UTF-8; nothing was saved".into()))
    }
}

fn prompt(text: &str) -> Result<()> {
    let mut out = sys::stdout().lock();
    write!(out, "{text}").and_then(|()| out.flush()).map_err(Error::Stream)
}
