//! Reading a file with a bound, by one rule for every file Strata reads into memory (training
//! sets, imports, settings, a conversation's history): at most the bound is read, and a file
//! that holds more — `/dev/zero`, a wrong file, a runaway log — is refused with a sentence that
//! names it and the bound, before memory grows past it.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Bytes as a person reads them (`64 MiB`).
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Bytes as a person reads them, to a tenth (`1.9 GB`): sizes that are measured, not bounds.
pub fn amount(bytes: u64) -> String {
    match bytes {
        n if n >= 1 << 30 => format!("{:.1} GB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.0} KB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}

/// The error for `what` (a file's name or `<stdin>`) holding more than `max` bytes.
pub fn too_large(what: &str, max: u64, kind: &str) -> Error {
    Error::invalid(format!(
        "{} is larger than {} ({kind} is at most that); nothing was read from it",
        crate::error::excerpt(what),
        size(max)
    ))
}

/// The whole of the file at `path`, at most `max` bytes of it; `kind` says what it should be
/// ("a training set") in the error when it holds more.
pub fn read_bounded(path: &Path, max: u64, kind: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(&path.display().to_string(), max, kind));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64, kind: &str) -> Result<String> {
    String::from_utf8(read_bounded(path, max, kind)?)
        .map_err(|e| Error::invalid(format!("{} is not UTF-8 text ({e}); save it as UTF-8", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_endless_file_is_refused_at_the_bound() {
        let started = std::time::Instant::now();
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20, "a training set").unwrap_err().to_string();
        assert!(e.contains("/dev/zero is larger than 1 MiB (a training set is at most that)"), "{e}");
        assert!(started.elapsed().as_secs() < 5);
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.txt");
        std::fs::write(&small, "exactly this").unwrap();
        assert_eq!(read_text(&small, 12, "a file").unwrap(), "exactly this");
        assert!(read_text(&small, 11, "a file").is_err());
    }
}
