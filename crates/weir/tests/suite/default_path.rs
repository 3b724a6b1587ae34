//! `default-path`: relative files named by the configuration (a map, an
//! errorfile, a certificate loaded once the configuration is read) are
//! found from its directory, not from where the proxy started; weir and
//! Debian's haproxy 2.6 answer the same on the same configuration.

use crate::common::tls::{curl, text, Pki};
use crate::common::*;

fn cfg(dir: &std::path::Path, port: u16) -> String {
    format!(
        "global\n    default-path origin {}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         \x20   errorfile 503 errors/503.http\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl crt certs/1-www.pem\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"%[str(www.example.com),map(maps/hosts.map,none)]\" if {{ path /map }}\n\
         \x20   default_backend be\n\
         backend be\n    server s 127.0.0.1:1\n",
        dir.display()
    )
}

#[test]
fn relative_files_are_found_from_default_path_as_haproxy() {
    let pki = Pki::new();
    let dir = tempdir("default-path");
    std::fs::create_dir_all(dir.join("certs")).unwrap();
    std::fs::create_dir_all(dir.join("errors")).unwrap();
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::copy(pki.path("certs/1-www.pem"), dir.join("certs/1-www.pem")).unwrap();
    let page = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nfrom-file";
    std::fs::write(dir.join("errors/503.http"), page).unwrap();
    std::fs::write(dir.join("maps/hosts.map"), "www.example.com backend-www\n").unwrap();
    // The test runs elsewhere: none of the relative names is found from here.
    assert!(!std::path::Path::new("maps/hosts.map").exists());
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&dir, hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&dir, wp), wp);
    for port in [wp, hp] {
        let map = curl(port, "www.example.com", "/map", &[]);
        assert_eq!(
            String::from_utf8_lossy(&map.stdout),
            "backend-www",
            "{}",
            text(&map)
        );
        let err = curl(port, "www.example.com", "/", &[]);
        assert_eq!(
            String::from_utf8_lossy(&err.stdout),
            "from-file",
            "{}",
            text(&err)
        );
        assert!(text(&err).contains("< HTTP/1.1 503"), "{}", text(&err));
    }
}
