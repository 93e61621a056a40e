//! Printing results: readable tables by default, one JSON value with `--json`.

use std::path::Path;

use anyhow::Result;
use comfy_table::{Table, presets};
use serde::Serialize;
use strata_api::dto::{EventView, HitView, MemoryView, PageView, RecallView, StatsView, content_title, truncate};
use strata_api::{ImportFormat, ImportReport, ReplayReport};
use strata_core::error::excerpt;
use strata_core::interchange::seed::ImportCounts;
use strata_core::{Content, EpisodeBody, FactValue};

mod analytics;
mod bench;
mod datasets;
mod prompts;

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
        // A field a spreadsheet would run as a formula is written to be shown (CSV injection).
        w.write_record(row.iter().map(|f| strata_core::datasets::csv_safe(f).into_owned()))?;
    }
    w.flush()?;
    Ok(())
}

/// Prints a table without the padding comfy-table leaves at the start and end of lines.
pub(crate) fn print_table(t: &Table) -> Result<()> {
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

pub(crate) fn table(header: &[&str]) -> Table {
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

    /// What `strata migrate` copied, and how many memories it embedded in the target.
    pub fn migrated(&self, moved: &strata_api::migrate::Migrated, embedded: u64) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({
                "events": moved.events, "memories": moved.memories, "embedded": embedded,
                "datasets": moved.datasets
            }));
        }
        say!(
            "Copied {} events: {} memories, the same as the source's. Embedded {embedded} of them.",
            moved.events,
            moved.memories
        );
        if moved.datasets > 0 {
            say!(
                "Copied {} datasets; their passages are found by keyword until `strata datasets embed` makes them searchable by meaning.",
                moved.datasets
            );
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
        match &c.written_by {
            Some(model) => say!("Summary (written by {model}; every sentence checked against the memories it cites):"),
            None => say!("Summary (what the memories said):"),
        }
        for s in &c.summary {
            let cited: Vec<&str> = std::iter::once(s.from.as_str()).chain(s.also.iter().map(String::as_str)).collect();
            say!("  {}  [{}]", s.text, cited.join(", "));
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

    pub fn summaries_written(&self, r: &strata_api::WriteReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        let words = strata_api::health::words;
        say!(
            "{} wrote {} in {:.0} s ({} kept, {} dropped: a name, number or date no memory it draws on holds, or no memory it draws on)",
            r.model,
            words(r.written as u64, "summary", "summaries"),
            r.seconds,
            words(r.sentences_kept as u64, "sentence", "sentences"),
            r.sentences_dropped
        );
        if r.kept_extractive > 0 {
            say!(
                "{} what {} memories said: none of the model's sentences held up",
                words(r.kept_extractive as u64, "concept keeps", "concepts keep"),
                if r.kept_extractive == 1 { "its" } else { "their" }
            );
        }
        if r.already > 0 {
            say!(
                "{} it had written already {} left as {}",
                words(r.already as u64, "concept", "concepts"),
                if r.already == 1 { "was" } else { "were" },
                if r.already == 1 { "it was" } else { "they were" }
            );
        }
        if r.changed_meanwhile > 0 {
            say!(
                "{} grouped again meanwhile: run it again to write {}",
                words(r.changed_meanwhile as u64, "concept was", "concepts were"),
                if r.changed_meanwhile == 1 { "it" } else { "them" }
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

/// The day of a stored time (`2026-01-31T12:00:00Z` → `2026-01-31`).
fn day(time: &str) -> &str {
    time.get(..10).unwrap_or(time)
}
