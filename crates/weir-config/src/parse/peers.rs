//! `peers` sections (manual §3.5): the local peer's address, the other
//! peers, and the stick tables declared there.

use super::State;
use crate::addr::{parse_bind_list, parse_server_addr};
use crate::diag::Loc;
use crate::model::{PeerDef, PeersSection};

/// Opens `peers <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    match words.get(1) {
        Some(n) if words.len() == 2 => {
            if st.config.peers.iter().any(|p| p.name == *n) {
                st.diags.alert(
                    loc,
                    format!("peers section '{n}' has the same name as another"),
                );
            }
            st.config.peers.push(PeersSection {
                name: n.clone(),
                loc: loc.clone(),
                bind: None,
                bind_tls: None,
                bind_loc: None,
                default_tls: Default::default(),
                default_bind: Vec::new(),
                peers: Vec::new(),
                tables: Vec::new(),
                disabled: false,
            });
            true
        }
        _ => {
            st.diags.alert(loc, "'peers' expects exactly one name");
            false
        }
    }
}

/// One line of the current `peers` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let env = &st.env;
    let Some(sec) = st.config.peers.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let args = words.get(1..).unwrap_or_default();
    let r: Result<(), String> = match kw {
        "bind" => bind(sec, args, loc),
        "peer" | "server" => {
            let mut args = args.to_vec();
            if let Some(a) = args.get_mut(1) {
                *a = crate::addr::expand_env(a, &|n| env.get(n));
            }
            peer(sec, kw, &args, loc)
        }
        "table" => table(sec, args, loc).map(|w| {
            for m in w {
                st.diags.warn(loc, format!("stick-table: {m}"));
            }
        }),
        "disabled" => {
            sec.disabled = true;
            Ok(())
        }
        "enable" => {
            sec.disabled = false;
            Ok(())
        }
        "log" => Ok(()),
        "default-server" => {
            let mut tls = sec.default_tls.clone();
            server_tls(&mut tls, args, "default-server").map(|()| sec.default_tls = tls)
        }
        "default-bind" => default_bind(sec, args),
        "shards" => Err(format!("'{kw}' is not supported by weir yet")),
        _ => Err(format!(
            "unknown keyword '{kw}' in 'peers' section (expects 'bind', 'peer', 'server', 'table', 'disabled' or 'enable')"
        )),
    };
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

fn peer(sec: &mut PeersSection, kw: &str, args: &[String], loc: &Loc) -> Result<(), String> {
    let Some(name) = args.first() else {
        return Err(format!("'{kw}' expects a name and an address"));
    };
    // `server <name>` alone is the local peer (its address is `bind`'s).
    let (addr, opts) = match args.get(1) {
        Some(a) => (
            Some(parse_server_addr(a, None).map_err(|e| format!("'{kw}' : {e}"))?),
            args.get(2..).unwrap_or_default(),
        ),
        None if kw == "server" => (None, &[][..]),
        None => return Err(format!("'{kw}' expects a name and an address")),
    };
    if sec.peers.iter().any(|p| p.name == *name) {
        return Err(format!("'{kw}' : peer '{name}' is declared twice"));
    }
    let mut tls = sec.default_tls.clone();
    server_tls(&mut tls, opts, kw)?;
    sec.peers.push(PeerDef {
        name: name.clone(),
        addr,
        tls,
        loc: loc.clone(),
    });
    Ok(())
}

/// `bind <addr> [ssl crt … and the bind line's other TLS options]`, after
/// `default-bind`'s.
fn bind(sec: &mut PeersSection, args: &[String], loc: &Loc) -> Result<(), String> {
    let (first, opts) = args.split_first().ok_or("'bind' expects an address")?;
    let mut a = parse_bind_list(first).map_err(|e| format!("'bind' : {e}"))?;
    if a.len() != 1 {
        return Err("'bind' expects one address".into());
    }
    let opts = [sec.default_bind.as_slice(), opts].concat();
    let tls = bind_tls(&opts).map_err(|e| format!("'bind {first}' : {e}"))?;
    sec.bind = a.pop();
    sec.bind_tls = tls;
    sec.bind_loc = Some(loc.clone());
    Ok(())
}

/// `default-bind [ssl crt …]`: the local listener's options, whether a
/// `bind` line or the local `peer` line gives its address.
fn default_bind(sec: &mut PeersSection, opts: &[String]) -> Result<(), String> {
    let tls = bind_tls(opts).map_err(|e| format!("'default-bind' : {e}"))?;
    sec.default_bind = opts.to_vec();
    if sec.bind_loc.is_none() {
        sec.bind_tls = tls;
    }
    Ok(())
}

/// A listener's TLS from its options (`None`: clear text).
fn bind_tls(opts: &[String]) -> Result<Option<crate::tls::BindTls>, String> {
    let mut ssl = false;
    let mut tls = crate::tls::BindTls::default();
    each_option(opts, |w, arg| match w {
        "ssl" => {
            ssl = true;
            Some(Ok(1))
        }
        _ => tls.apply(w, arg),
    })?;
    if ssl && tls.crts.is_empty() && tls.crt_lists.is_empty() {
        return Err("'ssl' needs a certificate ('crt' or 'crt-list')".into());
    }
    Ok(ssl.then_some(tls))
}

/// A peer's or `default-server`'s options: only TLS ones take effect
/// between peers, the others are refused by name.
fn server_tls(tls: &mut crate::tls::ServerTls, opts: &[String], kw: &str) -> Result<(), String> {
    each_option(opts, |w, arg| tls.apply(w, arg)).map_err(|e| format!("'{kw}' : {e}"))
}

/// Runs `apply` on each option word and its argument; `None` from it is a
/// word weir does not take in a `peers` section.
fn each_option(
    opts: &[String],
    mut apply: impl FnMut(&str, Option<&str>) -> Option<Result<usize, String>>,
) -> Result<(), String> {
    let mut i = 0;
    while let Some(w) = opts.get(i) {
        let arg = opts.get(i + 1).map(String::as_str);
        match apply(w, arg) {
            Some(r) => i += r?,
            None => {
                return Err(format!(
                    "'{w}' is not supported in a 'peers' section by weir (only TLS options are)"
                ))
            }
        }
    }
    Ok(())
}

fn table(sec: &mut PeersSection, args: &[String], loc: &Loc) -> Result<Vec<String>, String> {
    let (name, rest) = args.split_first().ok_or("'table' expects a name")?;
    let full = format!("{}/{name}", sec.name);
    if sec.tables.iter().any(|t| t.def.name == full) {
        return Err(format!("'table' : table '{name}' is declared twice"));
    }
    let (t, warnings) = super::stick::parse(&full, rest, loc).map_err(|e| format!("{e}."))?;
    sec.tables.push(t);
    Ok(warnings)
}
