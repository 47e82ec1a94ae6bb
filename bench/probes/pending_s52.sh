#!/usr/bin/env bash
# Session 52 left these for a GPU session (about 9 minutes; two device calls if one is cut short):
#   bash bench/on_device.sh bash bench/probes/pending_s52.sh      (writes $OUT/s52p/)
# 1. Warm `optimize` with remembered gate timings (issue 13's goal: under 30 s). `--warm` optimizes each layer a
#    second time in the same process; its rows should say "timings of an earlier run".
# 2. GPT-2 decode with its q/k/v projection group (session 52's run spent its budget before compiling it).
set -uo pipefail
P="$OUT/s52p"; mkdir -p "$P"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$P/gpu.txt"
export CLEAVE_CACHE_DIR=/tmp/ccache
timeout 300 python bench/layers.py --out "$P/llama" --models llama3-8b --settings decode prefill --decode-batches 1 --budget 260 \
  --no-max-autotune --warm --cleave-options "--keep 2 --tune-budget 0" > "$P/llama.log" 2>&1
grep -A4 "^| model" "$P/llama/layers.md" | cut -c1-400
timeout 200 python bench/layers.py --out "$P/gpt2" --models gpt2 --settings decode --decode-batches 1 --budget 180 \
  --no-max-autotune --warm --cleave-options "--keep 2 --tune-budget 0" > "$P/gpt2.log" 2>&1
grep -A3 "^| model" "$P/gpt2/layers.md" | cut -c1-400
grep -h "timings of an earlier run" "$P"/*/layers.md | head -3 | cut -c1-200
