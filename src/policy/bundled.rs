//! The bundled policy pack, compiled into the binary: one Rego file per subject (in its
//! own package `iac_code.<file>`), each with its `test_` rules, and the names of the rules
//! it holds (what settings switch off). Resource types live in the Rego, not here.

/// One file of the pack.
pub struct Bundled {
    /// Its name: `bundled/<file>.rego`, its package `iac_code.<file>`.
    pub file: &'static str,
    pub rego: &'static str,
    /// Its `test_` rules (`iac-code policy test`).
    pub test: &'static str,
    /// The rules it holds, each switchable (`policy.bundled.<rule>: false`).
    pub rules: &'static [&'static str],
}

/// The pack.
pub const PACK: &[Bundled] = &[
    Bundled {
        file: "stateful_deletion",
        rego: include_str!("bundled/stateful_deletion.rego"),
        test: include_str!("bundled/stateful_deletion_test.rego"),
        rules: &["stateful_deletion"],
    },
    Bundled {
        file: "open_admin_ports",
        rego: include_str!("bundled/open_admin_ports.rego"),
        test: include_str!("bundled/open_admin_ports_test.rego"),
        rules: &["open_admin_ports"],
    },
    Bundled {
        file: "iam_wildcard",
        rego: include_str!("bundled/iam_wildcard.rego"),
        test: include_str!("bundled/iam_wildcard_test.rego"),
        rules: &["iam_wildcard"],
    },
    Bundled {
        file: "unencrypted_storage",
        rego: include_str!("bundled/unencrypted_storage.rego"),
        test: include_str!("bundled/unencrypted_storage_test.rego"),
        rules: &["unencrypted_storage"],
    },
    Bundled {
        file: "kubernetes",
        rego: include_str!("bundled/kubernetes.rego"),
        test: include_str!("bundled/kubernetes_test.rego"),
        rules: &["privileged_container", "host_path", "latest_image"],
    },
];

/// Every rule name of the pack.
pub fn rules() -> impl Iterator<Item = &'static str> {
    PACK.iter().flat_map(|b| b.rules.iter().copied())
}
