#!/usr/bin/env bash
# Session 48: graphs with several outputs that a cut into kernels computes in different kernels (the last kernel
# no longer copies the earlier outputs through: `cleave.results`), and norms whose kernels now take 1-8 rows a
# block beside 16 (`schedule.FEW_ROWS_BESIDE_WIDE`), against eager PyTorch and torch.compile:
#   bash bench/on_device.sh bash bench/probes/pending_s48.sh        (writes $OUT/s48u/, ~4 minutes)
set -uo pipefail
R=$(pwd)
U=bench/probes/unseen
P="$OUT/s48u"
mkdir -p "$P"
graphs=()
for n in qkv_projections_gqa_t64 qkv_projections_llama3_t1 mlp_and_hidden_t64 output_beside_product bert_post_ln_t128 \
         fused_add_rmsnorm_t16 add_rmsnorm_projection_t1; do
  graphs+=("$R/$U/$n.mlir")
done
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "${graphs[@]}" --out /tmp/s48u -j 15 > "$P/prepare.log" 2>&1
 python "$R/bench/gpu_suite.py" prepare --models --rows '^(bert_output_layernorm|llama_rmsnorm|vit_layernorm_qkv|qwen3_qk_norm_scores|gpt2_log_softmax)$' \
   --out /tmp/s48u -j 15 >> "$P/prepare.log" 2>&1
 timeout 240 python "$R/bench/gpu_suite.py" run /tmp/s48u --out "$P/graphs.json" --deadline 210 --row-budget 25 \
   --torch-compile default -j 15 > "$P/run.log" 2>&1)
grep -A16 "^| row" "$P/graphs.md" 2>/dev/null || tail -20 "$P/run.log"
grep "^- " "$P/graphs.md" 2>/dev/null | head -20
