//! STUB
pub fn scope(
    script: &crate::shell::Script,
    cwd: &std::path::Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let _ = (script, cwd, env);
    Vec::new()
}
