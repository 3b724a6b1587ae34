use super::*;

fn rows() -> Vec<Row> {
    let mut f = Row::new();
    f.set("pxname", "fe")
        .set("svname", "FRONTEND")
        .set("scur", 0)
        .set("type", 0)
        .set("iid", 2)
        .set("sid", 0)
        .set("status", "OPEN");
    let mut s = Row::new();
    s.set("pxname", "be")
        .set("svname", "s\"1")
        .set("act", 1)
        .set("type", 2)
        .set("iid", 3)
        .set("sid", 1)
        .set("check_desc", "Layer4 connection problem");
    vec![f, s]
}

#[test]
fn typed_lines_carry_haproxy_tags() {
    assert_eq!(STAT.len(), COLUMNS.len());
    assert!(STAT.iter().zip(COLUMNS).all(|(m, c)| m.0 == *c));
    let t = stat_typed(&rows());
    assert!(t.starts_with("F.2.0.0.pxname.1:KNS:str:fe\nF.2.0.1.svname.1:KNS:str:FRONTEND\nF.2.0.4.scur.1:MGP:u32:0\n"), "{t}");
    assert!(
        t.contains("S.3.1.19.act.1:SGP:u32:1\n"),
        "servers tag act differently: {t}"
    );
    let info = info_typed(|f| (f == "Name").then(|| "weir".into()));
    assert_eq!(info, "0.Name.1:POS:str:weir\n");
}

#[test]
fn json_is_valid_and_typed() {
    let j = stat_json(&rows());
    assert!(j.starts_with("[[{\"objType\":\"Frontend\",\"proxyId\":2,\"id\":0,\"field\":{\"pos\":0,\"name\":\"pxname\"},\"processNum\":1,\"tags\":{\"origin\":\"Key\",\"nature\":\"Name\",\"scope\":\"Service\"},\"value\":{\"type\":\"str\",\"value\":\"fe\"}}"), "{j}");
    assert!(
        j.contains("\"value\":{\"type\":\"u32\",\"value\":0}"),
        "numbers unquoted: {j}"
    );
    assert!(j.contains("\"value\":\"s\\\"1\""), "strings escaped: {j}");
    // Balanced brackets and braces outside strings.
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for c in j.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (_, false, '"') => in_str = !in_str,
            (false, _, '[' | '{') => depth += 1,
            (false, _, ']' | '}') => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0);
    }
    assert_eq!(depth, 0);
    let i = info_json(|f| (f == "Nbthread").then(|| "2".into()));
    assert!(
        i.contains("\"name\":\"Nbthread\"")
            && i.contains("\"value\":{\"type\":\"u32\",\"value\":2}"),
        "{i}"
    );
}
