//! Settings → Your MCP servers: the servers whose tools the person's agents may use (`mcp.json`,
//! as `strata mcp-servers` keeps it): listed, added, imported from Claude Desktop and Cursor,
//! removed, and each tool's policy set (a server is started only to list its tools).

use strata_api::{ApiError, ErrorCode};
use strata_mcp_client::config::{check_name, foreign_files};
use strata_mcp_client::{Connection, McpConfig, Policy, Server};

/// A server as Settings shows it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct McpServerView {
    name: String,
    /// Its command line, or its address.
    reached: String,
    /// Tools with a policy of their own, and that policy (`allowed`, `ask`, `never`).
    policies: Vec<(String, String)>,
}

/// A server's tool, with its policy.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct McpToolView {
    name: String,
    description: String,
    read_only: bool,
    policy: String,
}

/// What an import did, in words.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct McpImportView {
    said: Vec<String>,
    servers: Vec<McpServerView>,
}

fn io(e: strata_core::Error) -> ApiError {
    ApiError::from(e)
}

fn load() -> Result<(std::path::PathBuf, McpConfig), ApiError> {
    let path = McpConfig::path().map_err(io)?;
    let config = McpConfig::load_from(&path).map_err(io)?;
    Ok((path, config))
}

fn views(config: &McpConfig) -> Vec<McpServerView> {
    config
        .servers
        .iter()
        .map(|(name, s)| McpServerView {
            name: name.clone(),
            reached: s.shown(),
            policies: s.tools.iter().map(|(t, p)| (t.clone(), p.as_str().to_string())).collect(),
        })
        .collect()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the MCP servers' settings failed: {e}")))?
}

/// The person's MCP servers.
#[tauri::command]
#[specta::specta]
pub(crate) async fn mcp_servers() -> Result<Vec<McpServerView>, ApiError> {
    blocking(|| Ok(views(&load()?.1))).await
}

/// Adds a server: a command line (its program, then its arguments; quotes keep spaces) or the
/// address of one over streamable HTTP.
#[tauri::command]
#[specta::specta]
pub(crate) async fn add_mcp_server(name: String, reached: String) -> Result<Vec<McpServerView>, ApiError> {
    blocking(move || {
        let (path, mut config) = load()?;
        let name = name.trim().to_string();
        check_name(&name).map_err(io)?;
        if config.servers.contains_key(&name) {
            return Err(ApiError::invalid(format!("a server is already named {name}")));
        }
        let reached = reached.trim();
        let server = if reached.starts_with("http://") || reached.starts_with("https://") {
            Server { url: Some(reached.to_string()), ..Server::default() }
        } else {
            let words = split_words(reached);
            let (program, args) = words
                .split_first()
                .ok_or_else(|| ApiError::invalid("give the server's command line or its address"))?;
            Server { command: Some(program.clone()), args: args.to_vec(), ..Server::default() }
        };
        server.check(&name).map_err(io)?;
        config.servers.insert(name, server);
        config.save_to(&path).map_err(io)?;
        Ok(views(&config))
    })
    .await
}

/// `line` cut into words at spaces; a quoted part ("…" or '…') is one word with its spaces.
fn split_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None::<char>, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => (quote, any) = (Some(c), true),
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Removes a server.
#[tauri::command]
#[specta::specta]
pub(crate) async fn remove_mcp_server(name: String) -> Result<Vec<McpServerView>, ApiError> {
    blocking(move || {
        let (path, mut config) = load()?;
        if config.servers.remove(&name).is_none() {
            return Err(ApiError::new(ErrorCode::NotFound, format!("no server is named {name}")));
        }
        config.save_to(&path).map_err(io)?;
        Ok(views(&config))
    })
    .await
}

/// Adds the servers of Claude Desktop's and Cursor's settings found on this computer (one here
/// by name is left as it is).
#[tauri::command]
#[specta::specta]
pub(crate) async fn import_mcp_servers() -> Result<McpImportView, ApiError> {
    blocking(|| {
        let (path, mut config) = load()?;
        let mut said = Vec::new();
        let found = foreign_files();
        if found.is_empty() {
            said.push("Neither Claude Desktop's nor Cursor's settings are on this computer.".to_string());
        }
        for (who, file) in found {
            let done = config.import_file(who, &file).map_err(io)?;
            said.push(done.said());
            said.extend(done.refused.iter().map(|r| format!("Not imported: {r}")));
        }
        config.save_to(&path).map_err(io)?;
        Ok(McpImportView { said, servers: views(&config) })
    })
    .await
}

/// Starts a server and lists its tools with their policies.
#[tauri::command]
#[specta::specta]
pub(crate) async fn mcp_server_tools(name: String) -> Result<Vec<McpToolView>, ApiError> {
    blocking(move || {
        let (_, config) = load()?;
        let server = config
            .servers
            .get(&name)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no server is named {name}")))?;
        let conn = Connection::start(&name, server).map_err(io)?;
        Ok(conn
            .tools
            .iter()
            .map(|t| McpToolView {
                name: t.name.clone(),
                description: t.description.lines().next().unwrap_or("").to_string(),
                read_only: t.read_only,
                policy: server.policy(&t.name).as_str().to_string(),
            })
            .collect())
    })
    .await
}

/// Sets a tool's policy (`allowed`, `ask`, `never`).
#[tauri::command]
#[specta::specta]
pub(crate) async fn set_mcp_tool_policy(name: String, tool: String, policy: String) -> Result<(), ApiError> {
    blocking(move || {
        let (path, mut config) = load()?;
        let policy = Policy::parse(&policy).map_err(io)?;
        let server = config
            .servers
            .get_mut(&name)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no server is named {name}")))?;
        server.tools.insert(tool, policy);
        config.save_to(&path).map_err(io)
    })
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_line_is_cut_at_spaces_and_quotes_keep_them() {
        let words = super::split_words(r#"npx -y  @mcp/server-filesystem "/home/ana/My Files" 'it''s' """#);
        assert_eq!(words, ["npx", "-y", "@mcp/server-filesystem", "/home/ana/My Files", "its", ""]);
    }
}
