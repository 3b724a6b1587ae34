//! TLS test helpers: a PKI made by openssl for each run, bounded runs of
//! the real clients (curl, openssl, socat), and weir configurations that
//! answer with what the TLS fetches see.

use super::tempdir;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs a command bounded by 20 s, with `stdin` as its input.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new("timeout")
        .arg("20")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut i = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = i.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = w.join();
    out
}

pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Test PKI: a CA; an ECDSA server certificate for www.example.com and
/// *.example.org (chain + key in one PEM, as HAProxy has them); a
/// self-signed RSA one for other.test; a client certificate from the CA.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn new() -> Pki {
        let dir = tempdir("tls-pki");
        let d = dir.as_path();
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "30",
                "-subj",
                "/O=weir tests/CN=weir test CA",
            ],
        );
        // Server certificate signed by the CA.
        std::fs::write(
            d.join("www.ext"),
            "subjectAltName=DNS:www.example.com,DNS:*.example.org\n",
        )
        .unwrap();
        // Client certificate.
        std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        let pki = Pki { dir };
        pki.issue("www", "/CN=www.example.com", Some("www.ext"));
        pki.issue("client", "/C=FR/O=weir/CN=client-one", Some("client.ext"));
        let d = pki.dir.as_path();
        // RSA, self-signed.
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "other.key",
                "-out",
                "other.crt",
                "-days",
                "30",
                "-subj",
                "/CN=other.test",
                "-addext",
                "subjectAltName=DNS:other.test",
            ],
        );
        let cat = |parts: &[&str], out: &str| {
            let mut all = Vec::new();
            for p in parts {
                all.extend(std::fs::read(d.join(p)).unwrap());
            }
            std::fs::write(d.join(out), all).unwrap();
        };
        std::fs::create_dir_all(d.join("certs")).unwrap();
        cat(&["www.crt", "ca.pem", "www.key"], "certs/1-www.pem");
        cat(&["other.crt", "other.key"], "certs/2-other.pem");
        pki
    }
    /// A P-256 certificate from the CA with the extensions of file `ext`
    /// (none: an X.509 version 1 certificate): `<name>.crt` and
    /// `<name>.key`.
    pub fn issue(&self, name: &str, subj: &str, ext: Option<&str>) {
        let d = self.dir.as_path();
        let (key, csr, crt) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
                "-subj",
                subj,
            ],
        );
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "30",
        ];
        args.extend(ext.into_iter().flat_map(|e| ["-extfile", e]));
        openssl(d, &args);
    }
    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
    /// An OCSP response for the `www` certificate made by `openssl ocsp`,
    /// signed by the CA: good, or revoked (keyCompromise) with `revoked`;
    /// DER.
    pub fn ocsp_response(&self, revoked: bool) -> Vec<u8> {
        let d = self.dir.as_path();
        let out = run(
            &[
                "openssl",
                "x509",
                "-in",
                &self.path("www.crt"),
                "-serial",
                "-noout",
            ],
            b"",
        );
        let serial = String::from_utf8_lossy(&out.stdout)
            .trim()
            .trim_start_matches("serial=")
            .to_string();
        // index.txt: status, expiry, revocation (date,reason), serial.
        let (state, revocation) = match revoked {
            true => ("R", "240101000000Z,keyCompromise"),
            false => ("V", ""),
        };
        std::fs::write(
            d.join("index.txt"),
            format!(
                "{state}\t351231000000Z\t{revocation}\t{serial}\tunknown\t/CN=www.example.com\n"
            ),
        )
        .unwrap();
        openssl(
            d,
            &[
                "ocsp",
                "-issuer",
                "ca.pem",
                "-cert",
                "www.crt",
                "-reqout",
                "req.der",
                "-no_nonce",
            ],
        );
        let signer = [
            "-index",
            "index.txt",
            "-rsigner",
            "ca.pem",
            "-rkey",
            "ca.key",
            "-CA",
            "ca.pem",
        ];
        let mut args = vec!["ocsp"];
        args.extend(signer);
        args.extend(["-reqin", "req.der", "-respout", "resp.der", "-ndays", "30"]);
        openssl(d, &args);
        std::fs::read(d.join("resp.der")).unwrap()
    }
}

/// `openssl s_client` to 127.0.0.1:`port` sending `name` as SNI, with
/// `extra` options and `stdin` to send: what it printed.
pub fn s_client(port: u16, name: &str, extra: &[&str], stdin: &[u8]) -> Output {
    let addr = format!("127.0.0.1:{port}");
    let mut args = vec![
        "openssl",
        "s_client",
        "-connect",
        &addr,
        "-servername",
        name,
    ];
    args.extend_from_slice(extra);
    run(&args, stdin)
}

/// curl through weir with `name` resolved to 127.0.0.1 (so SNI is sent).
pub fn curl(port: u16, name: &str, path: &str, extra: &[&str]) -> Output {
    let url = format!("https://{name}:{port}{path}");
    let resolve = format!("{name}:{port}:127.0.0.1");
    let mut args = vec!["curl", "-sS", "-k", "-v", "--resolve", &resolve];
    args.extend_from_slice(extra);
    args.push(&url);
    run(&args, b"")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A `mode http` frontend with `bind_opts` after `ssl`, answering with
/// what the TLS fetches say (or passing to `origin` when given).
pub fn tls_cfg(port: u16, bind_opts: &str, origin: Option<u16>, global: &str) -> String {
    let route = match origin {
        Some(p) => format!("    default_backend be\nbackend be\n    server o 127.0.0.1:{p}\n"),
        None => "    http-request return status 200 content-type text/plain lf-string \"sni=%[ssl_fc_sni] proto=%[ssl_fc_protocol] cipher=%[ssl_fc_cipher] alpn=%[ssl_fc_alpn] fc=%[ssl_fc] crt=%[ssl_c_used] dn=%[ssl_c_s_dn] idn=%[ssl_c_i_dn]\\n\"\n".into(),
    };
    format!(
        "global\n    nbthread 2\n{global}\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl {bind_opts}\n{route}"
    )
}

/// [`tls_cfg`] logging to `syslog_port` over UDP, with `defaults` lines
/// `extra` (a `log-format`, `option dontlognull` …).
pub fn logged_tls_cfg(port: u16, bind_opts: &str, syslog_port: u16, extra: &str) -> String {
    tls_cfg(
        port,
        bind_opts,
        None,
        &format!("    log 127.0.0.1:{syslog_port} local0\n"),
    )
    .replace(
        "    mode http\n",
        &format!("    mode http\n    log global\n{extra}"),
    )
}

/// An `openssl s_client -quiet -tls1_3` session kept open: what it prints
/// is gathered by a thread, what the test writes goes to its stdin.
pub struct SClient {
    pub stdin: std::process::ChildStdin,
    pub got: std::sync::Arc<std::sync::Mutex<String>>,
    child: std::process::Child,
}

impl SClient {
    pub fn start(port: u16, sni: &str) -> SClient {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let mut child = Command::new("openssl")
            .args(["s_client", "-quiet", "-tls1_3", "-connect"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-servername", sni])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let got = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (mut out, g2) = (child.stdout.take().unwrap(), got.clone());
        std::thread::spawn(move || {
            let mut b = [0u8; 4096];
            while let Ok(n) = out.read(&mut b) {
                if n == 0 {
                    break;
                }
                g2.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&b[..n]));
            }
        });
        let stdin = child.stdin.take().unwrap();
        SClient { stdin, got, child }
    }

    /// What it printed so far.
    pub fn text(&self) -> String {
        self.got.lock().unwrap().clone()
    }
}

impl Drop for SClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
