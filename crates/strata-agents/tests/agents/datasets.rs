//! The datasets' tools: an agent lists the person's datasets, queries a table with one
//! read-only SELECT and searches a document; a refused statement is a result it reads.

use serde_json::json;
use strata_api::agents::{RunOutcome, SharedAccess};

use crate::*;

fn load(e: &mut Engine, file: &str, text: &str) {
    for d in strata_datasets::read_bytes(file, text.as_bytes(), None).unwrap() {
        e.load_dataset(&d).unwrap();
    }
}

#[test]
fn an_agent_lists_queries_and_searches_the_persons_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(&dir);
    load(&mut e, "expenses.csv", "category,amount\nrent,1200\nfood,310.5\nfood,89.5\ntravel,420\n");
    load(
        &mut e,
        "handbook.md",
        "# Leave\n\nEvery person has 25 days of paid leave a year.\n\n# Travel\n\nTrain tickets are refunded \
         in full.\n",
    );
    e.define_agent("Clerk", spec(&["list_datasets", "query_dataset", "search_datasets"], &[], SharedAccess::None))
        .unwrap();
    let script = Script::new(&[
        ("Clerk", Ok(calls(&[("list_datasets", json!({}))]))),
        (
            "Clerk",
            Ok(calls(&[(
                "query_dataset",
                json!({"dataset": "expenses", "sql": "SELECT category, sum(amount) AS total FROM expenses GROUP BY category ORDER BY total DESC"}),
            )])),
        ),
        ("Clerk", Ok(calls(&[("query_dataset", json!({"dataset": "expenses", "sql": "DELETE FROM expenses"}))]))),
        ("Clerk", Ok(calls(&[("search_datasets", json!({"query": "train tickets refunded"}))]))),
        ("Clerk", Ok(says("Rent is the largest expense; train tickets are refunded in full."))),
    ]);
    let report = go(&mut e, &script, "Clerk", "What do we spend most on, and are train tickets refunded?", 10);
    assert_eq!(report.outcome, RunOutcome::Answered);
    let got = results(&report.transcript);
    assert_eq!(got.len(), 4, "{got:?}");
    let (listed, sums, refused, found) = (&got[0], &got[1], &got[2], &got[3]);
    assert!(listed.1.contains("- expenses (table from expenses.csv, 4 rows): columns category, amount"), "{listed:?}");
    assert!(listed.1.contains("- handbook (document from handbook.md, "), "{listed:?}");
    assert_eq!(sums.1, "category | total\nrent | 1200\ntravel | 420\nfood | 400");
    assert!(!sums.2);
    assert!(refused.2, "a write is refused, as a result the model reads: {refused:?}");
    assert!(refused.1.to_lowercase().contains("select"), "{refused:?}");
    assert!(found.1.starts_with("- handbook (handbook.md, "), "{found:?}");
    assert!(found.1.contains("Train tickets are refunded in full."), "{found:?}");
    // The table is unchanged.
    let rows = e.query_dataset("expenses", "SELECT count(*) FROM expenses", Default::default()).unwrap();
    assert_eq!(rows.rows[0][0].display(), "4");
    // Dataset tools are offered only to an agent given them.
    let seen = script.seen.lock().unwrap();
    assert_eq!(seen[0].tools, ["list_datasets", "query_dataset", "search_datasets"]);
}
