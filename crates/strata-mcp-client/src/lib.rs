//! Strata as an MCP client (issue 43): the person's MCP servers, kept in `mcp.json` in the
//! `mcpServers` shape ([`config`]), started only once the person added them, their tools
//! called over stdio or streamable HTTP ([`client`]), each tool under the person's policy, and
//! their text resources read ([`resources`]) to load as datasets.
#![deny(missing_docs)]

pub mod client;
pub mod config;
pub mod resources;

pub use client::{CallResult, Connection, ToolInfo};
pub use config::{McpConfig, Policy, Server};
pub use resources::{ResourceInfo, ResourceText};

/// The name a server's tool is offered to models under: `<server>__<tool>` (unique across
/// servers, and within the characters and length providers accept for a function's name).
pub fn qualified(server: &str, tool: &str) -> String {
    format!("{server}__{tool}")
}

/// The server and tool a qualified name names.
pub fn split_qualified(name: &str) -> Option<(&str, &str)> {
    name.split_once("__").filter(|(s, t)| !s.is_empty() && !t.is_empty())
}
