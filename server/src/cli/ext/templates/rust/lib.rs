//! {{name}}: removes trailing whitespace from every line of tool output, which the LLM would
//! otherwise pay for in tokens.

use aeterna_extension_sdk::{ExtError, Extension, Hook, Registration, export_extension, state};

pub struct {{type}};

impl Extension for {{type}} {
    fn register() -> Registration {
        Registration::new("{{name}}", env!("CARGO_PKG_VERSION")).with_hook(Hook::PlainText)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        let (trimmed, lines) = trim_lines(&text);
        if lines > 0 {
            // State survives between callbacks (per tenant and session); memory does not.
            state::update_json("trimmed", |n: &mut u64| *n += lines)?;
        }
        Ok(trimmed)
    }
}

export_extension!({{type}});

/// `text` with trailing spaces and tabs removed from each line, and how many lines changed.
pub fn trim_lines(text: &str) -> (String, u64) {
    let mut changed = 0;
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| {
            let trimmed = line.trim_end_matches([' ', '\t']);
            changed += u64::from(trimmed.len() != line.len());
            trimmed
        })
        .collect();
    (lines.join("\n"), changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aeterna_extension_sdk::testing::TestHost;

    #[test]
    fn trailing_whitespace_goes_and_is_counted() {
        let host = TestHost::new();
        let out = host
            .plain_text::<{{type}}>("error: x   \nwarning: y\t\nok\n")
            .unwrap();
        assert_eq!(out, "error: x\nwarning: y\nok\n");
        assert_eq!(host.state_json::<u64>("trimmed"), Some(2));
    }
}
