//! The environment read in one pass: the values of a list of variables, found by walking
//! the process's environment once instead of asking for each name (every `getenv` walks
//! the whole environment again; a host's hook environment holds a hundred variables and
//! the configuration names some thirty).

/// The value of each variable in `names` that is set and valid UTF-8, in the order the
/// environment lists them (a name set twice: the first, as `getenv` gives it).
pub fn vars_named(names: &[&'static str]) -> Vec<(&'static str, String)> {
    crate::platform::vars_named(names)
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
