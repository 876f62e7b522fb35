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
