use super::*;

fn w(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

#[test]
fn lines_split_into_commands_and_words() {
    assert_eq!(
        split("show info; show stat\n"),
        vec![w("show info"), w("show stat")]
    );
    assert_eq!(split("  ;; \t "), Vec::<Vec<String>>::new());
    assert_eq!(
        split(r"set map m a\;b c\ d"),
        vec![vec!["set", "map", "m", "a;b", "c d"]]
    );
    assert_eq!(split(r"x\\y"), vec![vec![r"x\y".to_string()]]);
    assert_eq!(split("a\\"), vec![vec!["a".to_string()]]);
}

#[test]
fn commands_parse_with_their_arguments() {
    assert_eq!(
        parse(&w("show info typed")),
        Ok(Command::ShowInfo(Format::Typed))
    );
    assert_eq!(
        parse(&w("show stat -1 4 -1")),
        Ok(Command::ShowStat(
            StatFilter {
                proxy: None,
                types: 4,
                sid: None,
                ..StatFilter::default()
            },
            Format::Plain
        ))
    );
    assert_eq!(
        parse(&w("show stat be 2 3")),
        Ok(Command::ShowStat(
            StatFilter {
                proxy: Some("be".into()),
                types: 2,
                sid: Some(3),
                ..StatFilter::default()
            },
            Format::Plain
        ))
    );
    assert!(matches!(
        parse(&w("show stat be 2")),
        Err(CliError::Usage(_))
    ));
    assert!(matches!(
        parse(&w("show stat json")),
        Ok(Command::ShowStat(_, Format::Json))
    ));
    assert!(matches!(
        parse(&w("show stat -1 4 -1 typed")),
        Ok(Command::ShowStat(
            StatFilter { types: 4, .. },
            Format::Typed
        ))
    ));
    let up = |l: &str| match parse(&w(l)) {
        Ok(Command::ShowStat(f, _)) => (f.up, f.no_maint),
        r => panic!("{r:?}"),
    };
    assert_eq!(up("show stat up"), (true, false));
    assert_eq!(up("show stat -1 4 -1 no-maint typed"), (false, true));
    let f = StatFilter {
        up: true,
        ..StatFilter::default()
    };
    assert!(f.hides("DOWN") && f.hides("DOWN 1/2") && f.hides("MAINT"));
    assert!(!f.hides("UP") && !f.hides("DRAIN") && !f.hides("no check"));
    let f = StatFilter {
        no_maint: true,
        ..StatFilter::default()
    };
    assert!(f.hides("MAINT") && f.hides("MAINT (resolution)") && !f.hides("DOWN"));
    let s = ServerRef {
        backend: "be".into(),
        server: "s1".into(),
    };
    assert_eq!(
        parse(&w("get weight be/s1")),
        Ok(Command::GetWeight(s.clone()))
    );
    assert_eq!(
        parse(&w("set server be/s1 weight 50%")),
        Ok(Command::SetWeight(s.clone(), Weight::Percent(50)))
    );
    assert_eq!(
        parse(&w("set weight be/s1 256")),
        Ok(Command::SetWeight(s.clone(), Weight::Absolute(256)))
    );
    assert_eq!(
        parse(&w("set server be/s1 state drain")),
        Ok(Command::SetState(s.clone(), AdminState::Drain))
    );
    assert_eq!(
        parse(&w("set server be/s1 addr 10.0.0.1 port 81")),
        Ok(Command::SetAddr(s.clone(), "10.0.0.1".into(), Some(81)))
    );
    assert_eq!(
        parse(&w("disable server be/s1")),
        Ok(Command::DisableServer(s.clone()))
    );
    assert_eq!(
        parse(&w("enable health be/s1")),
        Ok(Command::EnableHealth(s))
    );
    assert_eq!(parse(&w("operator")), Ok(Command::Lower(Level::Operator)));
}

#[test]
fn bad_arguments_get_one_line_and_unknown_words_are_unknown() {
    let msg = |s: &str| match parse(&w(s)) {
        Err(CliError::Usage(m)) => m,
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(msg("disable server be"), "Require 'backend/server'.");
    assert_eq!(
        msg("set server be/s1 weight 300"),
        "Absolute weight can only be between 0 and 256 inclusive."
    );
    assert_eq!(
        msg("set server be/s1 state foo"),
        "'set server <srv> state' expects 'ready', 'drain' and 'maint'."
    );
    assert!(msg("set server be/s1 addr 1.2.3.4 port 0").contains("port"));
    assert!(!msg("set server be/s1 nosuch up").contains('\n'));
    assert_eq!(
        msg("set server be/s1 health sideways"),
        "'set server <srv> health' expects 'up', 'stopping', or 'down'."
    );
    assert_eq!(
        parse(&w("set server be/s1 check-addr 10.0.0.1 port 81")),
        Ok(Command::SetServerCheck(
            ServerRef {
                backend: "be".into(),
                server: "s1".into()
            },
            crate::cli_set::CheckSet::CheckAddr("10.0.0.1".into(), Some("81".into()))
        ))
    );
    assert_eq!(parse(&w("xyzzy")), Err(CliError::Unknown));
    assert_eq!(parse(&w("show nothing")), Err(CliError::Unknown));
}

#[test]
fn levels_gate_commands_and_help() {
    let s = ServerRef {
        backend: "b".into(),
        server: "s".into(),
    };
    assert_eq!(
        Command::ShowStat(
            StatFilter {
                proxy: None,
                types: -1,
                sid: None,
                ..StatFilter::default()
            },
            Format::Plain
        )
        .level(),
        Level::User
    );
    assert_eq!(Command::ShowEnv(None).level(), Level::Operator);
    assert_eq!(Command::DisableServer(s).level(), Level::Admin);
    let user = help(Level::User);
    let admin = help(Level::Admin);
    assert!(user.contains("  show stat") && !user.contains("disable server"));
    assert!(admin.contains("disable server") && admin.contains("show env"));
    assert!(
        admin.lines().skip(1).all(|l| l.find(" : ") == Some(40)),
        "{admin}"
    );
    assert_eq!(Level::parse("operator"), Some(Level::Operator));
    assert_eq!(Level::parse("root"), None);
}

#[test]
fn unknown_commands_suggest_their_neighbours() {
    let t = unknown(&w("show nothing"), Level::Admin);
    assert!(
        t.starts_with("Unknown command, but maybe one of the following ones is a better match:\n"),
        "{t}"
    );
    assert!(t.lines().skip(1).all(|l| l.starts_with("  show ")), "{t}");
    let t = unknown(&w("xyzzy"), Level::User);
    assert!(
        t.starts_with("Unknown command. Please enter one of the following commands only :\n"),
        "{t}"
    );
    assert!(
        t.contains("  help ") && !t.contains("disable server"),
        "{t}"
    );
}

#[test]
fn limits_frontends_and_counters_commands() {
    let s = ServerRef {
        backend: "be".into(),
        server: "s1".into(),
    };
    assert_eq!(
        parse(&w("set maxconn global 100")),
        Ok(Command::SetMaxconnGlobal(100))
    );
    assert_eq!(
        parse(&w("set maxconn frontend fe 5")),
        Ok(Command::SetMaxconnFrontend("fe".into(), 5))
    );
    assert_eq!(
        parse(&w("set maxconn server be/s1 0")),
        Ok(Command::SetMaxconnServer(s, 0))
    );
    assert!(matches!(
        parse(&w("set maxconn frontend fe x")),
        Err(CliError::Usage(_))
    ));
    assert!(matches!(parse(&w("set maxconn")), Err(CliError::Usage(_))));
    assert_eq!(
        parse(&w("disable frontend fe")),
        Ok(Command::DisableFrontend("fe".into()))
    );
    assert_eq!(
        parse(&w("clear counters")).map(|c| c.level()),
        Ok(Level::Operator)
    );
    assert_eq!(
        parse(&w("clear counters all")).map(|c| c.level()),
        Ok(Level::Admin)
    );
    assert!(help(Level::Admin)
        .lines()
        .skip(1)
        .all(|l| l.find(" : ").is_some()));
}

#[test]
fn profiling_commands() {
    assert_eq!(
        parse(&w("set profiling tasks on")),
        Ok(Command::SetProfiling("on".into()))
    );
    assert_eq!(
        parse(&w("set profiling tasks maybe")),
        Err(CliError::Usage("Expects 'on', 'auto', or 'off'.".into()))
    );
    assert!(matches!(
        parse(&w("set profiling memory on")),
        Err(CliError::Usage(_))
    ));
    assert_eq!(
        parse(&w("show profiling")).map(|c| c.level()),
        Ok(Level::Operator)
    );
    assert_eq!(
        parse(&w("set profiling tasks off")).map(|c| c.level()),
        Ok(Level::Admin)
    );
    assert_eq!(parse(&w("show activity")), Ok(Command::ShowActivity));
    assert_eq!(parse(&w("show threads")), Ok(Command::ShowThreads));
}

#[test]
fn sessions_are_listed_and_shut_by_id() {
    use crate::sess::SessSel;
    let p = |l: &str| parse(&w(l));
    assert_eq!(p("show sess"), Ok(Command::ShowSess(SessSel::List)));
    assert_eq!(p("show sess all"), Ok(Command::ShowSess(SessSel::All)));
    assert_eq!(
        p("show sess 0x1f"),
        Ok(Command::ShowSess(SessSel::One(0x1f)))
    );
    // Not an identifier: the list, as HAProxy answers.
    assert_eq!(p("show sess zz"), Ok(Command::ShowSess(SessSel::List)));
    assert_eq!(
        p("shutdown session 0x1f"),
        Ok(Command::ShutdownSession(0x1f))
    );
    assert_eq!(
        p("shutdown session"),
        Err(CliError::Usage(
            "Session pointer expected (use 'show sess').".into()
        ))
    );
    assert_eq!(
        p("shutdown session nope"),
        Err(CliError::Usage("No such session (use 'show sess').".into()))
    );
    assert_eq!(Command::ShowSess(SessSel::List).level(), Level::Operator);
    assert_eq!(Command::ShutdownSession(1).level(), Level::Admin);
    assert_eq!(p("_getsocks"), Ok(Command::GetSocks));
}

#[test]
fn get_map_and_acl_take_a_file_and_a_value() {
    assert_eq!(
        parse(&w("get map /etc/m.map /a b")),
        Ok(Command::GetPattern {
            map: true,
            which: "/etc/m.map".into(),
            value: "/a b".into()
        })
    );
    assert_eq!(
        parse(&w("get acl #2 10.0.0.1")).map(|c| c.level()),
        Ok(Level::Operator)
    );
    assert_eq!(
        parse(&w("get map /etc/m.map")),
        Err(CliError::Usage("Missing map identifier and/or key.".into()))
    );
}
