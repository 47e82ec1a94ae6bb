#!/usr/bin/env bash
# The GPU measurements the 2026-12-03 changes still lack, in one device run (about 9 minutes):
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh        (writes $OUT/pending/)
# 1. small tensor-core tiles (c0bf73e): x [16, 4096] @ W^T [1024, 4096], both kept candidates timed
#    (before: the one-kernel 16 x 16 form 79.5 us on a CUDA-core loop, the Split-K form 6.69 us);
# 2. the Llama-3 prefill layer, whose causal attention over repeat_kv'd heads now takes the grouped
#    form (37b61f9; before: 1.00x torch.compile, its attention region 1.03x, under the gate);
# 3. the Llama-3 decode layer at B64 written with SDPA(enable_gqa=True), against PyTorch's own GQA
#    kernels (with repeat_kv: 3.01x torch.compile).
set -uo pipefail
mkdir -p "$OUT/pending"
sed 's/\[1, 4096\]/[16, 4096]/g; s/\[1, 1024\]/[16, 1024]/g' bench/probes/llama3_decode_k_proj.mlir > /tmp/k16.mlir
timeout 120 cleave compile /tmp/k16.mlir -o /tmp/k16.py --gpu --keep 2 --tune-budget 0 -j 15 > "$OUT/pending/k16.log" 2>&1
grep -E '^\| |winner' "$OUT/pending/k16.log"
opts=(--cleave-options="--keep 2 --tune-budget 0 -j 15")
timeout 260 python bench/layers.py --out "$OUT/pending/prefill" --models llama3-8b --settings prefill --budget 200 "${opts[@]}" > "$OUT/pending/prefill.log" 2>&1
grep -E '^  \{' "$OUT/pending/prefill.log" | cut -c1-600
timeout 200 python bench/layers.py --out "$OUT/pending/gqa" --models llama3-8b --settings decode --decode-batches 64 --gqa enable_gqa --budget 130 "${opts[@]}" > "$OUT/pending/gqa.log" 2>&1
grep -E '^  \{' "$OUT/pending/gqa.log" | cut -c1-600
