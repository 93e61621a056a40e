//! `strata bench …`: the benchmarks' arguments.

use std::path::PathBuf;

use clap::Subcommand;

use super::ProviderArgs;

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
        /// Run on a PostgreSQL server instead of SQLite files: its URL (a user that may create
        /// databases); each conversation gets a database `strata_locomo_<id>`, made afresh.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
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
        /// Run on a PostgreSQL server instead of SQLite files: its URL (a user that may create
        /// databases); each size gets a database `strata_scale_<size>`, made afresh, and the
        /// HNSW index is measured against exact search.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// With --postgres: the HNSW `ef_search` values to measure the index at (default: the
        /// one shipped).
        #[arg(long, value_delimiter = ',')]
        ef_search: Vec<u32>,
        /// With --postgres: measure a store an earlier run filled (of the same size) again
        /// instead of filling it afresh; one that holds another count is refused, never dropped.
        #[arg(long)]
        reuse: bool,
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
    /// Agents judged on tasks (`data/agents/tasks.json`): each run by the product's loop on a
    /// fresh copy of the answers set's memories, one model for every agent; success by kind of
    /// task (a tool, a handoff) and the model calls taken.
    Agents {
        /// The tasks (default: the shipped set, `crates/strata-bench/data/agents/tasks.json`).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// The model every agent uses: on-device (the chosen one), a pinned on-device model's
        /// name, or PROVIDER:MODEL.
        #[arg(long)]
        model: Option<String>,
        /// Also write the whole report (every task's answer) as JSON to this file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        /// The on-device model: a pinned name (`strata models`) or a GGUF file (llama or
        /// qwen2 architecture, ChatML template); default: the chosen one.
        #[arg(long)]
        model: Option<String>,
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
        /// Have this on-device model (a name from `strata models`, or a GGUF file) write the
        /// concepts' summaries, each sentence checked against the memories it cites.
        #[arg(long)]
        writer: Option<String>,
        /// Only the first N conversations.
        #[arg(long)]
        conversations: Option<usize>,
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
    /// Datasets at scale (inputs from scripts/datasets_bench_data.py): a large CSV kept until
    /// SQL can query it, then SQL latency; a table's first rows embedded and searched; a long
    /// PDF kept and embedded; a ChatGPT export imported.
    Datasets {
        /// A large CSV (expenses-1m.csv).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// A long PDF (handbook-500.pdf).
        #[arg(long)]
        pdf: Option<PathBuf>,
        /// A ChatGPT export (chatgpt-2000.json).
        #[arg(long)]
        chatgpt: Option<PathBuf>,
        /// How many of the CSV's rows to embed and search (0: no search).
        #[arg(long, default_value_t = 100_000)]
        search_rows: usize,
        /// Keep each part in a fresh database of this PostgreSQL server (postgres://USER:PW@HOST/DB,
        /// a user that may create databases; each part's is `strata_datasets_<part>`) instead
        /// of a SQLite file.
        #[arg(long)]
        postgres: Option<String>,
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
        /// The on-device model trained (default: the one that answers, as the app trains).
        #[arg(long)]
        model: Option<String>,
    },
    /// Several adapters, one chosen per question: an adapter trained per topic (twenty
    /// invented facts each), all in use, each held-out phrasing answered by the adapter its
    /// embedding chooses (or none); recall with 3 and 5 in use, questions about nothing
    /// trained, the threshold swept, what choosing adds to an answer.
    Adapters {
        /// Topics, one adapter each (at most 5).
        #[arg(long, default_value_t = 5)]
        topics: usize,
        /// The on-device model trained (default: the one that answers).
        #[arg(long)]
        model: Option<String>,
        /// Measure choosing only (the scores and the sweep), without training.
        #[arg(long)]
        choose_only: bool,
        /// Instead: one adapter on a curator-sized set of this many facts (the topics' and
        /// generated ones): time, peak memory, recall, perplexity.
        #[arg(long, conflicts_with = "choose_only")]
        curator: Option<usize>,
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
        /// The on-device model: a pinned name (`strata models`) or a GGUF file; default: the
        /// chosen one.
        #[arg(long)]
        model: Option<String>,
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
