//! `Engine::import` against damaged files, the format detected from what is left: whatever
//! comes in, it never panics, and either imports the whole file or is refused with a line
//! number (at least 1) and writes nothing.

use proptest::prelude::*;
use strata_api::ErrorCode;

#[path = "../../../strata-core/tests/it/damage.rs"]
mod damage;

use crate::Db;
use damage::{apply, damage, line_count};

const GRAPH: &[u8] = include_bytes!("../fixtures/memory.json");
const SEED: &[u8] = include_bytes!("../../../strata-core/tests/fixtures/seed-002.json");

fn check(file: &[u8], damages: &[damage::Damage]) -> Result<(), TestCaseError> {
    let bytes = apply(file, damages);
    let db = Db::new();
    let mut e = db.engine("u", None);
    let result = e.import("file", &mut &bytes[..], None);
    let written = e.stats().unwrap().events;
    match result {
        Ok((_, imported)) => {
            prop_assert_eq!(imported == 0, written == 0, "imported {} in {} events", imported, written)
        }
        Err(err) => {
            prop_assert_eq!(err.code, ErrorCode::BadImport, "{}", err.message);
            let line: usize = err
                .message
                .strip_prefix("file:")
                .and_then(|m| m.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            prop_assert!((1..=line_count(&bytes) + 1).contains(&line), "{}", err.message);
            prop_assert_eq!(written, 0, "a refused import wrote something");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_memory_json_imports_whole_or_not_at_all(damages in prop::collection::vec(damage(), 1..4)) {
        check(GRAPH, &damages)?;
    }

    #[test]
    fn a_damaged_file_of_any_format_imports_whole_or_not_at_all(damages in prop::collection::vec(damage(), 1..4)) {
        check(SEED, &damages)?;
    }
}
