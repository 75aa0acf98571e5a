#!/usr/bin/env bash
# Authentication on and off in one run: what verifying tokens costs the
# collab API and the WebSocket transport (issue #12's target: auth on
# keeps at least 0.95× the steps/s of auth off, since a token is verified
# once and then cached, and a WebSocket's messages are never verified).
#
#   bash bench/auth.sh     (about 4 minutes on the shared 2-core machine)
#
# Builds pmauthority, collabbench and wsbench, writes an HS256 secret (48
# random bytes, base64) and mints a token (sub "bench", "*=edit", 1 hour)
# in a temporary folder, then runs 3 rounds, each measuring auth off and
# auth on (the order alternates from round to round):
#
# (a) collab POST steps/s: `collabbench load`, 1 document × 8 editors
#     typing over the long-poll HTTP API (POST steps; on 409 GET the
#     events and POST again), 1 s warm-up and 20 s measured, against a
#     `pmauthority serve --store memory` started for the round, with or
#     without --jwt-secret-file; with auth every request carries
#     "Authorization: Bearer TOKEN". The server is pinned to CPU 0 and the
#     load to CPU 1 (taskset), as bench/collab/run.sh's pinned placement.
# (b) WebSocket steps/s: `wsbench fanout` (it starts its own server,
#     unpinned), 100 editors on one document, 10 of them typing 20 steps/s
#     each, 2 s warm-up and 10 s measured; with auth the server gets
#     --jwt-secret-file and every hello the token. Its steps/s is the
#     offered rate (200/s) as long as the server keeps up: the figures that
#     can move are the delivery latency and the server CPU per step.
#
# The memory store, so that no fsync hides the cost of auth. The per-client
# and connection limits are lifted (their flags at 1e9). Prints the medians,
# the spreads (min-max over the rounds), the on/off ratios of the medians and
# the medians of each round's on/off ratio, and writes
# them to bench/out/auth-latest.md (raw JSON and server logs in
# bench/out/auth/). Only loopback traffic; every load is bounded in time.
# Exits non-zero when a load fails to run, never because of a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/bench/out/auth
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.log
say() { printf '== %s\n' "$*" >&2; }

tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

say "building pmauthority, collabbench and wsbench"
bin=$out/pmauthority
go build -o "$bin" ./cmd/pmauthority
go -C bench build -o "$out/collabbench" ./collab # bench is a module of its own
go -C bench build -o "$out/wsbench" ./ws

head -c 48 /dev/urandom | base64 -w0 >"$tmp/secret"
token=$("$bin" token --secret-file "$tmp/secret" --sub bench --doc '*=edit' --ttl 1h)

unlimited=()
for f in max-conns max-client-conns max-ws-messages max-presence max-submissions max-creates max-documents; do
  unlimited+=("--$f" 1000000000)
done
pin_server=() pin_load=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0) pin_load=(taskset -c 1)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# collab ROUND MODE: one collab editors load against a fresh server.
collab() {
  local round=$1 mode=$2 port addr auth=() tok=()
  port=$(free_port)
  addr=127.0.0.1:$port
  if [ "$mode" = on ]; then auth=(--jwt-secret-file "$tmp/secret") tok=(--token "$token"); fi
  "${pin_server[@]}" "$bin" serve --store memory --addr "$addr" "${unlimited[@]}" "${auth[@]}" \
    >"$out/collab-$round-$mode.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    curl -fs -o /dev/null "http://$addr/healthz" && break
    sleep 0.1
  done
  # Check that auth is what the mode says: a request without a token is
  # refused (401) with auth, served without.
  local want=200 got
  if [ "$mode" = on ]; then want=401; fi
  got=$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/docs")
  if [ "$got" != "$want" ]; then
    say "auth $mode: GET /docs without a token answered $got, want $want"
    exit 1
  fi
  "${pin_load[@]}" "$out/collabbench" load --addr "$addr" --pid "$server_pid" --scenario editors \
    --docs 1 --editors 8 --prefix "auth-$mode-" --warmup 1s --duration 20s "${tok[@]}" \
    >"$out/collab-$round-$mode.json"
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=
  jq -r --arg r "$round" --arg m "$mode" '.editors | "== collab round \($r), auth \($m): \(.stepsPerSec | floor) steps/s, \(.cpuPerStep * 1e6 | floor) µs server CPU per step, \(.errors) errors"' \
    "$out/collab-$round-$mode.json" >&2
}

# ws ROUND MODE: one wsbench fanout.
ws() {
  local round=$1 mode=$2 auth=()
  if [ "$mode" = on ]; then auth=(--token "$token" --server-arg=--jwt-secret-file "--server-arg=$tmp/secret"); fi
  "$out/wsbench" fanout --bin "$bin" --log "$out/ws-$round-$mode.log" --editors 100 --typers 10 --rate 20 \
    --warmup 2s --duration 10s "${auth[@]}" >"$out/ws-$round-$mode.json"
  jq -r --arg r "$round" --arg m "$mode" '"== ws round \($r), auth \($m): \(.Steps / .Seconds | floor) steps/s, p50 \(.P50) ms, p99 \(.P99) ms, \(.Errors) errors"' \
    "$out/ws-$round-$mode.json" >&2
}

start=$(date +%s)
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order=(off on); else order=(on off); fi
  for mode in "${order[@]}"; do collab "$round" "$mode"; done
  for mode in "${order[@]}"; do ws "$round" "$mode"; done
done

python3 - "$out" "$(($(date +%s) - start))" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$PWD/bench/out/auth-latest.md" <<'EOF'
import json, statistics, sys
out, took, load = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(kind, get):
    return {m: [get(json.load(open(f"{out}/{kind}-{r}-{m}.json"))) for r in (1, 2, 3)] for m in ("off", "on")}
def line(name, vals, fmt):
    off, on = vals["off"], vals["on"]
    mo, mn = statistics.median(off), statistics.median(on)
    spread = lambda v: f"{fmt(min(v))}–{fmt(max(v))}"
    ratio = f"{mn / mo:.3f}×" if mo else "n/a"
    pairs = [b / a for a, b in zip(off, on) if a]
    paired = f"{statistics.median(pairs):.3f}× ({min(pairs):.2f}–{max(pairs):.2f})" if pairs else "n/a"
    return f"| {name} | {fmt(mo)} ({spread(off)}) | {fmt(mn)} ({spread(on)}) | {ratio} | {paired} |"
num = lambda v: f"{v:,.0f}"
ms = lambda v: f"{v:.1f} ms"
us = lambda v: f"{v:.0f} µs"
errors = sum(json.load(open(f"{out}/collab-{r}-{m}.json"))["editors"]["errors"] + json.load(open(f"{out}/ws-{r}-{m}.json"))["Errors"]
             for r in (1, 2, 3) for m in ("off", "on"))
print(f"bench/auth.sh: 3 rounds, auth off and on alternated, in {took} s; load average at the end: {load}; errors: {errors}\n")
print("on/off: the ratio of the medians; paired: the median (min–max) of each round's on/off ratio, the two")
print("loads of a round run one after the other.\n")
print("| measure | auth off: median (min–max) | auth on: median (min–max) | on/off | paired on/off |")
print("|---|---|---|---|---|")
print(line("collab POST steps/s (1 doc × 8 editors)", rows("collab", lambda j: j["editors"]["stepsPerSec"]), num))
print(line("collab server CPU per step", rows("collab", lambda j: j["editors"]["cpuPerStep"] * 1e6), us))
print(line("collab steps per server CPU-second", rows("collab", lambda j: 1 / j["editors"]["cpuPerStep"]), num))
print(line("collab server cores busy", rows("collab", lambda j: j["editors"]["cpu"]["serverCPU"] / j["editors"]["duration"]), lambda v: f"{v:.2f}"))
print(line("collab other processes' cores busy", rows("collab", lambda j: j["editors"]["cpu"]["othersCores"]), lambda v: f"{v:.2f}"))
print(line("collab POST p50", rows("collab", lambda j: j["editors"]["submit"]["p50"] * 1e6), us))
print(line("collab 409 rate (%)", rows("collab", lambda j: j["editors"]["conflictRate"] * 100), lambda v: f"{v:.1f}"))
print(line("WebSocket accepted steps/s (fanout, 100 editors, 10 typing)", rows("ws", lambda j: j["Steps"] / j["Seconds"]), num))
print(line("WebSocket delivery p50", rows("ws", lambda j: j["P50"]), ms))
print(line("WebSocket delivery p99", rows("ws", lambda j: j["P99"]), ms))
print(line("WebSocket server CPU per step", rows("ws", lambda j: j["CPU"] * j["Seconds"] / j["Steps"] * 1e6), us))
EOF
cat bench/out/auth-latest.md
