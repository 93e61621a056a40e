//! The PostgreSQL engine (with pgvector): the second place that speaks SQL, for teams and large
//! stores (`postgres://` URLs). It connects and checks the server (`connect`), migrates its own
//! schema (`schema`), and gives the write path's [`crate::storage::Log`] primitives inside one
//! write transaction (`log`, `projection`). Features not served here yet answer
//! [`Error::Unsupported`] (docs/decisions/0007-postgresql-engine.md).
//!
//! One writer at a time: [`Pg::write`] takes a transaction-scoped advisory lock before its
//! first statement, so writers of one database (in any process, on any machine) are serialized
//! as SQLite's `BEGIN IMMEDIATE` serializes them; readers never wait for it.

mod connect;
mod datasets;
mod forget;
mod health;
mod log;
mod prepared;
mod projection;
mod query;
mod rates;
mod reads;
mod rows;
pub mod schema;
mod table_copy;
mod vectors;

use std::cell::{RefCell, RefMut};

/// The driver itself, for tests and tools that look at a database as another client would
/// (so that they need no dependency of their own on it).
pub use ::postgres as driver;
pub use connect::recreate_database;
pub use vectors::{EF_SEARCH, EXACT_BELOW};

use crate::error::{Error, Result};

/// The advisory lock every writer of a Strata database holds for its transaction ("STRA").
const WRITER_LOCK: i64 = 0x5354_5241;

/// An open PostgreSQL store: one connection, used from one thread at a time (the engine is
/// called from blocking threads, as SQLite's is).
pub(crate) struct Pg {
    client: RefCell<postgres::Client>,
    /// Statements prepared on this connection (`prepared`).
    statements: prepared::Prepared,
    /// The URL without its password, for messages.
    pub(crate) shown: String,
    /// The URL as given (with its password): only to open another connection, never shown.
    url: String,
    /// Set when a write found the connection cut: the driver may not have seen the socket
    /// close yet, and the next write must not try it again.
    lost: std::cell::Cell<bool>,
    /// The table dataset SQL last ran over, copied into SQLite (`table_copy.rs`).
    table_copy: RefCell<Option<crate::sqlite::table_copy::TableCopy>>,
}

impl Pg {
    /// Connects to `url`, checks the server (PostgreSQL 16+, pgvector 0.7+) and brings the
    /// schema up to date.
    pub(crate) fn open(url: &str) -> Result<Pg> {
        let (mut client, shown) = connect::connect(url)?;
        schema::migrate(&mut client, &shown)?;
        connect::set_ef_search(&mut client)?;
        Ok(Pg {
            client: RefCell::new(client),
            statements: Default::default(),
            shown,
            url: url.to_string(),
            lost: Default::default(),
            table_copy: Default::default(),
        })
    }

    /// Another connection to the same database (its schema is already up to date).
    pub(crate) fn another(&self) -> Result<Pg> {
        let (mut client, shown) = connect::connect(&self.url)?;
        connect::set_ef_search(&mut client)?;
        Ok(Pg {
            client: RefCell::new(client),
            statements: Default::default(),
            shown,
            url: self.url.clone(),
            lost: Default::default(),
            table_copy: Default::default(),
        })
    }

    /// The connection, for a read: a new one when the last was lost (the server restarted, or
    /// the connection was cut); if that fails too, the lost one, whose next statement says so.
    pub(crate) fn client(&self) -> RefMut<'_, postgres::Client> {
        self.reconnect_if_lost();
        self.client.borrow_mut()
    }

    /// Replaces a lost connection with a new one (its prepared statements go with it).
    fn reconnect_if_lost(&self) {
        if self.lost.get() || self.client.borrow().is_closed() {
            self.reconnect();
        }
    }

    /// Replaces the connection with a new one, if one can be made.
    fn reconnect(&self) {
        match connect::connect(&self.url).and_then(|(mut c, s)| connect::set_ef_search(&mut c).map(|()| (c, s))) {
            Ok((client, _)) => {
                tracing::info!(store = %self.shown, "the connection to PostgreSQL was lost; connected again");
                *self.client.borrow_mut() = client;
                self.statements.clear();
                self.lost.set(false);
            }
            Err(e) => {
                tracing::warn!(store = %self.shown, "the connection to PostgreSQL was lost and cannot be made again: {e}")
            }
        }
    }

    /// Starts the one write transaction: the writers' advisory lock, held until commit or drop.
    /// A write on a lost connection fails, saying so, and writes nothing; the next one connects
    /// again (a write is not retried here: its caller decides whether it is safe to repeat).
    pub(crate) fn write(&mut self) -> Result<PgTx<'_>> {
        self.reconnect_if_lost();
        let Pg { client, statements, lost, .. } = self;
        let noted = |e: &postgres::Error| lost.set(lost.get() || is_lost(e));
        let mut tx = client.get_mut().transaction().inspect_err(noted)?;
        let lock = statements.get(&mut tx, "SELECT pg_advisory_xact_lock($1)").inspect_err(noted)?;
        tx.execute(&lock, &[&WRITER_LOCK]).inspect_err(noted)?;
        Ok(PgTx { tx: RefCell::new(tx), prepared: statements })
    }
}

impl Pg {
    /// Whether another session holds the writers' lock now (asked without waiting).
    pub(crate) fn writer_busy(&self) -> Result<bool> {
        let mut client = self.client.borrow_mut();
        let got: bool = client.query_one("SELECT pg_try_advisory_lock($1)", &[&WRITER_LOCK])?.get(0);
        if got {
            client.execute("SELECT pg_advisory_unlock($1)", &[&WRITER_LOCK])?;
        }
        Ok(!got)
    }
}

/// A write transaction (see [`Pg::write`]); dropped without [`PgTx::commit`], it rolls back.
pub(crate) struct PgTx<'a> {
    tx: RefCell<postgres::Transaction<'a>>,
    /// The connection's prepared statements (`prepared::Runs` runs a statement through them).
    prepared: &'a prepared::Prepared,
}

impl<'a> PgTx<'a> {
    /// The transaction, for a statement.
    pub(crate) fn tx(&self) -> RefMut<'_, postgres::Transaction<'a>> {
        self.tx.borrow_mut()
    }

    /// Commits the transaction.
    pub(crate) fn commit(self) -> Result<()> {
        Ok(self.tx.into_inner().commit()?)
    }
}

/// Whether `e` says the connection is gone: closed, cut by the server (class 08, or 57P0x:
/// shut down, terminated by an administrator, not accepting connections yet), or broken under
/// the driver (an I/O error: a reset, when the server's goodbye did not arrive first).
pub(crate) fn is_lost(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.code().is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"))
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Self {
        use postgres::error::SqlState;
        match e.code() {
            Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::LOCK_NOT_AVAILABLE => Error::Busy,
            Some(c) if *c == SqlState::DATA_CORRUPTED || *c == SqlState::INDEX_CORRUPTED => {
                Error::Corrupt(connect::words(&e))
            }
            _ if is_lost(&e) => Error::Storage(format!(
                "the connection to PostgreSQL was lost ({}); nothing more was written, try again",
                connect::words(&e)
            )),
            _ => Error::Storage(connect::words(&e)),
        }
    }
}

/// The tables forget writes to, vacuumed after it (docs/security.md).
const FORGET_TABLES: [&str; 17] = [
    "events",
    "memories",
    "memory_tags",
    "memory_links",
    "memory_vectors",
    "extraction_reads",
    "extraction_decisions",
    "recalls",
    "recall_hits",
    "feedback",
    "datasets",
    "dataset_chunks",
    "dataset_vectors",
    "agents",
    "agent_versions",
    "agent_runs",
    "agent_steps",
];

impl Pg {
    /// Removes the old row versions a forget left in its tables (`VACUUM`); returns whether
    /// none is left — false when another session's open transaction may still read them (a
    /// later scrub completes it).
    pub(crate) fn vacuum_forgotten(&self) -> Result<bool> {
        let mut c = self.client();
        // One statement: VACUUM cannot run inside a transaction block.
        c.batch_execute(&format!("VACUUM {}", FORGET_TABLES.join(", ")))?;
        c.batch_execute("SELECT pg_stat_clear_snapshot()")?;
        let tables: Vec<&str> = FORGET_TABLES.to_vec();
        let left: i64 = c
            .query_one(
                "SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables \
                 WHERE schemaname = current_schema() AND relname = ANY($1)",
                &[&tables],
            )?
            .try_get(0)?;
        Ok(left == 0)
    }
}
