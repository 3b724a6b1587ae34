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
}
