#!/usr/bin/env bash
# The memory an idle WebSocket editor costs the server, old binary against
# new, interleaved (old, new, old, new, …) so that the machine's drift falls
# on both alike: per round and as medians, the server's RSS growth per
# connection, the ratio new / old, and where the bytes go (goroutines,
# stacks and heap in use per connection, the heap by allocation site, read
# from each server's --metrics-addr profiles after a GC).
#
#   bash bench/ws/idle-ab.sh OLD_BINARY [NEW_BINARY] [wsbench ab flags]
#
# NEW_BINARY defaults to a build of this tree. Defaults: 3 rounds of 2,000
# idle editors on 10 documents (about 2 minutes); e.g. --rounds 5 --conns 5000
# for more; --breakdown=false for the RSS alone (the profiles' own GCs and
# sampling add about 1 KiB per connection to both binaries). Further flags go
# to `wsbench ab` (cd bench && go run ./ws ab -h).
# Only loopback traffic; every phase is bounded in time. Prints a Markdown
# report, also written to bench/out/ws-ab-latest.md (server logs in
# bench/out/ws/). Exits non-zero when a measure fails to run, never because of
# a figure.
set -euo pipefail
old=${1:?usage: bash bench/ws/idle-ab.sh OLD_BINARY [NEW_BINARY] [flags]}
old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")
shift
new=
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  new=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  shift
fi
cd "$(dirname "$0")/../.."
out=bench/out/ws
mkdir -p "$out"

if [ -z "$new" ]; then
  new=$PWD/$out/pmauthority
  go build -o "$new" ./cmd/pmauthority
fi
go -C bench build -o "$PWD/$out/wsbench" ./ws # bench is a module of its own

# Each editor is a socket on each side (each process has its own limit).
want=16384
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$want" ]; then
  ulimit -n "$want" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi

exec "$out/wsbench" ab --old "$old" --new "$new" --logs "$out" --out bench/out/ws-ab-latest.md "$@"
