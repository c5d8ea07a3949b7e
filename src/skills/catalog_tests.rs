//! Precedence, the catalog's budget, the wrapper and what compaction keeps.

use super::*;
use crate::skills::front::SkillMeta;

fn skill(name: &str, description: &str, origin: Origin) -> Skill {
    let meta = SkillMeta {
        name: name.to_string(),
        description: description.to_string(),
        license: None,
        compatibility: None,
        metadata: Default::default(),
        allowed_tools: Vec::new(),
        body: format!("Body of {name}. Use $ARGUMENTS.\n"),
    };
    Skill { meta, origin, dir: None, files: vec!["references/a.md".to_string()] }
}

#[test]
fn the_last_of_a_name_wins() {
    let found = vec![
        skill("tf", "bundled", Origin::Bundled),
        skill("k8s", "bundled", Origin::Bundled),
        skill("tf", "user", Origin::User),
        skill("tf", "project", Origin::Project),
        skill("a", "user", Origin::User),
    ];
    let resolved = resolve(found);
    let seen: Vec<(&str, &str)> =
        resolved.iter().map(|s| (s.meta.name.as_str(), s.meta.description.as_str())).collect();
    assert_eq!(seen, [("tf", "project"), ("a", "user"), ("k8s", "bundled")]);
}

#[test]
fn an_unapproved_project_skill_hides_nothing() {
    let found = vec![
        skill("tf", "bundled", Origin::Bundled),
        skill("tf", "project", Origin::Project),
        skill("own", "project", Origin::Project),
    ];
    let names = |skills: Vec<Skill>| -> Vec<(String, String)> {
        skills.into_iter().map(|s| (s.meta.name, s.meta.description)).collect()
    };
    let before = names(crate::skills::approval::usable(found.clone(), false));
    assert_eq!(before, [("tf".to_string(), "bundled".to_string())], "the bundled one stays");
    let after = names(crate::skills::approval::usable(found, true));
    assert_eq!(after[0], ("own".to_string(), "project".to_string()));
    assert_eq!(after[1], ("tf".to_string(), "project".to_string()), "approved, it wins");
}

#[test]
fn the_catalog_keeps_to_its_budget_and_names_the_rest() {
    assert_eq!(budget(200_000), 16_000);
    assert_eq!(budget(8_000), 640);
    // (skills, description length, budget, listed, omitted)
    let rows: &[(usize, usize, usize, usize, bool)] = &[
        (3, 50, 16_000, 3, false),
        (50, 100, 16_000, 50, false),
        // header ~220 + n × 114 + the other names (~50 + 11 each) ≤ 2000: n = 11
        (50, 100, 2_000, 11, true),
        // the header and every name alone are past 640: names only, cut with a count
        (50, 100, 640, 0, true),
        (200, 1024, 16_000, 13, true),
        // not even a line fits: nothing
        (5, 50, 60, 0, false),
    ];
    for &(count, len, budget, listed, omits) in rows {
        let skills: Vec<Skill> = (0..count)
            .map(|i| skill(&format!("skill-{i:03}"), &"d".repeat(len), Origin::User))
            .collect();
        let text = render(&skills, budget);
        assert!(text.len() <= budget, "{count}×{len} in {budget}: {} chars", text.len());
        let shown = text.lines().filter(|l| l.starts_with("- skill-")).count();
        assert_eq!(shown, listed, "{count}×{len} in {budget}:\n{text}");
        assert_eq!(text.contains("Not listed for room"), omits, "{text}");
        if omits && budget > 200 {
            // The first omitted skill is named.
            assert!(text.contains(&format!(" skill-{listed:03}")), "{text}");
        }
    }
    assert_eq!(render(&[], 100), "");
}

#[test]
fn the_wrapper_carries_body_arguments_and_files_and_is_found_again() {
    let s = skill("tf", "d", Origin::User);
    let wrapped = wrap(&s, Some("/skills/tf \"x\""), Some("envs/prod"));
    assert!(wrapped.starts_with("<skill_content name=\"tf\" dir=\"/skills/tf &quot;x&quot;\">\n"));
    assert!(wrapped.contains("Body of tf. Use envs/prod."), "{wrapped}");
    assert!(!wrapped.contains("Arguments:"), "{wrapped}");
    assert!(wrapped.contains("- references/a.md") && wrapped.ends_with(CLOSE));
    let mut plain = skill("k8s", "d", Origin::User);
    plain.meta.body = "Check probes.".to_string();
    let k8s = wrap(&plain, None, Some("deploy.yaml"));
    assert!(k8s.contains("Check probes.\n\nArguments: deploy.yaml"), "{k8s}");
    let older = wrap(&s, Some("/old"), None);
    let texts = [format!("before {older} after"), format!("{k8s}\n{wrapped}"), "none".to_string()];
    let kept = kept(texts.iter().map(String::as_str));
    assert_eq!(kept, [k8s, wrapped], "the last of each name, in load order");
}
