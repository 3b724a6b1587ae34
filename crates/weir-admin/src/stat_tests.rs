use super::*;

#[test]
fn rows_follow_the_columns_with_trailing_commas() {
    assert_eq!(COLUMNS.len(), 128);
    assert_eq!(COLUMNS[..4], ["pxname", "svname", "qcur", "qmax"]);
    assert_eq!(COLUMNS.iter().position(|c| *c == "-"), Some(103));
    let h = csv_header();
    assert!(h.starts_with("# pxname,svname,") && h.ends_with("h1_spliced_bytes_out,\n"));
    let mut r = Row::new();
    r.set("pxname", "be")
        .set("svname", "s,1")
        .set("status", "UP")
        .set("nope", 5);
    let line = r.csv();
    assert!(line.starts_with("be,s 1,,,"), "{line}");
    assert_eq!(line.matches(',').count(), COLUMNS.len());
    let fields: Vec<&str> = line.trim_end().split(',').collect();
    assert_eq!(fields[17], "UP");
    assert_eq!(r.get("status"), Some("UP"));
    assert_eq!(csv(&[r.clone(), r]).lines().count(), 3);
}

#[test]
fn info_lists_every_field_in_order() {
    let t = info(|f| (f == "Name").then(|| "weir".to_string()));
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), INFO_FIELDS.len());
    assert_eq!(lines[0], "Name: weir");
    assert_eq!(lines[1], "Version: 0");
    assert!(lines.contains(&"Unstoppable Jobs: 0"));
    assert_eq!(uptime(90061), "1d 1h01m01s");
    assert_eq!(uptime(5), "0d 0h00m05s");
}

#[test]
fn servers_state_has_the_version_header_and_25_fields() {
    let s = ServerState {
        be_id: 3,
        be_name: "be".into(),
        srv_id: 1,
        srv_name: "s1".into(),
        addr: "127.0.0.1".into(),
        op_state: 2,
        uweight: 1,
        iweight: 1,
        port: 8080,
        ..ServerState::default()
    };
    let t = servers_state(&[s]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "1");
    assert_eq!(lines[1].split(' ').count(), 26, "'#' and 25 names");
    assert_eq!(lines[2].split(' ').count(), 25);
    assert!(
        lines[2].starts_with("3 be 1 s1 127.0.0.1 2 0 1 1 "),
        "{}",
        lines[2]
    );
}

#[test]
fn check_status_and_result_numbers_are_haproxys() {
    // Observed on haproxy 2.6: no check yet 1, L4OK 6, L4CON 8, L7STS 17.
    let n = |c| (check_status_number(c), check_result_number(c));
    assert_eq!(n(""), (1, 0));
    assert_eq!(n("L4OK"), (6, 3));
    assert_eq!(n("L4CON"), (8, 2));
    assert_eq!(n("L7STS"), (17, 2));
    assert_eq!(n("L7OK"), (15, 3));
    assert_eq!(n("L7OKC"), (16, 4));
}

#[test]
fn a_state_file_reads_back_what_show_servers_state_wrote() {
    let s = ServerState {
        be_id: 3,
        be_name: "be".into(),
        srv_id: 2,
        srv_name: "s2".into(),
        addr: "10.0.0.7".into(),
        op_state: 0,
        admin_state: 0x08,
        uweight: 5,
        iweight: 10,
        port: 8081,
        ..ServerState::default()
    };
    let text = format!(
        "{}# a comment\n\n1 be 1 s1 10.0.0.1 2\n",
        servers_state(&[s])
    );
    let (saved, warnings) = parse_servers_state(&text).unwrap();
    assert_eq!(saved.len(), 1);
    let got = &saved[0];
    assert_eq!(
        (
            got.be_id,
            got.be_name.as_str(),
            got.srv_id,
            got.srv_name.as_str()
        ),
        (3, "be", 2, "s2")
    );
    assert_eq!(
        (
            got.addr.as_str(),
            got.op_state,
            got.admin_state,
            got.uweight,
            got.iweight,
            got.port
        ),
        ("10.0.0.7", 0, 0x08, 5, 10, 8081)
    );
    assert_eq!(
        warnings,
        vec!["line 6: invalid server state line, ignored".to_string()]
    );
    assert!(parse_servers_state("2\n")
        .unwrap_err()
        .contains("version '2'"));
    assert!(parse_servers_state("").unwrap().0.is_empty());
}
