//! `strata datasets`: the samples of `strata-datasets` loaded, listed, read, queried with SQL,
//! searched with citations (the on-device embedder), reloaded and forgotten, as a person types.

use std::path::PathBuf;

use crate::Env;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../strata-datasets/tests/data").join(name).display().to_string()
}

#[test]
fn files_are_loaded_queried_searched_and_forgotten() {
    let e = Env::new();
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
    assert!(outside.stderr.contains("it reads events, which is not this dataset"), "{}", outside.stderr);

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
