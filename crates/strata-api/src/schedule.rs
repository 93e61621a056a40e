//! The training schedule's settings (`training.schedule` in the settings file) and when it is
//! due. Off until a curator turns it on; nightly at a time, or when the app has been idle.
//! What it does when due is `strata_train::schedule`.

use chrono::{NaiveDateTime, NaiveTime, TimeDelta};
use serde::{Deserialize, Serialize};

use crate::{ApiError, ApiResult};

/// When the schedule looks for facts to teach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ScheduleWhen {
    /// Never by itself (the default).
    #[default]
    Off,
    /// Each night at [`ScheduleSettings::at`].
    Nightly,
    /// When the app has not been used for [`ScheduleSettings::idle_minutes`].
    Idle,
}

/// What becomes of an adapter the schedule trained that passed its gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Promotion {
    /// It waits for a curator's yes (the window shows its report).
    #[default]
    Ask,
    /// It is put in use at once.
    Automatic,
}

/// The training schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct ScheduleSettings {
    /// When it runs.
    pub when: ScheduleWhen,
    /// The local time of a nightly run, `HH:MM`.
    pub at: String,
    /// Minutes without use before an idle run.
    pub idle_minutes: u32,
    /// Approved facts not yet in an adapter in use needed before it trains.
    pub min_new_facts: u32,
    /// Promote automatically, or ask.
    pub promotion: Promotion,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        ScheduleSettings {
            when: ScheduleWhen::Off,
            at: "03:00".into(),
            idle_minutes: 15,
            min_new_facts: 10,
            promotion: Promotion::Ask,
        }
    }
}

/// How long an idle schedule waits between two looks.
pub const IDLE_LOOK_EVERY: TimeDelta = TimeDelta::hours(1);

impl ScheduleSettings {
    /// Values that make sense, or an error that names the first that does not.
    pub fn check(&self) -> ApiResult<()> {
        self.time()?;
        if !(1..=1440).contains(&self.idle_minutes) {
            return Err(ApiError::invalid(format!(
                "the schedule waits 1 to 1440 idle minutes, not {}",
                self.idle_minutes
            )));
        }
        if !(1..=10_000).contains(&self.min_new_facts) {
            return Err(ApiError::invalid(format!(
                "the schedule needs 1 to 10000 new facts to train, not {}",
                self.min_new_facts
            )));
        }
        Ok(())
    }

    /// [`ScheduleSettings::at`] as a time.
    pub fn time(&self) -> ApiResult<NaiveTime> {
        NaiveTime::parse_from_str(self.at.trim(), "%H:%M").map_err(|_| {
            ApiError::invalid(format!("'{}' is not a time of day; write it as HH:MM, e.g. 03:00", self.at))
        })
    }

    /// Whether the schedule is due at `now` (local time), its last look at `last` (local
    /// time), the app unused for `idle`: nightly, once the day's time has passed and it has not
    /// looked since; when idle, after enough idle minutes and an hour since its last look.
    pub fn due(&self, now: NaiveDateTime, last: Option<NaiveDateTime>, idle: TimeDelta) -> bool {
        match self.when {
            ScheduleWhen::Off => false,
            ScheduleWhen::Nightly => {
                let Ok(at) = self.time() else { return false };
                let today = now.date().and_time(at);
                now >= today && last.is_none_or(|l| l < today)
            }
            ScheduleWhen::Idle => {
                idle >= TimeDelta::minutes(i64::from(self.idle_minutes))
                    && last.is_none_or(|l| now - l >= IDLE_LOOK_EVERY)
            }
        }
    }

    /// The schedule in words, for a person.
    pub fn said(&self) -> String {
        let promote = match self.promotion {
            Promotion::Ask => "asks you before using a new adapter",
            Promotion::Automatic => "uses a new adapter that passes at once",
        };
        match self.when {
            ScheduleWhen::Off => "Off: nothing is taught unless you press Teach.".into(),
            ScheduleWhen::Nightly => format!(
                "Each night at {}, when at least {} approved facts are new, it teaches them and {promote}.",
                self.at.trim(),
                self.min_new_facts
            ),
            ScheduleWhen::Idle => format!(
                "When the app has not been used for {} minutes and at least {} approved facts are new, it teaches \
                 them and {promote}.",
                self.idle_minutes, self.min_new_facts
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn nightly_is_due_once_after_its_time_and_idle_after_its_minutes() {
        let nightly = ScheduleSettings { when: ScheduleWhen::Nightly, at: "03:00".into(), ..Default::default() };
        let quiet = TimeDelta::zero();
        assert!(!nightly.due(at("2026-11-30 02:59"), None, quiet));
        assert!(nightly.due(at("2026-11-30 03:00"), None, quiet));
        assert!(nightly.due(at("2026-11-30 09:00"), Some(at("2026-11-29 03:01")), quiet), "missed at 3, done later");
        assert!(!nightly.due(at("2026-11-30 09:00"), Some(at("2026-11-30 03:01")), quiet), "once a night");

        let idle = ScheduleSettings { when: ScheduleWhen::Idle, idle_minutes: 15, ..Default::default() };
        assert!(!idle.due(at("2026-11-30 09:00"), None, TimeDelta::minutes(14)));
        assert!(idle.due(at("2026-11-30 09:00"), None, TimeDelta::minutes(15)));
        assert!(!idle.due(at("2026-11-30 09:30"), Some(at("2026-11-30 09:00")), TimeDelta::hours(2)), "an hour apart");
        assert!(idle.due(at("2026-11-30 10:00"), Some(at("2026-11-30 09:00")), TimeDelta::hours(2)));
        assert!(!ScheduleSettings::default().due(at("2026-11-30 10:00"), None, TimeDelta::days(9)), "off by default");
    }

    #[test]
    fn settings_that_make_no_sense_are_refused_in_words() {
        let bad = |s: ScheduleSettings| s.check().unwrap_err().message;
        assert!(bad(ScheduleSettings { at: "3am".into(), ..Default::default() }).contains("HH:MM"));
        assert!(bad(ScheduleSettings { idle_minutes: 0, ..Default::default() }).contains("idle minutes"));
        assert!(bad(ScheduleSettings { min_new_facts: 0, ..Default::default() }).contains("new facts"));
        assert!(ScheduleSettings::default().check().is_ok());
        let said = ScheduleSettings { when: ScheduleWhen::Nightly, ..Default::default() }.said();
        assert_eq!(
            said,
            "Each night at 03:00, when at least 10 approved facts are new, it teaches them and asks you before using a new adapter."
        );
    }
}
