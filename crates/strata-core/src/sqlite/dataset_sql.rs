//! SQL over a table dataset, read-only, on both engines: one `SELECT` on a SQLite connection of
//! its own (the store's file opened read-only, or a copy of a PostgreSQL dataset's table) that
//! sees the dataset under its name (a temporary view) and is watched by SQLite's authorizer,
//! which lets a statement read that dataset's rows and nothing else — no other table, no
//! schema, no write, no `ATTACH`, no `PRAGMA`. A progress handler stops it at the time limit;
//! the rows are cut at the row limit.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

use crate::datasets::keeping::rows_table;
use crate::datasets::{Dataset, SqlAnswer, SqlLimits};
use crate::error::{Error, Result};
use crate::sqlite::datasets::to_cell;

/// The longest statement taken.
pub const MAX_SQL: usize = 10_000;

/// Refuses, before any engine sees it, a statement that is not one `SELECT` (or `WITH`,
/// `VALUES`) or is longer than [`MAX_SQL`].
pub(crate) fn check_statement(sql: &str) -> Result<()> {
    check_first_word(sql)?;
    if sql.len() > MAX_SQL {
        return Err(Error::invalid(format!("the statement is {} characters; the most is {MAX_SQL}", sql.len())));
    }
    Ok(())
}

/// Runs `sql` over the table dataset `d` (row id `rid`) on `conn`, which holds its rows as
/// `main.dataset_rows_<rid>`: under the dataset's name (a temporary view), query-only, under
/// the authorizer and the limits.
pub(crate) fn run_over(
    conn: &mut Connection,
    rid: i64,
    d: &Dataset,
    sql: &str,
    limits: SqlLimits,
) -> Result<SqlAnswer> {
    let columns: Vec<String> = d.columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let table = rows_table(rid);
    // A connection kept from an earlier statement still has that one's authorizer.
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
    conn.execute_batch(&format!(
        "CREATE TEMP VIEW IF NOT EXISTS \"{}\" AS SELECT {} FROM main.{table} ORDER BY row_number; PRAGMA query_only = 1;",
        d.name,
        columns.join(", ")
    ))?;
    run(conn, [&table, &d.name], sql, limits)
}

/// One statement: a `;` outside quotes and comments with more after it is refused.
fn check_one_statement(sql: &str) -> Result<()> {
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '[') => quote = Some(']'),
            (None, '-') if chars.peek() == Some(&'-') => {
                chars.by_ref().find(|c| *c == '\n');
            }
            (None, '/') if chars.peek() == Some(&'*') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '*' && chars.peek() == Some(&'/') {
                        chars.next();
                        break;
                    }
                }
            }
            (None, ';') if chars.clone().any(|c| !c.is_whitespace() && c != ';') => {
                return Err(Error::invalid("give one statement at a time"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A statement begins with `SELECT`, `WITH` or `VALUES` (after comments and brackets): anything
/// else is refused by name before SQLite sees it (the authorizer still judges what it does).
fn check_first_word(sql: &str) -> Result<()> {
    check_one_statement(sql)?;
    let mut rest = sql.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix('(') {
            rest = after.trim_start();
        } else {
            break;
        }
    }
    let word: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match word.to_ascii_uppercase().as_str() {
        "SELECT" | "WITH" | "VALUES" => Ok(()),
        "" => Err(Error::invalid("the statement is empty: write a SELECT over the dataset")),
        other => {
            Err(Error::invalid(format!("only a SELECT can run over a dataset: this statement begins with {other}")))
        }
    }
}

/// Runs `sql` under the authorizer and the limits.
fn run(conn: &mut Connection, readable: [&str; 2], sql: &str, limits: SqlLimits) -> Result<SqlAnswer> {
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = Arc::clone(&refused);
    let [table, view] = readable.map(str::to_string);
    // The file's own tables and views, which no statement may read but the dataset's.
    let stored: HashSet<String> = conn
        .prepare("SELECT name FROM main.sqlite_schema WHERE type IN ('table', 'view')")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        let verdict = judge(&ctx, &table, &view, &stored);
        if let Err(why) = &verdict {
            seen.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| why.clone());
        }
        verdict.map_or(Authorization::Deny, |()| Authorization::Allow)
    }))?;
    let started = Instant::now();
    let deadline = started + limits.time;
    conn.progress_handler(10_000, Some(move || Instant::now() > deadline))?;
    let explain = |e: rusqlite::Error| refusal(e, &refused, limits);
    let mut stmt = conn.prepare(sql).map_err(explain)?;
    if !stmt.readonly() {
        return Err(Error::invalid("only a SELECT can run over a dataset: this statement would write"));
    }
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.query([]).map_err(explain)?;
    let mut out = Vec::new();
    let mut cut_off = false;
    while let Some(row) = rows.next().map_err(explain)? {
        if out.len() == limits.rows {
            cut_off = true;
            break;
        }
        out.push((0..names.len()).map(|i| row.get_ref(i).map(to_cell)).collect::<rusqlite::Result<Vec<_>>>()?);
    }
    Ok(SqlAnswer { columns: names, rows: out, cut_off, millis: started.elapsed().as_millis() as u64 })
}

/// What a statement may do: read the dataset's rows (its table in `main`, or its view in
/// `temp`), call functions, recurse. Anything else, in words.
fn judge(ctx: &AuthContext<'_>, table: &str, view: &str, stored: &HashSet<String>) -> std::result::Result<(), String> {
    match ctx.action {
        AuthAction::Select | AuthAction::Recursive => Ok(()),
        AuthAction::Function { function_name } => match function_name.to_ascii_lowercase().as_str() {
            "load_extension" | "fts3_tokenizer" | "readfile" | "writefile" | "edit" => {
                Err(format!("it calls {function_name}(), which is not allowed here"))
            }
            _ => Ok(()),
        },
        // A read through the view names the view in `temp`; SQLite names no database for a
        // `count(*)` or a common table expression: those pass unless the name is one of the
        // file's own tables.
        AuthAction::Read { table_name, .. } => match ctx.database_name {
            Some("main") if table_name == table => Ok(()),
            Some("temp") if table_name == view => Ok(()),
            None if table_name == view || !stored.contains(table_name) => Ok(()),
            _ => Err(format!("it reads {table_name}, which is not this dataset")),
        },
        AuthAction::Attach { .. } => Err("it attaches another database".into()),
        AuthAction::Pragma { pragma_name, .. } => Err(format!("it sets or reads PRAGMA {pragma_name}")),
        AuthAction::Insert { .. } | AuthAction::Update { .. } | AuthAction::Delete { .. } => {
            Err("it writes: only a SELECT can run over a dataset".into())
        }
        _ => Err("it changes the database: only a SELECT can run over a dataset".into()),
    }
}

/// A driver's error, in words: a refusal names what the statement tried; a stop names the limit.
fn refusal(e: rusqlite::Error, refused: &Mutex<Option<String>>, limits: SqlLimits) -> Error {
    use rusqlite::ffi::ErrorCode;
    if let Some(why) = refused.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Error::invalid(format!("this statement cannot run over a dataset: {why}"));
    }
    match e.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => Error::invalid(format!(
            "the statement was stopped after {} s, the longest a statement may run",
            limits.time.as_secs_f64()
        )),
        _ => match e {
            rusqlite::Error::MultipleStatement => Error::invalid("give one statement at a time".to_string()),
            rusqlite::Error::SqliteFailure(_, Some(message)) if message.starts_with("cannot modify") => {
                Error::invalid("only a SELECT can run over a dataset: this statement would change it")
            }
            rusqlite::Error::SqliteFailure(_, Some(message)) => {
                Error::invalid(format!("the statement does not run: {message}"))
            }
            other => Error::from(other),
        },
    }
}
