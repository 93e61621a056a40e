//! `strata agents …`: a person's agents — define, change, run, read their runs, forget.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `strata agents …`
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Every agent: its name, model, tools and the agents it may hand a task to.
    List,
    /// Define an agent.
    Add {
        /// Its name (letters, digits, spaces, '-' or '_'); its handoff tool is named after it.
        name: String,
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Change an agent: only what is given changes; each change is a new version.
    Edit {
        /// The agent.
        name: String,
        #[command(flatten)]
        spec: SpecArgs,
        /// Change it only if it is still at this version (someone else may have changed it).
        #[arg(long)]
        expect_version: Option<u64>,
    },
    /// One agent's definition.
    Show {
        /// The agent.
        name: String,
    },
    /// Every version of an agent's definition.
    History {
        /// The agent.
        name: String,
    },
    /// Erase an agent, every version of it, and every run it took part in. Its own memories
    /// stay (forget them like any others).
    Forget {
        /// The agent.
        name: String,
        /// Do not ask.
        #[arg(long)]
        yes: bool,
    },
    /// Give an agent a task: it answers, uses its tools and may hand the task to another
    /// agent; each step shows as it happens and is recorded (`strata agents runs`).
    Run {
        /// The agent.
        name: String,
        /// The task, in words.
        #[arg(required = true)]
        task: Vec<String>,
        /// The most model calls the run may make, all agents together.
        #[arg(long, default_value_t = strata_agents::DEFAULT_MAX_STEPS)]
        max_steps: usize,
        /// Allow every call of an MCP server's tool whose policy is `ask`, without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Runs, the newest first; with an id, that run's steps.
    Runs {
        /// A run's id: its steps.
        id: Option<String>,
        /// Only the runs given to this agent.
        #[arg(long)]
        agent: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Erase one run and its steps.
    ForgetRun {
        /// The run's id.
        id: String,
    },
}

/// How an agent may use the memories all of the person's agents share.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SharedArg {
    /// Only its own memories.
    None,
    /// Reads the shared ones, writes its own.
    Read,
    /// Reads and writes the shared ones too.
    Write,
}

/// An agent's definition on the command line.
#[derive(Debug, Args)]
pub struct SpecArgs {
    /// What it is for, in a sentence (other agents read it to decide on a handoff).
    #[arg(long)]
    pub description: Option<String>,
    /// Its instructions.
    #[arg(long, conflicts_with = "instructions_file")]
    pub instructions: Option<String>,
    /// Its instructions, from a text file.
    #[arg(long)]
    pub instructions_file: Option<PathBuf>,
    /// Its model: on-device (the chosen one), a pinned on-device model's name
    /// (`strata models`), or PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:…, ollama:…).
    #[arg(long)]
    pub model: Option<String>,
    /// A tool it may use: recall, remember, update, forget (repeat it; `--tool none` for none).
    #[arg(long = "tool")]
    pub tools: Vec<String>,
    /// An agent it may hand a task to (repeat it; `--handoff none` for none).
    #[arg(long = "handoff")]
    pub handoffs: Vec<String>,
    /// How it may use the shared memories.
    #[arg(long, value_enum)]
    pub shared: Option<SharedArg>,
}
