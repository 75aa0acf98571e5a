#!/usr/bin/env bash
# pmauthority on PostgreSQL, side by side in one run (issue #13, "Performance"):
#
#   - one node on PostgreSQL against one node on SQLite (--sync full), the memory store and the
#     node authority (bench/noderef/authority.mjs): collabbench's editors loads 1 document × 8
#     editors and 100 documents × 2 editors (steps/s, submission round trip p50/p99, server CPU
#     per step from /proc, and the database's own CPU per step);
#   - three nodes on one database: the same loads spread over the three, and 1,000 WebSocket
#     editors of one document spread over the three, 10 typing 5 steps/s (wsbench fanout:
#     delivery latency from send to receipt, split out for editors on another node than the
#     typer), with one node on PostgreSQL under the same load beside it;
#   - the stores alone: store/postgres BenchmarkNotifyLock (appends/s of 100 documents with the
#     Store's NOTIFY and without, on 1 and 3 Stores) and BenchmarkAppend (commit latency),
#     store/sqlite BenchmarkAppend/FULL.
#
#   bash bench/cluster.sh           3 rounds, about 8 minutes on 2 cores
#   bash bench/cluster.sh --quick   1 short round, to check that it works (about 2 minutes)
#   bash bench/cluster.sh --before OLD_BINARY
#       also runs three nodes of OLD_BINARY (e.g. built from the commit before a change) under the
#       editors loads in each round, next to this tree's (about 1 minute more), before them in odd rounds
#       and after them in even ones
#   --rounds N: N rounds instead of 3
#
# PostgreSQL is a throwaway cluster made here: initdb (as the user postgres when run as root;
# initdb refuses root) in a temporary folder, reached on a private unix socket only (no TCP),
# stopped and removed at the end, whatever happens. Unlike internal/pgtest's (fsync off, for
# tests) it runs with PostgreSQL's durable defaults: fsync on, synchronous_commit on,
# full_page_writes on, so that its figures compare with SQLite's --sync full. The binaries are
# looked for as internal/pgtest does: $PMA_POSTGRES_BIN, then /usr/lib/postgresql/N/bin.
#
# Prints a Markdown report of medians and ratios, also written to bench/out/cluster-latest.md
# (server logs in bench/out/cluster/logs/). Exits non-zero when something fails to run, never
# because of a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/bench/out/cluster
mkdir -p "$out"
say() { printf '== %s\n' "$*" >&2; }

flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) flags+=(--quick) ;;
    --before) flags+=(--before "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift ;;
    --rounds) flags+=(--rounds "$2"); shift ;;
    *) echo "usage: bash bench/cluster.sh [--quick] [--rounds N] [--before OLD_BINARY]" >&2; exit 2 ;;
  esac
  shift
done

pgbin=${PMA_POSTGRES_BIN:-}
if [ -z "$pgbin" ]; then
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n | tail -1 || true)
fi
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ] || [ ! -x "$pgbin/pg_ctl" ]; then
  echo "PostgreSQL not found (initdb, pg_ctl): install Debian's postgresql or set PMA_POSTGRES_BIN" >&2
  exit 1
fi

as=()
pgdir=$(mktemp -d /tmp/pmacluster.XXXXXX) # short: the socket's path must fit in ~100 bytes
if [ "$(id -u)" = 0 ]; then
  as=(runuser -u postgres --)
  chown postgres: "$pgdir"
fi
cleanup() {
  if [ -f "$pgdir/data/postmaster.pid" ]; then
    "${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$pgdir"
}
trap cleanup EXIT

say "PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'): initdb in $pgdir (fsync on)"
"${as[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust -E UTF8 --locale=C --no-instructions >"$out/initdb.log"
"${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -t 60 start \
  -o "-c listen_addresses='' -k $pgdir -p 5432 -c max_connections=300 -c shared_buffers=128MB" >/dev/null
pgpid=$(head -1 "$pgdir/data/postmaster.pid")
pgurl="postgres://postgres@/postgres?host=$pgdir&port=5432&sslmode=disable"
"$pgbin/psql" -X -A -t -d "$pgurl" -c "SELECT 'fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit') || ', wal_sync_method=' || current_setting('wal_sync_method')" >&2

say "building pmauthority, the load generators and the store benchmarks"
go build -o "$out/pmauthority" ./cmd/pmauthority
go -C bench build -o "$out/collabbench" ./collab # bench is a module of its own
go -C bench build -o "$out/wsbench" ./ws
go -C bench build -o "$out/clusterbench" ./cluster
go test -c -o "$out/postgres.test" ./store/postgres
go test -c -o "$out/sqlite.test" ./store/sqlite
if [ ! -d bench/noderef/node_modules ] || [ bench/noderef/package-lock.json -nt bench/noderef/node_modules/.package-lock.json ]; then
  (cd bench/noderef && npm ci --no-audit --no-fund --loglevel=error)
fi
# 1,000 WebSocket editors are 1,000 sockets on each side.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 16384 ]; then
  ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi

"$out/clusterbench" --bin "$out/pmauthority" --collabbench "$out/collabbench" --wsbench "$out/wsbench" \
  --psql "$pgbin/psql" --pg-url "$pgurl" --pg-pid "$pgpid" \
  --pg-test "$out/postgres.test" --sqlite-test "$out/sqlite.test" \
  --out "$root/bench/out/cluster-latest.md" "${flags[@]}"
