//! The held-out corpus (`fixtures/heldout/`): real outputs of toolchains the matcher was never
//! tuned on, its split into `dev` and `heldout` toolchains (`SPLIT.toml`), and the message
//! form of its outputs.
//!
//! The message form is cut from the output by per-toolchain rules written from the tools'
//! formats (below), not by the matcher's own extraction as `message_without_code` does for the
//! tuned corpus: a query must not change when the matcher's recognisers change, and here they
//! may not recognise the output at all. As there, the message is the headline as a person
//! copies it, without its location (`file:line:`, ` in /path:3`, ` at x.pl line 4.`), without
//! the severity label and code (`error CS0103:`, `PHP Fatal error:`, `escript: exception
//! error:`, `Fatal error:`), and keeping exception class names (`(KeyError)`,
//! `System.NullReferenceException:`, `Uncaught TypeError:`); an assertion's message keeps its
//! expected/actual lines, joined into one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::{Described, corpus_in, descriptions_in};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/heldout")
}

/// `toolchain/class` → variant outputs (sorted by name).
pub fn corpus() -> BTreeMap<String, Vec<(String, String)>> {
    corpus_in(&root().join("outputs"))
}

/// `toolchain/class` → its description, fix and second wordings.
pub fn descriptions() -> BTreeMap<String, Described> {
    descriptions_in(&root().join("descriptions.toml"))
}

/// Whether a toolchain may be tuned on (`dev`) or is only reported (`heldout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Dev,
    Heldout,
}

impl Split {
    pub const ALL: [Split; 2] = [Split::Dev, Split::Heldout];

    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Heldout => "heldout",
        }
    }
}

/// toolchain → its split (`SPLIT.toml`).
pub fn split() -> BTreeMap<String, Split> {
    let path = root().join("SPLIT.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A headline: the line it is on (the message is the `m` group) and the lines right after it
/// that continue the message (joined to it with a space).
struct Headline {
    line: &'static str,
    more: Option<&'static str>,
}

const fn line(line: &'static str) -> Headline {
    Headline { line, more: None }
}

const fn lines(line: &'static str, more: &'static str) -> Headline {
    Headline {
        line,
        more: Some(more),
    }
}

/// How to cut the message of one toolchain's output: headline patterns in order of preference
/// (the first pattern that matches any line wins, at its first line), lines never taken
/// (warnings), and what is removed from the message (regex → replacement, applied in order).
struct Rules {
    toolchain: &'static str,
    headlines: &'static [Headline],
    skip: Option<&'static str>,
    strip: &'static [(&'static str, &'static str)],
}

const RULES: &[Rules] = &[
    Rules {
        toolchain: "ruby",
        headlines: &[
            // `config.rb:1:in `read': No such file … (Errno::ENOENT)`
            line(r"^.*?:\d+:in `[^']*': (?P<m>.+)$"),
            // `invoice.rb:12: syntax error, unexpected end-of-input`
            line(r"^\S+\.rb:\d+: (?P<m>.+)$"),
            // minitest: `TestCart#test_total [test_cart.rb:14]:` then `Expected: …`, `Actual: …`
            lines(r"^\S+#\S+ \[\S+:\d+\]:(?P<m>)$", r"^\s*\S"),
        ],
        skip: None,
        strip: &[],
    },
    Rules {
        toolchain: "csharp",
        headlines: &[
            line(r"^\S+\.cs\(\d+,\d+\): error CS\d+: (?P<m>.+)$"),
            line(r"^(?P<m>System\.[\w.]+: .+)$"),
        ],
        skip: None,
        strip: &[],
    },
    Rules {
        toolchain: "php",
        headlines: &[
            // Output printed before the error shares its line (`3 rows, PHP Fatal error: …`).
            line(r"^.*?PHP (?:Fatal|Parse) error:\s+(?P<m>.+)$"),
            line(r"^.*?PHP Warning:\s+(?P<m>.+)$"),
        ],
        skip: None,
        strip: &[
            (r" in /\S+:\d+$", ""),
            (r" in \S+ on line \d+$", ""),
            (r", called in \S+ on line \d+ and defined$", ""),
        ],
    },
    Rules {
        toolchain: "perl",
        headlines: &[
            // Test::More: `#   Failed test 'name'`, `#   at t.t line 8.`, `#  got: …`, `# expected: …`
            lines(
                r"^#\s+(?P<m>Failed test .*)$",
                r"^#\s+(?:at |got:|expected:|Structures|\$got|\$expected)",
            ),
            line(r"^(?P<m>.+ at \S+ line \d+.*)$"),
            line(r"^(?P<m>\S.*)$"),
        ],
        skip: None,
        strip: &[(r" at \S+ line \d+\.?", "")],
    },
    Rules {
        toolchain: "lua",
        headlines: &[line(r"^lua5\.4: \S+?:\d+: (?P<m>.+)$")],
        skip: None,
        strip: &[],
    },
    Rules {
        toolchain: "erlang",
        headlines: &[
            line(r"^escript: exception error: (?P<m>.+)$"),
            line(r"^\S+\.erl:\d+:\d+: (?P<m>.+)$"),
        ],
        skip: Some(r": Warning: "),
        strip: &[],
    },
    Rules {
        toolchain: "elixir",
        headlines: &[
            // ExUnit: `Assertion with == failed`, `code: …`, `left: …`, `right: …`
            lines(
                r"^\s+(?P<m>Assertion with .+)$",
                r"^\s+(?:code|left|right):",
            ),
            line(r"^\*\* (?P<m>\([\w.]+\) .+)$"),
        ],
        skip: None,
        strip: &[(r"^(\([\w.]+\)) \S+\.exs:\d+(?::\d+)?: ", "$1 ")],
    },
    Rules {
        toolchain: "ocaml",
        headlines: &[
            // `Error: This expression has type int but … of type` + `         float`
            lines(r"^Error: (?P<m>.+)$", r"^\s{2,}\S"),
            line(r"^Fatal error: (?P<m>exception .+)$"),
        ],
        skip: None,
        strip: &[],
    },
];

struct Compiled {
    headlines: Vec<(Regex, Option<Regex>)>,
    skip: Option<Regex>,
    strip: Vec<(Regex, &'static str)>,
}

static COMPILED: LazyLock<BTreeMap<&'static str, Compiled>> = LazyLock::new(|| {
    let re = |p: &str| Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    RULES
        .iter()
        .map(|rules| {
            let compiled = Compiled {
                headlines: rules
                    .headlines
                    .iter()
                    .map(|h| (re(h.line), h.more.map(re)))
                    .collect(),
                skip: rules.skip.map(re),
                strip: rules.strip.iter().map(|(p, r)| (re(p), *r)).collect(),
            };
            (rules.toolchain, compiled)
        })
        .collect()
});

/// The message of an output of `class` (`toolchain/class`) as a person copies it: see the
/// module documentation.
pub fn message(class: &str, output: &str) -> String {
    let toolchain = class.split('/').next().unwrap_or_default();
    let rules = COMPILED
        .get(toolchain)
        .unwrap_or_else(|| panic!("{toolchain}: no message rules in support/heldout.rs"));
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| !rules.skip.as_ref().is_some_and(|s| s.is_match(l)))
        .collect();
    let found = rules.headlines.iter().find_map(|(headline, more)| {
        lines.iter().enumerate().find_map(|(i, l)| {
            let m = headline
                .captures(l.trim_end())?
                .name("m")?
                .as_str()
                .to_string();
            let mut parts = vec![m];
            if let Some(more) = more {
                parts.extend(
                    lines[i + 1..]
                        .iter()
                        .take_while(|l| more.is_match(l))
                        .map(|l| l.trim().trim_start_matches('#').to_string()),
                );
            }
            Some(parts.join(" "))
        })
    });
    let mut message =
        found.unwrap_or_else(|| panic!("{class}: no headline found in the output:\n{output}"));
    for (re, replacement) in &rules.strip {
        message = re.replace_all(&message, *replacement).into_owned();
    }
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!message.is_empty(), "{class}: empty message from\n{output}");
    message
}
