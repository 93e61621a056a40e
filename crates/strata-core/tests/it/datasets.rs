//! Datasets on both engines (a real SQLite file, a real PostgreSQL): kept whole or not at all,
//! read by page, queried by a SQL statement that may read the dataset and nothing else,
//! searched by keyword and meaning with their places, reloaded, and forgotten down to the
//! file's bytes (SQLite) and every row version (PostgreSQL).

use std::time::Duration;

use strata_core::datasets::*;
use strata_core::vectors::HashEmbedder;
use strata_core::{Embedder, Error};

use crate::support::*;

fn table(name: &str, digest: &str) -> NewDataset {
    let columns = vec![
        Column { name: "day".into(), header: "Day".into(), kind: ColumnType::Text },
        Column { name: "category".into(), header: "Category".into(), kind: ColumnType::Text },
        Column { name: "amount".into(), header: "Amount (€)".into(), kind: ColumnType::Real },
    ];
    let rows: Vec<Vec<Cell>> = [
        ("2025-01-03", "groceries", 42.5),
        ("2025-01-10", "rent", 950.0),
        ("2025-01-17", "groceries", 17.25),
        ("2025-01-24", "books", 23.0),
    ]
    .iter()
    .map(|(d, c, a)| vec![Cell::Text(d.to_string()), Cell::Text(c.to_string()), Cell::Real(*a)])
    .collect();
    let chunks = rows
        .iter()
        .enumerate()
        .map(|(i, r)| Chunk {
            text: format!("Day: {}; Category: {}; Amount: {}", r[0].display(), r[1].display(), r[2].display()),
            place: Place { row: Some(i as u64 + 1), ..Place::default() },
        })
        .collect();
    NewDataset {
        name: name.into(),
        source: format!("{name}.csv"),
        format: "csv".into(),
        digest: digest.into(),
        kind: DatasetKind::Table,
        columns,
        rows,
        sections: Vec::new(),
        chunks,
        notes: vec!["a note".into()],
    }
}

fn document(secret: &str) -> NewDataset {
    let passage = |text: &str, page: u32, line: u32| Chunk {
        text: text.into(),
        place: Place { page: Some(page), heading: None, lines: (line, line + 1), row: None },
    };
    NewDataset {
        name: "contract".into(),
        source: "contract.pdf".into(),
        format: "pdf".into(),
        digest: "c1".into(),
        kind: DatasetKind::Document,
        columns: Vec::new(),
        rows: Vec::new(),
        sections: vec![Section { page: Some(1), heading: Some("Rental agreement".into()), depth: 0, line: 1 }],
        chunks: vec![
            passage("The agreement starts on 1 February and runs for two years.", 1, 2),
            passage(&format!("The monthly rent is 950 euros; the deposit code is {secret}."), 2, 3),
            passage("Either party may end the agreement with 60 days of notice.", 3, 1),
        ],
        notes: Vec::new(),
    }
}

fn invalid(e: Error) -> String {
    match e {
        Error::Invalid(m) => m,
        other => panic!("expected a refusal in words, got {other:?}"),
    }
}

/// How many rows tables of datasets the store's database holds.
fn rows_tables(f: &Fixture) -> i64 {
    if f.url.is_some() {
        f.count_rows("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dataset_rows_%'")
    } else {
        f.count_rows("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'dataset_rows_%'")
    }
}

on_both_engines! {
fn a_table_is_kept_paged_and_queried_by_its_name(f: &mut Fixture) {
    let (d, loaded) = f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    assert_eq!(loaded, Loaded::Added);
    assert_eq!((d.kind, d.rows, d.chunks, d.notes.clone()), (DatasetKind::Table, 4, 4, vec!["a note".to_string()]));
    assert_eq!(f.store.datasets("alex", None).unwrap().len(), 1);
    assert!(f.store.datasets("bo", None).unwrap().is_empty(), "another person does not see it");
    let page = f.store.dataset_rows("alex", "expenses", 1, 2).unwrap();
    assert_eq!(page[0][1], Cell::Text("rent".into()));
    assert_eq!(page.len(), 2);

    let sum = f
        .store
        .dataset_sql(
            "alex",
            "expenses",
            "SELECT category, sum(amount) AS spent FROM expenses GROUP BY category ORDER BY spent DESC",
            SqlLimits::default(),
        )
        .unwrap();
    assert_eq!(sum.columns, vec!["category", "spent"]);
    assert_eq!(sum.rows[0], vec![Cell::Text("rent".into()), Cell::Real(950.0)]);
    assert_eq!(sum.rows[1], vec![Cell::Text("groceries".into()), Cell::Real(59.75)]);
    assert!(!sum.cut_off);

    let cut = f
        .store
        .dataset_sql("alex", "expenses", "SELECT * FROM expenses", SqlLimits { rows: 3, ..SqlLimits::default() })
        .unwrap();
    assert_eq!((cut.rows.len(), cut.cut_off), (3, true));
    assert!(matches!(f.store.dataset_sql("bo", "expenses", "SELECT 1", SqlLimits::default()), Err(Error::NotFound(_))));
}

/// On PostgreSQL a statement runs over a SQLite copy of the one table: the store's other
/// tables are not there to read ("no such table"), where SQLite's authorizer names them.
fn sql_may_read_the_dataset_and_nothing_else(f: &mut Fixture) {
    f.add(concept("secret", &[("pin", "4321")]));
    f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    f.store.load_dataset("bo", &table("salaries", "d2")).unwrap();
    let refused = |sql: &str| invalid(f.store.dataset_sql("alex", "expenses", sql, SqlLimits::default()).unwrap_err());
    let elsewhere = |says: &'static str| if f.url.is_some() { "no such table" } else { says };
    for (sql, says) in [
        ("DELETE FROM expenses", "only a SELECT"),
        ("INSERT INTO expenses (day) VALUES ('x')", "only a SELECT"),
        ("UPDATE expenses SET amount = 0", "only a SELECT"),
        ("DROP TABLE expenses", "only a SELECT"),
        ("SELECT content FROM memories", elsewhere("it reads memories, which is not this dataset")),
        ("SELECT * FROM events", elsewhere("it reads events")),
        ("SELECT count(*) FROM memories", elsewhere("it reads memories")),
        ("SELECT count(*) FROM main.events", elsewhere("it reads events")),
        ("WITH m AS (SELECT * FROM memories) SELECT count(*) FROM m", elsewhere("it reads memories")),
        ("SELECT name FROM sqlite_schema", "it reads sqlite_"),
        ("SELECT * FROM salaries", "no such table"),
        ("SELECT * FROM main.dataset_rows_2", elsewhere("it reads dataset_rows_2")),
        ("SELECT * FROM pg_catalog.pg_tables", "no such table"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", "begins with ATTACH"),
        ("PRAGMA table_info(expenses)", "begins with PRAGMA"),
        ("SELECT * FROM pragma_table_info('memories')", "PRAGMA"),
        ("WITH x AS (SELECT 1) DELETE FROM expenses", "only a SELECT"),
        ("SELECT load_extension('x')", "load_extension"),
        ("SELECT 1; DELETE FROM expenses", "one statement at a time"),
    ] {
        let message = refused(sql);
        assert!(message.to_lowercase().contains(&says.to_lowercase()), "{sql}: {message}");
    }
    let forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n";
    let started = std::time::Instant::now();
    let message = invalid(
        f.store
            .dataset_sql("alex", "expenses", forever, SqlLimits { time: Duration::from_millis(300), rows: 10 })
            .unwrap_err(),
    );
    assert!(message.contains("stopped after 0.3 s"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Nothing was written by any of it.
    assert_eq!(f.store.dataset_rows("alex", "expenses", 0, 10).unwrap().len(), 4);
    assert_eq!(f.count_rows("SELECT count(*) FROM memories"), 1);
}

fn documents_are_searched_by_keyword_and_meaning_with_their_places(f: &mut Fixture) {
    f.store.load_dataset("alex", &document("zx81")).unwrap();
    f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    let err = f.store.dataset_sql("alex", "contract", "SELECT 1", SqlLimits::default()).unwrap_err();
    assert!(invalid(err).contains("is a document"));

    let hits = f.store.search_datasets("alex", &[], "monthly rent deposit", None, 3).unwrap();
    assert_eq!(hits[0].dataset, "contract");
    assert_eq!(hits[0].place.describe(), "page 2, lines 3–4");
    // A page of the outline is found among the passages, to be read from there.
    let offset = |page: u32| f.store.dataset_section_offset("alex", "contract", Some(page), 1).unwrap();
    assert_eq!((offset(1), offset(2), offset(3), offset(9)), (0, 1, 2, 3));
    let only = f.store.search_datasets("alex", &["expenses".into()], "rent", None, 3).unwrap();
    assert!(only.iter().all(|h| h.dataset == "expenses"));
    assert_eq!(only[0].place.describe(), "row 2");
    assert!(f.store.search_datasets("bo", &[], "rent", None, 3).unwrap().is_empty());

    let embedder = HashEmbedder { id: "hash-64", dim: 64 };
    let q = embedder.embed_query("notice party agreement").unwrap();
    let query = QueryVector { model: "hash-64", vector: &q };
    // Before any vector, nothing is found by meaning (and the copy of the vectors made now must
    // not outlive the vectors kept below).
    assert!(f.store.search_datasets("alex", &["contract".into()], "zzzz", Some(query), 2).unwrap().is_empty());
    assert_eq!(f.store.dataset_chunks_pending("hash-64").unwrap(), 7);
    let batch = f.store.dataset_chunks_to_embed("hash-64", 100).unwrap();
    let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
    let vectors = embedder.embed(&texts).unwrap();
    let pairs: Vec<(i64, Vec<f32>)> = batch.iter().map(|(r, _)| *r).zip(vectors).collect();
    assert_eq!(f.store.put_dataset_vectors("hash-64", &pairs).unwrap(), 7);
    assert_eq!(f.store.dataset_chunks_pending("hash-64").unwrap(), 0);
    assert_eq!(f.store.dataset("alex", "contract", Some("hash-64")).unwrap().unwrap().embedded, 3);
    // By meaning alone: no word of the query is in the index's vocabulary as written.
    let hits = f.store.search_datasets("alex", &["contract".into()], "zzzz", Some(query), 2).unwrap();
    assert_eq!(hits[0].place.page, Some(3), "{hits:?}");
}

fn the_same_file_changes_nothing_and_a_changed_one_replaces_it_whole(f: &mut Fixture) {
    let (first, _) = f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    let count = "SELECT count(*) FROM expenses";
    let all = f.store.dataset_sql("alex", "expenses", count, SqlLimits::default()).unwrap();
    assert_eq!(all.rows[0][0], Cell::Int(4));
    f.tick(60);
    let (same, loaded) = f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    assert_eq!((loaded, same.updated_at), (Loaded::Unchanged, first.updated_at));
    let mut changed = table("expenses", "d2");
    changed.rows.truncate(2);
    changed.chunks.truncate(2);
    let (now, loaded) = f.store.load_dataset("alex", &changed).unwrap();
    assert_eq!((loaded, now.rows, now.chunks, now.id.clone()), (Loaded::Replaced, 2, 2, first.id.clone()));
    assert_eq!(now.loaded_at, first.loaded_at);
    assert!(now.updated_at > first.updated_at);
    // The statement sees the new rows (on PostgreSQL, a new copy of them).
    let all = f.store.dataset_sql("alex", "expenses", count, SqlLimits::default()).unwrap();
    assert_eq!(all.rows[0][0], Cell::Int(2));
    assert_eq!(f.count_rows("SELECT count(*) FROM dataset_chunks"), 2);
    if f.url.is_none() {
        assert_eq!(f.count_rows("SELECT count(*) FROM dataset_fts"), 2);
    }
    assert_eq!(rows_tables(f), 1);
}

fn a_bad_dataset_is_refused_whole(f: &mut Fixture) {
    let mut ragged = table("expenses", "d1");
    ragged.rows[2].pop();
    assert!(invalid(f.store.load_dataset("alex", &ragged).unwrap_err()).contains("row 3 has 2 values for 3 columns"));
    let mut bad_name = table("expenses", "d1");
    bad_name.name = "Expenses 2025".into();
    assert!(invalid(f.store.load_dataset("alex", &bad_name).unwrap_err()).contains("expenses_2025"));
    let mut bad_column = table("expenses", "d1");
    bad_column.columns[0].name = "day\"; DROP TABLE events; --".into();
    assert!(f.store.load_dataset("alex", &bad_column).is_err());
    let mut not_a_number = table("expenses", "d1");
    not_a_number.rows[1][2] = Cell::Text("lots".into());
    let said = invalid(f.store.load_dataset("alex", &not_a_number).unwrap_err());
    assert_eq!(said, "row 2: \"lots\" is not a number for column amount");
    assert!(f.store.datasets("alex", None).unwrap().is_empty());
    assert_eq!(rows_tables(f), 0);
}
}

/// A table and a document of `user` alex, each holding `secret`.
fn load_secret(f: &mut Fixture, secret: &str) {
    let mut t = table("expenses", "d1");
    t.rows[1][1] = Cell::Text(format!("{secret}rent"));
    t.chunks[1].text = format!("Category: {secret}rent");
    f.store.load_dataset("alex", &t).unwrap();
    f.store.load_dataset("alex", &document(secret)).unwrap();
}

#[test]
fn a_forgotten_dataset_leaves_no_byte_in_the_file() {
    let mut f = Fixture::new();
    let secret = "quokkasaffron";
    load_secret(&mut f, secret);
    let embedder = HashEmbedder { id: "hash-64", dim: 64 };
    let batch = f.store.dataset_chunks_to_embed("hash-64", 100).unwrap();
    let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
    let pairs: Vec<(i64, Vec<f32>)> = batch.iter().map(|(r, _)| *r).zip(embedder.embed(&texts).unwrap()).collect();
    f.store.put_dataset_vectors("hash-64", &pairs).unwrap();
    assert!(!f.store.search_datasets("alex", &[], secret, None, 5).unwrap().is_empty());

    assert!(f.store.forget_dataset("alex", "expenses").unwrap());
    assert!(f.store.forget_dataset("alex", "contract").unwrap());
    assert!(!f.store.forget_dataset("alex", "contract").unwrap());
    assert!(f.store.search_datasets("alex", &[], secret, None, 5).unwrap().is_empty());
    for table in ["datasets", "dataset_chunks", "dataset_fts", "dataset_vectors"] {
        assert_eq!(f.count_rows(&format!("SELECT count(*) FROM {table}")), 0, "{table}");
    }
    assert_eq!(f.count_rows("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'dataset_rows_%'"), 0);
    let path = f.path();
    drop(f.store);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", path.display())) {
            let hay = String::from_utf8_lossy(&bytes).to_lowercase();
            assert!(!hay.contains(secret), "{secret} is still in strata.db{suffix}");
        }
    }
}

/// On PostgreSQL: no row version of any dataset table holds a forgotten dataset's words or
/// vectors once forget has vacuumed, and its rows table is gone.
#[cfg(feature = "postgres")]
#[test]
fn a_forgotten_dataset_leaves_no_row_version_on_postgres() {
    let mut f = Fixture::postgres();
    let secret = "quokkasaffron";
    load_secret(&mut f, secret);
    let batch = f.store.dataset_chunks_to_embed("zq", 100).unwrap();
    // Every component's bytes spell "Zq7!", so a vector is findable in the pages.
    let pairs: Vec<(i64, Vec<f32>)> = batch.iter().map(|(r, _)| (*r, vec![f32::from_le_bytes(*b"Zq7!"); 8])).collect();
    f.store.put_dataset_vectors("zq", &pairs).unwrap();
    let mut c = crate::server::connect(f.url.as_ref().unwrap());
    c.batch_execute("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
    let tables = ["datasets", "dataset_chunks", "dataset_vectors"];
    let holding = |c: &mut strata_core::postgres::driver::Client, needle: &[u8]| -> Vec<&str> {
        let mut found: Vec<&str> = tables
            .into_iter()
            .filter(|t| {
                crate::postgres::row_versions(c, t).iter().any(|d| d.windows(needle.len()).any(|w| w == needle))
            })
            .collect();
        let rows: i64 =
            c.query_one("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dataset_rows_%'", &[]).unwrap().get(0);
        if rows > 0 {
            found.push("dataset_rows_*");
        }
        found
    };
    assert_eq!(holding(&mut c, secret.as_bytes()), vec!["dataset_chunks", "dataset_rows_*"]);
    assert_eq!(holding(&mut c, b"Zq7!"), vec!["dataset_vectors", "dataset_rows_*"]);
    // Asked once, SQL leaves a copy of the table in this process: forget drops it too.
    let sql = f.store.dataset_sql("alex", "expenses", "SELECT category FROM expenses", SqlLimits::default()).unwrap();
    assert_eq!(sql.rows[1][0], Cell::Text(format!("{secret}rent")));

    assert!(f.store.forget_dataset("alex", "expenses").unwrap());
    assert!(f.store.forget_dataset("alex", "contract").unwrap());
    assert!(f.store.search_datasets("alex", &[], secret, None, 5).unwrap().is_empty());
    assert!(holding(&mut c, secret.as_bytes()).is_empty());
    assert!(holding(&mut c, b"Zq7!").is_empty());
    let e = f.store.dataset_sql("alex", "expenses", "SELECT 1", SqlLimits::default()).unwrap_err();
    assert!(matches!(e, Error::NotFound(_)), "{e:?}");
}

#[test]
fn sql_needs_a_file_and_names_a_dataset() {
    let clock = std::sync::Arc::new(strata_core::ManualClock::new(t0()));
    let mut store = strata_core::Store::in_memory(clock).unwrap();
    store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    let e = store.dataset_sql("alex", "expenses", "SELECT 1", SqlLimits::default()).unwrap_err();
    assert!(matches!(e, Error::Unsupported(ref m) if m.contains("kept in a file")), "{e:?}");
    let e = store.dataset_sql("alex", "nothing", "SELECT 1", SqlLimits::default()).unwrap_err();
    assert!(matches!(e, Error::NotFound(ref m) if m == "no dataset named nothing"), "{e:?}");
}

/// A table of `n` rows (and a passage each) named `name`.
fn large(name: &str, n: usize) -> NewDataset {
    let mut t = table(name, &format!("large-{n}"));
    t.rows = (0..n)
        .map(|i| {
            vec![Cell::Text(format!("2025-{:02}-01", i % 12 + 1)), Cell::Text("misc".into()), Cell::Real(i as f64)]
        })
        .collect();
    t.chunks = (0..n)
        .map(|i| Chunk { text: format!("Row {i}: misc"), place: Place { row: Some(i as u64 + 1), ..Place::default() } })
        .collect();
    t
}

/// A large load on SQLite is kept in batches under a hidden name: another writer of the same
/// file waits well under a second meanwhile, and no one sees the dataset until it is whole.
#[test]
fn a_large_load_lets_other_writers_in_and_is_seen_only_whole() {
    let mut f = Fixture::new();
    let mut loader = strata_core::Store::open_with_clock(f.path(), f.clock.clone()).unwrap();
    let big = large("big", 1_200_000);
    let load = std::thread::spawn(move || loader.load_dataset("alex", &big).map(|(d, _)| d.rows));
    let loading = "SELECT count(*) FROM datasets WHERE name = '~loading~big'";
    while f.count_rows(loading) == 0 {
        assert!(!load.is_finished(), "the load ended before it was seen going on");
        std::thread::sleep(Duration::from_millis(5));
    }
    let (mut writes, mut unseen) = (Vec::new(), 0);
    while !load.is_finished() {
        // Whenever it is seen, it is whole (it may have been named since the loop's check).
        if let Some(d) = f.store.dataset("alex", "big", None).unwrap() {
            assert_eq!(d.rows, 1_200_000);
            assert_eq!(f.store.dataset_rows("alex", "big", 1_199_999, 1).unwrap().len(), 1, "the last row is there");
        } else {
            unseen += 1;
        }
        let started = std::time::Instant::now();
        f.add(concept(&format!("note-{}", writes.len()), &[("said", "meanwhile")]));
        writes.push(started.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(load.join().unwrap().unwrap(), 1_200_000);
    assert!(writes.len() >= 3 && unseen >= 3, "the load was too quick to measure: {writes:?}");
    let slowest = writes.iter().max().unwrap();
    assert!(*slowest < Duration::from_secs(2), "a write waited {slowest:?} for the load: {writes:?}");
    let d = f.store.dataset("alex", "big", None).unwrap().unwrap();
    assert_eq!((d.rows, d.chunks), (1_200_000, 1_200_000));
    let last = f.store.dataset_rows("alex", "big", 1_199_999, 1).unwrap();
    assert_eq!(last[0][2], Cell::Real(1_199_999.0));
    assert_eq!(f.count_rows(loading), 0);
}

/// What a killed load left (a hidden record and its rows table) is never listed, and the next
/// load of that name, or forgetting it, erases it.
#[test]
fn what_a_killed_load_left_is_unseen_and_erased_by_the_next() {
    let mut f = Fixture::new();
    let leave = |f: &Fixture| {
        let c = rusqlite::Connection::open(f.path()).unwrap();
        c.execute_batch(
            "INSERT INTO datasets (id, user_id, name, kind, source, format, digest, loaded_at, updated_at, columns, \
             sections, row_count, chunk_count, notes) VALUES ('ds_x~loading', 'alex', '~loading~expenses', 'table', \
             'expenses.csv', 'csv', 'd0', 0, 0, '[]', '[]', 1, 1, '[]'); \
             INSERT INTO dataset_chunks (dataset_rid, ordinal, text, line_start, line_end) \
             SELECT rid, 0, 'half kept quokka', 1, 1 FROM datasets WHERE name = '~loading~expenses';",
        )
        .unwrap();
        let rid: i64 =
            c.query_row("SELECT rid FROM datasets WHERE name = '~loading~expenses'", [], |r| r.get(0)).unwrap();
        c.execute_batch(&format!("CREATE TABLE dataset_rows_{rid} (row_number INTEGER PRIMARY KEY)")).unwrap();
    };
    leave(&f);
    assert!(f.store.datasets("alex", None).unwrap().is_empty());
    f.store.load_dataset("alex", &table("expenses", "d1")).unwrap();
    assert_eq!(f.count_rows("SELECT count(*) FROM datasets WHERE name LIKE '~%'"), 0);
    assert_eq!(f.count_rows("SELECT count(*) FROM dataset_chunks WHERE text = 'half kept quokka'"), 0);
    assert_eq!(rows_tables(&f), 1);
    assert_eq!(f.store.datasets("alex", None).unwrap().len(), 1);

    f.store.forget_dataset("alex", "expenses").unwrap();
    leave(&f);
    assert!(f.store.forget_dataset("alex", "expenses").unwrap(), "forgetting the name erases what a load left");
    assert_eq!(f.count_rows("SELECT count(*) FROM datasets"), 0);
    assert_eq!(rows_tables(&f), 0);
}

/// A load that fails part-way (here, its words' index refuses a passage) leaves nothing of it
/// behind: no hidden record, no rows table, no passage; the error is the load's own.
#[test]
fn a_load_that_fails_part_way_erases_what_it_wrote() {
    let mut f = Fixture::new();
    // The words' index already holds a row where the first passage's words would go.
    let c = rusqlite::Connection::open(f.path()).unwrap();
    c.execute_batch("INSERT INTO dataset_fts (rowid, text, heading, dataset) VALUES (1, 'planted', '', 'd0')").unwrap();
    let e = f.store.load_dataset("alex", &table("expenses", "d1")).unwrap_err();
    assert!(e.to_string().to_lowercase().contains("constraint"), "{e}");
    assert_eq!(f.count_rows("SELECT count(*) FROM datasets"), 0);
    assert_eq!(f.count_rows("SELECT count(*) FROM dataset_chunks"), 0);
    assert_eq!(rows_tables(&f), 0);
    assert!(f.store.datasets("alex", None).unwrap().is_empty());
}
