//! Strata's benchmarks and evaluation harness, apart from the product: each runs through the
//! [`strata_api::Engine`] like any other client and returns a report that `strata bench …`
//! prints (figures in docs/benchmarks.md). Product crates never depend on this one.
#![deny(missing_docs)]

pub mod chatbench;
pub mod embedbench;
pub mod locomo;
pub mod mcpbench;
mod reference;
pub mod scalebench;
pub mod tokenbench;
