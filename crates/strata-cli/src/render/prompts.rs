//! Printing prompts and answers: token counts and pieces, an assembled context and its
//! report, a turn's answer as it streams, the memories it was given.

use std::io::Write;

use anyhow::Result;

use super::{Out, print_json, print_table, table};

impl Out {
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
            let tokens = if d.tokens_exact { d.tokens.to_string() } else { format!("≥{}", d.tokens) };
            t.add_row(vec![label, format!("{:.3}", d.score), tokens, d.id.to_string(), reason_words(&d.reason)]);
        }
        say!("{t}");
        if !r.passages.is_empty() {
            let mut t = table(&["", "score", "tokens", "dataset", "from", "why"]);
            for d in &r.passages {
                t.add_row(vec![
                    d.label.map_or("-".into(), |l| format!("[{l}]")),
                    format!("{:.3}", d.score),
                    d.tokens.to_string(),
                    d.dataset.clone(),
                    format!("{}, {}", d.source, d.place),
                    reason_words(&d.reason),
                ]);
            }
            say!("From files:\n{t}");
        }
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
        if let Some(check) = v.check.as_ref().filter(|c| !c.borne_out) {
            // The model's sentence was streamed above; no memory bears it out.
            say!("{}", v.answer);
            let why = match &check.lacks {
                Some(l) if l.starts_with("it ") => l.clone(),
                Some(l) => format!("it does not give {l}"),
                None => format!("the memories it was given do not say {}", check.unsupported.join(", ")),
            };
            note!("(the model's sentence above is not the answer: {why})");
        }
        for f in v.files.iter().filter(|f| f.cited) {
            say!("[{}] {}, {} (dataset {})", f.label, f.source, f.place, f.dataset);
        }
        let r = &v.context.report;
        let recorded = v.recorded.as_ref().map_or(String::new(), |m| format!("; remembered as {}", m.id));
        note!(
            "({} {}: {} memories{} in a {}-token prompt of {}; {} + {} tokens{}{recorded})",
            v.provider,
            v.model,
            r.included.len(),
            if v.files.is_empty() { String::new() } else { format!(" and {} passages of files", v.files.len()) },
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

    /// The memories (and passages of files) an answer was given, and why (`/memories`).
    pub fn injected(&self, r: &strata_context::Report) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "memories": r.included, "passages": r.passages }));
        }
        let files: Vec<String> = r
            .passages
            .iter()
            .filter_map(|p| p.label.map(|l| format!("[{l}] {}, {} (dataset {})", p.source, p.place, p.dataset)))
            .collect();
        if !files.is_empty() {
            say!("From files:\n{}", files.join("\n"));
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
}

/// Why a memory or passage is in the prompt or not, in words.
fn reason_words(reason: &strata_context::Reason) -> String {
    match reason {
        strata_context::Reason::Included => "included".to_string(),
        strata_context::Reason::Duplicate { of } => format!("duplicate of {of}"),
        strata_context::Reason::OverBudget => "over budget".to_string(),
        strata_context::Reason::Covered { by } => format!("covered by concept {by}"),
    }
}
