//! Acting on many memories at once (the list's selection): forget, tag or move them, each in
//! one transaction — all of them or, on an error, none.

use serde::Serialize;
use strata_core::{MemoryId, Tier};

use crate::engine::{Engine, Target};
use crate::error::{ApiError, ApiResult};

/// The most memories one bulk action takes.
pub const MAX_BULK: usize = 10_000;

/// What forgetting several memories did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetManyReport {
    /// The forgotten memories.
    pub ids: Vec<String>,
    /// Earlier events whose payloads were erased, in all.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub redacted_events: u64,
    /// The adapters trained from any of them, retired (their files deleted).
    pub retired_adapters: Vec<String>,
    /// Whether the bytes have also left the files on disk.
    pub scrubbed: bool,
}

impl Engine {
    fn resolve_all(&self, targets: &[Target]) -> ApiResult<Vec<MemoryId>> {
        if targets.is_empty() || targets.len() > MAX_BULK {
            return Err(ApiError::invalid(format!("choose between 1 and {MAX_BULK} memories")));
        }
        let mut ids = Vec::with_capacity(targets.len());
        for t in targets {
            let id = self.resolve(t)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// Forgets every one of `targets` for good, in one transaction.
    pub fn forget_many(&mut self, targets: &[Target]) -> ApiResult<ForgetManyReport> {
        let ids = self.resolve_all(targets)?;
        let meta = self.meta();
        let outcome = self.store().forget_all(&ids, &meta)?;
        Ok(ForgetManyReport {
            ids: ids.iter().map(ToString::to_string).collect(),
            redacted_events: outcome.redacted_events,
            retired_adapters: outcome.retired_adapters,
            scrubbed: outcome.scrubbed,
        })
    }

    /// Adds `tag` to every one of `targets`, in one transaction. Returns how many were tagged.
    pub fn tag_many(&mut self, targets: &[Target], tag: &str) -> ApiResult<usize> {
        let ids = self.resolve_all(targets)?;
        let meta = self.meta();
        self.store().transact(|tx| {
            for id in &ids {
                tx.tag(*id, tag, &meta)?;
            }
            Ok(())
        })?;
        Ok(ids.len())
    }

    /// Moves every one of `targets` to `tier`, in one transaction. Returns how many were moved.
    pub fn set_tier_many(&mut self, targets: &[Target], tier: Tier, reason: &str) -> ApiResult<usize> {
        let ids = self.resolve_all(targets)?;
        let meta = self.meta();
        self.store().transact(|tx| {
            for id in &ids {
                tx.set_tier(*id, tier, reason, &meta)?;
            }
            Ok(())
        })?;
        Ok(ids.len())
    }
}
