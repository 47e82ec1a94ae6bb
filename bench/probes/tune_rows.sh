#!/usr/bin/env bash
# Measured tuning (`cleave compile --gpu --tune-budget`) of suite rows, each at the suite's shape.
#   bash bench/on_device.sh bash bench/probes/tune_rows.sh BUDGET_S ROW...   (writes $OUT/tune/ROW.{log,py})
set -uo pipefail
budget=$1; shift
mkdir -p "$OUT/tune"
repo=$(pwd)
(cd /tmp && python - "$repo" "$@" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1] + "/bench")
from gpu_suite import graph_text, rows
for r in rows():
    if r.name in sys.argv[1:]:
        Path(f"/tmp/{r.name}.mlir").write_text(graph_text(r))
PY
)
for row in "$@"; do
  start=$(date +%s)
  (cd /tmp && timeout $((budget + 150)) cleave compile "/tmp/$row.mlir" --gpu --tune-budget "$budget" -j 15 \
    --cache-dir /tmp/cleave-cache -o "$OUT/tune/$row.py" > "$OUT/tune/$row.log" 2>&1)
  echo "$row: exit $? in $(( $(date +%s) - start )) s"
done
