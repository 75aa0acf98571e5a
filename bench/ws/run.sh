#!/usr/bin/env bash
# WebSocket transport benchmark (docs/protocol.md): the memory an idle
# WebSocket editor costs the server, and the delivery latency and server CPU
# of one document with 1,000 connected editors, 10 of them typing.
#
#   bash bench/ws/run.sh           full run: 3 rounds of 5,000 idle editors and of 1,000 editors × 20 s (about 5 minutes)
#   bash bench/ws/run.sh --quick   1 round of small, short measures, to check that it works (under a minute)
#
# Further flags go to `wsbench run` (cd bench && go run ./ws run -h). Each measure
# starts its own `pmauthority serve --store memory` on 127.0.0.1 (only
# loopback traffic; every phase is bounded in time) and stops it. Prints a
# Markdown report of each round and the medians, also written to
# bench/out/ws-latest.md (server logs in bench/out/ws/). Exits non-zero when
# a measure fails to run, never because of a figure.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/out/ws
mkdir -p "$out"

args=(--rounds 3)
if [ "${1:-}" = --quick ]; then
  args=(--rounds 1 --quick)
  shift
fi

go build -o "$out/pmauthority" ./cmd/pmauthority
go -C bench build -o "$PWD/$out/wsbench" ./ws # bench is a module of its own

# 5,000 editors are 5,000 sockets on each side (each process has its own limit).
want=16384
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$want" ]; then
  ulimit -n "$want" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi
echo "== open files limit: $(ulimit -n)" >&2

exec "$out/wsbench" run --bin "$out/pmauthority" --logs "$out" --out bench/out/ws-latest.md "${args[@]}" "$@"
