//! A valid component for another world (`wasi:cli/command`): the host must reject it with a
//! clear "not an Aeterna extension" error.

fn main() {
    println!("I am a command, not an extension");
}
