#!/usr/bin/env bash
# Side-by-side benchmarks: every case runs as a Go benchmark and as the
# node script using the real ProseMirror libraries, one after the other
# in the same invocation, and one table compares their medians.
#
#   bash bench/run.sh           full run (about 10 minutes on 2 cores)
#   bash bench/run.sh --quick   fewer and shorter runs, to check it works
#
# Prints the table and writes it to bench/out/latest.md (raw outputs in
# bench/out/raw/). Exits non-zero only when something fails to run or a
# final document's checksum differs, never because of timings.
set -euo pipefail
cd "$(dirname "$0")"
bench=$(pwd)

quick=
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: bash bench/run.sh [--quick]" >&2; exit 2 ;;
esac

if [ -n "$quick" ]; then
  count=2 replaytime=1x benchtime=200ms mode=quick
else
  count=5 replaytime=1s benchtime=1s mode=full
fi

traces=${PMA_TRACES:-$bench/../../shared/traces}
traces=$(cd "$traces" && pwd)
export PMA_TRACES=$traces

say() { printf '== %s\n' "$*" >&2; }

say "npm packages of bench/js (pinned by package-lock.json)"
if [ ! -d js/node_modules ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi

out=$bench/out
raw=$out/raw
rm -rf "$raw" "$out/docs"
mkdir -p "$raw" "$out/docs"

say "building the Go benchmarks and the JSON documents"
go test -c -o "$out/bench.test" .
go run ./cmd/benchdocs -traces "$traces" -out "$out/docs" >&2

# gobench RESULTFILE PATTERN BENCHTIME runs the Go benchmarks matching
# PATTERN once, appending their output to RESULTFILE.
gobench() {
  local file=$1 pattern=$2 time=$3
  if ! "$out/bench.test" -test.run '^$' -test.bench "$pattern" -test.count 1 \
      -test.benchtime "$time" -test.benchmem >"$raw/tmp.txt" 2>&1; then
    cat "$raw/tmp.txt" >&2
    echo "Go benchmark $pattern failed" >&2
    exit 1
  fi
  grep -E '^(Benchmark|goos|goarch|cpu|pkg)' "$raw/tmp.txt" >>"$raw/$file" || true
  if ! grep -q '^Benchmark' "$raw/tmp.txt"; then
    cat "$raw/tmp.txt" >&2
    echo "Go benchmark $pattern ran nothing" >&2
    exit 1
  fi
}

# nodejs RESULTFILE SCRIPT ARGS... runs a node script, its JSON line
# going to RESULTFILE.
nodejs() {
  local file=$1
  shift
  if ! node "$@" >"$raw/$file"; then
    echo "node $* failed" >&2
    exit 1
  fi
}

# The machine is shared: the load changes from one minute to the next. So
# that Go and node see the same conditions, each case alternates one Go
# run and one node run (its own warm-up included), $count times.
for f in "$traces"/*.steps.jsonl.gz; do
  name=$(basename "$f" .steps.jsonl.gz)
  say "replay $name"
  for r in $(seq "$count"); do
    gobench go-replay.txt "^BenchmarkReplay\$/^$name\$" "$replaytime"
    nodejs "node-replay-$name.$r.json" js/replay.mjs --trace "$f" --runs 1
  done
done

for doc in "$out"/docs/*.json; do
  name=$(basename "$doc" .json)
  say "JSON $name"
  for r in $(seq "$count"); do
    gobench go-json.txt "^Benchmark(Decode|Encode)\$/^$name\$" "$benchtime"
    nodejs "node-json-$name.$r.json" --expose-gc js/json.mjs --doc "$doc" --runs 1
  done
done

for n in 10 100 1000 10000; do
  say "apply vs document size, $n paragraphs"
  for r in $(seq "$count"); do
    gobench go-applysize.txt "^BenchmarkApplyDocSize\$/^paragraphs=$n\$" "$benchtime"
    nodejs "node-applysize-$n.$r.json" js/applysize.mjs --paragraphs "$n" --runs 1
  done
done

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
cat >"$raw/info.json" <<JSON
{"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "mode": "$mode", "go": "$(go version | awk '{print $3}')",
 "node": "$(node --version)", "cpu": "$cpu", "cores": $(nproc), "count": $count}
JSON
node js/report.mjs "$raw" | tee "$out/latest.md"
