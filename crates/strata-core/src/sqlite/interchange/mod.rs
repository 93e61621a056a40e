//! SQLite's side of `crate::interchange`: backups read and restored, seed files' lookups.

mod backup;
pub(crate) mod duplicates;
mod seed;
