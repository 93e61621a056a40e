//! The Datasets screen ("Files") as a person uses it: files chosen (the Open dialog's choice
//! comes from `STRATA_OPEN_FILES`) or dropped are loaded with what was kept said in words; a
//! table is read a page at a time and asked a question in words (OpenAI replayed on loopback
//! writes the SQL, shown with its result) or in SQL; a document is read by page and searched
//! with citations; chat answers from a chosen file and shows the passage it cites; forgetting a
//! file erases its words from the store.

use std::time::Duration;

use crate::providers::{KEY, openai_replying};
use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

fn sample(name: &str) -> String {
    format!("{}/crates/strata-datasets/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// OpenAI's stream of one answer.
macro_rules! stream {
    ($text:literal) => {
        concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"",
            $text,
            "\"},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        )
    };
}

const SQL: &str = "SELECT category, sum(amount) AS spent FROM expenses GROUP BY category ORDER BY spent DESC LIMIT 1";

/// The SQL for a table's question, else an answer citing the first passage.
fn reply(body: &str) -> &'static str {
    if body.contains("SQLite SELECT") {
        stream!("SELECT category, sum(amount) AS spent FROM expenses GROUP BY category ORDER BY spent DESC LIMIT 1")
    } else {
        stream!("The deposit is 1,900 euros [1].")
    }
}

fn loaded(s: &Session) -> String {
    s.wait_up_to(Duration::from_secs(120), "the files loaded", |s| {
        if let Some(e) = s.all("#datasets-error").first() {
            panic!("loading failed: {}", s.text(e));
        }
        s.all("#datasets-loaded").first().map(|e| s.text(e))
    })
}

#[test]
fn files_are_loaded_read_asked_searched_used_in_chat_and_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (url, seen) = openai_replying(Duration::ZERO, reply);
    let open = std::env::join_paths([sample("expenses.csv"), sample("contract.pdf")]).unwrap();
    let env =
        [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY), ("STRATA_OPEN_FILES", open.to_str().unwrap())];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    // The model that writes SQL is the chat's: OpenAI here.
    s.click(&s.find("#nav-chat"));
    s.click(&s.find("#chat-provider option[value=openai]"));
    s.type_into(&s.find("#chat-model"), "gpt-4o-mini");

    s.click(&s.find("#nav-files"));
    assert_eq!(s.text(&s.find(".datasets .empty")), "No files yet. Spreadsheets, notes and PDFs you add appear here.");
    // The window listens for files dropped on it (its permission granted).
    let listening = "return document.getElementById('datasets').dataset.drop";
    s.wait_for("the drop listener", |s| (s.execute(listening, serde_json::json!([])) == "ready").then_some(()));
    s.click(&s.find("#datasets-add"));
    let said = loaded(&s);
    assert!(said.contains("Loaded expenses from expenses.csv: 48 rows, 5 columns."), "{said}");
    assert!(said.contains("Loaded contract from contract.pdf: 3 passages."), "{said}");

    // The table, a page at a time, with what it is.
    let about = s.wait_for("the table", |s| s.all("#dataset-about").first().map(|e| s.text(e)));
    assert!(about.starts_with("A table from expenses.csv, loaded"), "{about}");
    assert!(about.contains("Columns: date, category, description, amount, currency."), "{about}");
    assert!(s.text(&s.find("table.rows")).contains("2025-01-03"));
    assert_eq!(s.text(&s.find("#dataset-pager span")), "Rows 1–48 of 48");
    screenshot(&s, "files-table");

    ask_the_table(&s);

    read_the_document(&s);

    // Chat answers from the chosen file and shows what it cites.
    s.click(&s.find("#nav-chat"));
    s.click(&s.find("#chat-files input[name=file-contract]"));
    s.type_into(&s.find("#chat-input"), "How much is the deposit?");
    s.click(&s.find("#chat-send"));
    let used = s.wait_up_to(Duration::from_secs(60), "the answer", |s| {
        if let Some(e) = s.all(".turn .error").first() {
            panic!("the chat failed: {}", s.text(e));
        }
        s.all("#files-used").first().map(|e| s.text(e))
    });
    assert_eq!(s.text(&s.find(".turn .answer")), "The deposit is 1,900 euros [1].");
    assert!(used.contains("[1] contract.pdf, page 2, lines 1–4 · the answer rests on this"), "{used}");
    screenshot(&s, "chat-files");
    let asked = seen.lock().unwrap().iter().find(|b| b.contains("How much is the deposit?")).cloned().unwrap();
    assert!(asked.contains("[1] (contract.pdf, page 2, lines 1–4)"), "{asked}");

    // Forgotten: gone from the list, and its words from the file.
    s.click(&s.find("#nav-files"));
    s.click(&s.find("#dataset-contract"));
    s.click(&s.find("#dataset-forget"));
    s.click(&s.find("#dataset-forget-yes"));
    s.wait_for("the file gone", |s| s.all("#dataset-contract").is_empty().then_some(()));
    assert_eq!(s.all(".dataset-list li").len(), 1);
    s.end();
    drop(driver);
    for file in [db.clone(), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&file) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("returned within 30 days"),
                "{} keeps the contract",
                file.display()
            );
        }
    }
}

/// A question in words (the SQL the model wrote, then what it found) and SQL by hand that
/// would write, refused in words.
fn ask_the_table(s: &Session) {
    // A question in words: the SQL the model wrote, then what it found.
    s.click(&s.find("#tab-ask"));
    s.type_into(&s.find("#table-question"), "What do I spend most on?");
    s.click(&s.find("#table-ask"));
    let shown = s.wait_up_to(Duration::from_secs(60), "the SQL", |s| {
        if let Some(e) = s.all("#table-error").first() {
            panic!("the question failed: {}", s.text(e));
        }
        s.all("#sql-shown").first().map(|e| s.text(e))
    });
    assert_eq!(shown, SQL);
    let result = s.text(&s.find("#sql-result"));
    assert!(result.starts_with("openai gpt-4o-mini wrote this SQL:"), "{result}");
    assert!(result.contains("rent") && result.contains("7600") && result.contains("1 row in"), "{result}");
    screenshot(s, "files-question");
    // SQL by hand that would write is refused, in words.
    s.click(&s.find(".ask-table summary"));
    s.type_into(&s.find("#table-sql"), "DELETE FROM expenses");
    s.click(&s.find("#table-run"));
    let refused = s.wait_for("the refusal", |s| s.all("#table-error").first().map(|e| s.text(e)));
    assert!(refused.contains("only a SELECT can run over a dataset"), "{refused}");
}

/// The document by page, its outline, and a search with citations.
fn read_the_document(s: &Session) {
    // The document by page, and searched with citations.
    s.click(&s.find("#dataset-contract"));
    let page = s.wait_for("the document", |s| {
        s.all(".dataset-pages .citation").first().map(|_| s.text(&s.find(".dataset-pages")))
    });
    assert!(page.contains("page 2, lines 1–4") && page.contains("1,900 euros"), "{page}");
    // Its outline takes the reader to a page.
    s.click(&s.find("#document-outline option[value='2']"));
    let third = s.wait_for("page 3", |s| {
        s.all(".dataset-pages .citation").first().map(|e| s.text(e)).filter(|t| t.starts_with("page 3"))
    });
    assert!(third.starts_with("page 3, lines"), "{third}");
    assert_eq!(s.text(&s.find("#dataset-pager span")), "Passages 3–3 of 3");
    s.click(&s.find("#tab-ask"));
    s.type_into(&s.find("#document-search"), "how much is the deposit");
    s.click(&s.find("#document-go"));
    let hit = s.wait_for("a passage", |s| s.all(".document-hit .citation").first().map(|e| s.text(e)));
    assert_eq!(hit, "[1] contract.pdf, page 2, lines 1–4");
    screenshot(s, "files-document");
}

/// A large file loading leaves the window free: while it is kept (in one transaction, on an
/// engine of its own) a search of the memories answers and settles (its usage record waits for
/// the lock, not the window), a second search answers at once — before that change it waited
/// for the rest of the load, 5.6 s — and the load's progress is still there after the visit.
#[test]
fn the_window_answers_while_a_large_file_loads() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let csv = dir.path().join("ledger.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    writeln!(w, "date,category,description,amount").unwrap();
    for i in 0..1_500_000u32 {
        writeln!(
            w,
            "2025-{:02}-{:02},cat{},bought item number {i} at the market,{}.{:02}",
            i % 12 + 1,
            i % 28 + 1,
            i % 9,
            i % 500,
            i % 100
        )
        .unwrap();
    }
    drop(w);
    let driver = Driver::start_with(&db, &[("STRATA_OPEN_FILES", csv.to_str().unwrap())], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-files"));
    s.click(&s.find("#datasets-add"));
    // What the load does now, read from the page even while another screen is shown.
    let stage = |s: &Session| {
        s.execute("return document.getElementById('job-stage')?.textContent ?? ''", serde_json::json!([]))
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    s.wait_up_to(Duration::from_secs(60), "the file being kept", |s| (stage(s) == "Keeping ledger").then_some(()));

    s.click(&s.find("#nav-memories"));
    let started = std::time::Instant::now();
    s.type_into(&s.find("#search"), "Napoleon Corsica");
    let found = s.wait_for("search results", |s| {
        let t = s.texts(".list li .title");
        (t.len() < 8 && !t.is_empty() && t.iter().all(|x| !x.is_empty())).then_some(t)
    });
    let took = started.elapsed();
    assert!(found[0].starts_with("Napoleon bonaparte"), "{found:?}");
    // The search settles (recorded for analytics) while the file is still being kept, in its
    // one transaction; then another search answers at once.
    std::thread::sleep(Duration::from_millis(1500)); // the search box settles after a second
    let again = std::time::Instant::now();
    s.clear(&s.find("#search"));
    s.type_into(&s.find("#search"), "Einstein relativity");
    let other = s.wait_for("other results", |s| {
        let t = s.texts(".list li .title");
        t.iter().any(|x| x.to_lowercase().contains("relativity")).then_some(t)
    });
    let answered = again.elapsed();
    assert_ne!(other[0], found[0]);
    assert_eq!(stage(&s), "Keeping ledger", "the file was kept before the second search: make it larger");
    assert!(took < Duration::from_secs(3), "the search waited {took:?} for the load");
    assert!(answered < Duration::from_secs(2), "the second search waited {answered:?} for the load");
    // A change saved meanwhile is written between two of the load's batches.
    // The list may be drawn again meanwhile (the search settling): found afresh until it is there.
    // Clicked from the page itself until its page opens: a row found a moment before may be
    // gone by the click (the search settling draws the list again; under a loaded machine the
    // WebDriver click then opened nothing).
    let open = "const row = [...document.querySelectorAll('.list li .row')]\
        .find((r) => r.textContent.includes('Theory of relativity')); \
        if (row && !document.getElementById('edit')) row.click(); \
        return !!document.getElementById('edit');";
    s.wait_for("the memory about relativity opened", |s| {
        (s.execute(open, serde_json::json!([])) == true).then_some(())
    });
    s.click(&s.find("#edit"));
    s.type_into(&s.find("input[name=fact-value-0]"), " (noted while loading)");
    let saving = std::time::Instant::now();
    s.click(&s.find("#save"));
    s.wait_for("the saved change", |s| {
        Some(s.text(&s.find("#detail"))).filter(|t| t.contains("(noted while loading)"))
    });
    let saved = saving.elapsed();
    assert_eq!(stage(&s), "Keeping ledger", "the file was kept before the change was saved: make it larger");
    assert!(saved < Duration::from_secs(3), "the change waited {saved:?} for the load");
    s.click(&s.find("#nav-files"));
    s.wait_up_to(Duration::from_secs(120), "the embedding", |s| stage(s).starts_with("Making passages").then_some(()));
    s.click(&s.find("#job-cancel"));
    let said = loaded(&s);
    assert!(said.starts_with("Loaded ledger from ledger.csv: 1500000 rows, 4 columns."), "{said}");
    assert!(said.contains("searchable by keyword only until they are made searchable by meaning"), "{said}");
    s.end();
}
