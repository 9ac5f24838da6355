//! The testkit against real builds: the sample workspace, and a broken workspace.

use aeterna_testkit::{ExtensionsDir, build_guest_workspace, sample, sample_extensions};

/// The component-model binary header: `\0asm`, then the component layer and version.
const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

#[test]
fn samples_build_into_their_own_directory_as_components() {
    let dir = sample_extensions().expect("the samples build");
    assert!(
        dir.ends_with("wasm-guests/sample-extensions"),
        "{}",
        dir.display()
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".wasm"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "context_injector.wasm",
            "output_compactor.wasm",
            "secret_redactor.wasm",
            "todo_tags.wasm"
        ]
    );
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        assert_eq!(bytes[..8], COMPONENT_HEADER, "{name} is a component");
    }
    // Once per process: the second call returns the same directory without building.
    assert_eq!(sample_extensions().unwrap(), dir);
    assert_eq!(sample("todo-tags").unwrap(), dir.join("todo_tags.wasm"));
    let missing = sample("nope").unwrap_err().to_string();
    assert!(missing.contains("available: "), "{missing}");
}

#[test]
fn extensions_dir_holds_exactly_what_was_added() {
    let dir = ExtensionsDir::new().unwrap();
    dir.add_sample("secret-redactor").unwrap();
    dir.add_sample_with("output-compactor", "[config]\nmax_tokens = 100\n")
        .unwrap();
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "output_compactor.toml",
            "output_compactor.wasm",
            "secret_redactor.toml",
            "secret_redactor.wasm"
        ]
    );
    let manifest = std::fs::read_to_string(dir.path().join("secret_redactor.toml")).unwrap();
    assert!(
        manifest.contains("failure = \"closed\""),
        "the example manifest: {manifest}"
    );
    let all = ExtensionsDir::with_all_samples().unwrap();
    assert_eq!(std::fs::read_dir(all.path()).unwrap().count(), 8);
}

#[test]
fn a_failed_build_reports_cargo_output() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("Cargo.toml"),
        "[package]\nname = \"broken-guest\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
         [lib]\ncrate-type = [\"cdylib\"]\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        workspace.path().join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"broken-guest\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir(workspace.path().join("src")).unwrap();
    std::fs::write(
        workspace.path().join("src/lib.rs"),
        "pub fn f() -> u32 { \"not a number\" }\n",
    )
    .unwrap();
    let error = build_guest_workspace(workspace.path(), "broken-guest")
        .unwrap_err()
        .to_string();
    assert!(error.contains("failed"), "{error}");
    assert!(
        error.contains("mismatched types"),
        "cargo's stderr is included: {error}"
    );
    assert!(error.contains("--target wasm32-wasip2"), "{error}");
}

#[test]
fn a_missing_workspace_is_a_clear_error() {
    let error = build_guest_workspace(std::path::Path::new("/nonexistent/ws"), "x")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no guest workspace at /nonexistent/ws"),
        "{error}"
    );
}

#[test]
fn test_guests_build_apart_from_the_samples() {
    let dir = aeterna_testkit::test_guests().expect("tests/guests builds");
    assert!(
        dir.ends_with("wasm-guests/test-guests"),
        "{}",
        dir.display()
    );
    let components: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    assert!(!components.is_empty());
    for component in &components {
        let name = component.file_name().unwrap().to_str().unwrap();
        assert!(
            !["secret_redactor.wasm", "todo_tags.wasm"].contains(&name),
            "no sample among the test guests: {name}"
        );
        let bytes = std::fs::read(component).unwrap();
        assert_eq!(&bytes[..4], b"\0asm", "{name}");
    }
}
