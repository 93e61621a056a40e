//! Long jobs in the window: re-embedding, export, import and maintenance show their progress
//! and stop when asked (a stopped import or maintenance changes nothing); the long list stays
//! light (only the rows in view are in the page) and pages in as it scrolls.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use strata_api::{Engine, EngineOptions};

use crate::webdriver::Session;
use crate::{Driver, screenshot};

/// A seed-002 document of `n` facts (`thing0` … with a colour each), `offset` apart from
/// another's.
fn facts(n: usize, offset: usize) -> String {
    let semantic: Vec<String> =
        (offset..offset + n).map(|i| format!(r#""thing{i}": {{"colour": "colour {i}", "size": {i}}}"#)).collect();
    format!(r#"{{"semantic": {{{}}}, "episodic": [], "procedural": {{}}}}"#, semantic.join(", "))
}

fn with_facts(dir: &Path, n: usize) -> std::path::PathBuf {
    let db = dir.join("strata.db");
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    e.import("facts.json", &mut facts(n, 0).as_bytes(), None).unwrap();
    db
}

/// Waits for the running job to report numbers, then stops it; returns the error shown.
fn cancel_when_running(s: &Session, error_css: &str) -> String {
    s.wait_up_to(Duration::from_secs(60), &format!("the job's progress (then {error_css})"), |s| {
        s.all("#job-count").first().map(|e| s.text(e)).filter(|t| t.contains(" of "))
    });
    s.click(&s.find("#job-cancel"));
    s.wait_up_to(Duration::from_secs(30), "the job to stop", |s| s.all(error_css).first().map(|e| s.text(e)))
}

#[test]
fn long_jobs_show_progress_and_stop_and_the_long_list_pages_in() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_facts(dir.path(), 3000);
    // The file the Save dialog would return (a native dialog cannot be driven over WebDriver).
    let backup = dir.path().join("backup.jsonl");
    let driver = Driver::start_with(&db, &[("STRATA_SAVE_AS", backup.to_str().unwrap())], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    // Re-embedding: progress, then stopped (what was embedded stays).
    s.click(&s.find("#nav-settings"));
    s.find("#provider-openai"); // the providers load after the page: the layout settles first
    s.wait_up_to(Duration::from_secs(60), "the embedding job to start", |s| {
        s.click(&s.find("#reembed"));
        let started = s.wait_for("the job or an error", |s| {
            let error = s.all("#tiers-error").first().map(|e| s.text(e));
            let count = s.all("#job-count").first().map(|e| s.text(e)).filter(|t| t.contains(" of "));
            match (count, error) {
                (Some(_), _) => Some(true),
                // The embedding model loads in the background after the window opens.
                (None, Some(t)) if t.contains("no embedding model is loaded") => Some(false),
                (None, Some(t)) => panic!("{t}"),
                (None, None) => None,
            }
        });
        if !started {
            std::thread::sleep(Duration::from_millis(500));
        }
        started.then_some(())
    });
    let stopped = cancel_when_running(&s, "#tiers-error");
    assert!(stopped.contains("embedding stopped after"), "{stopped}");

    // Ready-made rules in words, and back to the defaults.
    let chosen = |s: &Session| s.text(&s.find("#tier-chosen"));
    assert_eq!(chosen(&s), "Now: Balanced.");
    let keep_more = s.all("#tier-presets button").into_iter().find(|b| s.text(b).starts_with("Keep more")).unwrap();
    s.click(&keep_more);
    let field = |name: &str| s.find(&format!("input[name=tier-{name}]"));
    let value = |s: &Session, name: &str| {
        s.execute(&format!("return document.querySelector('input[name=tier-{name}]').value"), json!([]))
    };
    s.wait_for("the preset", |s| (chosen(s) == "Now: Keep more.").then_some(()));
    assert_eq!(value(&s, "working_memory_items"), "40");
    s.click(&s.find("#reset-tiers"));
    s.wait_for("the defaults", |s| (chosen(s) == "Now: Balanced.").then_some(()));

    // Each number is checked as it is typed, and said plainly next to it; Save waits.
    let problem = |s: &Session, name: &str| -> String {
        s.execute(
            &format!("const l = document.querySelector('input[name=tier-{name}]').closest('label').querySelector('.problem'); return l ? l.textContent : ''"),
            json!([]),
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
    };
    s.clear(&field("importance_weight"));
    s.type_into(&field("importance_weight"), "0.9");
    let said = s.wait_for("the weights refused", |s| Some(problem(s, "recency_weight")).filter(|p| p.contains("1.5")));
    assert_eq!(said, "the three weights add up to 1.5; they must add up to 1 (e.g. 0.4, 0.35 and 0.25)");
    assert_eq!(s.execute("return document.getElementById('save-tiers').disabled", json!([])), true);
    s.clear(&field("importance_weight"));
    s.type_into(&field("importance_weight"), "0.4");
    for (name, value) in [("promote_to_long", "0"), ("promote_min_accesses", "0")] {
        s.clear(&field(name));
        s.type_into(&field(name), value);
    }
    let said = s.wait_for("the thresholds refused", |s| Some(problem(s, "demote_below")).filter(|p| !p.is_empty()));
    assert!(said.contains("would move memories back and forth"), "{said}");
    assert_eq!(problem(&s, "recency_weight"), "", "the weights are fine again");
    s.clear(&field("demote_below"));
    s.type_into(&field("demote_below"), "0");
    s.wait_for("no problem left", |s| (s.all(".tier-form .problem").is_empty()).then_some(()));

    // A preview of what the numbers on screen would move, before they are saved.
    let settings_before = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap();
    s.click(&s.find("#maintain-preview"));
    let preview = s.wait_up_to(Duration::from_secs(30), "the preview", |s| {
        s.all("#tiers-notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Would move"))
    });
    assert_eq!(preview, "Would move 3000 memories: 3000 from medium-term to long-term.");
    let settings_after = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap();
    assert_eq!(settings_after, settings_before, "a preview saves nothing");
    assert_eq!(chosen(&s), "Now: your own numbers.");
    s.click(&s.find("#save-tiers"));
    s.wait_for("saved", |s| s.all("#tiers-notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Saved")));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.with_file_name("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["tiers"]["promote_to_long"], 0.0);
    s.click(&s.find("#maintain"));
    let moved = s.wait_up_to(Duration::from_secs(60), "maintenance", |s| {
        s.all("#tiers-notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Moved"))
    });
    assert_eq!(moved, "Moved 3000 memories: 3000 from medium-term to long-term.");
    assert!(s.texts("#moves td").iter().any(|t| t == "medium → long"), "the moves are listed");
    screenshot(&s, "settings-jobs");

    // The list: only the rows in view are in the page; scrolling pages the rest in.
    s.click(&s.find("#nav-memories"));
    // The count is the store's, not the page's.
    let meta = s.wait_for("the count", |s| Some(s.text(&s.find("#meta"))).filter(|t| !t.is_empty()));
    assert_eq!(meta.replace([',', '\u{a0}', '.'], ""), "3000 memories");
    let last_row = |s: &Session| -> usize {
        let i = s.execute("return document.querySelector('.list li:last-child').dataset.index", json!([]));
        i.as_str().and_then(|i| i.parse().ok()).unwrap_or(0)
    };
    // Scrolling to the end pages the rest in, 200 at a time, until the last is in view.
    s.wait_up_to(Duration::from_secs(60), "the end of the list in view", |s| {
        s.execute("const r = document.getElementById('rows'); r.scrollTop = r.scrollHeight;", json!([]));
        (last_row(s) == 2999).then_some(())
    });
    let in_page = s.all(".list li").len();
    assert!(in_page < 80, "3,000 memories, {in_page} rows in the page");
    // A search that matches more than it shows says how many it found in all.
    s.type_into(&s.find("#search"), "colour");
    let meta = s.wait_for("the search's count", |s| {
        // The count of the whole word, not of a half-typed one.
        let whole = s.execute("return document.getElementById('meta').dataset.query", json!([])) == "colour";
        Some(s.text(&s.find("#meta")))
            .filter(|t| whole && t.contains("found"))
            .map(|t| t.replace([',', '\u{a0}', '.'], ""))
    });
    assert_eq!(meta, "The best 50 of more than 1000 found · 3000 memories in all");
    s.clear(&s.find("#search"));

    // Export: Save as… a backup file, with progress; saving again (the dialog asked before
    // replacing it) writes it whole again.
    s.click(&s.find(".export summary"));
    s.click(&s.find("#export-format option[value=backup]"));
    assert_eq!(s.text(&s.find("#export")), "Save as…");
    assert!(s.all("#export-path").is_empty(), "no path to type");
    s.click(&s.find("#export"));
    let notice = s.wait_up_to(Duration::from_secs(30), "the export", |s| {
        s.all("#notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Exported"))
    });
    let lines = std::fs::read_to_string(&backup).unwrap().lines().count();
    // The number as the window writes it ("3,001"); the backup's first line is its header.
    assert_eq!(notice.replace(',', ""), format!("Exported {} changes to {}.", lines - 1, backup.display()));
    std::fs::write(&backup, "old").unwrap();
    s.click(&s.find("#export"));
    // Written whole, and the job over in the window (the import waits for it: a file input
    // that is disabled takes no file).
    s.wait_up_to(Duration::from_secs(30), "the second export", |s| {
        let written = std::fs::read_to_string(&backup).unwrap_or_default().lines().count() == lines;
        let over = s.execute("return !document.getElementById('import').disabled", json!([])) == true;
        (written && over).then_some(())
    });

    // Import: a large file, stopped half-way: nothing of it is kept.
    let big = dir.path().join("big.json");
    std::fs::write(&big, facts(30_000, 10_000)).unwrap();
    s.type_into(&s.find("#import"), big.to_str().unwrap());
    let stopped = cancel_when_running(&s, "#transfer-error");
    assert!(stopped.contains("the import was stopped; nothing was imported"), "{stopped}");
    s.end();
    drop(driver);

    let stats = Engine::open(&db, EngineOptions::default()).unwrap().stats().unwrap();
    assert_eq!(stats.memories, 3000, "the stopped import left nothing");
    assert_eq!(stats.by_tier, [("long".to_string(), 3000)], "maintenance moved them to long-term");
}
