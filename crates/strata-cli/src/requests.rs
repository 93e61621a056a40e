//! What a person types, as the engine's requests: a memory to add, a fact's value, a target,
//! a filter, a tier, a format.

use anyhow::{Context, Result, anyhow, bail};
use strata_api::{AddRequest, ImportFormat, Target};
use strata_core::interchange::duplicates::OnDuplicate;
use strata_core::time::parse_time;
use strata_core::{
    Clock, Concept, Content, Episode, EpisodeBody, FactValue, Facts, Filter, MemoryKind, Procedure, Tier,
};

use crate::args::{AddCommand, CommonAdd, FilterArgs, FormatArg, KeyArg, KindArg, OnDuplicateArg, OriginArg, TierArg};

pub(crate) fn add_request(add: AddCommand, clock: &dyn Clock) -> Result<AddRequest> {
    let (content, common): (Content, CommonAdd) = match add {
        AddCommand::Semantic { key, facts, facts_json, common } => {
            let mut all: Facts = match facts_json {
                Some(j) => serde_json::from_str(&j).context("--facts-json must be a JSON object of facts")?,
                None => Facts::new(),
            };
            for f in &facts {
                let (k, v) = parse_fact(f)?;
                all.insert(k, v);
            }
            if all.is_empty() {
                bail!("give at least one --fact NAME=VALUE (or --facts-json)");
            }
            (Content::Semantic(Concept { key, facts: all }), common)
        }
        AddCommand::Episodic { speaker, text, query, response, at, concepts, common } => {
            let occurred_at = match at {
                Some(t) => parse_time(&t)?,
                None => clock.now(),
            };
            let body = match (speaker, text, query, response) {
                (Some(speaker), Some(text), None, None) => EpisodeBody::Utterance { speaker, text },
                (None, Some(text), None, None) => EpisodeBody::Utterance { speaker: "user".into(), text },
                (None, None, q, r) if q.is_some() || r.is_some() => {
                    EpisodeBody::Exchange { query: q.unwrap_or_default(), response: r.unwrap_or_default() }
                }
                _ => bail!("an episode needs --text (with an optional --speaker) or --query/--response"),
            };
            (Content::Episodic(Episode { occurred_at, body, concepts, extra: Default::default() }), common)
        }
        AddCommand::Procedural { name, steps, context, common } => {
            (Content::Procedural(Procedure { name, steps, context }), common)
        }
    };
    Ok(AddRequest {
        content,
        tags: common.tags,
        importance: common.importance,
        tier: common.tier.map(tier_of),
        session_id: common.session,
        private: false,
    })
}

/// `name=value`; the value is JSON when it parses as a number (one that would not read back
/// as written stays text, digits and all), list, object or boolean, otherwise text.
pub(crate) fn parse_fact(s: &str) -> Result<(String, FactValue)> {
    let (k, v) = s.split_once('=').ok_or_else(|| anyhow!("'{s}' is not NAME=VALUE"))?;
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty() {
        bail!("'{s}' has no fact name before '='");
    }
    let value = match serde_json::from_str::<serde_json::Value>(v) {
        Ok(serde_json::Value::Number(_)) => match strata_core::model::number_as_written(v) {
            Some(n) => FactValue::Number(n),
            None => FactValue::Text(v.to_string()),
        },
        Ok(j @ (serde_json::Value::Array(_) | serde_json::Value::Object(_) | serde_json::Value::Bool(_))) => {
            FactValue::try_from(j).map_err(|e| anyhow!("fact '{k}': {e}"))?
        }
        _ => FactValue::Text(v.to_string()),
    };
    Ok((k.to_string(), value))
}

pub(crate) fn target_of(k: KeyArg) -> Target {
    Target { id_or_key: k.target, kind: k.kind.map(kind_of) }
}

pub(crate) fn kind_of(k: KindArg) -> MemoryKind {
    match k {
        KindArg::Semantic => MemoryKind::Semantic,
        KindArg::Episodic => MemoryKind::Episodic,
        KindArg::Procedural => MemoryKind::Procedural,
    }
}

pub(crate) fn tier_of(t: TierArg) -> Tier {
    match t {
        TierArg::Short => Tier::Short,
        TierArg::Medium => Tier::Medium,
        TierArg::Long => Tier::Long,
    }
}

pub(crate) fn on_duplicate_of(d: OnDuplicateArg) -> OnDuplicate {
    match d {
        OnDuplicateArg::Stop => OnDuplicate::Stop,
        OnDuplicateArg::Skip => OnDuplicate::Skip,
        OnDuplicateArg::Merge => OnDuplicate::Merge,
    }
}

pub(crate) fn format_of(f: FormatArg) -> ImportFormat {
    match f {
        FormatArg::Seed => ImportFormat::Seed,
        FormatArg::Backup => ImportFormat::Backup,
        FormatArg::Graph => ImportFormat::Graph,
    }
}

/// A `--since` / `--until` value ("2025-05-01", "last Saturday"): its start, or with `end` its
/// end.
pub(crate) fn when(
    t: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
    end: bool,
) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
    Ok(t.map(|t| strata_core::temporal::parse_when(t, now, end)).transpose()?)
}

pub(crate) fn filter_of(f: FilterArgs, now: chrono::DateTime<chrono::Utc>) -> Result<Filter> {
    let origin = f.origin.map(|o| match o {
        OriginArg::Person => strata_core::Origin::Person,
        OriginArg::Imported => strata_core::Origin::Imported,
        OriginArg::Conversation => strata_core::Origin::Conversation,
        OriginArg::Tool => strata_core::Origin::Tool,
    });
    Ok(Filter {
        origin,
        kinds: f.kinds.into_iter().map(kind_of).collect(),
        tags: f.tags,
        tiers: f.tiers.into_iter().map(tier_of).collect(),
        session_id: f.session,
        since: when(f.since.as_deref(), now, false)?,
        until: when(f.until.as_deref(), now, true)?,
        include_expired: f.expired,
        ..Default::default()
    })
}
