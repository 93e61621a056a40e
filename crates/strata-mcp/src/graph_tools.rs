//! The reference MCP memory server's nine knowledge-graph tools, with its argument and result
//! shapes, over Strata's semantic memory ([`strata_api::graph`]): users switching from it keep
//! their prompts. Offered when [`crate::McpSettings::graph_tools`] is on.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use strata_api::graph::{Entity, ObservationAddition, ObservationDeletion, Relation};

use crate::StrataMcp;

/// The reference server's name for its graph resource, which Strata serves too.
pub const GRAPH_RESOURCE: &str = "memory://knowledge-graph";

/// Arguments of `create_entities`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateEntitiesArgs {
    /// The entities to create.
    pub entities: Vec<Entity>,
}

/// Arguments of `create_relations` and `delete_relations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelationsArgs {
    /// The relations.
    pub relations: Vec<Relation>,
}

/// Arguments of `add_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddObservationsArgs {
    /// For each entity, the observations to add.
    pub observations: Vec<ObservationAddition>,
}

/// Arguments of `delete_entities`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteEntitiesArgs {
    /// Names of the entities to delete.
    #[serde(rename = "entityNames")]
    pub entity_names: Vec<String>,
}

/// Arguments of `delete_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteObservationsArgs {
    /// For each entity, the observations to remove.
    pub deletions: Vec<ObservationDeletion>,
}

/// Arguments of `search_nodes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchNodesArgs {
    /// Text to find in entity names, types and observations (case-insensitive).
    pub query: String,
}

/// Arguments of `open_nodes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OpenNodesArgs {
    /// Names of the entities to read.
    pub names: Vec<String>,
}

fn done(message: &str) -> serde_json::Value {
    serde_json::json!({"success": true, "message": message})
}

#[tool_router(router = graph_tools, vis = "pub(crate)")]
impl StrataMcp {
    #[tool(
        title = "Create Entities",
        description = "Add entities (people, organizations, places, events…) to the knowledge graph, each \
        with a type and observations. Names already in the graph are skipped; the new ones are returned.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn create_entities(
        &self,
        Parameters(args): Parameters<CreateEntitiesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_create_entities(&args.entities)).await;
        self.answer(r.map(|entities| serde_json::json!({ "entities": entities })))
    }

    #[tool(
        title = "Create Relations",
        description = "Connect entities with directed relations written in active voice (\"works_at\", \
        \"is_married_to\"). Both entities must exist. Returns the relations that were new.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn create_relations(
        &self,
        Parameters(args): Parameters<RelationsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_create_relations(&args.relations)).await;
        self.answer(r.map(|relations| serde_json::json!({ "relations": relations })))
    }

    #[tool(
        title = "Add Observations",
        description = "Add observations (short facts) to entities that exist. Returns, per entity, the \
        observations that were not there yet.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn add_observations(
        &self,
        Parameters(args): Parameters<AddObservationsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_add_observations(&args.observations)).await;
        self.answer(r.map(|results| serde_json::json!({ "results": results })))
    }

    #[tool(
        title = "Delete Entities",
        description = "Remove entities and every relation to or from them. Their content is erased for good.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_entities(
        &self,
        Parameters(args): Parameters<DeleteEntitiesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_delete_entities(&args.entity_names)).await;
        self.answer(r.map(|_| done("Entities deleted successfully")))
    }

    #[tool(
        title = "Delete Observations",
        description = "Remove particular observations from entities.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_observations(
        &self,
        Parameters(args): Parameters<DeleteObservationsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_delete_observations(&args.deletions)).await;
        self.answer(r.map(|_| done("Observations deleted successfully")))
    }

    #[tool(
        title = "Delete Relations",
        description = "Remove relations between entities.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_relations(
        &self,
        Parameters(args): Parameters<RelationsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_delete_relations(&args.relations)).await;
        self.answer(r.map(|_| done("Relations deleted successfully")))
    }

    #[tool(
        title = "Read Graph",
        description = "Read the whole knowledge graph: every entity and relation (the first 1,000 entities; \
        `truncated` says when there were more — then search or open by name).",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn read_graph(&self, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, |e| e.graph_read()).await;
        self.answer(r)
    }

    #[tool(
        title = "Search Nodes",
        description = "Find entities whose name, type or an observation contains the query (case-insensitive), \
        with the relations that touch them.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_nodes(
        &self,
        Parameters(args): Parameters<SearchNodesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_search(&args.query)).await;
        self.answer(r)
    }

    #[tool(
        title = "Open Nodes",
        description = "Read entities by name, with the relations that touch them.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn open_nodes(
        &self,
        Parameters(args): Parameters<OpenNodesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, move |e| e.graph_open(&args.names)).await;
        self.answer(r)
    }
}
