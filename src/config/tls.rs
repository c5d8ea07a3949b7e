//! The site CA bundle of `IAC_CODE_CA_FILE`, as the TLS roots of LLM and MCP connections.

use super::{Env, expand_home};
use crate::error::{Error, Result};

/// The PEM certificates of `IAC_CODE_CA_FILE` as the trusted roots (instead of the bundled
/// public ones: a site's own CA, or the system bundle `/etc/ssl/certs/ca-certificates.crt`).
pub(super) fn tls(env: &dyn Env) -> Result<Option<ureq::tls::TlsConfig>> {
    let Some(path) = env.get("IAC_CODE_CA_FILE") else { return Ok(None) };
    let path = expand_home(&path, env);
    let pem = std::fs::read(&path).map_err(|err| {
        Error::Config(format!("IAC_CODE_CA_FILE {}: cannot read it: {err}", path.display()))
    })?;
    let mut certs: Vec<ureq::tls::Certificate<'static>> = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let Ok(ureq::tls::PemItem::Certificate(cert)) = item {
            certs.push(cert);
        }
    }
    if certs.is_empty() {
        return Err(Error::Config(format!(
            "IAC_CODE_CA_FILE {}: no PEM certificate in it",
            path.display()
        )));
    }
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
        .build();
    Ok(Some(tls))
}
