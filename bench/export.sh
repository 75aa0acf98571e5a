#!/usr/bin/env bash
# Export of the 50 KB benchmark document (docs.go: the rich trace's blocks
# repeated to 50 KB) as text, Markdown and HTML: package export
# (BenchmarkExport in export_test.go) against the JavaScript serializers
# in node (js/export.mjs: prosemirror-markdown 1.13.9's
# defaultMarkdownSerializer, DOMSerializer.serializeFragment in jsdom
# 29.1.1 with outerHTML, textBetween). Issue #15's target: at least 3×
# node by CPU time for Markdown and HTML. Also Markdown in: that Markdown
# parsed back (BenchmarkMarkdownParse in markdown_test.go, export.
# ParseMarkdown, against prosemirror-markdown's MarkdownParser with
# markdown-it's commonmark preset; issue #24's target: 3× too).
#
#   bash bench/export.sh [ROUNDS]     default 5 rounds (about 1 minute)
#
# Each round runs the Go benchmark (1 s per format) and then the node
# script (one warm-up and 5 timed runs per format), so both see the same
# load on the shared machine. First, the outputs of `pmauthority export`
# and of node are compared by sha256 (they must be equal). Prints the
# medians over all runs of µs per export, wall clock and CPU time (Go:
# getrusage; node: process.cpuUsage, all threads and GC included), and
# the node/Go ratios; writes them to bench/out/export-latest.md. Exits
# non-zero when something fails to run or the outputs differ, never
# because of a figure.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
out=$PWD/out/export
mkdir -p "$out"
rm -f "$out"/*.txt "$out"/*.json
say() { printf '== %s\n' "$*" >&2; }

traces=${PMA_TRACES:-$PWD/../../shared/traces}
export PMA_TRACES=$traces

if [ ! -d js/node_modules ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi

say "building the Go benchmark, pmauthority and the 50 KB document"
go test -c -o "$out/bench.test" .
go -C .. build -o "$out/pmauthority" ./cmd/pmauthority
go run ./cmd/benchdocs -traces "$traces" -out "$out/docs" >&2
doc=$out/docs/50KB.json

say "checking that pmauthority and node export the same bytes"
node js/export.mjs --doc "$doc" --iters 1 --runs 1 >"$out/check.json"
for f in text markdown html; do
  go_sum=$("$out/pmauthority" export --format "$f" "$doc" | sha256sum | cut -d' ' -f1)
  node_sum=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r[process.argv[2] + "_sha256"])' "$out/check.json" "$f")
  if [ "$go_sum" != "$node_sum" ]; then
    echo "$f: pmauthority's output (sha256 $go_sum) differs from node's ($node_sum)" >&2
    exit 1
  fi
done
# Markdown in: the Markdown parsed back, compared as document JSON.
go_sum=$("$out/pmauthority" export --format markdown "$doc" | "$out/pmauthority" import \
  | node -e 'let s = require("fs").readFileSync(0, "utf8"); process.stdout.write(JSON.stringify(JSON.parse(s).doc))' | sha256sum | cut -d' ' -f1)
node_sum=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r.parse_sha256)' "$out/check.json")
if [ "$go_sum" != "$node_sum" ]; then
  echo "parse: pmauthority import's document (sha256 $go_sum) differs from node's ($node_sum)" >&2
  exit 1
fi

for r in $(seq "$rounds"); do
  say "round $r of $rounds"
  "$out/bench.test" -test.run '^$' -test.bench '^(BenchmarkExport|BenchmarkMarkdownParse)$' -test.benchtime 1s -test.count 1 \
    | grep -E '^Benchmark(Export|MarkdownParse)' >>"$out/go.txt"
  node js/export.mjs --doc "$doc" --runs 5 >>"$out/node.json"
done

node js/export-report.mjs "$out/go.txt" "$out/node.json" | tee "$PWD/out/export-latest.md"
