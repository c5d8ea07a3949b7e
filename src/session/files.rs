//! The names of a session's files in its directory (the file store), shared by the store
//! and the metadata code.

/// The journal: one record per line, append-only.
pub const JOURNAL: &str = "journal.jsonl";
/// The metadata, replaced atomically.
pub const META: &str = "meta.json";
/// The advisory lock held by the process that drives the session.
pub const LOCK: &str = "lock";
