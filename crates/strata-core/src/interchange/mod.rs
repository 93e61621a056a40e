//! Files in and out: the seed-002 JSON document and the JSON Lines event backup. Every import
//! is one transaction: a bad file names its line and field and imports nothing. Every JSON a
//! file holds is read strictly ([`json`]).

pub mod backup;
mod backup_agents;
pub mod chats;
pub mod duplicates;
pub mod json;
pub mod seed;
mod seed_store;

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

/// The 1-based line of the first occurrence of `needle` in `text` (1 when absent).
pub(crate) fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map(|i| text[..i].matches('\n').count() + 1).unwrap_or(1)
}
