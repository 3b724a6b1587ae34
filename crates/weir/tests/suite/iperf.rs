//! iperf3 (Debian) through weir in `mode tcp`, with and without splice.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

fn have_iperf3() -> bool {
    Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn iperf3_through_weir() {
    if !have_iperf3() {
        panic!("iperf3 is not installed: tests/run installs it");
    }
    let sport = free_port();
    let mut server = Command::new("iperf3")
        .args(["-s", "-B", "127.0.0.1", "-p", &sport.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("iperf3 server", Duration::from_secs(5), || {
        listening(sport).then_some(())
    });
    for extra in ["", "    option splice-auto"] {
        let port = free_port();
        let _w = Weir::start(
            &listen_cfg(port, "", extra, &format!("    server s 127.0.0.1:{sport}")),
            port,
        );
        for (p, reverse) in [("1", false), ("4", true)] {
            let mut args = vec![
                "-c",
                "127.0.0.1",
                "-p",
                &port.to_string()[..],
                "-t",
                "1",
                "-P",
                p,
                "-J",
            ]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
            if reverse {
                args.push("-R".into());
            }
            let out = Command::new("iperf3").args(&args).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "iperf3 failed ({extra}): {text}");
            let bytes: f64 = text
                .split("\"sum_received\"")
                .nth(1)
                .and_then(|s| s.split("\"bytes\":").nth(1))
                .and_then(|s| s.split([',', '\n']).next())
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0.0);
            assert!(bytes > 1e6, "iperf3 moved {bytes} bytes ({extra}, -P {p})");
        }
    }
    let _ = server.kill();
    let _ = server.wait();
}
