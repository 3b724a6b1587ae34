//! HAProxy's command line: `-f -c -d -db -dM… -D -p -q -v -vv -cc -sf -st -x
//! -W -Ws -S`, and a worker's command line made from its master's.

/// What the command line asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    pub files: Vec<String>,
    pub check: bool,
    pub foreground: bool,
    /// `-d`: debug mode (as haproxy's, without its traces).
    pub debug: bool,
    pub daemon: bool,
    pub pidfile: Option<String>,
    pub quiet: bool,
    pub version: u8,
    pub cond: Option<String>,
    pub soft_pids: Vec<i32>,
    pub hard_pids: Vec<i32>,
    /// `-W`, `-Ws`: a master process starts and supervises workers.
    pub master_worker: bool,
    /// `-Ws`: the master tells systemd when it is ready.
    pub systemd: bool,
    /// `-S <addr>[,<opts>]`: master CLI listeners.
    pub master_cli: Vec<String>,
    pub maxconn: Option<u32>,
    pub chdir: Option<String>,
    pub help: bool,
    /// `-x <socket>`: take the listening sockets of the process behind it.
    pub takeover: Option<String>,
    /// `-L <name>`: the local peer's name.
    pub localpeer: Option<String>,
}

/// Parses `argv[1..]`. Errors are one-line messages.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("option '{flag}' expects an argument"))
    };
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "-f" => a.files.push(value(&mut i, arg)?),
            "-c" => a.check = true,
            "-D" => a.daemon = true,
            "-q" => a.quiet = true,
            "-v" => a.version = a.version.max(1),
            "-vv" => a.version = 2,
            "-V" => {}
            "-W" => a.master_worker = true,
            "-Ws" => {
                a.master_worker = true;
                a.systemd = true;
            }
            "-S" => a.master_cli.push(value(&mut i, arg)?),
            "-p" => a.pidfile = Some(value(&mut i, arg)?),
            "-cc" => a.cond = Some(value(&mut i, arg)?),
            "-C" => a.chdir = Some(value(&mut i, arg)?),
            "-x" => a.takeover = Some(value(&mut i, arg)?),
            "-L" => a.localpeer = Some(value(&mut i, arg)?),
            "-m" => {
                value(&mut i, arg)?;
            }
            "-n" | "-N" => {
                let v = value(&mut i, arg)?;
                a.maxconn = Some(
                    v.parse()
                        .map_err(|_| format!("option '{arg}' expects a number, got '{v}'"))?,
                );
            }
            "-sf" | "-st" => {
                let mut any = false;
                while let Some(p) = args.get(i + 1).and_then(|s| s.parse::<i32>().ok()) {
                    i += 1;
                    any = true;
                    if arg == "-sf" {
                        a.soft_pids.push(p);
                    } else {
                        a.hard_pids.push(p);
                    }
                }
                if !any && args.get(i + 1).is_some_and(|s| !s.starts_with('-')) {
                    return Err(format!(
                        "option '{arg}' expects process ids, got '{}'",
                        args[i + 1]
                    ));
                }
            }
            "-h" | "--help" => a.help = true,
            "--" => {
                a.files.extend(args[i + 1..].iter().cloned());
                break;
            }
            d if d.starts_with("-d") => {
                if d == "-d" || d == "-db" {
                    a.foreground = true;
                }
                a.debug |= d == "-d";
                // -dM, -dV, -dr, -dW, -dS, -dG, -dk … are accepted debug knobs.
            }
            other if other.starts_with('-') => {
                return Err(format!("unknown option '{other}' (see 'weir -h')"))
            }
            other => a.files.push(other.to_string()),
        }
        i += 1;
    }
    Ok(a)
}

/// A worker's arguments from its master's: the master's own options
/// (`-W`, `-Ws`, `-S`, `-D`, `-p`, `-sf`, `-st`, `-x`, `-C`, done by the
/// master or meaningless for a worker) removed, and `-db` added so that a
/// `daemon` in the configuration keeps it in the foreground.
pub fn worker_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-W" | "-Ws" | "-D" => {}
            "-S" | "-p" | "-x" | "-C" => i += 1,
            "-sf" | "-st" => {
                while args.get(i + 1).is_some_and(|s| s.parse::<i32>().is_ok()) {
                    i += 1;
                }
            }
            "--" => {
                out.extend(args[i..].iter().cloned());
                break;
            }
            _ => out.push(arg.clone()),
        }
        i += 1;
    }
    if !out.iter().any(|a| a == "-d" || a == "-db") {
        out.insert(0, "-db".into());
    }
    out
}

pub const USAGE: &str =
    "Usage : weir [-f <cfgfile|cfgdir>]* [ -vdVD ] [ -n <maxconn> ] [ -p <pidfile> ]
        [ -c ] [ -cc <cond> ] [ -q ] [ -sf/-st <pid>* ] [ -x <unix_socket> ]
        [ -W | -Ws ] [ -S <addr>[,<opts>] ]
        -v displays version ; -vv shows known build options.
        -d enters debug mode ; -db only disables background mode.
        -dM and other -d* debug flags are accepted.
        -V enters verbose mode (disables quiet mode)
        -D goes daemon ; -C changes to <dir> before loading files.
        -W master-worker mode ; -Ws with systemd notifications.
        -S <addr>[,<opts>] binds a master CLI (master-worker mode).
        -q quiet mode : don't display messages
        -c check mode : only check config files and exit
        -cc check condition : evaluate a condition and exit (0 true, 1 false)
        -n sets the maximum total # of connections
        -L set local peer name (default to hostname)
        -p writes pids of all children to this file
        -sf/-st [pid ]* finishes/terminates old pids once listening.
        -x <unix_socket> takes the listening sockets of the process behind
           that stats socket (stats socket ... expose-fd listeners).
";

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
