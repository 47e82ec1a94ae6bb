#!/usr/bin/env bash
# Session 50: graphs whose outputs differ in width (proportional tiles in one grid, or a per-matmul cut), then the suite
# rows whose kernels the session changed (the unlooped-matmul rule), beside eager and torch.compile; ~5 minutes:
#   bash bench/on_device.sh bash bench/probes/pending_s50.sh        (writes $OUT/s50/)
set -uo pipefail
R=$(pwd); U=$R/bench/probes/unseen; P="$OUT/s50"; mkdir -p "$P"
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs $U/qkv_projections_gqa_t64.mlir $U/qkv_projections_llama3_t1.mlir \
   $U/mla_down_projections_t32.mlir $U/lora_side_output_t16.mlir $U/two_projections_epilogues_t48.mlir $U/rope_qk_decode_b1.mlir \
   --out /tmp/s50u -j 15 > "$P/prepare.log" 2>&1
 python "$R/bench/gpu_suite.py" prepare --rows '^(matmul_matmul_s1024|matmul_matmul_s4096|rmsnorm_matmul_t16)$' --out /tmp/s50r -j 15 >> "$P/prepare.log" 2>&1
 timeout 200 python "$R/bench/gpu_suite.py" run /tmp/s50u --out "$P/unseen.json" --deadline 190 --row-budget 40 --torch-compile default -j 15 > "$P/run_u.log" 2>&1
 timeout 130 python "$R/bench/gpu_suite.py" run /tmp/s50r --out "$P/rows.json" --deadline 120 --row-budget 40 --torch-compile default -j 15 > "$P/run_r.log" 2>&1)
grep -A8 "^| row" "$P/unseen.md" 2>/dev/null | cut -c1-250 || tail -8 "$P/run_u.log"
grep -A5 "^| row" "$P/rows.md" 2>/dev/null | cut -c1-250 || tail -8 "$P/run_r.log"
