//! Moving a store between engines (`strata migrate FROM TO`): SQLite to PostgreSQL or back,
//! through the event log. The source's backup is streamed into the target's restore (no file
//! in between); the restore is one transaction, so a failure or a cancel leaves the target
//! empty; the target's memories, replayed from the log, are then compared with the source's.
//! The person's agents come with the backup, with their versions (their runs stay behind).
//! Datasets are copied after the memories, one by one, as they were loaded. Vectors are derived
//! data: the target embeds its memories and passages again (`strata embed`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use strata_core::{Clock, Error, Store, SystemClock};

use crate::error::{ApiError, ApiResult, ErrorCode};

/// What a migration moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Migrated {
    /// Events copied.
    pub events: u64,
    /// Memories the target holds after replaying them (the same as the source's).
    pub memories: u64,
    /// Datasets copied (everyone's).
    pub datasets: u64,
}

/// Opens a store that must already exist (a file), or a PostgreSQL database.
fn open_existing(location: &Path, clock: Arc<dyn Clock>) -> ApiResult<Store> {
    let text = location.to_string_lossy();
    if !strata_core::store::is_database_url(&text) && !location.exists() {
        return Err(ApiError::invalid(format!("there is no database at {}", location.display())));
    }
    Ok(Store::open_location(&text, clock)?)
}

/// Copies every event of the store at `from` into the empty store at `to`, and checks that both
/// hold the same memories. `progress` hears (events copied, events in all); `cancel` stops the
/// copy, which then leaves nothing in the target.
pub fn migrate(from: &Path, to: &Path, progress: &mut dyn FnMut(u64, u64), cancel: &AtomicBool) -> ApiResult<Migrated> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let source = open_existing(from, clock.clone())?;
    let mut target = Store::open_location(&to.to_string_lossy(), clock)?;
    let held = target.event_count()?;
    if held > 0 {
        return Err(ApiError::invalid(format!(
            "{} already holds {held} events: migrate into an empty store",
            target.location()
        )));
    }
    let expected = source.snapshot()?.memories;
    let (reader, mut writer) =
        std::io::pipe().map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot start the copy: {e}")))?;
    let (events, source) = std::thread::scope(|s| -> ApiResult<(u64, Store)> {
        let export = s.spawn(move || {
            let mut out = std::io::BufWriter::new(&mut writer);
            let written = source.export_backup(&mut out);
            drop(out);
            drop(writer); // the restore reads to the end
            (written, source)
        });
        let mut input = std::io::BufReader::new(reader);
        let mut tick = |done: u64, total: u64| -> strata_core::Result<()> {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled("the migration was stopped; nothing was written to the target".into()));
            }
            progress(done, total);
            Ok(())
        };
        let restored = target.import_backup_with(&from.to_string_lossy(), &mut input, &mut tick);
        drop(input);
        let (written, source) = export.join().map_err(|_| ApiError::new(ErrorCode::Internal, "the copy failed"))?;
        match (written, restored) {
            // Stopped: the export only saw its reader go.
            (_, Err(e @ Error::Cancelled(_))) => Err(e.into()),
            // The export's own error says more than the restore's "truncated".
            (Err(e), _) => Err(e.into()),
            (Ok(_), restored) => Ok((restored?.0, source)),
        }
    })?;
    let datasets = copy_datasets(&source, &mut target)?;
    drop(source);
    let got = target.snapshot()?.memories;
    if got != expected {
        return Err(ApiError::new(
            ErrorCode::Internal,
            format!(
                "the copy in {} holds {} memories where the source holds {}; it was kept for inspection",
                target.location(),
                got.len(),
                expected.len()
            ),
        ));
    }
    Ok(Migrated { events, memories: got.len() as u64, datasets })
}

/// Copies everyone's datasets (tables and documents, as loaded; their vectors are made again
/// with the memories'), one at a time: a failure names the dataset.
fn copy_datasets(source: &Store, target: &mut Store) -> ApiResult<u64> {
    let mut copied = 0;
    for user in source.dataset_owners()? {
        for d in source.datasets(&user, None)? {
            let failed = |e: Error| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("the memories were copied, but {user}'s dataset {} was not: {e}", d.name),
                )
            };
            let whole = source.dataset_whole(&user, &d.name).map_err(failed)?;
            if let Some(whole) = whole {
                target.load_dataset(&user, &whole).map_err(failed)?;
                copied += 1;
            }
        }
    }
    Ok(copied)
}
