//! The PostgreSQL engine's own promises, on a real server (`server`): one clear sentence for
//! what cannot serve Strata, its migrations pinned, a newer schema refused untouched, forget
//! covering every column that names a memory, and one writer at a time per database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::server;
use crate::support::*;
use strata_core::postgres::schema;
use strata_core::store::FORGET_COVERS;
use strata_core::*;

fn open(url: &str) -> Result<Store> {
    Store::open_location(url, Arc::new(ManualClock::new(t0())))
}

#[test]
fn what_cannot_serve_strata_is_said_in_one_sentence_without_the_password() {
    let not_a_url = open("postgres://ana:s3cret@db.example:notaport/strata").unwrap_err();
    assert!(matches!(not_a_url, Error::Invalid(_)), "{not_a_url:?}");
    let said = not_a_url.to_string();
    assert!(said.contains("is not a PostgreSQL URL") && said.contains("postgres://USER:PASSWORD@HOST"), "{said}");
    assert!(!said.contains("s3cret"), "the password is never shown: {said}");

    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = open(&format!("postgres://ana:s3cret@127.0.0.1:{port}/strata")).unwrap_err();
    let said = unreachable.to_string();
    assert!(matches!(unreachable, Error::Connect(_)), "{unreachable:?}");
    assert!(
        said.starts_with(&format!("cannot reach a PostgreSQL server at postgres://ana:***@127.0.0.1:{port}/strata")),
        "{said}"
    );
    assert!(said.contains("check that it is running"), "{said}");

    let good = server::url_of("postgres");
    let wrong = good.replace(server::PASSWORD, "not-the-password");
    let refused = open(&wrong).unwrap_err().to_string();
    assert!(refused.contains("refused the login of 'postgres': the password is wrong"), "{refused}");
    assert!(!refused.contains("not-the-password"), "{refused}");

    let missing = open(&server::url_of("no_such_database")).unwrap_err().to_string();
    assert!(
        missing.starts_with("the database 'no_such_database' does not exist")
            && missing.ends_with("create it first (createdb no_such_database)"),
        "{missing}"
    );
}

#[test]
fn shipped_postgres_migrations_are_append_only() {
    const PINNED: &[(&str, u64)] = &[
        ("0001_init", 1_620_936_265_837_783_391),
        ("0002_search_length", 17_092_920_010_204_800_761),
        ("0003_people", 16_427_432_900_783_925_942),
        ("0004_session_index", 8_999_888_268_272_212_454),
        ("0005_extraction", 16_549_634_268_619_452_649),
        ("0006_usage", 6_058_988_659_303_131_261),
        ("0007_rates", 12_768_764_142_743_214_646),
        ("0008_datasets", 6_088_468_831_151_014_589),
        ("0009_agents", 1_908_558_005_261_393_265),
    ];
    let actual: Vec<(&str, u64)> = schema::MIGRATIONS.iter().map(|(n, sql)| (*n, fnv1a(sql))).collect();
    assert!(actual.len() >= PINNED.len(), "a shipped migration was removed");
    assert_eq!(&actual[..PINNED.len()], PINNED, "a shipped migration changed: add a new one instead");
}

#[test]
fn a_database_of_a_newer_schema_is_refused_untouched() {
    let url = server::fresh_database();
    let mut f = Fixture { store: open(&url).unwrap(), ..Fixture::new() };
    let m = f.add(concept("tea", &[("likes", "green")]));
    drop(f);
    let mut c = server::connect(&url);
    c.execute("INSERT INTO strata_migrations (version, name) VALUES (99, '0099_future')", &[]).unwrap();
    let err = open(&url).unwrap_err();
    assert!(matches!(err, Error::NewerSchema { found: 99, .. }), "{err:?}");
    assert!(err.to_string().contains("upgrade Strata"), "{err}");
    let kept: i64 = c.query_one("SELECT count(*) FROM memories WHERE id = $1", &[&m.id.to_string()]).unwrap().get(0);
    assert_eq!(kept, 1, "nothing was touched");

    // Tables named like Strata's, in a database Strata did not make: refused, not migrated.
    let other = server::fresh_database();
    server::connect(&other).batch_execute("CREATE TABLE memories (x int)").unwrap();
    let err = open(&other).unwrap_err();
    assert!(matches!(err, Error::NotStrataDatabase { .. }), "{err:?}");
}

#[test]
fn forget_covers_every_column_that_names_a_memory_on_postgres() {
    let url = server::fresh_database();
    drop(open(&url).unwrap());
    let rows = server::connect(&url)
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name <> 'memories' \
             AND column_name IN ('memory_id', 'stream_id', 'source_id', 'target_id', 'episode_id', 'answer_id', 'sources') \
             ORDER BY 1, 2",
            &[],
        )
        .unwrap();
    let named: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert!(named.len() >= 4, "the schema was read: {named:?}");
    let covered: Vec<(String, String)> = FORGET_COVERS.iter().map(|(t, c, _)| (t.to_string(), c.to_string())).collect();
    let missing: Vec<_> = named.iter().filter(|n| !covered.contains(n)).collect();
    assert!(missing.is_empty(), "columns that name a memory and that forget does not cover: {missing:?}");
    let stale: Vec<_> = covered.iter().filter(|c| !named.contains(c)).collect();
    assert!(stale.is_empty(), "FORGET_COVERS lists columns the schema no longer has: {stale:?}");
}

#[test]
fn writers_of_one_database_wait_for_each_other() {
    let url = server::fresh_database();
    let mut first = open(&url).unwrap();
    let mut second = open(&url).unwrap();
    let tx = first.write().unwrap();
    let url2 = url.clone();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || {
        second.create(concept("b", &[("x", "2")]), NewMemory::default(), &user()).unwrap();
        drop(url2);
        started.elapsed()
    });
    std::thread::sleep(Duration::from_millis(400));
    // The second writer is still waiting for the first's transaction.
    assert!(!waiter.is_finished(), "a second writer went ahead of an open write transaction");
    drop(tx);
    let waited = waiter.join().unwrap();
    assert!(waited >= Duration::from_millis(400), "{waited:?}");
    assert_eq!(first.event_count().unwrap(), 1, "the second write landed once the first ended");
}

/// Every row version (live or dead) of `table`'s heap pages, read with `pageinspect`.
pub(crate) fn row_versions(c: &mut strata_core::postgres::driver::Client, table: &str) -> Vec<Vec<u8>> {
    c.query(
        "SELECT t_data FROM generate_series(0, (pg_relation_size($1::text::regclass) / current_setting('block_size')::int) - 1) \
         AS b, heap_page_items(get_raw_page($1::text, b::int)) WHERE t_data IS NOT NULL",
        &[&table],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

fn holding(c: &mut strata_core::postgres::driver::Client, needle: &str) -> Vec<&'static str> {
    let tables = [
        "events",
        "memories",
        "memory_tags",
        "memory_links",
        "memory_vectors",
        "extraction_decisions",
        "recalls",
        "recall_hits",
    ];
    tables
        .into_iter()
        .filter(|t| row_versions(c, t).iter().any(|d| d.windows(needle.len()).any(|w| w == needle.as_bytes())))
        .collect()
}

#[test]
fn forget_on_postgres_leaves_no_row_version_holding_the_content() {
    let mut f = Fixture::postgres();
    let url = f.url.clone().unwrap();
    let m = f.add(concept("vault", &[("code", "zebra-4471")]));
    f.store.transact(|tx| tx.tag(m.id, "private", &user())).unwrap();
    let changed = concept("vault", &[("code", "zebra-4471 and opal-9")]);
    f.store.transact(|tx| tx.update_content(m.id, changed, Expected::Any, &user())).unwrap();
    // A recall that found it (its query quotes it) and a decision resting on it.
    let hit = strata_core::analytics::RecallHit { memory: m.id, score: 1.0, parts: None, in_prompt: false, used: None };
    let recall = strata_core::analytics::RecallRecord {
        user_id: "default",
        agent_id: None,
        client: None,
        purpose: strata_core::analytics::Purpose::Search,
        query: "the vault's code zebra-4471",
        latency_ms: 1.0,
        hits: vec![hit],
        prompt: None,
    };
    f.store.record_recall(&recall, None).unwrap();
    let decision = Decision {
        id: "01DEC0000000000000000000C1".into(),
        run_id: "run".into(),
        scope: Scope::user("default"),
        made_at: t0(),
        model: "test".into(),
        action: DecisionAction::Noop,
        subject: "vault".into(),
        target: Some(m.id),
        detail: DecisionDetail { fact: "The vault's code is zebra-4471.".into(), ..Default::default() },
        sources: vec![],
        status: DecisionStatus::Applied,
        decided_at: None,
        decided_by: None,
    };
    f.store.transact(|tx| tx.record_decision(&decision)).unwrap();
    let mut c = server::connect(&url);
    c.batch_execute("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
    // The check sees the text where it is: in the log, the projection and the records made from
    // them, old versions too.
    assert_eq!(holding(&mut c, "zebra-4471"), ["events", "memories", "extraction_decisions", "recalls"]);

    let out = f.store.forget(m.id, &user()).unwrap();
    assert!(out.scrubbed, "no open transaction kept VACUUM from removing the old versions");
    assert_eq!(holding(&mut c, "zebra-4471"), Vec::<&str>::new(), "a row version still holds the text");
    assert_eq!(holding(&mut c, "opal-9"), Vec::<&str>::new());

    // Another session's open snapshot keeps the old versions: forget says it could not scrub.
    let other = f.add(concept("locker", &[("code", "heron-2208")]));
    let mut reader = server::connect(&url);
    let mut snapshot = reader
        .build_transaction()
        .isolation_level(strata_core::postgres::driver::IsolationLevel::RepeatableRead)
        .start()
        .unwrap();
    snapshot.query("SELECT count(*) FROM memories", &[]).unwrap();
    let out = f.store.forget(other.id, &user()).unwrap();
    assert!(!out.scrubbed, "VACUUM could not remove what an open snapshot may still read");
    snapshot.commit().unwrap();
    assert!(f.store.scrub().unwrap(), "once the reader is done, scrubbing again completes");
    assert_eq!(holding(&mut c, "heron-2208"), Vec::<&str>::new());
}

#[test]
fn pgvector_that_this_user_may_not_enable_is_said_plainly() {
    // A fresh database has no extension yet; a user who is not a superuser may not create
    // pgvector's (it is not a trusted extension).
    let url = server::fresh_database();
    server::connect(&url)
        .batch_execute(
            "DO $$ BEGIN CREATE ROLE strata_plain LOGIN PASSWORD 'plain-pw'; \
             EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        )
        .unwrap();
    let plain = url.replacen(&format!("postgres:{}@", server::PASSWORD), "strata_plain:plain-pw@", 1);
    assert_ne!(plain, url);
    let said = open(&plain).unwrap_err().to_string();
    assert!(
        said.contains("pgvector is installed on the server")
            && said.ends_with("ask the database's owner to run CREATE EXTENSION vector"),
        "{said}"
    );
    assert!(!said.contains("plain-pw"), "{said}");
}

#[test]
fn another_connection_reads_what_the_first_wrote_and_an_in_memory_store_has_none() {
    let url = server::fresh_database();
    let mut first = open(&url).unwrap();
    let second = first.open_another().unwrap();
    assert!(first.has_second_connection());
    let m = first.create(concept("tea", &[("likes", "green")]), NewMemory::default(), &user()).unwrap();
    assert_eq!(second.get(m.id).unwrap(), m, "committed writes are read at once by another connection");
    assert_eq!(second.location(), url.replace(server::PASSWORD, "***"), "its location hides the password");
    let memory = Store::in_memory(Arc::new(ManualClock::new(t0()))).unwrap();
    assert!(!memory.has_second_connection());
    assert!(memory.open_another().is_err());
}

#[test]
fn a_database_is_made_afresh_for_a_benchmark_and_a_bad_name_is_refused() {
    let url = server::fresh_database();
    open(&url).unwrap().create(concept("tea", &[("likes", "green")]), NewMemory::default(), &user()).unwrap();
    strata_core::postgres::recreate_database(&url).unwrap();
    assert_eq!(open(&url).unwrap().event_count().unwrap(), 0, "dropped and made again, empty");
    let bad = server::url_of("no; DROP TABLE x");
    let said = strata_core::postgres::recreate_database(&bad).unwrap_err().to_string();
    assert!(said.contains("is not a database name of letters, digits and _"), "{said}");
}

/// Past its threshold (`vector_index_from`, 40 here; 20,000 by default) a model's vectors get
/// an HNSW index, built without blocking writers and kept up as vectors come; searches then go
/// through it and find what the exact search finds on a store this small.
#[test]
fn past_its_threshold_a_models_vectors_get_an_hnsw_index_that_finds_what_exact_search_finds() {
    const E: HashEmbedder = HashEmbedder { id: "hash-64", dim: 64 };
    let mut f = Fixture::postgres();
    let url = f.url.clone().unwrap();
    server::connect(&url).execute("INSERT INTO settings (key, value) VALUES ('vector_index_from', '40')", &[]).unwrap();
    let indexes =
        |f: &Fixture| f.count_rows("SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'memory_vectors_hnsw_64_%'");
    let words = ["tea", "cat", "garden", "piano", "river", "bread", "train", "winter"];
    let add = |f: &mut Fixture, i: usize| {
        let text = format!("{} and {} on day {i}", words[i % 8], words[(i / 8) % 8]);
        f.add(utterance("Ana", &text, t0()));
    };
    for i in 0..30 {
        add(&mut f, i);
    }
    while f.store.embed_pending(&E, 16).unwrap() > 0 {}
    assert_eq!(indexes(&f), 0, "below the threshold, exact search and no index");
    let filter = Filter { user_id: Some("default".into()), ..Default::default() };
    assert!(f.store.index_and_exact(&E, "tea", &filter, 5).unwrap().is_none());

    for i in 30..64 {
        add(&mut f, i);
    }
    while f.store.embed_pending(&E, 16).unwrap() > 0 {}
    assert_eq!(indexes(&f), 1, "the index is built once past the threshold");
    let valid = f.count_rows(
        "SELECT count(*) FROM pg_index WHERE indisvalid AND indexrelid::regclass::text LIKE 'memory_vectors_hnsw_%'",
    );
    assert_eq!(valid, 1);
    for q in ["tea and cat", "piano and bread"] {
        let check = f.store.index_and_exact(&E, q, &filter, 10).unwrap().expect("an index to compare");
        // Ties in similarity may be cut differently at the tenth place.
        let found = check.index.iter().filter(|id| check.exact.contains(id)).count();
        assert!(found >= 8 && check.index[..3] == check.exact[..3], "{q}: {check:?}");
        let searched: Vec<MemoryId> =
            f.store.vector_search(&E, q, &filter, 10).unwrap().into_iter().map(|h| h.memory.id).collect();
        assert_eq!(searched, check.index, "{q}: the product's search goes through the index");
    }
    // The search's shape can use the index (on 64 rows the planner rightly prefers a scan:
    // with scans off, the plan shows the index).
    let mut c = server::connect(&url);
    c.batch_execute("SET enable_seqscan = off").unwrap();
    let plan: Vec<String> = c
        .query(
            "EXPLAIN SELECT memory_id FROM memory_vectors v WHERE v.model = 'hash-64' \
             ORDER BY v.vector::vector(64) <=> (SELECT vector FROM memory_vectors LIMIT 1)::vector(64) LIMIT 10",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(plan.iter().any(|l| l.contains("memory_vectors_hnsw_64_")), "{plan:?}");
}

/// A connection the server cuts (a restart, a failover, an idle timeout): a read is tried once
/// more on a new connection; a write says the connection was lost and writes nothing, and the
/// next one connects again.
#[test]
fn a_lost_connection_is_said_plainly_reads_retry_and_the_next_write_reconnects() {
    let mut f = Fixture::postgres();
    let url = f.url.clone().unwrap();
    let cut = || {
        server::connect(&url)
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap()
    };
    f.add(concept("tea", &[("likes", "oolong")]));
    let everyone = Filter { user_id: Some("default".into()), ..Default::default() };
    cut();
    let page = f.store.list_by(&everyone, Order::Added, 10, None).unwrap();
    assert_eq!(page.items.len(), 1, "the read went on, on a new connection");

    cut();
    let err = f.store.create(concept("coffee", &[("likes", "none")]), NewMemory::default(), &user()).unwrap_err();
    assert!(
        err.to_string().contains("the connection to PostgreSQL was lost")
            && err.to_string().contains("nothing more was written"),
        "{err}"
    );
    assert_eq!(f.count_rows("SELECT count(*) FROM memories"), 1);
    f.store.create(concept("coffee", &[("likes", "none")]), NewMemory::default(), &user()).unwrap();
    assert_eq!(f.count_rows("SELECT count(*) FROM memories"), 2, "the next write connected again");
}
