use super::*;

fn row(kind: u32, px: &str, sv: &str, f: &[(&str, &str)]) -> Row {
    let mut r = Row::new();
    r.set("pxname", px).set("svname", sv).set("type", kind);
    for (k, v) in f {
        r.set(k, v);
    }
    r
}

fn sample() -> Vec<Row> {
    vec![
        row(
            0,
            "fe",
            "FRONTEND",
            &[
                ("status", "OPEN"),
                ("scur", "3"),
                ("req_tot", "10"),
                ("hrsp_2xx", "9"),
                ("hrsp_4xx", "1"),
            ],
        ),
        row(
            2,
            "be",
            "s\"1",
            &[
                ("status", "UP 1/3"),
                ("stot", "7"),
                ("check_status", "L7OK"),
                ("check_duration", "12"),
            ],
        ),
        row(2, "be", "s2", &[("status", "MAINT"), ("stot", "")]),
        row(1, "be", "BACKEND", &[("status", "DOWN"), ("qtime", "250")]),
    ]
}

#[test]
fn metrics_carry_haproxy_names_labels_and_types() {
    let info = |f: &str| (f == "Nbthread").then(|| "2".to_string());
    let t = render(&info, "0.1.0", &sample(), Scope::parse("").unwrap());
    assert!(
        t.contains("# TYPE haproxy_process_nbthread gauge\nhaproxy_process_nbthread 2\n"),
        "{t}"
    );
    assert!(
        !t.contains("haproxy_process_uptime_seconds"),
        "no value, no metric"
    );
    assert!(t.contains("haproxy_process_build_info{version=\"0.1.0\"} 1\n"));
    assert!(t.contains("haproxy_frontend_status{proxy=\"fe\",state=\"UP\"} 1\n"));
    assert!(t.contains("haproxy_frontend_current_sessions{proxy=\"fe\"} 3\n"));
    assert!(t.contains("# TYPE haproxy_frontend_http_requests_total counter\n"));
    assert!(t.contains("haproxy_frontend_http_responses_total{proxy=\"fe\",code=\"4xx\"} 1\n"));
    assert!(t.contains("haproxy_backend_status{proxy=\"be\",state=\"DOWN\"} 1\n"));
    assert!(t.contains("haproxy_backend_queue_time_average_seconds{proxy=\"be\"} 0.250000\n"));
    assert!(
        t.contains("haproxy_server_status{proxy=\"be\",server=\"s\\\"1\",state=\"UP\"} 1\n"),
        "{t}"
    );
    assert!(t.contains("haproxy_server_status{proxy=\"be\",server=\"s2\",state=\"MAINT\"} 1\n"));
    assert!(t.contains(
        "haproxy_server_check_status{proxy=\"be\",server=\"s\\\"1\",state=\"L7OK\"} 1\n"
    ));
    assert!(
        !t.contains("server=\"s2\",state=\"L7OK\""),
        "no check, no check status"
    );
    assert!(t.contains(
        "haproxy_server_check_duration_seconds{proxy=\"be\",server=\"s\\\"1\"} 0.012000\n"
    ));
    assert!(
        !t.contains("haproxy_server_sessions_total{proxy=\"be\",server=\"s2\"}"),
        "empty column"
    );
    // Each family once, its samples together.
    let families: Vec<&str> = t.lines().filter(|l| l.starts_with("# TYPE ")).collect();
    let mut uniq = families.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(families.len(), uniq.len());
}

#[test]
fn scopes_select_objects() {
    let none = |_: &str| None;
    let t = render(
        &none,
        "v",
        &sample(),
        Scope::parse("scope=frontend&scope=backend").unwrap(),
    );
    assert!(t.contains("haproxy_frontend_") && t.contains("haproxy_backend_"));
    assert!(!t.contains("haproxy_server_") && !t.contains("haproxy_process_"));
    assert_eq!(
        render(&none, "v", &sample(), Scope::parse("scope=").unwrap()),
        ""
    );
    assert_eq!(Scope::parse("scope=bogus"), None);
    assert_eq!(Scope::parse("scope"), None);
    assert_eq!(Scope::parse("x=1").map(|s| s.server), Some(true));
}

#[test]
fn stick_tables_as_haproxy_exports_them() {
    let t = render_tables(&[("b2", "string", 10, 0), ("be", "ip", 1 << 20, 3)]);
    assert_eq!(
        t,
        "# HELP haproxy_sticktable_size Stick table size.\n# TYPE haproxy_sticktable_size gauge\n\
         haproxy_sticktable_size{name=\"b2\",type=\"string\"} 10\n\
         haproxy_sticktable_size{name=\"be\",type=\"ip\"} 1048576\n\
         # HELP haproxy_sticktable_used Number of entries used in this stick table.\n# TYPE haproxy_sticktable_used gauge\n\
         haproxy_sticktable_used{name=\"b2\",type=\"string\"} 0\n\
         haproxy_sticktable_used{name=\"be\",type=\"ip\"} 3\n"
    );
    assert_eq!(render_tables(&[]), "");
    assert!(Scope::parse("scope=sticktable").is_some_and(|s| s.sticktable && !s.server));
}

#[test]
fn listeners_as_haproxy_exports_them() {
    let mut rows = sample();
    rows.push(row(
        3,
        "fe",
        "sock-1",
        &[("status", "OPEN"), ("scur", "1"), ("dcon", "2")],
    ));
    let none = |_: &str| None;
    let t = render(&none, "v", &rows, Scope::parse("scope=listener").unwrap());
    assert!(
        t.contains("haproxy_listener_current_sessions{proxy=\"fe\",listener=\"sock-1\"} 1\n"),
        "{t}"
    );
    assert!(t.contains(
        "haproxy_listener_denied_connections_total{proxy=\"fe\",listener=\"sock-1\"} 2\n"
    ));
    assert!(t.contains(
        "haproxy_listener_status{proxy=\"fe\",listener=\"sock-1\",state=\"WAITING\"} 0\n"
    ));
    assert!(
        t.contains("haproxy_listener_status{proxy=\"fe\",listener=\"sock-1\",state=\"OPEN\"} 1\n")
    );
    assert!(!t.contains("haproxy_frontend_"));
    let t = render(&none, "v", &rows, Scope::parse("scope=frontend").unwrap());
    assert!(!t.contains("haproxy_listener_"));
}

#[test]
fn figures_that_do_not_apply_are_nan_as_in_haproxy() {
    let rows = vec![
        row(
            2,
            "be",
            "s1",
            &[
                ("status", "UP"),
                ("chkfail", ""),
                ("qlimit", ""),
                ("src_ilim", ""),
            ],
        ),
        row(
            2,
            "be",
            "s2",
            &[
                ("status", "UP"),
                ("chkfail", "0"),
                ("qlimit", "10"),
                ("src_ilim", "42"),
            ],
        ),
    ];
    let t = render(&|_| None, "v", &rows, Scope::parse("scope=server").unwrap());
    for want in [
        "haproxy_server_check_failures_total{proxy=\"be\",server=\"s1\"} NaN\n",
        "haproxy_server_check_failures_total{proxy=\"be\",server=\"s2\"} 0\n",
        "haproxy_server_queue_limit{proxy=\"be\",server=\"s1\"} NaN\n",
        "haproxy_server_queue_limit{proxy=\"be\",server=\"s2\"} 10\n",
        "haproxy_server_idle_connections_limit{proxy=\"be\",server=\"s2\"} 42\n",
    ] {
        assert!(t.contains(want), "{want} in {t}");
    }
}
