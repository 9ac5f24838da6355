//! `sqlx::migrate!` embeds `../migrations/sqlite` at compile time; rebuild when it changes
//! (new files from any crate's migrations included).

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
