//! Writing a file whole, by one rule for every file Strata writes (exports, settings, adapters,
//! training sets and checkpoints):
//!
//! - **Never the store itself.** A path that is an open database or one of its companion files
//!   (`-wal`, `-shm`, `-journal`) — by identity (device and inode, so links, hard links and
//!   other spellings of the path are caught), or by folder identity and name for a companion
//!   not made yet — is refused, and so is any existing SQLite database or write-ahead log
//!   (told by its first bytes): nothing Strata writes is one, so replacing one is a mistake.
//! - **A regular file, or none yet**: written to a temporary file beside it, flushed to disk and
//!   renamed over it, so a failed or interrupted write leaves the old file (or none), never half
//!   a file. A file that existed keeps its permissions (and, where the process may set it, its
//!   owner); a new one gets the usual permissions for the user (`0666` less the umask).
//! - **A symbolic link** is followed: the file it points to is written by the same rule and the
//!   link stays a link (a dangling link creates its target).
//! - **A named pipe or a character device** (`/dev/stdout`, `/dev/null`, a FIFO) is written
//!   into directly, as a shell's `>` would: it cannot be replaced, and renaming over it would
//!   destroy it. So is **an open descriptor** (`/dev/stdout`, `/dev/fd/N`, a shell's `>(…)`),
//!   whatever it is open on: it is appended to, as the shell opened it.
//! - **Anything else** — a folder, a block device, a socket — is refused before anything is
//!   written.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

mod guard;
mod read;
pub use guard::{Guard, guard_database};
pub use read::{amount, read_bounded, read_text, size, too_large};

/// How many links [`resolve`] follows before calling it a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Writes `path` whole with `write`, by the module's rule. `write` gets a buffered writer;
/// what it returns is returned once the file is in place. On any error nothing is left
/// behind but the file as it was.
pub fn write_whole<T, E: From<Error>>(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<T, E>) -> Result<T, E> {
    guard::check(path)?;
    let (target, kind) = match descriptor(path) {
        true => (path.to_path_buf(), Kind::Stream),
        false => {
            let target = resolve(path)?;
            let kind = Kind::of(&target)?;
            (target, kind)
        }
    };
    match kind {
        Kind::Missing | Kind::Regular => replace(&target, write),
        Kind::Stream => {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(&target)
                .map_err(|e| Error::io(format!("cannot write {}", target.display()), e))?;
            let mut out = std::io::BufWriter::new(file);
            let value = write(&mut out)?;
            out.flush().map_err(|e| Error::io(format!("cannot write {}", target.display()), e))?;
            Ok(value)
        }
        Kind::Refused(what) => Err(Error::invalid(format!(
            "{} is {what}, not a file: Strata writes only to regular files, pipes and terminals; nothing was written",
            path.display()
        ))
        .into()),
    }
}

/// Writes `bytes` to `path` whole (see [`write_whole`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_whole(path, |w| w.write_all(bytes).map_err(|e| Error::io(format!("cannot write {}", path.display()), e)))
}

/// Whether `path` names an open file descriptor (`/dev/stdout`, `/dev/fd/3`,
/// `/proc/self/fd/1`): its links lead through a process's `fd` folder, whose entries the kernel
/// opens as the descriptor itself — their link text (`pipe:[1234]`) is no path to follow.
fn descriptor(path: &Path) -> bool {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let text = current.to_string_lossy();
        if text.starts_with("/dev/fd/") || (text.starts_with("/proc/") && text.contains("/fd/")) {
            return std::fs::metadata(&current).is_ok();
        }
        match std::fs::read_link(&current) {
            Ok(to) => {
                current = match current.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                }
            }
            Err(_) => return false,
        }
    }
    false
}

/// What is at a path, for the rule.
enum Kind {
    Missing,
    Regular,
    /// A pipe or a character device: written into directly.
    Stream,
    /// Never written: what it is, in words.
    Refused(&'static str),
}

impl Kind {
    fn of(path: &Path) -> Result<Kind> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kind::Missing),
            Err(e) => return Err(Error::io(format!("cannot look at {}", path.display()), e)),
        };
        let t = meta.file_type();
        if t.is_file() {
            return Ok(Kind::Regular);
        }
        if t.is_dir() {
            return Ok(Kind::Refused("a folder"));
        }
        Ok(special(t))
    }
}

#[cfg(unix)]
fn special(t: std::fs::FileType) -> Kind {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() || t.is_char_device() {
        Kind::Stream
    } else if t.is_block_device() {
        Kind::Refused("a block device (a disk)")
    } else if t.is_socket() {
        Kind::Refused("a socket")
    } else {
        Kind::Refused("not a regular file")
    }
}

#[cfg(not(unix))]
fn special(_: std::fs::FileType) -> Kind {
    Kind::Refused("not a regular file")
}

/// `path` with its symbolic links followed (the last component too), as far as they exist: a
/// dangling link resolves to the path it names.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&current)
                    .map_err(|e| Error::io(format!("cannot read the link {}", current.display()), e))?;
                current = match current.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(Error::invalid(format!("{} is a loop of symbolic links; nothing was written", path.display())))
}

/// The temporary-file-then-rename write of a regular (or new) file.
fn replace<T, E: From<Error>>(target: &Path, write: impl FnOnce(&mut dyn Write) -> Result<T, E>) -> Result<T, E> {
    let cannot = |e: std::io::Error| Error::io(format!("cannot write {}", target.display()), e);
    let dir = match target.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let existing = std::fs::metadata(target).ok();
    let (tmp, file) = temporary(&dir, target)?;
    let mut out = std::io::BufWriter::new(file);
    let written = write(&mut out).and_then(|value| {
        let file = out.into_inner().map_err(|e| cannot(e.into_error()))?;
        if let Some(meta) = &existing {
            keep_owner_and_mode(&file, meta).map_err(cannot)?;
        }
        file.sync_all().map_err(cannot)?;
        drop(file);
        std::fs::rename(&tmp, target).map_err(cannot)?;
        Ok(value)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else {
        // The rename is only durable once the folder is; a failure here loses nothing written.
        let _ = std::fs::File::open(&dir).and_then(|d| d.sync_all());
    }
    written
}

/// A new file beside `target` that no one else has (created exclusively).
fn temporary(dir: &Path, target: &Path) -> Result<(PathBuf, std::fs::File)> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    let mut last = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{}.part", ulid::Ulid::new()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(Error::io(format!("cannot write in {}", dir.display()), e)),
        }
    }
    Err(Error::io(
        format!("cannot write in {}", dir.display()),
        last.unwrap_or_else(|| std::io::Error::other("no free temporary name")),
    ))
}

/// Gives the new file the old one's permissions, and its owner where this process may.
#[cfg(unix)]
fn keep_owner_and_mode(file: &std::fs::File, old: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // Only the owner's superuser may give a file away; anyone else keeps the file as theirs.
    let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    file.set_permissions(old.permissions())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &std::fs::File, old: &std::fs::Metadata) -> std::io::Result<()> {
    file.set_permissions(old.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_text(path: &Path, text: &str) -> Result<()> {
        write_bytes(path, text.as_bytes())
    }

    #[test]
    fn a_new_file_and_a_replaced_one_are_whole_and_nothing_else_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_text(&path, "one").unwrap();
        write_text(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_text(&path, "old").unwrap();
        let failed = write_whole(&path, |w| {
            w.write_all(b"half").unwrap();
            Err::<(), _>(Error::invalid("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_text(dir.path(), "x").unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_text(&path, "new").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_text(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        // A dangling link creates the file it names.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_text(&dangling, "made").unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("made.json")).unwrap(), "made");
        // A loop is refused.
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let e = write_text(&dir.path().join("a"), "x").unwrap_err().to_string();
        assert!(e.contains("loop"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_into_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_text(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the pipe is still a pipe");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file beside it");
    }
}
