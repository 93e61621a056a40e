//! Where the window's memories are kept: this computer's file, or a team's PostgreSQL database.
//! The team's URL is saved in the settings file without its password; the password goes to the
//! OS keychain (under the URL), and is put back into the URL only to connect. A team database
//! that cannot be opened at start leaves the window on the file, saying why.

use strata_api::{ApiError, ApiResult, ErrorCode, Settings};
use tauri::State;

use crate::state::AppState;

/// Where the memories the window shows are kept.
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub(crate) struct StoreView {
    /// A team's database (else this computer's file).
    pub team: bool,
    /// The file's path, or the database's URL without its password.
    pub shown: String,
    /// Why the team's database chosen in Settings is not the one open (it could not be
    /// reached at start, say).
    pub problem: Option<String>,
}

/// The keychain entry of a team database's password.
fn keychain_name(shown: &str) -> String {
    format!("team-database {shown}")
}

/// A `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` URL split into the URL without its
/// password and the password (percent-decoded), checked for the parts a connection needs.
pub(crate) fn split_url(url: &str) -> ApiResult<(String, Option<String>)> {
    let url = url.trim();
    let bad = |why: &str| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!(
                "{why}: write the team's database as postgres://USER@HOST:PORT/DATABASE (the password goes in its own field)"
            ),
        )
    };
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or_else(|| bad("that is not a PostgreSQL address"))?;
    let (authority, path) = rest.split_once('/').ok_or_else(|| bad("the address names no database"))?;
    let (user, host) = authority.rsplit_once('@').ok_or_else(|| bad("the address names no user"))?;
    if host.is_empty() || path.trim_matches('/').is_empty() {
        return Err(bad("the address needs a host and a database"));
    }
    let (user, password) = match user.split_once(':') {
        Some((u, p)) => (u, Some(percent_decode(p))),
        None => (user, None),
    };
    if user.is_empty() {
        return Err(bad("the address names no user"));
    }
    Ok((format!("postgres://{user}@{host}/{path}"), password))
}

/// `shown` (a URL without password) with `password` put in, percent-encoded.
fn with_password(shown: &str, password: &str) -> String {
    let encoded: String = password
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    match shown.split_once('@') {
        Some((user, rest)) => format!("{user}:{encoded}@{rest}"),
        None => shown.to_string(),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL to connect to the team database `shown` with, its password from the keychain
/// (none filed: the URL as it is, for servers that trust the machine).
pub(crate) fn connect_url(shown: &str) -> ApiResult<String> {
    let stored = strata_providers::keys::stored(&keychain_name(shown))
        .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?;
    Ok(match stored {
        Some(p) => with_password(shown, &p),
        None => shown.to_string(),
    })
}

/// Runs a keychain call off the async runtime (the secret service's client blocks on a runtime
/// of its own).
async fn keychain(f: impl FnOnce() -> ApiResult<()> + Send + 'static) -> ApiResult<()> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the keychain call failed: {e}")))?
}

/// Where the window's memories are kept now.
#[tauri::command]
#[specta::specta]
pub(crate) async fn store_location(state: State<'_, AppState>) -> Result<StoreView, ApiError> {
    Ok(state.location())
}

/// Opens the team's database at `url` (the password in `password`, or in the URL) in place of
/// what is open. Nothing changes when it cannot be opened: the answer says why. On success
/// the URL is saved without the password, and the password filed in the OS keychain.
#[tauri::command]
#[specta::specta]
pub(crate) async fn use_team_database(
    state: State<'_, AppState>,
    url: String,
    password: String,
) -> Result<StoreView, ApiError> {
    let (shown, in_url) = split_url(&url)?;
    let password = Some(password).filter(|p| !p.is_empty()).or(in_url);
    let full = password.as_deref().map_or_else(|| shown.clone(), |p| with_password(&shown, p));
    state.switch(full, StoreView { team: true, shown: shown.clone(), problem: None }).await?;
    let name = keychain_name(&shown);
    keychain(move || match &password {
        Some(p) => strata_providers::keys::store(&name, p).map_err(|e| ApiError::new(ErrorCode::Io, e.to_string())),
        None => {
            let _ = strata_providers::keys::forget(&name);
            Ok(())
        }
    })
    .await?;
    let mut settings = Settings::load()?;
    settings.team_database = Some(shown);
    settings.save()?;
    Ok(state.location())
}

/// Goes back to this computer's file; the team's address is forgotten by Settings and its
/// password by the keychain.
#[tauri::command]
#[specta::specta]
pub(crate) async fn use_this_computer(state: State<'_, AppState>) -> Result<StoreView, ApiError> {
    let path = state.db_path.display().to_string();
    state.switch(path.clone(), StoreView { team: false, shown: path, problem: None }).await?;
    let mut settings = Settings::load()?;
    if let Some(shown) = settings.team_database.take() {
        keychain(move || {
            let _ = strata_providers::keys::forget(&keychain_name(&shown));
            Ok(())
        })
        .await?;
    }
    settings.save()?;
    Ok(state.location())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_split_from_its_password_and_put_back_encoded() {
        let (shown, pw) = split_url(" postgres://ana:p%40ss@db.example:5432/strata ").unwrap();
        assert_eq!((shown.as_str(), pw.as_deref()), ("postgres://ana@db.example:5432/strata", Some("p@ss")));
        assert_eq!(with_password(&shown, "p@ss w"), "postgres://ana:p%40ss%20w@db.example:5432/strata");
        assert_eq!(split_url("postgresql://ana@h/db").unwrap(), ("postgres://ana@h/db".into(), None));
        for bad in
            ["db.example/strata", "postgres://db.example/strata", "postgres://ana@db.example", "postgres://:pw@h/db"]
        {
            let e = split_url(bad).unwrap_err().message;
            assert!(e.contains("postgres://USER@HOST:PORT/DATABASE"), "{bad}: {e}");
        }
    }
}
