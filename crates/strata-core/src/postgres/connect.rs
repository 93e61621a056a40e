//! Connecting to a PostgreSQL server, and saying in one sentence what is wrong when it cannot
//! serve Strata: a bad URL, an unreachable host, a refused login, a missing database, a server
//! older than 16, pgvector missing or older than 0.7. Never a driver's raw error, never the
//! password.

use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// The oldest PostgreSQL Strata runs on (`server_version_num`).
pub(crate) const MIN_SERVER: i32 = 160_000;
/// The oldest pgvector Strata runs on (HNSW with `iterative_scan` needs 0.8; 0.7 is the floor).
pub(crate) const MIN_PGVECTOR: (u32, u32) = (0, 7);
/// How long a connection attempt waits when the URL does not say (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `url` with its password replaced by `***` (for messages and logs).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((userinfo, host)) = rest.rsplit_once('@') else { return url.to_string() };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// The driver's error in words: the server's message when it sent one, else the cause.
pub(crate) fn words(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    match std::error::Error::source(e) {
        Some(cause) => cause.to_string(),
        None => e.to_string(),
    }
}

/// Connects and checks the server. Returns the client and the URL as shown in messages.
pub(crate) fn connect(url: &str) -> Result<(postgres::Client, String)> {
    let shown = redact(url);
    let mut config = postgres::Config::from_str(url).map_err(|e| {
        Error::Invalid(format!(
            "{shown} is not a PostgreSQL URL ({e}); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        ))
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let mut client = config.connect(postgres::NoTls).map_err(|e| refused(&e, &config, &shown))?;
    check_server(&mut client, &shown)?;
    Ok((client, shown))
}

/// Why a connection was refused, in one sentence.
fn refused(e: &postgres::Error, config: &postgres::Config, shown: &str) -> Error {
    use postgres::error::SqlState;
    let user = config.get_user().unwrap_or("(none)");
    let database = config.get_dbname().unwrap_or(user);
    let sentence = match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => format!(
            "PostgreSQL at {shown} refused the login of '{user}': the password is wrong or the user may not connect ({})",
            words(e)
        ),
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => format!(
            "the database '{database}' does not exist on the PostgreSQL server at {shown}: create it first (createdb {database})"
        ),
        Some(c) if *c == SqlState::TOO_MANY_CONNECTIONS => {
            format!("the PostgreSQL server at {shown} has no connection left ({}); try again later", words(e))
        }
        Some(_) => format!("PostgreSQL at {shown} refused the connection: {}", words(e)),
        None => format!(
            "cannot reach a PostgreSQL server at {shown} ({}): check that it is running and that the URL's host and port are right",
            words(e)
        ),
    };
    Error::Connect(sentence)
}

/// The server must be PostgreSQL 16 or newer with pgvector 0.7 or newer in this database
/// (created here when the server has it and the user may).
fn check_server(client: &mut postgres::Client, shown: &str) -> Result<()> {
    let version: String = client.query_one("SHOW server_version_num", &[])?.get(0);
    let version: i32 = version.trim().parse().unwrap_or(0);
    if version < MIN_SERVER {
        return Err(Error::Connect(format!(
            "the server at {shown} runs PostgreSQL {}.{}; Strata needs PostgreSQL 16 or newer",
            version / 10_000,
            version % 10_000
        )));
    }
    let installed = |c: &mut postgres::Client| -> Result<Option<String>> {
        Ok(c.query_opt("SELECT extversion FROM pg_extension WHERE extname = 'vector'", &[])?.map(|r| r.get(0)))
    };
    let mut found = installed(client)?;
    if found.is_none() {
        let available = client.query_opt("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'", &[])?.is_some();
        if !available {
            return Err(Error::Connect(format!(
                "the PostgreSQL server at {shown} does not have the pgvector extension: install pgvector 0.7 or newer on it (for example the package postgresql-{}-pgvector, or the pgvector/pgvector container image), then connect again",
                version / 10_000
            )));
        }
        if let Err(e) = client.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
            return Err(Error::Connect(format!(
                "pgvector is installed on the server at {shown} but not enabled in this database, and this user may not enable it ({}): ask the database's owner to run CREATE EXTENSION vector",
                words(&e)
            )));
        }
        found = installed(client)?;
    }
    let found = found.unwrap_or_default();
    let mut parts = found.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < MIN_PGVECTOR {
        return Err(Error::Connect(format!(
            "the database at {shown} has pgvector {found}; Strata needs 0.7 or newer: install a newer pgvector on the server, then run ALTER EXTENSION vector UPDATE"
        )));
    }
    // Iterative index scans (pgvector 0.8): a filter that drops most of HNSW's candidates
    // still gets its limit (see postgres::vectors).
    if (major, minor) >= (0, 8) {
        client.batch_execute("SET hnsw.iterative_scan = relaxed_order")?;
    }
    Ok(())
}

/// How wide HNSW searches on this connection: the store's own `hnsw_ef_search` setting, else
/// [`super::vectors::EF_SEARCH`]. Once the schema is there (after the migrations).
pub(crate) fn set_ef_search(client: &mut postgres::Client) -> Result<()> {
    let own = client.query_opt("SELECT value FROM settings WHERE key = 'hnsw_ef_search'", &[])?;
    let ef = own.and_then(|r| r.get::<_, String>(0).trim().parse::<u32>().ok()).filter(|n| (1..=1000).contains(n));
    client.batch_execute(&format!("SET hnsw.ef_search = {}", ef.unwrap_or(super::vectors::EF_SEARCH)))?;
    Ok(())
}

/// Drops the database `url` names if it exists, and creates it empty, connecting to the
/// server's `postgres` database with the URL's credentials. For benchmarks and tests that need
/// a fresh store per run; nothing in the product calls it. The name must be letters, digits
/// and `_`.
pub fn recreate_database(url: &str) -> Result<()> {
    let shown = redact(url);
    let mut config = postgres::Config::from_str(url)
        .map_err(|e| Error::Invalid(format!("{shown} is not a PostgreSQL URL ({e})")))?;
    let name = config.get_dbname().unwrap_or_default().to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::Invalid(format!("'{name}' is not a database name of letters, digits and _")));
    }
    config.dbname("postgres");
    let mut admin = config.connect(postgres::NoTls).map_err(|e| refused(&e, &config, &shown))?;
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))?;
    admin.batch_execute(&format!("CREATE DATABASE \"{name}\""))?;
    Ok(())
}
