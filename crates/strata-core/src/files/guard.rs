//! The files no write may land on: every database this process has open, with its companion
//! files, told by identity (device and inode) rather than by name; and any SQLite database or
//! write-ahead log at all, told by its first bytes. [`super::write_whole`] asks [`check`]
//! before it writes anything.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// The files SQLite keeps beside a database, by the suffix added to its name.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// A file's identity: the same file under any name, link or hard link.
type Identity = (u64, u64);

/// One open database.
struct Open {
    /// Which [`Guard`] registered it.
    ticket: u64,
    /// The database file, as opened.
    path: PathBuf,
    /// Its identity when it was opened.
    file: Option<Identity>,
    /// The identity of its folder, and its name: a companion not made yet is named after it.
    folder: Option<Identity>,
    name: std::ffi::OsString,
}

static OPEN: Mutex<(u64, Vec<Open>)> = Mutex::new((0, Vec::new()));

/// While held, the database it was made for (and its companions) cannot be written over by
/// [`super::write_whole`]. Dropped with the store that holds it.
#[derive(Debug)]
pub struct Guard {
    ticket: u64,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.1.retain(|o| o.ticket != self.ticket);
    }
}

/// Keeps every write off the database at `path` (and its companions) while the guard lives.
pub fn guard_database(path: &Path) -> Guard {
    let file = identity(path);
    let folder = identity(&folder_of(path));
    let name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.0 += 1;
    let ticket = open.0;
    open.1.push(Open { ticket, path: path.to_path_buf(), file, folder, name });
    Guard { ticket }
}

/// Refuses a write to `path` when it would land on an open database or a companion of one,
/// or on any existing SQLite database or write-ahead log, saying so; nothing is written then.
pub fn check(path: &Path) -> Result<()> {
    let refused = |what: &str| {
        Err(Error::invalid(format!(
            "{} is {what}: writing there would destroy the memories in it; choose another file. Nothing was written",
            path.display()
        )))
    };
    if let Some(target) = identity(path) {
        if open_identities().contains(&target) {
            return refused("the database Strata has open (or one of its companion files)");
        }
        if let Some(what) = sqlite_file(path) {
            return refused(what);
        }
        return Ok(());
    }
    // Not there yet: a companion about to be made is one by its folder and name.
    let target = super::resolve(path)?;
    let (Some(folder), Some(name)) = (identity(&folder_of(&target)), target.file_name()) else { return Ok(()) };
    let open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let companion = open.1.iter().any(|o| {
        o.folder == Some(folder)
            && (o.name == name
                || COMPANIONS.iter().any(|suffix| {
                    let mut n = o.name.clone();
                    n.push(suffix);
                    n == name
                }))
    });
    drop(open);
    if companion {
        return refused("the database Strata has open (or one of its companion files)");
    }
    Ok(())
}

/// The identities of every open database and companion file, as they are now and as opened.
fn open_identities() -> Vec<Identity> {
    let open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for o in &open.1 {
        out.extend(o.file);
        out.extend(identity(&o.path));
        for suffix in COMPANIONS {
            let mut name = o.path.clone().into_os_string();
            name.push(suffix);
            out.extend(identity(Path::new(&name)));
        }
    }
    out
}

/// What kind of SQLite file `path` is, by its first bytes, when it is one.
fn sqlite_file(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = [0u8; 16];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    if n >= 16 && &head == b"SQLite format 3\0" {
        return Some("a database (SQLite)");
    }
    if n >= 4 && matches!(u32::from_be_bytes([head[0], head[1], head[2], head[3]]), 0x377f_0682 | 0x377f_0683) {
        return Some("a database's write-ahead log (SQLite)");
    }
    None
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    }
}

#[cfg(unix)]
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<Identity> {
    // No inodes: the canonical path, hashed, stands in.
    use std::hash::{Hash, Hasher};
    let canonical = std::fs::canonicalize(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    canonical.to_string_lossy().to_lowercase().hash(&mut h);
    Some((0, h.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_database_and_its_companions_are_refused_under_any_name_and_freed_with_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, b"SQLite format 3\0rest of the page").unwrap();
        std::fs::write(dir.path().join("x.db-wal"), [0x37, 0x7f, 0x06, 0x82, 0, 0, 0, 0]).unwrap();
        let guard = guard_database(&db);
        let other = dir.path().join("sub");
        std::fs::create_dir(&other).unwrap();
        std::fs::hard_link(&db, other.join("hard.db")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&db, other.join("link")).unwrap();
        let spellings = [
            db.clone(),
            dir.path().join("sub/../x.db"),
            other.join("hard.db"),
            #[cfg(unix)]
            other.join("link"),
            dir.path().join("x.db-wal"),
            dir.path().join("x.db-shm"),
            dir.path().join("x.db-journal"),
        ];
        for path in &spellings {
            let e = check(path).unwrap_err().to_string();
            assert!(e.contains("the database Strata has open"), "{}: {e}", path.display());
        }
        assert!(check(&dir.path().join("export.json")).is_ok());
        drop(guard);
        // Closed, a database is still a database, and a log a log; a new companion name is free.
        assert!(check(&db).unwrap_err().to_string().contains("a database (SQLite)"));
        assert!(check(&dir.path().join("x.db-wal")).unwrap_err().to_string().contains("write-ahead log"));
        assert!(check(&dir.path().join("x.db-shm")).is_ok());
    }
}
