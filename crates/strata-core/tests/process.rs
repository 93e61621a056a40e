//! Process-level durability tests. This binary is both the test and, when `STRATA_CHILD` is set,
//! the child process it spawns: a writer killed with SIGKILL mid-loop, or one of two writers
//! sharing a database file.
#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use strata_core::*;

fn meta() -> EventMeta {
    EventMeta::actor(Actor::App)
}

fn fact(key: &str, i: usize) -> Content {
    Content::Semantic(Concept {
        key: key.into(),
        facts: [
            ("n".to_string(), FactValue::Number(i.into())),
            ("pad".to_string(), FactValue::Text("x".repeat(i % 700))),
        ]
        .into_iter()
        .collect(),
    })
}

/// Child: append forever, one transaction per memory (create + two tags), reporting each commit.
fn child_append_forever(db: &Path, prefix: &str) {
    let mut store = Store::open(db).expect("open");
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let key = format!("{prefix}{i}");
        let id = store
            .transact(|tx| {
                let m = tx.create(fact(&key, i), NewMemory::default(), &meta())?;
                tx.tag(m.id, "a", &meta())?;
                tx.tag(m.id, "b", &meta())?;
                Ok(m.id)
            })
            .expect("append");
        writeln!(out, "committed {id} {key}").and_then(|_| out.flush()).expect("stdout");
    }
}

/// Child: append `n` memories, then exit.
fn child_append_n(db: &Path, prefix: &str, n: usize) {
    let mut store = Store::open(db).expect("open");
    for i in 0..n {
        let key = format!("{prefix}{i}");
        store
            .transact(|tx| {
                let m = tx.create(fact(&key, i), NewMemory::default(), &meta())?;
                tx.tag(m.id, prefix, &meta()).map(|_| ())
            })
            .expect("append");
    }
}

fn spawn(db: &Path, mode: &str, prefix: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env("STRATA_CHILD", mode)
        .env("STRATA_CHILD_DB", db)
        .env("STRATA_CHILD_PREFIX", prefix)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child")
}

fn assert_consistent(store: &mut Store) {
    let ok: String = rusqlite::Connection::open(store.path().unwrap())
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let live = store.snapshot().unwrap();
    store.replay().unwrap();
    assert_eq!(store.snapshot().unwrap(), live, "replay after reopening differs from the live projections");
}

fn killed_writer_loses_nothing_it_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    for round in 0..3 {
        let mut child = spawn(&db, "forever", &format!("r{round}_"));
        let mut reported = Vec::new();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let target = 150 + round * 97;
        while reported.len() < target {
            let line = lines.next().expect("child ended early").unwrap();
            let mut parts = line.split_whitespace().skip(1);
            reported.push((parts.next().unwrap().to_string(), parts.next().unwrap().to_string()));
        }
        child.kill().unwrap(); // SIGKILL, mid-transaction more often than not
        child.wait().unwrap();
        for rest in lines.map_while(Result::ok) {
            let mut parts = rest.split_whitespace().skip(1);
            reported.push((parts.next().unwrap().to_string(), parts.next().unwrap().to_string()));
        }

        let mut store = Store::open(&db).unwrap();
        for (id, key) in &reported {
            let m = store.get(id.parse().unwrap()).unwrap_or_else(|e| panic!("reported commit {key} lost: {e}"));
            assert_eq!(m.content.key(), Some(key.as_str()));
        }
        // Nothing half-written: every memory has both tags, every stream is complete.
        let all = store.snapshot().unwrap().memories;
        assert!(all.iter().all(|m| m.tags.len() == 2 && m.version == 3), "a transaction was half-applied");
        assert_consistent(&mut store);
    }
}

fn two_processes_write_one_file_without_losing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    Store::open(&db).unwrap(); // created once so both children open an initialised file
    let started = Instant::now();
    let children: Vec<_> = ["left", "right"].iter().map(|p| spawn(&db, "n", p)).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
    let mut store = Store::open(&db).unwrap();
    let stats = store.stats().unwrap();
    assert_eq!(stats.memories, 2 * N_EACH as u64);
    assert_eq!(stats.events, 4 * N_EACH as u64);
    let max_seq: i64 =
        rusqlite::Connection::open(&db).unwrap().query_row("SELECT max(seq) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!(max_seq as u64, stats.events, "sequence numbers have gaps");
    for p in ["left", "right"] {
        let n = store.snapshot().unwrap().memories.iter().filter(|m| m.tags.contains(p)).count();
        assert_eq!(n, N_EACH);
    }
    assert_consistent(&mut store);
    assert!(started.elapsed() < Duration::from_secs(120));
}

const N_EACH: usize = 400;

fn main() {
    if let Ok(mode) = std::env::var("STRATA_CHILD") {
        let db = std::env::var("STRATA_CHILD_DB").unwrap();
        let prefix = std::env::var("STRATA_CHILD_PREFIX").unwrap();
        match mode.as_str() {
            "forever" => child_append_forever(Path::new(&db), &prefix),
            _ => child_append_n(Path::new(&db), &prefix, N_EACH),
        }
        return;
    }
    let tests: [(&str, fn()); 2] = [
        ("killed_writer_loses_nothing_it_reported", killed_writer_loses_nothing_it_reported),
        ("two_processes_write_one_file_without_losing_anything", two_processes_write_one_file_without_losing_anything),
    ];
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let (mut passed, mut failed) = (0, 0);
    for (name, f) in tests {
        if filter.as_deref().is_some_and(|flt| !name.contains(flt)) {
            continue;
        }
        let t = Instant::now();
        match std::panic::catch_unwind(f) {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok ({:.1}s)", t.elapsed().as_secs_f64());
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
