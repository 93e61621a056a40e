//! Every loader on the real sample files in `tests/data` (written for these tests: LICENCE.md
//! there), and every kind of bad file refused with what is wrong.

use std::io::Write;
use std::path::PathBuf;

use strata_core::datasets::{Cell, ColumnType, DatasetKind, NewDataset};
use strata_datasets::{read_bytes, read_file};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn one(name: &str) -> NewDataset {
    let mut read = read_file(&sample(name), None).unwrap();
    assert_eq!(read.len(), 1, "{name}");
    read.pop().unwrap()
}

fn refused(name: &str) -> String {
    read_file(&sample(name), None).unwrap_err().to_string()
}

fn column(d: &NewDataset, name: &str) -> usize {
    d.columns.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}: {:?}", d.columns))
}

#[test]
fn a_csv_becomes_a_typed_table_whose_rows_search_finds() {
    let d = one("expenses.csv");
    assert_eq!((d.name.as_str(), d.kind, d.format.as_str(), d.rows.len()), ("expenses", DatasetKind::Table, "csv", 48));
    let kinds: Vec<_> = d.columns.iter().map(|c| (c.name.as_str(), c.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            ("date", ColumnType::Text),
            ("category", ColumnType::Text),
            ("description", ColumnType::Text),
            ("amount", ColumnType::Real),
            ("currency", ColumnType::Text)
        ]
    );
    assert_eq!(d.rows[4][column(&d, "description")], Cell::Text("dinner, \"the good one\", in Porto".into()));
    assert_eq!(d.rows[9][column(&d, "description")], Cell::Text("=HYPERLINK(\"http://example.com\",\"click\")".into()));
    assert_eq!(d.chunks.len(), 48);
    assert_eq!(d.chunks[1].place.row, Some(2));
    assert!(d.chunks[1].text.starts_with("date: 2025-01-10; category: rent;"), "{}", d.chunks[1].text);
    assert_eq!(d.digest.len(), 64);
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}

#[test]
fn tsv_json_and_json_lines_become_tables() {
    let books = one("books.tsv");
    assert_eq!(
        books.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["title", "author", "year", "pages", "read"]
    );
    assert_eq!(books.columns[2].kind, ColumnType::Integer);
    assert_eq!(books.rows[3][1], Cell::Text("José Saramago".into()));

    let people = one("people.json");
    let names: Vec<_> = people.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["name", "city", "joined", "team", "tags", "lead"]);
    assert_eq!(people.rows[0][4], Cell::Text("[\"ux\",\"research\"]".into()));
    assert_eq!(people.rows[1][5], Cell::Null);
    assert_eq!(people.rows[2][5], Cell::Text("true".into()));

    let steps = one("steps.jsonl");
    assert_eq!(steps.rows.len(), 7);
    assert_eq!(steps.rows[6][1], Cell::Int(4000 + 7 * 913));
}

#[test]
fn a_workbook_gives_a_table_per_sheet_with_dates_and_formulas() {
    let sheets = read_file(&sample("budget.xlsx"), None).unwrap();
    let names: Vec<_> = sheets.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["budget_budget", "budget_savings"]);
    let budget = &sheets[0];
    assert_eq!(budget.source, "budget.xlsx › Budget");
    let closed = column(budget, "closed_on");
    assert_eq!(budget.rows[0][closed], Cell::Text("2025-01-28".into()));
    assert_eq!(budget.rows[0][column(budget, "planned")], Cell::Int(1800));
    // openpyxl saves formulas without their values: each is kept as its text, and said so.
    assert_eq!(budget.rows[0][column(budget, "left")], Cell::Text("=B2-C2".into()));
    assert!(budget.notes.iter().any(|n| n.starts_with("4 formulas had no saved value")), "{:?}", budget.notes);
    assert_eq!(sheets[1].rows[0][2], Cell::Real(1250.5));
    assert_ne!(sheets[0].digest, sheets[1].digest);
}

#[test]
fn documents_keep_their_headings_pages_and_lines() {
    let garden = one("garden.md");
    assert_eq!(garden.kind, DatasetKind::Document);
    let headings: Vec<_> = garden.sections.iter().map(|s| s.heading.clone().unwrap()).collect();
    assert_eq!(headings, ["Garden notes", "Tomatoes", "Compost", "Tools"]);
    let shears = garden.chunks.iter().find(|c| c.text.contains("shears")).unwrap();
    assert_eq!(shears.place.heading.as_deref(), Some("Garden notes › Tools"));
    let line = garden_line("The shears were lent");
    assert!(shears.place.lines.0 <= line && line <= shears.place.lines.1, "{:?} vs {line}", shears.place);

    let page = one("handbook.html");
    let holidays = page.chunks.iter().find(|c| c.text.contains("25 days")).unwrap();
    assert_eq!(holidays.place.heading.as_deref(), Some("Team handbook › Holidays"));
    assert!(page.chunks.iter().all(|c| !c.text.contains("console.log") && !c.text.contains("font-family")));

    let notes = one("notes.txt");
    assert_eq!(notes.chunks.len(), 1);
    assert_eq!(notes.chunks[0].place.lines, (1, 3));

    let contract = one("contract.pdf");
    assert_eq!(contract.sections.len(), 3);
    assert_eq!(contract.sections[1].heading.as_deref(), Some("Rent and deposit"));
    let deposit = contract.chunks.iter().find(|c| c.text.contains("1,900 euros")).unwrap();
    assert_eq!(deposit.place.page, Some(2));
    let notice = contract.chunks.iter().find(|c| c.text.contains("60 days")).unwrap();
    assert_eq!(notice.place.page, Some(3));
}

fn garden_line(text: &str) -> u32 {
    let all = std::fs::read_to_string(sample("garden.md")).unwrap();
    all.lines().position(|l| l.contains(text)).unwrap() as u32 + 1
}

#[test]
fn bad_files_are_refused_with_what_is_wrong() {
    assert_eq!(refused("image.csv"), "image.csv is not text: it is a PNG picture");
    let ragged = refused("ragged.csv");
    assert!(ragged.contains("ragged.csv, line 4: 4 values for 3 columns"), "{ragged}");
    let locked = refused("locked.pdf");
    assert!(locked.contains("locked.pdf is locked with a password"), "{locked}");
    let scan = refused("scanned.pdf");
    assert!(scan.contains("scanned.pdf has no text to read: its 1 page is pictures"), "{scan}");
    let docx = read_bytes("letter.docx", b"PK\x03\x04", None).unwrap_err().to_string();
    assert!(docx.contains("Word files are not read yet"), "{docx}");
    let other = read_bytes("photo.heic", b"x", None).unwrap_err().to_string();
    assert!(other.contains("Strata reads CSV, TSV, JSON"), "{other}");
    let not_pdf = read_bytes("fake.pdf", b"hello", None).unwrap_err().to_string();
    assert_eq!(not_pdf, "fake.pdf is not a PDF (it does not begin as one)");
    let damaged = read_bytes("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog", None).unwrap_err().to_string();
    assert!(damaged.starts_with("broken.pdf cannot be read as a PDF"), "{damaged}");
    let bad_json = read_bytes("list.json", b"[{\"a\": 1}, 2]", None).unwrap_err().to_string();
    assert_eq!(bad_json, "list.json: item 2 of the list is not an object");
    let bad_line = read_bytes("log.jsonl", b"{\"a\": 1}\n{oops\n", None).unwrap_err().to_string();
    assert!(bad_line.starts_with("log.jsonl, line 2: not JSON"), "{bad_line}");
    let empty = read_bytes("empty.csv", b"", None).unwrap_err().to_string();
    assert_eq!(empty, "empty.csv is empty");
    let header_only = read_bytes("head.csv", b"a,b\n", None).unwrap_err().to_string();
    assert_eq!(header_only, "head.csv has a header but no rows");
    let bad_name = read_file(&sample("expenses.csv"), Some("My Expenses")).unwrap_err().to_string();
    assert!(bad_name.contains("try \"my_expenses\""), "{bad_name}");
}

#[test]
fn other_encodings_are_read_and_said() {
    let d = one("latin1.csv");
    assert_eq!(d.rows[0], vec![Cell::Text("José".into()), Cell::Text("Málaga".into())]);
    assert!(d.notes.iter().any(|n| n.contains("Windows-1252")), "{:?}", d.notes);
}

#[test]
fn a_zip_bomb_is_refused_unopened() {
    let mut bytes = Vec::new();
    {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut bytes));
        let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("xl/worksheets/sheet1.xml", deflated).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            zip.write_all(&zeros).unwrap();
        }
        zip.finish().unwrap();
    }
    let message = read_bytes("bomb.xlsx", &bytes, None).unwrap_err().to_string();
    assert!(message.contains("bomb.xlsx would unpack to 67 MB"), "{message}");
    assert!(message.contains("refused as a zip bomb"), "{message}");
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("huge.csv");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(strata_datasets::MAX_FILE_BYTES + 1).unwrap();
    let message = read_file(&big, None).unwrap_err().to_string();
    assert!(message.contains("huge.csv is 268 MB; the largest file Strata loads is 256 MB"), "{message}");
    let message = read_file(dir.path(), None).unwrap_err().to_string();
    assert!(message.contains("is a folder"), "{message}");
}
