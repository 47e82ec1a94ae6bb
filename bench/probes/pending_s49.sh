#!/usr/bin/env bash
# Session 49: the suite rows whose kernels the fp32 CUDA-core products changed (swiglu T1's winner, matmul_rowsum's
# split combines, rmsnorm_matmul T1's other candidates), against eager and torch.compile, then session 48's pending
# probes (bench/probes/pending_s48.sh). About 6 minutes:
#   bash bench/on_device.sh bash bench/probes/pending_s49.sh        (writes $OUT/s49/)
set -uo pipefail
R=$(pwd); P="$OUT/s49"; mkdir -p "$P"
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --rows '^(swiglu_t1|matmul_rowsum_s1024|matmul_rowsum_s4096|rmsnorm_matmul_t1)$' \
   --out /tmp/s49rows -j 15 > "$P/prepare.log" 2>&1
 timeout 200 python "$R/bench/gpu_suite.py" run /tmp/s49rows --out "$P/rows.json" --deadline 190 --row-budget 40 \
   --torch-compile default -j 15 > "$P/run.log" 2>&1)
grep -A6 "^| row" "$P/rows.md" 2>/dev/null || tail -8 "$P/run.log"
bash "$R/bench/probes/pending_s48.sh"
