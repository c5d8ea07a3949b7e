//! Logger set-up: env_logger to stderr or to `--log-file`, never stdout. The filter comes
//! from `IAC_CODE_LOG` (RUST_LOG syntax), else `--debug`, else `info`.

use std::fs::OpenOptions;
use std::path::Path;

use crate::error::{IoContext, Result};

/// Initialises the global logger once.
pub fn init(debug: bool, log_file: Option<&Path>) -> Result<()> {
    let default = if debug { "debug" } else { "info" };
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
            let file = OpenOptions::new().create(true).append(true).open(path).at(path)?;
            builder.target(env_logger::Target::Pipe(Box::new(file)));
        }
        None => {
            builder.target(env_logger::Target::Stderr);
        }
    }
    // A second init (tests) is harmless.
    let _ = builder.try_init();
    Ok(())
}
