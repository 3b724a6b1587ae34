//! `show|add|del|set|clear map` and `show|add|del|clear acl`: the pattern
//! files shared by their users (`weir_rules::patref`).

/// A pattern file by its name or `#<id>`.
fn find_patterns(map: bool, which: &str) -> Option<std::sync::Arc<weir_rules::patref::PatRef>> {
    let id = which.strip_prefix('#').and_then(|i| i.parse::<u32>().ok());
    weir_rules::patref::PatRef::all()
        .into_iter()
        .filter(|p| p.is_map == map && !p.name.is_empty())
        .find(|p| id.map_or(p.name == which, |i| p.id == i))
}

pub(super) fn with_patterns(
    map: bool,
    which: &str,
    f: impl FnOnce(&weir_rules::patref::PatRef) -> String,
) -> String {
    match find_patterns(map, which) {
        Some(p) => f(&p),
        None if map => "Unknown map: name it by its file or #<id> (see 'show map').\n".into(),
        None => "Unknown ACL file: name it by its file or #<id> (see 'show acl').\n".into(),
    }
}

/// An entry selector as `PatRef` takes it: `#<id>` (decimal, or `#0x…`
/// as `show map` prints ids) or a key.
pub(super) fn ref_sel(sel: &str) -> String {
    match sel.strip_prefix("#0x").map(|h| u64::from_str_radix(h, 16)) {
        Some(Ok(id)) => format!("#{id}"),
        _ => sel.to_string(),
    }
}

/// `show map|acl`: the files, or one file's lines (`0x<id> key [value]`).
pub(super) fn show_patterns(map: bool, which: Option<&str>) -> String {
    let Some(which) = which else {
        let mut out = String::from("# id (file) description\n");
        for p in weir_rules::patref::PatRef::all()
            .into_iter()
            .filter(|p| p.is_map == map && !p.name.is_empty())
        {
            out.push_str(&format!(
                "{} ({}) pattern loaded from file '{}' entry_cnt={}\n",
                p.id,
                p.name,
                p.name,
                p.entries().len()
            ));
        }
        return out;
    };
    with_patterns(map, which, |p| {
        let mut out = String::new();
        for e in p.entries() {
            if map {
                out.push_str(&format!("0x{:x} {} {}\n", e.id, e.key, e.value));
            } else {
                out.push_str(&format!("0x{:x} {}\n", e.id, e.key));
            }
        }
        out
    })
}

/// `get map|acl <file> <value>`: a line per user of the file (its match
/// method), with the first entry the value matches.
pub(super) fn get_pattern(p: &weir_rules::patref::PatRef, value: &str) -> String {
    let mut out = String::new();
    for u in p.probe(value) {
        let case = if u.icase { "insensitive" } else { "sensitive" };
        out.push_str(&format!("type={}, case={case}, ", u.method.name()));
        let word = if p.is_map { "found" } else { "match" };
        match u.hit {
            None => out.push_str(&format!("{word}=no\n")),
            Some(e) if p.is_map => out.push_str(&format!(
                "found=yes, idx=list, key=\"{}\", value=\"{}\", type=\"str\"\n",
                e.key, e.value
            )),
            Some(e) => out.push_str(&format!("match=yes, idx=list, pattern=\"{}\"\n", e.key)),
        }
    }
    out
}
