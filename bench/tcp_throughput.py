#!/usr/bin/env python3
"""mode tcp bulk throughput through weir and Debian's haproxy, side by side.

iperf3 -P 1 and -P 4 through each proxy (nbthread 1, pinned alone on one CPU;
iperf3 client and server on the other), with and without splice, in
alternating rounds (A/B/A/B) so drift hits both alike. Reports Gbit/s and the
proxy's CPU seconds per GB (utime+stime from /proc/PID/stat), and the
weir/haproxy ratio of each. Results go to bench/results/.

usage: bench/tcp_throughput.py [--seconds N] [--rounds N] [--quick]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import ROOT, free_port, need, release_dir, wait_port

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def config(port, sport, splice, extra=""):
    opts = "    option splice-request\n    option splice-response\n" if splice else ""
    return (
        f"global\n    nbthread 1\n    maxconn 1000\n{extra}"
        "defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n"
        f"listen iperf\n    bind 127.0.0.1:{port}\n{opts}    server s1 127.0.0.1:{sport}\n"
    )


def run_one(proxy, splice, streams, seconds, sport, cpus):
    port = free_port()
    d = tempfile.mkdtemp(prefix="weir-bench-")
    cfg = os.path.join(d, "p.cfg")
    with open(cfg, "w") as f:
        extra = os.environ.get("WEIR_EXTRA_GLOBAL", "") if proxy == "weir" else ""
        f.write(config(port, sport, splice, extra))
    binary = os.path.join(release_dir(), "weir") if proxy == "weir" else "haproxy"
    p = subprocess.Popen(["taskset", "-c", cpus[0], binary, "-db", "-q", "-f", cfg],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        c0 = cpu_seconds(p.pid)
        out = subprocess.run(["taskset", "-c", cpus[1], "iperf3", "-c", "127.0.0.1", "-p", str(port),
                              "-t", str(seconds), "-P", str(streams), "-J"],
                             capture_output=True, text=True, timeout=seconds + 30)
        c1 = cpu_seconds(p.pid)
        res = json.loads(out.stdout)
        end = res["end"]["sum_received"]
        nbytes = end["bytes"]
        gbps = end["bits_per_second"] / 1e9
        cpu = c1 - c0
        return {"proxy": proxy, "splice": splice, "streams": streams, "gbit_s": gbps,
                "bytes": nbytes, "cpu_s": cpu, "cpu_s_per_gb": cpu / (nbytes / 1e9)}
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="2 s runs, 1 round")
    ap.add_argument("--cpus", default="0,1", help="proxy CPU,load CPU")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.rounds = 2, 1
    need("iperf3", "iperf3")
    need("haproxy", "haproxy")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "weir"], cwd=ROOT, check=True)
    cpus = args.cpus.split(",")
    sport = free_port()
    srv = subprocess.Popen(["taskset", "-c", cpus[1], "iperf3", "-s", "-B", "127.0.0.1", "-p", str(sport)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []
    try:
        wait_port(sport)
        time.sleep(0.2)
        for r in range(args.rounds):
            for splice in (False, True):
                for streams in (1, 4):
                    order = ("weir", "haproxy") if r % 2 == 0 else ("haproxy", "weir")
                    for proxy in order:
                        res = run_one(proxy, splice, streams, args.seconds, sport, cpus)
                        res["round"] = r
                        results.append(res)
                        print(f"round {r} {proxy:8} splice={str(splice):5} -P {streams}: "
                              f"{res['gbit_s']:6.2f} Gbit/s  {res['cpu_s_per_gb']:.3f} CPU s/GB", file=sys.stderr)
    finally:
        srv.terminate()
        srv.wait()
    os.makedirs(os.path.join(ROOT, "bench/results"), exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(ROOT, f"bench/results/tcp-throughput-{stamp}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)

    def avg(proxy, splice, streams, key):
        xs = [x[key] for x in results if x["proxy"] == proxy and x["splice"] == splice and x["streams"] == streams]
        return sum(xs) / len(xs)

    print("| splice | streams | weir Gbit/s | haproxy Gbit/s | weir CPU s/GB | haproxy CPU s/GB | CPU/GB ratio weir/haproxy |")
    print("|---|---|---|---|---|---|---|")
    for splice in (False, True):
        for streams in (1, 4):
            wg, hg = avg("weir", splice, streams, "gbit_s"), avg("haproxy", splice, streams, "gbit_s")
            wc, hc = avg("weir", splice, streams, "cpu_s_per_gb"), avg("haproxy", splice, streams, "cpu_s_per_gb")
            print(f"| {'on' if splice else 'off'} | {streams} | {wg:.2f} | {hg:.2f} | {wc:.3f} | {hc:.3f} | {wc / hc:.2f} |")
    print(f"\nraw results: {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
