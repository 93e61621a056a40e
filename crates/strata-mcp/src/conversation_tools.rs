//! Conversations handed over by an AI tool, and the facts extracted from them: the tool
//! records the turns as episodes and starts extraction in the background (when the server has
//! an [`strata_api::Extractor`]); the review tools list what extraction proposed and accept or reject it.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use strata_api::{AddRequest, ApiError, Engine, ExtractParams, Review};
use strata_core::{Content, Episode, EpisodeBody};

use crate::StrataMcp;

/// The most turns one conversation may hand over.
pub const MAX_TURNS: usize = 500;

/// One turn of a conversation.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TurnArg {
    /// Who spoke: `user`, `assistant`, or a person's name.
    pub role: String,
    /// What they said.
    pub content: String,
}

/// Arguments of `remember_conversation`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberConversationArgs {
    /// The conversation's turns, oldest first (at most 500).
    pub turns: Vec<TurnArg>,
    /// A name that keeps this conversation's turns together across calls (default: a new one).
    #[serde(default)]
    pub session_id: Option<String>,
}

/// Arguments of `review_facts`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewArgs {
    /// Proposals to accept (ids from `proposed_facts`).
    #[serde(default)]
    pub accept: Vec<String>,
    /// Proposals to reject.
    #[serde(default)]
    pub reject: Vec<String>,
}

/// Arguments of `read_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadMemoryArgs {
    /// The subject: a person's or thing's name, or "user".
    pub subject: String,
}

/// Arguments of `edit_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditMemoryArgs {
    /// The subject whose document to edit.
    pub subject: String,
    /// The edit.
    #[serde(flatten)]
    pub edit: strata_api::extract::LineEdit,
}

/// Records `turns` as episodes of `session`; returns their ids.
fn record(e: &mut Engine, session: &str, turns: Vec<TurnArg>) -> Result<Vec<String>, ApiError> {
    let now = e.now();
    let mut ids = Vec::new();
    for (i, t) in turns.into_iter().enumerate() {
        let episode = Episode {
            occurred_at: now + chrono::Duration::milliseconds(i as i64),
            body: EpisodeBody::Utterance { speaker: t.role.trim().to_string(), text: t.content },
            concepts: vec![],
            extra: Default::default(),
        };
        let req = AddRequest { session_id: Some(session.to_string()), ..AddRequest::new(Content::Episodic(episode)) };
        ids.push(e.add(req)?.id);
    }
    Ok(ids)
}

#[tool_router(router = conversation_tools, vis = "pub(crate)")]
impl StrataMcp {
    #[tool(
        description = "Hand over a conversation to remember: its turns are kept as they were said, and the \
        facts worth keeping long term (about the user and the people and things in their life) are \
        extracted from them in the background, updating what was known (old values stay in each fact's \
        history). Depending on the user's settings, extracted facts apply at once or wait for their \
        review (`proposed_facts`). Call it at the end of a conversation, or with the new turns since the \
        last call and the same session_id.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn remember_conversation(
        &self,
        Parameters(args): Parameters<RememberConversationArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.turns.is_empty() || args.turns.len() > MAX_TURNS {
            return crate::bad_arguments(format!("`turns` must hold 1 to {MAX_TURNS} turns"));
        }
        if args.turns.iter().any(|t| t.role.trim().is_empty() || t.content.trim().is_empty()) {
            return crate::bad_arguments("every turn needs a `role` and some `content`");
        }
        let extractor = self.settings().extractor.clone();
        let result = self
            .run(&ctx, move |e| {
                let session = match args.session_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) {
                    Some(s) => s,
                    None => format!("conversation-{}", e.now().format("%Y%m%dT%H%M%S%.3f")),
                };
                let ids = record(e, &session, args.turns)?;
                let extraction = match extractor {
                    Some(x) => {
                        let review = x.review;
                        let params = ExtractParams { session_id: Some(session.clone()), ..ExtractParams::default() };
                        e.extract_in_background(x, params)?;
                        match review {
                            Review::Apply => "started: facts will apply as they are found",
                            Review::Propose => "started: facts will wait for the user's review",
                        }
                    }
                    None => "off: the user's settings do not extract facts from conversations",
                };
                Ok(serde_json::json!({"session_id": session, "episodes": ids, "extraction": extraction}))
            })
            .await;
        self.answer(result)
    }

    #[tool(
        description = "Read what is known about one subject (a person, a pet, a project, or \"user\"): its \
        name, one-sentence description and facts, one per line (line 0 first), each with the values it \
        had before.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read_memory(
        &self,
        Parameters(args): Parameters<ReadMemoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let result = self.run(&ctx, move |e| e.document(&args.subject)).await;
        self.answer(result)
    }

    #[tool(
        description = "Edit a subject's document by lines, one fact per line. Omit start and end to append \
        (this also starts a new subject's document). Pass start only to replace from that line to the end; \
        start and end (inclusive) to replace a range; line 0 is the first fact. A replaced line updates its \
        fact (the old value stays in its history); a line removed is kept in history but no longer used. \
        At most 64 lines of 400 characters, none the document already says; the subject's name is one line. \
        Returns the document.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn edit_memory(
        &self,
        Parameters(args): Parameters<EditMemoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let result = self.run(&ctx, move |e| e.edit_memory(&args.subject, &args.edit)).await;
        self.answer(result)
    }

    #[tool(
        description = "The facts extracted from conversations that wait for the user's review: each with its \
        id, the change (add, update with the value it replaces), the subject, the fact and why. Proposed \
        facts are not recalled until accepted.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn proposed_facts(&self, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let result = self.run(&ctx, move |e| e.proposals()).await;
        let result = result.map(|ds| {
            let (proposals, truncated) = self.bounded(ds);
            serde_json::json!({"proposals": proposals, "truncated": truncated})
        });
        self.answer(result)
    }

    #[tool(
        description = "Accept or reject proposed facts (ids from `proposed_facts`) — only when the user asked \
        you to. Accepted facts are written and recalled from then on; rejected ones are dropped.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn review_facts(
        &self,
        Parameters(args): Parameters<ReviewArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.accept.is_empty() && args.reject.is_empty() {
            return crate::bad_arguments("name proposals to `accept` or `reject`");
        }
        let result = self
            .run(&ctx, move |e| {
                // Every id is checked before anything is written.
                let waiting: Vec<String> = e.proposals()?.into_iter().map(|d| d.id).collect();
                if let Some(id) =
                    args.accept.iter().chain(&args.reject).find(|id| !waiting.contains(&id.trim().to_string()))
                {
                    return Err(ApiError::new(
                        strata_api::ErrorCode::NotFound,
                        format!("no proposal {id} waits for review"),
                    ));
                }
                let accept: Vec<(String, Option<String>)> = args.accept.into_iter().map(|id| (id, None)).collect();
                let accepted = if accept.is_empty() { vec![] } else { e.accept(&accept)? };
                let rejected = if args.reject.is_empty() { vec![] } else { e.reject(&args.reject)? };
                Ok(serde_json::json!({"accepted": accepted, "rejected": rejected}))
            })
            .await;
        self.answer(result)
    }
}
