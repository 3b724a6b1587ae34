//! The training workload of `tools/pgo-build` (`tools/pgo-train.py`): its
//! configuration loads, every load it drives is answered without one error
//! (a workload that failed would lay weir's code out for its error paths),
//! and weir stops on SIGTERM with status 0, as an instrumented weir must to
//! write its profile.

use crate::common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn pgo_training_workload_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempdir("pgo-training");
    let out = Command::new("python3")
        .arg(root.join("tools/pgo-train.py"))
        .arg(WEIR)
        .arg(weir_bench())
        .arg(&dir)
        .output()
        .expect("python3 runs tools/pgo-train.py");
    assert!(
        out.status.success(),
        "tools/pgo-train.py failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Every load left its figures: the last one is the TCP listener's.
    let last = std::fs::read_to_string(dir.join("load.json")).expect("load.json");
    assert!(last.contains("\"keepalive\": false"), "{last}");
}
