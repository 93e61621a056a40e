//! Opening a database file: refuse files that are not ours, corrupted or newer; set the
//! connection up for one writer among several processes; apply append-only migrations.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// `PRAGMA application_id` of a Strata database ("STRA").
pub const APPLICATION_ID: i64 = 0x5354_5241;

/// The shipped migrations, in order. Append only: a test pins their checksums.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../../migrations/0001_init.sql")),
    ("0002_episode_context", include_str!("../../migrations/0002_episode_context.sql")),
    ("0003_adapters", include_str!("../../migrations/0003_adapters.sql")),
    ("0004_extraction", include_str!("../../migrations/0004_extraction.sql")),
    ("0005_recalls", include_str!("../../migrations/0005_recalls.sql")),
    ("0006_feedback", include_str!("../../migrations/0006_feedback.sql")),
    ("0007_score_parts", include_str!("../../migrations/0007_score_parts.sql")),
    ("0008_training", include_str!("../../migrations/0008_training.sql")),
    ("0009_extraction_skips", include_str!("../../migrations/0009_extraction_skips.sql")),
    ("0010_people", include_str!("../../migrations/0010_people.sql")),
    ("0011_datasets", include_str!("../../migrations/0011_datasets.sql")),
    ("0012_agents", include_str!("../../migrations/0012_agents.sql")),
    ("0013_adapter_lifecycle", include_str!("../../migrations/0013_adapter_lifecycle.sql")),
];

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a writer waits for another process's write lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) a Strata database and brings its schema up to date.
pub fn open(path: &Path) -> Result<Connection> {
    crate::sqlite::vector_index::register_sqlite_vec();
    let existed = path.exists() && std::fs::metadata(path).map(|m| m.len() > 0).unwrap_or(false);
    if !existed {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot create the folder {}", dir.display()), e))?;
        }
    } else {
        check_writable(path)?;
        check_existing(path).map_err(|e| match e {
            Error::Corrupt(detail) => Error::Damaged { path: path.to_path_buf(), detail },
            other => other,
        })?;
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&conn)?;
    migrate(&conn, path)?;
    Ok(conn)
}

/// Opens an in-memory database (tests, benchmarks).
pub fn open_in_memory() -> Result<Connection> {
    crate::sqlite::vector_index::register_sqlite_vec();
    let conn = Connection::open_in_memory()?;
    configure(&conn)?;
    migrate(&conn, Path::new(":memory:"))?;
    Ok(conn)
}

/// Validates an existing file read-only, so a file that is not ours is never written to.
fn check_existing(path: &Path) -> Result<()> {
    let not_ours = |reason: String| Error::NotStrataDatabase { path: path.to_path_buf(), reason };
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| not_ours(e.to_string()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| not_ours(format!("{e} (it may be corrupted)")))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    if app_id != APPLICATION_ID {
        if app_id == 0 && tables == 0 {
            return Ok(()); // an empty SQLite file: fine to initialise
        }
        return Err(not_ours(format!("its application id is {app_id:#x}, not Strata's")));
    }
    if version > SCHEMA_VERSION {
        return Err(Error::NewerSchema { path: path.to_path_buf(), found: version, supported: SCHEMA_VERSION });
    }
    check_integrity(&conn, path)
}

/// The most findings of an integrity check quoted in the error.
const FINDINGS_SHOWN: usize = 3;

/// SQLite's `quick_check` over the whole file (every page, b-tree and record, and since SQLite
/// 3.44 the full-text index's own check; not whether ordinary indexes agree with their tables): damage
/// is found at open, before anything reads or writes.
/// It reads the file once (timed by `cargo bench -p strata-core --bench store`, "open";
/// docs/benchmarks.md).
pub(crate) fn check_integrity(conn: &Connection, path: &Path) -> Result<()> {
    let damaged = |detail: String| Error::Damaged { path: path.to_path_buf(), detail };
    let mut findings = Vec::new();
    let checked = conn.prepare("PRAGMA quick_check").and_then(|mut stmt| {
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            // One line each: a finding may span several ("*** in database main ***\nTree 60 …").
            findings.push(row.get::<_, String>(0)?.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        Ok(())
    });
    if let Err(e) = checked {
        return Err(match Error::from(e) {
            Error::Corrupt(m) => damaged(m),
            other => other,
        });
    }
    if findings.len() == 1 && findings[0] == "ok" {
        return Ok(());
    }
    let more = findings.len().saturating_sub(FINDINGS_SHOWN);
    let mut detail = findings.into_iter().take(FINDINGS_SHOWN).collect::<Vec<_>>().join("; ");
    if more > 0 {
        detail.push_str(&format!("; and {more} more"));
    }
    Err(damaged(detail))
}

/// The file and its folder must be writable: SQLite would otherwise open the file read-only
/// (or fail to create its journal files) and every write would fail later, less clearly.
fn check_writable(path: &Path) -> Result<()> {
    let read_only = |reason: String| Error::ReadOnly { path: path.to_path_buf(), reason };
    if let Err(e) = std::fs::OpenOptions::new().write(true).open(path) {
        return Err(read_only(format!("the file is read-only ({e})")));
    }
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => std::path::PathBuf::from("."),
    };
    // The journal files may exist already, but SQLite deletes them when the last connection
    // closes and creates them again on the next open: the folder must take new files.
    let probe = dir.join(format!(".strata-write-check-{}", ulid::Ulid::new()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(read_only(format!("its folder {} is read-only ({e})", dir.display()))),
    }
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Only takes effect on a new, empty file: rows of a few hundred bytes and many indexes
    // split less often in 8 KiB pages.
    conn.pragma_update(None, "page_size", 8192)?;
    // WAL: readers never block the writer; NORMAL sync is durable across process crashes
    // (a committed transaction survives SIGKILL), at the cost of the last commits on power loss.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Forgotten content is overwritten with zeros, not left in free pages.
    conn.pragma_update(None, "secure_delete", "ON")?;
    conn.pragma_update(None, "cache_size", -65_536)?;
    conn.pragma_update(None, "mmap_size", 268_435_456)?;
    // Checkpoint every ~64 MB of WAL (8,000 pages of 8 KiB) rather than every 4 MB: bursts of
    // writes copy hot index pages back far less often (appends 17% faster, measured including
    // a final checkpoint). After a checkpoint the WAL file is cut back to 32 MB.
    conn.pragma_update(None, "wal_autocheckpoint", 8_000)?;
    conn.pragma_update(None, "journal_size_limit", 32 * 1024 * 1024)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}

fn migrate(conn: &Connection, path: &Path) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(Error::NewerSchema { path: path.to_path_buf(), found: version, supported: SCHEMA_VERSION });
    }
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    // Re-read under the write lock: another process may have migrated meanwhile.
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tracing::info!(migration = name, "applying migration");
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    if version < 2 {
        // 0002 re-created the full-text index with a context column: fill it in the same
        // transaction (a crash leaves the file at the old version, index intact).
        let rows = crate::sqlite::fts::refill(&tx)?;
        tracing::info!(rows, "re-indexed the full text");
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}
