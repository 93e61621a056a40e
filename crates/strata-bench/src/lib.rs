//! Strata's benchmarks and evaluation harness, apart from the product: what measures memory
//! (LoCoMo, recall at scale, the MCP round trip, answers from memory) runs through the
//! [`strata_api::Engine`] like any other client; what measures a model (embeddings, chat,
//! tokens) calls the model. Each
//! returns a report that `strata bench …` prints (figures in docs/benchmarks.md). No engine
//! crate depends on this one; only the CLI's `strata bench` and the desktop's benchmark do.
#![deny(missing_docs)]

pub mod adaptersbench;
pub mod agentbench;
pub mod analyticsbench;
pub mod answerbench;
pub mod answertrain;
pub mod chatbench;
pub mod compactbench;
pub mod datasetbench;
pub mod embedbench;
pub mod extractbench;
pub mod extracttrain;
pub mod factrecall;
pub mod locomo;
pub mod mcpbench;
pub mod pgscale;
mod reference;
pub mod scalebench;
pub mod tokenbench;
pub mod topics;
pub mod trainbench;
