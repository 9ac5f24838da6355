//! `aeterna ext new NAME [--lang rust|js|python]`: a new extension project that builds and passes
//! its tests as generated.
//!
//! Every project has the same shape, whatever the language: the extension (a plain-text hook that
//! trims trailing whitespace and counts what it trimmed in state), a unit test of its logic that
//! runs natively, a manifest `<stem>.toml`, a build that puts `<stem>.wasm` and the manifest in
//! `dist/`, and fixtures for `aeterna ext test` that run the built component in the real host.
//! JavaScript and Python projects carry the WIT contract (`wit/extension.wit`) the binary
//! implements; Rust projects use the SDK, which generates its bindings from the same file.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The contract this binary implements, written into JavaScript and Python projects.
const WIT: &str = include_str!("../../../../wit/extension.wit");
/// The JavaScript helpers (`ExtError`, `hook`), shared with the json-compactor sample.
const JS_HELPERS: &str =
    include_str!("../../../../sample-extensions/json-compactor/src/aeterna.js");

/// The language of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Js,
    Python,
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The extension id, which names the project directory: `[a-z0-9][a-z0-9._-]*`.
    name: String,
    #[arg(long, value_enum, default_value = "rust")]
    lang: Lang,
    /// Where to create the project directory [default: the current directory].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The `extensions-sdk` directory of an Aeterna checkout, for Rust projects [default: the
    /// one this binary was built from].
    #[arg(long, value_name = "DIR")]
    sdk: Option<PathBuf>,
}

pub fn run(args: NewArgs) -> anyhow::Result<()> {
    aeterna_host::validate_extension_id(&args.name)
        .map_err(|why| anyhow::anyhow!("`{}` cannot name an extension: {why}", args.name))?;
    let parent = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = parent.join(&args.name);
    if root.exists() && std::fs::read_dir(&root)?.next().is_some() {
        bail!(
            "{} already exists and is not empty; pick another name or directory",
            root.display()
        );
    }
    let names = Names::new(&args.name);
    let files = match args.lang {
        Lang::Rust => rust_files(&names, &sdk_dir(args.sdk.as_deref())?)?,
        Lang::Js => js_files(&names),
        Lang::Python => python_files(&names),
    };
    for (path, text, executable) in files {
        write(&root.join(path), &text, executable)?;
    }
    println!("created {} ({})", root.display(), args.lang.label());
    println!("{}", next_steps(args.lang, &root));
    Ok(())
}

impl Lang {
    fn label(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
            Lang::Python => "Python",
        }
    }
}

/// The names a template fills in.
struct Names {
    /// The extension id and project name, `strip-ansi`.
    name: String,
    /// The file stem of the component and manifest, `strip_ansi`.
    stem: String,
    /// The Rust type, `StripAnsi`.
    type_name: String,
}

impl Names {
    fn new(name: &str) -> Self {
        let stem = name.replace(['-', '.'], "_");
        let type_name = stem
            .split('_')
            .filter(|part| !part.is_empty())
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect::<String>();
        // A type name cannot start with a digit.
        let type_name = if type_name.starts_with(|c: char| c.is_ascii_digit()) {
            format!("Ext{type_name}")
        } else {
            type_name
        };
        Self {
            name: name.to_owned(),
            stem,
            type_name,
        }
    }

    fn fill(&self, template: &str) -> String {
        template
            .replace("{{name}}", &self.name)
            .replace("{{stem}}", &self.stem)
            .replace("{{type}}", &self.type_name)
    }
}

type File = (PathBuf, String, bool);

fn file(path: &str, text: String) -> File {
    (PathBuf::from(path), text, false)
}

fn common_files(names: &Names) -> Vec<File> {
    vec![
        file(
            &format!("{}.toml", names.stem),
            names.fill(include_str!("templates/common/manifest.toml")),
        ),
        file(
            "fixtures/basic.toml",
            include_str!("templates/common/fixture.toml").to_owned(),
        ),
    ]
}

fn rust_files(names: &Names, sdk: &Path) -> anyhow::Result<Vec<File>> {
    let sdk = sdk
        .to_str()
        .with_context(|| format!("the SDK path {} is not valid UTF-8", sdk.display()))?;
    let mut files = common_files(names);
    files.extend([
        file(
            "Cargo.toml",
            names
                .fill(include_str!("templates/rust/Cargo.toml"))
                .replace("{{sdk}}", &sdk.replace('\\', "/")),
        ),
        file(
            "src/lib.rs",
            names.fill(include_str!("templates/rust/lib.rs")),
        ),
        (
            PathBuf::from("build.sh"),
            names.fill(include_str!("templates/rust/build.sh")),
            true,
        ),
        file(
            ".gitignore",
            include_str!("templates/rust/gitignore").to_owned(),
        ),
        file("README.md", readme(names, Lang::Rust)),
    ]);
    Ok(files)
}

fn js_files(names: &Names) -> Vec<File> {
    let mut files = common_files(names);
    files.extend([
        file(
            "package.json",
            names.fill(include_str!("templates/js/package.json")),
        ),
        file(
            "src/extension.js",
            names.fill(include_str!("templates/js/extension.js")),
        ),
        file(
            "src/logic.js",
            names.fill(include_str!("templates/js/logic.js")),
        ),
        file("src/aeterna.js", JS_HELPERS.to_owned()),
        file(
            "test/logic.test.js",
            include_str!("templates/js/logic.test.js").to_owned(),
        ),
        file("wit/extension.wit", WIT.to_owned()),
        file(
            ".gitignore",
            include_str!("templates/js/gitignore").to_owned(),
        ),
        file("README.md", readme(names, Lang::Js)),
    ]);
    files
}

fn python_files(names: &Names) -> Vec<File> {
    let mut files = common_files(names);
    files.extend([
        file(
            "app.py",
            names.fill(include_str!("templates/python/app.py")),
        ),
        file(
            "logic.py",
            names.fill(include_str!("templates/python/logic.py")),
        ),
        file(
            "test_logic.py",
            include_str!("templates/python/test_logic.py").to_owned(),
        ),
        (
            PathBuf::from("build.sh"),
            names.fill(include_str!("templates/python/build.sh")),
            true,
        ),
        file(
            "requirements.txt",
            include_str!("templates/python/requirements.txt").to_owned(),
        ),
        file("wit/extension.wit", WIT.to_owned()),
        file(
            ".gitignore",
            include_str!("templates/python/gitignore").to_owned(),
        ),
        file("README.md", readme(names, Lang::Python)),
    ]);
    files
}

/// How to build and test a project, for its README and for the end of `ext new`'s output.
fn commands(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => {
            "cargo test                 # the logic, natively, against the SDK's TestHost\n\
             ./build.sh                 # dist/<stem>.wasm and its manifest\n\
             aeterna ext test .         # the built component in the real host, against fixtures/"
        }
        Lang::Js => {
            "npm install                # componentize-js 0.23\n\
             npm test                   # the logic, natively, with node --test\n\
             npm run build              # dist/<stem>.wasm and its manifest\n\
             aeterna ext test .         # the built component in the real host, against fixtures/"
        }
        Lang::Python => {
            "pip install -r requirements.txt   # componentize-py 0.25\n\
             python -m unittest                # the logic, natively\n\
             ./build.sh                        # dist/<stem>.wasm and its manifest\n\
             aeterna ext test .                # the built component in the real host, against fixtures/"
        }
    }
}

fn next_steps(lang: Lang, root: &Path) -> String {
    format!(
        "next:\n  cd {}\n  {}",
        root.display(),
        commands(lang).replace('\n', "\n  ")
    )
}

fn readme(names: &Names, lang: Lang) -> String {
    format!(
        "# {name}\n\n\
         An Aeterna extension in {language}: it removes trailing whitespace from every line of \
         tool output and counts the lines it trimmed in state (`trimmed`). Change it to do what \
         you need.\n\n\
         ```sh\n{commands}\n```\n\n\
         To use it, copy `dist/{stem}.wasm` and `dist/{stem}.toml` into an extensions directory \
         (`aeterna ext run --extensions DIR --hook plain-text` runs it by hand). The manifest sets \
         the priority, `failure = \"closed\"`, lower limits and the `[config]` the extension reads; \
         the contract and the host's limits are in the WIT file's comments.\n",
        name = names.name,
        stem = names.stem,
        language = lang.label(),
        commands = commands(lang).replace("<stem>", &names.stem),
    )
}

/// The SDK directory: `--sdk`, or the checkout this binary was built from.
fn sdk_dir(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let sdk = match flag {
        Some(dir) => dir.to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../extensions-sdk"),
    };
    let sdk = std::fs::canonicalize(&sdk).with_context(|| {
        format!(
            "the extension SDK is not at {}; pass `--sdk DIR` with the `extensions-sdk` directory \
             of an Aeterna checkout",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "{} is not the extension SDK (no Cargo.toml); pass `--sdk DIR` with the \
             `extensions-sdk` directory of an Aeterna checkout",
            sdk.display()
        );
    }
    Ok(sdk)
}

fn write(path: &Path, text: &str, executable: bool) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_the_stem_and_the_type() {
        let names = Names::new("strip-ansi.v2");
        assert_eq!(names.stem, "strip_ansi_v2");
        assert_eq!(names.type_name, "StripAnsiV2");
        assert_eq!(Names::new("9lives").type_name, "Ext9lives");
    }
}
