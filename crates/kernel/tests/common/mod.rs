//! Helpers of the kernel model's integration tests.

use kernel::{Model, Notification, StateOptions};

/// Runs the model over the traces at `paths` (every event, merged by time); they must read
/// without an error.
pub fn run(paths: &[std::path::PathBuf], opts: StateOptions) -> (Model, Vec<Notification>) {
    let traces = ctf::open_all(paths).unwrap();
    let mut m = Model::new(opts);
    let mut notes = Vec::new();
    let errors = m.process_all(&traces, &mut notes);
    assert!(errors.is_empty(), "{errors:?}");
    (m, notes)
}
