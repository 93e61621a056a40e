//! Importers against damaged files: a good seed document or backup, truncated, cut, patched
//! with JSON fragments, NUL and non-UTF-8 bytes, lines dropped, doubled or swapped. Whatever
//! comes in, an import never panics, and either imports the whole file or is refused with a
//! line number (at least 1) and imports nothing.

use std::sync::{Arc, LazyLock};

use proptest::prelude::*;
use strata_core::*;

use crate::damage::{apply, damage, line_count};
use crate::support::*;

fn store() -> Store {
    Store::in_memory(Arc::new(ManualClock::new(t0()))).unwrap()
}

/// A backup of a history with every kind of event: tags, tiers, links, accesses, a forget.
static GOOD_BACKUP: LazyLock<Vec<u8>> = LazyLock::new(good_backup);

fn good_backup() -> Vec<u8> {
    let mut s = store();
    let template = NewMemory { source: Source::app("import"), ..Default::default() };
    s.import_seed("seed.json", include_str!("../fixtures/seed-002.json"), &template, &user()).unwrap();
    let ids: Vec<MemoryId> = s.list(&Filter::default(), 10, None).unwrap().items.iter().map(|m| m.id).collect();
    s.transact(|tx| {
        tx.tag(ids[0], "favourite", &user())?;
        tx.set_tier(ids[0], Tier::Long, "kept", &user())?;
        tx.link(ids[0], ids[1], "mentions", &user())?;
        tx.link(ids[2], ids[0], "derived_from", &user())?;
        tx.pin(ids[3], &user())
    })
    .unwrap();
    s.note_access([ids[0], ids[1]]).unwrap();
    s.flush_accesses().unwrap();
    s.forget(ids[1], &user()).unwrap();
    let mut out = Vec::new();
    s.export_backup(&mut out).unwrap();
    out
}

/// Checks an import's outcome: all of it (`imported` memories or events are all there), or
/// a refusal with a line within the file and nothing there.
fn whole_or_nothing(
    result: Result<u64>,
    there: u64,
    lines: usize,
    text: &[u8],
) -> std::result::Result<(), TestCaseError> {
    match result {
        Ok(imported) => prop_assert_eq!(imported, there, "{}", String::from_utf8_lossy(text)),
        Err(Error::BadImport { line, .. }) => {
            prop_assert!((1..=lines + 1).contains(&line), "line {} of {}", line, lines);
            prop_assert_eq!(there, 0, "a refused import left something");
        }
        Err(e) => prop_assert!(false, "not an import error: {}", e),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_seed_document_imports_whole_or_not_at_all(damages in prop::collection::vec(damage(), 1..4)) {
        let bytes = apply(include_bytes!("../fixtures/seed-002.json"), &damages);
        let mut s = store();
        let template = NewMemory::default();
        let result = interchange::json::read_text("seed.json", &mut &bytes[..])
            .and_then(|text| s.import_seed("seed.json", &text, &template, &user()))
            .map(|counts| counts.total());
        let there = s.stats().unwrap().memories;
        whole_or_nothing(result, there, line_count(&bytes), &bytes)?;
    }

    #[test]
    fn a_damaged_backup_restores_whole_or_not_at_all(damages in prop::collection::vec(damage(), 1..4)) {
        let bytes = apply(&GOOD_BACKUP, &damages);
        let mut s = store();
        let result = s.import_backup("backup.jsonl", &mut &bytes[..]).map(|(events, _)| events);
        let there = s.event_count().unwrap();
        whole_or_nothing(result, there, line_count(&bytes), &bytes)?;
        if there > 0 {
            // What was restored is a log the commands could have written: replay agrees.
            let live = s.snapshot().unwrap();
            s.replay().unwrap();
            prop_assert_eq!(s.snapshot().unwrap(), live);
        }
    }
}
