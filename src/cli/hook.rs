//! `baton hook`: one hook event from stdin, nothing or one envelope on stdout. Always
//! exits 0, and a panic is swallowed: the hook path is sacred.

use super::{ExitStatus, print_out, run_guarded};
use crate::host::HookInput;
use crate::{hook, stdin};

pub(super) fn run() -> ExitStatus {
    if super::stdin_is_a_terminal(
        "hook",
        "a hook event (JSON) from Claude Code, Codex, Gemini CLI, Qwen Code or Factory Droid",
    ) {
        return ExitStatus::Success;
    }
    run_guarded(|| {
        let Ok(input) = stdin::read_json::<HookInput>(stdin::timeout_from_env()) else {
            return;
        };
        let env = hook::HookEnv::from_process();
        if let Some(envelope) = hook::handle(&input, &env) {
            print_out(&envelope.to_json());
        }
    });
    ExitStatus::Success
}
