use super::*;
use crate::parse::{parse, Source};

fn env(_: &str) -> Option<String> {
    None
}

#[test]
fn default_path_policies_name_directories_as_haproxy() {
    let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    let p = |s: &str| DefaultPath::parse(&args(s)).unwrap();
    assert_eq!(p("current").dir("/etc/h/a.cfg"), None);
    assert_eq!(
        p("config").dir("/etc/h/a.cfg"),
        Some(PathBuf::from("/etc/h"))
    );
    assert_eq!(p("config").dir("a.cfg"), None);
    assert_eq!(p("config").dir("/a.cfg"), Some(PathBuf::from("/")));
    assert_eq!(
        p("parent").dir("/etc/h/a.cfg"),
        Some(PathBuf::from("/etc/h/.."))
    );
    assert_eq!(p("parent").dir("a.cfg"), Some(PathBuf::from("..")));
    assert_eq!(
        p("origin /srv/x").dir("/etc/h/a.cfg"),
        Some(PathBuf::from("/srv/x"))
    );
    assert!(DefaultPath::parse(&args("origin")).is_err());
    assert!(DefaultPath::parse(&args("elsewhere")).is_err());
    set_base(Some(PathBuf::from("/srv/x")));
    assert_eq!(resolve("maps/a.map"), PathBuf::from("/srv/x/maps/a.map"));
    assert_eq!(resolve("/abs/a.map"), PathBuf::from("/abs/a.map"));
    set_base(None);
    assert_eq!(resolve("maps/a.map"), PathBuf::from("maps/a.map"));
}

/// `default-path config`: a relative file named after it is read from the
/// configuration file's directory; the directory is kept for the files
/// loaded later; two files needing two directories are refused.
#[test]
fn default_path_reads_relative_files_from_the_configs_directory() {
    let dir = std::env::temp_dir().join(format!("weir-dp-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("errors")).unwrap();
    let page = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\nbusy";
    std::fs::write(dir.join("errors/503.http"), page).unwrap();
    let cfg = |name: &str, policy: &str| {
        Source {
        name: dir.join(name).display().to_string(),
        text: format!(
            "global\n  default-path {policy}\ndefaults\n  mode http\n  errorfile 503 errors/503.http\n"
        ),
    }
    };
    let p = parse(&[cfg("a.cfg", "config")], &env);
    let c = p
        .config
        .expect("the errorfile is found beside the configuration");
    assert_eq!(c.global.default_path.as_deref(), Some(dir.as_path()));
    // Without it, the same relative name is not found (from the tests' own directory).
    let p = parse(&[cfg("a.cfg", "current")], &env);
    assert!(p.config.is_none());
    let other = Source {
        name: "/nonexistent/b.cfg".into(),
        text: "global\n  default-path config\n".into(),
    };
    let p = parse(&[cfg("a.cfg", "config"), other], &env);
    let e: Vec<String> = p.diagnostics.errors().map(|d| d.to_string()).collect();
    assert!(
        e.iter().any(|m| m.contains("one 'default-path' directory")),
        "{e:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
