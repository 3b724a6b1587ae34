//! The `weir` binary: HAProxy's command line over weir's configuration
//! loader and runtime.

#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;
use weir_config::cond::{self, CondEnv, FEATURES, LANGUAGE_VERSION, SERVICES};
use weir_config::{Level, Source};

/// glibc's malloc with cheap over-aligned blocks (tokio's tasks).
#[global_allocator]
static ALLOC: weir_proxy::alloc::Malloc = weir_proxy::alloc::Malloc;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn print_version(level: u8) {
    println!(
        "weir version {VERSION} - speaks the HAProxy {LANGUAGE_VERSION} configuration language"
    );
    println!(
        "Status: development; mode tcp and mode http (HTTP/1.1, HTTP/2, TLS); docs/compatibility.md lists every keyword."
    );
    if level >= 2 {
        println!();
        println!("Build options :");
        println!("  TARGET  = linux");
        println!("  LANGUAGE = rust");
        println!();
        let list: Vec<String> = FEATURES
            .iter()
            .map(|(n, on)| format!("{}{n}", if *on { '+' } else { '-' }))
            .collect();
        println!("Feature list : {}", list.join(" "));
        println!();
        println!("Built with Lua version : Lua 5.3");
        println!("Default settings :");
        println!("  bufsize = 16384, maxrewrite = 0, maxpollevents = 0");
        println!();
        println!("Available polling systems :");
        println!("      epoll : pref=300,  test result OK");
        println!("Total: 1 (1 usable), will use epoll.");
        println!();
        println!("Available multiplexer protocols :");
        println!("(protocols marked as <default> cannot be specified using 'proto' keyword)");
        println!("         h2 : mode=HTTP  side=FE|BE  mux=H2    flags=HTX|HOL_RISK|NO_UPG");
        println!("  <default> : mode=HTTP  side=FE|BE  mux=H1    flags=HTX");
        println!("  <default> : mode=TCP   side=FE|BE  mux=PASS  flags=");
        println!();
        println!("Available services : {}", SERVICES.join(" "));
        println!("Available filters :");
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match cli::parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : {e}", std::process::id());
            eprint!("{}", cli::USAGE);
            return ExitCode::from(1);
        }
    };
    if args.help {
        print!("{}", cli::USAGE);
        return ExitCode::SUCCESS;
    }
    if args.version > 0 {
        print_version(args.version);
        return ExitCode::SUCCESS;
    }
    if let Some(expr) = &args.cond {
        let words = match weir_config::lexer::tokenize(expr, &env_var) {
            Ok(w) => w,
            Err(e) => {
                eprintln!(
                    "[ALERT]    ({}) : failed to parse condition '{expr}': {e}",
                    std::process::id()
                );
                return ExitCode::from(2);
            }
        };
        return match cond::eval(&words.join(" "), &CondEnv { env: &env_var }) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!(
                    "[ALERT]    ({}) : failed to evaluate condition: {e}",
                    std::process::id()
                );
                ExitCode::from(2)
            }
        };
    }
    if let Some(dir) = &args.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!(
                "[ALERT]    ({}) : cannot change to directory '{dir}': {e}",
                std::process::id()
            );
            return ExitCode::from(1);
        }
    }
    if args.files.is_empty() {
        eprintln!(
            "[ALERT]    ({}) : No configuration file specified (use -f).",
            std::process::id()
        );
        eprint!("{}", cli::USAGE);
        return ExitCode::from(1);
    }
    let link = weir_proxy::master::channel::from_env();
    // A worker's master printed the configuration's warnings already.
    let notices = !args.quiet && link.is_none();
    let mut config = match load(&args, notices, args.check || args.master_worker) {
        Ok(c) => c,
        Err(()) => return ExitCode::from(1),
    };
    let master_worker = (args.master_worker || config.global.master_worker) && link.is_none();
    if !config.programs.is_empty() && !master_worker && link.is_none() {
        eprintln!(
            "[ALERT]    ({}) : config : Can't use a 'program' section without master worker mode.",
            std::process::id()
        );
        return ExitCode::from(1);
    }
    if args.check {
        if !args.quiet {
            println!("Configuration file is valid");
        }
        return ExitCode::SUCCESS;
    }
    if let Some(m) = args.maxconn {
        config.global.maxconn = Some(m);
    }
    if let Some(l) = &args.localpeer {
        config.global.localpeer = Some(l.clone());
    }
    for (k, v) in &config.global.setenv {
        match v {
            Some(v) => std::env::set_var(k, v),
            None => std::env::remove_var(k),
        }
    }
    std::env::set_var("HAPROXY_CFGFILES", args.files.join(";"));
    if master_worker {
        return run_master(&args, &argv, config);
    }
    // `default-path`: the files loaded from here on (certificates, Lua
    // scripts, saved server states) start from its directory. The command
    // line's pidfile stays where it was named from.
    let mut pidfile = args.pidfile.clone();
    if let Some(dir) = &config.global.default_path {
        pidfile = pidfile.map(|p| absolute(&p));
        if let Err(e) = std::env::set_current_dir(dir) {
            say(&format!(
                "[ALERT]    ({}) : default-path '{}': {e}",
                std::process::id(),
                dir.display()
            ));
            return ExitCode::from(1);
        }
    }
    let opts = weir_proxy::StartOptions {
        foreground: args.foreground,
        debug: args.debug,
        daemon: args.daemon,
        pidfile,
        quiet: args.quiet,
        soft_stop_pids: args.soft_pids.clone(),
        hard_stop_pids: args.hard_pids.clone(),
        takeover: args.takeover.clone(),
        master: link,
    };
    exit(weir_proxy::run(config, opts))
}

/// The process's exit code, or its errors said and 1.
fn exit(r: Result<i32, Vec<String>>) -> ExitCode {
    match r {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(errs) => {
            for e in &errs {
                say(e);
            }
            say(&format!(
                "[ALERT]    ({}) : Fatal errors found, nothing started.",
                std::process::id()
            ));
            ExitCode::from(1)
        }
    }
}

/// Loads the configuration files, printing their diagnostics (notices and
/// warnings when `notices`), and checks the TLS files when `tls` (a check,
/// or a master that must not start a worker on files that do not load).
fn load(args: &cli::Args, notices: bool, tls: bool) -> Result<weir_config::Config, ()> {
    let pid = std::process::id();
    let sources: Vec<Source> = weir_config::load_sources(&args.files).map_err(|e| {
        say(&format!("[ALERT]    ({pid}) : {e}"));
    })?;
    let parsed = weir_config::parse(&sources, &env_var);
    for d in &parsed.diagnostics.items {
        if d.level == Level::Alert || (notices && d.level >= Level::Notice) {
            say(&d.to_string());
        }
    }
    let Some(config) = parsed.config else {
        let n = parsed.diagnostics.errors().count();
        say(&format!(
            "[ALERT]    ({pid}) : Fatal errors found in configuration ({n})."
        ));
        return Err(());
    };
    let errors = if tls {
        // The files loaded once the configuration is read start from
        // `default-path`'s directory.
        in_dir(config.global.default_path.as_deref(), || {
            let mut e = weir_proxy::tls::check(&config);
            e.extend(weir_proxy::lua::check(&config));
            e
        })
    } else {
        Vec::new()
    };
    if !errors.is_empty() {
        for e in &errors {
            say(e);
        }
        say(&format!(
            "[ALERT]    ({pid}) : Fatal errors found in configuration ({}).",
            errors.len()
        ));
        return Err(());
    }
    Ok(config)
}

/// `p` from the current directory.
fn absolute(p: &str) -> String {
    std::path::absolute(p).map_or_else(|_| p.to_string(), |a| a.display().to_string())
}

/// Runs `f` with `dir` (if any) as the current directory, then goes back.
fn in_dir<T>(dir: Option<&std::path::Path>, f: impl FnOnce() -> T) -> T {
    let Some(dir) = dir else { return f() };
    let back = std::env::current_dir().ok();
    if let Err(e) = std::env::set_current_dir(dir) {
        say(&format!(
            "[WARNING]  ({}) : default-path '{}': {e}",
            std::process::id(),
            dir.display()
        ));
    }
    let r = f();
    if let Some(b) = back {
        let _ = std::env::set_current_dir(b);
    }
    r
}

/// One line on stderr in one write, appended: a master's and its workers'
/// lines share it.
fn say(line: &str) {
    weir_proxy::log::console_line(&format!("{line}\n"));
}

/// `-W`, `-Ws`, `master-worker`: this process becomes the master; each
/// worker is this program again, started on `argv` less the master's own
/// options.
fn run_master(args: &cli::Args, argv: &[String], config: weir_config::Config) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(p) => {
            // Started again after an upgrade replaced the file: the new one.
            let s = p.to_string_lossy();
            std::path::PathBuf::from(s.strip_suffix(" (deleted)").unwrap_or(&s))
        }
        Err(e) => {
            eprintln!(
                "[ALERT]    ({}) : cannot find this program's path: {e}",
                std::process::id()
            );
            return ExitCode::from(1);
        }
    };
    let opts = weir_proxy::master::MasterOptions {
        exe,
        worker_args: cli::worker_args(argv),
        clis: args.master_cli.clone(),
        pidfile: args
            .pidfile
            .clone()
            .or_else(|| config.global.pidfile.clone()),
        // Under systemd (-Ws) the master stays the unit's main process.
        daemon: (args.daemon || config.global.daemon) && !args.foreground && !args.systemd,
        systemd: args.systemd,
        quiet: args.quiet || config.global.quiet,
    };
    let reload_args = cli::parse(argv).unwrap_or_default();
    let quiet = opts.quiet;
    let loader = Box::new(move || load(&reload_args, !quiet, true).map_err(|()| Vec::new()));
    exit(weir_proxy::master::run(config, opts, loader))
}
