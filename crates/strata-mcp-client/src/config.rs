//! The person's MCP servers: `mcp.json` beside Strata's settings, in the `mcpServers` shape
//! Claude Desktop and Cursor use (`command`/`args`/`env`, or `url`/`headers`), with one field of
//! Strata's own per server: `tools`, each tool's policy (allowed, ask each time, never; a tool
//! not named is asked about). Servers come in only by the person's act: `add`, or `import` of
//! a file they name. Values may name the environment (`${env:NAME}` or `${NAME}`), so that a
//! key can stay out of the file; it is read when the server starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use strata_core::{Error, Result};

/// What may happen when an agent calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Called without asking.
    Allowed,
    /// Asked each time (in the window; in the CLI at the terminal, or `--yes`).
    #[default]
    Ask,
    /// Never offered to a model.
    Never,
}

impl Policy {
    /// The policy named `s` (`allowed`, `ask`, `never`).
    pub fn parse(s: &str) -> Result<Policy> {
        match s {
            "allowed" | "allow" => Ok(Policy::Allowed),
            "ask" => Ok(Policy::Ask),
            "never" => Ok(Policy::Never),
            other => Err(Error::invalid(format!("'{other}' is no tool policy: say allowed, ask or never"))),
        }
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Allowed => "allowed",
            Policy::Ask => "ask",
            Policy::Never => "never",
        }
    }
}

/// One server, as `mcpServers` writes it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    /// The program that serves over stdio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Its environment, added to Strata's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The folder it runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// A server over streamable HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to it (`Authorization`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The transport, when a file names it (`stdio`, `http`, `streamable-http`; `sse` is not
    /// served).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Turned off without being removed (Cline's field).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// Strata's: each tool's policy (a tool not named is asked about).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Policy>,
}

impl Server {
    /// The policy of its tool `tool`.
    pub fn policy(&self, tool: &str) -> Policy {
        self.tools.get(tool).copied().unwrap_or_default()
    }

    /// Whether it is a server over HTTP (else over stdio).
    pub fn is_http(&self) -> bool {
        self.url.is_some()
    }

    /// How it is reached, for a list: the command line, or the URL.
    pub fn shown(&self) -> String {
        match (&self.url, &self.command) {
            (Some(url), _) => url.clone(),
            (None, Some(c)) => {
                std::iter::once(c.as_str()).chain(self.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
            }
            (None, None) => String::new(),
        }
    }

    /// A server Strata can start, or why not, in words (`name` is its name).
    pub fn check(&self, name: &str) -> Result<()> {
        check_name(name)?;
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(format!("{name} has both a command and a url: give one")));
            }
            (None, None) => return Err(Error::invalid(format!("{name} has neither a command nor a url"))),
            (Some(c), None) if c.trim().is_empty() => {
                return Err(Error::invalid(format!("{name}'s command is empty")));
            }
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                return Err(Error::invalid(format!("{name}'s url must start with http:// or https://: {u}")));
            }
            _ => {}
        }
        match self.kind.as_deref() {
            None | Some("stdio") | Some("http") | Some("streamable-http") | Some("streamableHttp") => Ok(()),
            Some("sse") => Err(Error::invalid(format!(
                "{name} uses the old SSE transport, which Strata does not speak: use the server's streamable HTTP \
                 address (often the same address ending in /mcp)"
            ))),
            Some(other) => Err(Error::invalid(format!("{name} has a transport Strata does not know: {other}"))),
        }
    }
}

/// A server's name: what its tools are called by (`<server>__<tool>`), so letters, digits,
/// `-` and `_`, at most 32.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__");
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "'{name}' cannot name a server: use up to 32 letters, digits, - or _ (no double _)"
        )))
    }
}

/// The servers file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct McpConfig {
    /// The servers, by name.
    #[serde(rename = "mcpServers", default)]
    pub servers: BTreeMap<String, Server>,
}

/// The largest servers file read (they are a few lines).
const MAX_FILE: u64 = 1 << 20;

impl McpConfig {
    /// Where the person's servers are kept: `STRATA_MCP_CONFIG`, else `mcp.json` in Strata's
    /// config folder (beside `settings.json`).
    pub fn path() -> Result<PathBuf> {
        if let Some(p) = std::env::var_os("STRATA_MCP_CONFIG").filter(|p| !p.is_empty()) {
            return Ok(PathBuf::from(p));
        }
        directories::ProjectDirs::from("", "", "strata")
            .map(|d| d.config_dir().join("mcp.json"))
            .ok_or_else(|| Error::invalid("cannot find your config folder; set STRATA_MCP_CONFIG"))
    }

    /// The servers in `path` (none when it does not exist). A damaged file is an error that
    /// names it, left as it is.
    pub fn load_from(path: &Path) -> Result<McpConfig> {
        let text = match strata_core::files::read_text(path, MAX_FILE, "an MCP servers file") {
            Ok(t) => t,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(McpConfig::default());
            }
            Err(e) => return Err(e),
        };
        let config = parse(path, &text)?;
        for (name, s) in &config.servers {
            s.check(name).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        }
        Ok(config)
    }

    /// Writes `path` whole (a crash leaves the old file or the new).
    pub fn save_to(&self, path: &Path) -> Result<()> {
        for (name, s) in &self.servers {
            s.check(name)?;
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot make {}", dir.display()), e))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::invalid(e.to_string()))?;
        strata_core::files::write_bytes(path, (text + "\n").as_bytes())
    }

    /// The servers of another program's file (Claude Desktop's, Cursor's, VS Code's `servers`),
    /// checked; their own policies are not taken (a tool's policy is the person's, here).
    pub fn read_foreign(path: &Path) -> Result<McpConfig> {
        let text = strata_core::files::read_text(path, MAX_FILE, "an MCP servers file")?;
        let value: serde_json::Value = serde_json::from_str(text.strip_prefix('\u{FEFF}').unwrap_or(&text))
            .map_err(|e| Error::invalid(format!("{} is not JSON: {e}", path.display())))?;
        let map = value
            .get("mcpServers")
            .or_else(|| value.get("servers"))
            .ok_or_else(|| Error::invalid(format!("{} has no mcpServers", path.display())))?;
        let mut servers: BTreeMap<String, Server> = serde_json::from_value(map.clone())
            .map_err(|e| Error::invalid(format!("{}: a server is not in the mcpServers shape: {e}", path.display())))?;
        for s in servers.values_mut() {
            s.tools.clear();
        }
        Ok(McpConfig { servers })
    }

    /// Adds the servers of another program's file at `path` (named `from` in the report): each
    /// checked, one here by name left as it is.
    pub fn import_file(&mut self, from: &str, path: &Path) -> Result<Imported> {
        let theirs = McpConfig::read_foreign(path)?;
        let mut refused = Vec::new();
        let servers = theirs
            .servers
            .into_iter()
            .filter(|(n, s)| s.check(n).map_err(|e| refused.push(e.to_string())).is_ok())
            .collect();
        let (added, kept) = self.merge(McpConfig { servers });
        Ok(Imported { from: from.to_string(), added, kept, refused })
    }

    /// Adds `other`'s servers that are not here by name; returns the names added and the
    /// names left as they were.
    pub fn merge(&mut self, other: McpConfig) -> (Vec<String>, Vec<String>) {
        let (mut added, mut kept) = (Vec::new(), Vec::new());
        for (name, s) in other.servers {
            if self.servers.contains_key(&name) {
                kept.push(name);
            } else {
                self.servers.insert(name.clone(), s);
                added.push(name);
            }
        }
        (added, kept)
    }
}

/// What an import of another program's servers did.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Where they came from (a program's name, or the file).
    pub from: String,
    /// Servers added.
    pub added: Vec<String>,
    /// Servers already here by name, left as they were.
    pub kept: Vec<String>,
    /// Servers not imported, and why.
    pub refused: Vec<String>,
}

impl Imported {
    /// What it did, in a sentence (the refusals apart).
    pub fn said(&self) -> String {
        let added = if self.added.is_empty() { "none".to_string() } else { self.added.join(", ") };
        let mut line = format!("From {}: added {added}.", self.from);
        if !self.kept.is_empty() {
            line.push_str(&format!(" Already here, left as they are: {}.", self.kept.join(", ")));
        }
        line
    }
}

fn parse(path: &Path, text: &str) -> Result<McpConfig> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| {
        Error::invalid(format!("{} is damaged (line {}, column {}): {e}", path.display(), e.line(), e.column()))
    })
}

/// The files other programs keep their servers in, that exist here: Claude Desktop's, then
/// Cursor's (its global file).
pub fn foreign_files() -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    if let Some(base) = directories::BaseDirs::new() {
        // Claude Desktop: Application Support on macOS, %APPDATA% on Windows, ~/.config on Linux.
        out.push(("Claude Desktop", base.config_dir().join("Claude").join("claude_desktop_config.json")));
        out.push(("Cursor", base.home_dir().join(".cursor").join("mcp.json")));
    }
    out.into_iter().filter(|(_, p)| p.is_file()).collect()
}

/// `value` with `${env:NAME}` and `${NAME}` replaced by the environment's; an unset one is an
/// error that names it (a server is not started with an empty key).
pub fn expand(value: &str) -> Result<String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = after[..end].strip_prefix("env:").unwrap_or(&after[..end]);
        let got = std::env::var(name).map_err(|_| {
            Error::invalid(format!("the environment variable {name} is not set (the server's settings name it)"))
        })?;
        out.push_str(&got);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
