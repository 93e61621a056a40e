//! PDFs (`pdf-extract`), page by page: each page's text cut into passages cited by page and
//! line. A PDF locked with a password, or whose pages are pictures (a scan), is refused with
//! what it is; Strata does not read text from pictures.

use strata_core::datasets::{DatasetKind, NewDataset, Section};
use strata_core::{Error, Result};

use crate::document::passages;

/// Each page's text, its passages and its headings-by-page outline.
pub(crate) fn read(file: &str, bytes: &[u8], mut base: NewDataset) -> Result<NewDataset> {
    if !bytes.starts_with(b"%PDF") {
        return Err(Error::invalid(format!("{file} is not a PDF (it does not begin as one)")));
    }
    let locked = bytes.windows(8).any(|w| w == b"/Encrypt");
    // The reader panics on some damaged files rather than failing: a panic is a refusal here.
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes));
    let pages = match pages {
        Ok(Ok(pages)) => pages,
        Ok(Err(_)) | Err(_) if locked => {
            return Err(Error::invalid(format!(
                "{file} is locked with a password; open it, save a copy without one, and load that"
            )));
        }
        Ok(Err(e)) => return Err(Error::invalid(format!("{file} cannot be read as a PDF: {e}"))),
        Err(_) => return Err(Error::invalid(format!("{file} cannot be read as a PDF: it is damaged"))),
    };
    if pages.iter().all(|p| p.trim().is_empty()) {
        return Err(Error::invalid(format!(
            "{file} has no text to read: its {} {} pictures (a scan?). Strata does not read text from pictures",
            pages.len(),
            if pages.len() == 1 { "page is" } else { "pages are" }
        )));
    }
    for (i, text) in pages.iter().enumerate() {
        let number = i as u32 + 1;
        let text = tidy(text);
        if text.trim().is_empty() {
            continue;
        }
        let (_, chunks) = passages(&text, false, Some(number));
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        base.sections.push(Section {
            page: Some(number),
            heading: (!first.is_empty()).then(|| first.chars().take(80).collect()),
            depth: 0,
            line: 1,
        });
        base.chunks.extend(chunks);
    }
    let blank = pages.iter().filter(|p| p.trim().is_empty()).count();
    if blank > 0 {
        base.notes.push(format!("{blank} of {} pages had no text (pictures?): they are not searchable", pages.len()));
    }
    base.kind = DatasetKind::Document;
    Ok(base)
}

/// A page's text as the lines a reader sees: the extractor's blank lines (it leaves one between
/// most lines of a page) dropped, so a citation's line numbers count the page's lines.
fn tidy(page: &str) -> String {
    let mut out = String::new();
    for line in page.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
