#!/usr/bin/env bash
# Session 53 left this for a GPU session: issue 13's layer table with the stronger GQA baseline, now bench/layers.py's
# default (`--gqa enable_gqa`: SDPA reads each kv head for its group, as Hugging Face does without a mask). Session 53's
# B1 table (layers_2026-12-08s53_H100.md) and every table before it used `--gqa repeat_kv`.
# Device calls of about 9 minutes each (the cache of one serves the next on the same machine):
#   bash bench/on_device.sh bash bench/probes/pending_s53.sh b1      (GPT-2 and Qwen3-32B, prefill and decode B1)
#   bash bench/on_device.sh bash bench/probes/pending_s53.sh b1llama (Llama-3-8B, prefill and decode B1)
#   bash bench/on_device.sh bash bench/probes/pending_s53.sh batches (Llama-3-8B and Qwen3-32B decode B16, B64)
# And a third: prefill with each region's tile configurations tuned by measurement (30 s a region; every layer table so
# far passed --tune-budget 0, and the gate refused Qwen3-32B's prefill GEMMs at 0.88-0.97x cuBLAS):
#   bash bench/on_device.sh bash bench/probes/pending_s53.sh tuned
set -uo pipefail
P="$OUT/s53p_$1"; mkdir -p "$P"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$P/gpu.txt"
export CLEAVE_CACHE_DIR=/tmp/ccache
R=$PWD; cd /tmp
if [[ $1 == b1* ]]; then
  models="gpt2 qwen3-32b"; [[ $1 == b1llama ]] && models=llama3-8b
  timeout 570 python $R/bench/layers.py --out "$P/t" --models $models --decode-batches 1 --budget 480 --no-max-autotune \
    --cleave-options "--keep 2 --tune-budget 0" > "$P/t.log" 2>&1
elif [[ $1 == tuned ]]; then
  timeout 570 python $R/bench/layers.py --out "$P/t" --models qwen3-32b llama3-8b --settings prefill --budget 480 --no-max-autotune \
    --cleave-options "--keep 2 --tune-budget 30" > "$P/t.log" 2>&1
else
  timeout 570 python $R/bench/layers.py --out "$P/t" --models llama3-8b qwen3-32b --settings decode --decode-batches 16 64 \
    --budget 480 --no-max-autotune --cleave-options "--keep 2 --tune-budget 0" > "$P/t.log" 2>&1
fi
grep -A9 "^| model" "$P/t/layers.md" | cut -c1-330
rm -f "$P/t/layers.png" "$P/t/cleave_compile.log"
