//! Long jobs with progress and cancellation: imports, exports and maintenance report as they
//! go, and a cancelled import or maintenance leaves the database as it was.

use strata_api::{ErrorCode, ImportFormat};
use strata_core::Filter;

use crate::Db;

fn seed_document(n: usize) -> String {
    let semantic: Vec<String> = (0..n).map(|i| format!(r#""thing{i}": {{"colour": "c{i}"}}"#)).collect();
    format!(r#"{{"semantic": {{{}}}, "episodic": [], "procedural": {{}}}}"#, semantic.join(", "))
}

#[test]
fn an_import_reports_progress_and_a_cancelled_one_imports_nothing() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    let doc = seed_document(500);
    let mut seen = Vec::new();
    let (format, n) = e
        .import_with("seed.json", &mut doc.as_bytes(), None, &mut |done, total| {
            seen.push((done, total));
            Ok(())
        })
        .unwrap();
    assert_eq!((format, n), (ImportFormat::Seed, 500));
    assert_eq!(seen.first(), Some(&(0, 500)));
    assert_eq!(seen.last(), Some(&(500, 500)));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "progress only grows");

    let mut e2 = db.engine("v", None);
    let err = e2
        .import_with("seed.json", &mut doc.as_bytes(), None, &mut |done, _| {
            if done >= 250 { Err(strata_core::Error::Cancelled("stopped".into())) } else { Ok(()) }
        })
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(e2.list(Filter::default(), 10, None).unwrap().items.is_empty(), "half an import was kept");
}

#[test]
fn exports_report_progress_and_can_be_stopped() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    e.import("seed.json", &mut seed_document(450).as_bytes(), None).unwrap();
    for format in [ImportFormat::Seed, ImportFormat::Backup, ImportFormat::Graph] {
        let mut out = Vec::new();
        let mut last = (0, 0);
        let n = e
            .export_with(format, &mut out, &mut |done, total| {
                last = (done, total);
                Ok(())
            })
            .unwrap();
        assert!(n >= 450, "{format:?}: {n}");
        assert_eq!(last.0, n, "{format:?} ends on what it wrote");
        let err = e
            .export_with(format, &mut Vec::new(), &mut |done, _| {
                if done > 0 { Err(strata_core::Error::Cancelled("stopped".into())) } else { Ok(()) }
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled, "{format:?}");
    }
}

#[test]
fn a_cancelled_maintenance_moves_nothing() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    e.import("seed.json", &mut seed_document(20).as_bytes(), None).unwrap();
    let policy = strata_core::TierPolicy { promote_to_long: 0.0, promote_min_accesses: 0, ..Default::default() };
    let preview = e.maintain(&policy, false).unwrap();
    assert!(!preview.is_empty(), "the policy moves something");
    let err = e
        .maintain_with(&policy, true, &mut |done, total| {
            if done == total && total > 0 { Err(strata_core::Error::Cancelled("stopped".into())) } else { Ok(()) }
        })
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert_eq!(e.maintain(&policy, false).unwrap(), preview, "the moves were rolled back");
    let mut ticks = Vec::new();
    let applied = e
        .maintain_with(&policy, true, &mut |d, t| {
            ticks.push((d, t));
            Ok(())
        })
        .unwrap();
    assert_eq!(applied, preview);
    assert_eq!(ticks.last(), Some(&(preview.len() as u64, preview.len() as u64)));
}
