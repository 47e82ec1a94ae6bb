#!/usr/bin/env bash
# The GPU measurements the twenty-second and twenty-third sessions' changes still lack (no device was lent after the
# first run), in three device runs of under 10 minutes each:
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh A      (1 and 4; writes $OUT/pending/)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh B      (2, 3 and 5)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh C      (6)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh R      (4 alone: the racecheck, about 3 minutes)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh T      (7: Split-K combines' partials by TMA)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh U      (8: residual RMSNorm's x and r by TMA)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh L      (9: Llama-3-8B layers after the MLP cut)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh N      (10: a decode norm joined to gate/up or cut off)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh W      (11 and 12, the twenty-seventh session's; carry
#                                                                      .gpu/site.tar.xz and .gpu/new_suite.tgz)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh X      (11 and 12 in one run: carry .gpu/site.tar.xz and
#                                                                      .gpu/new_suite.tgz)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh Y      (13, the twenty-eighth session's: the norm folds)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh Z      (14: logsumexp in one kernel or two)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh V      (15, the twenty-ninth session's: lane-wise online
#                                                                      softmax, Split-K logsumexp; SD attention D40)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh Q      (16: few long rows no stream step divides)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh S      (17: cleave-split-rows, the entropy graph)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh P      (18: racecheck of 15-17's kernels; logsumexp T32/T128)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh O      (19: a plain sum beside softmax sums; KL of logits)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh K      (20: racecheck of the split-rows and plain-sum kernels)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh M      (21, the thirtieth session's: the few-block step floor)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh J      (22, the thirty-first session's: the cut by reduction level)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh H      (24, the thirty-second session's: does any KL candidate
#                                                                      hang? main's, then with the unlanded chunk-local patch;
#                                                                      ran in the thirty-third: none hangs,
#                                                                      bench/results/kl_split_hang_check_2026-12-06s33_H100.md)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh G      (25, the thirty-third session's: 18 unseen graphs,
#                                                                      eight written with transposes, slices and concats)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh E      (25 in shorter: four of them, about 4 minutes)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh F      (25 in short: the eight graphs with transposes, slices, concats)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh D      (26, the thirty-fourth session's: the PyTorch front
#                                                                      end's transposes, slices and concats; up to 9.5 minutes;
#                                                                      ONLY=REGEX picks cases, T=SECONDS the limit)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh W3     (27, the thirty-fifth session's: Qwen3-32B's layer after
#                                                                      the structural fixes, against torch.compile)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh KV     (28, the thirty-sixth session's: the KV append as joins)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh RW     (29: outputs in parts written into their windows by the suite)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh N36    (30: ReadInParts and the two-output windows, untimed in the thirty-sixth)
#   bash bench/on_device.sh bash bench/probes/pending_checks.sh I      (23: even stream steps, lone-stream threads; ran in the thirty-second session,
#                                                                      bench/results/stream_steps_2026-12-05s32_H100.md)
# (U, L and N ran on an H100 in the twenty-sixth session: bench/results/pending_checks_2026-12-05s26_H100.md.)
# 11. f16 tiles widened to f32 before an element-wise op whose tile is f32 (a norm's x * x: fp16's own square
#     overflows past |x| = 256): the rmsnorm_matmul rows' kernels change by that cast (their winners c1, c5 and
#     c1_mm's norm); timed as prepared now against .gpu/new_suite.tgz (the same rows prepared at 5e542b1, timed
#     in bench/results/gpu_suite_2026-12-05s27_H200.md), one `run` each, same machine.
# 12. bench/probes/wide_fold.py: rmsnorm_matmul's one kernel with its [128, 128] sum-of-squares accumulator
#     folded to [128, 32 | 16 | 8] (fewer registers beside the GEMM's), at T = 1024 and 4096.
# (The 2026-12-03 list this file held ran: bench/results/pending_checks_2026-12-03_H200.md; parts B and R ran on
# 2026-12-05: bench/results/pending_checks_2026-12-05s24_H200.md; A's deep stages, C and T ran in the twenty-fifth
# session: bench/results/pending_checks_2026-12-05s25_H200.md.)
# 1. One-wave stages (de54f73): every graph whose kernels the rule changed, its candidates at 1..8
#    stages; the base is now the placed count, 3 is what 67f18d6 placed. rmsnorm_matmul T=16's two
#    changed kernels are byte-identical to run 1's measured 5-stage variants (14.54, 15.97 us against
#    16.14, 17.25 on 3); the rest are not measured.
# 2. The GEMV's block-wide sum of partials (bc222f7): llama_norm_q_decode's candidates, with the
#    lowering as committed and with the old serial fold (GEMV_BLOCK_REDUCE out of reach).
# 3. cleave-whole-small-copies (87f41ea), for residual_rmsnorm_matmul's one kernel (73.6 us against
#    20.7 for two kernels): its g tile ([128] halves a K step, one per thread) was loaded
#    synchronously in every iteration (no cp.async under 4 bytes a thread; no warp specialization).
#    The pipeline now copies g whole (8 KiB) before the loop; the `~per_step_copy` rows are the
#    kernels as they were (norm_eps_after_sqrt's one kernel too, the other graph the rewrite changes).
# 4. compute-sanitizer racecheck and memcheck on the changed kernels (with 87f41ea's whole g copies and
#    9bf43ba's LayerNorm held at 3072 columns, its loads and stores past 3000 masked).
# 5. The five unseen graphs added this session (all interpreted correct on the CPU), against PyTorch:
#    among them the LayerNorm over 37 x 3000 now padded to 64 rows (one kernel, not three).
set -uo pipefail
R=$(pwd)
P="$OUT/pending"
mkdir -p "$P"
U=bench/probes/unseen
part=${1:-A}
# variant DIR TAG PATCH GRAPH...: prepare the GRAPHs into DIR (4 candidates each), again into DIR_TAG with the
# Python statements PATCH run first (the passes as they were), and add the second set to DIR's manifest as rows
# `NAME~TAG`, so that one `gpu_suite.py run DIR` times both side by side
variant() {
  local dir=$1 tag=$2 patch=$3; shift 3
  (cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$@" --keep 4 --out "$dir" -j 15 > "$P/${dir##*/}_prepare.log" 2>&1)
  (cd /tmp && R="$R" PATCH="$patch" python - "$dir" "$tag" "$@" > "$P/${dir##*/}_$tag.log" 2>&1 <<'EOF'
import os, sys
out, tag, graphs = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(os.environ["R"], "bench"))
exec(os.environ["PATCH"])
import gpu_suite
sys.argv = ["gpu_suite.py", "prepare", "--graphs", *graphs, "--keep", "4", "--out", f"{out}_{tag}", "-j", "1"]
gpu_suite.main()
EOF
  )
  python - "$dir" "$tag" <<'EOF'
import json, shutil, sys
from pathlib import Path
d, tag = Path(sys.argv[1]), sys.argv[2]
s = Path(f"{d}_{tag}")
m, ms = (json.loads((x / "manifest.json").read_text()) for x in (d, s))
for e in ms["entries"].values():
    e = dict(e); e["row"] += f"~{tag}"; new = f"kernels/{e['row']}__full.py"
    shutil.copy(s / e["module"], d / new); e["module"] = new; m["entries"][e["row"] + "__full"] = e
(d / "manifest.json").write_text(json.dumps(m, indent=1))
EOF
}
# thread_copied_in_loop as it was before 18543d0: any one reader in a loop of one matmul
OLD_THREAD_COPY='
import cleave_ir.passes.lower_tilelang as lt
from cleave_ir.dialects import itgraph
def old(load):
    loop = load.parent_op()
    return isinstance(loop, itgraph.SequentialOp) and lt.loop_matmuls(loop) == 1 and len({u.operation for u in load.result.uses}) == 1
lt.thread_copied_in_loop = old
'
if [[ $part == C ]]; then
# 6. The staged one-row GEMV's partial rows (gemv_rows_per_step): gpt2_ln_mlp_decode (its down
#    projection piece: 48 steps of eight adds, was 384 of one; the row measured 0.88x),
#    decode_linear_kn's and rmsnorm_matmul T=1's second and third candidates (not the winners), against
#    the same kernels with one partial a thread (`~one_row_a_thread`).
variant /tmp/pg one_row_a_thread $'import cleave_ir.passes.lower_tilelang as lt\nlt.gemv_rows_per_step = lambda split, k, vector: split' \
  "$R/$U/gpt2_ln_mlp_decode.mlir" "$R/bench/probes/decode_linear_kn.mlir" "$R/examples/rmsnorm_matmul.mlir"
(cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/pg --out "$P/pg.json" --deadline 240 --row-budget 50 --torch-compile default -j 15 > "$P/pg.log" 2>&1)
grep -A12 "^| row" "$P/pg.md" 2>/dev/null || tail -20 "$P/pg.log"
exit 0
fi
if [[ $part == T || $part == U ]]; then
# 7 (T). A Split-K combine's padded partial tiles by TMA (thread_copied_in_loop: only a tile whose one reader is
#    the loop's matmul is thread-copied): sigmoid_glu_t5's combines (s2: 240.8 us, s4: 567.3 measured with the
#    thread copy; estimated 21.7, 25.3), against the same kernels thread-copied (`~thread_copy`); racecheck on
#    the new combines. Measured: bench/results/pending_checks_2026-12-05s25_H200.md.
# 8 (U). residual_rmsnorm_matmul's one kernel after 0e994d8: x and r, read by their add, are copied by TMA (62.0 us
#    thread-copied, s25), against the kernels as before, and racecheck on its first candidate.
if [[ $part == T ]]; then graph=sigmoid_glu_t5 kernels=combine; else graph=residual_rmsnorm_matmul kernels=residual_rmsnorm_matmul_c1_k0; fi
variant /tmp/p$part thread_copy "$OLD_THREAD_COPY" "$R/$U/$graph.mlir"
(cd /tmp && timeout 240 python "$R/bench/gpu_suite.py" run /tmp/p$part --out "$P/p$part.json" --top-k 4 --deadline 200 --row-budget 90 --torch-compile default -j 15 > "$P/p$part.log" 2>&1)
grep -A6 "^| row" "$P/p$part.md" 2>/dev/null || tail -20 "$P/p$part.log"
grep -E "^- " "$P/p$part.md" 2>/dev/null | cut -c1-240
(cd /tmp && timeout 150 python "$R/bench/racecheck.py" --graphs "$R/$U/$graph.mlir" --rows '^$' --every-candidate --timeout 100 -j 12 \
  --out "$P/r$part" --kernels "$kernels" > "$P/r$part.log" 2>&1)
tail -12 "$P/r$part/racecheck.md"
exit 0
fi
if [[ $part == Z ]]; then
# 14. (twenty-eighth session) logsumexp in one streaming kernel (3a271c5) against the two kernels before (`~old`: a max
#     read after its loop is not a running max), and torch.compile.
  variant /tmp/z old '
import cleave_ir.passes.schedule as sc
from cleave_ir.dialects import tgraph
new = sc._explicit_maxes
def old(graph, ops):
    keep = lambda u: isinstance(u, (tgraph.OutputOp, tgraph.SubOp)) or sc._stored_cast(u)
    return {m: e for m, e in new(graph, ops).items() if all(keep(u.operation) for u in m.result.uses)}
sc._explicit_maxes = old' "$R"/$U/logsumexp_t8_v32000.mlir
  (cd /tmp && timeout 150 python "$R/bench/gpu_suite.py" run /tmp/z --out "$P/z_lse.json" --deadline 140 --row-budget 60 --torch-compile default -j 15 > "$P/z_lse.log" 2>&1)
  grep "^| \|^- " "$P/z_lse.md" | cut -c1-200
  exit 0
fi
if [[ $part == V ]]; then
# 15. (twenty-ninth session) an online softmax over a few long rows without matmuls runs lane by lane
#     (`_plan_lanes`: no reduction inside the loop), and a Split-K logsumexp shifts each chunk by its own max
#     (`stabilize_split_k.match_row_max`: its split forms were dropped before): logsumexp over a vocabulary and the
#     LM-head softmax (its row statistics piece), as prepared now against `~old` (both out of reach), with
#     torch.compile; then Stable Diffusion's attention at head dim 40 (twenty-eighth session, not yet timed).
  variant /tmp/v old '
import cleave_ir.passes.lower_tilelang as lt
import cleave_ir.passes.stabilize_split_k as sk
lt._KernelLowering._plan_lanes = lambda self, op, term: None
sk.match_row_max = lambda *a, **k: None' "$R"/$U/logsumexp_t8_v32000.mlir "$R"/$U/lm_head_softmax_decode.mlir
  (cd /tmp && timeout 260 python "$R/bench/gpu_suite.py" run /tmp/v --out "$P/v_lanes.json" --top-k 4 --deadline 240 --row-budget 40 --torch-compile default -j 15 > "$P/v_lanes.log" 2>&1)
  grep "^| \|^- " "$P/v_lanes.md" | cut -c1-220
  (cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$R"/$U/sd_self_attention_d40.mlir "$R"/$U/sd_cross_attention_d40.mlir --out /tmp/sd -j 15 > "$P/sd_prepare.log" 2>&1
   timeout 150 python "$R/bench/gpu_suite.py" run /tmp/sd --out "$P/sd_attention.json" --deadline 130 --row-budget 50 --torch-compile default -j 15 > "$P/sd_attention.log" 2>&1)
  grep "^| \|^- " "$P/sd_attention.md" | cut -c1-220
  exit 0
fi
if [[ $part == Q ]]; then
# 16. (twenty-ninth session) few long rows where no stream step divides the row: logsumexp over Llama-3's 128256-word
#     vocabulary (bf16, 2 rows) and GPT-2's log-probabilities over 50257 (T=4), padded to multiples of 2048 (129024,
#     51200: `padded_dims.LONG_ROW`), against `~old` (the padding as before: none, and 50432), with torch.compile.
#     (The entropy of 4 softmax rows over 32000, unchanged by it, was timed in the first run of this part:
#     bench/results/few_long_rows_2026-12-05s29_H100_run1.json.)
  variant /tmp/q old '
import cleave_ir.passes.padded_dims as pd
pd.awkward = lambda n, reduced=False: (n > 16 and n % 16 != 0) or (n > 256 and n % 64 != 0)
pd.padded_size = lambda n: -(-n // (256 if n > 2048 else 128 if n > 512 else 64 if n > 32 else 32)) * (256 if n > 2048 else 128 if n > 512 else 64 if n > 32 else 32)' \
    "$R"/$U/logsumexp_t2_v128256_bf16.mlir "$R"/$U/gpt2_log_softmax_vocab50257.mlir
  (cd /tmp && timeout 360 python "$R/bench/gpu_suite.py" run /tmp/q --out "$P/q_streams.json" --top-k 4 --deadline 300 --row-budget 60 --torch-compile default -j 15 > "$P/q_streams.log" 2>&1)
  grep "^| \|^- " "$P/q_streams.md" | cut -c1-220
  exit 0
fi
if [[ $part == S ]]; then
# 17. (twenty-ninth session) row statistics the search finds no Split-K form for get one (`cleave-split-rows`), and a
#     sum of `exp * y` beside the sum of the exp keeps the max as the loop's running max (`schedule._exp_sums`): the
#     entropy of 4 softmax rows over 32000 (two kernels of 4 blocks before: 17.3 us), against `~old` (both out of
#     reach), with torch.compile.
  variant /tmp/s old '
import cleave_ir.passes.pipeline as pl
import cleave_ir.passes.schedule as sc
from cleave_ir.passes.options import CleavePass
class Off(CleavePass):
    name = "off"
    def apply(self, ctx, op): pass
pl.SplitRowsPass = Off
sc._exp_sums = lambda e: {u.operation for u in e.results[0].uses}' "$R"/$U/softmax_entropy_t4_v32000.mlir
  (cd /tmp && timeout 200 python "$R/bench/gpu_suite.py" run /tmp/s --out "$P/s_rows.json" --top-k 4 --deadline 180 --row-budget 60 --torch-compile default -j 15 > "$P/s_rows.log" 2>&1)
  grep "^| \|^- " "$P/s_rows.md" | cut -c1-220
  exit 0
fi
if [[ $part == P ]]; then
# 18. (twenty-ninth session) compute-sanitizer racecheck and memcheck on every kept candidate of the graphs this
#     session's changes reach (lane-wise loops, padded long rows with their masked tails, the split-rows form),
#     then logsumexp over 32 and 128 rows of 32000 (more blocks: where lane-wise stops and the splits matter less),
#     against torch.compile.
  (cd /tmp && timeout 300 python "$R/bench/racecheck.py" --graphs "$R"/$U/logsumexp_t8_v32000.mlir "$R"/$U/logsumexp_t2_v128256_bf16.mlir \
     "$R"/$U/softmax_entropy_t4_v32000.mlir --rows '^$' --every-candidate --timeout 120 -j 12 --out "$P/rP" > "$P/rP.log" 2>&1)
  tail -14 "$P/rP/racecheck.md"
  mkdir -p /tmp/pg && for t in 32 128; do sed "s/\[8, /[$t, /g; s/@logsumexp/@logsumexp_t$t/" "$R"/$U/logsumexp_t8_v32000.mlir > /tmp/pg/logsumexp_t${t}_v32000.mlir; done
  (cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs /tmp/pg/*.mlir --keep 4 --out /tmp/pp -j 15 > "$P/pp_prepare.log" 2>&1
   timeout 150 python "$R/bench/gpu_suite.py" run /tmp/pp --out "$P/pp_rows.json" --top-k 4 --deadline 130 --row-budget 50 --torch-compile default -j 15 > "$P/pp_rows.log" 2>&1)
  grep "^| \|^- " "$P/pp_rows.md" | cut -c1-220
  exit 0
fi
if [[ $part == E ]]; then
# 25 in shorter (device time for about 4 minutes): four of the structural graphs.
G=$(for g in rope_qk_decode_b1 kv_append_decode_attention packed_gate_up_t16 packed_qk_scores; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 80 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 2 --out /tmp/pe33 -j 15 > "$P/pe33_prepare.log" 2>&1) || tail -5 "$P/pe33_prepare.log"
(cd /tmp && timeout 150 python "$R/bench/gpu_suite.py" run /tmp/pe33 --out "$P/pe33.json" --top-k 2 --deadline 130 --row-budget 30 --torch-compile default -j 15 > "$P/pe33.log" 2>&1)
grep "^| \|^Geo" "$P/pe33.md" 2>/dev/null | cut -c1-240 || tail -20 "$P/pe33.log"
exit 0
fi
if [[ $part == F ]]; then
# 25 in short (device time for under 6 minutes): the eight graphs written with transposes, slices and concats.
G=$(for g in rope_q_t8 rope_qk_decode_b1 kv_append_decode_attention packed_qk_scores linear_explicit_transpose packed_gate_up_t16 \
  last_token_lm_head split_heads_attention_out; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 100 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 2 --out /tmp/pf33 -j 15 > "$P/pf33_prepare.log" 2>&1) || tail -5 "$P/pf33_prepare.log"
(cd /tmp && timeout 230 python "$R/bench/gpu_suite.py" run /tmp/pf33 --out "$P/pf33.json" --top-k 2 --deadline 210 --row-budget 26 --torch-compile default -j 15 > "$P/pf33.log" 2>&1)
grep "^| \|^Geo" "$P/pf33.md" 2>/dev/null | cut -c1-240 || tail -20 "$P/pf33.log"
exit 0
fi
if [[ $part == G ]]; then
# 25 (the thirty-third session's). Eighteen graphs never compiled before, as users write them: with transposes, slices
#    and concats (`cleave-fold-structural`: rotary embeddings, packed QKV and gate_up weights, x @ w.T as a transpose,
#    last-token logits, two heads joined, a KV cache appended to by torch.cat), then LoRA, an MSE loss, absmax scaling, an MoE router, linear attention,
#    cosine similarity, 77-token scores, LayerNorm with its stats, MQA decode over 1000 keys, three chained matmuls.
#    Checked against float64 and timed beside eager and torch.compile.
G=$(for g in rope_q_t8 rope_qk_decode_b1 kv_append_decode_attention packed_qk_scores linear_explicit_transpose packed_gate_up_t16 last_token_lm_head \
  split_heads_attention_out lora_linear_t16 mse_loss absmax_quant_t32 moe_router_t64 linear_attention_s1024 cosine_similarity_rows \
  batched_scores_77 layernorm_stats_t64 mqa_decode_h64_l1000 three_matmul_chain; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 150 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 2 --out /tmp/pg33 -j 15 > "$P/pg33_prepare.log" 2>&1) || tail -5 "$P/pg33_prepare.log"
(cd /tmp && timeout 400 python "$R/bench/gpu_suite.py" run /tmp/pg33 --out "$P/pg33.json" --top-k 2 --deadline 380 --row-budget 30 --torch-compile default -j 15 > "$P/pg33.log" 2>&1)
grep "^| \|^Geo" "$P/pg33.md" 2>/dev/null | cut -c1-240 || tail -20 "$P/pg33.log"
exit 0
fi
if [[ $part == H ]]; then
# 24 (the thirty-second session's). Its timing of the KL divergence with the unlanded patch
#    (bench/probes/unlanded/kl_split_chunk_local_2026-12-05s32.patch) made no progress after compiling, twice. Every
#    kept candidate of kl_logits_t4_v32000 run alone under a timeout, its kernels synchronized one by one
#    (bench/probes/unlanded/kl_split_diag.py): first as main compiles it (its third candidate, a 2-split of 6 kernels,
#    has never run on a GPU), then with the patch applied to a copy of the checkout.
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$R/$U/kl_logits_t4_v32000.mlir" --keep 4 --out /tmp/ph -j 15 > "$P/ph_prepare.log" 2>&1)
(cd /tmp && DIAG_TIMEOUT=40 timeout 200 python "$R/bench/probes/unlanded/kl_split_diag.py" /tmp/ph/kernels/kl_logits_t4_v32000__full.py 4x32000 4x32000 2>&1 | grep -v TileLang:)
rm -rf /tmp/hsrc && mkdir /tmp/hsrc && (cd "$R" && git archive HEAD | tar -x -C /tmp/hsrc) && (cd /tmp/hsrc && git apply "$R/bench/probes/unlanded/kl_split_chunk_local_2026-12-05s32.patch") \
  && python -m pip install -q --no-deps --no-build-isolation --target /tmp/hcl /tmp/hsrc > /dev/null 2>&1
(cd /tmp && PYTHONPATH=/tmp/site:/tmp/hcl python /tmp/hsrc/bench/gpu_suite.py prepare --graphs "$R/$U/kl_logits_t4_v32000.mlir" --keep 4 --out /tmp/ph2 -j 15 > "$P/ph2_prepare.log" 2>&1)
(cd /tmp && DIAG_TIMEOUT=40 timeout 220 python "$R/bench/probes/unlanded/kl_split_diag.py" /tmp/ph2/kernels/kl_logits_t4_v32000__full.py 4x32000 4x32000 2>&1 | grep -v TileLang:)
exit 0
fi
if [[ $part == I ]]; then
# 23 (the thirty-first session's; run in the thirty-second, prepared on the CPU: stream_steps_2026-12-05s32_H100.md;
#    the factor is now on and the thread switch removed, so `~off` needs STREAM_STEP_FACTOR = 1). `schedule.STREAM_STEP_FACTOR` = 256 and
#    `place_memory.LONE_STREAM_THREADS` = 256 (committed off): a few long rows stream in steps with 256 for a factor
#    (32000 columns: 1280, not 1600) on 256 threads, not 64. Every row whose kernels they change, prepared with both off
#    (rows `~off`) and on, timed in one run: 8 unseen row-statistics graphs beside torch.compile, then the suite rows whose
#    norm kernels take 256 threads (torch.compile off: their baselines are in gpu_suite_2026-12-05s27_H200.md).
ON=$'import cleave_ir.passes.schedule as s, cleave_ir.passes.place_memory as m\ns.STREAM_STEP_FACTOR = 256\nm.LONE_STREAM_THREADS = 256'
prep() {  # prep OUT PATCH ARGS...: gpu_suite.py prepare in this process after PATCH (its forked workers keep it)
  local out=$1 patch=$2; shift 2
  (cd /tmp && R="$R" PATCH="$patch" python - "$out" "$@" > "$P/${out##*/}.log" 2>&1 <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["R"], "bench"))
exec(os.environ["PATCH"])
import gpu_suite
sys.argv = ["gpu_suite.py", "prepare", "--out", sys.argv[1], "--keep", "4", "-j", "15", *sys.argv[2:]]
gpu_suite.main()
EOF
  )
}
G=$(for g in kl_logits_t4_v32000 kl_logits_t128_v32000 logsumexp_t4_v32000 logsumexp_t8_v32000 logsumexp_t2_v128256_bf16 \
  softmax_entropy_t4_v32000 cross_entropy_onehot_t8_v32000 zloss_t4_v50000_bf16; do echo "$R/$U/$g.mlir"; done)
prep /tmp/pi_off "" --graphs $G; prep /tmp/pi_on "$ON" --graphs $G
prep /tmp/pis_off "" --rows 'rmsnorm_matmul_t(16|128|1024|4096)|matmul_rowsum_s4096'; prep /tmp/pis_on "$ON" --rows 'rmsnorm_matmul_t(16|128|1024|4096)|matmul_rowsum_s4096'
python "$R/bench/probes/merge_prepared.py" /tmp/pi_on /tmp/pi_off off /tmp/pi
python "$R/bench/probes/merge_prepared.py" /tmp/pis_on /tmp/pis_off off /tmp/pis
(cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/pi --out "$P/pi.json" --top-k 2 --deadline 280 --row-budget 22 --torch-compile default -j 15 > "$P/pi.log" 2>&1)
(cd /tmp && timeout 180 python "$R/bench/gpu_suite.py" run /tmp/pis --out "$P/pis.json" --top-k 2 --deadline 160 --row-budget 20 --torch-compile off -j 15 > "$P/pis.log" 2>&1)
for f in pi pis; do grep -A20 "^| row" "$P/$f.md" 2>/dev/null | cut -c1-220 || tail -20 "$P/$f.log"; done
exit 0
fi
if [[ $part == J ]]; then
# 22 (the thirty-first session's). `partition_kernels.partition_by_level`: the KL divergence of two logit rows (no one
#    loop holds two running maxes) cut into its maxes, then every exp sum shifted by them, one loop over p and q
#    (`schedule._loops` joins the groups a reduction shares with); the greedy cut (three kernels, shifted rows in
#    global memory between them) is the next candidate. All candidates (top 4) timed beside torch.compile, 4 and 128 rows.
(cd /tmp && timeout 200 python "$R/bench/gpu_suite.py" prepare --graphs "$R/$U/kl_logits_t4_v32000.mlir" "$R/$U/kl_logits_t128_v32000.mlir" \
  --keep 4 --out /tmp/pj -j 15 > "$P/pj_prepare.log" 2>&1) || tail -5 "$P/pj_prepare.log"
(cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/pj --out "$P/pj.json" --top-k 4 --deadline 280 --row-budget 90 --torch-compile default -j 15 > "$P/pj.log" 2>&1)
grep -A6 "^| row" "$P/pj.md" 2>/dev/null || tail -20 "$P/pj.log"
grep -E "^- " "$P/pj.md" 2>/dev/null | cut -c1-260
exit 0
fi
if [[ $part == M ]]; then
# 21 (the thirtieth session's). cost_model.STREAM_STEP_S: a lone block's online-softmax step takes at least 0.3 us
#    (exposed_s). Every few-long-row graph whose kernels or ranking it changes, against the same graphs prepared
#    without it (`~no_step_floor`), all candidates (top 4) timed in one run beside torch.compile.
variant /tmp/pm no_step_floor $'import cleave_ir.passes.cost_model as c\nc.STREAM_STEP_S = 0.0' \
  "$R/$U/logsumexp_t4_v32000.mlir" "$R/$U/logsumexp_t8_v32000.mlir" "$R/$U/softmax_entropy_t4_v32000.mlir" \
  "$R/$U/cross_entropy_onehot_t8_v32000.mlir" "$R/$U/logsumexp_t2_v128256_bf16.mlir" "$R/$U/lm_head_softmax_decode.mlir"
(cd /tmp && timeout 420 python "$R/bench/gpu_suite.py" run /tmp/pm --out "$P/pm.json" --top-k 4 --deadline 400 --row-budget 45 --torch-compile default -j 15 > "$P/pm.log" 2>&1)
grep -A14 "^| row" "$P/pm.md" 2>/dev/null || tail -20 "$P/pm.log"
grep -E "^- " "$P/pm.md" 2>/dev/null | cut -c1-260
exit 0
fi
if [[ $part == O ]]; then
# 19. (twenty-ninth session) a plain sum beside the softmax's sums in one online-softmax loop (`schedule._plain_sum`):
#     cross-entropy against a one-hot target (8 x 32000), and the KL divergence of two logit rows (4 x 32000), as
#     prepared now against `~old`, this session's five changes out of reach (lane-wise loops, the chunk-max
#     rewrite, split-rows, `_exp_sums`, plain sums), with torch.compile.
  variant /tmp/o old '
import cleave_ir.passes.lower_tilelang as lt
import cleave_ir.passes.stabilize_split_k as sk
import cleave_ir.passes.pipeline as pl
import cleave_ir.passes.schedule as sc
from cleave_ir.passes.options import CleavePass
class Off(CleavePass):
    name = "off"
    def apply(self, ctx, op): pass
lt._KernelLowering._plan_lanes = lambda self, op, term: None
sk.match_row_max = lambda *a, **k: None
pl.SplitRowsPass = Off
sc._exp_sums = lambda e: {u.operation for u in e.results[0].uses}
sc._plain_sum = lambda op, mx: False' "$R"/$U/cross_entropy_onehot_t8_v32000.mlir "$R"/$U/kl_logits_t4_v32000.mlir
  (cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/o --out "$P/o_rows.json" --top-k 4 --deadline 280 --row-budget 60 --torch-compile default -j 15 > "$P/o_rows.log" 2>&1)
  grep "^| \|^- " "$P/o_rows.md" | cut -c1-220
  exit 0
fi
if [[ $part == K ]]; then
# 20. (twenty-ninth session) racecheck and memcheck on the kernels part P did not reach: the split-rows candidates of the
#     entropy graph, and the cross-entropy's kernels (a lane-wise loop with a deferred plain sum; its split-rows pair).
  (cd /tmp && timeout 230 python "$R/bench/racecheck.py" --graphs "$R"/$U/softmax_entropy_t4_v32000.mlir "$R"/$U/cross_entropy_onehot_t8_v32000.mlir \
     --rows '^$' --every-candidate --kernels 'rows_s4|cross_entropy_k0' --timeout 100 -j 12 --out "$P/rK" > "$P/rK.log" 2>&1)
  tail -10 "$P/rK/racecheck.md"
  exit 0
fi
if [[ $part == Y ]]; then
# 13. (twenty-eighth session) a norm's sum of squares over rows too wide for one warp (5120, 768, 3000) folded from
#     its x tile with the square computed in the fold, no fp32 tile of the squares staged in shared memory: as
#     prepared now against `~old` (the squares' tile, `_row_split` out of reach); then `cleave compile --gpu` tunes
#     the two prefill norms (bench/probes/norms) over their tile neighbourhood.
  variant /tmp/y old 'import cleave_ir.passes.lower_tilelang as lt; lt._KernelLowering._row_split = lambda self, op: 1' \
    "$R"/bench/probes/norms/*.mlir "$R"/$U/layernorm_affine_t197.mlir "$R"/$U/bf16_layernorm_gelu_37x3000.mlir \
    "$R"/$U/rmsnorm_matmul_t5_n3000.mlir
  (cd /tmp && timeout 230 python "$R/bench/gpu_suite.py" run /tmp/y --out "$P/y_norms.json" --deadline 215 --row-budget 20 --torch-compile default -j 15 > "$P/y_norms.log" 2>&1)
  grep "^| " "$P/y_norms.md" | cut -d'|' -f2-4,8-10
  # the measured tuner over the norms' tile neighbourhood (rows a block, threads): is 16 rows in one wave the fastest?
  for f in "$R"/bench/probes/norms/*.mlir; do n=$(basename "$f" .mlir)
    (cd /tmp && timeout 80 cleave compile "$f" --gpu --tune-budget 40 -j 15 --cache-dir /tmp/cleave-cache -o "$P/tune_$n.py" > "$P/tune_$n.log" 2>&1)
    grep -E "^\| [0-9]|^tune|^tuned|^winner" "$P/tune_$n.log" | head -40; done
  exit 0
fi
if [[ $part == X ]]; then
# 11 and 12 in one run (the twenty-eighth session): the kernels as prepared now and the 5e542b1 ones (rows `~old`) in
# one manifest, so one `gpu_suite.py run` times both interleaved with the same baselines; then the wide_fold probe.
  mkdir -p /tmp/w_old && tar -C /tmp/w_old -xzf .gpu/new_suite.tgz
  (cd /tmp && python "$R/bench/gpu_suite.py" prepare --out /tmp/w_new --rows rmsnorm_matmul -j 15 > "$P/x_prepare.log" 2>&1)
  python - /tmp/w_new /tmp/w_old/new <<'PY'
import json, shutil, sys
from pathlib import Path
d, s = Path(sys.argv[1]), Path(sys.argv[2])
m, ms = (json.loads((x / "manifest.json").read_text()) for x in (d, s))
for e in ms["entries"].values():
    if not e["row"].startswith("rmsnorm_matmul"):
        continue
    e = dict(e); e["row"] += "~old"; new = f"kernels/{e['row']}__full.py"
    shutil.copy(s / e["module"], d / new); e["module"] = new; m["entries"][e["row"] + "__full"] = e
(d / "manifest.json").write_text(json.dumps(m, indent=1))
PY
  (cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/w_new --rows rmsnorm_matmul --out "$P/x_rms.json" --deadline 280 --row-budget 28 --torch-compile default -j 15 > "$P/x_rms.log" 2>&1)
  grep "^| rmsnorm" "$P/x_rms.md"
  (cd /tmp && timeout 170 python "$R/bench/probes/wide_fold.py" /tmp/w_old/new > "$P/wide_fold.log" 2>&1; cp "$OUT/wide_fold.json" "$P/" 2>/dev/null)
  grep -E "^T[0-9]|failed|Error" "$P/wide_fold.log"
  exit 0
fi
if [[ $part == W ]]; then
  mkdir -p /tmp/w_old && tar -C /tmp/w_old -xzf .gpu/new_suite.tgz
  (cd /tmp && python "$R/bench/gpu_suite.py" prepare --out /tmp/w_new --rows rmsnorm_matmul -j 15 > "$P/w_prepare.log" 2>&1
   for v in new old; do d=/tmp/w_new; [[ $v == old ]] && d=/tmp/w_old/new
     timeout 200 python "$R/bench/gpu_suite.py" run $d --rows rmsnorm_matmul --out "$P/w_$v.json" --deadline 180 --row-budget 35 --torch-compile default -j 15 > "$P/w_$v.log" 2>&1; done)
  grep "^| rmsnorm" "$P/w_new.md" "$P/w_old.md"
  (cd /tmp && timeout 240 python "$R/bench/probes/wide_fold.py" /tmp/w_old/new > "$P/wide_fold.log" 2>&1; cp "$OUT/wide_fold.json" "$P/" 2>/dev/null)
  grep -E "^T[0-9]|failed" "$P/wide_fold.log"
  exit 0
fi
if [[ $part == L ]]; then
# 9. Llama-3-8B's layer with the wide-hidden cut (de3e5a0: gate and up in one region, down with the residual)
#    and the gate comparing where fp16 holds the result (1282f3b): prefill and decode B1.
(timeout 540 python bench/layers.py --out "$P/layers" --models llama3-8b --no-max-autotune --decode-batches 1 --budget 420 \
  "--cleave-options=--keep 2 --tune-budget 0 -j 15" > "$P/layers.log" 2>&1)
grep -E "^\|" "$P/layers/layers.md" | cut -c1-220
exit 0
fi
if [[ $part == KV ]]; then
# 28 (the thirty-sixth session's). kv_append_decode_attention with the KV concats kept as joins (`#cleave.join`: one
#    torch.cat each in `run`, then FlashDecoding; was 8 kernels cut in graph order, 175.8 us against eager's 104.4),
#    against eager and torch.compile; rope_q_t8 and packed_gate_up_t16 beside it for their torch.compile numbers.
#    Then what a transposing copy of linear attention's v costs (`run` copies the view `TransposedLhs` makes).
G=$(for g in kv_append_decode_attention rope_q_t8 packed_gate_up_t16; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 100 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 3 --out /tmp/pkv -j 15 > "$P/pkv_prepare.log" 2>&1) || tail -5 "$P/pkv_prepare.log"
(cd /tmp && timeout 260 python "$R/bench/gpu_suite.py" run /tmp/pkv --out "$P/pkv.json" --top-k 3 --deadline 240 --row-budget 80 --torch-compile default -j 15 > "$P/pkv.log" 2>&1)
grep "^| \|^Geo\|^- kv" "$P/pkv.md" 2>/dev/null | cut -c1-260 || tail -20 "$P/pkv.log"
timeout 60 python - <<'PY'
import torch
v = torch.randn(1, 32, 4096, 128, dtype=torch.bfloat16, device="cuda")
vt = v.transpose(-1, -2)
for name, f in (("transposing copy of v (the view run copies)", lambda: vt.new_empty(vt.shape).copy_(vt)), ("dense copy of v", lambda: v.clone())):
    for _ in range(3):
        f()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(); a.record()
    for _ in range(50):
        f()
    b.record(); torch.cuda.synchronize()
    print(f"{name}: {a.elapsed_time(b) / 50 * 1000:.1f} us")
PY
exit 0
fi
if [[ $part == N36 ]]; then
# 30 (what the thirty-sixth session changed without device time left to time it, in one run of about 8 minutes):
#    ReadInParts (3e79cb6: the Qwen3 query norm + rope region loads x once; estimate 22.9 -> 16.8 us; it measured 30.6
#    us against eager's 515 before), and the two-output windows (rope_qk_decode_b1: its q and k halves written into
#    both outputs; 4.5 us before, torch.compile 1.3), and linear attention's v read from its storage by `transpose_A`
#    gemms (no 125 us copy of its transposed view; the region measured 207 us against PyTorch's 129.8 before).
(cd /tmp && timeout 330 python "$R/bench/probes/structural_frontend_gpu.py" -j 15 --only "qk_norm_rope_s2048|qk_norm_transposed_s2048|linear_attention_s4096" > "$P/structural_frontend.log" 2>&1; echo "exit $?" >> "$P/structural_frontend.log")
grep -E "^## |^\| [0-9]|max error|FAILED|^exit" "$P/structural_frontend.log"
G=$(for g in rope_qk_decode_b1 rope_q_t8; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 60 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 2 --out /tmp/pn36 -j 15 > "$P/pn36_prepare.log" 2>&1) || tail -5 "$P/pn36_prepare.log"
(cd /tmp && timeout 150 python "$R/bench/gpu_suite.py" run /tmp/pn36 --out "$P/pn36.json" --top-k 2 --deadline 140 --row-budget 60 --torch-compile default -j 15 > "$P/pn36.log" 2>&1)
grep "^| \|^Geo" "$P/pn36.md" 2>/dev/null | cut -c1-260 || tail -20 "$P/pn36.log"
exit 0
fi
if [[ $part == RW ]]; then
# 29 (the thirty-sixth session's). The suite's harness and `run()` without `out` now let the last kernel write an output
#    in parts (a rotary embedding's halves, two heads joined) into its windows of one allocated output, as `run(out=)`
#    did, instead of joining the parts by torch.cat after it (rope_q_t8 was 4.2 us against torch.compile's 1.7).
G=$(for g in rope_q_t8 rope_qk_decode_b1 split_heads_attention_out; do echo "$R/$U/$g.mlir"; done)
(cd /tmp && timeout 100 python "$R/bench/gpu_suite.py" prepare --graphs $G --keep 2 --out /tmp/prw -j 15 > "$P/prw_prepare.log" 2>&1) || tail -5 "$P/prw_prepare.log"
(cd /tmp && timeout 200 python "$R/bench/gpu_suite.py" run /tmp/prw --out "$P/prw.json" --top-k 2 --deadline 180 --row-budget 60 --torch-compile default -j 15 > "$P/prw.log" 2>&1)
grep "^| \|^Geo\|^- " "$P/prw.md" 2>/dev/null | cut -c1-260 || tail -20 "$P/prw.log"
exit 0
fi
if [[ $part == W3 ]]; then
# 27 (the thirty-fifth session's). Qwen3-32B's layer after the structural fixes (97552e9, 9224e33): the query's
#    RMSNorm + head transpose + rotary embedding one region (region 5 of the prefill plan), its halves written into
#    their windows of `out`. Against torch.compile; prefill B1 S2048 and decode B1 KV4096 (s26: 1.02x and 1.32x).
(timeout 560 python bench/layers.py --out "$P/layers_q3" --models qwen3-32b --no-max-autotune --decode-batches 1 --budget 440 \
  "--cleave-options=--keep 2 --tune-budget 0 -j 15" > "$P/layers_q3.log" 2>&1)
grep -E "^\|" "$P/layers_q3/layers.md" | cut -c1-220
exit 0
fi
if [[ $part == D ]]; then
# 26. Ran in the thirty-fifth session (bench/results/structural_frontend_2026-12-06s35_H100.md): at first every
#     structural region was refused on the GPU; after 66a53b6 and 97552e9 the two q-path cases compiled (7.0x and
#     13.3x eager); the rest was not reached (each region was tuned for up to 5 minutes then; not since 571084a).
#     Written without device time: Qwen3's q path (RMSNorm over the head dim, head transpose, rotary embedding) as
#     one region whose output is two permuted halves; the same without the rotary embedding (one permuted output,
#     which `run(out=)` writes through its view); a last-token LM head whose select is a view of the norm's input.
#     The gate's report (ours against PyTorch's region, timed by the gate) and the stitched error against float64.
(cd /tmp && timeout ${T:-560} python "$R/bench/probes/structural_frontend_gpu.py" -j 15 --only "${ONLY:-.}" > "$P/structural_frontend.log" 2>&1; echo "exit $?" >> "$P/structural_frontend.log")
grep -E "^## |^\| [0-9]|max error|FAILED|^exit" "$P/structural_frontend.log"
exit 0
fi
if [[ $part == N ]]; then
# 10. The partition cuts Llama-3-8B's RMSNorm off its gate/up region. At decode the joined graph, now searched in
#     ~20 s (it ran 153 s to the work budget before the element-wise shape rule), is one kernel estimated 49.8 us
#     against 4.8 + 47.1 for the norm and the fused gate/up; measure the three against PyTorch.
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$R/$U/llama3_norm_gate_up_decode.mlir" "$R/bench/probes/llama3_decode_norm.mlir" \
  "$R/bench/probes/llama3_decode_gate_up.mlir" --out /tmp/pN -j 15 > "$P/pN_prepare.log" 2>&1
 timeout 240 python "$R/bench/gpu_suite.py" run /tmp/pN --out "$P/pN.json" --deadline 200 --row-budget 60 --torch-compile default -j 15 > "$P/pN.log" 2>&1)
grep -A6 "^| row" "$P/pN.md" 2>/dev/null || tail -20 "$P/pN.log"
exit 0
fi
if [[ $part == A ]]; then
sed -e 's/\[1, 4096\]/[16, 4096]/g; s/\[1, 6144\]/[16, 6144]/g; s/\[1, 1\]/[16, 1]/g; s/ {dynamic = array<i64: 0>}//' examples/rmsnorm_matmul.mlir > /tmp/rmsnorm_matmul_t16.mlir
timeout 420 python bench/probes/deep_stages.py --budget 40 -j 15 --out "$P/deep_stages.json" /tmp/rmsnorm_matmul_t16.mlir \
  $U/residual_rmsnorm_matmul.mlir $U/rmsnorm_matmul_t3_n1000.mlir $U/rmsnorm_matmul_t5_n3000.mlir $U/matmul_rowmax_k64.mlir \
  $U/matmul_matmul_s1000_d96.mlir > "$P/deep_stages.log" 2>&1
grep -E " base | s5 " "$P/deep_stages.log" | cut -c1-200
fi
if [[ $part == A || $part == R ]]; then
# 4
(cd /tmp && timeout 200 python "$R/bench/racecheck.py" --graphs "$R/$U/llama_norm_q_decode.mlir" "$R/$U/residual_rmsnorm_matmul.mlir" \
  "$R/$U/bf16_layernorm_gelu_37x3000.mlir" "$R/$U/norm_eps_after_sqrt.mlir" \
  --rows '^$' --every-candidate --timeout 100 -j 12 --out "$P/rc" \
  --kernels 'llama_norm_q_decode_c7_k0|llama_norm_q_decode_c1_k0|residual_rmsnorm_matmul_c2_mm_p1_k0|residual_rmsnorm_matmul_c1_k0|bf16_ln_gelu_c1_k0|norm_eps_after_sqrt_c1_k0' > "$P/rc.log" 2>&1)
tail -20 "$P/rc/racecheck.md"
exit 0
fi
# 2 and 3: one prepared directory, the variants as rows of their own, timed in one `run`
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$R/$U/llama_norm_q_decode.mlir" "$R/$U/residual_rmsnorm_matmul.mlir" "$R/$U/norm_eps_after_sqrt.mlir" --keep 6 --out /tmp/pc -j 15 > "$P/prepare.log" 2>&1)
(cd /tmp && python - > "$P/serial_fold.log" 2>&1 <<EOF
# 2: llama_norm_q_decode with the serial fold the GEMV used before bc222f7
import json, sys
sys.argv = ["gpu_suite.py", "prepare", "--graphs", "$R/$U/llama_norm_q_decode.mlir", "--keep", "6", "--out", "/tmp/pc_serial_fold", "-j", "1"]
sys.path.insert(0, "$R/bench")
import cleave_ir.passes.lower_tilelang as lt
lt.GEMV_BLOCK_REDUCE = 1 << 30
import gpu_suite
gpu_suite.main()
EOF
)
(cd /tmp && python - > "$P/per_step_copy.log" 2>&1 <<EOF
# 3: residual_rmsnorm_matmul and norm_eps_after_sqrt with g copied in every K step, as before
# cleave-whole-small-copies (87f41ea): a synchronous 2-byte load a thread
import json, sys
sys.argv = ["gpu_suite.py", "prepare", "--graphs", "$R/$U/residual_rmsnorm_matmul.mlir", "$R/$U/norm_eps_after_sqrt.mlir", "--keep", "6", "--out", "/tmp/pc_per_step_copy", "-j", "1"]
sys.path.insert(0, "$R/bench")
import cleave_ir.passes.lower_tilelang as lt
lt.copy_small_tiles_whole = lambda kernel: 0
import gpu_suite
gpu_suite.main()
EOF
)
(cd /tmp && python - <<'EOF'
import json, shutil
from pathlib import Path
d = Path("/tmp/pc")
m = json.loads((d / "manifest.json").read_text())
for tag in ("serial_fold", "per_step_copy"):
    s = Path(f"/tmp/pc_{tag}")
    ms = json.loads((s / "manifest.json").read_text())
    for k, e in ms["entries"].items():
        e = dict(e); e["row"] += f"~{tag}"; new = f"kernels/{e['row']}__full.py"
        shutil.copy(s / e["module"], d / new); e["module"] = new; m["entries"][e["row"] + "__full"] = e
(d / "manifest.json").write_text(json.dumps(m, indent=1))
EOF
)
(cd /tmp && timeout 300 python "$R/bench/gpu_suite.py" run /tmp/pc --out "$P/pc.json" --deadline 220 --row-budget 40 --torch-compile default -j 15 > "$P/pc.log" 2>&1)
grep -A12 "^| row" "$P/pc.md" 2>/dev/null || tail -20 "$P/pc.log"
grep -E "^- " "$P/pc.md" 2>/dev/null | cut -c1-220
# 5
(cd /tmp && python "$R/bench/gpu_suite.py" prepare --graphs "$R/$U/sigmoid_glu_t5.mlir" "$R/$U/norm_eps_after_sqrt.mlir" \
  "$R/$U/column_softmax.mlir" "$R/$U/qk_norm_decode.mlir" "$R/$U/bf16_layernorm_gelu_37x3000.mlir" --out /tmp/new5 -j 15 > "$P/new5_prepare.log" 2>&1
 timeout 200 python "$R/bench/gpu_suite.py" run /tmp/new5 --out "$P/new5.json" --deadline 180 --row-budget 35 --torch-compile default -j 15 > "$P/new5.log" 2>&1)
grep -A8 "^| row" "$P/new5.md" 2>/dev/null || tail -10 "$P/new5.log"
