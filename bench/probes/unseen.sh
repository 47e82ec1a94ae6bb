#!/usr/bin/env bash
# `cleave compile --gpu` (checked against float64, timed) on graphs that are not among the examples.
#   bash bench/on_device.sh bash bench/probes/unseen.sh      (writes $OUT/unseen/NAME.{log,py})
set -uo pipefail
repo=$(pwd)
mkdir -p "$OUT/unseen"
for f in "$repo"/bench/probes/unseen/*.mlir; do
  n=$(basename "$f" .mlir)
  (cd /tmp && timeout 300 cleave compile "$f" --gpu --tune-budget 0 -j 15 --cache-dir /tmp/cleave-cache \
    -o "$OUT/unseen/$n.py" > "$OUT/unseen/$n.log" 2>&1)
  echo "$n: exit $? $(grep -E '^winner|^error' "$OUT/unseen/$n.log" | tail -1)"
done
