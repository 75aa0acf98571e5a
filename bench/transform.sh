#!/usr/bin/env bash
# The Transform API replayed from a recorded editing session: package
# transform (BenchmarkTransformReplay in transform_test.go,
# transform.ApplyOps) against prosemirror-transform 1.12.7 in node
# (js/transform.mjs), on testdata/transform-ops.json: 2,000 Transform
# calls on the 50 KB benchmark document in pmauthority's op format, made
# by js/transform-record.mjs. Target: Go at least 3× node by CPU time.
#
#   bash bench/transform.sh [ROUNDS]    default 5 rounds (about 1 minute)
#   bash bench/transform.sh --quick     1 short round, to check it works
#
# First TestTransformReplay checks that Go makes node's final document
# byte for byte (js/transform.mjs checks node's own on every run). Each
# round then runs the Go benchmark (1 s) and the node script (30 warm-up
# replays, V8 needing 15 to 25 to reach its steady speed, then 10 timed
# runs of 5 replays), so both see the same load on the shared machine.
# Prints the medians over all runs of µs per replay, wall clock and CPU
# time (Go: getrusage; node: process.cpuUsage, all threads and GC
# included), their spread and the node/Go ratios, and writes them to
# bench/out/transform-latest.md. Exits non-zero when something fails to
# run or the documents differ, never because of a figure.
#
# To record the session again (after a change to the benchmark document
# or the recorder): go run ./cmd/benchdocs -out out/docs && node
# js/transform-record.mjs --doc out/docs/50KB.json --out
# testdata/transform-ops.json
set -euo pipefail
cd "$(dirname "$0")"
rounds=5 benchtime=1s node=()
case "${1:-}" in
  --quick) rounds=1 benchtime=200ms node=(--warmup 2 --runs 2 --iters 1) ;;
  "") ;;
  *[!0-9]*) echo "usage: bash bench/transform.sh [--quick | ROUNDS]" >&2; exit 2 ;;
  *) rounds=$1 ;;
esac
out=$PWD/out/transform
mkdir -p "$out"
rm -f "$out"/*.txt "$out"/*.jsonl
say() { printf '== %s\n' "$*" >&2; }

if [ ! -d js/node_modules ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi

say "building the Go benchmark and checking that Go makes node's document"
go test -c -o "$out/bench.test" .
"$out/bench.test" -test.run '^TestTransformReplay$' -test.count 1 >&2

for r in $(seq "$rounds"); do
  say "round $r of $rounds"
  "$out/bench.test" -test.run '^$' -test.bench '^BenchmarkTransformReplay$' -test.benchtime "$benchtime" -test.count 1 \
    | grep '^BenchmarkTransformReplay' >>"$out/go.txt"
  node js/transform.mjs "${node[@]}" >>"$out/node.jsonl"
done

node js/transform-report.mjs "$out/go.txt" "$out/node.jsonl" | tee "$PWD/out/transform-latest.md"
