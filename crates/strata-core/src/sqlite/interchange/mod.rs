//! SQLite's side of `crate::interchange`: seed files' lookups and duplicates.

mod seed;
