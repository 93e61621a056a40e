// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Allocator and thread settings for on-device inference, before any thread starts.
    strata_models::tune_process();
    strata_desktop::run();
}
