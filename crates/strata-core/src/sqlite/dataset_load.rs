//! Keeping a dataset on SQLite in batches. SQLite has one writer at a time, and a file of a
//! million rows takes seconds to write: in one transaction, a chat's answer or a new memory
//! waiting on the lock would be refused as busy. So a load writes its rows and passages in
//! transactions of about [`BATCH_TIME`] each, with a pause between them long enough for a
//! waiting writer's next try, under a name no one can ask for (`~loading~NAME`); a last short
//! transaction gives it its name (replacing the dataset of that name, if any). Until then it
//! is not listed, searched or queried; a load that fails erases what it wrote, and one that was
//! killed leaves a hidden record that the next load or forget of that name erases.

use std::time::{Duration, Instant};

use rusqlite::types::Value;
use rusqlite::{Transaction, TransactionBehavior, params};

use crate::clock::to_ms;
use crate::datasets::keeping::rows_table;
use crate::datasets::{Cell, Chunk, Column, Dataset, DatasetKind, Loaded, NewDataset};
use crate::error::{Error, Result};
use crate::sqlite::Db;
use crate::sqlite::datasets::{erase, find, to_json, to_value};

/// About how long one batch holds the write lock.
const BATCH_TIME: Duration = Duration::from_millis(400);

/// The pause between two batches: longer than the 100 ms a writer waiting on SQLite's busy
/// timeout sleeps between its tries, so that it finds the lock free.
const PAUSE: Duration = Duration::from_millis(120);

/// Rows or passages written between two looks at the clock.
const STEP: usize = 500;

/// The name a dataset has while it is being kept (names a person gives cannot begin with `~`).
pub(crate) fn hidden_name(name: &str) -> String {
    format!("~loading~{name}")
}

/// Keeps `new` as `user`'s dataset (see the module's note): added as `id`, replaced whole, or
/// left as it is when its digest is the one kept.
pub(crate) fn keep(db: &Db, user: &str, new: &NewDataset, now: i64, id: &str) -> Result<(Dataset, Loaded)> {
    let hidden = hidden_name(&new.name);
    let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
    if let Some((_, old)) = find(&tx, user, &new.name)?
        && old.digest == new.digest
    {
        return Ok((old, Loaded::Unchanged));
    }
    if let Some((rid, _)) = find(&tx, user, &hidden)? {
        erase(&tx, rid)?;
    }
    let rid = insert_record(&tx, user, &hidden, id, new, now)?;
    if new.kind == DatasetKind::Table {
        create_rows_table(&tx, rid, &new.columns)?;
    }
    tx.commit()?;
    let written = in_batches(db, &new.rows, |tx, from, rows| write_rows(tx, rid, &new.columns, from, rows))
        .and_then(|()| in_batches(db, &new.chunks, |tx, from, chunks| write_chunks(tx, rid, from, chunks)));
    let named = written.and_then(|()| give_name(db, user, rid, new, now, id));
    if let Err(e) = &named {
        // The load's own error is the one to tell; what it wrote stays hidden if this fails too,
        // and the next load or forget of the name erases it.
        let erased = Transaction::new_unchecked(db, TransactionBehavior::Immediate)
            .map_err(Error::from)
            .and_then(|tx| erase(&tx, rid).and_then(|()| Ok(tx.commit()?)));
        if let Err(also) = erased {
            tracing::warn!("a failed load of {} ({e}) left what it wrote hidden: {also}", new.name);
        }
    }
    named
}

/// The last transaction: the kept dataset takes its name, replacing the one of that name (whose
/// id and first load it keeps).
fn give_name(db: &Db, user: &str, rid: i64, new: &NewDataset, now: i64, id: &str) -> Result<(Dataset, Loaded)> {
    let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
    let (loaded, loaded_at, id) = match find(&tx, user, &new.name)? {
        Some((old_rid, old)) => {
            erase(&tx, old_rid)?;
            (Loaded::Replaced, to_ms(old.loaded_at), old.id)
        }
        None => (Loaded::Added, now, id.to_string()),
    };
    tx.prepare_cached("UPDATE datasets SET name = ?1, id = ?2, loaded_at = ?3 WHERE rid = ?4")?
        .execute(params![new.name, id, loaded_at, rid])?;
    crate::sqlite::vector_scan::bump_version(&tx)?;
    let (_, dataset) = find(&tx, user, &new.name)?.ok_or_else(|| Error::Storage("the dataset vanished".into()))?;
    tx.commit()?;
    Ok((dataset, loaded))
}

/// Writes `items` in transactions of about [`BATCH_TIME`] each, pausing between them:
/// `write(tx, first index, items)` writes a run of them.
fn in_batches<T>(
    db: &Db,
    items: &[T],
    mut write: impl FnMut(&Transaction<'_>, usize, &[T]) -> Result<()>,
) -> Result<()> {
    let mut done = 0;
    while done < items.len() {
        let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
        let started = Instant::now();
        while done < items.len() && started.elapsed() < BATCH_TIME {
            let end = (done + STEP).min(items.len());
            write(&tx, done, &items[done..end])?;
            done = end;
        }
        tx.commit()?;
        if done < items.len() {
            std::thread::sleep(PAUSE);
        }
    }
    Ok(())
}

fn insert_record(tx: &Transaction<'_>, user: &str, name: &str, id: &str, new: &NewDataset, now: i64) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO datasets (id, user_id, name, kind, source, format, digest, loaded_at, updated_at, \
         columns, sections, row_count, chunk_count, notes) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        // Another id while hidden: the dataset it replaces keeps its own until the end.
        format!("{id}~loading"),
        user,
        name,
        new.kind.as_str(),
        new.source,
        new.format,
        new.digest,
        now,
        now,
        to_json(&new.columns)?,
        to_json(&new.sections)?,
        new.rows.len() as i64,
        new.chunks.len() as i64,
        to_json(&new.notes)?,
    ])?;
    Ok(tx.last_insert_rowid())
}

fn create_rows_table(tx: &Transaction<'_>, rid: i64, columns: &[Column]) -> Result<()> {
    let declared: Vec<String> = columns.iter().map(|c| format!("\"{}\" {}", c.name, c.kind.sql())).collect();
    tx.execute_batch(&format!(
        "CREATE TABLE {} (row_number INTEGER PRIMARY KEY, {})",
        rows_table(rid),
        declared.join(", ")
    ))?;
    Ok(())
}

/// Writes `rows`, the first numbered `from` + 1.
fn write_rows(tx: &Transaction<'_>, rid: i64, columns: &[Column], from: usize, rows: &[Vec<Cell>]) -> Result<()> {
    let marks = vec!["?"; columns.len()].join(", ");
    let names: Vec<String> = columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let mut insert = tx.prepare_cached(&format!(
        "INSERT INTO {} (row_number, {}) VALUES (?, {marks})",
        rows_table(rid),
        names.join(", ")
    ))?;
    let mut values = Vec::with_capacity(columns.len() + 1);
    for (i, row) in rows.iter().enumerate() {
        values.clear();
        values.push(Value::Integer((from + i) as i64 + 1));
        values.extend(row.iter().map(to_value));
        insert.execute(rusqlite::params_from_iter(values.iter()))?;
    }
    Ok(())
}

/// Writes `chunks` and their words, the first at ordinal `from`.
fn write_chunks(tx: &Transaction<'_>, rid: i64, from: usize, chunks: &[Chunk]) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO dataset_chunks (dataset_rid, ordinal, text, page, heading, line_start, line_end, row_number) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut index =
        tx.prepare_cached("INSERT INTO dataset_fts (rowid, text, heading, dataset) VALUES (?1, ?2, ?3, ?4)")?;
    let word = format!("d{rid}");
    for (i, c) in chunks.iter().enumerate() {
        let p = &c.place;
        insert.execute(params![
            rid,
            (from + i) as i64,
            c.text,
            p.page.map(i64::from),
            p.heading,
            i64::from(p.lines.0),
            i64::from(p.lines.1),
            p.row.map(|r| r as i64)
        ])?;
        index.execute(params![tx.last_insert_rowid(), c.text, p.heading.as_deref().unwrap_or(""), word])?;
    }
    Ok(())
}
