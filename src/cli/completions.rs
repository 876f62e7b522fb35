//! `baton completions SHELL` and `baton man [--dir DIR]`: generated from the command
//! tree itself, so they never disagree with it.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::{Cli, ExitStatus};

#[derive(Args)]
pub(super) struct CompletionsArgs {
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args)]
pub(super) struct ManArgs {
    /// Write baton.1 and a page per command (baton-install.1 ...) into DIR instead.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub(super) fn completions(args: &CompletionsArgs) -> ExitStatus {
    print_generated(|out| {
        clap_complete::generate(args.shell, &mut Cli::command(), "baton", out);
        Ok(())
    })
}

pub(super) fn man(args: &ManArgs) -> ExitStatus {
    let Some(dir) = &args.dir else {
        return print_generated(|out| clap_mangen::Man::new(man_command()).render(out));
    };
    match std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(man_command(), dir)) {
        Ok(()) => {
            outln!("man pages written to {}", dir.display());
            ExitStatus::Success
        }
        Err(e) => {
            errln!("baton man: cannot write into {}: {e}", dir.display());
            ExitStatus::Failure
        }
    }
}

/// The command tree the man pages describe: `help` is a flag there, not a page.
fn man_command() -> clap::Command {
    Cli::command().disable_help_subcommand(true)
}

/// Writes a generated script or page to stdout; a closed pipe or full disk is an error
/// the person sees, not a panic.
fn print_generated(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> ExitStatus {
    let mut text = Vec::new();
    let written = write(&mut text).and_then(|()| super::screen::own_bytes(&text));
    match written {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            errln!("baton: cannot write the output: {e}");
            ExitStatus::Failure
        }
    }
}
