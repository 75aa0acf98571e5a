#!/usr/bin/env bash
# Before/after comparison of two pmauthority binaries in one run: the HTTP
# apply endpoint, the collab API and the WebSocket transport, each measured
# with the old binary, then the new one, then both again in the other
# order, with node (the real ProseMirror libraries) measured in the same
# invocations as the common yardstick. A change of pmauthority shows as a
# change of its ratio to node between the OLD and NEW reports of a pair.
#
#   bash bench/ab.sh OLD_BINARY [NEW_BINARY]     (NEW defaults to a build of this tree)
#
# e.g. git worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/pma-old ./cmd/pmauthority)
#      bash bench/ab.sh /tmp/pma-old
#
# Short loads (about 17 minutes on 2 cores). Reports go to
# bench/out/ab/{http,collab,ws}-{1,2}-{old,new}.md. Only loopback traffic;
# every load is bounded in time. Exits non-zero only when something fails to
# run, never because of timings. The memory of idle WebSocket editors, old
# against new over more rounds and with where the bytes go, is
# bench/ws/idle-ab.sh.
set -euo pipefail
# The collab load runs in both modes (commit mode: POST /docs/{id}/commits);
# AB_COLLAB_MODES=classic for a binary from before commit mode, which
# answers its commits 404 (the load then fails).
collab_modes=${AB_COLLAB_MODES:-classic,commit}
old=${1:?usage: bash bench/ab.sh OLD_BINARY [NEW_BINARY]}
old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")
cd "$(dirname "$0")/.."
out=bench/out/ab
mkdir -p "$out"
say() { printf '== %s\n' "$*" >&2; }

new=${2:-}
if [ -z "$new" ]; then
  new=$PWD/$out/pmauthority-new
  say "building the new pmauthority from this tree"
  go build -o "$new" ./cmd/pmauthority
fi
say "building the load generators"
go -C bench build -o "$PWD/$out/httpbench" ./http
go -C bench build -o "$PWD/$out/collabbench" ./collab
go -C bench build -o "$PWD/$out/collabceiling" ./collab/ceiling
go -C bench build -o "$PWD/$out/wsbench" ./ws
if [ ! -d bench/noderef/node_modules ] || [ bench/noderef/package-lock.json -nt bench/noderef/node_modules/.package-lock.json ]; then
  (cd bench/noderef && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then ulimit -n 8192 2>/dev/null || true; fi

# measure PAIR LABEL BINARY runs the three benchmarks with BINARY.
measure() {
  local pair=$1 label=$2 bin=$3
  say "pair $pair: $label ($bin): HTTP apply"
  "$out/httpbench" run --bin "$bin" --servers pmauthority,node:http --payloads seed,50KB --conns 32 \
    --placements pinned --rounds 2 --duration 4s --report "$out/http-$pair-$label.md" >/dev/null
  say "pair $pair: $label: collab API"
  "$out/collabbench" run --bin "$bin" --ceiling-bin "$out/collabceiling" --servers pma-sqlite-full,pma-memory,node \
    --scenarios 1doc-8ed,100docs-2ed --modes "$collab_modes" --placements pinned --rounds 1 --duration 5s \
    --report "$out/collab-$pair-$label.md" >/dev/null
  say "pair $pair: $label: WebSocket"
  "$out/wsbench" run --bin "$bin" --rounds 1 --out "$out/ws-$pair-$label.md" >/dev/null
}

measure 1 old "$old"
measure 1 new "$new"
measure 2 new "$new"
measure 2 old "$old"
say "reports in $out"
for f in "$out"/http-*.md "$out"/collab-*.md "$out"/ws-*.md; do
  printf '\n### %s\n\n' "$(basename "$f")"
  cat "$f"
done
