//! weir's integration tests, one binary: each module starts the real `weir`
//! binary on real sockets beside real clients and servers (see `common`).
//! One binary links once; `cargo test --test suite http::` runs one module.

// Signals, limits and socket options through libc, each with its SAFETY.
#![allow(unsafe_code)]

mod accept_rates;
mod admin_logs;
mod audit;
mod balancing;
mod byte_counts;
mod cache;
mod case_adjust;
mod check_scripts;
mod cli;
mod close_options;
mod common;
mod compression;
mod conn_errors;
mod converters_differential;
mod counters_differential;
mod default_path;
mod dynamic_servers;
mod email_alerts;
mod external_checks;
mod fcgi;
mod fetches_differential;
mod forwarding;
mod framing;
mod h2;
mod h2_servers;
mod h2_websocket;
mod health;
mod http;
mod http_abort;
mod http_actions_differential;
mod http_checks;
mod http_differential;
mod http_rules;
mod http_splice;
mod httplog_differential;
mod idle_sleep;
mod independent_streams;
mod iperf;
mod jwt;
mod lifecycle;
mod log_forward;
mod logging;
mod lua;
mod master_worker;
mod netns;
mod nginx_origin;
mod observe;
mod package;
mod peers_interop;
mod prometheus;
mod proxy_protocol;
mod resolvers;
mod reuse_keys;
mod rewrite_room;
mod runtime_api;
mod seeds;
mod server_state;
mod set_server;
mod smuggling;
mod smuggling_h2;
mod socks4;
mod spoe;
mod stats_page;
mod stick_tables;
mod stickiness;
mod tcp_inspect;
mod tcp_rules;
mod tcp_sleep;
mod tcp_to_http;
mod tls;
mod tls_certs;
mod tls_generate;
mod tls_ocsp;
mod tls_records;
mod tls_runtime;
mod tls_servers;
mod tls_v1;
mod use_server;
mod variables;


