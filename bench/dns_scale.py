#!/usr/bin/env python3
"""Resolver scale: 1,000 servers from SRV records, re-resolved every second.

For weir and Debian's haproxy in the same run, on the same CPU (the proxy
on CPU 0; dnsmasq, the origin and the load on CPU 1):
  - CPU per resolution round: the proxy's CPU time over a window with no
    traffic, divided by the rounds in it (`hold valid 1s`);
  - the worst request latency while resolutions run: fixed-rate keep-alive
    requests (weir-bench load -R) through a listen section of the same
    process, percentiles to the maximum;
  - servers filled: how many of the 1,000 slots have an address.

A real name server answers (dnsmasq, `edns-packet-max=65535`, the SRV
answer with its 1,000 additional A records in one datagram), and both
proxies take `accepted_payload_size 65535`.

Usage: bench/dns_scale.py [--servers 1000] [--seconds 20] [--rate 500]
Prints a Markdown table (and weir/haproxy ratios); exits non-zero when a
proxy did not fill its slots.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import free_port  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def ask(sock, line):
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    c.sendall(line.encode())
    out = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        out += b
    c.close()
    return out.decode()


def filled(sock):
    lines = ask(sock, "show servers state pool\n").splitlines()[2:]
    return sum(1 for l in lines if l.split(" ")[4:5] != ["-"] and l.strip())


def wait(what, f, timeout):
    end = time.time() + timeout
    while time.time() < end:
        v = f()
        if v:
            return v
        time.sleep(0.1)
    raise SystemExit(f"dns_scale: timed out waiting for {what}")


def start_dnsmasq(tmp, n):
    port = free_port()
    hosts = os.path.join(tmp, "hosts")
    os.makedirs(hosts, exist_ok=True)
    with open(os.path.join(hosts, "a"), "w") as f:
        for i in range(n):
            f.write(f"127.1.{i // 250}.{i % 250 + 1} node{i}.big.test\n")
    conf = os.path.join(tmp, "dnsmasq.conf")
    with open(conf, "w") as f:
        f.write(f"port={port}\nlisten-address=127.0.0.1\nbind-interfaces\nno-resolv\nno-hosts\n"
                f"hostsdir={hosts}\nuser=root\nlocal=/test/\nedns-packet-max=65535\n")
        for i in range(n):
            f.write(f"srv-host=_http._tcp.big.test,node{i}.big.test,{20000 + i},0,100\n")
    p = subprocess.Popen(["taskset", "-c", "1", "dnsmasq", "-k", "-C", conf],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait("dnsmasq", lambda: subprocess.run(["ss", "-ltn", f"sport = :{port}"],
                                           capture_output=True, text=True).stdout.count("LISTEN"), 10)
    return p, port


def config(sock, ns, n, lat_port, origin):
    return f"""global
    stats socket {sock} level admin
    nbthread 1
resolvers dns
    nameserver ns1 127.0.0.1:{ns}
    accepted_payload_size 65535
    hold valid 1s
    timeout resolve 1s
    timeout retry 1s
defaults
    mode http
    timeout connect 1s
    timeout client 10s
    timeout server 10s
listen lat
    bind 127.0.0.1:{lat_port}
    server o 127.0.0.1:{origin}
backend pool
    server-template s {n} _http._tcp.big.test resolvers dns init-addr none
"""


def run_proxy(name, binary, tmp, ns, n, origin, seconds, rate):
    sock = os.path.join(tmp, f"{name}.sock")
    lat = free_port()
    cfg = os.path.join(tmp, f"{name}.cfg")
    with open(cfg, "w") as f:
        f.write(config(sock, ns, n, lat, origin))
    p = subprocess.Popen(["taskset", "-c", "0", binary, "-db", "-f", cfg],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(f"{name} to listen", lambda: os.path.exists(sock), 10)
        got = wait(f"{name} to fill {n} slots", lambda: filled(sock) >= n and n, 30)
        c0, t0 = cpu_seconds(p.pid), time.time()
        time.sleep(seconds)
        cpu = cpu_seconds(p.pid) - c0
        rounds = (time.time() - t0) / 1.0
        load = subprocess.run(
            ["taskset", "-c", "1", os.path.join(ROOT, "target/release/weir-bench"), "load",
             "-c", "8", "-d", str(seconds), "-R", str(rate), "--json", "-", "--quiet",
             f"http://127.0.0.1:{lat}/?s=0"],
            capture_output=True, text=True, check=True)
        j = json.loads(load.stdout.strip().splitlines()[-1])
        return {
            "filled": filled(sock),
            "cpu_ms_per_round": 1000 * cpu / rounds,
            "rss_kb": int(open(f"/proc/{p.pid}/status").read().split("VmRSS:")[1].split()[0]),
            "p50_us": j["latency_us"]["50"],
            "p99_us": j["latency_us"]["99"],
            "p99.99_us": j["latency_us"]["99.99"],
            "max_us": j["latency_us"]["max"],
            "errors": sum(j["errors"].values()),
            "first_fill": got,
        }
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument("--weir", default=os.path.join(ROOT, "target/release/weir"))
    args = ap.parse_args()
    for tool in ("dnsmasq", "haproxy", "taskset"):
        if not shutil.which(tool):
            raise SystemExit(f"dns_scale: {tool} is missing (apt-get install dnsmasq-base haproxy util-linux)")
    if not os.path.exists(args.weir):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "weir", "-p", "weir-bench"],
                       cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="dns-scale-")
    dns, ns = start_dnsmasq(tmp, args.servers)
    origin_port = free_port()
    origin = subprocess.Popen(["taskset", "-c", "1", os.path.join(ROOT, "target/release/weir-bench"),
                               "serve", "--listen", f"127.0.0.1:{origin_port}", "--mode", "http"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        res = {}
        for name, binary in (("weir", args.weir), ("haproxy", shutil.which("haproxy"))):
            res[name] = run_proxy(name, binary, tmp, ns, args.servers, origin_port,
                                  args.seconds, args.rate)
    finally:
        for p in (dns, origin):
            p.kill()
            p.wait()
    keys = ["filled", "cpu_ms_per_round", "rss_kb", "p50_us", "p99_us", "p99.99_us", "max_us", "errors"]
    print(f"| {args.servers} SRV servers, hold valid 1s, {args.rate} req/s | weir | haproxy | weir/haproxy |")
    print("|---|---|---|---|")
    for k in keys:
        w, h = res["weir"][k], res["haproxy"][k]
        ratio = f"{w / h:.2f}" if h else "-"
        fmt = (lambda v: f"{v:.2f}") if isinstance(w, float) else str
        print(f"| {k} | {fmt(w)} | {fmt(h)} | {ratio} |")
    bad = [n for n, r in res.items() if r["filled"] < args.servers]
    if bad:
        raise SystemExit(f"dns_scale: {', '.join(bad)} did not fill every slot")


if __name__ == "__main__":
    main()
