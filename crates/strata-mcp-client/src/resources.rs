//! A server's resources (MCP `resources/list` and `resources/read`): what Strata loads as
//! datasets from the person's MCP servers. Only text is read; a resource's size is bounded.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use strata_core::{Error, Result};

use crate::client::{Conn, Connection, Job};

/// How long listing or reading a resource may take.
const LIMIT: Duration = Duration::from_secs(60);

/// The most text a resource may hold (a larger one is refused, not cut).
pub const MAX_RESOURCE_BYTES: usize = 64 << 20;

/// A resource a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// Its address on its server (`file:///…`, `test://static/resource/1`).
    pub uri: String,
    /// Its name, as the server gives it.
    pub name: String,
    /// What it holds (`text/plain`, `text/markdown`…), if the server says.
    pub mime_type: Option<String>,
    /// What the server says of it.
    pub description: String,
}

/// A resource's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceText {
    /// Its text (its text parts, one after another).
    pub text: String,
    /// What it holds, if the server says.
    pub mime_type: Option<String>,
}

impl Connection {
    /// The server's resources (none when it offers none).
    pub fn resources(&self) -> Result<Vec<ResourceInfo>> {
        self.ask(|reply| Job::Resources { reply }, &AtomicBool::new(false))
    }

    /// The text of the resource at `uri`; a binary resource, or one over
    /// [`MAX_RESOURCE_BYTES`], is an error that says so.
    pub fn read(&self, uri: &str) -> Result<ResourceText> {
        self.ask(|reply| Job::Read { uri: uri.to_string(), reply }, &AtomicBool::new(false))
    }
}

pub(crate) async fn list(conn: &Conn, name: &str) -> Result<Vec<ResourceInfo>> {
    if conn.peer_info().is_some_and(|p| p.capabilities.resources.is_none()) {
        return Ok(Vec::new());
    }
    let listed = tokio::time::timeout(LIMIT, conn.list_all_resources())
        .await
        .map_err(|_| Error::invalid(format!("{name} did not list its resources in time")))?
        .map_err(|e| Error::invalid(format!("{name} did not list its resources: {e}")))?;
    Ok(listed
        .into_iter()
        .map(|r| ResourceInfo {
            uri: r.uri.clone(),
            name: r.name.clone(),
            mime_type: r.mime_type.clone(),
            description: r.description.clone().unwrap_or_default(),
        })
        .collect())
}

pub(crate) async fn read(conn: &Conn, name: &str, uri: &str) -> Result<ResourceText> {
    let result = tokio::time::timeout(LIMIT, conn.read_resource(ReadResourceRequestParams::new(uri)))
        .await
        .map_err(|_| Error::invalid(format!("{name} did not give {uri} in time")))?
        .map_err(|e| Error::invalid(format!("{name} did not give {uri}: {e}")))?;
    let (mut text, mut mime_type) = (String::new(), None);
    for part in result.contents {
        match part {
            ResourceContents::TextResourceContents { text: t, mime_type: m, .. } => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t);
                mime_type = mime_type.or(m);
            }
            _ => return Err(Error::invalid(format!("{uri} of {name} is not text; Strata reads text resources"))),
        }
        if text.len() > MAX_RESOURCE_BYTES {
            return Err(Error::invalid(format!(
                "{uri} of {name} holds more than {} MiB of text",
                MAX_RESOURCE_BYTES >> 20
            )));
        }
    }
    Ok(ResourceText { text, mime_type })
}
