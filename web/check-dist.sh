#!/bin/sh
# Fails when the committed dist/ differs from a fresh build of src/ (the
# bundle is committed so that the binary builds without node; this keeps
# it from going stale). Needs node_modules (npm ci).
# Usage: sh check-dist.sh    (from anywhere)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node "$here/build.mjs" --outdir "$tmp/dist" >/dev/null
if ! diff -r "$here/dist" "$tmp/dist" >"$tmp/diff"; then
  echo "web/dist is stale: it differs from a fresh build of web/src. Run 'npm run build' in web/ and commit web/dist." >&2
  head -n 20 "$tmp/diff" | cut -c1-200 >&2
  exit 1
fi
echo "web/dist matches a fresh build of web/src"
