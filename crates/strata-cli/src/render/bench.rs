//! Printing the benchmarks' reports (`strata bench …`).

use anyhow::Result;

use super::{Out, print_json, print_table, table};

impl Out {
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
        if let Some(w) = &r.written {
            say!(
                "Summaries written by {}: {} ({} kept what the memories said), {} sentences kept, {} dropped by the check, {:.0} s",
                w.model,
                w.written,
                w.kept_extractive,
                w.sentences_kept,
                w.sentences_dropped,
                w.seconds
            );
        }
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
                "unchecked",
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
                    format!("{:.2}", s.share_unchecked),
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
