#!/usr/bin/env python3
"""tools/pgo-train.py — the workload an instrumented weir runs so that
tools/pgo-build can lay its code out by use (profile-guided optimisation).

It is a general proxy workload, not a benchmark's: one configuration with a
rate-limited HTTP frontend (stick table, ACLs, header rules, two backends
balanced `random` and `roundrobin`, `option forwardfor`, logs over UDP), a
TLS frontend (ECDSA certificate, ALPN) and a `mode tcp` listener, driven by
weir-bench: keep-alive and close requests of a few sizes, TLS full and
resumed handshakes and kept TLS connections, and HTTP through the TCP
listener. About 25 seconds; weir is stopped with SIGTERM so that it writes
its profile.

usage: tools/pgo-train.py WEIR WEIR_BENCH WORKDIR
"""

import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
from benchlib import free_port, wait_port  # noqa: E402

CONFIG = """global
    nbthread 2
    maxconn 4000
    stats socket {dir}/stats.sock level admin
    log 127.0.0.1:{log} local0
defaults
    mode http
    log global
    option httplog
    timeout client 10s
    timeout server 10s
    timeout connect 2s
frontend web
    bind 127.0.0.1:{web}
    stick-table type ip size 100k expire 30s store http_req_rate(10s),conn_cur
    http-request track-sc0 src
    http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt 1000000000 }}
    acl api path_beg /api
    http-request set-header X-Forwarded-Proto http
    http-response set-header X-Served-By weir
    use_backend rr if api
    default_backend random
frontend tls
    bind 127.0.0.1:{tls} ssl crt {dir}/ecdsa.pem alpn h2,http/1.1
    http-request set-header X-Forwarded-Proto https
    default_backend random
listen tcp
    mode tcp
    option tcplog
    bind 127.0.0.1:{tcp}
    server s1 127.0.0.1:{origin}
backend random
    balance random
    server s1 127.0.0.1:{origin}
backend rr
    balance roundrobin
    option forwardfor
    server s1 127.0.0.1:{origin}
    server s2 127.0.0.1:{origin}
"""


def certificate(d):
    key, crt = os.path.join(d, "ecdsa.key"), os.path.join(d, "ecdsa.crt")
    subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=pgo.test",
                    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    with open(os.path.join(d, "ecdsa.pem"), "w") as f:
        f.write(open(crt).read() + open(key).read())


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    weir, bench, d = sys.argv[1:]
    os.makedirs(d, exist_ok=True)
    certificate(d)
    logs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # receives, never read
    logs.bind(("127.0.0.1", 0))
    ports = dict(web=free_port(), tls=free_port(), tcp=free_port(), origin=free_port(),
                 log=logs.getsockname()[1], dir=d)
    cfg = os.path.join(d, "train.cfg")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(**ports))
    origin = subprocess.Popen([bench, "serve", "--listen", f"127.0.0.1:{ports['origin']}",
                               "--threads", "1"], stdout=subprocess.DEVNULL)
    proxy = None
    try:
        wait_port(ports["origin"], proc=origin)
        proxy = subprocess.Popen([weir, "-db", "-q", "-f", cfg], stdout=subprocess.DEVNULL)
        for p in ("web", "tls", "tcp"):
            wait_port(ports[p], timeout=30, proc=proxy)  # instrumented, it starts slower
        web, tls, tcp = (f"127.0.0.1:{ports[p]}" for p in ("web", "tls", "tcp"))
        loads = [
            (["-c", "50", "-d", "4"], f"http://{web}/?s=0"),
            (["-c", "50", "-d", "3"], f"http://{web}/api/items?s=1"),
            (["-c", "20", "-d", "2"], f"http://{web}/?s=16384"),
            (["-c", "20", "-d", "2", "--close"], f"http://{web}/?s=1"),
            (["-c", "50", "-d", "3"], f"https://{tls}/?s=1"),
            (["-c", "10", "-d", "2", "--close", "--tls-full"], f"https://{tls}/?s=1"),
            (["-c", "10", "-d", "2", "--close"], f"https://{tls}/?s=1"),
            (["-c", "50", "-d", "2"], f"http://{tcp}/?s=1"),
            (["-c", "20", "-d", "2", "--close"], f"http://{tcp}/?s=1"),
        ]
        out = os.path.join(d, "load.json")
        for args, url in loads:
            subprocess.run([bench, "load", "--quiet", "--json", out] + args + [url], check=True,
                           stdout=subprocess.DEVNULL, timeout=60)
            with open(out) as f:
                r = json.load(f)
            # A workload that fails trains the error paths: refuse it.
            if r["requests"] == 0 or sum(r["errors"].values()):
                sys.exit(f"training load {' '.join(args)} {url}: {r['requests']} requests, errors {r['errors']}")
        proxy.terminate()
        if proxy.wait(timeout=30) != 0:
            sys.exit(f"weir exited with {proxy.returncode}")
        proxy = None
    finally:
        if proxy is not None:
            proxy.kill()
            proxy.wait()
        origin.terminate()
        origin.wait()


if __name__ == "__main__":
    main()
