//! The command line's shape (clap): global options, subcommands and their arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod agents;
mod bench;
mod datasets;
mod mcp_servers;
mod models;
mod plugins;
mod train;

pub use agents::{AgentsCommand, SharedArg, SpecArgs};
pub use bench::BenchCommand;
pub use datasets::DatasetsCommand;
pub use mcp_servers::{McpServersCommand, PolicyArg};
pub use models::{ContextArgs, KeyCommand, ModelsCommand, ProviderArgs, RemoteArgs, TokensCommand, TurnArgs};
pub use plugins::{PluginKindArg, PluginsCommand};
pub use train::{GateArgs, ScheduleArgs, TrainCommand, TrainHyper, TrainSelect};

/// Strata: a local-first, hierarchical long-term memory for LLMs and agents.
#[derive(Debug, Parser)]
#[command(name = "strata", version, about, propagate_version = true)]
pub struct Cli {
    /// The database file (default: strata.db in your user data folder).
    #[arg(long, global = true, env = "STRATA_DB", value_name = "PATH", hide_env_values = true)]
    pub db: Option<PathBuf>,
    /// Print JSON for scripts instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Whose memories to use.
    #[arg(long, global = true, env = "STRATA_USER", default_value = "default", hide_env_values = true)]
    pub user: String,
    /// Narrow to one agent's private memories.
    #[arg(long, global = true, env = "STRATA_AGENT", hide_env_values = true)]
    pub agent: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Add a memory.
    #[command(subcommand)]
    Add(AddCommand),
    /// Show one memory (by id or key), now or as it was at a past time.
    Get {
        #[command(flatten)]
        target: KeyArg,
        /// Show the memory as it was at this time (e.g. 2026-01-31T12:00Z).
        #[arg(long, conflicts_with = "at_seq")]
        as_of: Option<String>,
        /// Show the memory as it was after this event sequence number.
        #[arg(long)]
        at_seq: Option<i64>,
    },
    /// List memories, newest first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// Latest first by when each was added, happened, or was last recalled.
        #[arg(long, value_enum, default_value = "added")]
        order: OrderArg,
        /// How many to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Continue after this cursor (printed under the previous page).
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Keyword search (best first, with the matching passage).
    Search {
        /// Words to look for.
        query: String,
        #[command(flatten)]
        filter: FilterArgs,
        /// How many results.
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// Recall: keyword and meaning search fused, time words ("last week", "in May 2023")
    /// applied, relevance added; embeds what is not embedded yet first.
    Recall {
        /// What to recall.
        query: String,
        #[command(flatten)]
        filter: FilterArgs,
        /// How many results.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Show each result's score breakdown.
        #[arg(long)]
        why: bool,
    },
    /// The prompt a model would get for a message: memories recalled for it and the
    /// conversation so far, within a token budget, with the report of what went in and why.
    Context(ContextArgs),
    /// Ask a model one question with memory: recall for it, fit the memories into the model's
    /// budget, stream the answer, and remember the exchange.
    Ask {
        /// The question.
        question: String,
        #[command(flatten)]
        provider: ProviderArgs,
        #[command(flatten)]
        turn: TurnArgs,
        /// Do not remember the exchange.
        #[arg(long)]
        no_record: bool,
    },
    /// Talk with a model with memory, one line per message (standard input): every turn
    /// recalls, fits the memories into the budget, streams the answer and remembers the
    /// exchange. `/memories` shows what the last answer was given and why; `/provider NAME
    /// [MODEL]` switches provider, keeping the conversation; `/quit` ends.
    Chat {
        #[command(flatten)]
        provider: ProviderArgs,
        #[command(flatten)]
        turn: TurnArgs,
    },
    /// Run Strata as an MCP server for Claude Desktop, Cursor and other MCP clients: over
    /// stdin/stdout (what a client's config launches), or over streamable HTTP with --http.
    /// Each client is an agent by the name it connects with (or --agent for all of them):
    /// memories are shared by all clients unless written as private.
    Mcp {
        /// Serve streamable HTTP at this address (e.g. 127.0.0.1:8765; port 0: any free one)
        /// at /mcp, instead of stdio. Only loopback addresses, unless --allow-remote.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// The bearer token HTTP clients must send (default: a new random one, printed).
        #[arg(long, env = "STRATA_MCP_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Also offer the reference MCP memory server's knowledge-graph tools
        /// (create_entities, search_nodes…), over Strata's semantic memories.
        #[arg(long)]
        graph_tools: bool,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Serve an OpenAI-compatible API on 127.0.0.1 (`/v1/chat/completions`, `/v1/models`) that
    /// adds memory to every chat and remembers it: point any OpenAI client or LiteLLM at it.
    /// Only requests addressed to this machine's loopback, from no web page but this machine's,
    /// with a JSON body, are answered.
    Serve {
        /// The port (0: any free one; the address is printed).
        #[arg(long, default_value_t = 8088)]
        port: u16,
        /// The address to listen on. Anything but loopback needs --allow-remote.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        #[command(flatten)]
        provider: ProviderArgs,
        /// Require `Authorization: Bearer TOKEN` on every request (beyond loopback one is
        /// always required: a new random one is printed unless given).
        #[arg(long, env = "STRATA_PROXY_TOKEN", hide_env_values = true)]
        token: Option<String>,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Embed every memory that has no vector from the current model (resumable: Ctrl-C stops
    /// it, running it again goes on).
    Embed,
    /// Copy a store into another, empty one, through its event log: a SQLite file to a
    /// PostgreSQL database (`postgres://USER:PASSWORD@HOST/DB`) or back. All or nothing; the
    /// copy's memories are compared with the source's. Vectors are embedded again in the
    /// target (as `strata embed` does).
    Migrate {
        /// The store to copy: a database file or a postgres:// URL.
        from: std::path::PathBuf,
        /// The empty store to copy into: a file (created) or a postgres:// URL.
        to: std::path::PathBuf,
    },
    /// Change a memory's content or importance.
    Update(UpdateArgs),
    /// Add tags to a memory.
    Tag {
        #[command(flatten)]
        target: KeyArg,
        /// Tags to add.
        #[arg(required = true)]
        tags: Vec<String>,
    },
    /// Remove tags from a memory.
    Untag {
        #[command(flatten)]
        target: KeyArg,
        /// Tags to remove.
        #[arg(required = true)]
        tags: Vec<String>,
    },
    /// Move a memory to another tier.
    Tier {
        #[command(flatten)]
        target: KeyArg,
        /// short, medium or long.
        #[arg(value_enum)]
        tier: TierArg,
        /// Why (kept in the history).
        #[arg(long, default_value = "moved by user")]
        reason: String,
    },
    /// Pin a memory: tier maintenance never moves it down (and lifts it to long-term).
    Pin {
        #[command(flatten)]
        target: KeyArg,
    },
    /// Unpin a memory.
    Unpin {
        #[command(flatten)]
        target: KeyArg,
    },
    /// Move memories between tiers by the tier rule (see ARCHITECTURE.md), now.
    Maintain {
        /// Show what would move, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Record that one memory relates to another (provenance).
    Link {
        #[command(flatten)]
        target: KeyArg,
        /// The memory it relates to.
        to: String,
        /// How they relate.
        #[arg(long, default_value = "related_to")]
        relation: String,
    },
    /// Forget a memory for good: its content is erased everywhere, including the log.
    Forget {
        #[command(flatten)]
        target: KeyArg,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Finish wiping forgotten content that another process's read kept in the files: waits
    /// for that read to end (up to a day), then checkpoints. `forget` starts this by itself
    /// when it is needed.
    #[command(hide = true)]
    Scrub,
    /// Show a memory's history from the event log.
    History {
        #[command(flatten)]
        target: KeyArg,
    },
    /// Rebuild every projection from the event log and check it matched.
    Replay,
    /// Import a seed-002 JSON document or a JSON Lines backup ("-" for stdin).
    Import {
        /// The file.
        file: PathBuf,
        /// The format (detected when omitted).
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// What a memories document's memory that is already stored does: stop the import
        /// (nothing imported), skip it (keep what is stored) or merge the file's into it.
        #[arg(long, value_enum, default_value = "stop")]
        on_duplicate: OnDuplicateArg,
    },
    /// Export memories as a seed-002 document or a knowledge graph (memory.json), or the whole
    /// log as a backup.
    Export {
        /// The format.
        #[arg(long, value_enum, default_value = "seed")]
        format: FormatArg,
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Counts of memories, tags and events.
    Stats,
    /// Add a few example memories of each type.
    Demo,
    /// Measure Strata (on its own temporary database; yours is not touched).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Count a text's tokens for a model, or split it into pieces that fit.
    #[command(subcommand)]
    Tokens(TokensCommand),
    /// Turn conversations into facts about the people and things in them: read the turns no
    /// run has read, extract facts by subject, and add, update or confirm what is known (an
    /// update keeps the old value in the fact's history). Whether changes apply at once or wait
    /// for `strata review` follows the settings (the on-device model's wait).
    Extract {
        /// Only this session (every session with unread turns otherwise).
        #[arg(long)]
        session: Option<String>,
        /// Show what would change, change nothing (the turns stay unread).
        #[arg(long)]
        dry_run: bool,
        /// Apply the changes at once, or propose them for review (default: the settings).
        #[arg(long, value_enum)]
        review: Option<ReviewArg>,
        /// Only these episodes (what `strata ask` hands over after an exchange).
        #[arg(long = "episode", value_name = "ID", hide = true)]
        episodes: Vec<String>,
        #[command(flatten)]
        provider: ProviderArgs,
    },
    /// The changes extraction proposed: list them, or accept or reject some or all.
    Review {
        #[command(subcommand)]
        action: Option<ReviewCommand>,
    },
    /// Concepts: related memories grouped by meaning and by the conversation, subject and time they
    /// share, each with a name, the time it spans and a summary made of its members' own sentences.
    /// Lists them by default.
    Concepts {
        #[command(subcommand)]
        action: Option<ConceptsCommand>,
    },
    /// Datasets: your files beside your memories — tables (CSV, TSV, JSON, spreadsheets) you
    /// can query with SQL, documents (Markdown, text, HTML, PDF) you can search, each result
    /// with where it came from. Lists them by default.
    Datasets {
        #[command(subcommand)]
        action: Option<DatasetsCommand>,
    },
    /// Agents that remember: each with its instructions, model, tools, its own memories and
    /// the shared ones, and the agents it may hand a task to. Lists them by default.
    Agents {
        #[command(subcommand)]
        action: Option<AgentsCommand>,
    },
    /// Your MCP servers, whose tools your agents may use (`files__read_text_file`): added by
    /// you or imported from Claude Desktop and Cursor, each tool allowed, asked about each time
    /// (the default) or never offered. Lists them by default.
    #[command(name = "mcp-servers")]
    McpServers {
        #[command(subcommand)]
        action: Option<McpServersCommand>,
    },
    /// Everything pluggable, by kind (storage engines, token counters, embedders, chat models,
    /// dataset loaders, tools): Strata's own and yours, whether each works now, and the
    /// embedder recall uses. Lists them by default.
    Plugins {
        #[command(subcommand)]
        action: Option<PluginsCommand>,
    },
    /// The people the servers over this store let in (`strata serve`, `strata mcp --http`),
    /// each with a token of their own, their own rate and request size: what they keep
    /// private only they see, what they share the team sees. Lists them by default.
    People {
        #[command(subcommand)]
        action: Option<PeopleCommand>,
    },
    /// Analytics: what your store holds and how it changed (`summary`: by type, tier, the app
    /// that wrote it, agent and tag; embedding coverage; concepts; memories created and tier
    /// moves with the rules behind them), what recall did (`recalls`: hit rate, latency, the
    /// most and never recalled memories, searches that found nothing), how prompts used their
    /// budgets (`utilization`: by section and model, what was left out and why), by day or
    /// week; the store's health (`health`: near-duplicates, contradictions, stale memories,
    /// memories without a vector, space on disk) and, with `--fix`, an optimization previewed
    /// (and with `--apply`, applied); what each compaction pass changed (`compaction`); `clear`
    /// deletes the records of recalls and compaction passes.
    Analytics {
        /// Which metrics.
        #[arg(value_enum, default_value = "summary")]
        what: AnalyticsWhat,
        /// From this date or time ("2025-05-01", "last Saturday", "in May 2023").
        #[arg(long)]
        since: Option<String>,
        /// Up to this date or time.
        #[arg(long)]
        until: Option<String>,
        /// Series by day or by week.
        #[arg(long, value_enum, default_value = "day")]
        by: BucketArg,
        /// Only memories of this type (recalls are not filtered by it).
        #[arg(long = "type", value_enum)]
        kind: Option<KindArg>,
        /// Only memories this app or client wrote (`desktop`, `cli`, `mcp:cursor`…) and the
        /// recalls it ran.
        #[arg(long)]
        client: Option<String>,
        /// Only memories with this tag (recalls are not filtered by it).
        #[arg(long)]
        tag: Option<String>,
        /// The series as CSV (comma-separated, with a header row) instead of tables or JSON.
        #[arg(long)]
        csv: bool,
        /// With `health`: preview an optimization (what it would change).
        #[arg(long, value_enum)]
        fix: Option<FixArg>,
        /// With `--fix`: apply it.
        #[arg(long, requires = "fix")]
        apply: bool,
    },
    /// What is known about the people and things in your conversations: every subject with its
    /// facts, or one subject with the values each fact had before.
    Facts {
        /// A subject's name (`Ana`, `user`).
        subject: Option<String>,
    },
    /// Provider keys in the OS keychain (a key in the environment, e.g. OPENAI_API_KEY, wins).
    #[command(subcommand)]
    Key(KeyCommand),
    /// Crystallization: train memories into a LoRA adapter of the on-device model, evaluate
    /// it, and choose which adapter the model uses.
    #[command(subcommand)]
    Train(TrainCommand),
    /// The on-device models: which there are, which is on this computer, fetch one, choose
    /// which answers.
    Models {
        #[command(subcommand)]
        action: Option<ModelsCommand>,
    },
}

/// The metrics `strata analytics` shows.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AnalyticsWhat {
    /// What the store holds and how it changed.
    Summary,
    /// What recall did.
    Recalls,
    /// How prompts used their budgets.
    Utilization,
    /// What does the store no good.
    Health,
    /// What each compaction pass changed.
    Compaction,
    /// What agents did: tasks by how they ended, and by agent (steps, tool calls, handoffs,
    /// tokens, time).
    Agents,
    /// Delete the records of recalls (and of compaction passes).
    Clear,
}

/// The optimizations `strata analytics health --fix` previews and applies.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FixArg {
    /// Keep one of each group of near-duplicates and expire the others (restorable).
    MergeDuplicates,
    /// Expire memories never used in 90 days (restorable).
    ExpireStale,
    /// Embed memories without a vector.
    EmbedMissing,
    /// Group related memories into concepts.
    Compact,
    /// Give back the space deleted rows left.
    Vacuum,
}

/// How a series is bucketed.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BucketArg {
    /// Calendar days (UTC).
    Day,
    /// Weeks from Monday (UTC).
    Week,
}

/// What `strata people` does.
#[derive(Debug, Subcommand)]
pub enum PeopleCommand {
    /// Everyone with a token, or who had one.
    List,
    /// Let someone in: prints their token, once (only its SHA-256 is kept).
    Add {
        /// Their name (letters, digits, '.', '-', '_'): also the name their private memories
        /// are kept under.
        name: String,
        /// Requests a minute they may send (a burst of this many, then evenly).
        #[arg(long, default_value_t = strata_api::people::Limits::default().per_minute, value_parser = clap::value_parser!(u32).range(1..=i64::from(strata_api::people::MAX_PER_MINUTE)))]
        per_minute: u32,
        /// The largest request they may send, in KiB (at most 1024).
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1024))]
        max_kib: u32,
    },
    /// Take someone's token away: every server over this store refuses it from now on.
    Revoke {
        /// Their name.
        name: String,
    },
}

/// `strata concepts …`
#[derive(Debug, Subcommand)]
pub enum ConceptsCommand {
    /// Every concept, the largest first.
    List,
    /// One concept: its terms, summary (each sentence with the memory it came from) and members.
    Show {
        /// Its key (`concept/…`) or id.
        concept: String,
    },
    /// Group the memories again (a full pass: concepts keep their ids where most of their
    /// members stay), or with --incremental only let new memories join the concept they belong
    /// to. Members are never changed.
    Rebuild {
        /// Only let memories in no concept join one.
        #[arg(long)]
        incremental: bool,
        /// Say what would change and write nothing (not even vectors: memories not embedded
        /// yet are left out).
        #[arg(long)]
        dry_run: bool,
    },
    /// Have a model write the concepts' summaries (the on-device model chosen for facts by
    /// default): each sentence cites the members it comes from, and one whose names, numbers
    /// or dates none of them holds is dropped. Stopping keeps the ones written.
    Write {
        /// Only the largest N concepts.
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        provider: ProviderArgs,
    },
}

/// `strata review …`
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Accept proposals: their facts are written and recalled from now on.
    Accept {
        /// The proposals' ids (`strata review` lists them).
        ids: Vec<String>,
        /// Every proposal waiting.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        /// Accept one proposal with its fact reworded.
        #[arg(long = "as", value_name = "FACT")]
        wording: Option<String>,
    },
    /// Reject proposals: nothing is written.
    Reject {
        /// The proposals' ids.
        ids: Vec<String>,
        /// Every proposal waiting.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
}

/// Whether extracted changes apply at once, on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReviewArg {
    /// Applied at once.
    Apply,
    /// Proposed for `strata review`.
    Propose,
}

/// `strata add …`
#[derive(Debug, Subcommand)]
pub enum AddCommand {
    /// A concept and its facts: `strata add semantic tea --fact likes=oolong`.
    Semantic {
        /// The concept key, e.g. napoleon_bonaparte.
        key: String,
        /// A fact as name=value (value may be JSON: numbers, lists, true/false). Repeatable.
        #[arg(long = "fact", value_name = "NAME=VALUE")]
        facts: Vec<String>,
        /// All facts as one JSON object.
        #[arg(long, value_name = "JSON")]
        facts_json: Option<String>,
        #[command(flatten)]
        common: CommonAdd,
    },
    /// An interaction: an utterance (--speaker, --text) or an exchange (--query, --response).
    Episodic {
        /// Who spoke (with --text).
        #[arg(long, requires = "text")]
        speaker: Option<String>,
        /// What was said.
        #[arg(long)]
        text: Option<String>,
        /// What was asked (with --response).
        #[arg(long, conflicts_with_all = ["speaker", "text"])]
        query: Option<String>,
        /// What was answered.
        #[arg(long, conflicts_with_all = ["speaker", "text"])]
        response: Option<String>,
        /// When it happened (default: now).
        #[arg(long)]
        at: Option<String>,
        /// Concept keys it refers to. Repeatable.
        #[arg(long = "concept")]
        concepts: Vec<String>,
        #[command(flatten)]
        common: CommonAdd,
    },
    /// A procedure: `strata add procedural brew --step "boil" --step "steep"`.
    Procedural {
        /// The procedure's name.
        name: String,
        /// A step, in order. Repeatable.
        #[arg(long = "step", required = true)]
        steps: Vec<String>,
        /// When to use it.
        #[arg(long)]
        context: Option<String>,
        #[command(flatten)]
        common: CommonAdd,
    },
}

/// A memory named by id or by key.
#[derive(Debug, Args)]
pub struct KeyArg {
    /// Memory id, concept key or procedure name.
    pub target: String,
    /// Which type a key refers to when several have it.
    #[arg(long = "type", value_enum)]
    pub kind: Option<KindArg>,
}

/// Options every `add` takes.
#[derive(Debug, Args)]
pub struct CommonAdd {
    /// A tag. Repeatable.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// 0 to 1 (default 0.5).
    #[arg(long)]
    pub importance: Option<f64>,
    /// Starting tier (default: episodes short, others medium).
    #[arg(long, value_enum)]
    pub tier: Option<TierArg>,
    /// The session it belongs to.
    #[arg(long)]
    pub session: Option<String>,
}

/// `strata update …`
#[derive(Debug, Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    pub target: KeyArg,
    /// Set a fact (semantic). Repeatable.
    #[arg(long = "fact", value_name = "NAME=VALUE")]
    pub facts: Vec<String>,
    /// Remove a fact (semantic). Repeatable.
    #[arg(long = "unset-fact", value_name = "NAME")]
    pub unset_facts: Vec<String>,
    /// New text (utterance) or response (exchange).
    #[arg(long)]
    pub text: Option<String>,
    /// New query (exchange).
    #[arg(long)]
    pub query: Option<String>,
    /// Replace the steps (procedural). Repeatable.
    #[arg(long = "step")]
    pub steps: Vec<String>,
    /// New context (procedural).
    #[arg(long)]
    pub context: Option<String>,
    /// New importance, 0 to 1.
    #[arg(long)]
    pub importance: Option<f64>,
    /// Refuse if the memory changed since this version.
    #[arg(long)]
    pub expect_version: Option<u64>,
}

/// Filters shared by list and search.
#[derive(Debug, Args, Default)]
pub struct FilterArgs {
    /// Only this type. Repeatable.
    #[arg(long = "type", value_enum)]
    pub kinds: Vec<KindArg>,
    /// Only memories with this tag. Repeatable (all must match).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Only this tier. Repeatable.
    #[arg(long = "tier", value_enum)]
    pub tiers: Vec<TierArg>,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Only memories that happened at or after this time (a date, or words: "last Saturday").
    #[arg(long)]
    pub since: Option<String>,
    /// Only memories that happened up to and including this time (the same forms).
    #[arg(long)]
    pub until: Option<String>,
    /// Only memories from here: written by a person, imported, from conversations with a
    /// model, or added by AI tools over MCP.
    #[arg(long = "from", value_enum)]
    pub origin: Option<OriginArg>,
    /// Include memories that maintenance expired (hidden by default).
    #[arg(long)]
    pub expired: bool,
}

/// Where memories came from, on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OriginArg {
    /// Written by a person (this command, the app, the API).
    Person,
    /// Imported from a file, or the examples.
    Imported,
    /// Recorded from a conversation with a model.
    Conversation,
    /// Added by an AI tool over MCP.
    Tool,
}

/// A list's order on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OrderArg {
    /// When it was added.
    Added,
    /// When it happened.
    Occurred,
    /// When it was last recalled.
    Recalled,
}

/// Where a training candidate stands, on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CandidateStatusArg {
    /// Waiting for a person.
    Flagged,
    /// Approved for training.
    Approved,
    /// Rejected.
    Rejected,
}

/// Memory types on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// Facts about a concept.
    Semantic,
    /// Interactions.
    Episodic,
    /// Procedures.
    Procedural,
}

/// Tiers on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TierArg {
    /// Working memory.
    Short,
    /// Recent.
    Medium,
    /// Consolidated.
    Long,
}

/// What an import does with a memory already stored.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnDuplicateArg {
    /// Stop; nothing is imported.
    Stop,
    /// Keep what is stored; count it as skipped.
    Skip,
    /// Add a concept's new facts and take the file's changed ones; a procedure's steps.
    Merge,
}

/// File formats on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// The seed-002 JSON document.
    Seed,
    /// JSON Lines of every event.
    Backup,
    /// The reference MCP memory server's memory.json (entities and relations, JSON Lines).
    Graph,
}
