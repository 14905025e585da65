#!/usr/bin/env bash
# A copy of a plugin on LIEMBS_PLUGIN_PATH is the one a benchmark times, not the build tree's
# (scripts/compare-plugins times a saved copy against the build's this way).
#   plugin-copy-wins.sh BENCH_TREE_DYNAMICS PLUGIN_DIR
set -euo pipefail
bench=$1 plugins=$2
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp "$plugins/liembs-representation-spatial.so" "$copy/"
err=$(LIEMBS_PLUGIN_PATH=$copy "$bench" --benchmark_filter='^iiwa/RNEA/spatial$' --benchmark_min_time=0.001 2>&1 >/dev/null)
if ! grep -qF "note: spatial from $copy/liembs-representation-spatial.so" <<<"$err"; then
  echo "the benchmark did not time the copy on LIEMBS_PLUGIN_PATH:" >&2
  echo "$err" | grep -F "note: spatial" >&2 || echo "$err" >&2
  exit 1
fi
echo "spatial timed from the copy in $copy"
