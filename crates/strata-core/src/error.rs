//! The core's typed errors: callers branch on the variant; messages are one clear sentence.

use std::path::PathBuf;

/// Result with the core's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the store, with enough context to say what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input that does not make sense (bad id, empty tag, importance out of range …).
    #[error("{0}")]
    Invalid(String),
    /// No memory has this id or key.
    #[error("no memory {0}")]
    NotFound(String),
    /// The memory existed but was forgotten; its content is gone.
    #[error("memory {id} was forgotten at {at}; its content has been erased")]
    Forgotten {
        /// The forgotten memory.
        id: String,
        /// When it was forgotten (RFC 3339).
        at: String,
    },
    /// Another memory in the same scope already has this key.
    #[error("a {kind} memory with key '{key}' already exists in this scope ({existing})")]
    DuplicateKey {
        /// Memory type.
        kind: String,
        /// The clashing key.
        key: String,
        /// The id of the memory that has it.
        existing: String,
    },
    /// An append expected a different stream version (someone else wrote first).
    #[error("conflict on memory {stream}: expected version {expected}, found {actual}")]
    Conflict {
        /// The stream (memory id).
        stream: String,
        /// The version the caller expected.
        expected: String,
        /// The version actually stored.
        actual: u64,
    },
    /// The file is a SQLite database that is not Strata's, or not a database at all.
    #[error("{path} is not a Strata database: {reason}; it was left untouched")]
    NotStrataDatabase {
        /// The file.
        path: PathBuf,
        /// Why we think so.
        reason: String,
    },
    /// The database was written by a newer Strata.
    #[error(
        "{path} has schema version {found}, newer than this Strata understands ({supported}); upgrade Strata. The file was left untouched"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The database file is damaged.
    #[error("the database file is corrupted ({0}); restore it from a backup")]
    Corrupt(String),
    /// The database file failed its integrity check when it was opened: nothing reads from or
    /// writes to it.
    #[error(
        "{path} is damaged ({detail}). Strata neither reads nor writes it, so nothing more is lost. Restore your latest backup into a new file (`strata --db NEW.db import BACKUP.jsonl`; `strata export --format backup` makes backups), or salvage what is readable with a recovery tool such as sqlite3's `.recover` on a copy"
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What the check found (its first findings).
        detail: String,
    },
    /// The database (or the folder it is in) cannot be written.
    #[error(
        "{path} cannot be opened for writing: {reason}. Strata writes to the database and creates its journal files (NAME-wal, NAME-shm) beside it; give yourself write permission, or copy the file to a folder you can write to"
    )]
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// The file or its folder, and why.
        reason: String,
    },
    /// The database is locked by another writer for longer than the busy timeout.
    #[error("the database is busy (another Strata process holds the write lock); try again")]
    Busy,
    /// An import file could not be read; nothing was imported.
    #[error("{file}:{line}: {message}; nothing was imported")]
    BadImport {
        /// The file (or `<stdin>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// An import met a memory that is already stored and was asked to stop there; nothing
    /// was imported. Importing again with skip or merge goes past it.
    #[error("{what} is already in your memories (line {line} of {file}); nothing was imported")]
    AlreadyStored {
        /// The file (or `<stdin>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// The memory in words: a quoted key, or "the episode of <time>".
        what: String,
    },
    /// A stored event could not be decoded (a newer payload version, or damage).
    #[error("event {seq} could not be read: {message}")]
    BadEvent {
        /// Global sequence number.
        seq: i64,
        /// What is wrong.
        message: String,
    },
    /// An on-device model is missing, damaged or failed.
    #[error("{0}")]
    Model(String),
    /// Filesystem trouble.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The person stopped a long job; what it was writing was rolled back.
    #[error("{0}")]
    Cancelled(String),
    /// A database server could not be reached or cannot serve Strata (one sentence: what is
    /// wrong and what to do).
    #[error("{0}")]
    Connect(String),
    /// What was asked is not served by this store's engine (training on a PostgreSQL store).
    #[error("{0}")]
    Unsupported(String),
    /// Any other failure of the storage engine, in its own words.
    #[error("database error: {0}")]
    Storage(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }

    /// An I/O failure with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// A bad import file: the file, its 1-based line (at least 1), and what is wrong, with
    /// every long quoted value in the message cut to an excerpt (see [`clamp_message`]).
    pub fn bad_import(file: &str, line: usize, message: impl AsRef<str>) -> Self {
        Error::BadImport { file: excerpt(file), line: line.max(1), message: clamp_message(message.as_ref()) }
    }
}

/// The most characters of a value an error message quotes.
pub const EXCERPT_CHARS: usize = 48;

/// `value` as an error message may quote it: whole when short, else its first
/// [`EXCERPT_CHARS`] characters, an ellipsis and its size. A message quoting a 10 MB key would
/// bury the one sentence that matters.
/// An excerpt is left as it is, so values cut early stay cut once.
pub fn excerpt(value: &str) -> String {
    match value.char_indices().nth(EXCERPT_CHARS) {
        None => value.to_string(),
        Some((cut, _)) if is_cut(&value[cut..]) => value.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &value[..cut], value.len()),
    }
}

/// Whether `tail` is what [`excerpt`] puts after the characters it keeps.
fn is_cut(tail: &str) -> bool {
    tail.strip_prefix("… (")
        .and_then(|t| t.strip_suffix(" bytes)"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A message written by someone else (a parser's): each quoted value cut to an excerpt (see
/// [`excerpts`]), and the whole to a few excerpts' length.
pub fn clamp_message(message: &str) -> String {
    cut(excerpts(message), 8 * EXCERPT_CHARS)
}

/// The most characters of a message shown to a person ([`bounded`]).
pub const MESSAGE_CHARS: usize = 1_000;

/// An error message as it may be shown: every quoted value cut to an excerpt ([`excerpts`]),
/// and the whole to [`MESSAGE_CHARS`]. The one rule the front doors (the API's errors, the
/// CLI's last line) apply to every message, whoever wrote it.
pub fn bounded(message: &str) -> String {
    cut(excerpts(message), MESSAGE_CHARS)
}

fn cut(mut text: String, chars: usize) -> String {
    if let Some((at, _)) = text.char_indices().nth(chars) {
        text.truncate(at);
        text.push('…');
    }
    text
}

/// `message` with each quoted value — between backticks, double quotes, or single quotes that
/// open after a space or bracket and close before one or punctuation — cut to an [`excerpt`].
pub fn excerpts(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(16 * EXCERPT_CHARS));
    let mut rest = message;
    while let Some((open, len)) = next_quoted(rest) {
        out.push_str(&rest[..=open]);
        out.push_str(&excerpt(&rest[open + 1..open + 1 + len]));
        out.push_str(&rest[open + 1 + len..open + 2 + len]);
        rest = &rest[open + 2 + len..];
    }
    out.push_str(rest);
    out
}

/// Where the next quoted value of `text` starts (its opening quote) and its length in bytes.
fn next_quoted(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(at) = text[from..].find(['`', '"', '\'']).map(|i| i + from) {
        let quote = text.as_bytes()[at] as char;
        let body = &text[at + 1..];
        let close = if quote == '\'' {
            let opens = text[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || "([{:=,".contains(c));
            let closes =
                |i: usize| body[i + 1..].chars().next().is_none_or(|c| c.is_whitespace() || ").,;:!?]}".contains(c));
            if opens { body.match_indices('\'').map(|(i, _)| i).find(|&i| closes(i)) } else { None }
        } else {
            body.find(quote)
        };
        match close {
            Some(len) => return Some((at, len)),
            None => from = at + 1,
        }
    }
    None
}
