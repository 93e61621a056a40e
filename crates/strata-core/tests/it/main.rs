//! Integration tests of strata-core on real SQLite files in temporary directories.

mod support;

mod adapters;
mod agents;
mod analytics;
mod asof;
mod context;
mod damage;
mod datasets;
mod extraction;
mod fence;
mod forget;
mod format;
mod hostile_files;
mod interchange;
mod open;
mod people;
#[cfg(feature = "postgres")]
mod postgres;
mod protocol;
mod query;
mod replay;
mod seam;
#[cfg(feature = "postgres")]
mod server;
mod store;
mod tiers;
mod usage;
mod vectors;
