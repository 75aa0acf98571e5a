#!/usr/bin/env bash
# Side-by-side benchmark of pmauthority's collab API (SQLite store, with
# --sync full and --sync normal, and the memory store) against a node
# authority written the way the ProseMirror demo server is
# (bench/noderef/authority.mjs), with go-ceiling (bench/collab/ceiling: Go
# net/http with the same routes and bookkeeping but none of the ProseMirror
# work, the most net/http reaches with this load) as a yardstick: editors
# typing (1 document × 8 editors, 100 documents × 2 editors), 1,000
# long-polling readers of one document, and the memory a loaded document
# takes (not measured for go-ceiling).
#
#   bash bench/collab/run.sh           full run (3 rounds of 10-second loads, both placements: about 25 minutes)
#   bash bench/collab/run.sh --quick   one round of 3-second loads, to check that it works (about 6 minutes)
#
# Further flags go to `collabbench run` (see `cd bench && go run ./collab run -h`),
# e.g. --servers pma-sqlite-full,node,go-ceiling --scenarios 1doc-8ed --placements pinned.
#
# Prints one table per placement (server pinned to CPU 0 and load generator
# to CPU 1 with taskset; unpinned) with pmauthority's ratios to node and to
# go-ceiling, and writes it to bench/out/collab-latest.md (raw results,
# server logs and the SQLite data folders, removed after each load, in
# bench/out/collab/). Only loopback traffic; every load is bounded in time.
# Exits non-zero when a load fails to run, never because of timings.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/out/collab
mkdir -p "$out"

say() { printf '== %s\n' "$*" >&2; }

say "building pmauthority, collabbench and the go-ceiling server"
go build -o "$out/pmauthority" ./cmd/pmauthority
go -C bench build -o "$PWD/$out/collabbench" ./collab # bench is a module of its own
go -C bench build -o "$PWD/$out/collabceiling" ./collab/ceiling

say "npm packages of bench/noderef (pinned by package-lock.json)"
if [ ! -d bench/noderef/node_modules ] || [ bench/noderef/package-lock.json -nt bench/noderef/node_modules/.package-lock.json ]; then
  (cd bench/noderef && npm ci --no-audit --no-fund --loglevel=error)
fi

# 1,000 readers are 1,000 connections on each side.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then ulimit -n 8192 2>/dev/null || true; fi

exec "$out/collabbench" run --bin "$out/pmauthority" --ceiling-bin "$out/collabceiling" "$@"
