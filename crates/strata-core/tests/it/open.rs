//! Opening files that are not ours, corrupted or newer: a clear error, the file untouched.
//! Migrations are append-only.

use crate::support::*;
use strata_core::sqlite::schema;
use strata_core::*;

fn open_err(path: &std::path::Path) -> String {
    Store::open(path).unwrap_err().to_string()
}

#[test]
fn a_foreign_sqlite_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other.db");
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('hello');").unwrap();
    drop(c);
    let before = std::fs::read(&p).unwrap();
    let err = open_err(&p);
    assert!(err.contains("is not a Strata database") && err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert!(!dir.path().join("other.db-wal").exists());
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, "just some text, definitely not SQLite ".repeat(200)).unwrap();
    let before = std::fs::read(&p).unwrap();
    let err = open_err(&p);
    assert!(err.contains("is not a Strata database") && err.contains("not a database"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let f = Fixture::new();
    let p = f.path();
    drop(f.store);
    let c = rusqlite::Connection::open(&p).unwrap();
    c.pragma_update(None, "user_version", schema::SCHEMA_VERSION + 1).unwrap();
    c.pragma_update(None, "journal_mode", "DELETE").unwrap();
    drop(c);
    let before = std::fs::read(&p).unwrap();
    let err = open_err(&p);
    assert!(err.contains("newer than this Strata understands") && err.contains("upgrade Strata"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn a_corrupted_database_gives_a_clear_error() {
    let mut f = Fixture::new();
    for i in 0..300 {
        f.add(concept(&format!("k{i}"), &[("fact", &"some words here ".repeat(20))]));
    }
    let p = f.path();
    f.store.checkpoint().unwrap();
    drop(f.store);
    let mut bytes = std::fs::read(&p).unwrap();
    let len = bytes.len();
    assert!(len > 64 * 1024);
    for b in &mut bytes[4096..len - 4096] {
        *b = 0xA5;
    }
    std::fs::write(&p, &bytes).unwrap();
    let outcome = Store::open(&p).and_then(|s| s.list(&Filter::default(), 100, None).map(|_| ()));
    let err = outcome.unwrap_err().to_string();
    assert!(err.contains("is damaged") && err.contains("Restore your latest backup"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), bytes, "a corrupted file is left as it was");
}

/// A few random bytes in the middle of the file — where a list, a search or an add would not
/// notice them — are found when the file is opened, before anything reads or writes it.
#[test]
fn a_few_damaged_bytes_anywhere_are_found_at_open_and_nothing_is_written() {
    use rand::{Rng, SeedableRng};
    let mut f = Fixture::new();
    for i in 0..400 {
        f.add(concept(&format!("k{i}"), &[("fact", &format!("words of memory {i} ").repeat(12))]));
    }
    let p = f.path();
    f.store.checkpoint().unwrap();
    drop(f.store);
    let clean = std::fs::read(&p).unwrap();
    let pages = clean.len() / 8192;
    assert!(pages > 20, "{pages} pages");
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let btree = |page: usize| matches!(clean[page * 8192], 0x02 | 0x05 | 0x0a | 0x0d);
    let candidates: Vec<usize> = (pages / 3..2 * pages / 3).filter(|&p| btree(p)).collect();
    assert!(candidates.len() > 6);
    for round in 0..6 {
        // Random bytes over the header of a table or index page (its kind, cell count, where
        // its cells start), somewhere in the middle third: free space inside a page is not
        // damage, a page that no longer says what it holds is.
        let page = candidates[rng.random_range(0..candidates.len())];
        let at = page * 8192;
        let mut bytes = clean.clone();
        rng.fill(&mut bytes[at..at + 12]);
        std::fs::write(&p, &bytes).unwrap();
        let err = Store::open(&p).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("is damaged"), "round {round}, page {page}: opened a damaged file ({err})");
        assert!(err.contains("strata --db NEW.db import"), "it says how to restore: {err}");
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "the damaged file is left exactly as it was");
    }
    std::fs::write(&p, &clean).unwrap();
    Store::open(&p).expect("the undamaged file opens");
}

#[test]
fn an_empty_file_becomes_a_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sub/dir/new.db");
    let s = Store::open(&p).unwrap();
    assert_eq!(s.stats().unwrap().memories, 0);
    drop(s);
    Store::open(&p).unwrap();
}

/// Shipped migrations never change: their FNV-1a hashes are pinned here.
#[test]
fn shipped_migrations_are_append_only() {
    const PINNED: &[(&str, u64)] = &[
        ("0001_init", 4_343_970_966_219_021_081),
        ("0002_episode_context", 9_676_456_571_010_755_512),
        ("0003_adapters", 9_212_841_207_401_345_862),
        ("0004_extraction", 1_679_568_996_425_412_947),
        ("0005_recalls", 13_736_160_802_350_296_178),
        ("0006_feedback", 12_711_490_860_682_428_360),
        ("0007_score_parts", 2_967_413_781_009_215_226),
        ("0008_training", 13_656_124_772_779_541_091),
        ("0009_extraction_skips", 7_537_289_883_598_206_232),
        ("0010_people", 16_240_846_193_574_798_134),
        ("0011_datasets", 6_051_158_365_933_577_196),
        ("0012_agents", 8_146_406_537_643_500_880),
        ("0013_adapter_lifecycle", 12_006_615_445_020_980_090),
    ];
    let actual: Vec<(&str, u64)> = schema::MIGRATIONS.iter().map(|(n, sql)| (*n, fnv1a(sql))).collect();
    assert!(actual.len() >= PINNED.len(), "a shipped migration was removed");
    assert_eq!(&actual[..PINNED.len()], PINNED, "a shipped migration changed: add a new one instead");
}
