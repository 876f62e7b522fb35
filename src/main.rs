//! The `baton` binary: everything is in the library's command line, [`baton::cli`].

fn main() -> std::process::ExitCode {
    baton::cli::main()
}
