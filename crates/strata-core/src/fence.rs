//! Memory text made safe to show a model inside the `<memories>` block ([`fence`]): it can
//! neither end the block nor pass for another item, whatever characters it is written in.
//!
//! The text is normalized first (NFKC, so a fullwidth `＜` is a `<`; invisible characters and
//! stray control characters dropped, so a zero-width space cannot hide inside a word). Then a
//! `<` — or a look-alike, or an HTML reference to one — that begins a `memory`/`memories`
//! tag, however spaced, slashed, cased or entity-encoded, becomes `‹`; and every line break a
//! renderer or a model may honour starts a new line indented by four spaces.

use unicode_normalization::UnicodeNormalization;

/// What a defused tag's `<` becomes.
const DEFUSED: char = '‹';
/// What every line after the first starts with.
const INDENT: &str = "\n    ";
/// `<` and the characters drawn like it (after NFKC, which already made `＜` and `﹤` a `<`).
const OPENERS: [char; 10] = ['<', '˂', 'ᐸ', '〈', '⟨', '❬', '❮', '⧼', '⋖', '≺'];

/// `text` made safe inside the block: normalized, tags defused, every line after the first
/// indented (see the module's documentation). Ordinary text — `a < b and <b>bold</b>` — is
/// left as it is.
pub fn fence(text: &str) -> String {
    let clean = normalize(text);
    let defused = defuse(clean.trim_matches(|c: char| c.is_whitespace() || is_line_break(c)));
    let mut out = String::with_capacity(defused.len() + 8);
    let mut chars = defused.chars().peekable();
    while let Some(c) = chars.next() {
        if is_line_break(c) {
            if c == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push_str(INDENT);
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` fenced as one line of at most `max_chars` characters: normalized and defused as
/// [`fence`] does, every run of white space and line breaks one space, and cut with `…`
/// (within the bound) past it. For a value that
/// must stay on its line in a prompt (a name, a speaker, a description): it can neither start
/// a line of its own nor run on.
pub fn fence_line(text: &str, max_chars: usize) -> String {
    let fenced = fence(text);
    let mut line = String::with_capacity(fenced.len().min(max_chars * 4));
    let mut words = fenced.split(INDENT).flat_map(str::split_whitespace).peekable();
    while let Some(word) = words.next() {
        line.push_str(word);
        if words.peek().is_some() {
            line.push(' ');
        }
    }
    if line.char_indices().nth(max_chars).is_none() {
        return line;
    }
    let cut = line.char_indices().nth(max_chars.saturating_sub(1)).map_or(line.len(), |(i, _)| i);
    format!("{}…", line[..cut].trim_end())
}

/// Whether `c` ends a line for some renderer or model: Unicode's mandatory breaks, and the
/// separators Python's `splitlines` honours.
pub fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{1C}'..='\u{1E}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// NFKC with invisible characters dropped, before and after (the normalization may make one
/// of a character that was not).
fn normalize(text: &str) -> String {
    if text.is_ascii() {
        // ASCII is its own NFKC.
        return text.chars().filter(|c| !hidden(*c)).collect();
    }
    let visible: String = text.chars().filter(|c| !hidden(*c)).collect();
    visible.nfkc().filter(|c| !hidden(*c)).collect()
}

/// Characters that show nothing: Unicode's default-ignorable code points (zero-width
/// spaces and joiners, bidirectional controls, variation selectors, fillers, tags …) and
/// control characters other than tabs and line breaks.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t' && !is_line_break(c))
        || matches!(
            c,
            '\u{AD}'
                | '\u{34F}'
                | '\u{61C}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `text` with the `<` of every memory tag look-alike replaced by [`DEFUSED`] (an HTML
/// reference standing for it is replaced whole).
fn defuse(text: &str) -> String {
    if !text.contains(OPENERS) && !text.contains('&') {
        return text.to_string();
    }
    let units = units(text);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (i, unit) in units.iter().enumerate() {
        if opens(unit.text) && names_memory(&units[i + 1..]) {
            out.push_str(&text[done..unit.start]);
            out.push(DEFUSED);
            done = unit.start + unit.text.len();
        }
    }
    out.push_str(&text[done..]);
    out
}

/// One character of the text as written, or one HTML character reference (`&lt;`, `&#60;`).
struct Unit<'a> {
    start: usize,
    text: &'a str,
}

fn units(text: &str) -> Vec<Unit<'_>> {
    let mut units = Vec::with_capacity(text.len());
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        let len = if c == '&' { reference_len(&text[at..]).unwrap_or(1) } else { c.len_utf8() };
        units.push(Unit { start: at, text: &text[at..at + len] });
        at += len;
    }
    units
}

/// The length of the HTML character reference `s` starts with, if it starts with one:
/// `&name;`, `&#digits;`, `&#xhex;` (HTML also reads some without their `;`).
fn reference_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    if bytes.get(1) != Some(&b'#') {
        return named_len(s);
    }
    let hex = matches!(bytes.get(2), Some(b'x' | b'X'));
    let from = if hex { 3 } else { 2 };
    let digits =
        bytes[from..].iter().take_while(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() }).count();
    if digits == 0 {
        return None;
    }
    let len = from + digits + usize::from(bytes.get(from + digits) == Some(&b';'));
    decode(&s[..len]).map(|_| len)
}

/// [`reference_len`] for a named reference.
fn named_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let name = 1 + bytes[1..].iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    let whole = name + usize::from(bytes.get(name) == Some(&b';'));
    if decode(&s[..whole]).is_some() {
        return Some(whole);
    }
    // HTML reads `&lt` without its `;` even when letters follow: `&ltmemories` is `<memories`.
    ["lt", "gt", "amp"]
        .iter()
        .find(|legacy| s.get(1..1 + legacy.len()).is_some_and(|n| n.eq_ignore_ascii_case(legacy)))
        .map(|legacy| 1 + legacy.len())
}

/// What a unit stands for: its character, or the character a reference names (`None` for a
/// name this reading does not know, which then reads as plain text).
fn decode(unit: &str) -> Option<char> {
    let Some(reference) = unit.strip_prefix('&') else { return unit.chars().next() };
    let reference = reference.strip_suffix(';').unwrap_or(reference);
    if let Some(number) = reference.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code);
    }
    match reference.to_ascii_lowercase().as_str() {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "sol" => Some('/'),
        "amp" => Some('&'),
        "nbsp" => Some(' '),
        "tab" => Some('\t'),
        "newline" => Some('\n'),
        _ => None,
    }
}

/// A unit's characters as compared: decoded, NFKC, lower case, homoglyphs of Latin letters
/// read as those letters, invisible characters dropped.
fn reading(unit: &str) -> impl Iterator<Item = char> + '_ {
    decode(unit)
        .into_iter()
        .flat_map(|c| std::iter::once(c).nfkc())
        .filter(|c| !hidden(*c))
        .flat_map(char::to_lowercase)
        .map(latin)
}

/// Cyrillic and Greek letters drawn like the Latin ones of "memory".
fn latin(c: char) -> char {
    match c {
        'м' => 'm',
        'е' | 'ё' | 'ε' => 'e',
        'о' | 'ο' => 'o',
        'г' => 'r',
        'і' | 'ι' => 'i',
        'ѕ' => 's',
        'у' => 'y',
        other => other,
    }
}

/// Whether a unit is a `<` or something drawn like one.
fn opens(unit: &str) -> bool {
    let mut chars = reading(unit);
    matches!((chars.next(), chars.next()), (Some(c), None) if OPENERS.contains(&c))
}

/// Whether the units after an opener name a memory tag: white space and slashes, then
/// "memor".
fn names_memory(rest: &[Unit<'_>]) -> bool {
    let mut word = rest
        .iter()
        .flat_map(|u| reading(u.text))
        .skip_while(|c| c.is_whitespace() || is_line_break(*c) || matches!(c, '/' | '\\' | '⁄' | '∕'));
    "memor".chars().all(|want| word.next() == Some(want))
}
