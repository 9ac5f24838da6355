//! Prints the signatures extracted from files (or stdin): `cargo run -p aeterna-hindsight
//! --example extract -- build.log`.

use std::io::Read;

fn main() -> anyhow::Result<()> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut inputs = Vec::new();
    if paths.is_empty() {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        inputs.push(("<stdin>".to_string(), text));
    }
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        inputs.push((path, text));
    }
    for (name, text) in inputs {
        for signature in aeterna_hindsight::extract(&text) {
            println!(
                "{name}\t{}\t{}\t{}\t{:?}\t{:?}",
                signature.language,
                signature.error_type,
                signature.message_pattern,
                signature.stack_patterns,
                signature.context_patterns
            );
        }
    }
    Ok(())
}
