//! The command line's shape (clap): global options, subcommands and their arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
}

/// `strata train …`
#[derive(Debug, Subcommand)]
pub enum TrainCommand {
    /// Build a training set from memories (facts and procedures) and report its problems.
    Dataset {
        #[command(flatten)]
        select: TrainSelect,
        /// Write the set here as JSON Lines (default: beside the database, named by its hash).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        hyper: TrainHyper,
    },
    /// Train an adapter (a candidate until evaluated and activated). A killed run resumes
    /// from its last checkpoint when run again with the same set and settings.
    Run {
        #[command(flatten)]
        select: TrainSelect,
        /// Train on this set (from `strata train dataset`) instead of selecting memories.
        #[arg(long, conflicts_with_all = ["ids", "approved", "kinds", "tags"])]
        dataset: Option<PathBuf>,
        #[command(flatten)]
        hyper: TrainHyper,
        /// Evaluate it right after training.
        #[arg(long)]
        eval: bool,
    },
    /// Evaluate an adapter: held-out fact recall with, without and by retrieval; general
    /// perplexity. The report is stored with it.
    Eval {
        /// The adapter's id.
        id: String,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// List the adapters, newest first.
    List,
    /// Show an adapter, its report and its history.
    Show {
        /// The adapter's id.
        id: String,
    },
    /// Make an adapter the one the on-device model uses.
    Activate {
        /// The adapter's id.
        id: String,
        /// Activate it even though it failed or skipped its evaluation.
        #[arg(long)]
        force: bool,
    },
    /// Retire the active adapter and restore the one active before it (or none).
    Rollback,
    /// Retire an adapter that is not in use: it is never activated again (its files stay).
    Retire {
        /// The adapter's id.
        id: String,
    },
    /// Check an adapter (the active one by default) against the memories as they are now: its
    /// held-out questions asked again, facts changed or forgotten since training counted. The
    /// check is kept with it (`strata train show` lists them).
    Check {
        /// The adapter's id (default: the active one).
        id: Option<String>,
    },
    /// Flag the facts and procedures that meet the training criteria (the settings file's
    /// `training.criteria`) into the curation queue, and take out those that no longer do.
    Flag,
    /// The curation queue: each candidate with its score and why it is there.
    Candidates {
        /// Only candidates with this status.
        #[arg(long, value_enum)]
        status: Option<CandidateStatusArg>,
        /// Only this type.
        #[arg(long = "type", value_enum)]
        kind: Option<KindArg>,
        /// Only memories with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only members of this concept (its key, id or name).
        #[arg(long)]
        concept: Option<String>,
        /// Order: score (highest first), lowest (the doubtful first) or recent.
        #[arg(long, default_value = "score")]
        sort: String,
    },
    /// Approve candidates for training (memory ids or keys).
    Approve {
        /// The memories.
        #[arg(required = true)]
        ids: Vec<String>,
        /// Why, kept with the decision.
        #[arg(long)]
        note: Option<String>,
    },
    /// Reject candidates: they stay out of training until they change.
    Reject {
        /// The memories.
        #[arg(required = true)]
        ids: Vec<String>,
        /// Why, kept with the decision.
        #[arg(long)]
        note: Option<String>,
    },
    /// Take decisions back: the candidates wait in the queue again.
    Reopen {
        /// The memories.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// What happened to a memory in curation: flagged, approved, withdrawn …
    Why {
        /// The memory.
        id: String,
    },
    /// Store the example facts in a fresh scope, build the set, train, evaluate, and print
    /// the report.
    Demo {
        #[command(flatten)]
        hyper: TrainHyper,
        #[command(flatten)]
        gate: GateArgs,
    },
}

/// Which memories to train on.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainSelect {
    /// These memories (repeatable); otherwise every fact and procedure the filters select.
    #[arg(long = "id")]
    pub ids: Vec<String>,
    /// The candidates a person approved (`strata train approve`).
    #[arg(long, conflicts_with_all = ["ids", "kinds", "tags"])]
    pub approved: bool,
    /// Only this type (semantic or procedural). Repeatable.
    #[arg(long = "type", value_enum)]
    pub kinds: Vec<KindArg>,
    /// Only memories with this tag. Repeatable (all must match).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
}

/// Training settings.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainHyper {
    /// LoRA rank.
    #[arg(long, default_value_t = 8)]
    pub rank: usize,
    /// LoRA alpha (the update is scaled by alpha / rank).
    #[arg(long, default_value_t = 16.0)]
    pub alpha: f64,
    /// Dropout on the adapters' input.
    #[arg(long, default_value_t = 0.05)]
    pub dropout: f64,
    /// Adapted projections, comma-separated: q, k, v, o, gate, up, down.
    #[arg(long, default_value = "q,k,v,o", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Peak learning rate.
    #[arg(long, default_value_t = 1.5e-3)]
    pub lr: f64,
    /// Passes over the examples.
    #[arg(long, default_value_t = 3)]
    pub epochs: usize,
    /// Examples per micro-batch.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// Micro-batches per optimizer step (gradient accumulation).
    #[arg(long, default_value_t = 1)]
    pub accumulate: usize,
    /// Seed (adapter start, data order, dropout).
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// General questions answered by the base model mixed into training, with general prose
    /// (replay); 0 for none.
    #[arg(long, default_value_t = 16)]
    pub replay: usize,
}

/// The evaluation gate.
#[derive(Debug, Clone, clap::Args)]
pub struct GateArgs {
    /// The largest rise in general perplexity allowed, as a share (0.1 = 10%).
    #[arg(long, default_value_t = 0.10)]
    pub margin: f64,
    /// The least held-out fact recall with the adapter, as a share.
    #[arg(long, default_value_t = 0.5)]
    pub min_recall: f64,
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
    /// Who answers: on-device (the default, no key or network), openai, anthropic, ollama or
    /// openai-compatible.
    #[arg(long, default_value = "on-device")]
    pub provider: String,
    /// The model (default per provider: the on-device SmolLM2, gpt-4o-mini,
    /// claude-sonnet-4-5, llama3.2).
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

/// `strata bench …`
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// LoCoMo evidence retrieval: recall@1/5/10/20 per category and query latency.
    Locomo {
        /// A file in the LoCoMo layout (e.g. shared/bench/locomo/locomo-dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Only these configurations (the default one and the budget measurement always run).
        #[arg(long, value_delimiter = ',')]
        configs: Vec<String>,
    },
    /// The MCP server's recall tool timed by the official MCP Python SDK: round trips over
    /// stdio and HTTP, and four clients at once, on a store of --size memories.
    Mcp {
        /// A file in the LoCoMo layout (its turns fill the store, its questions are asked).
        #[arg(long)]
        data: PathBuf,
        /// Memories in the store.
        #[arg(long, default_value_t = 10_000)]
        size: usize,
        /// A Python with the `mcp` package (default: the one scripts/setup made).
        #[arg(long)]
        python: Option<PathBuf>,
    },
    /// Recall latency by store size: one person's store filled with a LoCoMo-layout file's
    /// turns (repeated in new sessions), every memory embedded, its questions asked warm.
    Recall {
        /// A file in the LoCoMo layout.
        #[arg(long)]
        data: PathBuf,
        /// Store sizes to measure.
        #[arg(long, value_delimiter = ',', default_value = "2760,100000")]
        sizes: Vec<usize>,
    },
    /// Token counting speed (o200k_base, cl100k_base) over a LoCoMo-layout file's turns, one by
    /// one and as one document; with --reference, the Python tiktoken package on the same texts
    /// in the same run.
    Tokens {
        /// A file in the LoCoMo layout.
        #[arg(long)]
        data: PathBuf,
        /// A Python with tiktoken installed, to run scripts/tokens_reference.py.
        #[arg(long)]
        reference: Option<PathBuf>,
        /// Where the .tiktoken rank files are (default: tiktoken-rs's own, in the cargo registry).
        #[arg(long)]
        ranks: Option<PathBuf>,
    },
    /// Answer quality from memory: an invented person's memories (seed document) imported
    /// into a fresh store, questions asked through `ask` with the on-device model (greedy,
    /// nothing recorded), judged right when the answer holds an accepted string or, for a
    /// question memory cannot answer, says it does not know. One run per budget.
    Answers {
        /// Memory budgets in tokens ("default": the model's own).
        #[arg(long, value_delimiter = ',', default_value = "default")]
        budget: Vec<String>,
        /// The folder with memories.json and questions.json (default: the shipped set).
        #[arg(long)]
        data: Option<PathBuf>,
        /// The most tokens per answer.
        #[arg(long, default_value_t = 64)]
        max_tokens: u32,
        /// The system prompt (default: the product's).
        #[arg(long)]
        system: Option<String>,
        /// How the prompt is laid out: product, memories_after_question, memories_in_system,
        /// no_preamble, instructed.
        #[arg(long, default_value = "product")]
        layout: String,
        /// A chat model GGUF file other than the default (llama architecture, ChatML template).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Only the first N questions.
        #[arg(long)]
        limit: Option<usize>,
        /// Add this many episodes of other people's conversations (the turns of --turns) to
        /// the store first: answers and their speed at a full store's size.
        #[arg(long, requires = "turns")]
        fill: Option<usize>,
        /// A LoCoMo-layout file whose turns fill the store (with --fill).
        #[arg(long)]
        turns: Option<PathBuf>,
        /// Also write the whole report (every answer) as JSON to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// With this LoRA adapter (a folder of PEFT files, e.g. from `bench answer-adapter`),
        /// merged into the weights at load.
        #[arg(long)]
        adapter: Option<PathBuf>,
    },
    /// Train an answering adapter: the on-device model taught, with Strata's LoRA engine, to
    /// answer from the memories in the product's prompts and to say "I don't know" where they
    /// do not say (a training set of invented households, each question with its answer)
    AnswerAdapter {
        /// The folder of households (default: the shipped training set).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Where the adapter is written (a folder of PEFT files).
        #[arg(long)]
        out: PathBuf,
        /// The memory budget of the prompts in tokens (default: the model's own).
        #[arg(long)]
        budget: Option<usize>,
        /// LoRA rank.
        #[arg(long, default_value_t = 8)]
        rank: usize,
        /// Peak learning rate.
        #[arg(long, default_value_t = 1e-3)]
        lr: f64,
        /// Passes over the examples.
        #[arg(long, default_value_t = 2)]
        epochs: usize,
        /// Examples per optimizer step.
        #[arg(long, default_value_t = 8)]
        batch: usize,
    },
    /// Train an extraction adapter: the on-device model taught, with Strata's LoRA engine, to
    /// answer extraction's prompts (invented conversations with the facts to extract, and
    /// merge questions with the decisions to make)
    ExtractAdapter {
        /// The training set (default: the shipped one).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Where the adapter is written (a folder of PEFT files).
        #[arg(long)]
        out: PathBuf,
        /// LoRA rank.
        #[arg(long, default_value_t = 8)]
        rank: usize,
        /// Peak learning rate.
        #[arg(long, default_value_t = 1.5e-3)]
        lr: f64,
        /// Passes over the examples.
        #[arg(long, default_value_t = 1)]
        epochs: usize,
        /// Examples per optimizer step.
        #[arg(long, default_value_t = 4)]
        batch: usize,
    },
    /// Compaction on LoCoMo: each conversation grouped into concepts (timed), then the share
    /// of questions whose reference answer is in the prompt's memory block at 250–2,000 tokens,
    /// from the turns alone and with the concepts.
    Compaction {
        /// A file in the LoCoMo layout (e.g. shared/bench/locomo/locomo-dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Also time compaction of stores this large (its turns repeated; e.g. 10000,100000):
        /// a full pass, then an incremental one after 1,000 more memories.
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<usize>,
    },
    /// Analytics at scale: the dashboard's first view and each drill-down timed over stores of
    /// these sizes (ten events per memory, 10,000 recorded recalls), health timed once, and
    /// recall's p95 with and without its usage record.
    Analytics {
        /// A file in the LoCoMo layout (e.g. shared/bench/locomo/locomo-dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Store sizes.
        #[arg(long, value_delimiter = ',', default_value = "10000")]
        sizes: Vec<usize>,
        /// Keep the stores in this folder, and time those already there as they are (filling
        /// 100,000 memories takes minutes); none: a temporary folder.
        #[arg(long)]
        keep: Option<PathBuf>,
    },
    /// Training while the app is used: the 20 example facts approved in a store of this many
    /// memories, trained and evaluated as the app's Train button does (default settings and
    /// gate), with the search box's latency timed alone and while the run goes on.
    Training {
        /// A file in the LoCoMo layout (e.g. shared/bench/locomo/locomo-dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Memories in the store.
        #[arg(long, default_value_t = 20000)]
        size: usize,
    },
    /// Extraction's quality and cost: LoCoMo's sessions read into facts, compared with the
    /// annotated observations (coverage, precision), and the update set (a fact changes: is it
    /// brought up to date with its old value kept?).
    Extract {
        /// A file in the LoCoMo layout (e.g. shared/bench/locomo/locomo-dev.json); none: skip
        /// LoCoMo.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Sessions read per conversation, from the first.
        #[arg(long, default_value_t = 3)]
        sessions: usize,
        /// The update set (default: the shipped one); `none` skips it.
        #[arg(long)]
        updates: Option<String>,
        /// Only the first N update cases.
        #[arg(long)]
        cases: Option<usize>,
        /// Write each extracted fact with its best-matching observation here (to check the
        /// matching by hand).
        #[arg(long)]
        samples: Option<PathBuf>,
        /// With this LoRA adapter for the on-device model (a folder of PEFT files, e.g. from
        /// `bench extract-adapter`), merged into the weights at load.
        #[arg(long)]
        adapter: Option<PathBuf>,
        /// Instead of extracting, write LoCoMo's annotated observations as the facts beside
        /// the turns and ask the questions about those sessions (the most facts can help
        /// retrieval); loads no chat model and skips the update set.
        #[arg(long, requires = "data")]
        reference_facts: bool,
        #[command(flatten)]
        provider: ProviderArgs,
    },
    /// The on-device chat model's speed: load time, prompt and generation tokens/s, time to
    /// first token, memory.
    Chat {
        /// Tokens to generate per prompt.
        #[arg(long, default_value_t = 64)]
        tokens: usize,
        /// With this LoRA adapter (a folder of PEFT files, e.g. strata.adapters/ad_…), merged
        /// into the weights at load.
        #[arg(long)]
        adapter: Option<PathBuf>,
        /// Apply the adapter beside the weights instead (switchable without a reload).
        #[arg(long, requires = "adapter")]
        unmerged: bool,
    },
    /// Embedding speed: sentences/s at batch 1/16/64 and single-query latency, on the turns
    /// and questions of a LoCoMo-layout file; with --reference, sentence-transformers (or, with
    /// --onnx, ONNX Runtime) on the same texts in the same run, and how closely its vectors
    /// agree with ours.
    Embed {
        /// A file in the LoCoMo layout.
        #[arg(long)]
        data: PathBuf,
        /// How many turns to embed per batch size.
        #[arg(long, default_value_t = 1000)]
        sentences: usize,
        /// A Python with sentence-transformers (or, for --onnx, onnxruntime and tokenizers)
        /// installed, to run scripts/embed_reference.py.
        #[arg(long)]
        reference: Option<PathBuf>,
        /// An ONNX export of the model to run on ONNX Runtime as a reference, instead of
        /// sentence-transformers; repeat for several, and add --sentence-transformers to run
        /// that as well.
        #[arg(long, requires = "reference")]
        onnx: Vec<PathBuf>,
        /// With --onnx, run sentence-transformers too.
        #[arg(long, requires = "onnx")]
        sentence_transformers: bool,
    },
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
