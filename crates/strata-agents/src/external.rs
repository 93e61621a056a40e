//! Tools from outside Strata: the person's MCP servers ([`McpTools`]). An agent names them in
//! its tools as `<server>__<tool>`, or `<server>__*` for all of a server's. A server is started
//! only when an agent that names it runs, and only if the person added it; a tool whose policy
//! is `never` is not offered, one whose policy is `ask` is asked about at each call. What a
//! tool returns is untrusted text: a model reads it fenced (`ChatTools`), and it never changes
//! which tools are offered: those come from the agent's definition and the person's settings
//! alone.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::Value;
use strata_mcp_client::client::CALL_LIMIT;
use strata_mcp_client::{Connection, McpConfig, Policy, qualified, split_qualified};

use crate::model::ToolSpec;

/// The longest tool result a model is shown (the run's record cuts at 4 KiB too).
const MAX_RESULT_CHARS: usize = 8_000;

/// Tools an agent may use besides Strata's own.
pub trait ExternalTools {
    /// The tools among `names` (an agent's tool names) that may be offered now, and what kept
    /// any of them away (a server that would not start), in words.
    fn specs(&self, names: &[String]) -> (Vec<ToolSpec>, Vec<String>);

    /// Calls the tool offered as `name`; a failure, a refusal or the server's error is the
    /// model's to read.
    fn call(&self, name: &str, args: &Value, cancel: &AtomicBool) -> Result<String, String>;
}

/// No tools from outside (a run with Strata's own tools only).
pub struct NoTools;

impl ExternalTools for NoTools {
    fn specs(&self, _: &[String]) -> (Vec<ToolSpec>, Vec<String>) {
        (Vec::new(), Vec::new())
    }

    fn call(&self, name: &str, _: &Value, _: &AtomicBool) -> Result<String, String> {
        Err(format!("there is no tool named {name}"))
    }
}

/// Asks the person whether a tool whose policy is `ask` may run now: (server, tool, arguments).
pub type Approve = dyn Fn(&str, &str, &Value) -> bool;

/// The person's MCP servers' tools.
pub struct McpTools<'a> {
    config: McpConfig,
    approve: &'a Approve,
    limit: Duration,
    started: RefCell<HashMap<String, Result<Connection, String>>>,
}

impl<'a> McpTools<'a> {
    /// The tools of the servers in `config`; `approve` answers for the tools asked about.
    pub fn new(config: McpConfig, approve: &'a Approve) -> McpTools<'a> {
        McpTools { config, approve, limit: CALL_LIMIT, started: RefCell::default() }
    }

    /// Each call's time limit (a minute unless told).
    pub fn with_limit(mut self, limit: Duration) -> McpTools<'a> {
        self.limit = limit;
        self
    }

    /// Runs `f` on the started server `server` (starting it the first time), or says why not.
    fn with_server<T>(&self, server: &str, f: impl FnOnce(&Connection) -> T) -> Result<T, String> {
        let mut started = self.started.borrow_mut();
        if !started.contains_key(server) {
            let conn = match self.config.servers.get(server) {
                None => Err(format!("no MCP server named {server} was added (strata mcp-servers add)")),
                Some(s) if s.disabled => Err(format!("the MCP server {server} is turned off")),
                Some(s) => Connection::start(server, s).map_err(|e| e.to_string()),
            };
            started.insert(server.to_string(), conn);
        }
        match &started[server] {
            Ok(c) => Ok(f(c)),
            Err(e) => Err(e.clone()),
        }
    }
}

impl ExternalTools for McpTools<'_> {
    fn specs(&self, names: &[String]) -> (Vec<ToolSpec>, Vec<String>) {
        let (mut specs, mut problems) = (Vec::new(), Vec::new());
        for name in names {
            let Some((server, wanted)) = split_qualified(name) else { continue };
            let Some(entry) = self.config.servers.get(server) else {
                problems.push(format!("no MCP server named {server} was added (strata mcp-servers add)"));
                continue;
            };
            let listed = self.with_server(server, |c| {
                c.tools
                    .iter()
                    .filter(|t| (wanted == "*" || t.name == wanted) && entry.policy(&t.name) != Policy::Never)
                    .map(|t| ToolSpec {
                        name: qualified(server, &t.name),
                        description: format!("({server}) {}", t.description),
                        parameters: t.input_schema.clone(),
                    })
                    .collect::<Vec<_>>()
            });
            match listed {
                Ok(found) => {
                    for f in found {
                        if !specs.iter().any(|k: &ToolSpec| k.name == f.name) {
                            specs.push(f);
                        }
                    }
                }
                Err(e) if !problems.contains(&e) => problems.push(e),
                Err(_) => {}
            }
        }
        (specs, problems)
    }

    fn call(&self, name: &str, args: &Value, cancel: &AtomicBool) -> Result<String, String> {
        let (server, tool) = split_qualified(name).ok_or_else(|| format!("there is no tool named {name}"))?;
        let policy = self.config.servers.get(server).map(|s| s.policy(tool)).unwrap_or(Policy::Never);
        match policy {
            Policy::Never => return Err(format!("{tool} of {server} may not be used (its policy is never)")),
            Policy::Ask if !(self.approve)(server, tool, args) => {
                return Err(format!("the person did not allow {tool} of {server} this time"));
            }
            _ => {}
        }
        let result = self.with_server(server, |c| c.call(tool, args, self.limit, cancel))?;
        let r = result.map_err(|e| e.to_string())?;
        let mut text = r.text;
        if text.chars().count() > MAX_RESULT_CHARS {
            text = text.chars().take(MAX_RESULT_CHARS).collect::<String>() + " […cut]";
        }
        if r.failed { Err(text) } else { Ok(text) }
    }
}
