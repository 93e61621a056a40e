//! Damage done to a good file for property tests of importers (also used by strata-api's
//! tests): truncation, cuts, JSON fragments, NUL and non-UTF-8 bytes, lines dropped, doubled
//! or swapped.

use proptest::prelude::*;

/// One change to a file's bytes; positions are taken modulo its length.
#[derive(Debug, Clone)]
pub enum Damage {
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    DoubleLine(usize),
    DropLine(usize),
    SwapLines(usize, usize),
}

fn fragment() -> impl Strategy<Value = Vec<u8>> {
    let json = prop::sample::select(vec![
        "\"",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\n",
        "\r\n",
        " ",
        "\\",
        "\\u0000",
        "null",
        "1e999",
        "-1",
        "0",
        "\"x\"",
        "\"semantic\":{}",
        "\"a\":{\"b\":\"c\"}",
        "{\"semantic\": {}}",
        "\"seq\":1,",
        "\"stream_version\":1,",
        "\"type\":\"forgotten\",",
        "\"redacted_at\":\"2026-01-01T00:00:00Z\",",
        "\"tags\":[\" x \"],",
        "\"relation\":\"\",",
        "\"reason\":\"\",",
        "\"napoleon_bonaparte\":{\"x\":\"1\"},",
        "\u{2028}",
        "é",
    ]);
    prop_oneof![
        6 => json.prop_map(|s| s.as_bytes().to_vec()),
        1 => Just(vec![0u8, 0, 0]),
        1 => Just(vec![0xff]),
        1 => Just(vec![0xe9, b'x']),
        2 => prop::collection::vec(any::<u8>(), 1..6),
    ]
}

pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        1 => any::<usize>().prop_map(Damage::Truncate),
        4 => (any::<usize>(), fragment()).prop_map(|(at, bytes)| Damage::Insert(at, bytes)),
        2 => (any::<usize>(), 1usize..40).prop_map(|(at, n)| Damage::Delete(at, n)),
        1 => any::<usize>().prop_map(Damage::DoubleLine),
        1 => any::<usize>().prop_map(Damage::DropLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::SwapLines(a, b)),
    ]
}

pub fn apply(file: &[u8], damages: &[Damage]) -> Vec<u8> {
    let mut bytes = file.to_vec();
    for d in damages {
        let at = |i: usize| if bytes.is_empty() { 0 } else { i % (bytes.len() + 1) };
        match d {
            Damage::Truncate(i) => bytes.truncate(at(*i)),
            Damage::Insert(i, new) => {
                let i = at(*i);
                bytes.splice(i..i, new.iter().copied());
            }
            Damage::Delete(i, n) => {
                let i = at(*i);
                let end = (i + n).min(bytes.len());
                bytes.drain(i..end);
            }
            Damage::DoubleLine(i) | Damage::DropLine(i) | Damage::SwapLines(i, _) => {
                let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                let n = lines.len();
                let i = i % n;
                match d {
                    Damage::DoubleLine(_) => lines.insert(i, lines[i].clone()),
                    Damage::DropLine(_) => {
                        lines.remove(i);
                    }
                    Damage::SwapLines(_, j) => lines.swap(i, j % n),
                    _ => unreachable!(),
                }
                bytes = lines.join(&b'\n');
            }
        }
    }
    bytes
}

/// How many lines `bytes` has.
pub fn line_count(bytes: &[u8]) -> usize {
    bytes.split(|b| *b == b'\n').count()
}
