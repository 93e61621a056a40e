//! Documents: Markdown (headings from `pulldown-cmark`), plain text, HTML (rendered to text by
//! `html2text`, its headings kept as Markdown's) — cut into passages by `text-splitter`, each
//! with the heading it sits under and its lines. PDFs come through `pdf.rs` page by page.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use strata_core::datasets::{Chunk, DatasetKind, NewDataset, Place, Section};
use strata_core::{Error, Result};
use text_splitter::{MarkdownSplitter, TextSplitter};

use crate::text::{decode, line_at};

/// The most characters in a passage: about 200–250 of the embedder's word pieces for English,
/// inside its 256-piece window, so a passage is embedded whole.
pub const CHUNK_CHARS: usize = 1_000;

/// A Markdown file.
pub(crate) fn markdown(file: &str, bytes: &[u8], mut base: NewDataset) -> Result<NewDataset> {
    let (text, note) = decode(file, bytes)?;
    base.notes.extend(note);
    document(file, &text, true, None, base)
}

/// A plain text file: passages and lines, no headings.
pub(crate) fn plain(file: &str, bytes: &[u8], mut base: NewDataset) -> Result<NewDataset> {
    let (text, note) = decode(file, bytes)?;
    base.notes.extend(note);
    document(file, &text, false, None, base)
}

/// A web page: its text as a reader sees it (no scripts or styles), headings kept.
pub(crate) fn html(file: &str, bytes: &[u8], base: NewDataset) -> Result<NewDataset> {
    let (page, _) = decode(file, bytes)?;
    let text = html2text::from_read(page.as_bytes(), 100_000)
        .map_err(|e| Error::invalid(format!("{file} cannot be read as a web page: {e}")))?;
    document(file, &text, true, None, base)
}

/// `text` as a document (`headings`: read Markdown headings), or as page `page` of one.
fn document(file: &str, text: &str, headings: bool, page: Option<u32>, mut base: NewDataset) -> Result<NewDataset> {
    if text.trim().is_empty() {
        return Err(Error::invalid(format!("{file} has no text")));
    }
    let (sections, chunks) = passages(text, headings, page);
    base.kind = DatasetKind::Document;
    base.sections = sections;
    base.chunks = chunks;
    Ok(base)
}

/// The headings of `text` (with where they start) and its passages, each under its heading.
pub(crate) fn passages(text: &str, headings: bool, page: Option<u32>) -> (Vec<Section>, Vec<Chunk>) {
    let marks = if headings { heading_marks(text) } else { Vec::new() };
    // Each section (from a heading to the next) is cut on its own, so a passage never spans
    // two headings and its citation names the one it is under.
    let mut starts: Vec<usize> = marks.iter().map(|m| m.offset).collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let mut chunks = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let section = &text[start..end];
        let cut: Vec<(usize, &str)> = if headings {
            MarkdownSplitter::new(CHUNK_CHARS).chunk_indices(section).collect()
        } else {
            TextSplitter::new(CHUNK_CHARS).chunk_indices(section).collect()
        };
        let trail = under(&marks, start + 1);
        for (at, piece) in cut {
            let offset = start + at;
            chunks.push(Chunk {
                text: piece.to_string(),
                place: Place {
                    page,
                    heading: (!trail.is_empty()).then(|| trail.join(" › ")),
                    lines: (line_at(text, offset), line_at(text, offset + piece.len().saturating_sub(1))),
                    row: None,
                },
            });
        }
    }
    let sections = marks
        .iter()
        .map(|m| Section { page, heading: Some(m.title.clone()), depth: m.depth, line: line_at(text, m.offset) })
        .collect();
    (sections, chunks)
}

/// A heading: where it starts, its depth and its words.
struct Mark {
    offset: usize,
    depth: u8,
    title: String,
}

fn heading_marks(text: &str) -> Vec<Mark> {
    let mut marks: Vec<Mark> = Vec::new();
    let mut open: Option<Mark> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                open = Some(Mark { offset: range.start, depth: depth(level), title: String::new() })
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(m) = open.as_mut() {
                    m.title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut m) = open.take() {
                    m.title = m.title.trim().to_string();
                    if !m.title.is_empty() {
                        marks.push(m);
                    }
                }
            }
            _ => {}
        }
    }
    marks
}

fn depth(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// The headings a position sits under, outermost first ("Team handbook", "Holidays").
fn under(marks: &[Mark], offset: usize) -> Vec<String> {
    let mut trail: Vec<&Mark> = Vec::new();
    for m in marks.iter().take_while(|m| m.offset < offset) {
        trail.retain(|t| t.depth < m.depth);
        trail.push(m);
    }
    trail.into_iter().map(|m| m.title.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_sit_under_their_headings_with_their_lines() {
        let text = "# Garden\n\nIntro.\n\n## Tomatoes\n\nWater them.\n\n## Compost\n\nTurn it.\n";
        let (sections, chunks) = passages(text, true, None);
        let titles: Vec<_> = sections.iter().map(|s| (s.heading.clone().unwrap(), s.depth, s.line)).collect();
        assert_eq!(titles, vec![("Garden".into(), 1, 1), ("Tomatoes".into(), 2, 5), ("Compost".into(), 2, 9)]);
        let turn = chunks.iter().find(|c| c.text.contains("Turn it")).unwrap();
        assert_eq!(turn.place.heading.as_deref(), Some("Garden › Compost"));
        assert!(turn.place.lines.0 <= 11 && turn.place.lines.1 >= 11, "{:?}", turn.place);
    }
}
