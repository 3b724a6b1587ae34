#!/usr/bin/env python3
"""Requests lost to reloads, weir and Debian's haproxy side by side.

For each proxy: 20 clients (`weir-bench load -c 20`) send requests through
it, with a new connection per request (`--close`) and with keep-alive,
while it is reloaded 10 times by each method, one every --interval seconds:

  - master-worker: started with `-W`, reloaded with SIGUSR2 to the master;
  - -sf: a new process started with `-sf <old pid>` (no `-x`), as scripts in
    the wild do it.

The figure is the number of failed requests (connection refused or reset,
a cut answer, a timeout, a non-200 status) per run; the goal is 0 for weir
in every configuration. Results go to bench/results/reloads-<date>.json.

usage: bench/reloads.py [--reloads N] [--interval S] [--clients N]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchlib import ROOT, free_port, need, release_dir, wait_port


def config(port, origin):
    return (
        "global\n    maxconn 2000\n"
        "defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n"
        "    timeout server 30s\n    timeout http-keep-alive 10s\n"
        f"frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n"
        f"backend be\n    server s1 127.0.0.1:{origin}\n"
    )


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def stop_all(procs):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    end = time.time() + 10
    for p in procs:
        try:
            p.wait(max(0.1, end - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_one(binary, method, keepalive, args, origin, bench):
    port = free_port()
    d = tempfile.mkdtemp(prefix="weir-reload-")
    cfg = os.path.join(d, "p.cfg")
    with open(cfg, "w") as f:
        f.write(config(port, origin))
    log = open(os.path.join(d, "proxy.log"), "w")
    start = [binary, "-db", "-f", cfg]
    procs = []
    if method == "master-worker":
        procs.append(subprocess.Popen([binary, "-W", "-db", "-f", cfg],
                                      stdout=log, stderr=log))
    else:
        procs.append(subprocess.Popen(start, stdout=log, stderr=log))
    wait_port(port)
    seconds = args.reloads * args.interval + 2
    out = os.path.join(d, "load.json")
    cmd = [bench, "load", "-c", str(args.clients), "-d", str(seconds), "--timeout", "5",
           "--json", out, "--quiet"]
    if not keepalive:
        cmd.append("--close")
    load = subprocess.Popen(cmd + [f"http://127.0.0.1:{port}/?s=0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    for _ in range(args.reloads):
        if method == "master-worker":
            procs[0].send_signal(signal.SIGUSR2)
        else:
            old = procs[-1].pid
            procs.append(subprocess.Popen(start + ["-sf", str(old)], stdout=log, stderr=log))
        time.sleep(args.interval)
    load.wait()
    stop_all(procs)
    with open(out) as f:
        r = json.load(f)
    errors = sum(r["errors"].values())
    return {"requests": r["requests"], "failed": errors, "errors": r["errors"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reloads", type=int, default=10)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--clients", type=int, default=20)
    args = ap.parse_args()
    need("haproxy", "haproxy")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "weir", "-p", "weir-bench"],
                   cwd=ROOT, check=True)
    weir = os.path.join(release_dir(), "weir")
    bench = os.path.join(release_dir(), "weir-bench")
    haproxy = shutil.which("haproxy")
    origin = free_port()
    srv = subprocess.Popen([bench, "serve", "--listen", f"127.0.0.1:{origin}", "--mode", "http"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []
    try:
        wait_port(origin)
        for method in ["master-worker", "-sf"]:
            for keepalive in [False, True]:
                for name, binary in [("weir", weir), ("haproxy", haproxy)]:
                    r = run_one(binary, method, keepalive, args, origin, bench)
                    r.update(proxy=name, method=method,
                             connections="keep-alive" if keepalive else "new per request")
                    print(f"{name:8} {method:14} {r['connections']:16} "
                          f"requests {r['requests']:7}  failed {r['failed']:5}  {r['errors']}",
                          file=sys.stderr)
                    results.append(r)
    finally:
        srv.terminate()
        srv.wait()
    print(f"\n{args.reloads} reloads per run, one every {args.interval} s, "
          f"{args.clients} clients\n")
    print("| reloads | connections | weir failed / requests | haproxy failed / requests |")
    print("|---|---|---|---|")
    for method in ["master-worker", "-sf"]:
        for conns in ["new per request", "keep-alive"]:
            row = {r["proxy"]: r for r in results
                   if r["method"] == method and r["connections"] == conns}
            w, h = row["weir"], row["haproxy"]
            print(f"| {method} | {conns} | {w['failed']} / {w['requests']} "
                  f"| {h['failed']} / {h['requests']} |")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    path = os.path.join(ROOT, "bench", "results",
                        time.strftime("reloads-%Y%m%d-%H%M%S.json"))
    with open(path, "w") as f:
        json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
