//! Running a reference implementation in Python on the same inputs, in the same run, for the
//! benchmarks that compare against one (`scripts/*_reference.py`).

use std::path::Path;

use serde::de::DeserializeOwned;

use strata_api::{ApiError, ApiResult, ErrorCode};

/// Runs `python script args… INPUT.json` with `input` in the JSON file and parses what it
/// prints; a failure says the script's last line of error.
pub fn run<T: DeserializeOwned>(
    python: &Path,
    script: &Path,
    args: &[&std::ffi::OsStr],
    input: &serde_json::Value,
) -> ApiResult<T> {
    let io = |e: std::io::Error| ApiError::new(ErrorCode::Io, e.to_string());
    let dir = tempfile::tempdir().map_err(io)?;
    let file = dir.path().join("input.json");
    std::fs::write(&file, input.to_string()).map_err(io)?;
    let out = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .arg(&file)
        .output()
        .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot run {}: {e}", python.display())))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("no message");
        return Err(ApiError::new(ErrorCode::Internal, format!("the reference run failed: {last}")));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the reference run printed something unexpected: {e}")))
}
