//! Logger set-up: env_logger to stderr or to `--log-file`, never stdout. The filter comes
//! from `IAC_CODE_LOG` (RUST_LOG syntax), else `--debug`, else `info`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{IoContext, Result};

/// Initialises the global logger once (default level `info`).
pub fn init(debug: bool, log_file: Option<&Path>) -> Result<()> {
    init_at(if debug { "debug" } else { "info" }, log_file)
}

/// As `init`, with `warn` as the default level (commands for scripts keep stderr quiet).
pub fn init_quiet(debug: bool, log_file: Option<&Path>) -> Result<()> {
    init_at(if debug { "debug" } else { "warn" }, log_file)
}

fn init_at(default: &str, log_file: Option<&Path>) -> Result<()> {
    let mut builder = env_logger::Builder::new();
    builder.parse_filters(default);
    // Our dependencies are chatty at debug; keep them at warn unless asked for.
    builder.filter_module("rustls", log::LevelFilter::Warn);
    builder.filter_module("ureq", log::LevelFilter::Warn);
    builder.filter_module("ureq_proto", log::LevelFilter::Warn);
    if let Ok(filter) = std::env::var("IAC_CODE_LOG") {
        builder.parse_filters(&filter);
    }
    builder.format_timestamp_millis();
    match log_file {
        Some(path) => {
            // At trace level it holds prompts and file contents: ours alone, never through a
            // symlink, never a file someone else owns.
            let file = crate::sys::own_file::options()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .at(path)?;
            own_private(&file, path)?;
            builder.target(env_logger::Target::Pipe(Box::new(Scrubbed(file))));
        }
        None => {
            builder.target(env_logger::Target::Pipe(Box::new(Scrubbed(std::io::stderr()))));
        }
    }
    // A second init (tests) is harmless.
    let _ = builder.try_init();
    Ok(())
}

/// A log target whose records reach it with every secret's shape replaced by its kind
/// (`secret::scrub`; a session's exact values are its own, so only shapes here).
struct Scrubbed<W>(W);

impl<W: Write> Write for Scrubbed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(crate::secret::scrub(text).as_bytes())?,
            Err(_) => self.0.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Refuses a log file another user owns (compared with the owner of our own /proc entry,
/// which is our effective uid), and makes ours 0600.
fn own_private(file: &std::fs::File, path: &Path) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = file.metadata().at(path)?;
    let me = std::fs::metadata("/proc/self").map_or(meta.uid(), |m| m.uid());
    if meta.uid() != me {
        return Err(crate::error::Error::Config(format!(
            "{}: the log file belongs to uid {}, not to us; refusing to log into it",
            path.display(),
            meta.uid()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).at(path)?;
    }
    Ok(())
}

/// Writes one line to standard error (for messages meant for the user, not logs).
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}
