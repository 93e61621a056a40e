//! `strata datasets`: the samples of `strata-datasets` loaded, listed, read, queried with SQL,
//! searched with citations (the on-device embedder), reloaded and forgotten, as a person types.

use std::path::PathBuf;

use crate::Env;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../strata-datasets/tests/data").join(name).display().to_string()
}

#[test]
fn files_are_loaded_queried_searched_and_forgotten() {
    loaded_queried_searched_and_forgotten(&Env::new());
}

#[test]
fn files_are_loaded_queried_searched_and_forgotten_on_postgres() {
    loaded_queried_searched_and_forgotten(&Env::postgres());
}

fn loaded_queried_searched_and_forgotten(e: &Env) {
    assert!(e.ok(&["datasets"]).contains("No datasets yet: `strata datasets load FILE`"));
    let loaded = e.ok(&["datasets", "load", &sample("expenses.csv"), &sample("contract.pdf")]);
    assert!(loaded.contains("Loaded: expenses from expenses.csv — 48 rows, 5 columns"), "{loaded}");
    assert!(loaded.contains("Loaded: contract from contract.pdf — 3 pages, 3 passages"), "{loaded}");
    let list = e.ok(&["datasets", "list"]);
    assert!(list.contains("expenses") && list.contains("table") && list.contains("48 rows, 5 columns"), "{list}");

    let page = e.ok(&["datasets", "show", "expenses", "--from", "2", "--limit", "2"]);
    assert!(page.contains("Columns: date, category, description, amount, currency"), "{page}");
    assert!(page.contains("2025-01-10") && page.contains("Rows 2–3 of 48."), "{page}");
    assert!(page.contains("searchable by meaning"), "{page}");

    let sum = e.ok(&[
        "datasets",
        "sql",
        "expenses",
        "SELECT category, count(*) AS n FROM expenses WHERE category = 'rent' GROUP BY category",
    ]);
    assert!(sum.contains("rent") && sum.contains("8") && sum.contains("1 row in"), "{sum}");
    let refused = e.run(&["datasets", "sql", "expenses", "DELETE FROM expenses"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("only a SELECT can run over a dataset: this statement begins with DELETE"));
    let outside = e.run(&["datasets", "sql", "expenses", "SELECT * FROM events"]);
    // On PostgreSQL the statement runs over a copy of the one table: nothing else is there.
    let says = if e.store.is_some() { "no such table: events" } else { "it reads events, which is not this dataset" };
    assert!(outside.stderr.contains(says), "{}", outside.stderr);

    let hits = e.ok(&["datasets", "search", "how much is the deposit"]);
    let first = hits.lines().next().unwrap_or_default();
    assert_eq!(first, "[1] contract — contract.pdf, page 2, lines 1–4", "{hits}");
    assert!(hits.contains("1,900 euros"), "{hits}");
    let json = e.json(&["datasets", "search", "rent in Lisbon", "--in", "expenses", "--limit", "3"]);
    assert!(json.as_array().unwrap().iter().all(|h| h["dataset"] == "expenses"), "{json}");

    let csv = e.ok(&["datasets", "export", "expenses"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "date,category,description,amount,currency");
    assert_eq!(lines.len(), 49);
    assert!(csv.contains("'=HYPERLINK"), "a formula is shown, never run: {csv}");
    assert!(!csv.contains(",=HYPERLINK"));

    let again = e.ok(&["datasets", "load", &sample("expenses.csv")]);
    assert!(again.contains("Already loaded, unchanged: expenses"), "{again}");

    let forgot = e.run(&["datasets", "forget", "contract"]);
    assert_eq!(forgot.code, 0, "{}", forgot.stderr);
    assert!(forgot.stderr.contains("Forgot contract"), "{}", forgot.stderr);
    let after = e.ok(&["datasets", "search", "how much is the deposit"]);
    assert!(!after.contains("contract"), "a forgotten dataset is not found: {after}");
    let unknown = e.run(&["datasets", "forget", "contract"]);
    assert!(unknown.stderr.contains("no dataset named contract"), "{}", unknown.stderr);
    let bad = e.run(&["datasets", "load", &sample("image.csv")]);
    assert!(bad.stderr.contains("image.csv is not text: it is a PNG picture"), "{}", bad.stderr);
    assert_eq!(e.json(&["datasets"]).as_array().unwrap().len(), 1);
}

/// An OpenAI stream whose answer is `text`, in the shape the provider's replays have.
fn openai_stream(text: &str) -> String {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let v = serde_json::json!({"id": "chatcmpl-sql", "object": "chat.completion.chunk", "created": 1733000000,
            "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let mut s = chunk(serde_json::json!({"role": "assistant", "content": ""}), serde_json::Value::Null);
    s += &chunk(serde_json::json!({"content": text}), serde_json::Value::Null);
    s += &chunk(serde_json::json!({}), serde_json::json!("stop"));
    s + "data: [DONE]\n\n"
}

/// A question in words over a table, with OpenAI replayed from a loopback server: the model
/// is shown the table and writes the SQL, Strata runs it and shows both; a statement that
/// writes is refused with what the model wrote.
#[test]
fn a_question_in_words_is_answered_by_the_sql_the_model_wrote() {
    let e = Env::new();
    e.ok(&["datasets", "load", "--no-embed", &sample("expenses.csv")]);
    let ask = |url: &str| {
        crate::strata()
            .args(["datasets", "ask", "expenses", "What do I spend most on?", "--provider", "openai"])
            .env("STRATA_DB", e.db())
            .env("OPENAI_API_KEY", "sk-test-PLANTED-0043")
            .env("OPENAI_BASE_URL", url)
            .output()
            .unwrap()
    };
    let (url, seen) = crate::providers::loopback(|_, _| (200, "text/event-stream", openai_stream_static()));
    let out = ask(&url);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.starts_with(
            "openai gpt-4o-mini wrote: SELECT category, sum(amount) AS spent FROM expenses GROUP BY category ORDER BY spent DESC LIMIT 1"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("rent") && stdout.contains("7600") && stdout.contains("1 row in"), "{stdout}");
    let request = &seen.lock().unwrap()[0].1;
    assert!(request.contains("amount REAL") && request.contains("What do I spend most on?"), "{request}");
    assert!(request.contains("2025-01-03"), "the model sees the first rows: {request}");

    let (bad, _) = crate::providers::loopback(|_, _| (200, "text/event-stream", openai_stream_delete()));
    let out = ask(&bad);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("openai gpt-4o-mini did not write a SELECT; it said: DELETE FROM expenses"), "{stderr}");
}

fn openai_stream_static() -> String {
    openai_stream(
        "```sql\nSELECT category, sum(amount) AS spent FROM expenses GROUP BY category ORDER BY spent DESC LIMIT 1;\n```",
    )
}

fn openai_stream_delete() -> String {
    openai_stream("DELETE FROM expenses")
}

/// `strata ask --dataset`: the passages of a file go into the prompt labelled with their place,
/// and the answer's citation is shown under it (OpenAI replayed from a loopback server).
#[test]
fn ask_draws_on_a_chosen_file_and_shows_what_the_answer_cites() {
    let e = Env::new();
    e.ok(&["datasets", "load", "--no-embed", &sample("contract.pdf")]);
    let (url, seen) =
        crate::providers::loopback(|_, _| (200, "text/event-stream", openai_stream("The deposit is 1,900 euros [1].")));
    let ask = |dataset: &str| {
        crate::strata()
            .args(["ask", "How much is the deposit?", "--provider", "openai", "--dataset", dataset, "--no-record"])
            .env("STRATA_DB", e.db())
            .env("OPENAI_API_KEY", "sk-test-PLANTED-0043")
            .env("OPENAI_BASE_URL", &url)
            .output()
            .unwrap()
    };
    let out = ask("contract");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("The deposit is 1,900 euros [1]."), "{stdout}");
    assert!(stdout.contains("[1] contract.pdf, page 2, lines 1–4 (dataset contract)"), "{stdout}");
    assert!(stderr.contains("passages of files"), "{stderr}");
    let request = seen.lock().unwrap()[0].1.clone();
    assert!(request.contains("[1] (contract.pdf, page 2, lines 1–4)"), "{request}");
    let out = ask("contracts");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no dataset named contracts"));
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing was sent for an unknown dataset");

    // `strata chat --dataset`: `/memories` lists the passages that went in.
    use std::io::Write;
    let mut child = crate::strata()
        .args(["chat", "--provider", "openai", "--dataset", "contract"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-PLANTED-0043")
        .env("OPENAI_BASE_URL", &url)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"How much is the deposit?\n/memories\n/quit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("From files:\n[1] contract.pdf, page 2, lines 1–4 (dataset contract)"), "{stdout}");
}

/// `strata serve` asked by the official OpenAI SDK to draw on a dataset (`extra_body`): the
/// passages in the prompt come back beside the answer; an unknown or malformed choice is
/// refused in OpenAI's shape.
#[test]
fn the_memory_proxy_draws_on_a_dataset_the_client_names() {
    use std::process::Command;
    let e = Env::new();
    e.ok(&["datasets", "load", "--no-embed", &sample("contract.pdf")]);
    let args = ["serve", "--port", "0", "--token", "local-secret", "--model", "smollm2-135m"];
    let (mut server, url) = crate::spawn_server(&e, &args, "memory proxy");
    let script = format!("{}/tests/fixtures/openai_files.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(crate::python()).args([&script, &url, "local-secret"]).output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = v["strata"]["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["dataset"] == "contract" && f["source"] == "contract.pdf"), "{v}");
    assert!(files.iter().any(|f| f["place"] == "page 2, lines 1–4" && f["label"].is_u64()), "{v}");
    assert_eq!(v["unknown"][0], 404);
    assert!(v["unknown"][1].as_str().unwrap().contains("no dataset named nothing"), "{v}");
    assert_eq!(v["malformed"][0], 400);
    assert!(v["malformed"][1].as_str().unwrap().contains("'strata.datasets' must be a list"), "{v}");
}
