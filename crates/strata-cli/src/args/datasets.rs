//! `strata datasets …`: a person's files beside their memories — load, list, read, SQL,
//! search, forget.

use std::path::PathBuf;

use clap::Subcommand;

use super::ProviderArgs;

/// `strata datasets …`
#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// Every dataset: its name, kind, size and the file it came from.
    List,
    /// Load files: tables from CSV, TSV, JSON, JSON lines and spreadsheets (.xlsx, .xls,
    /// .ods; one table per sheet), documents from Markdown, text, HTML and PDF. Loading a
    /// changed file again replaces its dataset; the same file again changes nothing. Then its
    /// passages are embedded for search by meaning (Ctrl-C stops; `strata datasets embed`
    /// goes on).
    Load {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The dataset's name (one file only; default: the file's name, as SQL can use it).
        #[arg(long)]
        name: Option<String>,
        /// Do not embed the passages now (search finds them by keyword until they are).
        #[arg(long)]
        no_embed: bool,
    },
    /// The text resources one of your MCP servers offers (`strata mcp-servers`), to load.
    Mcp {
        /// The server's name.
        server: String,
    },
    /// Load resources of one of your MCP servers as datasets (all its text resources when
    /// none are named): Markdown and text become documents, CSV and JSON tables, each
    /// recording the server and address it came from.
    LoadMcp {
        /// The server's name.
        server: String,
        /// The resources' addresses (`strata datasets mcp SERVER` lists them).
        uris: Vec<String>,
        /// The dataset's name (one resource only; default: the resource's name).
        #[arg(long)]
        name: Option<String>,
        /// Do not embed the passages now.
        #[arg(long)]
        no_embed: bool,
    },
    /// A dataset: its columns or headings, then a page of its rows or passages.
    Show {
        /// Its name.
        name: String,
        /// From which row or passage (1 = the first).
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Run one read-only SELECT over a table, which the statement calls by its name:
    /// `strata datasets sql expenses "SELECT category, sum(amount) FROM expenses GROUP BY 1"`.
    Sql {
        /// The table's name.
        name: String,
        /// The statement.
        sql: String,
        /// The most rows shown.
        #[arg(long, default_value_t = 1000)]
        rows: usize,
        /// The longest it may run, in seconds.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
    },
    /// Ask a question in words over a table: the model (on-device by default) writes the SQL,
    /// Strata runs it read-only, and shows the statement with its result.
    Ask {
        /// The table's name.
        name: String,
        /// The question.
        question: String,
        #[command(flatten)]
        provider: ProviderArgs,
    },
    /// Search the passages and rows of your datasets by keyword and meaning, each result with
    /// where it came from (file, page or heading, lines or row).
    Search {
        /// What to look for.
        query: String,
        /// Only in these datasets (repeatable; default: all).
        #[arg(long = "in")]
        only: Vec<String>,
        /// The most results.
        #[arg(long, default_value_t = 5)]
        limit: usize,
    },
    /// Write a table as CSV on standard output (`> file.csv`); a cell a spreadsheet would run
    /// as a formula is written with a leading `'`, so it is shown, never run.
    Export {
        /// The table's name.
        name: String,
    },
    /// Embed the passages still without a vector (after `load --no-embed` or a stopped load).
    Embed,
    /// Forget a dataset everywhere: its rows, passages, words and vectors.
    Forget {
        /// Its name.
        name: String,
    },
}
