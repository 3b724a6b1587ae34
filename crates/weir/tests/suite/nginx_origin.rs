//! weir in front of a real origin: Debian's nginx serving static files.
//! Keep-alive on both sides, large bodies intact (checksums), HEAD, 404
//! and a missing-file case passed through unchanged.

use crate::common::http::{fnv, http_cfg, Client};
use crate::common::*;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts nginx in the foreground (one process, this user) serving `root`
/// on `port`; `None` when nginx is not installed.
fn nginx(root: &std::path::Path, port: u16) -> Option<Nginx> {
    let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let dir = tempdir("nginx-run");
    let d = dir.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
         \x20 fastcgi_temp_path {d}/fcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         \x20 keepalive_requests 10000;\n\
         \x20 server {{ listen 127.0.0.1:{port}; root {}; }}\n}}\n",
        root.display()
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new(bin)
        .args(["-c", path.to_str().unwrap(), "-p", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let n = Nginx(child);
    wait_for("nginx to listen", Duration::from_secs(10), || {
        listening(port).then_some(())
    });
    Some(n)
}

#[test]
fn static_files_through_weir_from_nginx() {
    let root = tempdir("nginx-root");
    let big = random_bytes(3 << 20, 7);
    std::fs::write(root.join("big.bin"), &big).unwrap();
    std::fs::write(root.join("small.txt"), b"hello from nginx\n").unwrap();
    let nport = free_port();
    let Some(_n) = nginx(&root, nport) else {
        panic!("nginx is not installed: tests/run installs it");
    };
    let port = free_port();
    let be = format!("    server ngx 127.0.0.1:{nport}");
    let _w = Weir::start(&http_cfg(port, "", "", &be), port);
    let mut c = Client::connect(port);
    for _ in 0..3 {
        let r = c.get("/big.bin");
        assert_eq!(r.status, 200);
        assert_eq!(r.body.len(), big.len());
        assert_eq!(fnv(&r.body), fnv(&big), "3 MiB body intact");
        let r = c.get("/small.txt");
        assert_eq!((r.status, r.text().as_str()), (200, "hello from nginx\n"));
        assert!(r.header("server").is_some_and(|s| s.starts_with("nginx")));
    }
    c.send(b"HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response("HEAD");
    assert_eq!(r.header("content-length"), Some("3145728"));
    assert!(r.body.is_empty());
    let r = c.get("/missing");
    assert_eq!(r.status, 404);
    // Still the same client connection after all of that.
    assert_eq!(c.get("/small.txt").status, 200);
}
