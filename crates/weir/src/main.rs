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
    let sources: Vec<Source> = match weir_config::load_sources(&args.files) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : {e}", std::process::id());
            return ExitCode::from(1);
        }
    };
    let parsed = weir_config::parse(&sources, &env_var);
    for d in &parsed.diagnostics.items {
        if d.level == Level::Alert || (!args.quiet && d.level >= Level::Notice) {
            eprintln!("{d}");
        }
    }
    let Some(mut config) = parsed.config else {
        let n = parsed.diagnostics.errors().count();
        eprintln!(
            "[ALERT]    ({}) : Fatal errors found in configuration ({n}).",
            std::process::id()
        );
        return ExitCode::from(1);
    };
    if args.check {
        let tls = weir_proxy::tls::check(&config);
        if !tls.is_empty() {
            for e in &tls {
                eprintln!("{e}");
            }
            eprintln!(
                "[ALERT]    ({}) : Fatal errors found in configuration ({}).",
                std::process::id(),
                tls.len()
            );
            return ExitCode::from(1);
        }
        println!("Configuration file is valid");
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
    if args.master_worker && !args.quiet {
        eprintln!(
            "[WARNING]  ({}) : -W: weir runs without a master process (reload with -sf, and -x to take over the listening sockets)",
            std::process::id()
        );
    }
    let opts = weir_proxy::StartOptions {
        foreground: args.foreground,
        debug: args.debug,
        daemon: args.daemon,
        pidfile: args.pidfile.clone(),
        quiet: args.quiet,
        soft_stop_pids: args.soft_pids.clone(),
        hard_stop_pids: args.hard_pids.clone(),
        takeover: args.takeover.clone(),
    };
    match weir_proxy::run(config, opts) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(errs) => {
            for e in &errs {
                eprintln!("{e}");
            }
            eprintln!(
                "[ALERT]    ({}) : Fatal errors found, nothing started.",
                std::process::id()
            );
            ExitCode::from(1)
        }
    }
}
