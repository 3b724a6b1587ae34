#!/usr/bin/env bash
# Builds weir, starts two test backends on 127.0.0.1:8001-8002 and weir on
# 127.0.0.1:8000 (tcp) and 127.0.0.1:8443 (https, with the self-signed demo
# certificate examples/quickstart.pem) in the foreground. Try: curl http://127.0.0.1:8000/?s=12 and
# curl -k https://127.0.0.1:8443/?s=12
# Ctrl-C stops weir; the backends stop with it.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "building weir and weir-bench in release mode (a first build takes a few minutes)..." >&2
cargo build --release
bin="${CARGO_TARGET_DIR:-target}/release"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for port in 8001 8002; do
    "$bin/weir-bench" serve --listen 127.0.0.1:$port --mode http >/dev/null &
    pids+=($!)
done
echo "weir listening on 127.0.0.1:8000 (tcp) and 127.0.0.1:8443 (https) -> backends 8001, 8002"
echo "try: curl http://127.0.0.1:8000/?s=12   or   curl -k https://127.0.0.1:8443/?s=12"
"$bin/weir" -db -f examples/quickstart.cfg
