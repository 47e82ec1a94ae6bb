#!/usr/bin/env bash
# What the forty-seventh session's changes still lack on a GPU (its device time ran out after two runs), one run of
# about 7 minutes on the 16-core machine:
#   bash bench/on_device.sh bash bench/probes/pending_s47.sh        (writes $OUT/s47/)
# 1. The graphs that read one input in two roles around a matmul (cleave-split-shared-inputs: a Gram matrix,
#    self-attention over one tensor, cosine similarities, a residual and a gate on a projection's own input; attention
#    pooling, which keeps its one load) and the session's four other
#    unseen graphs, against eager PyTorch and torch.compile (their kernels alone were timed:
#    bench/results/unseen_2026-12-07s47_H100.md).
set -uo pipefail
R=$(pwd)
U=bench/probes/unseen
P="$OUT/s47"
mkdir -p "$P"
graphs=()
for n in gram_512x96 self_attention_one_tensor cosine_similarity_matrix attention_pool_kv_one_tensor \
         residual_of_own_input gate_of_own_input output_beside_product qkv_projections_gqa_t64 \
         diff_attention_s256 sigmoid_attention_s256 bert_post_ln_t128 silu_mul_only; do
  graphs+=("$R/$U/$n.mlir")
done
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "${graphs[@]}" --out /tmp/s47 -j 15 > "$P/prepare.log" 2>&1
 timeout 330 python "$R/bench/gpu_suite.py" run /tmp/s47 --out "$P/graphs.json" --deadline 300 --row-budget 35 \
   --torch-compile default -j 15 > "$P/run.log" 2>&1)
grep -A10 "^| row" "$P/graphs.md" 2>/dev/null || tail -20 "$P/run.log"
