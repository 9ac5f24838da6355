//! The real `git` CLI, as a person runs it against a repository a test made: author Ana, and
//! neither the machine's nor the user's git configuration.

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir` and returns its standard output; panics with git's error when it
/// fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=Ana", "-c", "user.email=ana@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("git prints UTF-8")
}
