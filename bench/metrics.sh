#!/usr/bin/env bash
# Metrics on and off in one run: what `serve --metrics-addr` (Prometheus
# observers on every request, submission, connection and commit, and a
# scrape every 5 s) costs. Issue #14's target: at most 3 % more server CPU
# per accepted step; and the apply endpoint's requests/s.
#
#   bash bench/metrics.sh     (about 4 minutes on the shared 2-core machine)
#
# Builds pmauthority, collabbench and httpbench, then runs 3 rounds, each
# measuring metrics off and on one after the other (the order alternates
# from round to round), against a `pmauthority serve --store memory`
# started for each load, with or without --metrics-addr:
#
# (a) collab: `collabbench load --scenario editors`, 1 document × 8
#     editors typing over the long-poll HTTP API (POST steps; on 409 GET
#     the events and POST again), 1 s warm-up and 15 s measured: accepted
#     steps/s and the server's CPU per accepted step (from /proc/PID/stat).
# (b) apply: `httpbench load`, 16 connections each a closed loop POSTing
#     prosemirror-v8-perf's seed request to /, every 16th answer compared
#     byte for byte; 2 s of warm-up load, then 8 s measured: requests/s and
#     the server's CPU per request (its CPU time over the measured load).
#
# (c) in process: the metrics package's Go benchmarks BenchmarkSubmit (one
#     accepted step: a POST /docs/{id}/events and the GET of its events,
#     through Server.ServeHTTP, no network) and BenchmarkApply (one seed
#     request), off and on alternated 7 times, one CPU (GOMAXPROCS=1,
#     pinned): the process's CPU time (getrusage, the garbage collector's
#     included) per step and per request, without the load generator's and
#     the network's noise, and without the time spent waiting for a CPU
#     that other processes hold. With metrics on, also BenchmarkObservers
#     (the observer calls of one accepted step alone): their CPU per step
#     as a share of BenchmarkSubmit's, the figure the noise cannot hide.
#
# With metrics on, a loop scrapes /metrics every 5 s during each load (a
# Prometheus would scrape every 15 to 60 s), and after the load the script
# checks that the counters moved (with off, that the main listener has no
# /metrics). The server is pinned to CPU 0 and the load to CPU 1 (taskset).
# The memory store, so that no fsync dilutes the cost of the observers:
# the worst case. The per-client limits are lifted (their flags at 1e9).
# Prints the medians, the spreads (min–max over the rounds), the on/off
# ratios of the medians and the medians of each round's on/off ratio, and
# writes them to bench/out/metrics-latest.md (raw JSON and server logs in
# bench/out/metrics/). Only loopback traffic; every load is bounded in
# time. Exits non-zero when a load fails to run, never because of a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/bench/out/metrics
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.log "$out"/*.cpu
say() { printf '== %s\n' "$*" >&2; }

server_pid= scraper_pid=
cleanup() {
  if [ -n "$scraper_pid" ]; then kill "$scraper_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

say "building pmauthority, collabbench and httpbench"
bin=$out/pmauthority
go build -o "$bin" ./cmd/pmauthority
go -C bench build -o "$out/collabbench" ./collab # bench is a module of its own
go -C bench build -o "$out/httpbench" ./http
go test -c -o "$out/metrics.test" ./metrics

# prosemirror-v8-perf's seed request and its answer (apply/reqtest).
printf '%s' '{"steps":[{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"text","text":"Hello"}]}}],"doc": {"type":"doc"}}' >"$out/seed.json"
printf '%s' '{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]}}' >"$out/seed-answer.json"

unlimited=()
for f in max-conns max-client-conns max-ws-messages max-presence max-submissions max-creates max-documents; do
  unlimited+=("--$f" 1000000000)
done
pin_server=() pin_load=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0) pin_load=(taskset -c 1)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# cpu_ticks PID: the process's user + system CPU time, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

addr= maddr=
# start KIND ROUND MODE: a fresh server, with --metrics-addr when MODE is on
# (and a loop scraping it).
start() {
  local kind=$1 round=$2 mode=$3 metrics=() schema=basic
  # The seed request names no schema: it is prosemirror-v8-perf's, in
  # the text schema.
  if [ "$kind" = apply ]; then schema=text; fi
  addr=127.0.0.1:$(free_port) maddr=
  if [ "$mode" = on ]; then
    maddr=127.0.0.1:$(free_port)
    metrics=(--metrics-addr "$maddr")
  fi
  "${pin_server[@]}" "$bin" serve --store memory --default-schema "$schema" --addr "$addr" "${unlimited[@]}" "${metrics[@]}" \
    >"$out/$kind-$round-$mode.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    curl -fs -o /dev/null "http://$addr/healthz" && break
    sleep 0.1
  done
  if [ "$mode" = on ]; then
    "${pin_load[@]}" bash -c "while sleep 5; do curl -fs -o /dev/null 'http://$maddr/metrics'; done" &
    scraper_pid=$!
  fi
}

# stop KIND ROUND MODE: checks the mode (the counters moved with metrics on;
# no /metrics on the main listener either way), then stops the server.
stop() {
  local kind=$1 round=$2 mode=$3 want
  if [ -n "$scraper_pid" ]; then
    kill "$scraper_pid" 2>/dev/null || true
    wait "$scraper_pid" 2>/dev/null || true
    scraper_pid=
  fi
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/metrics")" != 404 ]; then
    say "$kind $mode: the main listener serves /metrics"
    exit 1
  fi
  if [ "$mode" = on ]; then
    curl -fs "http://$maddr/metrics" >"$out/$kind-$round-$mode.metrics"
    if [ "$kind" = collab ]; then want='^pmauthority_steps_accepted_total [1-9]'; else want='^pmauthority_http_requests_total\{code="200",route="POST /\{\$\}"\} [1-9]'; fi
    if ! grep -Eq "$want" "$out/$kind-$round-$mode.metrics"; then
      say "$kind $mode: /metrics lacks $want"
      exit 1
    fi
  fi
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=
}

# collab ROUND MODE: one collab editors load.
collab() {
  local round=$1 mode=$2
  start collab "$round" "$mode"
  "${pin_load[@]}" "$out/collabbench" load --addr "$addr" --pid "$server_pid" --scenario editors \
    --docs 1 --editors 8 --prefix "metrics-$mode-" --warmup 1s --duration 15s \
    >"$out/collab-$round-$mode.json"
  stop collab "$round" "$mode"
  jq -r --arg r "$round" --arg m "$mode" '.editors | "== collab round \($r), metrics \($m): \(.stepsPerSec | floor) steps/s, \(.cpuPerStep * 1e6 | floor) µs server CPU per step, \(.errors) errors"' \
    "$out/collab-$round-$mode.json" >&2
}

# apply ROUND MODE: one apply endpoint load.
apply() {
  local round=$1 mode=$2 before after
  start apply "$round" "$mode"
  local load=("${pin_load[@]}" "$out/httpbench" load --addr "$addr" --path / --body "$out/seed.json"
    --expect "$out/seed-answer.json" -c 16 --warmup 0s)
  "${load[@]}" --duration 2s >/dev/null
  before=$(cpu_ticks "$server_pid")
  "${load[@]}" --duration 8s >"$out/apply-$round-$mode.json"
  after=$(cpu_ticks "$server_pid")
  echo "$((after - before)) $(getconf CLK_TCK)" >"$out/apply-$round-$mode.cpu"
  stop apply "$round" "$mode"
  jq -r --arg r "$round" --arg m "$mode" '"== apply round \($r), metrics \($m): \(.reqPerSec | floor) req/s, p50 \(.p50 * 1e6 | floor) µs, \(.errors + .non200 + .mismatches) errors"' \
    "$out/apply-$round-$mode.json" >&2
}

# gobench ROUND MODE: the in-process benchmarks, ns/op into gobench-ROUND-MODE.txt.
gobench() {
  local round=$1 mode=$2
  (cd metrics && "${pin_server[@]}" "$out/metrics.test" -test.run '^$' -test.cpu 1 -test.benchmem \
    -test.bench "^Benchmark(Submit|Apply)/$mode\$" -test.benchtime 20000x) >"$out/gobench-$round-$mode.txt"
  if [ "$mode" = on ]; then
    (cd metrics && "${pin_server[@]}" "$out/metrics.test" -test.run '^$' -test.cpu 1 -test.benchmem \
      -test.bench '^BenchmarkObservers/serial$' -test.benchtime 200000x) >>"$out/gobench-$round-$mode.txt"
  fi
}

begin=$(date +%s)
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order=(off on); else order=(on off); fi
  for mode in "${order[@]}"; do collab "$round" "$mode"; done
  for mode in "${order[@]}"; do apply "$round" "$mode"; done
done
say "in-process benchmarks"
for round in 1 2 3 4 5 6 7; do
  if [ $((round % 2)) = 1 ]; then order=(off on); else order=(on off); fi
  for mode in "${order[@]}"; do gobench "$round" "$mode"; done
done

python3 - "$out" "$(($(date +%s) - begin))" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$PWD/bench/out/metrics-latest.md" <<'EOF'
import json, statistics, sys
out, took, load = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(kind, get):
    return {m: [get(json.load(open(f"{out}/{kind}-{r}-{m}.json")), r, m) for r in (1, 2, 3)] for m in ("off", "on")}
def cpu(r, m):
    ticks, hz = open(f"{out}/apply-{r}-{m}.cpu").read().split()
    return int(ticks) / int(hz)
def line(name, vals, fmt):
    off, on = vals["off"], vals["on"]
    mo, mn = statistics.median(off), statistics.median(on)
    spread = lambda v: f"{fmt(min(v))}–{fmt(max(v))}"
    ratio = f"{mn / mo:.3f}×" if mo else "n/a"
    pairs = [b / a for a, b in zip(off, on) if a]
    paired = f"{statistics.median(pairs):.3f}× ({min(pairs):.2f}–{max(pairs):.2f})" if pairs else "n/a"
    return f"| {name} | {fmt(mo)} ({spread(off)}) | {fmt(mn)} ({spread(on)}) | {ratio} | {paired} |"
num = lambda v: f"{v:,.0f}"
us = lambda v: f"{v:.1f} µs"
errors = sum(json.load(open(f"{out}/collab-{r}-{m}.json"))["editors"]["errors"] for r in (1, 2, 3) for m in ("off", "on"))
errors += sum((lambda j: j["errors"] + j["non200"] + j["mismatches"])(json.load(open(f"{out}/apply-{r}-{m}.json"))) for r in (1, 2, 3) for m in ("off", "on"))
print(f"bench/metrics.sh: 3 rounds, metrics off and on alternated, in {took} s; load average at the end: {load}; errors: {errors}\n")
print("on/off: the ratio of the medians; paired: the median (min–max) of each round's on/off ratio, the two")
print("loads of a round run one after the other.\n")
print("| measure | metrics off: median (min–max) | metrics on: median (min–max) | on/off | paired on/off |")
print("|---|---|---|---|---|")
print(line("collab server CPU per accepted step", rows("collab", lambda j, r, m: j["editors"]["cpuPerStep"] * 1e6), us))
print(line("collab accepted steps/s (1 doc × 8 editors)", rows("collab", lambda j, r, m: j["editors"]["stepsPerSec"]), num))
print(line("collab server cores busy", rows("collab", lambda j, r, m: j["editors"]["cpu"]["serverCPU"] / j["editors"]["duration"]), lambda v: f"{v:.2f}"))
print(line("collab other processes' cores busy", rows("collab", lambda j, r, m: j["editors"]["cpu"]["othersCores"]), lambda v: f"{v:.2f}"))
print(line("apply requests/s (seed, 16 connections)", rows("apply", lambda j, r, m: j["reqPerSec"]), num))
print(line("apply server CPU per request", rows("apply", lambda j, r, m: cpu(r, m) / j["ok"] * 1e6), us))
print(line("apply p50", rows("apply", lambda j, r, m: j["p50"] * 1e6), us))
import re
def gob(name):
    vals = {}
    for m in ("off", "on"):
        vals[m] = []
        for r in range(1, 8):
            for l in open(f"{out}/gobench-{r}-{m}.txt"):
                f = l.split()
                if f and f[0] == f"Benchmark{name}/{m}":
                    vals[m].append(float(f[f.index("cpu-ns/op") - 1]) / 1000)
    return vals
print(line("in process: CPU per accepted step (BenchmarkSubmit, 7 runs)", gob("Submit"), lambda v: f"{v:.2f} µs"))
print(line("in process: CPU per apply request (BenchmarkApply, 7 runs)", gob("Apply"), lambda v: f"{v:.2f} µs"))
obs = sorted(float(f[f.index("cpu-ns/op") - 1]) for r in range(1, 8) for l in open(f"{out}/gobench-{r}-on.txt")
             if (f := l.split()) and f[0] == "BenchmarkObservers/serial")
sub = statistics.median(gob("Submit")["off"]) * 1000
print(f"\nThe observers' own CPU per accepted step (BenchmarkObservers/serial: the calls of one step over the long-poll API): "
      f"median {statistics.median(obs):.0f} ns ({obs[0]:.0f}–{obs[-1]:.0f}), {statistics.median(obs) / sub * 100:.2f} % of BenchmarkSubmit/off's CPU per step.")
EOF
cat bench/out/metrics-latest.md
