//! Files in and out: the seed-002 JSON document and the JSON Lines event backup. Every import
//! is one transaction: a bad file names its line and field and imports nothing.

pub mod backup;
pub mod seed;

use crate::error::Error;

/// Called as an import or export goes, with the work done and the work in all (0 when not
/// known yet). An error it returns (the person cancelled) stops the job; an import's
/// transaction then rolls back and nothing is imported.
pub type Tick<'a> = &'a mut dyn FnMut(u64, u64) -> Result<(), Error>;

/// How often (in items) a job reports.
pub(crate) const TICK_EVERY: u64 = 200;

/// A [`Tick`] that reports nothing and never stops.
pub fn no_tick(_: u64, _: u64) -> Result<(), Error> {
    Ok(())
}

/// Deserializes JSON with the failing field's path and line in the error.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    file: &str,
    line_offset: usize,
    text: &str,
) -> Result<T, Error> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner();
        let message = if path == "." || path == "?" || path.is_empty() {
            strip_position(&inner.to_string())
        } else {
            format!("field `{path}`: {}", strip_position(&inner.to_string()))
        };
        Error::BadImport { file: file.to_string(), line: line_offset + inner.line().max(1), message }
    })
}

/// serde_json appends " at line L column C"; we report the line ourselves.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The 1-based line of the first occurrence of `needle` in `text` (1 when absent).
pub(crate) fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map(|i| text[..i].matches('\n').count() + 1).unwrap_or(1)
}
