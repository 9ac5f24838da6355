//! Runs real compilers and interpreters on snippets of the corpus now, in a fresh directory
//! with another name than the one the committed output came from, and checks that the
//! signatures equal those of the committed output: normalisation removes what differs from
//! run to run (temp paths, addresses, thread ids), and the committed fixtures still describe
//! what the tools print. A missing tool skips its case with a message.
//!
//! The held-out corpus (`fixtures/heldout/`) has one case per toolchain. Its tools (Ruby, mcs,
//! PHP, Lua, escript, Elixir, OCaml; Perl is everywhere) are only needed to generate it and
//! are not on CI machines, so those cases skip there; where a tool is installed, the fresh
//! run must give the committed signatures (none, where the matcher recognises nothing in that
//! format yet) and the committed message query (`support::heldout::message`).

mod support;

use std::path::Path;
use std::process::Command;

use aeterna_hindsight::extract;

struct Case {
    snippet: &'static str,
    tool: &'static str,
    /// Commands run in order in the work dir; `{src}` is the snippet's file name.
    steps: &'static [&'static [&'static str]],
}

const CASES: &[Case] = &[
    Case {
        snippet: "rust/E0382-use-after-move/queue.rs",
        tool: "rustc",
        steps: &[&["rustc", "--edition", "2021", "{src}", "-o", "prog"]],
    },
    Case {
        snippet: "rust/panic-index-out-of-bounds/ring.rs",
        tool: "rustc",
        steps: &[
            &["rustc", "--edition", "2021", "{src}", "-o", "prog"],
            &["./prog"],
        ],
    },
    Case {
        snippet: "python/AttributeError-none/users.py",
        tool: "python3",
        steps: &[&["python3", "{src}"]],
    },
    Case {
        snippet: "python/multi/chained.py",
        tool: "python3",
        steps: &[&["python3", "{src}"]],
    },
    Case {
        snippet: "node/TypeError-read-undefined/orders.js",
        tool: "node",
        steps: &[&["node", "{src}"]],
    },
    Case {
        snippet: "gcc/undefined-reference/render.c",
        tool: "gcc",
        steps: &[&["gcc", "-Wall", "{src}", "-o", "prog"]],
    },
    Case {
        snippet: "java/cannot-find-symbol/Router.java",
        tool: "javac",
        steps: &[&["javac", "-d", "classes", "{src}"]],
    },
    Case {
        snippet: "java/NullPointerException/Cache.java",
        tool: "javac",
        steps: &[
            &["javac", "-d", "classes", "{src}"],
            &["java", "-cp", "classes", "Cache"],
        ],
    },
    Case {
        snippet: "go/panic-nil-map/config.go",
        tool: "go",
        steps: &[&["go", "run", "{src}"]],
    },
    Case {
        snippet: "shell/command-not-found/lint.bash",
        tool: "bash",
        steps: &[&["bash", "{src}"]],
    },
];

fn available(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One case per held-out toolchain (snippets under `fixtures/heldout/snippets/`), run as
/// `fixtures/generate.py --corpus heldout` runs them.
const HELDOUT_CASES: &[Case] = &[
    Case {
        snippet: "ruby/NoMethodError-nil/users.rb",
        tool: "ruby",
        steps: &[&["ruby", "{src}"]],
    },
    Case {
        snippet: "csharp/NullReferenceException/Config.cs",
        tool: "mcs",
        steps: &[&["mcs", "{src}", "-out:prog.exe"], &["mono", "prog.exe"]],
    },
    Case {
        snippet: "php/null-member-call/orders.php",
        tool: "php",
        steps: &[&["php", "{src}"]],
    },
    Case {
        snippet: "perl/undef-method-call/db.pl",
        tool: "perl",
        steps: &[&["perl", "{src}"]],
    },
    Case {
        snippet: "lua/index-nil/users.lua",
        tool: "lua5.4",
        steps: &[&["lua5.4", "{src}"]],
    },
    Case {
        snippet: "erlang/badmatch/config.erl",
        tool: "escript",
        steps: &[&["escript", "{src}"]],
    },
    Case {
        snippet: "elixir/KeyError/settings.exs",
        tool: "elixir",
        steps: &[&["elixir", "{src}"]],
    },
    Case {
        snippet: "ocaml/Not_found/prices.ml",
        tool: "ocamlc",
        steps: &[&["ocamlc", "-g", "{src}", "-o", "prog"], &["./prog"]],
    },
];

fn run(case: &Case, snippets: &Path) -> String {
    let source = snippets.join(case.snippet);
    let work = tempfile::Builder::new()
        .prefix("live-run-")
        .tempdir()
        .expect("temp dir");
    let name = source
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .to_string();
    std::fs::copy(&source, work.path().join(&name)).expect("copy snippet");
    let mut output = String::new();
    for step in case.steps {
        let argv: Vec<String> = step.iter().map(|a| a.replace("{src}", &name)).collect();
        let done = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(work.path())
            .env("GOCACHE", work.path().join("gocache"))
            .env("GOPATH", work.path().join("gopath"))
            .env("GO111MODULE", "off")
            .env("RUST_BACKTRACE", "0")
            .env("LC_ALL", "C.UTF-8")
            .env("OCAMLRUNPARAM", "b")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", argv[0]));
        output.push_str(&String::from_utf8_lossy(&done.stdout));
        output.push_str(&String::from_utf8_lossy(&done.stderr));
        if !done.status.success() {
            break;
        }
    }
    output
}

#[test]
fn fresh_runs_give_the_committed_signatures() {
    let mut checked = 0;
    for case in CASES {
        if !available(case.tool) {
            eprintln!(
                "skipping {}: `{}` is not installed",
                case.snippet, case.tool
            );
            continue;
        }
        let committed_path = case
            .snippet
            .rsplit_once('.')
            .expect("extension")
            .0
            .to_string()
            + ".txt";
        let committed = extract(&support::fixture(&committed_path));
        let snippets = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/snippets");
        let fresh = extract(&run(case, &snippets));
        let key = |s: &aeterna_hindsight::ErrorSignature| {
            (s.language, s.error_type.clone(), s.message_pattern.clone())
        };
        assert!(
            !fresh.is_empty(),
            "{}: the tool reported no error",
            case.snippet
        );
        assert_eq!(
            fresh.iter().map(key).collect::<Vec<_>>(),
            committed.iter().map(key).collect::<Vec<_>>(),
            "{}",
            case.snippet
        );
        assert_eq!(
            fresh.iter().map(|s| s.fingerprint()).collect::<Vec<_>>(),
            committed
                .iter()
                .map(|s| s.fingerprint())
                .collect::<Vec<_>>()
        );
        checked += 1;
    }
    eprintln!("{checked} of {} live cases checked", CASES.len());
}

#[test]
fn fresh_runs_of_the_heldout_toolchains_give_the_committed_signatures_and_messages() {
    let root = support::heldout::root();
    let mut checked = 0;
    for case in HELDOUT_CASES {
        if !available(case.tool) {
            eprintln!(
                "skipping heldout {}: `{}` is not installed",
                case.snippet, case.tool
            );
            continue;
        }
        let stem = case.snippet.rsplit_once('.').expect("extension").0;
        let committed_path = root.join("outputs").join(format!("{stem}.txt"));
        let committed = std::fs::read_to_string(&committed_path)
            .unwrap_or_else(|e| panic!("{}: {e}", committed_path.display()));
        let fresh = run(case, &root.join("snippets"));
        let class = stem.rsplit_once('/').expect("class/variant").0;
        assert_eq!(
            support::heldout::message(class, &fresh),
            support::heldout::message(class, &committed),
            "{}",
            case.snippet
        );
        let key = |s: &aeterna_hindsight::ErrorSignature| {
            (
                s.language,
                s.error_type.clone(),
                s.message_pattern.clone(),
                s.fingerprint(),
            )
        };
        assert_eq!(
            extract(&fresh).iter().map(key).collect::<Vec<_>>(),
            extract(&committed).iter().map(key).collect::<Vec<_>>(),
            "{}",
            case.snippet
        );
        checked += 1;
    }
    eprintln!(
        "{checked} of {} heldout live cases checked",
        HELDOUT_CASES.len()
    );
}
