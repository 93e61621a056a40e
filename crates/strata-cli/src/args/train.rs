//! `strata train …`: crystallization's arguments (what to teach, how, and the gate).

use std::path::PathBuf;

use clap::Subcommand;

use super::{CandidateStatusArg, KindArg};

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
    /// Make an adapter the one the on-device model uses (instead of those in use), or with
    /// `--alongside` one more in use: each question then chooses the adapter whose trained
    /// questions it is closest to, or none.
    Activate {
        /// The adapter's id.
        id: String,
        /// Keep the adapters in use and add this one beside them (one adapter per topic).
        #[arg(long)]
        alongside: bool,
        /// Activate it even though it failed or skipped its evaluation.
        #[arg(long)]
        force: bool,
    },
    /// Retire an adapter in use and restore the ones it replaced (or none).
    Rollback {
        /// The adapter to roll back (needed when several are in use).
        id: Option<String>,
    },
    /// Retire an adapter that is not in use: it is never activated again (its files stay).
    Retire {
        /// The adapter's id.
        id: String,
    },
    /// Check an adapter (the one in use by default) against the memories as they are now: its
    /// held-out questions asked again, facts changed or forgotten since training counted. The
    /// check is kept with it (`strata train show` lists them).
    Check {
        /// The adapter's id (default: the one in use, when only one is).
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
    /// The training runs, newest first: how far each came, how it ended, and which were
    /// interrupted (Strata closed or was killed during them) and can be resumed.
    Runs {
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Resume a stopped or interrupted run from its checkpoint, with its set and settings as
    /// they were.
    Resume {
        /// The run's id (`strata train runs`).
        run: String,
    },
    /// The approved memories' training examples as they will be trained (a person's edits
    /// included), with what is wrong with them; or, with a memory, set or reset its examples.
    Examples {
        /// The memory whose examples to set or reset (its id or key).
        memory: Option<String>,
        /// Its examples from this file: a JSON list of {question, answer, held_out, expected,
        /// subject, attribute, kind}, as `strata train examples --json` prints them.
        #[arg(long, requires = "memory", conflicts_with = "reset")]
        set: Option<PathBuf>,
        /// Back to the examples made from the memory.
        #[arg(long, requires = "memory")]
        reset: bool,
    },
    /// Store the example facts in a fresh scope, build the set, train, evaluate, and print
    /// the report.
    Demo {
        #[command(flatten)]
        hyper: TrainHyper,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// The training schedule: shown, changed (`--when`, `--at`, `--promote` …), its record
    /// (`--history`), one look now (`--now`), or a curator's answer to the adapter waiting
    /// (`--approve` / `--decline`).
    Schedule(ScheduleArgs),
}

/// `strata train schedule`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScheduleArgs {
    /// When it runs: off, nightly or idle.
    #[arg(long)]
    pub when: Option<String>,
    /// The local time of a nightly run (HH:MM).
    #[arg(long)]
    pub at: Option<String>,
    /// Minutes without use before an idle run.
    #[arg(long)]
    pub idle_minutes: Option<u32>,
    /// Approved facts not yet taught needed before it trains.
    #[arg(long)]
    pub min_facts: Option<u32>,
    /// A new adapter that does better: ask (wait for a yes) or auto (use it at once).
    #[arg(long)]
    pub promote: Option<String>,
    /// What it did, newest first.
    #[arg(long)]
    pub history: bool,
    /// Entries of the history shown.
    #[arg(long, default_value_t = 30)]
    pub limit: usize,
    /// Look now, as the schedule would when due (whatever the schedule says).
    #[arg(long)]
    pub now: bool,
    /// Put the adapter waiting for approval in use.
    #[arg(long, conflicts_with = "decline")]
    pub approve: Option<String>,
    /// Leave the adapter waiting for approval out of use.
    #[arg(long)]
    pub decline: Option<String>,
    #[command(flatten)]
    pub hyper: TrainHyper,
    #[command(flatten)]
    pub gate: GateArgs,
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
    /// With --approved: only those of this concept (its key, id or name), for an adapter of
    /// one topic to use beside others (`strata train activate --alongside`).
    #[arg(long, requires = "approved")]
    pub concept: Option<String>,
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
    /// The on-device model the adapter is for (`strata models` lists them; default: the one
    /// that answers).
    #[arg(long)]
    pub model: Option<String>,
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
