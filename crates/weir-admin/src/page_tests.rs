use super::*;

fn row(px: &str, sv: &str, status: &str, bck: &str) -> Row {
    let kind = match sv {
        "FRONTEND" => 0,
        "BACKEND" => 1,
        _ => 2,
    };
    let mut r = Row::new();
    r.set("pxname", px)
        .set("svname", sv)
        .set("status", status)
        .set("bck", bck)
        .set("stot", 7)
        .set("type", kind);
    r
}

#[test]
fn requests_and_forms_parse() {
    let r = PageRequest::parse(";up;norefresh;st=DONE");
    assert!(r.up && r.norefresh && !r.csv);
    assert_eq!(r.status.as_deref(), Some("DONE"));
    assert!(PageRequest::parse(";csv?x").csv);
    let f = PageForm::parse(b"s=web%201&s=w2&action=maint&b=be").unwrap();
    assert_eq!(f.servers, ["web 1", "w2"]);
    assert_eq!((f.backend.as_str(), f.action), ("be", PageAction::Maint));
    assert_eq!(PageForm::parse(b"action=ready&b=be"), Err("NONE"));
    assert_eq!(PageForm::parse(b"s=a&action=explode&b=be"), Err("UNKN"));
    assert_eq!(PageForm::parse(b"s=a&action=ready"), Err("ERRP"));
    assert_eq!(
        PageForm::parse(b"s=%&b=%zz&action=drain").map(|f| f.backend),
        Ok("%zz".into())
    );
    assert_eq!(PageForm::parse(&[0xff, b'='][..]), Err("ERRP"));
}

#[test]
fn rows_get_their_state_colours() {
    assert_eq!(row_class(&row("b", "s", "UP", "0")), "active_up");
    assert_eq!(
        row_class(&row("b", "s", "UP 1/3", "0")),
        "active_going_down"
    );
    assert_eq!(
        row_class(&row("b", "s", "DOWN 1/2", "0")),
        "active_going_up"
    );
    assert_eq!(row_class(&row("b", "s", "DOWN", "1")), "backup_down");
    assert_eq!(row_class(&row("b", "s", "MAINT", "0")), "maintain");
    assert_eq!(row_class(&row("b", "s", "DRAIN", "0")), "draining");
    assert_eq!(
        row_class(&row("b", "s", "no check", "0")),
        "active_no_check"
    );
}

#[test]
fn the_page_has_one_table_per_proxy_and_escapes() {
    let rows = vec![
        row("fe", "FRONTEND", "OPEN", ""),
        row("be", "s<1>", "UP", "0"),
        row("be", "s2", "DOWN", "0"),
        row("be", "BACKEND", "UP", "0"),
    ];
    let info = PageInfo {
        uri: "/stats".into(),
        pid: 42,
        refresh_secs: Some(5),
        admin: true,
        notice: Some("The action was applied."),
        ..PageInfo::default()
    };
    let t = html(&info, &rows, &PageRequest::default());
    assert_eq!(t.matches("<table class=\"tbl\" id=\"px-").count(), 2);
    assert!(t.contains("<title>Statistics Report for weir pid 42</title>"));
    assert!(t.contains("http-equiv=\"refresh\" content=\"5\""));
    assert!(t.contains("s&lt;1&gt;") && !t.contains("s<1>"));
    assert!(t.contains("<tr class=\"active_down\" data-sv=\"s2\">"));
    assert_eq!(
        t.matches("<form method=\"post\" action=\"/stats\">")
            .count(),
        1,
        "only 'be' has servers"
    );
    assert!(t.contains("name=\"s\" value=\"s2\""));
    assert!(t.contains("class=\"notice\""));
    let t = html(
        &PageInfo {
            admin: false,
            ..info
        },
        &rows,
        &PageRequest::parse(";up;norefresh"),
    );
    assert!(!t.contains("<form") && !t.contains("http-equiv"));
    // `stats show-node` and `stats show-desc`, as haproxy 2.6 writes them.
    let t = html(
        &PageInfo {
            node: Some("n<1>".into()),
            desc: Some("edge".into()),
            ..PageInfo::default()
        },
        &rows,
        &PageRequest::default(),
    );
    assert!(
        t.contains("<title>Statistics Report for weir pid 0 on n&lt;1&gt;</title>"),
        "{t}"
    );
    assert!(t.contains("<h2>Statistics Report for pid 0 on n&lt;1&gt;: edge</h2>"));
}

#[test]
fn cells_read_as_haproxy_writes_them() {
    let mut r = row("be", "s1", "UP", "0");
    r.set("lastchg", 1788)
        .set("check_status", "L4OK")
        .set("check_duration", 0)
        .set("lastsess", -1)
        .set("downtime", 90061);
    assert_eq!(cell_text(&r, "status"), "29m48s UP");
    assert_eq!(cell_text(&r, "check_status"), "L4OK in 0ms");
    assert_eq!(cell_text(&r, "lastsess"), "?");
    assert_eq!(cell_text(&r, "downtime"), "1d1h");
    assert_eq!(cell_text(&r, "throttle"), "-");
    r.set("throttle", 40)
        .set("lastsess", 7)
        .set("check_duration", "");
    assert_eq!(cell_text(&r, "throttle"), "40 %");
    assert_eq!(cell_text(&r, "lastsess"), "7s");
    assert_eq!(cell_text(&r, "check_status"), "L4OK");
    let fe = row("fe", "FRONTEND", "OPEN", "");
    assert_eq!(cell_text(&fe, "status"), "OPEN");
    assert_eq!(cell_text(&fe, "throttle"), "");
    assert_eq!(human(3 * 3600 + 60), "3h1m");
}

#[test]
fn the_process_box_has_limits_rates_and_tasks() {
    let info = |k: &str| {
        Some(
            match k {
                "Pid" => "42",
                "Nbthread" => "2",
                "Ulimit-n" => "8207",
                "Maxconn" => "4096",
                "BytesOutRate" => "1500",
                "Tasks" => "9",
                "Idle_pct" => "97",
                _ => return None,
            }
            .to_string(),
        )
    };
    let lines = process_lines(info);
    assert_eq!(lines[0], "pid = 42 (process #1, nbproc = 1, nbthread = 2)");
    assert_eq!(
        lines[2],
        "system limits: memmax = unlimited; ulimit-n = 8207"
    );
    assert_eq!(lines[3], "maxsock = 0; maxconn = 4096; maxpipes = 0");
    assert!(lines[4].ends_with("bit rate = 12.000 kbps"), "{}", lines[4]);
    assert_eq!(lines[5], "Running tasks: 0/9; idle = 97 %");
    let page = html(
        &PageInfo {
            process: lines,
            ..PageInfo::default()
        },
        &[],
        &PageRequest::default(),
    );
    assert!(page.contains("<br>Running tasks: 0/9; idle = 97 %"));
}
