//! SQLite's side of `crate::interchange`: seed files' lookups and duplicates.

pub(crate) mod duplicates;
mod seed;
