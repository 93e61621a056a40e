//! Training's front door: what every front end (the window, the CLI) shows and asks of a
//! training run, an adapter and a training set, in one place — the views, their wording (the
//! gate's verdict, the warning of a check, an adapter's history in words), resuming a run and
//! the schedule that checks the adapter in use.
//!
//! Views derive `specta::Type` with the `specta` feature (the desktop app's TypeScript
//! bindings).

mod adapters;
mod examples;
mod runs;
mod schedule;
mod selection;

pub use adapters::{
    AdapterEventView, AdapterView, AnswerRow, CheckView, DayView, ReportView, adapter_view, event_view, in_use,
    report_view, trained_questions, verdict, viewed,
};
pub use examples::{ExampleForm, SetMemoryView, TrainingSetView, example_of, form_of, save_examples, training_set};
pub use runs::{CHECK_EVERY, Checked, RunView, TrainOptions, check_if_due, resume, run_base, run_view, runs};
pub use schedule::{ScheduleEntryView, ScheduleView, entry_view, schedule_view};
pub use selection::{SelectionView, selection};
