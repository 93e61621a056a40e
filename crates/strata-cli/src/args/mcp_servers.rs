//! `strata mcp-servers`: the person's MCP servers, whose tools their agents may use.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

/// A tool's policy, as the command line names it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PolicyArg {
    /// Called without asking.
    Allowed,
    /// Asked each time (`strata agents run --yes` answers yes).
    Ask,
    /// Never offered to a model.
    Never,
}

#[derive(Debug, Subcommand)]
pub enum McpServersCommand {
    /// The servers added, each with how it is reached and its tools' policies.
    List,
    /// Add a server: a program that serves over stdio (`strata mcp-servers add files --
    /// npx -y @modelcontextprotocol/server-filesystem ~/Documents`), or one over streamable
    /// HTTP (`--url`). Nothing is started until an agent that names it runs, or `tools`.
    Add {
        /// Its name: what its tools are called by (`files__read_text_file`).
        name: String,
        /// A server over streamable HTTP: its address.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// A header for the HTTP server, `Name=value` (`${env:NAME}` reads the environment when
        /// it starts, so a key can stay out of the file).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// An environment variable for the program, `NAME=value`.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The program and its arguments (after `--`).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server (its file entry; nothing else is kept of it).
    Remove {
        /// The server.
        name: String,
    },
    /// Add the servers of Claude Desktop's or Cursor's settings: the file given, or every one
    /// found on this computer. A server already here by name is left as it is.
    Import {
        /// A file in the `mcpServers` shape (claude_desktop_config.json, .cursor/mcp.json).
        file: Option<PathBuf>,
    },
    /// Start a server and list its tools, each with its policy.
    Tools {
        /// The server.
        name: String,
    },
    /// Set a tool's policy: allowed, ask each time (the default), or never.
    Policy {
        /// The server.
        name: String,
        /// The tool, as `tools` lists it.
        tool: String,
        /// The policy.
        #[arg(value_enum)]
        policy: PolicyArg,
    },
}
