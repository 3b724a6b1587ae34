#!/usr/bin/env python3
"""Multi-thread scaling: weir against haproxy at nbthread 1, 2, 4, 8.

Each proxy runs seed 003's forwarder (`balance random`, one server) with
`nbthread N` and `cpu-map auto:1/1-N 0-(N-1)`, alone on CPUs 0..N-1; the
origin (`weir-bench serve`) and the load (`weir-bench load`, or iperf3 for
`mode tcp`) share the CPUs above the largest N, half each. Figures per
scenario and thread count: operations per second, proxy CPU per operation,
and how busy the proxy's CPUs were (a proxy below ~90 % was not the
bottleneck: the load or the origin was).

    bench/scale.py                          # needs 10+ CPUs for N up to 8
    bench/scale.py --threads 1,2 --seconds 3 --scenarios ka
    bench/scale.py --bin DIR                # weir, weir-bench, haproxy, iperf3, h2load in DIR

Scenarios: ka (keep-alive, `/?s=0`), ka-track (the same requests tracked
in a stick table, `track-sc0 src` and a rate check, all from 127.0.0.1: one
entry that every thread updates), ka-track-srcs (the same from 250 client
addresses: 250 entries), close (a new connection per request,
1-byte body), tls-ka (keep-alive over TLS 1.3, ECDSA), tls-full (a full
ECDSA handshake per connection), h2 (HTTP/2 over TLS, ALPN h2, h2load
-m 10 with 10 connections per load thread), tcp (`mode tcp` bulk, 4 iperf3 pairs of 2
streams each, one `listen` per pair as seed 000's iperf runs).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import free_port, release_dir, wait_port  # noqa: E402
CLK = os.sysconf("SC_CLK_TCK")


def tool(args, name, fallback):
    if args.bin:
        return os.path.join(args.bin, name)
    return fallback if os.path.exists(fallback) else shutil.which(name)


def cpu_split(pid):
    """(user, system) CPU seconds of a process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK, int(fields[12]) / CLK


def cpu_seconds(pid):
    return sum(cpu_split(pid))


def cpus(lo, hi):
    return f"{lo}-{hi}" if hi > lo else str(lo)


def proxy_conf(n, mode, listens, crt=None, bind_extra="", extra=""):
    ssl = (f" ssl crt {crt}" if crt else "") + bind_extra
    out = (f"global\n    nbthread {n}\n    cpu-map auto:1/1-{n} 0-{n - 1}\n    maxconn 9000\n"
           f"defaults\n    mode {mode}\n    timeout client 60s\n    timeout server 60s\n"
           f"    timeout connect 2s\n")
    for i, (port, backend) in enumerate(listens):
        out += (f"listen px{i}\n    bind 127.0.0.1:{port}{ssl}\n    balance random\n"
                f"    server s1 127.0.0.1:{backend}\n" + extra)
    return out


class Proxy:
    def __init__(self, exe, n, mode, listens, crt=None, bind_extra="", extra=""):
        self.dir = tempfile.mkdtemp(prefix="scale-")
        cfg = os.path.join(self.dir, "p.cfg")
        with open(cfg, "w") as f:
            f.write(proxy_conf(n, mode, listens, crt, bind_extra, extra))
        self.p = subprocess.Popen(["taskset", "-c", cpus(0, n - 1), exe, "-db", "-q", "-f", cfg],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for port, _ in listens:
                wait_port(port)
        except RuntimeError as e:
            self.p.kill()
            raise RuntimeError(f"{exe}: {e}: {self.p.communicate()[1].decode()[-2000:]}")
        time.sleep(0.3)

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(px, cmd, seconds):
    """Runs the load `cmd` against `px`, then stops it: the load's result
    and the proxy's user and system CPU seconds meanwhile."""
    try:
        u0, s0 = cpu_split(px.p.pid)
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
        u1, s1 = cpu_split(px.p.pid)
    finally:
        px.stop()
    return out, u1 - u0, s1 - s0


def http_case(args, env, proxy, n, extra, crt=None, path="/?s=0", conf=""):
    port = free_port()
    px = Proxy(env[proxy], n, "http", [(port, env["origin_port"])], crt, extra=conf)
    scheme = "https" if crt else "http"
    cmd = ["taskset", "-c", env["load_cpus"], env["weir-bench"], "load", "--quiet", "--json", "-",
           "-t", str(env["load_threads"]), "-d", str(args.seconds)] + extra + [
           f"{scheme}://127.0.0.1:{port}{path}"]
    out, u, sy = measure(px, cmd, args.seconds)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    ops = max(r["requests"], 1)
    cpu = u + sy
    return {"ops_s": r["rps"], "us_per_op": cpu / ops * 1e6, "user_share": u / max(cpu, 1e-9),
            "busy": cpu / (r["seconds"] * n), "errors": sum(r["errors"].values())}


def h2_case(args, env, proxy, n):
    """HTTP/2 over TLS (ALPN h2), 10 streams per connection (h2load -m 10)."""
    port = free_port()
    px = Proxy(env[proxy], n, "http", [(port, env["origin_port"])], env["crt"], " alpn h2")
    t = env["load_threads"]
    cmd = ["taskset", "-c", env["load_cpus"], env["h2load"], "-D", str(args.seconds), "-t", str(t),
           "-c", str(10 * t), "-m", "10", f"https://127.0.0.1:{port}/?s=1"]
    out, u, sy = measure(px, cmd, args.seconds)
    done, failed = 0, 0
    for line in out.stdout.splitlines():
        if line.startswith("requests:"):
            done = int(line.split("succeeded")[0].split(",")[-1].strip())
            failed = int(line.split("failed")[0].split(",")[-1].strip())
    cpu = u + sy
    return {"ops_s": done / args.seconds, "us_per_op": cpu / max(done, 1) * 1e6,
            "user_share": u / max(cpu, 1e-9), "busy": cpu / (args.seconds * n),
            "errors": failed}


def tcp_case(args, env, proxy, n):
    pairs = 4
    servers, listens = [], []
    for _ in range(pairs):
        sp = free_port()
        servers.append(subprocess.Popen(["taskset", "-c", env["origin_cpus"], env["iperf3"], "-s",
                                         "-p", str(sp)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        listens.append((free_port(), sp))
    for _, sp in listens:
        wait_port(sp)
    px = Proxy(env[proxy], n, "tcp", listens)
    try:
        c0 = cpu_seconds(px.p.pid)
        t0 = time.time()
        clients = [subprocess.Popen(["taskset", "-c", env["load_cpus"], env["iperf3"], "-c",
                                     "127.0.0.1", "-p", str(p), "-P", "2", "-t", str(args.seconds),
                                     "-J"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True) for p, _ in listens]
        bits = 0.0
        for c in clients:
            out, _ = c.communicate(timeout=args.seconds + 60)
            j = json.loads(out)
            if "error" in j:
                raise RuntimeError(f"iperf3: {j['error']}")
            bits += j["end"]["sum_received"]["bytes"] * 8
        secs = time.time() - t0
        c1 = cpu_seconds(px.p.pid)
    finally:
        px.stop()
        for s in servers:
            s.kill()
            s.wait()
    gb = bits / 8 / 1e9
    return {"ops_s": bits / args.seconds / 1e9, "us_per_op": (c1 - c0) / max(gb, 1e-9) * 1e3,
            "busy": (c1 - c0) / (secs * n), "errors": 0}


def make_cert(d):
    k, c = os.path.join(d, "ecdsa.key"), os.path.join(d, "ecdsa.crt")
    subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "30", "-subj", "/CN=bench.test",
                    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-keyout", k, "-out", c], check=True, capture_output=True)
    pem = os.path.join(d, "ecdsa.pem")
    with open(pem, "w") as f:
        f.write(open(c).read() + open(k).read())
    return pem


# Issue 22's tracked request (bench/run's S8): one counter per request and a
# rate check that never denies.
TRACKED = ("    stick-table type ip size 100k expire 30s store http_req_rate(10s)\n"
           "    http-request track-sc0 src\n"
           "    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1000000000 }\n")
# 250 client addresses (127.0.1.1-250): 250 entries instead of one shared by every thread.
SOURCES = ",".join(f"127.0.1.{i}" for i in range(1, 251))

CASES = {
    "ka": ("req/s", "µs CPU/req", lambda a, e, p, n: http_case(a, e, p, n, ["-c", "400"])),
    "ka-track": ("req/s", "µs CPU/req",
                 lambda a, e, p, n: http_case(a, e, p, n, ["-c", "400"], conf=TRACKED)),
    "ka-track-srcs": ("req/s", "µs CPU/req",
                      lambda a, e, p, n: http_case(a, e, p, n, ["-c", "400", "--src", SOURCES],
                                                   conf=TRACKED)),
    "close": ("req/s", "µs CPU/req",
              lambda a, e, p, n: http_case(a, e, p, n, ["-c", "200", "--close"], path="/?s=1")),
    "tls-ka": ("req/s", "µs CPU/req",
               lambda a, e, p, n: http_case(a, e, p, n, ["-c", "400", "--sni", "bench.test"],
                                            crt=e["crt"])),
    "tls-full": ("conn/s", "µs CPU/conn",
                 lambda a, e, p, n: http_case(a, e, p, n, ["-c", "200", "--close", "--tls-full",
                                                           "--sni", "bench.test"],
                                              crt=e["crt"], path="/?s=1")),
    "h2": ("req/s", "µs CPU/req", h2_case),
    "tcp": ("Gbit/s", "ms CPU/GB", tcp_case),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--scenarios", default="ka,close,tls-ka,tls-full,h2,tcp")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--bin", help="directory holding weir, weir-bench, haproxy and iperf3")
    ap.add_argument("--crt", help="an ECDSA PEM (chain and key) for the TLS cases")
    ap.add_argument("--out", help="directory for results.json and summary.md")
    args = ap.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    scenarios = args.scenarios.split(",")
    ncpu = os.cpu_count()
    top = max(threads)
    spare = ncpu - top
    shared = spare < 2
    if shared:
        print(f"# only {ncpu} CPUs: proxy, origin and load share them (a smoke run, "
              "not a measurement)", file=sys.stderr)
    half = max(spare // 2, 1)
    env = {
        "weir": tool(args, "weir", os.path.join(release_dir(), "weir")),
        "weir-bench": tool(args, "weir-bench", os.path.join(release_dir(), "weir-bench")),
        "haproxy": tool(args, "haproxy", "/usr/sbin/haproxy"),
        "iperf3": tool(args, "iperf3", "/usr/bin/iperf3"),
        "h2load": tool(args, "h2load", "/usr/bin/h2load"),
        "origin_cpus": cpus(top, top + half - 1) if not shared else cpus(0, ncpu - 1),
        "load_cpus": cpus(top + half, ncpu - 1) if not shared else cpus(0, ncpu - 1),
        "load_threads": max(ncpu - top - half, 1),
    }
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    certdir = tempfile.mkdtemp(prefix="scale-certs-")
    env["crt"] = args.crt or make_cert(certdir)
    env["origin_port"] = free_port()
    origin = subprocess.Popen(["taskset", "-c", env["origin_cpus"], env["weir-bench"], "serve",
                               "--listen", f"127.0.0.1:{env['origin_port']}", "--mode", "http",
                               "--threads", str(half)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []
    try:
        wait_port(env["origin_port"])
        print(f"# {ncpu} CPUs; proxy on 0..N-1, origin on {env['origin_cpus']}, "
              f"load on {env['load_cpus']}", flush=True)
        for sc in scenarios:
            unit, cost, fn = CASES[sc]
            for n in threads:
                for rnd in range(args.rounds):
                    for p in (["weir", "haproxy"] if rnd % 2 == 0 else ["haproxy", "weir"]):
                        r = fn(args, env, p, n)
                        r.update(scenario=sc, threads=n, proxy=p, round=rnd)
                        results.append(r)
                        print(f"{sc:8} N={n:<2} {p:8} {r['ops_s']:12.1f} {unit:7} "
                              f"{r['us_per_op']:9.2f} {cost:12} busy {r['busy'] * 100:5.1f} %  "
                              f"user {r.get('user_share', 0) * 100:4.1f} %  errors {r['errors']}", flush=True)
    finally:
        origin.kill()
        origin.wait()
        shutil.rmtree(certdir, ignore_errors=True)
    lines = summary(results, scenarios, threads)
    print("\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")


def summary(results, scenarios, threads):
    def mean(sc, n, p, k):
        xs = [r[k] for r in results if (r["scenario"], r["threads"], r["proxy"]) == (sc, n, p)]
        return sum(xs) / len(xs) if xs else float("nan")

    out = ["| scenario | N | weir | haproxy | weir/haproxy rate | weir cost | haproxy cost | "
           "cost ratio | busy weir / haproxy |", "|---|---|---|---|---|---|---|---|---|"]
    for sc in scenarios:
        unit, cost, _ = CASES[sc]
        for n in threads:
            w, h = mean(sc, n, "weir", "ops_s"), mean(sc, n, "haproxy", "ops_s")
            wc, hc = mean(sc, n, "weir", "us_per_op"), mean(sc, n, "haproxy", "us_per_op")
            wb, hb = mean(sc, n, "weir", "busy"), mean(sc, n, "haproxy", "busy")
            out.append(f"| {sc} ({unit}, {cost}) | {n} | {w:.1f} | {h:.1f} | {w / h:.2f} | "
                       f"{wc:.2f} | {hc:.2f} | {wc / hc:.2f} | {wb * 100:.0f} / {hb * 100:.0f} % |")
    tracked = [sc for sc in scenarios if sc.startswith("ka-track")]
    if "ka" in scenarios and tracked:
        out += ["", "| tracked / untracked | N | weir rate | haproxy rate | weir cost | haproxy cost |",
                "|---|---|---|---|---|---|"]
        for sc in tracked:
            for n in threads:
                r = [mean(sc, n, p, k) / mean("ka", n, p, k)
                     for k in ("ops_s", "us_per_op") for p in ("weir", "haproxy")]
                out.append(f"| {sc} / ka | {n} | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.3f} |")
    return out


if __name__ == "__main__":
    main()
