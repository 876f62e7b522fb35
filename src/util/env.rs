//! The environment read in one pass: the values of a list of variables, found by walking
//! the process's environment once instead of asking for each name (every `getenv` walks
//! the whole environment again; a host's hook environment holds a hundred variables and
//! the configuration names some thirty).

use std::ffi::{CStr, OsStr, c_char};
use std::os::unix::ffi::OsStrExt;

unsafe extern "C" {
    /// The C library's environment: a NULL-terminated array of `NAME=value` strings.
    static environ: *const *const c_char;
}

/// The value of each variable in `names` that is set and valid UTF-8, in the order the
/// environment lists them (a name set twice: the first, as `getenv` gives it).
pub fn vars_named(names: &[&'static str]) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    // Most of an environment is other programs' variables: only an entry whose first
    // byte starts one of the names is compared with them.
    let mut first_bytes = [false; 256];
    for name in names {
        if let Some(&first) = name.as_bytes().first() {
            first_bytes[usize::from(first)] = true;
        }
    }
    // SAFETY: baton never changes its own environment (no `set_var` anywhere), so the
    // array and its strings stay valid and unchanged while they are read. Each entry is a
    // NUL-terminated string; the array ends with a null pointer.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let start = *entry;
            entry = entry.add(1);
            if !first_bytes[usize::from(*start as u8)] {
                continue;
            }
            let bytes = CStr::from_ptr(start).to_bytes();
            let Some(equals) = bytes.iter().position(|&b| b == b'=') else { continue };
            let (name, value) = (&bytes[..equals], &bytes[equals + 1..]);
            let Some(&wanted) = names.iter().find(|n| n.as_bytes() == name) else { continue };
            if found.iter().any(|(n, _)| *n == wanted) {
                continue;
            }
            if let Some(value) = OsStr::from_bytes(value).to_str() {
                found.push((wanted, value.to_string()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_getenv_finds() {
        // Variables every test process has, and one it does not.
        let names = ["PATH", "HOME", "BATON_UTIL_ENV_TEST_NEVER_SET"];
        let found = vars_named(&names);
        for name in names {
            let expected = std::env::var(name).ok();
            let got = found.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
            assert_eq!(got, expected, "{name}");
        }
    }
}
