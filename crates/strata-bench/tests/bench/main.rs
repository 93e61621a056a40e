//! strata-bench's tests: the parts of the benchmarks that need no model.

mod answers;
mod compaction;
mod extraction;
mod facts;
