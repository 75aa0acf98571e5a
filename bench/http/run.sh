#!/usr/bin/env bash
# Side-by-side HTTP benchmark of pmauthority's stateless apply server
# (POST / with {"doc", "steps"}) against node (bench/noderef: node:http and
# express with the real prosemirror libraries) and a Go ceiling server
# that answers the same bytes without doing any work.
#
#   bash bench/http/run.sh           full run (about 13 minutes on 2 cores)
#   bash bench/http/run.sh --quick   short loads, to check that it works (about 2 minutes)
#
# Any further flags go to `httpbench run` (see `cd bench && go run ./http run -h`),
# e.g. --servers pmauthority,node:http --payloads seed --placements pinned.
#
# Prints one table per placement (server pinned to CPU 0 and load
# generator to CPU 1 with taskset; unpinned) and writes it to
# bench/out/http-latest.md (raw results and server logs in bench/out/http/).
# Only loopback traffic; every load is bounded in time. Exits non-zero when
# something fails to run or the servers' answers differ, never because of
# timings.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/out/http
mkdir -p "$out"

say() { printf '== %s\n' "$*" >&2; }

say "building pmauthority and httpbench"
go build -o "$out/pmauthority" ./cmd/pmauthority
go -C bench build -o "$PWD/$out/httpbench" ./http # bench is a module of its own

say "npm packages of bench/noderef (pinned by package-lock.json)"
if [ ! -d bench/noderef/node_modules ] || [ bench/noderef/package-lock.json -nt bench/noderef/node_modules/.package-lock.json ]; then
  (cd bench/noderef && npm ci --no-audit --no-fund --loglevel=error)
fi

if ! command -v taskset >/dev/null; then
  say "taskset (util-linux) is missing: running unpinned only"
fi

exec "$out/httpbench" run --bin "$out/pmauthority" "$@"
