//! The `aeterna` command: see `aeterna --help`.

fn main() -> std::process::ExitCode {
    aeterna_server::cli::main()
}
