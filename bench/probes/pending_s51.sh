#!/usr/bin/env bash
# Session 51: graphs of several projections at the final commit (cleave-split-projections, proportional tiles of at
# least 16 bytes), beside eager and torch.compile, then compute-sanitizer on their split and combine kernels; ~5 minutes:
#   bash bench/on_device.sh bash bench/probes/pending_s51.sh        (writes $OUT/s51/)
set -uo pipefail
R=$(pwd); U=$R/bench/probes/unseen; P="$OUT/s51"; mkdir -p "$P"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$P/gpu.txt"
G="$U/qkv_projections_gqa_t64.mlir $U/qkv_projections_llama3_t1.mlir $U/mla_down_projections_t32.mlir $U/lora_side_output_t16.mlir $U/two_projections_epilogues_t48.mlir"
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs $G --out /tmp/s51u -j 15 > "$P/prepare.log" 2>&1
 timeout 200 python "$R/bench/gpu_suite.py" run /tmp/s51u --out "$P/unseen.json" --deadline 190 --row-budget 40 --torch-compile default -j 15 > "$P/run.log" 2>&1)
grep -A8 "^| row" "$P/unseen.md" 2>/dev/null | cut -c1-250 || tail -8 "$P/run.log"
timeout 200 python bench/racecheck.py --out "$P/rc" --rows '^$' --graphs $U/mla_down_projections_t32.mlir $U/qkv_projections_gqa_t64.mlir \
  --every-candidate --kernels '_split_' > "$P/racecheck.log" 2>&1
head -20 "$P/rc/racecheck.md" 2>/dev/null | cut -c1-200 || tail -5 "$P/racecheck.log"
