//! A question in words over a table: the model writes one SQLite `SELECT` from the table's
//! name, columns and first rows; Strata runs it read-only (`Engine::query_dataset`, under the
//! authorizer) and returns the statement beside its result, so a person can check what was
//! asked of the data.

use serde::Serialize;
use strata_core::chat::{ChatModel, ChatRequest, Message};
use strata_core::datasets::{Dataset, DatasetKind, SqlAnswer, SqlLimits};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// Rows of the table shown to the model.
const SAMPLE_ROWS: usize = 3;
/// A text column with at most this many values has them listed for the model (it then writes
/// `country = 'Italy'`, not `city = 'Italy'`, and spells values as the table does).
const LISTED_VALUES: usize = 12;

const INSTRUCTIONS: &str = "You write one SQLite SELECT statement that answers the question from the table \
described below. Use only its columns, by the names given. Reply with the statement alone: no explanation, \
no code fence.";

/// The answer to a question over a table.
#[derive(Debug, Clone, Serialize)]
pub struct TableAnswer {
    /// The question.
    pub question: String,
    /// The statement the model wrote, as run.
    pub sql: String,
    /// What it returned.
    pub answer: SqlAnswer,
    /// Who wrote the statement ("openai gpt-4o-mini").
    pub model: String,
}

/// The table as the model reads it: its name, typed columns with the file's headers and what
/// each holds (`values`), and its first rows.
fn describe(d: &Dataset, values: &[String], rows: &[Vec<strata_core::datasets::Cell>]) -> String {
    let columns: Vec<String> = d
        .columns
        .iter()
        .zip(values)
        .map(|(c, v)| format!("  {} {} -- \"{}\"{v}", c.name, c.kind.sql(), c.header))
        .collect();
    let sample: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(|c| c.display()).collect::<Vec<_>>().join(" | "))
        .map(|r| format!("  {r}"))
        .collect();
    format!("Table {} ({} rows):\n{}\nFirst rows:\n{}", d.name, d.rows, columns.join("\n"), sample.join("\n"))
}

/// The statement in a model's reply: code fences and any words before `SELECT`/`WITH` taken
/// off, and what follows the first `;`.
pub fn statement_in(reply: &str) -> Option<String> {
    let text = reply.replace("```sql", "").replace("```", "");
    let upper = text.to_ascii_uppercase();
    let start = ["SELECT", "WITH"].iter().filter_map(|w| upper.find(w)).min()?;
    let sql = text[start..].split(';').next().unwrap_or_default().trim().to_string();
    (!sql.is_empty()).then_some(sql)
}

impl Engine {
    /// Answers `question` over the table `name`: `model` writes the statement, which runs
    /// read-only within `limits`. A reply with no statement, or a statement that does not run,
    /// is an error that quotes it.
    pub fn ask_table(
        &self,
        name: &str,
        question: &str,
        model: &dyn ChatModel,
        limits: SqlLimits,
    ) -> ApiResult<TableAnswer> {
        let d = self.dataset(name)?;
        if d.kind != DatasetKind::Table {
            return Err(ApiError::invalid(format!("{name} is a document: search it instead of asking SQL of it")));
        }
        let rows = self.dataset_rows(name, 0, SAMPLE_ROWS)?;
        let values: Vec<String> = d.columns.iter().map(|c| self.column_values(&d.name, &c.name)).collect();
        let request = ChatRequest {
            messages: vec![
                Message::system(INSTRUCTIONS),
                Message::user(format!("{}\n\nQuestion: {question}", describe(&d, &values, &rows))),
            ],
            max_tokens: Some(300),
            temperature: Some(0.0),
            ..Default::default()
        };
        let reply = model
            .chat(&request, &mut |_| {}, &std::sync::atomic::AtomicBool::new(false))
            .map_err(|e| ApiError::new(ErrorCode::Model, format!("the model could not write the SQL: {e}")))?;
        let who = format!("{} {}", model.provider(), model.model());
        let sql = statement_in(&reply.content).ok_or_else(|| {
            ApiError::new(
                ErrorCode::Model,
                format!("{who} did not write a SELECT; it said: {}", strata_core::error::excerpt(&reply.content)),
            )
        })?;
        let answer = self
            .query_dataset(name, &sql, limits)
            .map_err(|e| ApiError::new(e.code, format!("{who} wrote `{sql}`: {}", e.message)))?;
        Ok(TableAnswer { question: question.to_string(), sql, answer, model: who })
    }
}

impl Engine {
    /// What a column holds, for the model: its values when they are few ("; one of: bus, car"),
    /// else its range ("; from 2024-01-01 to 2025-12-27"); nothing when it cannot be read quickly.
    fn column_values(&self, table: &str, column: &str) -> String {
        let limits = SqlLimits { rows: LISTED_VALUES + 1, time: std::time::Duration::from_millis(500) };
        let quoted = format!("\"{}\"", column.replace('"', "\"\""));
        let sql = format!("SELECT DISTINCT {quoted} FROM {table} WHERE {quoted} IS NOT NULL ORDER BY 1");
        let Ok(listed) = self.query_dataset(table, &sql, limits) else { return String::new() };
        let texts: Vec<String> = listed.rows.iter().filter_map(|r| r.first()).map(|c| c.display()).collect();
        let numeric = listed.rows.iter().all(|r| !matches!(r.first(), Some(strata_core::datasets::Cell::Text(_))));
        if !listed.cut_off && !numeric {
            return format!("; one of: {}", texts.join(", "));
        }
        let sql = format!("SELECT min({quoted}), max({quoted}) FROM {table}");
        match self.query_dataset(table, &sql, limits).ok().and_then(|a| a.rows.into_iter().next()) {
            Some(r) if r.len() == 2 => format!("; from {} to {}", r[0].display(), r[1].display()),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::statement_in;

    #[test]
    fn the_statement_is_taken_out_of_a_reply() {
        assert_eq!(statement_in("SELECT 1;").as_deref(), Some("SELECT 1"));
        assert_eq!(
            statement_in("Here you go:\n```sql\nselect sum(amount) from expenses\n```").as_deref(),
            Some("select sum(amount) from expenses")
        );
        assert_eq!(
            statement_in("WITH x AS (SELECT 1) SELECT * FROM x; DROP TABLE t").as_deref(),
            Some("WITH x AS (SELECT 1) SELECT * FROM x")
        );
        assert_eq!(statement_in("I cannot answer that."), None);
    }
}
