#!/usr/bin/env bash
# Load test for `onepool serve`: starts the server on a free loopback port, waits until ready,
# drives POST /v2/models/NAME/infer with wrk for a bounded time, and prints throughput, p50/p99
# latency, errors (HTTP status >= 400 + socket errors) and the server's RSS before and after.
# Exits non-zero when any request failed.
#
# usage: bench/serve_load/serve_load.sh [MODEL.onnx] [--duration S] [--connections N]
#          [--threads N] [--sessions N] [--cli PATH] [--dim name=value]...
# defaults: build/models/mlp.onnx, 10 s, 4 connections, 2 wrk threads, 2 sessions,
#           build/onepool, --dim batch=1
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
model="$root/build/models/mlp.onnx"
cli="$root/build/onepool"
duration=10 connections=4 threads=2 sessions=2
dims=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    --dim) dims+=(--dim "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) model="$1"; shift ;;
  esac
done
[[ ${#dims[@]} -eq 0 ]] && dims=(--dim batch=1)
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' not found (apt-get install $tool)" >&2; exit 2; }
done
[[ -x "$cli" ]] || { echo "error: CLI '$cli' not found; build it or pass --cli" >&2; exit 2; }
[[ -f "$model" ]] || { echo "error: model '$model' not found" >&2; exit 2; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Step 1. Start the server on port 0 and read the bound port from its log.
"$cli" serve "$model" --port 0 --sessions "$sessions" "${dims[@]}" >"$work/server.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 600); do
  url="$(sed -n 's|^serving: *\(http://[^/]*\)/.*|\1|p' "$work/server.log")"
  [[ -n "$url" ]] && curl -sf "$url/v2/health/ready" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "error: server exited" >&2; exit 1; }
  url=""; sleep 0.1
done
[[ -n "$url" ]] || { cat "$work/server.log" >&2; echo "error: server not ready after 60 s" >&2; exit 1; }
name="$(basename "$model" .onnx)"
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }

# Step 2. Build a request body from the model metadata (every input filled with a ramp).
curl -sf "$url/v2/models/$name" | python3 -c '
import json, sys
meta = json.load(sys.stdin)
inputs = []
for tensor in meta["inputs"]:
    count = 1
    for dim in tensor["shape"]:
        count *= dim
    dtype = tensor["datatype"]
    if dtype == "BOOL":
        data = [i % 2 == 0 for i in range(count)]
    elif dtype.startswith("FP"):
        data = [(i % 17) / 17.0 for i in range(count)]
    else:
        data = [i % 7 for i in range(count)]
    inputs.append({"name": tensor["name"], "shape": tensor["shape"], "datatype": dtype, "data": data})
json.dump({"inputs": inputs}, sys.stdout)
' >"$work/body.json"
status="$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary "@$work/body.json" "$url/v2/models/$name/infer")"
[[ "$status" == 200 ]] || { echo "error: a single infer request returned HTTP $status" >&2; exit 1; }

# Step 3. Load.
rss_before="$(rss_kb)"
echo "server:      $url  model $name  sessions $sessions  body $(stat -c %s "$work/body.json") B"
echo "load:        wrk ${duration}s, $connections connections, $threads threads"
SERVE_LOAD_BODY="$work/body.json" wrk -t "$threads" -c "$connections" -d "${duration}s" \
  --latency -s "$here/serve_load.lua" "$url/v2/models/$name/infer" >"$work/wrk.log" 2>&1 || true
rss_after="$(rss_kb)"
result="$(grep '^RESULT' "$work/wrk.log" || true)"
[[ -n "$result" ]] || { cat "$work/wrk.log" >&2; echo "error: wrk printed no result" >&2; exit 1; }
eval "${result#RESULT }"

# Step 4. Report.
awk -v n="$requests" -v us="$duration_us" -v p50="$p50_us" -v p99="$p99_us" 'BEGIN {
  printf "throughput:  %.1f requests/s (%d requests)\n", n / (us / 1e6), n
  printf "latency:     p50 %.3f ms  p99 %.3f ms\n", p50 / 1000, p99 / 1000 }'
errors=$((status_errors + socket_errors))
echo "errors:      $errors (HTTP status >= 400: $status_errors, socket: $socket_errors)"
echo "server RSS:  before $((rss_before / 1024)) MiB ($rss_before kB), after $((rss_after / 1024)) MiB ($rss_after kB)"
[[ "$errors" -eq 0 && "$requests" -gt 0 ]]
