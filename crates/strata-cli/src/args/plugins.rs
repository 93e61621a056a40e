//! `strata plugins`: the registry of everything pluggable, the person's plugins, and the
//! embedder in use.

use clap::{Subcommand, ValueEnum};

/// A kind of plugin, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PluginKindArg {
    /// Where memories are kept.
    Storage,
    /// Counts a model's tokens.
    TokenManager,
    /// Turns text into vectors for search by meaning.
    Embedder,
    /// Answers, extracts, runs agents.
    ChatModel,
    /// Reads files (or an MCP server's resources) into datasets.
    DatasetLoader,
    /// What agents may call.
    Tool,
}

#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Everything pluggable, by kind: Strata's own and yours, where each comes from, and
    /// whether it is ready (endpoints and MCP servers are tried by `check`).
    List {
        /// Only this kind.
        #[arg(long)]
        kind: Option<PluginKindArg>,
    },
    /// Try plugins for real (an embedder embeds, an endpoint lists its models, a tokenizer
    /// counts, an MCP server starts): each said ready or broken, with why. All, or one.
    Check {
        /// The plugin's name (all when none).
        name: Option<String>,
    },
    /// Add an embedder or chat model at an endpoint you run (`--provider ollama --url
    /// http://127.0.0.1:11434 --model nomic-embed-text`), or a token counter from a file
    /// (`--file tokenizer.json --models 'llama3*'`). MCP servers: `strata mcp-servers add`.
    Add {
        /// Its name.
        name: String,
        /// embedder, chat-model or token-manager.
        #[arg(long)]
        kind: PluginKindArg,
        /// ollama or openai-compatible (an endpoint).
        #[arg(long)]
        provider: Option<String>,
        /// The endpoint's address.
        #[arg(long)]
        url: Option<String>,
        /// The model's name at the endpoint.
        #[arg(long)]
        model: Option<String>,
        /// The environment variable holding the endpoint's key (the key is never stored).
        #[arg(long)]
        key_env: Option<String>,
        /// A tokenizer.json or .gguf file (a token counter).
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// The models a token counter counts for: a name, or a prefix ending in `*`.
        #[arg(long)]
        models: Option<String>,
    },
    /// Remove one of your plugins (not the embedder in use).
    Remove {
        /// Its name.
        name: String,
    },
    /// Choose the embedder recall uses (`on-device`, or one of yours). The store is re-embedded
    /// first while recall keeps the one in use; an interrupted switch resumes when run again,
    /// and switching back to an embedder used before embeds nothing.
    Use {
        /// The embedder's name.
        name: String,
    },
}
