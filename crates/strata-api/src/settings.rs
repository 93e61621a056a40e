//! The person's settings that outlive a session, in one JSON file in their config folder
//! (`STRATA_SETTINGS` names another): the tier thresholds that `strata maintain` and the app's
//! maintenance apply, and the chat model the app last used. Keys are never here — they live in
//! the environment or the OS keychain.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use strata_core::TierPolicy;

use crate::error::{ApiError, ApiResult, ErrorCode};

/// What is kept between sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct Settings {
    /// The tier rule's weights and thresholds.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::TierPolicyShape))]
    pub tiers: TierPolicy,
    /// The chat model chosen last (none: the on-device model).
    pub chat: Option<ChatChoice>,
}

/// A chat model: which provider, which of its models, and where, when not the usual address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChatChoice {
    /// `on-device`, `openai`, `anthropic`, `ollama` or `openai-compatible`.
    pub provider: String,
    /// The model's name at that provider (empty for the on-device model).
    #[serde(default)]
    pub model: String,
    /// Another address than the provider's usual one.
    #[serde(default)]
    pub base_url: Option<String>,
}

impl Settings {
    /// Where the settings file is: `STRATA_SETTINGS`, else `settings.json` in the user's
    /// config folder.
    pub fn path() -> ApiResult<PathBuf> {
        if let Some(p) = std::env::var_os("STRATA_SETTINGS").filter(|p| !p.is_empty()) {
            return Ok(PathBuf::from(p));
        }
        directories::ProjectDirs::from("", "", "strata")
            .map(|d| d.config_dir().join("settings.json"))
            .ok_or_else(|| ApiError::new(ErrorCode::Io, "cannot find your config folder; set STRATA_SETTINGS"))
    }

    /// The settings in the usual file (defaults when there is none yet).
    pub fn load() -> ApiResult<Settings> {
        Settings::load_from(&Settings::path()?)
    }

    /// The settings in `path` (defaults when it does not exist). A damaged file is an error
    /// that names it; it is left as it is.
    pub fn load_from(path: &Path) -> ApiResult<Settings> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => return Err(ApiError::new(ErrorCode::Io, format!("cannot read {}: {e}", path.display()))),
        };
        let settings: Settings = strata_core::interchange::json::parse(&text).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidInput,
                format!(
                    "{}:{}: {}; this is not a Strata settings file: fix or delete it",
                    path.display(),
                    e.line,
                    e.message
                ),
            )
        })?;
        settings.check()?;
        Ok(settings)
    }

    /// Checks, then writes the usual file.
    pub fn save(&self) -> ApiResult<()> {
        self.save_to(&Settings::path()?)
    }

    /// Checks, then writes `path` whole ([`strata_core::files::write_whole`]: a crash leaves the
    /// old settings or the new, never half).
    pub fn save_to(&self, path: &Path) -> ApiResult<()> {
        self.check()?;
        let io = |e: std::io::Error| ApiError::new(ErrorCode::Io, format!("cannot write {}: {e}", path.display()));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot encode the settings: {e}")))?;
        strata_core::files::write_bytes(path, (text + "\n").as_bytes()).map_err(ApiError::from)
    }

    /// Values that make sense, or an error that names the first that does not.
    pub fn check(&self) -> ApiResult<()> {
        let t = &self.tiers;
        let bad = |what: &str, rule: &str| Err(ApiError::invalid(format!("{what} must be {rule}")));
        for (what, v) in [
            ("the importance weight", t.importance_weight),
            ("the frequency weight", t.frequency_weight),
            ("the recency weight", t.recency_weight),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(what, "between 0 and 1");
            }
        }
        if t.importance_weight + t.frequency_weight + t.recency_weight <= 0.0 {
            return bad("the weights' sum", "above 0");
        }
        for (what, v) in [
            ("the expiry threshold", t.expire_below),
            ("the promotion threshold", t.promote_to_long),
            ("the demotion threshold", t.demote_below),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(what, "between 0 and 1");
            }
        }
        if t.demote_below > t.promote_to_long {
            return bad("the demotion threshold", "at most the promotion threshold");
        }
        for (what, v) in [
            ("the recency half-life (days)", t.half_life_days),
            ("the working-memory time (hours)", t.short_ttl_hours),
            ("the idle time before demotion (days)", t.long_idle_days),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return bad(what, "a positive number");
            }
        }
        if t.working_memory_items == 0 || t.working_memory_tokens == 0 || t.frequent_accesses == 0 {
            return bad("working-memory sizes and the frequent-access count", "at least 1");
        }
        if let Some(c) = &self.chat
            && c.provider.trim().is_empty()
        {
            return bad("the chat provider", "named");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_a_missing_file_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/settings.json");
        assert_eq!(Settings::load_from(&path).unwrap(), Settings::default());
        let mut s = Settings::default();
        s.tiers.promote_to_long = 0.75;
        s.chat = Some(ChatChoice { provider: "ollama".into(), model: "llama3.2".into(), base_url: None });
        s.save_to(&path).unwrap();
        assert_eq!(Settings::load_from(&path).unwrap(), s);
        assert!(!path.with_extension("json.tmp").exists());
    }

    #[test]
    fn bad_values_and_damaged_files_are_refused_and_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        Settings::default().save_to(&path).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        let mut s = Settings::default();
        s.tiers.demote_below = 0.9;
        let e = s.save_to(&path).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("demotion threshold"), "{e}");
        s.tiers.demote_below = 0.1;
        s.tiers.half_life_days = 0.0;
        assert!(s.save_to(&path).unwrap_err().message.contains("half-life"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);

        std::fs::write(&path, "{ not json").unwrap();
        let e = Settings::load_from(&path).unwrap_err();
        assert!(e.message.contains("not a Strata settings file"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        // Read as strictly as an import: a key twice, or anything after the object, names its line.
        for (text, want) in [
            (
                "{\"tiers\": {\"promote_to_long\": 0.7,\n\"promote_to_long\": 0.2}}",
                ":2: field `tiers.promote_to_long`: this key",
            ),
            ("{\"tiers\": {}}\n{\"tiers\": {}}", ":2: there is more after the end of the document"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = Settings::load_from(&path).unwrap_err();
            assert!(e.message.contains(&format!("settings.json{want}")), "{e}");
        }
        // Unknown fields are ignored, missing ones take their defaults.
        std::fs::write(&path, r#"{"tiers": {"promote_to_long": 0.7}, "later": 1}"#).unwrap();
        let s = Settings::load_from(&path).unwrap();
        assert_eq!(s.tiers.promote_to_long, 0.7);
        assert_eq!(s.tiers.demote_below, TierPolicy::default().demote_below);
    }
}
