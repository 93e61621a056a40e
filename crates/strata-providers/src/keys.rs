//! Provider keys: from the environment first, else the OS keychain (the desktop's secret
//! service — GNOME Keyring, KWallet — through `keyring`). Keys are only ever handed to the
//! provider's request header; status reports say where a key is, never what it is.

use strata_core::{ChatError, ChatErrorKind};

use crate::env_names;

/// The keychain service Strata's keys are filed under.
pub const SERVICE: &str = "strata";

/// Where a provider's key comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "from", content = "name")]
pub enum KeySource {
    /// An environment variable (its name).
    Environment(String),
    /// The OS keychain.
    Keychain,
    /// Nowhere.
    Missing,
}

fn unavailable(e: keyring::Error) -> ChatError {
    ChatError::new(
        ChatErrorKind::BadKey,
        format!("the OS keychain is not available ({e}); set the key in the environment instead"),
    )
}

fn entry(provider: &str) -> Result<keyring::Entry, ChatError> {
    keyring::Entry::new(SERVICE, provider).map_err(unavailable)
}

/// The key the keychain holds for `provider`, if any.
pub fn stored(provider: &str) -> Result<Option<String>, ChatError> {
    match entry(provider)?.get_password() {
        Ok(k) => Ok(Some(k)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(unavailable(e)),
    }
}

/// Files `key` for `provider` in the keychain.
pub fn store(provider: &str, key: &str) -> Result<(), ChatError> {
    if key.trim().is_empty() {
        return Err(ChatError::new(ChatErrorKind::BadKey, "an empty key was not stored"));
    }
    entry(provider)?.set_password(key.trim()).map_err(unavailable)
}

/// Removes `provider`'s key from the keychain; whether there was one.
pub fn forget(provider: &str) -> Result<bool, ChatError> {
    match entry(provider)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(unavailable(e)),
    }
}

/// `provider`'s key and where it came from: its environment variable, else the keychain (a
/// keychain that cannot be reached counts as holding none).
pub fn find(provider: &str) -> (Option<String>, KeySource) {
    if let Some(var) = env_names(provider).0
        && let Some(k) = std::env::var(var).ok().filter(|k| !k.trim().is_empty())
    {
        return (Some(k), KeySource::Environment(var.to_string()));
    }
    match stored(provider) {
        Ok(Some(k)) => (Some(k), KeySource::Keychain),
        _ => (None, KeySource::Missing),
    }
}
