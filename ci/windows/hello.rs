//! The smallest Rust program that needs std's start-up (and so ProcessPrng, through the
//! HashMap below): ci/windows/setup.sh builds it for Windows and runs it under wine to prove
//! the prefix runs Rust programs.
fn main() {
    let mut seen = std::collections::HashMap::new();
    seen.insert("wine", 1);
    let profile = std::env::var("USERPROFILE").unwrap_or_default();
    println!("hello from Windows: USERPROFILE={profile}, {} entry", seen.len());
}
