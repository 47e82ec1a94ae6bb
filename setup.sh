#!/usr/bin/env bash
# Set up Cleave-IR in ./.venv (Python >= 3.11 and pip are all it needs), then run the main job on
# examples/mha.mlir: verify and round-trip it with cleave-opt, symbolize it, and interpret it.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
source .venv/bin/activate
EX=${1:-examples/mha.mlir}
echo "== cleave-opt $EX (verify + print)"
cleave-opt "$EX" > /tmp/cleave-roundtrip-1.mlir
cleave-opt /tmp/cleave-roundtrip-1.mlir | cmp -s - /tmp/cleave-roundtrip-1.mlir \
  && echo "round-trip: identical text"
echo "== cleave-opt $EX -p cleave-symbolize"
cleave-opt "$EX" -p cleave-symbolize | head -3
echo "== cleave-run $EX (interpreted with every 4096 dim resized to 256 to keep it fast)"
cleave-run "$EX" --resize 4096=256
