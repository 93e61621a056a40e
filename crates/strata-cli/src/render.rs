//! Printing results: readable tables by default, one JSON value with `--json`.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use comfy_table::{Table, presets};
use serde::Serialize;
use strata_api::dto::{EventView, HitView, MemoryView, PageView, RecallView, StatsView, content_title, truncate};
use strata_api::{ImportFormat, ImportReport, ReplayReport};
use strata_core::error::excerpt;
use strata_core::interchange::seed::ImportCounts;
use strata_core::{Content, EpisodeBody, FactValue};

/// Where results go, and in which form.
pub struct Out {
    /// JSON instead of tables.
    pub json: bool,
    /// A series as CSV instead of tables or JSON (`strata analytics`).
    pub csv: bool,
}

fn print_json<T: Serialize + ?Sized>(v: &T) -> Result<()> {
    say!("{}", crate::terminal::json(v)?);
    Ok(())
}

/// Rows under a header, as CSV on standard output.
fn print_csv(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> Result<()> {
    let mut w = csv::Writer::from_writer(crate::terminal::Stdout);
    w.write_record(header)?;
    for row in rows {
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(())
}

/// Prints a table without the padding comfy-table leaves at the start and end of lines.
fn print_table(t: &Table) -> Result<()> {
    for line in t.to_string().lines() {
        say!("{}", line.strip_prefix(' ').unwrap_or(line).trim_end());
    }
    Ok(())
}

/// Prints `label  value` rows, the labels padded to the widest, a value's further lines
/// indented under its first — the look of a borderless table, in time linear in the text (a
/// memory may hold megabytes; a table layout of it took seconds).
fn print_fields(rows: &[(String, String)]) -> Result<()> {
    let width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    for (label, value) in rows {
        let mut lines = value.lines();
        let first = format!("{label:width$}  {}", lines.next().unwrap_or_default());
        say!("{}", first.trim_end());
        for line in lines {
            say!("{:width$}  {}", "", line.trim_end());
        }
    }
    Ok(())
}

/// A series' first column's heading.
/// A listed memory's title.
fn title_of(m: &strata_api::dto::MemoryView) -> String {
    strata_api::dto::content_title(&m.content)
}

/// A bucket's column in CSV.
fn bucket_column(bucket: strata_core::analytics::Bucket) -> &'static str {
    match bucket {
        strata_core::analytics::Bucket::Day => "day",
        strata_core::analytics::Bucket::Week => "week",
    }
}

/// Bytes as a person reads them.
fn bytes(n: u64) -> String {
    strata_api::health::bytes(n)
}

fn bucket_word(bucket: strata_core::analytics::Bucket) -> &'static str {
    match bucket {
        strata_core::analytics::Bucket::Day => "day",
        strata_core::analytics::Bucket::Week => "week from",
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    if !header.is_empty() {
        t.set_header(header.iter().map(|h| h.to_uppercase()));
    }
    t
}

fn fact_text(v: &FactValue) -> String {
    match v {
        FactValue::Text(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

impl Out {
    pub fn memory(&self, m: &MemoryView, verb: &str) -> Result<()> {
        if self.json {
            return print_json(m);
        }
        if !verb.is_empty() {
            say!("{verb} {} memory {}", m.content.kind(), m.id);
        }
        let mut t: Vec<(String, String)> = Vec::new();
        t.push(("id".to_string(), m.id.clone()));
        t.push(("type".to_string(), m.content.kind().to_string()));
        match &m.content {
            Content::Semantic(c) => {
                t.push(("key".to_string(), c.key.clone()));
                for (k, v) in &c.facts {
                    t.push((format!("  {k}"), fact_text(v)));
                }
            }
            Content::Episodic(e) => {
                t.push(("when".to_string(), strata_core::time::format_time(e.occurred_at)));
                match &e.body {
                    EpisodeBody::Exchange { query, response } => {
                        t.push(("query".to_string(), query.clone()));
                        t.push(("response".to_string(), response.clone()));
                    }
                    EpisodeBody::Utterance { speaker, text } => {
                        t.push(("speaker".to_string(), speaker.clone()));
                        t.push(("text".to_string(), text.clone()));
                    }
                }
                if !e.concepts.is_empty() {
                    t.push(("concepts".to_string(), e.concepts.join(", ")));
                }
            }
            Content::Procedural(p) => {
                t.push(("name".to_string(), p.name.clone()));
                for (i, s) in p.steps.iter().enumerate() {
                    t.push((if i == 0 { "steps".to_string() } else { String::new() }, s.clone()));
                }
                if let Some(c) = &p.context {
                    t.push(("context".to_string(), c.clone()));
                }
            }
        }
        let scope = [
            Some(format!("user {}", m.scope.user_id)),
            m.scope.agent_id.as_ref().map(|a| format!("agent {a}")),
            m.scope.session_id.as_ref().map(|s| format!("session {s}")),
        ];
        let rows = [
            ("tier", m.tier.to_string()),
            ("tags", if m.tags.is_empty() { "-".into() } else { m.tags.join(", ") }),
            ("importance", m.importance.to_string()),
            ("scope", scope.into_iter().flatten().collect::<Vec<_>>().join(" · ")),
            ("source", m.source.app.clone()),
            ("created", m.created_at.clone()),
            ("updated", m.updated_at.clone()),
            ("version", m.version.to_string()),
            ("retrieved", format!("{}×", m.access_count)),
            ("pinned", if m.pinned { "yes".into() } else { "no".into() }),
            ("expired", m.expired_at.clone().unwrap_or_else(|| "-".into())),
        ];
        for (k, v) in rows {
            t.push((k.to_string(), v));
        }
        for l in &m.links {
            t.push(("link".to_string(), format!("{} → {}", l.relation, l.target)));
        }
        print_fields(&t)
    }

    pub fn page(&self, p: &PageView) -> Result<()> {
        if self.json {
            return print_json(p);
        }
        if p.items.is_empty() {
            say!("No memories yet. Add one with `strata add semantic KEY --fact NAME=VALUE`, or try `strata demo`.");
            return Ok(());
        }
        let mut t = table(&["id", "type", "tier", "memory", "tags", "created"]);
        for m in &p.items {
            t.add_row(vec![
                m.id.clone(),
                m.content.kind().to_string(),
                m.tier.to_string(),
                content_title(&m.content),
                truncate(&m.tags.join(","), 24),
                m.created_at.clone(),
            ]);
        }
        print_table(&t)?;
        if let Some(c) = &p.next_cursor {
            say!("\nMore: strata list --cursor {c}");
        }
        Ok(())
    }

    pub fn hits(&self, hits: &[HitView], query: &str) -> Result<()> {
        if self.json {
            return print_json(hits);
        }
        if hits.is_empty() {
            say!("Nothing matches \"{}\".", strata_core::error::excerpt(query));
            return Ok(());
        }
        let mut t = table(&["score", "id", "type", "match"]);
        for h in hits {
            t.add_row(vec![
                format!("{:.2}", h.score),
                h.memory.id.clone(),
                h.memory.content.kind().to_string(),
                h.snippet.replace('\n', " "),
            ]);
        }
        print_table(&t)?;
        Ok(())
    }

    pub fn recalled(&self, hits: &[RecallView], query: &str, why: bool) -> Result<()> {
        if self.json {
            return print_json(hits);
        }
        if hits.is_empty() {
            say!("Nothing recalled for \"{}\".", strata_core::error::excerpt(query));
            return Ok(());
        }
        let mut head = vec!["score", "id", "type", "memory"];
        if why {
            head.extend(["keyword", "similarity", "time", "recency", "freq", "importance", "tier"]);
        }
        let mut t = table(&head);
        for h in hits {
            let w = &h.why;
            let mut row = vec![
                format!("{:.3}", w.score),
                h.memory.id.clone(),
                h.memory.content.kind().to_string(),
                truncate(&content_title(&h.memory.content), 60),
            ];
            if why {
                let opt = |v: Option<f64>, rank: Option<usize>| match (v, rank) {
                    (Some(v), Some(r)) => format!("{v:.2} (#{r})"),
                    (Some(v), None) => format!("{v:.2}"),
                    _ => "-".to_string(),
                };
                row.extend([
                    opt(w.keyword_score, w.keyword_rank),
                    opt(w.similarity, w.vector_rank),
                    match &w.time_phrase {
                        Some(p) => format!("+{:.2} ({p})", w.time),
                        None => "-".into(),
                    },
                    format!("+{:.3}", w.recency),
                    format!("+{:.3}", w.frequency),
                    format!("+{:.3}", w.importance),
                    format!("+{:.3}", w.tier),
                ]);
            }
            t.add_row(row);
        }
        print_table(&t)
    }

    pub fn embedded(&self, p: &strata_api::embedding::EmbedProgress) -> Result<()> {
        if self.json {
            return print_json(p);
        }
        if p.done == 0 {
            say!("Every memory is embedded.");
        } else {
            say!("Embedded {} memories.", p.done);
        }
        Ok(())
    }

    pub fn history(&self, events: &[EventView]) -> Result<()> {
        if self.json {
            return print_json(events);
        }
        let mut t = table(&["seq", "v", "at", "actor", "event"]);
        for e in events {
            let actor = match &e.client {
                Some(c) => format!("{} ({c})", e.actor),
                None => e.actor.clone(),
            };
            t.add_row(vec![e.seq.to_string(), e.version.to_string(), e.at.clone(), actor, e.summary.clone()]);
        }
        print_table(&t)?;
        Ok(())
    }

    pub fn forgotten(&self, r: &strata_api::ForgetReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!("Forgot {}: its content was erased ({} events redacted).", r.id, r.redacted_events);
        if !r.retired_adapters.is_empty() {
            say!("Retired the adapters trained from it, and deleted their files: {}.", r.retired_adapters.join(", "));
        }
        if !r.scrubbed {
            say!(
                "Another process is still reading an older snapshot of the database, so the erased text \
                 is still in the database file and its write-ahead log (NAME-wal) until that read ends. \
                 A background `strata scrub` wipes it from both as soon as it does; until then, do not \
                 copy or back up those files."
            );
        }
        Ok(())
    }

    pub fn extracted(&self, r: &strata_api::ExtractReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        if r.turns == 0 {
            say!("Nothing new to read: every turn has been read for facts.");
            return Ok(());
        }
        let waiting = r.decisions.iter().filter(|d| d.status == "proposed").count();
        say!(
            "Read {} turns of {} {}: {} {}{}.",
            r.turns,
            r.sessions,
            if r.sessions == 1 { "conversation" } else { "conversations" },
            r.decisions.len(),
            if r.decisions.len() == 1 { "change" } else { "changes" },
            if r.dry_run {
                " (a dry run: nothing was written)".to_string()
            } else if waiting > 0 {
                format!(", {waiting} waiting for `strata review`")
            } else {
                String::new()
            }
        );
        if !r.decisions.is_empty() {
            self.decision_table(&r.decisions)?;
        }
        for why in &r.skipped {
            say!("Skipped: {why}.");
        }
        if r.forgotten_meanwhile > 0 {
            say!(
                "{} {} forgotten while {} read: nothing of {} was written.",
                r.forgotten_meanwhile,
                if r.forgotten_meanwhile == 1 { "part of a conversation was" } else { "parts of conversations were" },
                if r.forgotten_meanwhile == 1 { "it was" } else { "they were" },
                if r.forgotten_meanwhile == 1 { "it" } else { "them" },
            );
        }
        Ok(())
    }

    fn decision_table(&self, ds: &[strata_api::DecisionView]) -> Result<()> {
        let mut t = table(&["id", "change", "subject", "fact", "why"]);
        for d in ds {
            let change = match (d.action.as_str(), &d.previous) {
                ("update", Some(p)) => format!("update (was: {})", truncate(p, 40)),
                ("noop", _) => "already known".to_string(),
                (a, _) => a.to_string(),
            };
            t.add_row(vec![
                d.id.clone(),
                change,
                d.subject_name.clone(),
                truncate(&d.fact, 60),
                truncate(&d.reason, 40),
            ]);
        }
        print_table(&t)
    }

    pub fn proposals(&self, ds: &[strata_api::DecisionView]) -> Result<()> {
        if self.json {
            return print_json(ds);
        }
        if ds.is_empty() {
            say!("Nothing waiting for review.");
            return Ok(());
        }
        self.decision_table(ds)?;
        say!("\nAccept with `strata review accept ID…` (or --all), reject with `strata review reject ID…`.");
        Ok(())
    }

    pub fn settled(&self, ds: &[strata_api::DecisionView], verb: &str) -> Result<()> {
        if self.json {
            return print_json(ds);
        }
        for d in ds {
            say!("{verb} {}: {}", d.id, d.fact);
        }
        Ok(())
    }

    pub fn documents(&self, docs: &[strata_api::DocumentView]) -> Result<()> {
        if self.json {
            return print_json(docs);
        }
        if docs.is_empty() {
            say!("No facts yet: they come from conversations (`strata extract`).");
            return Ok(());
        }
        for (i, d) in docs.iter().enumerate() {
            if i > 0 {
                say!();
            }
            say!("{} — {}", d.name, d.description);
            say!("{}", d.content);
        }
        Ok(())
    }

    pub fn memory_metrics(
        &self,
        m: &strata_core::analytics::MemoryMetrics,
        bucket: strata_core::analytics::Bucket,
    ) -> Result<()> {
        if self.csv {
            // Memories created and tier moves, one row per bucket with either.
            let mut rows: std::collections::BTreeMap<&str, [u64; 7]> = std::collections::BTreeMap::new();
            for c in &m.created {
                let r = rows.entry(&c.start).or_default();
                let n = |k: &str| c.by_type.get(k).copied().unwrap_or(0);
                r[..4].copy_from_slice(&[n("semantic"), n("episodic"), n("procedural"), c.total]);
            }
            for mv in &m.moves {
                rows.entry(&mv.start).or_default()[4..].copy_from_slice(&[mv.promoted, mv.demoted, mv.expired]);
            }
            let header =
                [bucket_column(bucket), "facts", "episodes", "procedures", "created", "promoted", "demoted", "expired"];
            return print_csv(
                &header,
                rows.into_iter()
                    .map(|(start, r)| std::iter::once(start.to_string()).chain(r.iter().map(u64::to_string)).collect()),
            );
        }
        if self.json {
            return print_json(m);
        }
        let listed = |counts: &std::collections::BTreeMap<String, u64>, words: &dyn Fn(&str) -> String| {
            let mut v: Vec<(&String, &u64)> = counts.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
            v.iter().map(|(k, n)| format!("{} {n}", words(k))).collect::<Vec<_>>().join(", ")
        };
        let kind = |k: &str| match k {
            "semantic" => "facts".to_string(),
            "episodic" => "episodes".to_string(),
            "procedural" => "procedures".to_string(),
            other => other.to_string(),
        };
        let same = |k: &str| k.to_string();
        say!("{} memories ({} expired): {}", m.memories, m.expired, listed(&m.by_type, &kind));
        say!("Tiers: {}", listed(&m.by_tier, &same));
        say!("Written by: {}", listed(&m.by_app, &same));
        say!("Agents: {}", listed(&m.by_agent, &same));
        if !m.tags.is_empty() {
            let tags: Vec<String> = m.tags.iter().map(|(t, n)| format!("{t} {n}")).collect();
            say!("Tags: {}", tags.join(", "));
        }
        match &m.embedding_model {
            Some(model) => say!(
                "Embedded: {} of {} ({:.0}%) by {model}",
                m.embedded,
                m.memories,
                100.0 * m.embedded as f64 / m.memories.max(1) as f64
            ),
            None => say!("Embedded: none yet (`strata embed`)"),
        }
        say!("Concepts: {} grouping {} memories", m.concepts, m.grouped);
        let per = bucket_word(bucket);
        if m.created.is_empty() {
            say!("No memory created in this range.");
        } else {
            let mut t = table(&[per, "facts", "episodes", "procedures", "total"]);
            for c in &m.created {
                let n = |k: &str| c.by_type.get(k).copied().unwrap_or(0).to_string();
                t.add_row(vec![c.start.clone(), n("semantic"), n("episodic"), n("procedural"), c.total.to_string()]);
            }
            say!("Created:\n{t}");
        }
        if m.moves.is_empty() {
            say!("No tier moves in this range.");
        } else {
            let mut t = table(&[per, "promoted", "demoted", "expired"]);
            for mv in &m.moves {
                t.add_row(vec![
                    mv.start.clone(),
                    mv.promoted.to_string(),
                    mv.demoted.to_string(),
                    mv.expired.to_string(),
                ]);
            }
            say!("Tier moves:\n{t}");
            let rules: Vec<String> = m.reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
            say!("Why: {}", rules.join("; "));
        }
        Ok(())
    }

    /// What recall did; `titles`, the most recalled memories' titles in `m.top`'s order.
    pub fn recall_metrics(
        &self,
        m: &strata_core::analytics::RecallMetrics,
        titles: &[String],
        bucket: strata_core::analytics::Bucket,
    ) -> Result<()> {
        let number = |x: Option<f64>| x.map_or_else(String::new, |x| format!("{x:.3}"));
        let best = |p: &strata_core::analytics::RecallPoint, f: fn(&strata_core::analytics::Quartiles) -> f64| {
            number(p.similarity.as_ref().map(f))
        };
        if self.csv {
            let rows = m.series.iter().map(|p| {
                vec![
                    p.start.clone(),
                    p.recalls.to_string(),
                    p.found.to_string(),
                    best(p, |q| q.low),
                    best(p, |q| q.median),
                    best(p, |q| q.high),
                    number(p.score),
                    number(p.boost),
                ]
            });
            let header = [
                bucket_column(bucket),
                "recalls",
                "found",
                "best_similarity_p25",
                "best_similarity_median",
                "best_similarity_p75",
                "best_score",
                "best_boost",
            ];
            return print_csv(&header, rows);
        }
        if self.json {
            return print_json(m);
        }
        if m.recalls == 0 {
            say!("No recall recorded in this range.");
            return Ok(());
        }
        say!(
            "{} recalls ({} searches, {} for prompts); {} found something ({:.0}%); {:.1} ms median, {:.1} ms p95",
            m.recalls,
            m.searches,
            m.prompts,
            m.found,
            100.0 * m.found as f64 / m.recalls as f64,
            m.latency_p50_ms,
            m.latency_p95_ms
        );
        say!(
            "{} memories recalled, {} of them into a prompt; {} memories never recalled",
            m.recalled,
            m.in_prompt,
            m.never_recalled
        );
        if !m.top.is_empty() {
            say!("Most recalled:");
            for ((_, n), title) in m.top.iter().zip(titles) {
                say!("  {n:>4}  {title}");
            }
        }
        if !m.no_result.is_empty() {
            say!("Searches that found nothing:");
            for (q, n) in &m.no_result {
                say!("  {n:>4}  {q}");
            }
        }
        let per = bucket_word(bucket);
        let mut t =
            table(&[per, "recalls", "found something", "best's closeness in meaning (quartiles)", "best's score"]);
        for p in &m.series {
            let quartiles =
                p.similarity.map_or_else(String::new, |q| format!("{:.2} · {:.2} · {:.2}", q.low, q.median, q.high));
            t.add_row(vec![p.start.clone(), p.recalls.to_string(), p.found.to_string(), quartiles, number(p.score)]);
        }
        say!("{t}");
        Ok(())
    }

    /// What each compaction pass changed, latest first.
    pub fn compaction_passes(&self, passes: &[strata_core::analytics::CompactionPass]) -> Result<()> {
        let ratio = |p: &strata_core::analytics::CompactionPass| {
            (p.summary_tokens > 0).then(|| f64::from(p.member_tokens) / f64::from(p.summary_tokens))
        };
        let row = |p: &strata_core::analytics::CompactionPass| {
            vec![
                p.at.clone(),
                if p.full { "full" } else { "incremental" }.to_string(),
                p.formed.to_string(),
                p.updated.to_string(),
                p.merged.to_string(),
                p.dissolved.to_string(),
                p.joined.to_string(),
                p.concepts.to_string(),
                p.grouped.to_string(),
                ratio(p).map_or_else(String::new, |r| format!("{r:.1}")),
            ]
        };
        let head = ["at", "pass", "formed", "updated", "merged", "dissolved", "joined", "concepts", "grouped", "ratio"];
        if self.csv {
            return print_csv(&head, passes.iter().map(row));
        }
        if self.json {
            return print_json(&passes);
        }
        if passes.is_empty() {
            say!("No compaction pass in this range: `strata concepts rebuild` groups related memories.");
            return Ok(());
        }
        say!(
            "{} compaction {}; ratio: what the members of the concepts a pass wrote say, in tokens, \
             per token of their summaries.",
            passes.len(),
            if passes.len() == 1 { "pass" } else { "passes" }
        );
        let mut t = table(&head);
        for p in passes {
            let mut r = row(p);
            if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&p.at) {
                r[0] = t.format("%Y-%m-%d %H:%M").to_string();
            }
            t.add_row(r);
        }
        say!("{t}");
        Ok(())
    }

    pub fn utilization_metrics(
        &self,
        m: &strata_core::analytics::UtilizationMetrics,
        bucket: strata_core::analytics::Bucket,
    ) -> Result<()> {
        if self.csv {
            let rows =
                m.series.iter().map(|p| vec![p.start.clone(), p.prompts.to_string(), format!("{:.4}", p.utilization)]);
            return print_csv(&[bucket_column(bucket), "prompts", "utilization"], rows);
        }
        if self.json {
            return print_json(m);
        }
        if m.prompts == 0 {
            say!("No prompt recorded in this range.");
            return Ok(());
        }
        let (noun, their) = if m.prompts == 1 { ("prompt", "its budget") } else { ("prompts", "their budgets") };
        say!("{} {noun} used {:.0}% of {their} on average", m.prompts, 100.0 * m.utilization);
        let sections: Vec<String> = m.sections.iter().map(|(s, t)| format!("{s} {t:.0}")).collect();
        say!("Tokens per prompt, by section: {}", sections.join(", "));
        if !m.dropped.is_empty() {
            let dropped: Vec<String> =
                m.dropped.iter().map(|(why, n)| format!("{} {n}", why.replace('_', " "))).collect();
            say!("Left out: {}", dropped.join(", "));
        }
        let mut t = table(&["model", "prompts", "mean budget", "mean used", "used"]);
        for (model, u) in &m.by_model {
            t.add_row(vec![
                model.clone(),
                u.prompts.to_string(),
                format!("{:.0}", u.budget),
                format!("{:.0}", u.used),
                format!("{:.0}%", 100.0 * u.utilization),
            ]);
        }
        say!("{t}");
        let per = bucket_word(bucket);
        let mut t = table(&[per, "prompts", "used"]);
        for p in &m.series {
            t.add_row(vec![p.start.clone(), p.prompts.to_string(), format!("{:.0}%", 100.0 * p.utilization)]);
        }
        say!("{t}");
        Ok(())
    }

    pub fn analytics_bench(&self, r: &strata_bench::analyticsbench::AnalyticsReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        let ms = |l: &strata_bench::scalebench::Latency| format!("{:.1} / {:.1}", l.p50_ms, l.p95_ms);
        let mut t = table(&[
            "memories",
            "events",
            "first view",
            "created",
            "moved",
            "no result",
            "never recalled",
            "health",
            "recall recorded",
            "recall not",
        ]);
        for s in &r.sizes {
            t.add_row(vec![
                s.memories.to_string(),
                s.events.to_string(),
                ms(&s.dashboard),
                ms(&s.drill_created),
                ms(&s.drill_moved),
                ms(&s.drill_no_result),
                ms(&s.drill_never_recalled),
                format!("{:.0}", s.health_ms),
                ms(&s.recall_recorded),
                ms(&s.recall_unrecorded),
            ]);
        }
        say!("Milliseconds, median / p95 ({} questions for recall):\n{t}", r.questions);
        Ok(())
    }

    pub fn health(&self, h: &strata_api::health::HealthView) -> Result<()> {
        let c = &h.counts;
        if self.csv {
            let unembedded = c.unembedded.map_or_else(String::new, |n| n.to_string());
            let rows = [
                ("memories", c.memories.to_string()),
                ("duplicate_groups", c.duplicate_groups.to_string()),
                ("duplicates", c.duplicates.to_string()),
                ("contradictions", c.contradictions.to_string()),
                ("stale", c.stale.to_string()),
                ("unembedded", unembedded),
                ("file_bytes", c.file_bytes.to_string()),
                ("free_bytes", c.free_bytes.to_string()),
            ];
            return print_csv(&["measure", "value"], rows.into_iter().map(|(k, v)| vec![k.to_string(), v]));
        }
        if self.json {
            return print_json(h);
        }
        say!(
            "{} in use; the file is {} ({} free).",
            strata_api::health::words(c.memories, "memory", "memories"),
            bytes(c.file_bytes),
            bytes(c.free_bytes)
        );
        let n = strata_api::health::words;
        say!(
            "Near-duplicates: {}; merging would expire {} (`--fix merge-duplicates`).",
            n(c.duplicate_groups, "group", "groups"),
            n(c.duplicates, "memory", "memories")
        );
        for g in &h.duplicates {
            say!("  keep {}  {}", g.keep.id, title_of(&g.keep));
            for o in &g.others {
                say!("    ≈ {}  {}", o.id, title_of(o));
            }
        }
        say!("Contradictions: {}.", c.contradictions);
        for x in &h.contradictions {
            let claims: Vec<String> = x.claims.iter().map(|c| format!("{} ({})", c.value, c.memory.id)).collect();
            say!("  {}.{}: {}", x.key, x.fact, claims.join(" vs "));
        }
        say!(
            "Stale (never used in {} days): {} (`--fix expire-stale`).",
            h.stale_days,
            n(c.stale, "memory", "memories")
        );
        for m in &h.stale {
            say!("  {}  {}", m.id, title_of(m));
        }
        match c.unembedded {
            Some(n) => say!("Without a vector: {n} (`--fix embed-missing`)."),
            None => say!("Without a vector: unknown (the embedding model is not installed)."),
        }
        let mut t = table(&["table", "size"]);
        for (name, b) in &h.tables {
            t.add_row(vec![name.clone(), bytes(*b)]);
        }
        say!("{t}");
        Ok(())
    }

    pub fn optimized(&self, v: &strata_api::health::OptimizeView) -> Result<()> {
        if self.json {
            return print_json(v);
        }
        say!("{}.", v.summary);
        for c in &v.changes {
            match &c.memory {
                Some(m) => say!("  {}  {} — {}", m.id, title_of(m), c.what),
                None => say!("  {}", c.what),
            }
        }
        if v.total as usize > v.changes.len() {
            say!("  … and {} more.", v.total as usize - v.changes.len());
        }
        match &v.after {
            Some(a) => say!(
                "After: {} memories, {} near-duplicates, {} stale, file {}.",
                a.memories,
                a.duplicates,
                a.stale,
                bytes(a.file_bytes)
            ),
            None => say!("Nothing changed yet: add --apply to do it."),
        }
        Ok(())
    }

    pub fn cleared_recalls(&self, n: u64) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "cleared": n }));
        }
        say!("Deleted the records of {n} {}.", if n == 1 { "recall" } else { "recalls" });
        Ok(())
    }

    pub fn concepts(&self, concepts: &[strata_api::ConceptView]) -> Result<()> {
        if self.json {
            return print_json(concepts);
        }
        if concepts.is_empty() {
            say!("No concepts yet: `strata concepts rebuild` groups related memories into them.");
            return Ok(());
        }
        for c in concepts {
            say!("{}  {} memories, {} – {}  {}", c.name, c.members.len(), day(&c.first), day(&c.last), c.key);
        }
        Ok(())
    }

    pub fn concept(&self, c: &strata_api::ConceptView) -> Result<()> {
        if self.json {
            return print_json(c);
        }
        say!("{} ({}, {} memories, {} – {})", c.name, c.key, c.members.len(), day(&c.first), day(&c.last));
        say!("Terms: {}", c.terms.join(", "));
        say!("Summary:");
        for s in &c.summary {
            say!("  {}  [{}]", s.text, s.from);
        }
        say!("Members: {}", c.members.join(" "));
        Ok(())
    }

    pub fn compacted(&self, r: &strata_api::CompactReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        let verb = if r.dry_run { "Would leave" } else { "Now" };
        say!(
            "{verb} {} concepts holding {} of {} memories: {} formed ({} split off), {} updated, {} unchanged, {} merged, {} dissolved{}",
            r.concepts,
            r.grouped,
            r.memories,
            r.formed,
            r.split,
            r.updated,
            r.unchanged,
            r.merged,
            r.dissolved,
            if r.joined > 0 { format!(", {} memories joined", r.joined) } else { String::new() }
        );
        if r.summary_tokens > 0 {
            say!(
                "Summaries of the changed concepts: {} tokens for {} tokens of memories ({:.1}× shorter)",
                r.summary_tokens,
                r.member_tokens,
                r.ratio
            );
        }
        Ok(())
    }

    pub fn document(&self, d: &strata_api::DocumentView) -> Result<()> {
        if self.json {
            return print_json(d);
        }
        say!("{} — {}", d.name, d.description);
        for f in &d.facts {
            let since = f.stated.as_deref().map(|s| format!(" (said {s})")).unwrap_or_default();
            say!("- {}{since}", f.fact);
            for old in f.history.iter().rev().skip(1) {
                let from = old.stated.as_deref().unwrap_or("?");
                let until = old.valid_until.as_deref().unwrap_or("?");
                say!("    before: {} (from {from} until {until})", old.fact);
            }
        }
        Ok(())
    }

    pub fn compaction_bench(&self, r: &strata_bench::compactbench::CompactionBench) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "{} conversations, {} memories: {} concepts holding {}; summaries {:.1}× shorter than their members",
            r.conversations,
            r.memories,
            r.concepts,
            r.grouped,
            r.ratio
        );
        say!("Of the pairs of turns a question needs together, one concept holds both in {:.1}%", r.together * 100.0);
        say!("Compacting a conversation: {:.1} s (median), {:.1} s (slowest)", r.seconds_p50, r.seconds_max);
        say!(
            "{} questions: share whose answer is in the prompt's memories (in the conversation at all: {:.3})",
            r.questions,
            r.anywhere
        );
        for (budget, raw) in &r.raw {
            let compacted = r.compacted.get(budget).copied().unwrap_or(0.0);
            let concepts = r.concepts_in_prompt.get(budget).copied().unwrap_or(0.0);
            let bound = r.bound.get(budget).copied().unwrap_or(0.0);
            say!(
                "  {budget:>5} tokens: raw {raw:.3}, compacted {compacted:.3} ({concepts:.2} concepts a prompt); turns cut knowing the answer {bound:.3}"
            );
        }
        for s in &r.scale {
            say!(
                "{} memories: a full pass {:.1} s ({} concepts holding {}); {} more, an incremental pass {:.2} s ({:.2} ms a memory, {} joined)",
                s.memories,
                s.full_seconds,
                s.concepts,
                s.grouped,
                s.added,
                s.incremental_seconds,
                s.incremental_ms_per_memory,
                s.joined
            );
        }
        Ok(())
    }

    pub fn extraction_bench(&self, r: &strata_bench::extractbench::ExtractBenchReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!("Extraction with {}", r.model);
        if let Some(l) = &r.locomo {
            say!(
                "LoCoMo: {} sessions of {} conversations, {} turns: {} facts against {} observations ({} dropped as not borne out by the turns)",
                l.sessions,
                l.conversations,
                l.turns,
                l.facts,
                l.observations,
                l.ungrounded
            );
            say!(
                "  coverage {:.2}, precision {:.2}; {:.1} s a session (median), {:.2} s and {:.0} tokens a turn",
                l.coverage,
                l.precision,
                l.seconds_per_session_p50,
                l.seconds_per_turn,
                l.tokens_per_turn
            );
            for f in &l.failed_sessions {
                say!("  failed: {f}");
            }
            fact_recall(&l.retrieval)?;
        }
        if let Some(r) = &r.reference {
            fact_recall(r)?;
        }
        if let Some(u) = &r.updates {
            say!(
                "Updates: {} cases, {:.2} resolved (new value current, old one in its history), {:.2} with a contradiction left standing",
                u.cases,
                u.resolved,
                u.contradictions
            );
        }
        Ok(())
    }

    pub fn replay(&self, r: &ReplayReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "Replayed {} events into {} memories in {} ms; {}.",
            r.events,
            r.memories,
            r.millis,
            if r.matched { "the projections matched the log" } else { "the projections were repaired from the log" }
        );
        Ok(())
    }

    pub fn imported(&self, file: &str, report: &ImportReport) -> Result<()> {
        if self.json {
            return print_json(report);
        }
        let n = report.imported;
        match (report.format, &report.summary) {
            (ImportFormat::Seed, Some(summary)) => say!("Imported {}: {summary}.", excerpt(file)),
            (ImportFormat::Seed, None) => say!("Imported {n} memories."),
            (ImportFormat::Backup, _) => say!("Restored the backup: {n} memories."),
            (ImportFormat::Graph, _) => {
                say!("Imported the knowledge graph: {n} entities and relations created or extended.")
            }
        }
        let skipped = &report.relations_skipped;
        if !skipped.is_empty() {
            say!("Skipped {} relations whose ends are not both entities:", skipped.len());
            for r in skipped {
                say!("  {} -[{}]-> {}", excerpt(&r.from), excerpt(&r.relation_type), excerpt(&r.to));
            }
        }
        Ok(())
    }

    /// What an export wrote; said on stderr when the export itself went to standard output
    /// (`-o /dev/stdout`), so the data stays the data.
    pub fn exported(&self, format: ImportFormat, n: u64, path: &Path) -> Result<()> {
        let into_stdout = crate::terminal::is_stdout(path);
        if self.json && !into_stdout {
            return print_json(&serde_json::json!({"format": format, "exported": n, "file": path}));
        }
        let what = match format {
            ImportFormat::Seed => "memories",
            ImportFormat::Backup => "events",
            ImportFormat::Graph => "entities and relations",
        };
        if into_stdout {
            note!("Exported {n} {what} to {}.", path.display());
        } else {
            say!("Exported {n} {what} to {}.", path.display());
        }
        Ok(())
    }

    pub fn stats(&self, s: &StatsView) -> Result<()> {
        if self.json {
            return print_json(s);
        }
        let mut t = table(&[]);
        let mut row = |k: &str, v: String| {
            t.add_row(vec![k.to_string(), v]);
        };
        row("memories", s.memories.to_string());
        for (k, n) in &s.by_kind {
            row(&format!("  {k}"), n.to_string());
        }
        for (k, n) in &s.by_tier {
            row(&format!("  {k} term"), n.to_string());
        }
        row("tags", s.tags.to_string());
        row("events", s.events.to_string());
        row("forgotten", s.forgotten.to_string());
        let fmt =
            |t: Option<chrono::DateTime<chrono::Utc>>| t.map(strata_core::time::format_time).unwrap_or("-".into());
        row("first event", fmt(s.first_event_at));
        row("last event", fmt(s.last_event_at));
        row("database", format!("{:.1} KiB", s.db_bytes as f64 / 1024.0));
        print_table(&t)?;
        Ok(())
    }

    pub fn locomo(&self, r: &strata_bench::locomo::LocomoReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "LoCoMo evidence retrieval: {} questions ({} skipped without evidence; {} evidence ids repaired, {} dropped), {} turns.",
            r.questions,
            r.skipped,
            r.evidence_repaired,
            r.evidence_dropped,
            r.turns
        );
        if let Some(i) = &r.ingest {
            say!(
                "Ingest with embeddings: {} memories in {:.1} s ({:.0} a second).",
                i.memories,
                i.seconds,
                i.per_second
            );
        }
        let mut t = table(&["config", "scope", "R@1", "R@5", "R@10", "R@20", "p50 ms", "p95 ms"]);
        for (name, c) in &r.configs {
            let label = if *name == r.default { format!("{name} (default)") } else { name.clone() };
            let mut rows = vec![("all", &c.recall_at), ("cat 1-4", &c.recall_at_excl_adversarial)];
            let cats: Vec<(String, &std::collections::BTreeMap<String, f64>)> =
                c.by_category.iter().map(|(k, v)| (format!("cat {k}"), v)).collect();
            rows.extend(cats.iter().map(|(k, v)| (k.as_str(), *v)));
            for (i, (scope, at)) in rows.into_iter().enumerate() {
                let mut row = vec![if i == 0 { label.clone() } else { String::new() }, scope.to_string()];
                row.extend(["1", "5", "10", "20"].iter().map(|k| format!("{:.3}", at.get(*k).copied().unwrap_or(0.0))));
                row.push(if i == 0 { format!("{:.2}", c.p50_ms) } else { String::new() });
                row.push(if i == 0 { format!("{:.2}", c.p95_ms) } else { String::new() });
                t.add_row(row);
            }
        }
        print_table(&t)?;
        if !r.budget_recall_by_order.is_empty() {
            say!("\nEvidence recall within a token budget (cl100k_base), {} through the context assembler:", r.default);
            let mut t = table(&["order", "500", "1000", "2000"]);
            for (order, at) in &r.budget_recall_by_order {
                let mut row = vec![order.clone()];
                row.extend(
                    ["500", "1000", "2000"].iter().map(|b| format!("{:.3}", at.get(*b).copied().unwrap_or(0.0))),
                );
                t.add_row(row);
            }
            let mut row = vec!["tokens used (mean)".to_string()];
            row.extend(
                ["500", "1000", "2000"]
                    .iter()
                    .map(|b| format!("{:.0}", r.budget_tokens_used.get(*b).copied().unwrap_or(0.0))),
            );
            t.add_row(row);
            print_table(&t)?;
        }
        Ok(())
    }

    pub fn scale_bench(&self, r: &strata_bench::scalebench::ScaleReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!("Recall latency, {} questions each, warm (top 20).", r.questions);
        let mut t = table(&["memories", "written in s", "config", "p50 ms", "p95 ms"]);
        for s in &r.sizes {
            for (i, (name, l)) in s.latency.iter().enumerate() {
                let (n, w) = if i == 0 {
                    (s.memories.to_string(), format!("{:.1}", s.write_seconds))
                } else {
                    Default::default()
                };
                t.add_row(vec![n, w, name.clone(), format!("{:.2}", l.p50_ms), format!("{:.2}", l.p95_ms)]);
            }
        }
        print_table(&t)
    }

    pub fn mcp_bench(&self, r: &strata_bench::mcpbench::McpReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "The recall tool (top 10) through `strata mcp`, {} memories, {} questions, timed by the MCP Python SDK.",
            r.memories,
            r.questions
        );
        let mut t = table(&["transport", "clients", "calls", "p50 ms", "p95 ms", "calls/s"]);
        for (name, clients, m) in [
            ("stdio", 1, &r.stdio),
            ("http", 1, &r.http),
            ("stdio", 4, &r.stdio_4_clients),
            ("http", 4, &r.http_4_clients),
        ] {
            let rate = m.calls_per_s.map(|c| format!("{c:.1}")).unwrap_or_default();
            t.add_row(vec![
                name.to_string(),
                clients.to_string(),
                m.calls.to_string(),
                format!("{:.2}", m.p50_ms),
                format!("{:.2}", m.p95_ms),
                rate,
            ]);
        }
        print_table(&t)
    }

    /// `exact` is false for an estimate, or for a model the catalogue does not know.
    pub fn token_count(&self, model: &str, tokenizer: &str, exact: bool, count: usize) -> Result<()> {
        if self.json {
            let v = serde_json::json!({"model": model, "tokenizer": tokenizer, "exact": exact, "tokens": count});
            return print_json(&v);
        }
        say!("{count} tokens ({tokenizer}{})", if exact { "" } else { ", approximate" });
        Ok(())
    }

    /// The raw and the compacted prompt for one message and budget, then what differs.
    pub fn compared_contexts(&self, raw: &strata_api::ContextView, compacted: &strata_api::ContextView) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "raw": raw, "compacted": compacted }));
        }
        say!("════ Raw: the memories as they are ════");
        self.context(raw)?;
        say!("\n════ Compacted: concepts stand for their members ════");
        self.context(compacted)?;
        let used = &compacted.report.concepts;
        let covered: usize = used.iter().map(|u| u.covered.len()).sum();
        let saved: i64 = used.iter().map(|u| u.saved).sum();
        let many = |n: usize, one: &str, more: &str| format!("{n} {}", if n == 1 { one } else { more });
        say!(
            "\nRaw: {} in {} tokens. Compacted: {} in {} tokens, {} standing for {} left out ({}).",
            many(raw.report.included.len(), "memory", "memories"),
            raw.report.used,
            many(compacted.report.included.len(), "memory", "memories"),
            compacted.report.used,
            many(used.len(), "concept", "concepts"),
            many(covered, "memory", "memories"),
            if saved >= 0 { format!("{saved} tokens saved") } else { format!("{} tokens more", -saved) }
        );
        Ok(())
    }

    pub fn context(&self, c: &strata_api::ContextView) -> Result<()> {
        for note in &c.notes {
            note!("{note}");
        }
        if self.json {
            return print_json(c);
        }
        let r = &c.report;
        for m in &c.messages {
            say!("── {} ──", m.role);
            for call in &m.tool_calls {
                say!("(calls {} {})", call.name, call.arguments);
            }
            say!("{}", m.content);
        }
        let approx = match (r.exact, r.exact_used) {
            (_, Some(n)) => format!(", {n} by {}", r.exact_counter.as_deref().unwrap_or("the provider")),
            (true, None) => String::new(),
            (false, None) => ", approximate".into(),
        };
        say!(
            "\n{} of {} tokens used ({:.0}%, {}{approx}); memories {}, {} left out; conversation {} of {} messages",
            r.used,
            r.budget,
            r.utilization * 100.0,
            r.tokenizer,
            r.included.len(),
            r.dropped.len(),
            r.history.included,
            r.history.messages,
        );
        let mut t = table(&["section", "tokens", "items", "share"]);
        for (section, s) in &r.sections {
            let name = serde_json::to_value(section)?.as_str().unwrap_or_default().to_string();
            t.add_row(vec![
                name,
                s.tokens.to_string(),
                s.items.to_string(),
                s.share.map_or("-".into(), |v| v.to_string()),
            ]);
        }
        say!("{t}");
        let mut t = table(&["", "score", "tokens", "id", "why"]);
        for d in r.included.iter().chain(r.dropped.iter().take(10)) {
            let label = d.label.map_or("-".into(), |l| format!("[{l}]"));
            let why = match &d.reason {
                strata_context::Reason::Included => "included".to_string(),
                strata_context::Reason::Duplicate { of } => format!("duplicate of {of}"),
                strata_context::Reason::OverBudget => "over budget".to_string(),
                strata_context::Reason::Covered { by } => format!("covered by concept {by}"),
            };
            let tokens = if d.tokens_exact { d.tokens.to_string() } else { format!("≥{}", d.tokens) };
            t.add_row(vec![label, format!("{:.3}", d.score), tokens, d.id.to_string(), why]);
        }
        say!("{t}");
        for u in &r.concepts {
            say!(
                "concept {} ({} tokens) stands for {} left out ({} tokens): {} tokens saved",
                u.id,
                u.tokens,
                u.covered.len(),
                u.covered_tokens,
                u.saved
            );
        }
        if r.dropped.len() > 10 {
            say!("… and {} more left out (--json lists every one)", r.dropped.len() - 10);
        }
        Ok(())
    }

    /// After a streamed answer: a line on where it came from and what it used (stderr, so
    /// the answer alone is on stdout).
    pub fn asked(&self, v: &strata_api::AskView) -> Result<()> {
        if self.json {
            return print_json(v);
        }
        say!("");
        let r = &v.context.report;
        let recorded = v.recorded.as_ref().map_or(String::new(), |m| format!("; remembered as {}", m.id));
        note!(
            "({} {}: {} memories in a {}-token prompt of {}; {} + {} tokens{}{recorded})",
            v.provider,
            v.model,
            r.included.len(),
            r.exact_used.unwrap_or(r.used),
            r.budget,
            v.usage.prompt_tokens,
            v.usage.completion_tokens,
            if v.shrunk { "; shrunk once to fit" } else { "" },
        );
        Ok(())
    }

    /// A piece of a streamed answer, shown at once.
    pub fn piece(&self, text: &str) {
        let mut w = crate::terminal::Stdout;
        let _ = w.write_all(text.as_bytes());
        let _ = w.flush();
    }

    /// The memories an answer was given, and why (`/memories`).
    pub fn injected(&self, r: &strata_context::Report) -> Result<()> {
        if self.json {
            return print_json(&r.included);
        }
        if r.included.is_empty() {
            say!("No memories went into the last prompt ({} candidates left out).", r.dropped.len());
            return Ok(());
        }
        let mut t = table(&["", "section", "score", "tokens", "id"]);
        for d in &r.included {
            let section = serde_json::to_value(d.section)?.as_str().unwrap_or_default().to_string();
            t.add_row(vec![
                d.label.map_or("-".into(), |l| format!("[{l}]")),
                section,
                format!("{:.3}", d.score),
                d.tokens.to_string(),
                d.id.to_string(),
            ]);
        }
        print_table(&t)
    }

    /// A one-line confirmation.
    pub fn done(&self, sentence: &str) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "done": sentence }));
        }
        say!("{sentence}");
        Ok(())
    }

    pub fn key_status(&self, rows: &[(String, strata_providers::keys::KeySource)]) -> Result<()> {
        use strata_providers::keys::KeySource;
        if self.json {
            let v: serde_json::Map<String, serde_json::Value> =
                rows.iter().map(|(p, s)| Ok((p.clone(), serde_json::to_value(s)?))).collect::<Result<_>>()?;
            return print_json(&v);
        }
        let mut t = table(&["provider", "key"]);
        for (p, s) in rows {
            let from = match s {
                KeySource::Environment(var) => format!("from the environment ({var})"),
                KeySource::Keychain => "in the OS keychain".into(),
                KeySource::Missing => "none".into(),
            };
            t.add_row(vec![p.clone(), from]);
        }
        print_table(&t)
    }

    pub fn token_pieces(&self, pieces: &[&str]) -> Result<()> {
        if self.json {
            return print_json(&pieces);
        }
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                say!("---");
            }
            say!("{p}");
        }
        Ok(())
    }

    pub fn token_bench(&self, r: &strata_bench::tokenbench::TokenReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!("Token counting: {} texts ({} bytes) one by one, and joined as one document.", r.texts, r.bytes);
        let mut t = table(&["implementation", "encoding", "tokens", "short tok/s", "long tok/s"]);
        for run in &r.runs {
            for (name, f) in &run.encodings {
                t.add_row(vec![
                    run.implementation.clone(),
                    name.clone(),
                    f.short_tokens.to_string(),
                    format!("{:.0}", f.short_tokens_per_s),
                    format!("{:.0}", f.long_tokens_per_s),
                ]);
            }
        }
        print_table(&t)?;
        for (name, ratio) in &r.ratio {
            say!(
                "{name}: Strata / reference = {:.2} (short), {:.2} (long)",
                ratio.get("short").copied().unwrap_or(0.0),
                ratio.get("long").copied().unwrap_or(0.0)
            );
        }
        for name in &r.disagreements {
            say!("{name}: the two disagree on the number of tokens");
        }
        Ok(())
    }

    pub fn answer_bench(&self, r: &strata_bench::answerbench::AnswerReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "{}: {} questions over {} memories, greedy, at most {} tokens an answer, layout {}.",
            r.model,
            r.questions,
            r.memories,
            r.max_tokens,
            serde_json::to_value(r.layout)?.as_str().unwrap_or_default()
        );
        for run in &r.runs {
            say!();
            say!(
                "Budget {}: {:.0} prompt tokens and {:.1} memories on average; first token {:.0} ms mean, {:.0} ms p95; \
                 answer {:.0} ms mean, {:.0} ms p95; {:.0} s in all. Misled by a wrong past answer: {} of {}.",
                run.budget.map_or("default".to_string(), |b| b.to_string()),
                run.mean_prompt_tokens,
                run.mean_injected,
                run.first_token.mean_ms,
                run.first_token.p95_ms,
                run.total.mean_ms,
                run.total.p95_ms,
                run.wall_seconds,
                run.misleading.1,
                run.misleading.0
            );
            let mut t = table(&[
                "category",
                "questions",
                "right",
                "share",
                "with source",
                "source alone",
                "retrieval hit",
                "wrong despite hit",
            ]);
            for s in &run.scores {
                t.add_row(vec![
                    s.category.clone(),
                    s.questions.to_string(),
                    s.right.to_string(),
                    format!("{:.2}", s.share),
                    format!("{:.2}", s.share_with_source),
                    format!("{:.2}", s.share_by_source),
                    s.retrieval_hit_share.map_or("-".into(), |h| format!("{h:.2}")),
                    s.wrong_with_hit.to_string(),
                ]);
            }
            print_table(&t)?;
        }
        Ok(())
    }

    pub fn answer_training(&self, r: &strata_bench::answertrain::TrainReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "Trained on {} examples from {} households ({} answered \"I don't know\"), {:.0} tokens each on average, \
             budget {}: {}",
            r.examples,
            r.households,
            r.dont_know,
            r.mean_tokens,
            r.budget.map_or("default".to_string(), |b| b.to_string()),
            training_outcome(&r.losses, r.seconds, r.perplexity, &r.adapter)
        );
        Ok(())
    }

    pub fn extraction_training(&self, r: &strata_bench::extracttrain::ExtractTrainReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "Trained on {} conversations and {} merge questions, {:.0} tokens each on average: {}",
            r.conversations,
            r.merges,
            r.mean_tokens,
            training_outcome(&r.losses, r.seconds, r.perplexity, &r.adapter)
        );
        Ok(())
    }

    pub fn chat_bench(&self, r: &strata_bench::chatbench::ChatBench) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!(
            "{}: loaded in {:.0} ms; {:.0} MiB resident ({:.0} MiB peak).",
            r.model,
            r.load_ms,
            r.resident_mib,
            r.peak_mib
        );
        let mut t = table(&["prompt tokens", "prompt tok/s", "first token ms", "generated", "generated tok/s"]);
        for run in &r.runs {
            t.add_row(vec![
                run.prompt_tokens.to_string(),
                format!("{:.0}", run.prompt_tokens_per_s),
                format!("{:.0}", run.first_token_ms),
                run.generated_tokens.to_string(),
                format!("{:.1}", run.generated_tokens_per_s),
            ]);
        }
        print_table(&t)
    }

    pub fn embed_bench(&self, r: &strata_bench::embedbench::EmbedReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        say!("{} sentences ({} words on average), {} single queries.", r.sentences, r.mean_words, r.queries);
        let mut t = table(&[
            "implementation",
            "batch 1 /s",
            "batch 16 /s",
            "batch 64 /s",
            "query p50 ms",
            "query p95 ms",
            "cosine with ours (min / mean)",
        ]);
        for f in &r.runs {
            let at = |b: &str| f.per_second.get(b).map_or("-".into(), |v| format!("{v:.0}"));
            t.add_row(vec![
                f.implementation.clone(),
                at("1"),
                at("16"),
                at("64"),
                format!("{:.1}", f.query_p50_ms),
                format!("{:.1}", f.query_p95_ms),
                f.agreement.as_ref().map_or("-".into(), |a| format!("{:.6} / {:.6}", a.min_cosine, a.mean_cosine)),
            ]);
        }
        print_table(&t)
    }

    pub fn maintained(&self, moves: &[strata_core::Move], dry_run: bool) -> Result<()> {
        if self.json {
            return print_json(moves);
        }
        if moves.is_empty() {
            say!("Every memory is in its tier; nothing to move.");
            return Ok(());
        }
        let mut t = table(&["id", "change", "why"]);
        for m in moves {
            match m {
                strata_core::Move::Tier { id, from, to, reason } => {
                    t.add_row(vec![id.to_string(), format!("{from} → {to}"), reason.clone()]);
                }
                strata_core::Move::Expire { id, reason } => {
                    t.add_row(vec![id.to_string(), "expire".to_string(), reason.clone()]);
                }
            }
        }
        print_table(&t)?;
        if dry_run {
            say!("\nA preview: nothing was changed. Run `strata maintain` to apply.");
        }
        Ok(())
    }

    pub fn demo(&self, c: &ImportCounts) -> Result<()> {
        if self.json {
            return print_json(c);
        }
        if c.total() == 0 {
            say!("The demo memories are already here (tag 'demo'). Try `strata list` or `strata search napoleon`.");
        } else {
            say!(
                "Added {} semantic, {} episodic and {} procedural demo memories. Try `strata list` or `strata search napoleon`.",
                c.semantic,
                c.episodic,
                c.procedural
            );
        }
        Ok(())
    }
}

/// How an adapter's training went: steps and loss, time, what it cost in general perplexity,
/// where it was written.
fn training_outcome(losses: &[f32], seconds: f64, perplexity: (f64, f64), adapter: &std::path::Path) -> String {
    let first = losses.first().copied().unwrap_or_default();
    let last = losses.last().copied().unwrap_or_default();
    format!(
        "{} steps, loss {first:.3} → {last:.3}, {seconds:.0} s. General perplexity {:.2} without the adapter, \
         {:.2} with it. Adapter: {}",
        losses.len(),
        perplexity.0,
        perplexity.1,
        adapter.display()
    )
}

/// Evidence recall within each budget, turns alone and with facts beside them.
fn fact_recall(r: &strata_bench::factrecall::FactRecall) -> Result<()> {
    say!(
        "  {} questions about those sessions, {} facts beside the turns: evidence in the prompt",
        r.questions,
        r.facts
    );
    for (budget, turns) in &r.turns_only {
        let with = r.with_facts.get(budget).copied().unwrap_or(0.0);
        let share = r.fact_token_share.get(budget).copied().unwrap_or(0.0);
        say!(
            "    {budget:>5} tokens: turns alone {turns:.3}, with facts {with:.3} ({:.0}% of the tokens facts)",
            share * 100.0
        );
    }
    Ok(())
}

/// The day of a stored time (`2026-01-31T12:00:00Z` → `2026-01-31`).
fn day(time: &str) -> &str {
    time.get(..10).unwrap_or(time)
}
