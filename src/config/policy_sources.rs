//! Where the policies in force come from: the bundled pack less the rules settings switch
//! off, `<config>/policies/`, and the project's `.iac-code/policies/` only while the
//! project's settings are approved with exactly these files (`hook_runs` keeps their
//! fingerprints with the approval of the hooks). Never approved: not in force. Approved
//! once, and a file added, changed or removed since (or the settings): the policies are
//! broken, so applies are refused until `iac-code config approve` (an edit never loosens
//! them unseen). The `policy` settings come from the user's `settings.json` and, approved,
//! the project's. `*_test.rego` files are read only for `policy test`. The files
//! themselves are read by `policy::read_dir`, bounded like what hooks run.

use std::path::Path;

use serde_json::Value;

use super::approval::{HOOKS, Runs, digest};
use crate::policy::{
    KEY, Origin, Policies, PolicyFile, Settings, bundled_files, read_dir, settings_of,
};

/// The policies that would be in force for a session in `cwd`, and why others are not.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<PolicyFile>,
    pub settings: Settings,
    /// Problems that break the policies (an unreadable file, bad settings).
    pub problems: Vec<String>,
    /// Policies left out, and why (the project's, not approved).
    pub notes: Vec<String>,
}

/// What would be in force in `cwd`; `tests`: with the `*_test.rego` files.
pub fn listing(cwd: &Path, config_dir: &Path, tests: bool) -> Listing {
    let mut listing = Listing::default();
    let user_settings = config_dir.join(super::settings::FILE);
    if let Ok(text) = std::fs::read_to_string(&user_settings) {
        apply_settings(&text, &user_settings, &mut listing);
    }
    let project = project_policies(cwd, config_dir, tests, &mut listing);
    let user_dir = config_dir.join("policies");
    let (user, problems) = read_dir(&user_dir, Origin::User, tests);
    listing.problems.extend(problems);
    let mut files = Vec::new();
    if listing.settings.bundled {
        files.extend(bundled_files(tests, &listing.settings.off));
    }
    files.extend(user);
    files.extend(project);
    listing.files = files;
    listing
}

/// The policies in force in `cwd`, compiled.
pub fn in_force(cwd: &Path, config_dir: &Path) -> Policies {
    let listing = listing(cwd, config_dir, false);
    Policies::compile(&listing.files, &listing.settings).with_problems(listing.problems)
}

/// The `policy` key of a settings file.
fn apply_settings(text: &str, path: &Path, listing: &mut Listing) {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else { return };
    if let Some(value) = root.get(KEY) {
        match settings_of(value, &listing.settings) {
            Ok(settings) => listing.settings = settings,
            Err(why) => listing.problems.push(format!("{}: {why}", path.display())),
        }
    }
}

/// The project's policies, when its settings are approved with exactly these files.
fn project_policies(
    cwd: &Path,
    config_dir: &Path,
    tests: bool,
    listing: &mut Listing,
) -> Vec<PolicyFile> {
    let project = match super::hooks::project_hooks(cwd, config_dir) {
        Ok(project) => project,
        // Settings that cannot be read never take the project's policies out of force
        // unseen: with a policies directory beside them, applies are refused.
        Err(why) if policies_dir_near(cwd).is_some() => {
            listing.problems.push(format!("the project's policies cannot be read: {why}"));
            return Vec::new();
        }
        Err(why) => {
            listing.notes.push(format!("the project's policies are not in force: {why}"));
            return Vec::new();
        }
    };
    let Some(settings_path) = project.path.clone() else { return Vec::new() };
    let dir = settings_path.parent().map(|d| d.join("policies")).unwrap_or_default();
    let approved: Option<&Runs> = project.check.as_ref().map(|c| c.approved());
    let Some(approved) = approved else {
        // A policies directory removed since is looked up where it was.
        let real = std::fs::canonicalize(&dir).ok().or_else(|| {
            let parent = std::fs::canonicalize(settings_path.parent()?).ok()?;
            Some(parent.join("policies"))
        });
        let Some(real) = real else { return Vec::new() };
        // Approved once, changed since (a policy, a hook's script or the settings): no
        // edit may loosen them unseen, so applies are refused until approved again.
        if HOOKS.runner_of(config_dir, &real.join("policy.rego")).is_some() {
            listing.problems.push(format!(
                "{}: the project's policies or settings changed since they were approved: \
                 approve them again (iac-code config approve)",
                real.display()
            ));
        } else if real.is_dir() {
            listing.notes.push(format!(
                "{}: not in force: the project's settings are not approved as they are \
                 (iac-code config approve)",
                real.display()
            ));
        }
        return Vec::new();
    };
    if let Ok(text) = std::fs::read_to_string(&settings_path) {
        apply_settings(&text, &settings_path, listing);
    }
    let (files, problems) = read_dir(&dir, Origin::Project, true);
    if !problems.is_empty() {
        listing.problems.extend(problems);
        return Vec::new();
    }
    // Every file read is the one approved, and every approved file is still there.
    let shown = format!("{}/", dir.display());
    let mut changed: Vec<String> = files
        .iter()
        .filter(|f| approved.get(&f.name) != Some(&digest(f.text.as_bytes())))
        .map(|f| f.name.clone())
        .collect();
    let now: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    changed.extend(
        approved
            .keys()
            .filter(|k| k.starts_with(&shown) && k.ends_with(".rego"))
            .filter(|k| !now.contains(&k.as_str()))
            .cloned(),
    );
    if !changed.is_empty() {
        listing.problems.push(format!(
            "{shown}: {} changed since the project's settings were approved: approve them \
             again (iac-code config approve)",
            changed.join(", ")
        ));
        return Vec::new();
    }
    files.into_iter().filter(|f| tests || !f.name.ends_with("_test.rego")).collect()
}

/// The nearest `.iac-code/policies` directory at or above `cwd`, if any.
fn policies_dir_near(cwd: &Path) -> Option<std::path::PathBuf> {
    cwd.ancestors().map(|d| d.join(".iac-code/policies")).find(|d| d.is_dir())
}
