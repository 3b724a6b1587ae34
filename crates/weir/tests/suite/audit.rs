//! A TLS audit of weir's `bind … ssl` with Debian's testssl.sh: every
//! vulnerability check (`-U`) against an ECDSA and an RSA certificate must
//! come back OK (or INFO); none may be flagged. Fails saying so where
//! testssl is not installed (`tests/run` installs it). Named `audit` so that
//! its half minute starts first in the suite, beside the others.

use crate::common::*;
use std::process::Command;

fn testssl() -> Option<&'static str> {
    ["/usr/bin/testssl", "/usr/bin/testssl.sh"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// `(id, severity)` of each finding in testssl's flat JSON output.
fn findings(json: &str) -> Vec<(String, String)> {
    let field = |obj: &str, key: &str| -> Option<String> {
        let at = obj.find(&format!("\"{key}\""))?;
        let rest = &obj[at + key.len() + 2..];
        let start = rest.find('"')? + 1;
        let end = rest[start..].find('"')? + start;
        Some(rest[start..end].to_string())
    };
    json.split('{')
        .filter_map(|obj| Some((field(obj, "id")?, field(obj, "severity")?)))
        .collect()
}

#[test]
fn testssl_flags_no_vulnerability() {
    let Some(bin) = testssl() else {
        panic!("testssl is not installed: tests/run installs it (Debian's testssl.sh)");
    };
    let dir = tempdir("tls-audit");
    for (name, key) in [
        ("ecdsa", "ec -pkeyopt ec_paramgen_curve:P-256"),
        ("rsa", "rsa:2048"),
    ] {
        let (k, c) = (
            dir.join(format!("{name}.key")),
            dir.join(format!("{name}.crt")),
        );
        let mut args = vec![
            "req",
            "-x509",
            "-nodes",
            "-days",
            "30",
            "-subj",
            "/CN=audit.test",
        ];
        let (kind, opts) = key.split_once(' ').unwrap_or((key, ""));
        args.extend(["-newkey", kind]);
        args.extend(opts.split_whitespace());
        let (ks, cs) = (
            k.to_string_lossy().into_owned(),
            c.to_string_lossy().into_owned(),
        );
        args.extend(["-keyout", &ks, "-out", &cs]);
        let out = Command::new("openssl")
            .args(&args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pem = std::fs::read(&c).unwrap();
        pem.extend(std::fs::read(&k).unwrap());
        std::fs::write(dir.join(format!("{name}.pem")), pem).unwrap();

        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port} ssl crt {}\n    http-request return status 200 content-type text/plain string ok\n",
            dir.join(format!("{name}.pem")).display()
        );
        let _w = Weir::start(&cfg, port);
        let json = dir.join(format!("{name}.json"));
        let _ = std::fs::remove_file(&json);
        let out = Command::new("timeout")
            .args([
                "300",
                bin,
                "--quiet",
                "--color",
                "0",
                "--warnings",
                "off",
                "-U",
                "--jsonfile",
            ])
            .arg(&json)
            .arg(format!("127.0.0.1:{port}"))
            .output()
            .expect("testssl");
        let text = std::fs::read_to_string(&json).unwrap_or_default();
        let found = findings(&text);
        assert!(
            found.len() >= 15,
            "{name}: testssl ran its checks ({} findings): {}",
            found.len(),
            String::from_utf8_lossy(&out.stdout)
        );
        let flagged: Vec<&(String, String)> = found
            .iter()
            .filter(|(id, sev)| !matches!(sev.as_str(), "OK" | "INFO") && id != "scanTime")
            .collect();
        assert!(
            flagged.is_empty(),
            "{name}: flagged {flagged:?}\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        for id in [
            "heartbleed",
            "CCS",
            "ROBOT",
            "POODLE_SSL",
            "SWEET32",
            "BEAST",
            "LUCKY13",
            "RC4",
        ] {
            assert!(
                found.iter().any(|(i, _)| i == id),
                "{name}: {id} was checked"
            );
        }
    }
}
