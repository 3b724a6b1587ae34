//! weir-bench: weir's benchmark tools.
//! - `serve`: the test backend (HTTP/1.1 origin, echo, sink, source);
//! - `load`: the HTTP/1.1 load generator (clear or TLS) with latency
//!   percentiles;
//! - `idle`: opens and holds many idle connections.

#![forbid(unsafe_code)]

mod args;
mod h2server;
mod http1;
mod idle;
mod load;
mod server;
mod tls;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

const USAGE: &str = "usage:
  weir-bench serve --listen <ip:port> [--mode http|echo|sink|source|h2] [--threads N]
  weir-bench load  [-c conns] [-t threads] [-d secs] [-n requests] [-R rate] [-s ramp]
                   [--close] [--src ip,ip] [--timeout secs] [--json FILE|-] [--quiet]
                   [--tls-full] [--tls12] [--sni name] http[s]://host:port/path
  weir-bench idle  [-c conns] [-d hold] [--src ip,ip] [--request /path | --pending /path]
                   [--tls [--sni name]] [--h2 (with --request)] <ip:port>
";

fn main() {
    let mut words: Vec<String> = std::env::args().skip(1).collect();
    if words.is_empty() || words[0] == "-h" || words[0] == "--help" {
        eprint!("{USAGE}");
        std::process::exit(if words.is_empty() { 2 } else { 0 });
    }
    let cmd = words.remove(0);
    let mut a = args::Args::new(words);
    let r = match cmd.as_str() {
        "serve" => server::main(&mut a),
        "load" => load::main(&mut a),
        "idle" => idle::main(&mut a),
        other => Err(format!("unknown command '{other}'")),
    };
    if let Err(e) = r {
        eprintln!("weir-bench: {e}\n{USAGE}");
        std::process::exit(2);
    }
}
