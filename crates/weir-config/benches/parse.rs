//! `cargo bench -p weir-config`: configuration parsing speed, with no
//! benchmark framework (median of repeated timed batches).

use std::time::{Duration, Instant};
use weir_config::{parse, Source};

fn config(backends: usize, servers: usize) -> String {
    let mut s = String::from(
        "global\n    maxconn 40000\n    nbthread 4\n    log 127.0.0.1:514 local0\n\
         defaults\n    mode tcp\n    log global\n    option tcplog\n    timeout connect 5s\n    timeout client 50s\n    timeout server 50s\n",
    );
    for b in 0..backends {
        s.push_str(&format!(
            "frontend f{b}\n    bind 127.0.0.1:{}\n    default_backend b{b}\n",
            10000 + b
        ));
        s.push_str(&format!("backend b{b}\n    balance roundrobin\n"));
        for k in 0..servers {
            s.push_str(&format!(
                "    server s{k} 10.{}.{}.{}:8080 weight {} check inter 2s rise 2 fall 3\n",
                b / 256,
                b % 256,
                k % 250 + 1,
                k % 10 + 1
            ));
        }
    }
    s
}

fn bench(name: &str, text: &str) {
    let src = [Source {
        name: "bench.cfg".into(),
        text: text.to_string(),
    }];
    let env = |_: &str| -> Option<String> { None };
    let lines = text.lines().count();
    let mut samples = Vec::new();
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        let t = Instant::now();
        let p = parse(&src, &env);
        assert!(p.config.is_some());
        samples.push(t.elapsed());
    }
    samples.sort();
    let med = samples[samples.len() / 2];
    println!(
        "{name:<28} {lines:>7} lines  median {:>10.3} ms  {:>7.0} ns/line  ({} runs)",
        med.as_secs_f64() * 1e3,
        med.as_nanos() as f64 / lines as f64,
        samples.len()
    );
}

fn main() {
    bench("small (1 backend x 4)", &config(1, 4));
    bench("medium (100 backends x 10)", &config(100, 10));
    bench("large (1000 backends x 20)", &config(1000, 20));
}
