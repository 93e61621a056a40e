//! A file's bytes as text: UTF-8 (with or without its byte-order mark), UTF-16 with its mark,
//! else Windows-1252 (what spreadsheets on Windows write), said in a note. A file that is not
//! text at all (a picture, an archive, a program) is refused.

use strata_core::{Error, Result};

/// Signatures of files that are not text, with what they are.
const NOT_TEXT: &[(&[u8], &str)] = &[
    (b"\x89PNG", "a PNG picture"),
    (b"\xff\xd8\xff", "a JPEG picture"),
    (b"GIF8", "a GIF picture"),
    (b"PK\x03\x04", "a zip archive (a spreadsheet or Word file?)"),
    (b"%PDF", "a PDF"),
    (b"\x7fELF", "a program"),
    (b"\x1f\x8b", "a gzip archive"),
];

/// `bytes` as text, and a note if it was not UTF-8.
pub(crate) fn decode(file: &str, bytes: &[u8]) -> Result<(String, Option<String>)> {
    if let Some((_, what)) = NOT_TEXT.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return Err(Error::invalid(format!("{file} is not text: it is {what}")));
    }
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom..]);
        if had_errors {
            return Err(Error::invalid(format!("{file} says it is {} but is not", encoding.name())));
        }
        let note = (encoding != encoding_rs::UTF_8).then(|| format!("read as {}", encoding.name()));
        return Ok((text.into_owned(), note));
    }
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(Error::invalid(format!(
            "{file} is not text: it holds bytes no text file has (is it a picture or a program with another name?)"
        )));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((text.to_string(), None)),
        Err(_) => {
            let (text, _, _) = encoding_rs::WINDOWS_1252.decode(bytes);
            Ok((text.into_owned(), Some("read as Windows-1252 (Western European): the file is not UTF-8".to_string())))
        }
    }
}

/// The line (from 1) that byte `offset` of `text` is on.
pub(crate) fn line_at(text: &str, offset: usize) -> u32 {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_decoded_and_pictures_are_refused() {
        assert_eq!(decode("a.csv", "é,1\n".as_bytes()).unwrap(), ("é,1\n".to_string(), None));
        let (t, note) = decode("a.csv", b"\xe9,1\n").unwrap();
        assert_eq!(t, "é,1\n");
        assert!(note.unwrap().contains("Windows-1252"));
        let (t, note) = decode("a.csv", b"\xff\xfea\x00,\x001\x00").unwrap();
        assert_eq!(t, "a,1");
        assert_eq!(note.as_deref(), Some("read as UTF-16LE"));
        let e = decode("a.csv", b"\x89PNG\r\n").unwrap_err().to_string();
        assert!(e.contains("a.csv is not text: it is a PNG picture"), "{e}");
        assert!(decode("a.csv", b"a\x00b").is_err());
        assert_eq!(line_at("a\nb\nc", 4), 3);
    }
}
