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
        "bind" => match args.first().map(|a| parse_bind_list(a)) {
            Some(Ok(mut a)) if a.len() == 1 && args.len() == 1 => {
                sec.bind = a.pop();
                Ok(())
            }
            Some(Ok(_)) => Err("'bind' expects one address and no option".into()),
            Some(Err(e)) => Err(format!("'bind' : {e}")),
            None => Err("'bind' expects an address".into()),
        },
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
        "default-bind" | "default-server" | "shards" => {
            Err(format!("'{kw}' is not supported by weir yet"))
        }
        _ => Err(format!(
            "unknown keyword '{kw}' in 'peers' section (expects 'bind', 'peer', 'server', 'table', 'disabled' or 'enable')"
        )),
    };
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

fn peer(sec: &mut PeersSection, kw: &str, args: &[String], loc: &Loc) -> Result<(), String> {
    let (name, addr) = match args {
        [n] if kw == "server" => (n, None),
        [n, a] => (
            n,
            Some(parse_server_addr(a, None).map_err(|e| format!("'{kw}' : {e}"))?),
        ),
        [_, _, ..] => {
            return Err(format!(
                "'{kw}': server options are not supported by weir yet"
            ))
        }
        _ => return Err(format!("'{kw}' expects a name and an address")),
    };
    if sec.peers.iter().any(|p| p.name == *name) {
        return Err(format!("'{kw}' : peer '{name}' is declared twice"));
    }
    sec.peers.push(PeerDef {
        name: name.clone(),
        addr,
        loc: loc.clone(),
    });
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
