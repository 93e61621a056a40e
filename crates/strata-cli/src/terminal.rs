//! What reaches a terminal, made safe: the one rule for everything `strata` prints as text.
//!
//! A memory may hold any characters, and a terminal obeys some of them: `ESC [2J` clears the
//! screen, `OSC` sets the window's title, `ESC [8m` hides what follows, a carriage return or a
//! backspace writes over what was shown, bidirectional overrides reorder it. So every control
//! character (C0 but tab and line feed, DEL, C1) is shown as a visible picture of itself
//! (`␛`, `␍`, `␡`, `�`), and bidirectional controls as `�`: the person sees that something odd
//! is there, and the terminal obeys nothing. (Stripping escape sequences, as crates such as
//! `strip-ansi-escapes` do, would hide the text of the sequence; a picture shows it.)
//!
//! JSON is never changed in meaning: the same characters are written as `\u` escapes, which is
//! the same JSON ([`json`]). Exports to standard output are data and go out exactly
//! ([`RawStdout`]).

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

/// Where search marks a match's start and end in text bound for a terminal; turned into bold
/// only after the text is made safe (see [`Stdout`]).
pub const MARK_START: &str = "\u{E000}";
/// See [`MARK_START`].
pub const MARK_END: &str = "\u{E001}";

/// Whether `c` is one a terminal may obey rather than show.
fn obeyed(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with search marks as a terminal shows them: bold (or `**` elsewhere), never left on
/// past the text (a stored mark character makes at most part of a line bold).
fn marked(text: &str, terminal: bool) -> String {
    let (start, end) = if terminal { ("\x1b[1m", "\x1b[0m") } else { ("**", "**") };
    let mut out = String::with_capacity(text.len() + 8);
    let mut bold = false;
    for c in text.chars() {
        match c {
            '\u{E000}' if !bold => {
                out.push_str(start);
                bold = true;
            }
            '\u{E001}' if bold => {
                out.push_str(end);
                bold = false;
            }
            '\u{E000}' | '\u{E001}' => {}
            c => out.push(c),
        }
    }
    if bold {
        out.push_str(end);
    }
    out
}

/// `text` safe to print to a terminal (see the module's description).
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(obeyed) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                c if !obeyed(c) => c,
                '\0'..='\u{1F}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'),
                '\u{7F}' => '\u{2421}',
                _ => '\u{FFFD}',
            })
            .collect(),
    )
}

/// Pretty JSON of `v`, with every character a terminal may obey written as a `\u` escape (the
/// same JSON: such characters occur only inside strings).
pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    let text = serde_json::to_string_pretty(v)?;
    if !text.chars().any(|c| obeyed(c) && c != '\n') {
        return Ok(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if obeyed(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Standard output for text: made safe ([`safe`]), search marks turned into bold on a terminal
/// (`**` elsewhere), and quiet when the reader goes away (`strata list | head`), so a closed
/// pipe is never a panic or an error.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = safe(&text);
        let marked = if clean.contains(['\u{E000}', '\u{E001}']) {
            Cow::Owned(marked(&clean, std::io::stdout().is_terminal()))
        } else {
            clean
        };
        RawStdout.write_all(marked.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        RawStdout.flush()
    }
}

/// Standard output exactly as written (exports), quiet when the reader goes away.
pub struct RawStdout;

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::io::stdout().lock().write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(buf.len()),
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// Whether `path` is where standard output goes (`/dev/stdout`, `/dev/fd/1`, or the file
/// standard output was redirected to).
#[cfg(unix)]
pub fn is_stdout(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |m: std::fs::Metadata| (m.dev(), m.ino());
    match (std::fs::metadata(path), std::fs::metadata("/dev/stdout")) {
        (Ok(a), Ok(b)) => id(a) == id(b),
        _ => false,
    }
}

/// Whether `path` is where standard output goes (not told apart here).
#[cfg(not(unix))]
pub fn is_stdout(_: &std::path::Path) -> bool {
    false
}

/// The most bytes of one line read from standard input (a chat turn, a key, an answer).
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// The next line of `input` without its line ending (`None` at the end), refused past
/// [`MAX_LINE_BYTES`] rather than read into memory whole.
pub fn read_line(input: &mut impl std::io::BufRead) -> std::io::Result<Option<String>> {
    use std::io::{BufRead as _, Read as _};
    let mut line = String::new();
    let n = input.by_ref().take(MAX_LINE_BYTES + 1).read_line(&mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if n as u64 > MAX_LINE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line of standard input is longer than {} MiB", MAX_LINE_BYTES >> 20),
        ));
    }
    Ok(Some(line.trim_end_matches(['\r', '\n']).to_string()))
}

/// Standard error for log lines, made safe ([`safe`]); a closed standard error loses them.
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().lock().write_all(safe(&String::from_utf8_lossy(buf)).as_bytes());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().lock().flush();
        Ok(())
    }
}

/// Writes `text` to standard error made safe; a leading carriage return (a progress line
/// rewriting itself) is kept. A closed standard error loses the text, not the command.
pub fn to_stderr(text: &str) {
    let (lead, rest) = match text.strip_prefix('\r') {
        Some(rest) => ("\r", rest),
        None => ("", text),
    };
    let _ = write!(std::io::stderr(), "{lead}{}", safe(rest));
}

/// Asks `question` with "[y/N]" on the terminal: whether the person answered yes. Refused
/// where no one can answer (input is not a terminal): the caller's `--yes` says it instead.
pub(crate) fn confirm(question: &str) -> anyhow::Result<bool> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("this cannot be undone; pass --yes to confirm when not running in a terminal");
    }
    ask(&format!("{question} This cannot be undone."))
}

/// Asks `question` at the terminal, yes or no (no unless the person says yes).
pub(crate) fn ask(question: &str) -> anyhow::Result<bool> {
    use std::io::Write;
    to_stderr(&format!("{question} [y/N] "));
    std::io::stderr().flush()?;
    let answer = read_line(&mut std::io::stdin().lock())?.unwrap_or_default();
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_shown_not_obeyed_and_json_keeps_its_meaning() {
        let hostile = "a\x1b[2Jb\x1b]0;title\x07c\x1b[8mhidden\rover\x08\u{9b}31m\u{202E}txet\x7f\tok\nnext";
        let shown = safe(hostile);
        assert!(!shown.chars().any(obeyed), "{shown}");
        assert!(shown.contains("a␛[2Jb␛]0;title␇c␛[8mhidden␍over␈�31m�txet␡\tok\nnext"), "{shown}");
        assert!(matches!(safe("plain, ünïcode ✓\n"), Cow::Borrowed(_)));
        let value = serde_json::json!({"text": hostile});
        let text = json(&value).unwrap();
        assert!(!text.chars().any(|c| obeyed(c) && c != '\n'), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value, "the same JSON");
        // A stray mark in stored text bolds at most the rest of its text, never what follows.
        assert_eq!(marked("a\u{E000}b", true), "a\x1b[1mb\x1b[0m");
        assert_eq!(marked("a\u{E001}b\u{E000}c\u{E001}d", false), "ab**c**d");
    }

    #[test]
    fn a_line_of_input_past_the_bound_is_refused_not_read_whole() {
        let mut ok = std::io::Cursor::new("hello\r\nnext\n");
        assert_eq!(read_line(&mut ok).unwrap().as_deref(), Some("hello"));
        assert_eq!(read_line(&mut ok).unwrap().as_deref(), Some("next"));
        assert_eq!(read_line(&mut ok).unwrap(), None);
        let mut huge = std::io::Cursor::new("x".repeat(MAX_LINE_BYTES as usize + 10));
        assert!(read_line(&mut huge).unwrap_err().to_string().contains("longer than 1 MiB"));
    }
}
