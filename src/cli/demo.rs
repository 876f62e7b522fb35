//! `baton demo`: a short session played in a temporary folder.

use super::ExitStatus;

pub(super) fn run() -> ExitStatus {
    match crate::demo::run(&mut super::screen::Screen::stdout()) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            errln!("baton demo: {e}");
            ExitStatus::Failure
        }
    }
}
