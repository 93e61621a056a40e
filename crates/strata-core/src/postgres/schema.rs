//! PostgreSQL's own migrations: append-only (a test pins their checksums), applied in one
//! transaction under the writers' lock, refused when the database is newer than this build or
//! holds tables named like Strata's without being a Strata store.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// The shipped migrations, in order. Append only: a test pins their checksums.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../../migrations/postgres/0001_init.sql")),
    ("0002_search_length", include_str!("../../migrations/postgres/0002_search_length.sql")),
    ("0003_people", include_str!("../../migrations/postgres/0003_people.sql")),
    ("0004_session_index", include_str!("../../migrations/postgres/0004_session_index.sql")),
    ("0005_extraction", include_str!("../../migrations/postgres/0005_extraction.sql")),
    ("0006_usage", include_str!("../../migrations/postgres/0006_usage.sql")),
    ("0007_rates", include_str!("../../migrations/postgres/0007_rates.sql")),
    ("0008_datasets", include_str!("../../migrations/postgres/0008_datasets.sql")),
    ("0009_agents", include_str!("../../migrations/postgres/0009_agents.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the schema up to date (nothing to do: no write, no lock).
pub(crate) fn migrate(client: &mut postgres::Client, shown: &str) -> Result<()> {
    if version(client, shown)? == SCHEMA_VERSION {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::WRITER_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS strata_migrations (
             version    INTEGER PRIMARY KEY,
             name       TEXT    NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    // Read again under the lock: another process may have migrated meanwhile.
    let done: i64 = tx.query_one("SELECT coalesce(max(version), 0)::bigint FROM strata_migrations", &[])?.get(0);
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(done.max(0) as usize) {
        tracing::info!(migration = name, "applying a PostgreSQL migration");
        tx.batch_execute(sql)?;
        tx.execute("INSERT INTO strata_migrations (version, name) VALUES ($1, $2)", &[&(i as i32 + 1), name])?;
    }
    tx.commit()?;
    Ok(())
}

/// The database's schema version (0: a database Strata has not written yet).
fn version(client: &mut postgres::Client, shown: &str) -> Result<i64> {
    let has = |c: &mut postgres::Client, table: &str| -> Result<bool> {
        Ok(c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?.get(0))
    };
    if !has(client, "strata_migrations")? {
        if has(client, "events")? || has(client, "memories")? {
            return Err(Error::NotStrataDatabase {
                path: PathBuf::from(shown),
                reason: "it has tables named events or memories but no strata_migrations table".into(),
            });
        }
        return Ok(0);
    }
    let found: i64 = client.query_one("SELECT coalesce(max(version), 0)::bigint FROM strata_migrations", &[])?.get(0);
    if found > SCHEMA_VERSION {
        return Err(Error::NewerSchema { path: PathBuf::from(shown), found, supported: SCHEMA_VERSION });
    }
    Ok(found)
}
