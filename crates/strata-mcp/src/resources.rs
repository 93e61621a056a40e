//! Resources: a small summary of the store, the procedures, analytics, the training candidates
//! and adapters (read only), the concepts compaction formed, the person's datasets (each with
//! its first rows or passages), and templates for one memory by id and one concept by key.
//! Each reads as JSON.

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use strata_api::{ApiResult, ConceptView, Engine, ErrorCode, Target};
use strata_core::concepts::KEY_PREFIX;
use strata_core::datasets::{Dataset, DatasetKind};
use strata_core::{Filter, MemoryKind};

use crate::StrataMcp;
use crate::graph_tools::GRAPH_RESOURCE;

/// Counts by type and tier.
pub const STATS: &str = "strata://stats";
/// Every procedure the client sees.
pub const PROCEDURES: &str = "strata://procedures";
/// The memory, recall and prompt metrics of the last 30 days.
pub const ANALYTICS: &str = "strata://analytics/summary";
/// The curation queue: memories flagged as worth training, with their scores and reasons.
pub const CANDIDATES: &str = "strata://training/candidates";
/// The adapter registry.
pub const ADAPTERS: &str = "strata://adapters";
/// Days [`ANALYTICS`] covers.
const ANALYTICS_DAYS: i64 = 30;
const MEMORY_PREFIX: &str = "strata://memory/";
const CONCEPT_PREFIX: &str = "strata://concept/";
const DATASET_PREFIX: &str = "strata://dataset/";
/// Rows or passages a dataset's resource holds (the tools page through the rest).
const DATASET_SAMPLE: usize = 20;
/// The most procedures [`PROCEDURES`] lists.
const MAX_PROCEDURES: usize = 200;
/// The most concepts `resources/list` names (the largest first).
const MAX_LISTED_CONCEPTS: usize = 100;
const JSON: &str = "application/json";

/// The fixed resources (and the reference server's graph, with the graph tools), then the
/// largest concepts the caller can see, then the caller's datasets.
pub fn list(graph: bool, concepts: &[ConceptView], datasets: &[Dataset]) -> ListResourcesResult {
    let mut all = vec![
        Resource::new(STATS, "stats")
            .with_title("Memory statistics")
            .with_description("How many memories there are, by type and tier.")
            .with_mime_type(JSON),
        Resource::new(PROCEDURES, "procedures")
            .with_title("Procedures")
            .with_description("Every procedure (how to do something) this client can see, newest first.")
            .with_mime_type(JSON),
        Resource::new(ANALYTICS, "analytics")
            .with_title("Memory analytics")
            .with_description(
                "The last 30 days, by day: what the memory holds and how it changed (`memory`), what \
                 recall found (`recalls`) and how prompts used their budgets (`utilization`).",
            )
            .with_mime_type(JSON),
        Resource::new(CANDIDATES, "training-candidates")
            .with_title("Training candidates")
            .with_description(
                "Memories flagged as worth training into the on-device model's adapter, each with its \
                 score, the reasons in words and where it stands (waiting, approved, rejected). Read \
                 only: a person decides in the app or with `strata train approve`.",
            )
            .with_mime_type(JSON),
        Resource::new(ADAPTERS, "adapters")
            .with_title("Adapters")
            .with_description(
                "Every adapter trained from memories, newest first: status (candidate, active, \
                 retired), source memories, settings and evaluation.",
            )
            .with_mime_type(JSON),
    ];
    if graph {
        all.push(
            Resource::new(GRAPH_RESOURCE, "knowledge-graph")
                .with_title("Knowledge Graph")
                .with_description("Every entity and relation, as the graph tools see them.")
                .with_mime_type(JSON),
        );
    }
    all.extend(concepts.iter().take(MAX_LISTED_CONCEPTS).map(|c| {
        Resource::new(format!("{CONCEPT_PREFIX}{}", c.key), c.key.clone())
            .with_title(c.name.clone())
            .with_description(format!(
                "A concept: {} related memories from {} to {}, with a summary.",
                c.members.len(),
                &c.first[..10.min(c.first.len())],
                &c.last[..10.min(c.last.len())]
            ))
            .with_mime_type(JSON)
    }));
    all.extend(datasets.iter().map(|d| {
        let what = match d.kind {
            DatasetKind::Table => format!(
                "A table from {}: {} rows; columns {}. Query it with query_dataset.",
                d.source,
                d.rows,
                d.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            DatasetKind::Document => {
                format!("A document from {}: {} passages. Search it with search_datasets.", d.source, d.chunks)
            }
        };
        Resource::new(format!("{DATASET_PREFIX}{}", d.name), d.name.clone())
            .with_title(format!("{} ({})", d.name, d.source))
            .with_description(what)
            .with_mime_type(JSON)
    }));
    ListResourcesResult::with_all_items(all)
}

/// The resource templates.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{MEMORY_PREFIX}{{id}}"), "memory")
            .with_title("A memory by id")
            .with_description("One memory with its tags, tier, importance and links.")
            .with_mime_type(JSON),
        ResourceTemplate::new(format!("{CONCEPT_PREFIX}{{key}}"), "concept")
            .with_title("A concept by key")
            .with_description(
                "A group of related memories formed by compaction (key `concept/…`, or its last part \
                 alone), with its name, summary and members; or, for any other key, the semantic \
                 memory (facts) under that key.",
            )
            .with_mime_type(JSON),
    ])
}

/// Reads a resource.
pub async fn read(
    server: &StrataMcp,
    uri: String,
    ctx: &RequestContext<RoleServer>,
) -> Result<ReadResourceResult, McpError> {
    let not_found = |why: String| McpError::resource_not_found(why, Some(serde_json::json!({ "uri": uri })));
    let value = if uri == STATS {
        server.run(ctx, |e| Ok(serde_json::to_value(e.stats()?))).await
    } else if uri == PROCEDURES {
        server
            .run(ctx, |e| {
                let filter = Filter { kinds: vec![MemoryKind::Procedural], ..Default::default() };
                let page = e.list(filter, MAX_PROCEDURES, None)?;
                Ok(serde_json::to_value(page))
            })
            .await
    } else if uri == ANALYTICS {
        server.run(ctx, |e| Ok(serde_json::to_value(analytics(e)?))).await
    } else if uri == CANDIDATES {
        server.run(ctx, |e| Ok(serde_json::to_value(e.training_candidates(&Default::default())?))).await
    } else if uri == ADAPTERS {
        server.run(ctx, |e| Ok(serde_json::to_value(e.adapters()?))).await
    } else if uri == GRAPH_RESOURCE && server.settings().graph_tools {
        server.run(ctx, |e| Ok(serde_json::to_value(e.graph_read()?))).await
    } else if let Some(key) = uri.strip_prefix(CONCEPT_PREFIX) {
        let key = decode(key);
        server.run(ctx, move |e| concept(e, &key)).await
    } else if let Some(name) = uri.strip_prefix(DATASET_PREFIX) {
        let name = decode(name);
        server.run(ctx, move |e| dataset(e, &name)).await
    } else if let Some(id) = uri.strip_prefix(MEMORY_PREFIX) {
        let target = Target::new(decode(id));
        server.run(ctx, move |e| Ok(serde_json::to_value(e.get(&target, None)?))).await
    } else {
        return Err(not_found(format!(
            "no resource '{uri}': try {STATS}, {PROCEDURES}, {MEMORY_PREFIX}ID, {CONCEPT_PREFIX}KEY or {DATASET_PREFIX}NAME"
        )));
    };
    let value = match value {
        Ok(v) => v.map_err(crate::internal)?,
        Err(e) if matches!(e.code, ErrorCode::NotFound | ErrorCode::Forgotten) => return Err(not_found(e.message)),
        Err(e) if e.code == ErrorCode::InvalidInput => return Err(crate::invalid_params(e.message)),
        Err(e) => return Err(crate::internal(e.message)),
    };
    let text = serde_json::to_string_pretty(&value).map_err(crate::internal)?;
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri.clone()).with_mime_type(JSON)]))
}

/// The last [`ANALYTICS_DAYS`] days' metrics, by day.
fn analytics(e: &mut Engine) -> ApiResult<serde_json::Value> {
    let range = strata_core::analytics::Range {
        since: Some(e.now() - chrono::Duration::days(ANALYTICS_DAYS)),
        ..Default::default()
    };
    Ok(serde_json::json!({
        "since": strata_core::time::format_time(range.since.unwrap_or_default()),
        "memory": e.memory_metrics(&range)?,
        "recalls": e.recall_metrics(&range)?,
        "utilization": e.utilization_metrics(&range)?,
    }))
}

/// What `strata://concept/{key}` reads: the semantic memory under `key` as it always did, and
/// otherwise (or for a `concept/…` key) the concept compaction formed, with its members.
fn concept(e: &mut Engine, key: &str) -> ApiResult<serde_json::Result<serde_json::Value>> {
    if !key.starts_with(KEY_PREFIX) {
        match e.get(&Target { id_or_key: key.to_string(), kind: Some(MemoryKind::Semantic) }, None) {
            Err(err) if err.code == ErrorCode::NotFound => {}
            found => return Ok(serde_json::to_value(found?)),
        }
    }
    Ok(serde_json::to_value(e.find_concept(key)?))
}

/// What `strata://dataset/{name}` reads: the dataset (columns or headings, counts, where it came
/// from) and its first rows or passages.
fn dataset(e: &mut Engine, name: &str) -> ApiResult<serde_json::Result<serde_json::Value>> {
    let d = e.dataset(name)?;
    let sample = match d.kind {
        DatasetKind::Table => serde_json::to_value(e.dataset_rows(name, 0, DATASET_SAMPLE)?),
        DatasetKind::Document => serde_json::to_value(e.dataset_passages(name, 0, DATASET_SAMPLE)?),
    };
    Ok(sample.and_then(|sample| {
        let mut v = serde_json::to_value(&d)?;
        v["first"] = sample;
        Ok(v)
    }))
}

/// Percent-decodes a URI segment (keys may hold spaces and other characters).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn uri_segments_are_percent_decoded() {
        assert_eq!(super::decode("favourite%20tea"), "favourite tea");
        assert_eq!(super::decode("caf%C3%A9"), "café");
        assert_eq!(super::decode("100%"), "100%");
        assert_eq!(super::decode("a%zzb"), "a%zzb");
    }
}
