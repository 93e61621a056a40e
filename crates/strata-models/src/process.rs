//! Process settings for on-device inference, applied once at the start of `main`.
//!
//! - glibc's allocator hands large blocks back to the OS as soon as they are freed, so every
//!   forward pass page-faults its activations in again; keeping them (no mmap for big blocks, a
//!   high trim threshold) made inference ~20% faster here.
//! - candle splits every matrix product across all cores (it reads `RAYON_NUM_THREADS` at each
//!   product). For the embedder's small products that costs more than it gains; the embedder
//!   runs one sub-batch per core instead, so candle's own splitting is turned off
//!   (docs/benchmarks.md has both figures). A `RAYON_NUM_THREADS` the user set is kept.
//! - candle's own pool for element-wise operations (`CANDLE_NUM_THREADS`) is kept at one
//!   thread unless set: it is one pool for the whole process, so the embedder's two workers
//!   (on its candle path) queued for it (at 2, batch 16 ran at 110 sentences/s instead of 152);
//!   the chat model no longer uses it (its one-token step is plain Rust on threads of its own,
//!   `llama.rs`). `strata train` sets it to every core.
//! - The chat model's products are split over every core up to 8, or `STRATA_THREADS`
//!   ([`chat_threads`]).

use std::path::Path;

use strata_core::{Error, Result};

/// Tunes the process for inference. Call first thing in `main`, before any thread starts.
#[allow(unsafe_code)]
pub fn tune_process() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
    // candle's element-wise pool, sized once from CANDLE_NUM_THREADS: one thread (see above).
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        // SAFETY: as below, before any other thread exists.
        unsafe { std::env::set_var("CANDLE_NUM_THREADS", "1") };
    }
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // SAFETY: called at the start of main, before any other thread exists that could read
        // the environment concurrently.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", "1") };
    }
}

/// The most threads the chat model uses unless `STRATA_THREADS` says otherwise: generating a
/// token is bound by reading the weights, which a few cores already saturate, and each helper
/// spins while it waits for the next product's input (docs/benchmarks.md, "More cores").
const CHAT_THREADS_CAP: usize = 8;

/// How many threads the chat model splits its products over: `STRATA_THREADS` where set (at
/// least 1), else every core the process may use, at most [`CHAT_THREADS_CAP`].
pub(crate) fn chat_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    threads_from(std::env::var("STRATA_THREADS").ok().as_deref(), cores)
}

/// [`chat_threads`]' rule, given the variable's value and the cores.
fn threads_from(set: Option<&str>, cores: usize) -> usize {
    match set.and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(n) => n.max(1),
        None => cores.clamp(1, CHAT_THREADS_CAP),
    }
}

/// Hands memory freed since back to the OS: [`tune_process`] keeps freed blocks for speed,
/// which after loading a model keeps its conversion buffers resident (about a gigabyte for
/// Qwen2.5-0.5B). Called once a model is loaded.
#[allow(unsafe_code)]
pub(crate) fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's arenas to the OS.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How many times its file's size a chat model takes in memory at the peak of loading (its
/// weights read, converted and laid out; measured 2.2× for Qwen2.5-0.5B, 2.6× for the 1.5B and
/// 2.8× for SmolLM2 once the embeddings were converted in parts, docs/benchmarks.md).
const PEAK_PER_FILE_BYTE: u64 = 3;

/// Refuses, before anything is read, to load the chat model in `file` where the memory free now
/// (with free swap) is less than loading it takes: it would push the computer into swapping or
/// be killed half-way. Where the system cannot say, loading goes on.
pub(crate) fn memory_for(file: &Path, title: &str) -> Result<()> {
    let Ok(meta) = std::fs::metadata(file) else { return Ok(()) };
    let mut system = sysinfo::System::new();
    system.refresh_memory_specifics(sysinfo::MemoryRefreshKind::nothing().with_ram().with_swap());
    let available = system.available_memory();
    let free = (available > 0).then(|| available + system.free_swap());
    room_to_load(title, meta.len() * PEAK_PER_FILE_BYTE, free)
}

/// The check of [`memory_for`]: `need` bytes to load the model called `title`, `free` now.
pub(crate) fn room_to_load(title: &str, need: u64, free: Option<u64>) -> Result<()> {
    match free {
        Some(free) if free < need => Err(Error::Model(format!(
            "{title} needs about {} of free memory to load, and this computer has {} free now: close other \
             programs, or choose a smaller on-device model (Settings, or --model)",
            strata_core::files::amount(need),
            strata_core::files::amount(free)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_that_does_not_fit_in_the_free_memory_is_refused_with_both_figures() {
        let err = room_to_load("Qwen2.5-Coder 1.5B", 4_469_283_072, Some(2 << 30)).unwrap_err().to_string();
        assert!(err.contains("Qwen2.5-Coder 1.5B needs about 4.2 GB of free memory to load"), "{err}");
        assert!(err.contains("this computer has 2.0 GB free now"), "{err}");
        room_to_load("Qwen2.5-Coder 1.5B", 4_469_283_072, Some(5 << 30)).unwrap();
        room_to_load("Qwen2.5-Coder 1.5B", 4_469_283_072, None).unwrap();
    }

    #[test]
    fn the_chat_threads_are_every_core_up_to_the_cap_unless_set() {
        assert_eq!(threads_from(None, 2), 2);
        assert_eq!(threads_from(None, 1), 1);
        assert_eq!(threads_from(None, 32), CHAT_THREADS_CAP);
        assert_eq!(threads_from(Some("16"), 4), 16);
        assert_eq!(threads_from(Some("0"), 4), 1);
        assert_eq!(threads_from(Some("many"), 4), 4);
    }

    #[test]
    fn this_computer_has_room_for_the_smallest_model() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("small.gguf");
        std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
        memory_for(&file, "a 1 MB model").unwrap();
        let huge = room_to_load("a huge model", u64::MAX / 2, Some(avail_now())).unwrap_err().to_string();
        assert!(huge.contains("a huge model needs about"), "{huge}");
    }

    fn avail_now() -> u64 {
        let mut system = sysinfo::System::new();
        system.refresh_memory_specifics(sysinfo::MemoryRefreshKind::nothing().with_ram());
        let free = system.available_memory();
        assert!(free > 0, "the system says how much memory is free");
        free
    }
}
