//! `aeterna ext test DIR`: runs a built extension (and any others of its extensions directory)
//! against recorded input/output pairs, so authors regression-test the component itself in the
//! real host, not only its logic natively.
//!
//! Fixtures are TOML files (`DIR/fixtures/*.toml` by default), each a list of cases run in order
//! in one session of its own, so state carries from one case to the next:
//!
//! ```toml
//! session = "fixtures"           # optional, for every case of the file (default: the file name)
//!
//! [[case]]
//! name = "colours are stripped"
//! hook = "plain-text"            # input-messages, plain-text, tag or llm-output
//! input = "\u001b[31merror\u001b[0m"
//! output = "error"               # the exact expected output
//!
//! [[case]]
//! name = "messages"
//! hook = "input-messages"
//! input = [{ role = "user", content = "hi" }]
//! output = [{ role = "user", content = "hi" }]
//!
//! [[case]]
//! name = "bad config is refused"
//! hook = "plain-text"
//! input = "x"
//! fault = "ext-error"            # a callback must fault so; `output` is then optional
//! ```
//!
//! A case fails if the output differs, if any callback faults when no `fault` is expected, or if
//! the expected fault does not happen. The last line says `N passed, M failed`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aeterna_host::{CallContext, ExtensionHost, FaultKind, Hook, HostError, Message, RunReport};
use anyhow::{Context, bail};
use serde::Deserialize;

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The extension's project directory.
    dir: PathBuf,
    /// The extensions directory to run [default: DIR/dist if it exists, else DIR].
    #[arg(long, value_name = "DIR")]
    extensions: Option<PathBuf>,
    /// A fixture file, or a directory of them [default: DIR/fixtures].
    #[arg(long, value_name = "PATH")]
    fixtures: Option<PathBuf>,
    #[command(flatten)]
    host: super::HostArgs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureFile {
    tenant: Option<String>,
    session: Option<String>,
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    hook: String,
    input: Value,
    output: Option<Value>,
    fault: Option<String>,
}

/// Text for every hook but input-messages, which takes messages.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
enum Value {
    Text(String),
    Messages(Vec<Message>),
}

pub async fn run(args: TestArgs) -> anyhow::Result<ExitCode> {
    let extensions = args.extensions.clone().unwrap_or_else(|| {
        let dist = args.dir.join("dist");
        if dist.is_dir() {
            dist
        } else {
            args.dir.clone()
        }
    });
    let fixtures = fixture_files(
        &args
            .fixtures
            .clone()
            .unwrap_or_else(|| args.dir.join("fixtures")),
    )?;
    let host = super::build_host(&args.host)?;
    let report = host
        .load_dir(&extensions)
        .await
        .with_context(|| format!("cannot load the extensions in {}", extensions.display()))?;
    if !report.rejected.is_empty() {
        let list: Vec<String> = report
            .rejected
            .iter()
            .map(|(file, error)| format!("  {}: {error}", file.display()))
            .collect();
        bail!("{} extension(s) rejected:\n{}", list.len(), list.join("\n"));
    }
    if report.loaded.is_empty() {
        bail!(
            "no extension in {}: build it first (its build puts the .wasm and its manifest there)",
            extensions.display()
        );
    }

    let (mut passed, mut failed) = (0usize, 0usize);
    for path in &fixtures {
        let file = read_fixture(path)?;
        let label = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let ctx = CallContext::new(
            file.tenant.as_deref().unwrap_or("local"),
            file.session.as_deref().unwrap_or(&label),
        );
        for case in &file.cases {
            match run_case(&host, &ctx, case).await {
                Ok(()) => {
                    passed += 1;
                    println!("ok      {label}: {}", case.name);
                }
                Err(why) => {
                    failed += 1;
                    println!("FAILED  {label}: {}\n{}", case.name, indent(&why));
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One case: `Err` says why it failed.
async fn run_case(host: &ExtensionHost, ctx: &CallContext, case: &Case) -> Result<(), String> {
    let hook: Hook = case.hook.parse()?;
    let expected_fault = case.fault.as_deref().map(parse_fault_kind).transpose()?;
    let result = match (hook, &case.input) {
        (Hook::InputMessages, Value::Messages(messages)) => host
            .run_input_messages(ctx, messages.clone())
            .await
            .map(|run| (Value::Messages(run.output), run.report)),
        (Hook::InputMessages, Value::Text(_)) => {
            return Err("input-messages takes `input = [{ role = …, content = … }]`".into());
        }
        (_, Value::Messages(_)) => {
            return Err(format!("{hook} takes text: `input = \"…\"`"));
        }
        (Hook::PlainText, Value::Text(text)) => host
            .run_plain_text(ctx, text.clone())
            .await
            .map(|run| (Value::Text(run.output), run.report)),
        (Hook::Tag, Value::Text(text)) => host
            .run_tags(ctx, text)
            .await
            .map(|run| (Value::Text(run.output), run.report)),
        (Hook::LlmOutput, Value::Text(text)) => host
            .run_llm_output(ctx, text)
            .await
            .map(|run| (Value::Text(run.output), run.report)),
    };
    let (output, report) = match result {
        Ok(done) => done,
        Err(HostError::ChainStopped(stopped)) => {
            return match expected_fault {
                Some(kind) if stopped.fault.kind == kind => Ok(()),
                _ => Err(format!("the chain stopped: {stopped}")),
            };
        }
        Err(error) => return Err(error.to_string()),
    };
    check_faults(&report, expected_fault)?;
    match &case.output {
        Some(expected) if *expected != output => Err(difference(expected, &output)),
        None if expected_fault.is_none() => {
            Err("the case has neither `output` nor `fault`: say what to expect".into())
        }
        _ => Ok(()),
    }
}

fn check_faults(report: &RunReport, expected: Option<FaultKind>) -> Result<(), String> {
    let faults: Vec<String> = report
        .faults()
        .map(|(row, fault)| format!("{}: {fault}", row.extension))
        .collect();
    match expected {
        None if faults.is_empty() => Ok(()),
        None => Err(format!("a callback faulted:\n{}", faults.join("\n"))),
        Some(kind) if report.faults().any(|(_, fault)| fault.kind == kind) => Ok(()),
        Some(kind) => Err(format!(
            "expected a `{kind}` fault; got {}",
            if faults.is_empty() {
                "none".to_owned()
            } else {
                faults.join("; ")
            }
        )),
    }
}

fn parse_fault_kind(text: &str) -> Result<FaultKind, String> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| {
        format!(
            "unknown fault `{text}`: expected trap, stack-overflow, timeout, fuel-exhausted, \
             memory-limit, ext-error, exit, invalid-output, output-limit or host"
        )
    })
}

/// Where expected and actual output first differ, line by line.
fn difference(expected: &Value, actual: &Value) -> String {
    let show = |value: &Value| match value {
        Value::Text(text) => text.clone(),
        Value::Messages(messages) => serde_json::to_string_pretty(messages).unwrap_or_default(),
    };
    let (expected, actual) = (show(expected), show(actual));
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    format!(
        "the output differs from line {}:\n--- expected\n{expected}\n--- actual\n{actual}",
        line + 1
    )
}

fn fixture_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| {
            format!(
                "cannot read the fixtures directory {} (pass `--fixtures PATH`)",
                path.display()
            )
        })?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|file| file.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no fixture files (*.toml) in {}", path.display());
    }
    Ok(files)
}

fn read_fixture(path: &Path) -> anyhow::Result<FixtureFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the fixture file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid fixture file {}", path.display()))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("        {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
