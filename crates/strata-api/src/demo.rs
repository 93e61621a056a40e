//! The example memories `strata demo` seeds so a newcomer sees something at once.

/// The tag every demo memory carries (and by which `demo` knows it already ran).
pub const TAG: &str = "demo";

/// The demo memories, as a seed-002 document.
pub const DOCUMENT: &str = include_str!("demo.json");
