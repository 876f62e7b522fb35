//! The doctor's report: each check's verdict, its line and its fix, for people
//! ([`render`]) and machines ([`to_json`]).

use serde::Serialize;
use serde_json::json;

use crate::install::hosts::Host;

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub status: Status,
    pub check: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub(super) fn new(status: Status, check: &str, message: impl Into<String>, fix: Option<String>) -> Check {
        Check { status, check: check.to_string(), message: message.into(), fix }
    }
}

/// The report for people.
pub fn render(checks: &[Check]) -> String {
    let width = checks.iter().map(|c| c.check.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for check in checks {
        let status = match check.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        out.push_str(&format!("{status:<4}  {:<width$}  {}\n", check.check, check.message));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
        }
    }
    let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
    out.push_str(&match (fails, warns) {
        (0, 0) => "\nall checks passed\n".to_string(),
        (0, w) => format!("\nno failures, {w} warning(s)\n"),
        (f, w) => format!("\n{f} failure(s), {w} warning(s)\n"),
    });
    out
}

/// The report for machines: whether it passed, the hosts checked, every check.
pub fn to_json(hosts: &[Host], checks: &[Check]) -> String {
    let failed = checks.iter().any(|c| c.status == Status::Fail);
    let hosts: Vec<&str> = hosts.iter().map(|h| h.id()).collect();
    let report = json!({"ok": !failed, "hosts": hosts, "checks": checks});
    serde_json::to_string_pretty(&report).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_fixes_under_their_line() {
        let text = render(&[
            Check::new(Status::Ok, "a", "fine", None),
            Check::new(Status::Fail, "longer", "broken", Some("do this".into())),
        ]);
        assert_eq!(
            text,
            "ok    a       fine\nFAIL  longer  broken\n              fix: do this\n\n1 failure(s), 0 warning(s)\n"
        );
    }
}
