//! `program` sections (manual §3.7): commands the master process starts
//! beside its workers, and restarts on reload unless told not to.

use super::State;
use crate::diag::Loc;
use crate::model::Program;

/// Opens `program <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    match words.get(1) {
        Some(n) if words.len() == 2 => {
            if st.config.programs.iter().any(|p| p.name == *n) {
                st.diags.alert(
                    loc,
                    format!("program section '{n}' has the same name as another"),
                );
            }
            st.config.programs.push(Program {
                name: n.clone(),
                loc: loc.clone(),
                command: Vec::new(),
                user: None,
                group: None,
                start_on_reload: true,
            });
            true
        }
        _ => {
            st.diags.alert(loc, "'program' expects exactly one name");
            false
        }
    }
}

/// One line of the current `program` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let Some(p) = st.config.programs.last_mut() else {
        return;
    };
    let args = words.get(1..).unwrap_or_default();
    let r = match (words.first().map_or("", String::as_str), args) {
        ("command", []) => {
            Err("'command' expects a command with optional arguments separated in words.".into())
        }
        ("command", cmd) => {
            p.command = cmd.to_vec();
            Ok(())
        }
        ("user", [u]) => {
            p.user = Some(u.clone());
            Ok(())
        }
        ("group", [g]) => {
            p.group = Some(g.clone());
            Ok(())
        }
        ("user" | "group", _) => Err(format!("'{}' expects one name", words[0])),
        ("option", [o]) if o == "start-on-reload" => {
            p.start_on_reload = true;
            Ok(())
        }
        ("no", [opt, o]) if opt == "option" && o == "start-on-reload" => {
            p.start_on_reload = false;
            Ok(())
        }
        ("option", [o, ..]) | ("no", [_, o, ..]) => Err(format!("unknown option '{o}'.")),
        (kw, _) => Err(format!(
            "unknown keyword '{kw}' in 'program' section (expects 'command', 'user', 'group' or 'option start-on-reload')"
        )),
    };
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

/// A program without a command is an error, as in haproxy.
pub(super) fn check(st: &mut State<'_>) {
    for p in &st.config.programs {
        if p.command.is_empty() {
            st.diags.alert(
                &p.loc,
                format!(
                    "The program section '{}' lacks a command to launch.",
                    p.name
                ),
            );
        }
    }
}

#[cfg(test)]
#[path = "program_tests.rs"]
mod tests;
