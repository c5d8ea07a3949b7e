//! A session's MCP servers: which entries it gets (the client's, then `settings.json`'s,
//! then an approved project `.mcp.json`'s), starting them as the session opens (bounded
//! wait), and what happens at the start of a turn: a pending project file is put to the
//! user, servers still connecting are waited for (bounded), and failures not yet told are
//! told in a short message.

use serde_json::{Value, json};

use super::approve::Approval;
use super::{Manager, PromptIo, Services, Session};
use crate::agent::event::AgentEvent;
use crate::cancel::CancelToken;
use crate::config::approval::Standing;
use crate::mcp::project::ProjectFile;
use crate::mcp::spec::parse_servers;
use crate::mcp::{self, BadEntry, Origin, ServerSpec};
use crate::sync::lock;
use crate::text::Title;

impl Manager {
    /// Starts the session's MCP servers: the client's `entries` first, then the settings'
    /// and an approved project file's. Returns when all are connected or failed, or when
    /// the connect timeout has passed (the rest go on connecting).
    pub fn attach_mcp(&self, session: &Session, entries: &[Value]) {
        {
            let mut attached = lock(&session.mcp_client);
            if attached.as_deref() == Some(entries) {
                return; // open already, with these servers: they stay as they are
            }
            *attached = Some(entries.to_vec());
        }
        let config = &self.services.config;
        let client = mcp::from_client(&Value::Array(entries.to_vec()), config.mcp.client_mcp());
        let settings = parse_servers(&config.mcp.servers, Origin::Settings);
        let project = match ProjectFile::find(&session.root) {
            Some(file) if file.approved(&config.config_dir) => file.servers(),
            _ => Vec::new(),
        };
        let all = mcp::merge(vec![client, settings, project]);
        if all.is_empty() && session.mcp.is_empty() {
            return;
        }
        start(&self.services, session, all, true);
    }
}

impl Manager {
    /// Whether opening `session` with the client's `entries` starts any MCP server.
    pub fn mcp_configured(&self, session: &Session, entries: &[Value]) -> bool {
        let config = &self.services.config;
        if lock(&session.mcp_client).as_deref() == Some(entries) {
            return false;
        }
        !entries.is_empty()
            || !session.mcp.is_empty()
            || parse_servers(&config.mcp.servers, Origin::Settings).into_iter().next().is_some()
            || ProjectFile::find(&session.root).is_some_and(|f| f.approved(&config.config_dir))
    }
}

fn start(
    services: &Services,
    session: &Session,
    entries: Vec<Result<ServerSpec, BadEntry>>,
    fresh: bool,
) {
    let config = &services.config.mcp;
    let mut setup =
        mcp::setup(&session.root, config.connect_timeout, config.call_timeout, config.tls.as_ref());
    setup.client_internal = config.client_internal();
    setup.approvals = Some(services.config.config_dir.clone());
    setup.tools_max_bytes = config.tools_max_bytes;
    if fresh {
        session.mcp.start(entries, &setup);
    } else {
        session.mcp.add(entries, &setup);
    }
    session.mcp.wait(config.connect_timeout + SETTLE);
}

/// Beyond the connect timeout, the time a connecting thread has to record its failure.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

/// Before a turn: the project file's question, servers still connecting, failures to tell.
pub(super) fn before_turn(
    services: &Services,
    session: &Session,
    io: &PromptIo,
    cancel: &CancelToken,
) {
    if let Some(file) = ProjectFile::find(&session.root) {
        let config_dir = &services.config.config_dir;
        let asked = lock(&session.mcp_project_asked).as_deref() == Some(file.text.as_str());
        let standing = if asked { Standing::Approved } else { file.standing(config_dir) };
        if standing != Standing::Approved {
            *lock(&session.mcp_project_asked) = Some(file.text.clone());
            if ask_project(&file, &standing, io, cancel) {
                if let Err(err) = file.approve(config_dir) {
                    log::error!("cannot remember the approval of {}: {err}", file.path.display());
                }
                let taken: Vec<String> = session.mcp.status().into_iter().map(|s| s.name).collect();
                let new: Vec<_> = file
                    .servers()
                    .into_iter()
                    .filter(|e| {
                        let name = match e {
                            Ok(spec) => &spec.name,
                            Err(bad) => &bad.name,
                        };
                        !taken.contains(name)
                    })
                    .collect();
                start(services, session, new, false);
            }
        }
    }
    let timeout = services.config.mcp.connect_timeout + SETTLE;
    session.mcp.wait_unless(timeout, &|| cancel.is_cancelled());
    let notices = session.mcp.take_notices();
    if !notices.is_empty() {
        let text = notices.iter().map(|n| format!("[{n}]")).collect::<Vec<_>>().join("\n");
        io.sink.emit(AgentEvent::Notice(format!("{text}\n\n")));
    }
}

/// Characters of one server in the project file's question title.
const SERVER_CHARS: usize = 200;

/// The project file's question: its title names each server first with exactly what it
/// runs ("MCP server x: python3 srv.py; sets TOKEN"), each bounded, so that no padding
/// pushes a command out of sight; the content lists them all in full.
fn project_question(file: &ProjectFile) -> (String, Vec<String>) {
    let servers: Vec<(String, String)> = file
        .servers()
        .into_iter()
        .map(|entry| match entry {
            Ok(spec) => {
                let mut runs = spec.transport.describe();
                if let mcp::Transport::Stdio { env, .. } = &spec.transport
                    && !env.is_empty()
                {
                    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
                    runs.push_str(&format!("; sets {}", names.join(", ")));
                }
                (format!("MCP server {}", spec.name), runs)
            }
            Err(bad) => (format!("MCP server {}", bad.name), format!("unusable: {}", bad.reason)),
        })
        .collect();
    let shown: Vec<String> = servers
        .iter()
        .map(|(who, runs)| Title::bounded(Some(who), runs, SERVER_CHARS).into_string())
        .collect();
    let title = format!(
        "{} — start the MCP servers of {}? They run programs of this project.",
        shown.join("; "),
        file.path.display()
    );
    let listed: Vec<String> = servers
        .iter()
        .map(|(who, runs)| format!("- {}", Title::bounded(Some(who), runs, 4096)))
        .collect();
    (Title::new(None, &title).into_string(), vec![listed.join("\n")])
}

/// Asks whether to start the servers of a project file; true if approved.
fn ask_project(
    file: &ProjectFile,
    standing: &Standing,
    io: &PromptIo,
    cancel: &CancelToken,
) -> bool {
    let names = file.names();
    let (mut title, content) = project_question(file);
    if let Standing::Changed(files) = standing {
        title.push_str(&format!(" Changed since it was approved: {}.", files.join(", ")));
    }
    let approval = Approval {
        tool: "mcp_project",
        title,
        content,
        input: json!({ "path": file.path, "servers": names }),
        locations: vec![(file.path.clone(), None)],
        approve: "Approve this file and start its servers".to_string(),
        decline: "Do not start them".to_string(),
    };
    let shown = file.path.display();
    super::approve::ask(approval, io, cancel, |approved| match approved {
        true => format!("Approved {shown}; its servers are starting."),
        false => format!("Not approved: the servers of {shown} were not started."),
    })
}
