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
//!   the chat model no longer uses it (its one-token step is plain Rust on two threads of its
//!   own, `llama.rs`).
//!   `strata train` sets it to every core.

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
