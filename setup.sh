#!/usr/bin/env bash
# Set up Cleave-IR in ./.venv (Python >= 3.11 and pip are all it needs), then run the main job on
# examples/mha.mlir: verify and round-trip it, run the algebraic search (symbolize, superoptimize,
# concretize, partition Split-K graphs), and interpret every resulting graph against the input.
# SETUP_JOB=0 installs only (CI: ./test.sh runs every step of the job, and more, in its tests).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch first and pinned: tilelang needs it, and an unpinned torch would fetch a multi-GB CUDA build
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[test]'
source .venv/bin/activate
[[ ${SETUP_JOB:-1} == 0 ]] && exit 0
EX=${1:-examples/mha.mlir}
echo "== cleave-opt $EX (verify + print)"
cleave-opt "$EX" > /tmp/cleave-roundtrip-1.mlir
cleave-opt /tmp/cleave-roundtrip-1.mlir | cmp -s - /tmp/cleave-roundtrip-1.mlir \
  && echo "round-trip: identical text"
echo "== cleave-opt $EX -p cleave-symbolize"
cleave-opt "$EX" -p cleave-symbolize | head -3
OUT=${OUT:-/tmp/cleave-candidates.mlir}
echo "== cleave-opt $EX -p cleave-superoptimize,cleave-concretize,cleave-partition-split-k -o $OUT"
cleave-opt "$EX" -p cleave-superoptimize,cleave-concretize,cleave-partition-split-k -o "$OUT"
echo "graphs written: $(grep -c 'tgraph.graph @' "$OUT"); what the candidates change (graphs per note):"
grep -o 'cleave.note = "[^"]*"' "$OUT" | sed 's/cleave.note = //' | sort | uniq -c
echo "== cleave-run $OUT (every graph against the input; 4096 dims resized to 256 to keep it fast)"
cleave-run "$OUT" --resize 4096=256 | awk '/ vs /{n++} / agree /{a++} END{print n+0 " comparisons with the input graph, " a+0 " agree"}'
KERNEL=${KERNEL:-kernel.py}
echo "== cleave-opt $EX -p cleave-pipeline -t tilelang -o $KERNEL   (search, schedule, place, emit)"
cleave-opt "$EX" -p cleave-pipeline -t tilelang -o "$KERNEL" 2>&1 | grep -E '^cleave-(superoptimize|pipeline)|error'
echo "kernel module written to $KERNEL"
echo "== python -m cleave_ir.tilelang_check $KERNEL   (every kernel lowered to CUDA for sm_90a, no GPU needed)"
KPATH=$(realpath "$KERNEL")
(cd /tmp && python -m cleave_ir.tilelang_check "$KPATH")
