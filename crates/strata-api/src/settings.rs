//! The person's settings that outlive a session, in one JSON file in their config folder
//! (`STRATA_SETTINGS` names another): the tier thresholds that `strata maintain` and the app's
//! maintenance apply, the chat model the app last used, extraction's and the usage records'. Keys are never here — they live in
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
    /// When facts are extracted from conversations, and whether a person reviews them.
    pub extraction: ExtractionSettings,
    /// Whether analytics' usage records are kept, and for how long.
    pub usage: UsageSettings,
    /// What curation flags as worth training.
    pub training: TrainingSettings,
    /// Which on-device models answer and extract.
    pub on_device: OnDeviceSettings,
    /// A team's PostgreSQL database the desktop app opens instead of this computer's file:
    /// its URL without the password (which the OS keychain holds). None: the file.
    pub team_database: Option<String>,
    /// The person's plugins: embedders and chat models at endpoints, tokenizer files.
    pub plugins: Vec<crate::plugins::PersonPlugin>,
    /// The embedder in use, and one being switched to.
    pub embedder: crate::plugins::EmbedderSettings,
}

/// The on-device models chosen, by the names `chat-models.toml` pins (`strata models`); none:
/// `STRATA_CHAT_MODEL`, else the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct OnDeviceSettings {
    /// The model that answers in chats and `strata ask`.
    pub chat: Option<String>,
    /// The model that extracts facts in the background (none: the chat's).
    pub extraction: Option<String>,
}

/// Curation and training.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct TrainingSettings {
    /// What makes a memory a training candidate.
    pub criteria: crate::curation::CandidateCriteria,
    /// When facts are taught without a person pressing Teach, and how a new adapter is put
    /// in use.
    pub schedule: crate::schedule::ScheduleSettings,
}

/// Analytics' usage records: the recalls run (query, results, the prompt's use of its budget),
/// what people said of answers and memories, and the compaction passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct UsageSettings {
    /// Keep them at all.
    pub keep: bool,
    /// For how many days (1 to 3650).
    pub days: u32,
}

impl Default for UsageSettings {
    fn default() -> Self {
        UsageSettings { keep: true, days: crate::analytics::RECALL_RECORDS_DAYS }
    }
}

impl UsageSettings {
    /// [`crate::EngineOptions::recall_records_days`] for these settings.
    pub fn records_days(&self) -> Option<u32> {
        self.keep.then_some(self.days)
    }

    /// [`UsageSettings::records_days`] as the settings file says, for a front end opening its
    /// engine. A file that cannot be read is read the strictest way, never weakening a choice
    /// it may hold: no usage records are kept until it is mended, and a warning says so
    /// (opening the store does not fail for it; the settings screen shows the error).
    pub fn records_days_saved() -> Option<u32> {
        match Settings::path() {
            Ok(path) => UsageSettings::records_days_in(&path),
            Err(e) => {
                tracing::warn!("{e}; no usage records are kept (the strictest reading)");
                None
            }
        }
    }

    /// [`UsageSettings::records_days_saved`] from the file at `path`.
    pub fn records_days_in(path: &Path) -> Option<u32> {
        match Settings::load_from(path) {
            Ok(s) => s.usage.records_days(),
            Err(e) => {
                tracing::warn!("{e}; until it is mended no usage records are kept (the strictest reading)");
                None
            }
        }
    }
}

/// When extraction runs and what becomes of its changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct ExtractionSettings {
    /// Extract after each exchange of a chat (the app's, `strata chat` and `strata ask`, the
    /// memory proxy) and each conversation an AI tool hands over, in the background.
    pub after_exchanges: bool,
    /// Apply changes at once or propose them for review; `None`: what the model that extracts
    /// has earned ([`crate::extract::Review::for_model`]).
    pub review: Option<crate::extract::Review>,
}

impl Default for ExtractionSettings {
    fn default() -> Self {
        ExtractionSettings { after_exchanges: true, review: None }
    }
}

impl ExtractionSettings {
    /// Whether changes extracted by `model` are applied or proposed.
    pub fn review_for(&self, model: &dyn strata_core::ChatModel) -> crate::extract::Review {
        self.review.unwrap_or_else(|| crate::extract::Review::for_model(model))
    }
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
        let text = match strata_core::files::read_text(path, 1 << 20, "a settings file") {
            Ok(t) => t,
            Err(strata_core::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Settings::default());
            }
            Err(e) => return Err(e.into()),
        };
        // Editors on Windows start UTF-8 files with a byte-order mark; it is no setting.
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
        let settings: Settings = strata_core::interchange::json::parse(text).map_err(|e| {
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
        if let Some(p) = tier_problems(&self.tiers).into_iter().next() {
            return Err(ApiError::invalid(p.message));
        }
        if !(1..=3650).contains(&self.usage.days) {
            return Err(ApiError::invalid(format!(
                "usage records are kept from 1 to 3650 days, not {}",
                self.usage.days
            )));
        }
        self.training.criteria.check()?;
        self.training.schedule.check()?;
        if let Some(c) = &self.chat
            && c.provider.trim().is_empty()
        {
            return Err(ApiError::invalid("the chat provider must be named"));
        }
        for name in [&self.on_device.chat, &self.on_device.extraction].into_iter().flatten() {
            strata_tokens::chat_models::chat_model(name).map_err(ApiError::from)?;
        }
        self.check_plugins()
    }
}

/// What is wrong with one field of the tier rule, in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FieldProblem {
    /// The field (`importance_weight`, …).
    pub field: String,
    /// What is wrong and what would do.
    pub message: String,
}

/// Every field of `t` that makes no sense, each said plainly (empty: all is well).
pub fn tier_problems(t: &TierPolicy) -> Vec<FieldProblem> {
    let mut out = Vec::new();
    let mut bad = |field: &str, message: String| out.push(FieldProblem { field: field.into(), message });
    let weights = [
        ("importance_weight", t.importance_weight),
        ("frequency_weight", t.frequency_weight),
        ("recency_weight", t.recency_weight),
    ];
    for (field, v) in weights {
        if !(0.0..=1.0).contains(&v) {
            bad(field, format!("a weight is between 0 and 1, not {v}"));
        }
    }
    let sum: f64 = weights.iter().map(|(_, v)| v).sum();
    if (sum - 1.0).abs() > 1e-6 && weights.iter().all(|(_, v)| (0.0..=1.0).contains(v)) {
        let sum = (sum * 1000.0).round() / 1000.0;
        for (field, _) in weights {
            bad(field, format!("the three weights add up to {sum}; they must add up to 1 (e.g. 0.4, 0.35 and 0.25)"));
        }
    }
    for (field, v) in
        [("expire_below", t.expire_below), ("promote_to_long", t.promote_to_long), ("demote_below", t.demote_below)]
    {
        if !(0.0..=1.0).contains(&v) {
            bad(field, format!("a value is between 0 and 1, not {v}"));
        }
    }
    if t.demote_below > t.promote_to_long {
        bad(
            "demote_below",
            format!(
                "moving back at {} but up at {} would move memories back and forth: make it at most {}",
                t.demote_below, t.promote_to_long, t.promote_to_long
            ),
        );
    }
    for (field, v) in [
        ("half_life_days", t.half_life_days),
        ("short_ttl_hours", t.short_ttl_hours),
        ("long_idle_days", t.long_idle_days),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            bad(field, format!("this needs a number above 0, not {v}"));
        }
    }
    for (field, v) in [
        ("working_memory_items", t.working_memory_items as u64),
        ("working_memory_tokens", t.working_memory_tokens as u64),
        ("frequent_accesses", u64::from(t.frequent_accesses)),
    ] {
        if v == 0 {
            bad(field, "this needs to be at least 1".to_string());
        }
    }
    out
}

/// A ready-made tier rule with a name and what it does, in words.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TierPreset {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its values.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::TierPolicyShape))]
    pub policy: TierPolicy,
}

/// The ready-made rules, the default ("Balanced") first.
pub fn tier_presets() -> Vec<TierPreset> {
    let balanced = TierPolicy::default();
    let keep_more = TierPolicy {
        working_memory_items: 40,
        working_memory_tokens: 4000,
        short_ttl_hours: 72.0,
        expire_below: 0.15,
        promote_to_long: 0.5,
        promote_min_accesses: 2,
        demote_below: 0.1,
        long_idle_days: 365.0,
        half_life_days: 30.0,
        ..balanced.clone()
    };
    let keep_less = TierPolicy {
        working_memory_items: 10,
        working_memory_tokens: 1000,
        short_ttl_hours: 8.0,
        expire_below: 0.45,
        promote_to_long: 0.7,
        promote_min_accesses: 5,
        demote_below: 0.3,
        long_idle_days: 30.0,
        half_life_days: 7.0,
        ..balanced.clone()
    };
    vec![
        TierPreset {
            name: "Balanced".into(),
            description:
                "The default: conversations stay in working memory for a day; what is used now and then is kept.".into(),
            policy: balanced,
        },
        TierPreset {
            name: "Keep more".into(),
            description: "Memories stay longer: three days in working memory, few fade, long-term is kept for a year."
                .into(),
            policy: keep_more,
        },
        TierPreset {
            name: "Keep less".into(),
            description:
                "A tidy memory: working memory clears after eight hours, and only what is used often is kept long."
                    .into(),
            policy: keep_less,
        },
    ]
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
        assert_eq!(s.usage.records_days(), Some(90), "usage records are kept 90 days by default");
        s.usage.days = 30;
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
        assert!(e.message.contains("back and forth"), "{e}");
        s.tiers.demote_below = 0.1;
        s.tiers.half_life_days = 0.0;
        assert!(s.save_to(&path).unwrap_err().message.contains("above 0"));
        s.tiers.half_life_days = 30.0;
        s.usage.days = 0;
        assert!(s.save_to(&path).unwrap_err().message.contains("from 1 to 3650 days, not 0"));
        s.usage = UsageSettings { keep: false, days: 7 };
        assert_eq!(s.usage.records_days(), None);
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

    /// Each field is judged on its own and said plainly; weights must add up to 1 (1.5 was
    /// accepted before); every preset is sound.
    #[test]
    fn tier_fields_are_checked_one_by_one() {
        assert!(tier_problems(&TierPolicy::default()).is_empty());
        let t = TierPolicy { importance_weight: 0.9, half_life_days: -1.0, ..TierPolicy::default() };
        let p = tier_problems(&t);
        let fields: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["importance_weight", "frequency_weight", "recency_weight", "half_life_days"]);
        assert!(p[0].message.contains("add up to 1.5; they must add up to 1"), "{}", p[0].message);
        assert!(p[3].message.contains("above 0"));
        let presets = tier_presets();
        assert_eq!(presets[0].policy, TierPolicy::default());
        for preset in &presets {
            assert!(tier_problems(&preset.policy).is_empty(), "{}", preset.name);
        }
    }

    /// A file an editor began with a byte-order mark is read (it was refused, and the
    /// person's "keep no usage records" ignored); a file that cannot be read keeps none.
    #[test]
    fn a_byte_order_mark_is_read_and_an_unreadable_file_never_weakens_a_privacy_choice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "\u{FEFF}{\"usage\": {\"keep\": false}}").unwrap();
        assert!(!Settings::load_from(&path).unwrap().usage.keep);
        assert_eq!(UsageSettings::records_days_in(&path), None);
        std::fs::write(&path, "{\"usage\": {\"keep\": tru").unwrap();
        assert_eq!(UsageSettings::records_days_in(&path), None, "unreadable: the strictest reading");
        std::fs::write(&path, "{\"usage\": {\"days\": 7}}").unwrap();
        assert_eq!(UsageSettings::records_days_in(&path), Some(7));
        assert_eq!(UsageSettings::records_days_in(&dir.path().join("none.json")), Some(90), "no file: defaults");
    }
}
