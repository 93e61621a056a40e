//! Datasets from the person's MCP servers: a server's text resources read through the MCP
//! client and kept as datasets by the same readers as files (a Markdown resource becomes a
//! document, a CSV one a table), each recording the server and address it came from.

use strata_core::datasets::NewDataset;
use strata_core::{Error, Result};
use strata_mcp_client::{Connection, McpConfig, ResourceInfo};

/// What a server offers to load: its resources that are text.
pub fn resources(config: &McpConfig, server: &str) -> Result<Vec<ResourceInfo>> {
    let conn = start(config, server)?;
    Ok(conn.resources()?.into_iter().filter(is_text).collect())
}

/// The datasets `server`'s resources at `uris` make (all its text resources when none are
/// named), named after each resource (or `name`, for one). Every resource is read before
/// anything is returned: one that cannot be read loads nothing.
pub fn read(config: &McpConfig, server: &str, uris: &[String], name: Option<&str>) -> Result<Vec<NewDataset>> {
    let conn = start(config, server)?;
    let offered = conn.resources()?;
    let chosen: Vec<ResourceInfo> = if uris.is_empty() {
        offered.into_iter().filter(is_text).collect()
    } else {
        uris.iter()
            .map(|u| {
                offered.iter().find(|r| &r.uri == u).cloned().ok_or_else(|| {
                    Error::invalid(format!(
                        "{server} offers no resource {u}: `strata datasets mcp {server}` lists them"
                    ))
                })
            })
            .collect::<Result<_>>()?
    };
    if chosen.is_empty() {
        return Err(Error::invalid(format!("{server} offers no text resources to load")));
    }
    if name.is_some() && chosen.len() > 1 {
        return Err(Error::invalid("a name names one dataset: load one resource with it"));
    }
    let mut out = Vec::new();
    for r in &chosen {
        let text = conn.read(&r.uri)?;
        let file = file_name(r, text.mime_type.as_deref());
        for mut d in strata_datasets::read_bytes(&file, text.text.as_bytes(), name)? {
            d.source = format!("{} from the MCP server {server}", r.uri);
            out.push(d);
        }
    }
    Ok(out)
}

fn start(config: &McpConfig, server: &str) -> Result<Connection> {
    let s = config
        .servers
        .get(server)
        .ok_or_else(|| Error::invalid(format!("no MCP server is named {server}: `strata mcp-servers` lists yours")))?;
    Connection::start(server, s)
}

pub(crate) fn is_text(r: &ResourceInfo) -> bool {
    r.mime_type.as_deref().is_none_or(|m| m.starts_with("text/") || m.contains("json") || m.contains("csv"))
}

/// A file name the dataset readers know the resource's format by: its own name when it has an
/// extension they read, else one from its type (plain text when the server says none).
fn file_name(r: &ResourceInfo, mime: Option<&str>) -> String {
    let base = r.name.rsplit('/').next().unwrap_or(&r.name).to_string();
    if strata_datasets::Format::of(&base).is_ok() {
        return base;
    }
    let ext = match mime.or(r.mime_type.as_deref()).unwrap_or("text/plain") {
        m if m.contains("markdown") => "md",
        m if m.contains("csv") => "csv",
        m if m.contains("html") => "html",
        m if m.contains("jsonl") || m.contains("ndjson") => "jsonl",
        m if m.contains("json") => "json",
        _ => "txt",
    };
    format!("{}.{ext}", if base.is_empty() { "resource" } else { &base })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(name: &str, mime: Option<&str>) -> ResourceInfo {
        ResourceInfo {
            uri: format!("demo://{name}"),
            name: name.into(),
            mime_type: mime.map(Into::into),
            description: String::new(),
        }
    }

    #[test]
    fn a_resource_is_read_by_the_reader_its_name_or_type_calls_for() {
        assert_eq!(file_name(&res("architecture.md", Some("text/markdown")), None), "architecture.md");
        assert_eq!(file_name(&res("Sales figures", Some("text/csv")), None), "Sales figures.csv");
        assert_eq!(file_name(&res("notes", None), None), "notes.txt");
        assert!(!is_text(&res("photo", Some("image/png"))));
        assert!(is_text(&res("data", Some("application/json"))));
    }
}
