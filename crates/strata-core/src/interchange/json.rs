//! Reading JSON strictly, for every file Strata reads: a document is one value with nothing
//! after it, an object names each key once (a repeated key would silently keep only one of
//! the two), text is UTF-8. A refusal names the line and the field, quoting only excerpts.

use std::collections::HashSet;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Result, excerpt};

/// Why a JSON text was refused: its 1-based line within the text, and a message naming the
/// field (already clamped to excerpts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// The line, counted from 1 at the text's first line.
    pub line: usize,
    /// What is wrong, starting with "field `path`: " when a field is at fault.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses `text` as one JSON value of type `T`: syntax, repeated keys and trailing data first
/// (anything after the value but white space), then the shape of `T`, with the failing field's
/// path.
pub fn parse<T: DeserializeOwned>(text: &str) -> std::result::Result<T, JsonError> {
    check_syntax(text)?;
    let de = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = path_text(e.path());
        let inner = e.inner();
        json_error(inner.line(), path.as_deref(), &inner.to_string())
    })?;
    de.end().map_err(|e| json_error(e.line(), None, &e.to_string()))?;
    Ok(value)
}

/// [`parse`] for an import: the error is [`Error::BadImport`] naming `file` and the line,
/// `first_line` being the number of `text`'s first line in the file.
pub fn parse_in<T: DeserializeOwned>(file: &str, first_line: usize, text: &str) -> Result<T> {
    parse(text).map_err(|e| Error::bad_import(file, first_line + e.line - 1, e.message))
}

/// The most bytes of a document read whole ([`read_text`]).
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;
/// The most bytes of one line of a JSON Lines file ([`lines`]): a memory's content at its
/// largest, every character escaped, with room to spare.
pub const MAX_LINE_BYTES: u64 = 8 * crate::model::MAX_CONTENT_BYTES as u64 + (64 << 10);

/// Reads all of `input` as UTF-8 text (a leading byte-order mark dropped), at most
/// [`MAX_DOCUMENT_BYTES`]. Bytes that are not UTF-8 are refused with their line.
pub fn read_text(file: &str, input: &mut (impl std::io::Read + ?Sized)) -> Result<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    input
        .take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {}", excerpt(file)), e))?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(crate::files::too_large(file, MAX_DOCUMENT_BYTES, "a document read whole"));
    }
    let text = utf8(file, 1, bytes)?;
    Ok(match text.strip_prefix('\u{FEFF}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// The lines of a JSON Lines file, numbered from 1, each without its line ending; lines
/// that are only white space are left out. A line that is not UTF-8, or longer than
/// [`MAX_LINE_BYTES`], is refused with its number.
pub fn lines<'a>(file: &'a str, input: &'a mut dyn BufRead) -> impl Iterator<Item = Result<(usize, String)>> + 'a {
    use std::io::Read as _;
    let mut n = 0;
    std::iter::from_fn(move || {
        loop {
            let mut bytes = Vec::new();
            match (&mut *input).take(MAX_LINE_BYTES + 1).read_until(b'\n', &mut bytes) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(Error::io(format!("cannot read {}", excerpt(file)), e))),
            }
            n += 1;
            if bytes.len() as u64 > MAX_LINE_BYTES {
                let bound = crate::files::size(MAX_LINE_BYTES);
                return Some(Err(Error::bad_import(file, n, format!("the line is longer than {bound}"))));
            }
            if bytes.ends_with(b"\n") {
                bytes.pop();
                if bytes.ends_with(b"\r") {
                    bytes.pop();
                }
            }
            let line = match utf8(file, n, bytes) {
                Ok(line) => line,
                Err(e) => return Some(Err(e)),
            };
            let line = if n == 1 { line.strip_prefix('\u{FEFF}').map(str::to_string).unwrap_or(line) } else { line };
            if !line.trim().is_empty() {
                return Some(Ok((n, line)));
            }
        }
    })
}

/// `bytes` as a string, or the line (counted from `first_line`) where they stop being UTF-8.
fn utf8(file: &str, first_line: usize, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let newlines = valid.iter().filter(|&&b| b == b'\n').count();
        let column = valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Error::bad_import(
            file,
            first_line + newlines,
            format!("byte {column} of the line is not UTF-8 text (save the file as UTF-8)"),
        )
    })
}

/// The syntax pass: well-formed, one value, no key twice in an object.
fn check_syntax(text: &str) -> std::result::Result<(), JsonError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let mut path = Vec::new();
    Strict { path: &mut path }
        .deserialize(&mut *de)
        .and_then(|()| de.end())
        .map_err(|e| json_error(e.line(), None, &e.to_string()))
}

fn json_error(line: usize, path: Option<&str>, message: &str) -> JsonError {
    // serde_json ends its messages with " at line L column C"; the line is reported apart.
    let message = message.rfind(" at line ").map_or(message, |i| &message[..i]);
    let message = plain(message);
    let message = match path {
        Some(path) => format!("field `{path}`: {message}"),
        None => message.to_string(),
    };
    JsonError { line: line.max(1), message: crate::error::clamp_message(&message) }
}

/// serde_json's message in words a person who never read JSON's grammar can act on. Messages
/// it does not know (ours, and serde's about fields) are kept as they are.
fn plain(message: &str) -> String {
    const SYNTAX: &[(&str, &str)] = &[
        (
            "EOF while parsing",
            "the file ends in the middle of an entry (something is cut off, or a closing } or ] is missing)",
        ),
        ("trailing characters", "there is more after the end of the document (only one { … } may be in the file)"),
        ("trailing comma", "there is a comma before a closing } or ] (remove it)"),
        ("expected value", "something is missing here (a value: text in quotes, a number, a list or a group)"),
        ("expected ident", "a word here is not in quotes (only true, false and null may be written bare)"),
        ("expected `:`", "a colon (:) is missing between a name and its value"),
        ("expected `,` or `]`", "a comma or a closing ] is missing in a list"),
        ("expected `,` or `}`", "a comma or a closing } is missing in a group of name: value pairs"),
        ("key must be a string", "a name must be in double quotes"),
        (
            "invalid escape",
            "a backslash starts an escape JSON does not know (write \\\\ for a backslash; \\u needs four hexadecimal digits)",
        ),
        ("invalid unicode code point", "a \\u escape names no character"),
        ("lone leading surrogate", "a \\u escape names no character"),
        ("unexpected end of hex escape", "a \\u escape needs four hexadecimal digits"),
        ("control character", "a line break or control character is inside quotes (write \\n for a line break)"),
        ("invalid number", "a number is written wrongly"),
        ("number out of range", "a number is too large"),
        ("recursion limit exceeded", "the entries are nested too deeply"),
    ];
    if let Some((_, words)) = SYNTAX.iter().find(|(start, _)| message.starts_with(start)) {
        return (*words).to_string();
    }
    // "invalid type: integer `5`, expected a string"
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((found, expected)) = rest.rsplit_once(", expected ")
    {
        return format!("this should be {}, not {}", kind_in_words(expected), found_in_words(found));
    }
    message.to_string()
}

/// What serde expected, in words.
fn kind_in_words(expected: &str) -> &str {
    match expected {
        "a string" | "a borrowed string" | "a character" => "text in quotes",
        "a sequence" | "a list" => "a list [ … ]",
        "a boolean" => "true or false",
        "null" => "null",
        e if e.starts_with("a map") || e.starts_with("struct ") || e.starts_with("map") => {
            "a group of name: value pairs { … }"
        }
        e if ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "usize", "isize"]
            .iter()
            .any(|n| e.contains(n))
            || e.contains("number")
            || e.contains("integer") =>
        {
            "a number"
        }
        e => e,
    }
}

/// What the file had, in words, quoting a short value.
fn found_in_words(found: &str) -> String {
    let quoted = |s: &str| s.split_once(' ').map(|(_, v)| v.to_string()).unwrap_or_default();
    match found.split(' ').next().unwrap_or("") {
        "integer" | "floating" => {
            format!("a number ({})", quoted(found).trim_start_matches("point ").trim_matches('`'))
        }
        "string" => format!("text ({})", quoted(found)),
        "boolean" => quoted(found).trim_matches('`').to_string(),
        "sequence" => "a list".to_string(),
        "map" => "a group of name: value pairs".to_string(),
        "null" | "unit" => "null".to_string(),
        _ => found.to_string(),
    }
}

/// A serde path as `a.b[2].c`, each key cut to an excerpt; `None` at the top level.
fn path_text(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => push_key(&mut out, key),
            Segment::Enum { variant } => push_key(&mut out, variant),
            Segment::Unknown => push_key(&mut out, "?"),
        }
    }
    (!out.is_empty()).then_some(out)
}

fn push_key(out: &mut String, key: &str) {
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(&excerpt(key));
}

/// Where the syntax pass is: the keys and indices from the top.
enum Step {
    Key(String),
    Index(usize),
}

fn steps_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(k) => push_key(&mut out, k),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Walks any JSON value, refusing an object that names a key twice.
struct Strict<'p> {
    path: &'p mut Vec<Step>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        for i in 0.. {
            self.path.push(Step::Index(i));
            let more = seq.next_element_seed(Strict { path: &mut *self.path })?;
            self.path.pop();
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                self.path.push(Step::Key(key));
                let at = steps_text(self.path);
                return Err(de::Error::custom(format!(
                    "field `{at}`: this key appears twice in one object (JSON keeps only one of them; remove the other)"
                )));
            }
            self.path.push(Step::Key(key.clone()));
            map.next_value_seed(Strict { path: &mut *self.path })?;
            self.path.pop();
            seen.insert(key);
        }
        Ok(())
    }
}
