//! Opening files that are not ours, corrupted or newer: a clear error, the file untouched.
//! Migrations are append-only.

use crate::support::*;
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
    assert!(err.contains("is corrupted") && err.contains("restore it from a backup"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), bytes, "a corrupted file is left as it was");
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
    ];
    fn fnv1a(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }
    let actual: Vec<(&str, u64)> = schema::MIGRATIONS.iter().map(|(n, sql)| (*n, fnv1a(sql))).collect();
    assert!(actual.len() >= PINNED.len(), "a shipped migration was removed");
    assert_eq!(&actual[..PINNED.len()], PINNED, "a shipped migration changed: add a new one instead");
}
