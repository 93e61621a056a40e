//! `strata mcp-servers`: the person's MCP servers (`mcp.json` beside the settings), added by
//! them or imported from Claude Desktop and Cursor, and each tool's policy.

use anyhow::{Context, Result, bail};
use strata_mcp_client::config::{check_name, foreign_files};
use strata_mcp_client::{Connection, McpConfig, Policy, Server, qualified};

use crate::args::{McpServersCommand, PolicyArg};
use crate::render::Out;

pub fn run(command: Option<McpServersCommand>, out: &Out) -> Result<()> {
    let path = McpConfig::path()?;
    let mut config = McpConfig::load_from(&path)?;
    match command.unwrap_or(McpServersCommand::List) {
        McpServersCommand::List => list(&config, out),
        McpServersCommand::Add { name, url, headers, env, command } => {
            check_name(&name)?;
            if config.servers.contains_key(&name) {
                bail!("a server is already named {name}: remove it first, or choose another name");
            }
            let mut server = Server { url, ..Server::default() };
            if server.url.is_none() {
                let (program, args) =
                    command.split_first().context("give the server's program after --, or its --url")?;
                server.command = Some(program.clone());
                server.args = args.to_vec();
            }
            server.headers = pairs(&headers, "--header")?;
            server.env = pairs(&env, "--env")?;
            server.check(&name)?;
            config.servers.insert(name.clone(), server);
            config.save_to(&path)?;
            out.done(&format!(
                "Added {name}. Its tools are asked about each time an agent calls one; `strata mcp-servers tools \
                 {name}` lists them."
            ))
        }
        McpServersCommand::Remove { name } => {
            if config.servers.remove(&name).is_none() {
                bail!("no server is named {name}");
            }
            config.save_to(&path)?;
            out.done(&format!("Removed {name}."))
        }
        McpServersCommand::Import { file } => import(&mut config, file, out).and_then(|()| Ok(config.save_to(&path)?)),
        McpServersCommand::Tools { name } => tools(&config, &name, out),
        McpServersCommand::Policy { name, tool, policy } => {
            let server = config.servers.get_mut(&name).with_context(|| format!("no server is named {name}"))?;
            let policy = match policy {
                PolicyArg::Allowed => Policy::Allowed,
                PolicyArg::Ask => Policy::Ask,
                PolicyArg::Never => Policy::Never,
            };
            server.tools.insert(tool.clone(), policy);
            config.save_to(&path)?;
            out.done(&format!("{tool} of {name}: {}.", policy.as_str()))
        }
    }
}

/// `NAME=value` pairs.
fn pairs(given: &[String], flag: &str) -> Result<std::collections::BTreeMap<String, String>> {
    given
        .iter()
        .map(|p| {
            p.split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .with_context(|| format!("{flag} takes NAME=VALUE, not {p}"))
        })
        .collect()
}

fn list(config: &McpConfig, out: &Out) -> Result<()> {
    if out.json {
        say!("{}", serde_json::to_string_pretty(config)?);
        return Ok(());
    }
    if config.servers.is_empty() {
        say!("No MCP servers yet: `strata mcp-servers add NAME -- PROGRAM ARGS…`, or `strata mcp-servers import`.");
        return Ok(());
    }
    let mut t = crate::render::table(&["name", "reached by", "tools' policies"]);
    for (name, s) in &config.servers {
        let mut policies: Vec<String> = s.tools.iter().map(|(t, p)| format!("{t}: {}", p.as_str())).collect();
        policies.push("others: ask".into());
        let reached = if s.disabled { format!("{} (turned off)", s.shown()) } else { s.shown() };
        t.add_row([name.clone(), reached, policies.join(", ")]);
    }
    crate::render::print_table(&t)
}

fn import(config: &mut McpConfig, file: Option<std::path::PathBuf>, out: &Out) -> Result<()> {
    let files: Vec<(String, std::path::PathBuf)> = match file {
        Some(f) => vec![(f.display().to_string(), f)],
        None => foreign_files().into_iter().map(|(who, p)| (format!("{who} ({})", p.display()), p)).collect(),
    };
    if files.is_empty() {
        bail!("found neither Claude Desktop's nor Cursor's settings here: name the file to import");
    }
    for (shown, path) in files {
        let done = config.import_file(&shown, &path)?;
        out.done(&done.said())?;
        for p in done.refused {
            note!("Not imported: {p}");
        }
    }
    Ok(())
}

fn tools(config: &McpConfig, name: &str, out: &Out) -> Result<()> {
    let server = config.servers.get(name).with_context(|| format!("no server is named {name}"))?;
    let conn = Connection::start(name, server)?;
    if out.json {
        let tools: Vec<serde_json::Value> = conn
            .tools
            .iter()
            .map(|t| {
                serde_json::json!({"name": qualified(name, &t.name), "tool": t.name, "description": t.description,
                    "read_only": t.read_only, "policy": server.policy(&t.name).as_str()})
            })
            .collect();
        say!("{}", serde_json::to_string_pretty(&serde_json::json!({"server": conn.server, "tools": tools}))?);
        return Ok(());
    }
    note!("{name} is {}: {} tools.", conn.server, conn.tools.len());
    let mut t = crate::render::table(&["agents call it", "policy", "reads only", "what it does"]);
    for tool in &conn.tools {
        let what: String = tool.description.lines().next().unwrap_or("").chars().take(80).collect();
        let read_only = if tool.read_only { "yes" } else { "" };
        t.add_row([
            qualified(name, &tool.name),
            server.policy(&tool.name).as_str().to_string(),
            read_only.into(),
            what,
        ]);
    }
    crate::render::print_table(&t)
}
