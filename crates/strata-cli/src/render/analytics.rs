//! Printing analytics: the store's and recalls' metrics, prompts' use of their budget,
//! compaction passes, health and its fixes.

use anyhow::Result;

use super::{Out, bucket_column, bucket_word, bytes, print_csv, print_json, table, title_of};

impl Out {
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

    pub fn agent_metrics(&self, m: &strata_core::analytics::AgentMetrics) -> Result<()> {
        let head = ["agent", "tasks", "answered", "steps", "tool calls", "failed", "handoffs", "tokens", "mean s"];
        let row = |u: &strata_core::analytics::AgentUse| {
            vec![
                u.agent.clone(),
                u.runs.to_string(),
                u.answered.to_string(),
                u.steps.to_string(),
                u.tool_calls.to_string(),
                u.failed_tools.to_string(),
                u.handoffs.to_string(),
                u.tokens.to_string(),
                format!("{:.1}", u.mean_seconds),
            ]
        };
        if self.csv {
            return print_csv(&head, m.by_agent.iter().map(row));
        }
        if self.json {
            return print_json(m);
        }
        if m.runs == 0 {
            say!("No agent was given a task in this range: `strata agents run NAME \"a task\"` gives one.");
            return Ok(());
        }
        let outcome = |o: &str| match o {
            "answered" => "answered",
            "step_limit" => "stopped at the step limit",
            "cancelled" => "stopped by you",
            "failed" => "failed",
            _ => "not ended",
        };
        let how: Vec<String> = m.outcomes.iter().map(|(o, n)| format!("{n} {}", outcome(o))).collect();
        say!("{} {}: {}.", m.runs, if m.runs == 1 { "task" } else { "tasks" }, how.join(", "));
        let mut t = table(&head);
        for u in &m.by_agent {
            t.add_row(row(u));
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
}
