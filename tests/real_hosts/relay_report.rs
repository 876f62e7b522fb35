//! `baton report --relay` after a real relay (issue 34): every leg listed with why it
//! ended (each paused one paused, the last done), and no step of a leg run again by a
//! later one, read from the run's record and the real hosts' own transcripts.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::Checks;
use crate::common;
use crate::real_hosts_support::World;

/// Runs `baton report --relay --json` in the relay's project and checks it against the
/// `legs` contexts the server saw.
pub(super) fn check_relay_report(checks: &mut Checks, world: &World, legs: usize) {
    let run =
        world.run(Path::new(common::BATON), &["report", "--relay", "--json"], &[], Duration::from_secs(60));
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    let rows = report["legs"].as_array().cloned().unwrap_or_default();
    let ended: Vec<String> =
        rows.iter().map(|leg| leg["ended"]["kind"].as_str().unwrap_or("?").to_string()).collect();
    let mut expected = vec!["paused".to_string(); legs.saturating_sub(1)];
    expected.push("done".into());
    checks.check("baton report --relay lists every leg with why it ended", ended == expected, || {
        format!("{ended:?}, expected {expected:?}\n{}", run.describe())
    });
    // Factory Droid keeps only its newest figure (a sidecar), not one per reply.
    let figures_per_reply = report["host"] != "droid";
    checks.check(
        "baton report --relay: every leg's transcript read, with its calls (and its figure per reply)",
        rows.iter().all(|leg| {
            leg["tool_calls"].as_u64().is_some_and(|n| n > 0)
                && (!figures_per_reply || leg["context"].as_array().is_some_and(|c| !c.is_empty()))
                && leg["problems"].as_array().is_some_and(Vec::is_empty)
        }),
        || run.stdout.clone(),
    );
    checks.check(
        "baton report --relay: 0 repeated steps",
        report["repeated_steps"] == 0 && report["repeated_side_effects"] == 0,
        || format!("{}", report["repeated"]),
    );
    let handovers: Vec<f64> = rows.iter().filter_map(|leg| leg["hand_over_seconds"].as_f64()).collect();
    eprintln!(
        "real hosts: relay report: legs ended {ended:?}; hand-over (pause to next start) {handovers:?} s"
    );
}

/// After a relay through a fault that completed the task: `baton report --relay --json`
/// lists every leg with a known reason, one of them `fault` (`usage_limit`, `api_error`,
/// `crashed`, `interrupted`), the last `done`, and at most `redone` side-effecting steps
/// run again (a step cut off by a kill or Ctrl-C may be redone once).
pub(super) fn check_report_after_fault(checks: &mut Checks, world: &World, fault: &str, redone: u64) {
    let run =
        world.run(Path::new(common::BATON), &["report", "--relay", "--json"], &[], Duration::from_secs(60));
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    let ended: Vec<String> = report["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|leg| leg["ended"]["kind"].as_str().unwrap_or("?").to_string())
        .collect();
    checks.check(
        &format!("baton report --relay: every leg with why it ended, one at the {fault}, the last done"),
        ended.iter().any(|k| k == fault)
            && ended.last().is_some_and(|k| k == "done")
            && ended.iter().all(|k| k != "other" && k != "?"),
        || format!("{ended:?}\n{}", run.describe()),
    );
    checks.check(
        &format!("baton report --relay: at most {redone} side-effecting step(s) run again"),
        report["repeated_side_effects"].as_u64().is_some_and(|n| n <= redone),
        || format!("{}", report["repeated"]),
    );
    let waits: Vec<f64> = report["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|leg| leg["waits"].as_array().cloned().unwrap_or_default())
        .filter_map(|wait| wait["seconds"].as_f64())
        .collect();
    let handovers: Vec<f64> = report["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|leg| leg["hand_over_seconds"].as_f64())
        .collect();
    eprintln!(
        "real hosts: relay report: legs ended {ended:?}; repeated steps {}; hand-over {handovers:?} s; waits {waits:?} s",
        report["repeated_steps"]
    );
}

/// After a futile relay: `baton report --relay --json` names the futile leg, says how the
/// run ended, and repeats nothing.
pub(super) fn check_report_after_futile(checks: &mut Checks, world: &World) {
    let run =
        world.run(Path::new(common::BATON), &["report", "--relay", "--json"], &[], Duration::from_secs(60));
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    let ended: Vec<&str> = report["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|leg| leg["ended"]["kind"].as_str().unwrap_or("?"))
        .collect();
    checks.check(
        "baton report --relay names the futile leg and the run's futile end",
        ended.last() == Some(&"futile")
            && report["end"]["kind"] == "futile"
            && report["repeated_side_effects"] == 0,
        || format!("{ended:?}, end {}\n{}", report["end"], run.describe()),
    );
    eprintln!("real hosts: relay report: legs ended {ended:?}; the run {}", report["end_describe"]);
}
