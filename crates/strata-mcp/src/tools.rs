//! Strata's own tools: remember, recall, get, update, tag, forget, list, build_context and
//! expand_concept.
//! Descriptions are written for the model that calls them; every result is structured JSON,
//! bounded in size.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use strata_api::{AddRequest, ApiError, ApiResult, ContextParams, Target, UpdateRequest};
use strata_core::{
    Concept, Content, Episode, EpisodeBody, FactValue, Facts, Filter, MemoryKind, Message, Procedure, Tier,
};

use crate::StrataMcp;

/// Recall results at most.
pub const MAX_RECALL: usize = 50;
/// List page size at most.
pub const MAX_PAGE: usize = 100;
/// Members `expand_concept` returns unless asked for fewer or more.
const EXPANDED_MEMBERS: usize = 20;

/// A memory type.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Facts about one thing (a person, a pet, a place, a preference), under a key.
    Semantic,
    /// Something that happened or was said, at a time.
    Episodic,
    /// How to do something: ordered steps.
    Procedural,
}

impl From<Kind> for MemoryKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Semantic => MemoryKind::Semantic,
            Kind::Episodic => MemoryKind::Episodic,
            Kind::Procedural => MemoryKind::Procedural,
        }
    }
}

/// A memory tier.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TierName {
    /// Working memory of the current session.
    Short,
    /// Recent, not yet consolidated.
    Medium,
    /// Persistent.
    Long,
}

impl From<TierName> for Tier {
    fn from(t: TierName) -> Self {
        match t {
            TierName::Short => Tier::Short,
            TierName::Medium => Tier::Medium,
            TierName::Long => Tier::Long,
        }
    }
}

/// Arguments of `remember`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    /// semantic: facts about one thing (give `key` and `facts`); episodic: something that
    /// happened or was said (give `text`, optionally `speaker` and `occurred_at`); procedural:
    /// how to do something (give `name` and `steps`).
    #[serde(rename = "type")]
    pub kind: Kind,
    /// semantic: what the facts are about, e.g. "alice" or "favourite_tea". One memory per key:
    /// to add facts to an existing key, use `update`.
    pub key: Option<String>,
    /// semantic: the facts as fields, e.g. {"job": "nurse", "birthday": "1990-05-02"}.
    pub facts: Option<serde_json::Map<String, serde_json::Value>>,
    /// episodic: what happened or was said.
    pub text: Option<String>,
    /// episodic: who said it (default "user").
    pub speaker: Option<String>,
    /// episodic: when it happened (RFC 3339 or YYYY-MM-DD; default now).
    pub occurred_at: Option<String>,
    /// procedural: the procedure's name, e.g. "deploy the blog".
    pub name: Option<String>,
    /// procedural: the steps, in order.
    pub steps: Option<Vec<String>>,
    /// procedural: when the procedure applies.
    pub context: Option<String>,
    /// Tags, e.g. ["family", "health"].
    #[serde(default)]
    pub tags: Vec<String>,
    /// How much it matters, 0 to 1 (default 0.5).
    pub importance: Option<f64>,
    /// Starting tier (default by type).
    pub tier: Option<TierName>,
    /// Only this client (agent) may see it. Default: shared with all the user's AI tools.
    #[serde(default)]
    pub private: bool,
    /// The conversation or session it belongs to.
    pub session_id: Option<String>,
}

/// Which memories: every field narrows.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    /// Only these types.
    #[serde(default)]
    pub types: Vec<Kind>,
    /// Only memories with all of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only these tiers.
    #[serde(default)]
    pub tiers: Vec<TierName>,
    /// Only memories that occurred at or after this time (RFC 3339 or YYYY-MM-DD).
    pub since: Option<String>,
    /// Only memories that occurred before this time.
    pub until: Option<String>,
    /// Only this session's.
    pub session_id: Option<String>,
}

impl FilterArgs {
    fn filter(self) -> ApiResult<Filter> {
        let time = |s: Option<String>| s.map(|t| strata_core::time::parse_time(&t)).transpose();
        Ok(Filter {
            kinds: self.types.into_iter().map(Into::into).collect(),
            tags: self.tags,
            tiers: self.tiers.into_iter().map(Into::into).collect(),
            since: time(self.since)?,
            until: time(self.until)?,
            session_id: self.session_id,
            ..Default::default()
        })
    }
}

/// Arguments of `recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What to look for, in plain words (a question works best). Time words narrow it:
    /// "last week", "in May 2023".
    pub query: String,
    /// How many results (default 10, at most 50).
    pub limit: Option<usize>,
    /// Which memories.
    #[serde(default)]
    pub filter: FilterArgs,
}

/// Names one memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// The memory's id, or a concept key / procedure name.
    pub id: String,
    /// Read it as it was at this time (RFC 3339), from its history.
    pub as_of: Option<String>,
}

/// Arguments of `expand_concept`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpandArgs {
    /// The concept's key (`concept/…`, or the part after `concept/`) or id, as a prompt, a
    /// recall result or the `strata://concept/{key}` resources name it.
    pub key: String,
    /// How many members, earliest first (default 20, at most 100).
    pub limit: Option<usize>,
}

/// Arguments of `update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The memory's id, or a concept key / procedure name.
    pub id: String,
    /// semantic: facts to add or change.
    pub set_facts: Option<serde_json::Map<String, serde_json::Value>>,
    /// semantic: facts to remove, by name.
    #[serde(default)]
    pub unset_facts: Vec<String>,
    /// episodic: the new text (of an utterance, or an exchange's response).
    pub text: Option<String>,
    /// procedural: the new steps, replacing the old ones.
    pub steps: Option<Vec<String>>,
    /// procedural: the new context.
    pub context: Option<String>,
    /// New importance, 0 to 1.
    pub importance: Option<f64>,
    /// Fail (with a conflict) unless the memory is still at this version.
    pub expected_version: Option<u64>,
}

/// Arguments of `tag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagArgs {
    /// The memory's id, or a concept key / procedure name.
    pub id: String,
    /// Tags to add.
    #[serde(default)]
    pub add: Vec<String>,
    /// Tags to remove.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// Arguments of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// The memory's id, or a concept key / procedure name.
    pub id: String,
    /// Must be true: forgetting erases the content everywhere, history included, for good.
    #[serde(default)]
    pub confirm: bool,
}

/// Arguments of `list`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Page size (default 20, at most 100).
    pub limit: Option<usize>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Which memories.
    #[serde(default)]
    pub filter: FilterArgs,
}

/// A message of the conversation so far.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    /// user or assistant.
    pub role: Speaker,
    /// What was said.
    pub content: String,
}

/// Who said a message.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// Arguments of `build_context`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildContextArgs {
    /// The model the prompt is for, e.g. "gpt-4o", "claude-sonnet-4-5", "llama3.1:8b": its
    /// tokenizer counts the budget.
    pub model: String,
    /// The user's new message (memories are recalled for it).
    pub message: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub history: Vec<HistoryMessage>,
    /// Token budget for the whole prompt (default: what the model allows, capped by Strata's
    /// settings).
    pub budget: Option<usize>,
    /// The user's datasets (names from `list_datasets`) whose passages and rows may go in
    /// beside memories, each labelled with its file and place.
    #[serde(default)]
    pub datasets: Vec<String>,
}

fn facts_of(map: serde_json::Map<String, serde_json::Value>) -> ApiResult<Facts> {
    map.into_iter()
        .map(|(k, v)| {
            FactValue::try_from(v).map(|v| (k.clone(), v)).map_err(|e| ApiError::invalid(format!("fact '{k}': {e}")))
        })
        .collect()
}

fn missing(kind: &str, what: &str) -> ApiError {
    ApiError::invalid(format!("a {kind} memory needs `{what}`"))
}

impl RememberArgs {
    fn request(self, now: chrono::DateTime<chrono::Utc>) -> ApiResult<AddRequest> {
        let content = match self.kind {
            Kind::Semantic => {
                let key = self.key.ok_or_else(|| missing("semantic", "key"))?;
                let facts = facts_of(self.facts.ok_or_else(|| missing("semantic", "facts"))?)?;
                Content::Semantic(Concept { key, facts })
            }
            Kind::Episodic => {
                let text = self.text.ok_or_else(|| missing("episodic", "text"))?;
                let occurred_at = match self.occurred_at {
                    Some(t) => strata_core::time::parse_time(&t)?,
                    None => now,
                };
                let speaker = self.speaker.unwrap_or_else(|| "user".to_string());
                let body = EpisodeBody::Utterance { speaker, text };
                Content::Episodic(Episode { occurred_at, body, concepts: vec![], extra: Default::default() })
            }
            Kind::Procedural => {
                let name = self.name.ok_or_else(|| missing("procedural", "name"))?;
                let steps = self.steps.ok_or_else(|| missing("procedural", "steps"))?;
                Content::Procedural(Procedure { name, steps, context: self.context })
            }
        };
        Ok(AddRequest {
            content,
            tags: self.tags,
            importance: self.importance,
            tier: self.tier.map(Into::into),
            session_id: self.session_id,
            private: self.private,
        })
    }
}

#[tool_router(router = native_tools, vis = "pub(crate)")]
impl StrataMcp {
    #[tool(
        description = "Save something to the user's long-term memory, shared with their other AI tools. \
        type semantic = facts about one thing under a key (a person, pet, place, preference); \
        episodic = something that happened or was said; procedural = how to do something, as steps. \
        Recall first: if the key exists, use update instead. Returns the stored memory with its id.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn remember(
        &self,
        Parameters(args): Parameters<RememberArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let result = self
            .run(&ctx, move |e| {
                let now = e.now();
                e.add(args.request(now)?)
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Search the user's memory by meaning and keywords. Use it before answering anything \
        that may depend on what you were told before. Each result has the memory and `why`: its score \
        and the parts of it (keyword rank, similarity, recency, importance…). Optional filter by type, \
        tags, tier, time and session.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let limit = args.limit.unwrap_or(10).clamp(1, MAX_RECALL);
        let filter = args.filter.filter();
        let query = args.query;
        if query.trim().is_empty() {
            return crate::bad_arguments("`query` must not be empty");
        }
        let result = self.run(&ctx, move |e| e.recall(&query, filter?, limit)).await;
        let result = result.map(|hits| {
            let (results, truncated) = self.bounded(hits);
            serde_json::json!({"results": results, "truncated": truncated})
        });
        self.answer(result)
    }

    #[tool(
        description = "Read one memory by its id (or a concept key / procedure name), optionally as it was \
        at a past time.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get(
        &self,
        Parameters(args): Parameters<GetArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let result = self
            .run(&ctx, move |e| {
                let as_of = args.as_of.map(|t| strata_core::time::parse_time(&t)).transpose()?;
                e.get(&Target::new(args.id), as_of.map(strata_core::AsOf::Time))
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Change a memory: add or change facts (semantic), replace the text (episodic) or the \
        steps (procedural), or set its importance. The change is recorded in the memory's history.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn update(
        &self,
        Parameters(args): Parameters<UpdateArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let result = self
            .run(&ctx, move |e| {
                let req = UpdateRequest {
                    set_facts: facts_of(args.set_facts.unwrap_or_default())?.into_iter().collect(),
                    unset_facts: args.unset_facts,
                    text: args.text,
                    query: None,
                    steps: args.steps,
                    context: args.context,
                    importance: args.importance,
                    expected_version: args.expected_version,
                };
                e.update(&Target::new(args.id), req)
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Add or remove tags on a memory.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn tag(
        &self,
        Parameters(args): Parameters<TagArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.add.is_empty() && args.remove.is_empty() {
            return crate::bad_arguments("give tags to `add` or to `remove`");
        }
        let result = self
            .run(&ctx, move |e| {
                let target = Target::new(args.id);
                let mut m = None;
                if !args.add.is_empty() {
                    m = Some(e.tag(&target, &args.add)?);
                }
                if !args.remove.is_empty() {
                    m = Some(e.untag(&target, &args.remove)?);
                }
                Ok(m)
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Erase a memory for good: its content leaves the store, the search index and its \
        history. Only when the user asks to forget something. Needs confirm: true.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn forget(
        &self,
        Parameters(args): Parameters<ForgetArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if !args.confirm {
            return crate::bad_arguments(
                "forgetting is permanent: call again with confirm: true once the user has agreed",
            );
        }
        let result = self.run(&ctx, move |e| e.forget(&Target::new(args.id))).await;
        self.answer(result)
    }

    #[tool(
        description = "List memories, newest first, a page at a time (pass `next_cursor` back as `cursor` \
        for the next page). Optional filter by type, tags, tier, time and session.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list(
        &self,
        Parameters(args): Parameters<ListArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let limit = args.limit.unwrap_or(20).clamp(1, MAX_PAGE);
        let max_bytes = self.settings().max_result_bytes;
        let result = self
            .run(&ctx, move |e| {
                let filter = args.filter.filter()?;
                let page = e.list(filter.clone(), limit, args.cursor.as_deref())?;
                let fit = crate::fitting(&page.items, max_bytes);
                if fit == page.items.len() {
                    return Ok(page);
                }
                // Too big for one result: a shorter page, whose cursor goes on from where it ends.
                e.list(filter, fit, args.cursor.as_deref())
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Build a prompt for a model with the user's relevant memories in it (and passages of \
        the datasets named, cited by file and place), within a token budget counted by that model's tokenizer. Returns the messages to send and a report: what went in, \
        what was left out and why, and the tokens used per section.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn build_context(
        &self,
        Parameters(args): Parameters<BuildContextArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let history = args
            .history
            .into_iter()
            .map(|m| match m.role {
                Speaker::User => Message::user(m.content),
                Speaker::Assistant => Message::assistant(m.content),
            })
            .collect();
        let params = ContextParams {
            model: args.model,
            message: args.message,
            system: args.system,
            history,
            history_summary: None,
            budget: args.budget,
            filter: Filter::default(),
            placement: None,
            concepts: None,
            without_past_answers: false,
            datasets: args.datasets,
        };
        let result = self.run(&ctx, move |e| e.build_context(params)).await;
        self.answer(result)
    }

    #[tool(
        description = "Open a concept: a group of related memories that Strata's compaction named and \
        summarized, which prompts and recall show in a line. Returns its name, summary and its members \
        in full, earliest first, with `total` members and `truncated` when some were left out.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn expand_concept(
        &self,
        Parameters(args): Parameters<ExpandArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let limit = args.limit.unwrap_or(EXPANDED_MEMBERS).clamp(1, MAX_PAGE);
        let result = self.run(&ctx, move |e| e.expand_concept(&args.key, limit)).await;
        let result = result.map(|mut x| {
            let (members, cut) = self.bounded(std::mem::take(&mut x.members));
            let truncated = cut || members.len() < x.total;
            x.members = members;
            serde_json::json!({"concept": x.concept, "members": x.members, "total": x.total, "truncated": truncated})
        });
        self.answer(result)
    }
}
