//! The datasets' tools (the seed's `DatasetManager` over MCP): list a person's datasets, run a
//! read-only SELECT over a table, search documents and rows with where each passage came from.
//! Scoped to the caller's user like memories; loading files stays with the person (the app or
//! `strata datasets load`), never a client.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use strata_core::datasets::SqlLimits;

use crate::StrataMcp;

/// The most rows `query_dataset` returns.
const MAX_ROWS: usize = 500;

/// Arguments of `query_dataset`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryDatasetArgs {
    /// The table's name, as `list_datasets` gives it.
    pub dataset: String,
    /// One read-only SELECT that calls the table by that name, e.g.
    /// `SELECT category, sum(amount) FROM expenses GROUP BY category`.
    pub sql: String,
    /// The most rows to return (default 100, at most 500).
    #[serde(default)]
    pub max_rows: Option<usize>,
}

/// Arguments of `search_datasets`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchDatasetsArgs {
    /// What to look for, in words.
    pub query: String,
    /// Only these datasets (default: all).
    #[serde(default)]
    pub datasets: Vec<String>,
    /// The most passages (default 5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[tool_router(router = dataset_tools, vis = "pub(crate)")]
impl StrataMcp {
    #[tool(
        title = "List Datasets",
        description = "The person's datasets: tables (from CSV, JSON or spreadsheets: columns with their types, \
        row counts) and documents (from Markdown, text, HTML or PDF: pages and headings). Query a table with \
        query_dataset; search documents and rows with search_datasets.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_datasets(&self, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, |e| e.datasets()).await;
        self.answer(r.map(|datasets| serde_json::json!({ "datasets": datasets })))
    }

    #[tool(
        title = "Query Dataset",
        description = "Run one read-only SELECT over a table dataset, which the statement calls by its name. \
        Writes, other tables and the schema are refused; a statement stops after 5 seconds. Returns the \
        columns, the rows and whether more rows were left out.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn query_dataset(
        &self,
        Parameters(args): Parameters<QueryDatasetArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let limits = SqlLimits { rows: args.max_rows.unwrap_or(100).clamp(1, MAX_ROWS), ..SqlLimits::default() };
        let r = self.run(&ctx, move |e| e.query_dataset(&args.dataset, &args.sql, limits)).await;
        self.answer(r)
    }

    #[tool(
        title = "Search Datasets",
        description = "Find the passages of documents and the rows of tables that best match a question, by \
        keyword and by meaning. Each result names its dataset, file and place (page, heading and lines, or \
        row): cite it when you use it.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_datasets(
        &self,
        Parameters(args): Parameters<SearchDatasetsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let limit = args.limit.unwrap_or(5).clamp(1, 20);
        let r = self.run(&ctx, move |e| e.search_datasets(&args.datasets, &args.query, limit)).await;
        self.answer(r.map(|hits| {
            let results: Vec<serde_json::Value> = hits
                .into_iter()
                .map(|h| {
                    serde_json::json!({
                        "dataset": h.dataset,
                        "file": h.source,
                        "place": h.place.describe(),
                        "page": h.place.page,
                        "heading": h.place.heading,
                        "lines": [h.place.lines.0, h.place.lines.1],
                        "row": h.place.row,
                        "text": h.text,
                    })
                })
                .collect();
            serde_json::json!({ "results": results })
        }))
    }
}
