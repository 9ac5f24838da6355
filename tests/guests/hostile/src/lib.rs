//! A hostile extension: what it does is picked by the manifest's `[config] mode`.
//!
//! Every mode first writes the state key `before-fault`, so tests can assert that a faulting
//! callback's writes are discarded. It handles `plain-text` and `llm-output`.
//!
//! | mode | behaviour |
//! |---|---|
//! | `loop` | spins forever (stopped by fuel, or by the epoch deadline when fuel is huge) |
//! | `memory-bomb` | allocates until the memory cap refuses to grow |
//! | `recursion` | recurses without end (stack overflow) |
//! | `stdout-flood` | prints 1 MiB to stdout and 1 MiB to stderr, then returns `ok` |
//! | `log-flood` | logs 1 MiB through `host.log`, then returns `ok` |
//! | `state-abuse` | an oversized value, an invalid key, then 2 MiB of 100 KiB values; returns a summary |
//! | `panic` | panics |
//! | `ext-error` | returns an `ext-error` |
//! | `huge-error` | returns an `ext-error` with a 4 MiB message |
//! | `register-panic` | panics in `register()` (the host must reject it at load) |
//! | `log-empty` | calls `host.log` with an empty message a million times |
//! | `record-flood` | 100 000 one-byte `host.log` calls and 70 000 one-byte stdout lines |
//! | `state-churn` | sets and deletes distinct 1 KiB keys, `[config] iterations` times (default: until stopped) |
//! | `big-tag` | handles tag `big`: returns `[config] kib` KiB (default 1024) for each block |
//! | `message-flood` | on `input-messages`, returns 500 000 empty messages |
//! | `exit` | calls `exit(3)` |
//! | `bad-utf8` | returns a string that is not UTF-8 |
//! | `bad-pointer` | returns a string whose pointer lies outside its memory |
//! | `big-random` | asks `wasi:random` for 64 MiB |
//! | `bad-log-pointer` | passes `host.log` a string pointer and length outside its memory |
//! | anything else | returns the text unchanged |

wit_bindgen::generate!({ path: "../../../wit", world: "extension" });

/// `wasi:random`, imported directly, to ask for more than the host allows.
mod wasi_random {
    wit_bindgen::generate!({
        inline: "
            package wasi:random@0.2.0;
            interface random {
                get-random-bytes: func(len: u64) -> list<u8>;
                get-random-u64: func() -> u64;
            }
            world entropy {
                import random;
            }
        ",
    });
}

use std::hint::black_box;

use aeterna::extension::host::{self, LogLevel};
use aeterna::extension::state::{self, StateError};
use aeterna::extension::types::{Hook, ToolConfig};

struct Hostile;

fn mode() -> String {
    host::config()
        .into_iter()
        .find(|(k, _)| k == "mode")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

#[inline(never)]
fn recurse(depth: u64, trail: &mut [u64; 16]) -> u64 {
    // A frame with live locals that the optimiser cannot turn into a loop.
    if depth == u64::MAX {
        return 0;
    }
    let mut local = [depth; 16];
    local[(depth % 16) as usize] ^= trail[(depth % 16) as usize];
    black_box(&mut local);
    recurse(black_box(depth + 1), &mut local) ^ local[0]
}

fn state_abuse() -> String {
    let mut report = Vec::new();
    match state::set("too-big", &vec![0u8; 2 * 1024 * 1024]) {
        Err(StateError::QuotaExceeded(usage)) => report.push(format!(
            "oversized=quota-exceeded({}/{})",
            usage.used_bytes, usage.quota_bytes
        )),
        Err(StateError::InvalidKey(why)) => report.push(format!("oversized=invalid-key({why})")),
        Ok(()) => report.push("oversized=accepted".into()),
    }
    match state::set("", b"x") {
        Err(StateError::InvalidKey(_)) => report.push("empty-key=invalid-key".into()),
        other => report.push(format!("empty-key={}", other.is_ok())),
    }
    match state::set(&"k".repeat(1025), b"x") {
        Err(StateError::InvalidKey(_)) => report.push("long-key=invalid-key".into()),
        other => report.push(format!("long-key={}", other.is_ok())),
    }
    let mut failures = 0;
    for i in 0..20 {
        if state::set(&format!("chunk-{i:02}"), &vec![i as u8; 100 * 1024]).is_err() {
            failures += 1;
        }
    }
    let usage = state::usage();
    let first_survivor = (0..20).find(|i| state::get(&format!("chunk-{i:02}")).is_some());
    report.push(format!("set-failures={failures}"));
    report.push(format!(
        "used={} quota={} keys={}",
        usage.used_bytes, usage.quota_bytes, usage.keys
    ));
    report.push(format!(
        "oldest-chunk={}",
        first_survivor.map_or(-1, |i| i as i64)
    ));
    report.join(" ")
}

fn config_number(key: &str) -> Option<u64> {
    host::config()
        .into_iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.parse().ok())
}

/// A `String` whose bytes are not UTF-8, as a broken guest could return.
fn not_utf8() -> String {
    // SAFETY: deliberately broken for the host to catch; this guest never reads it itself.
    unsafe { String::from_utf8_unchecked(vec![b'o', b'k', 0xff, 0xfe]) }
}

/// A `String` pointing outside linear memory (2 GiB, past any memory the host allows).
fn out_of_bounds() -> String {
    // SAFETY: never read or freed by this guest; the host must refuse it while lifting.
    unsafe { String::from_raw_parts(0x7fff_0000 as *mut u8, 16, 16) }
}

fn act(text: String) -> Result<String, ExtError> {
    state::set("before-fault", b"this write must be discarded").ok();
    match mode().as_str() {
        "loop" => {
            let mut counter: u64 = 0;
            loop {
                counter = black_box(counter.wrapping_add(1));
            }
        }
        "memory-bomb" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                let mut block = vec![0u8; 1024 * 1024];
                block[0] = hoard.len() as u8; // touch it, so it is really allocated
                hoard.push(black_box(block));
            }
        }
        "recursion" => Ok(recurse(0, &mut [0; 16]).to_string()),
        "stdout-flood" => {
            let line = "x".repeat(1023);
            for _ in 0..1024 {
                println!("{line}");
                eprintln!("{line}");
            }
            Ok(format!("{text}[flooded]"))
        }
        "log-flood" => {
            let line = "y".repeat(1024);
            for _ in 0..1024 {
                host::log(LogLevel::Info, &line);
            }
            Ok(format!("{text}[logged]"))
        }
        "state-abuse" => {
            state::delete("before-fault");
            Ok(state_abuse())
        }
        "panic" => panic!("hostile extension panics on purpose"),
        "ext-error" => Err(ExtError {
            code: "hostile".into(),
            message: "refusing on purpose".into(),
        }),
        "huge-error" => Err(ExtError {
            code: "c".repeat(1024),
            message: "m".repeat(4 * 1024 * 1024),
        }),
        "log-empty" => {
            for _ in 0..1_000_000 {
                host::log(LogLevel::Error, "");
            }
            Ok(format!("{text}[logged]"))
        }
        "record-flood" => {
            for _ in 0..100_000 {
                host::log(LogLevel::Info, "x");
            }
            for _ in 0..70_000 {
                println!("y");
            }
            Ok(format!("{text}[flooded]"))
        }
        "state-churn" => {
            state::delete("before-fault");
            let value = [7u8; 16];
            let iterations = config_number("iterations").unwrap_or(u64::MAX);
            let mut i = 0u64;
            while i < iterations {
                // Distinct keys of the longest size allowed, 1 KiB.
                let key = format!("{i:0>1024}");
                state::set(&key, &value).expect("one key fits the quota");
                state::delete(&key);
                i += 1;
            }
            Ok(format!("{text}[churned:{i}]"))
        }
        "exit" => std::process::exit(3),
        "bad-utf8" => Ok(not_utf8()),
        "bad-pointer" => Ok(out_of_bounds()),
        "big-random" => {
            let bytes = wasi_random::wasi::random::random::get_random_bytes(64 * 1024 * 1024);
            Ok(format!("{text}[{} random bytes]", bytes.len()))
        }
        "bad-log-pointer" => {
            // SAFETY: never read by this guest; the host must refuse it while lifting.
            let message = unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                    0x100 as *const u8,
                    100 * 1024 * 1024,
                ))
            };
            host::log(LogLevel::Info, message);
            Ok(text)
        }
        _ => Ok(text),
    }
}

impl Guest for Hostile {
    fn register() -> Registration {
        let mode = mode();
        if mode == "register-panic" {
            panic!("hostile register() panics");
        }
        let (hooks, tags) = match mode.as_str() {
            "big-tag" => (vec![Hook::Tag], vec!["big".to_owned()]),
            "message-flood" => (vec![Hook::InputMessages], vec![]),
            _ => (vec![Hook::PlainText, Hook::LlmOutput], vec![]),
        };
        Registration {
            id: "hostile".into(),
            version: "0.0.1".into(),
            priority: 0,
            hooks,
            tags,
            prompt_additions: vec![],
            tool_config: ToolConfig {
                add: vec![],
                remove: vec![],
                override_: vec![],
            },
        }
    }

    fn on_input_messages(messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        if mode() == "message-flood" {
            let empty = Message {
                role: String::new(),
                content: String::new(),
            };
            return Ok(vec![empty; 500_000]);
        }
        Ok(messages)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        act(text)
    }

    fn on_tag(
        _tag: String,
        _attributes: Vec<Attribute>,
        content: String,
    ) -> Result<String, ExtError> {
        if mode() == "big-tag" {
            let kib = config_number("kib").unwrap_or(1024) as usize;
            return Ok("z".repeat(kib * 1024));
        }
        Ok(content)
    }

    fn on_llm_output(text: String) -> Result<String, ExtError> {
        act(text)
    }
}

export!(Hostile);
