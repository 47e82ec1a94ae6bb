// cleave-emulate-exp2: the score tile's exp2 of a FlashAttention loop (a [128, 128] accumulator of
// Q K^T at head dim 64, in a pipelined loop of two gemms overlapped by cleave-overlap-gemms) becomes
// tilelang.exp2_split over the key variable: one block of 8 keys in `every` (default 8) on the FMA
// pipes, the rest on the MUFU. The row exp2 (alpha, a [128] loop) stays math.exp2.
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p cleave-overlap-gemms,cleave-emulate-exp2 | filecheck %s
// The rewritten kernel computes its graph (the interpreter runs the FMA form in float32):
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p "cleave-overlap-gemms,cleave-emulate-exp2{every=1}" | cleave-run - | filecheck %s --check-prefix=CMP
// TileLang: x, its clamp, rounding bits and remainder bound before the store, then the split:
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p "cleave-overlap-gemms,cleave-emulate-exp2{every=2}" -t tilelang | filecheck %s --check-prefix=PY
// Another share of the keys:
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p "cleave-overlap-gemms,cleave-emulate-exp2{every=4}" | filecheck %s --check-prefix=FOUR
// A loop whose gemms are synchronous (not the overlapped form measured) keeps every exp2 on the MUFU:
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p cleave-emulate-exp2 | filecheck %s --check-prefix=SYNC
// RUN: not cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p "cleave-emulate-exp2{every=0}" 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:      tilelang.parallel (i0) in (128) {
// CHECK:        math.exp2
// CHECK:        tilelang.store {{.*}}, %alpha[i0]
// CHECK:      tilelang.parallel (i0, i1) in (128, 128) {
// CHECK:        %[[E:.*]] = tilelang.exp2_split %{{.*}} column "i1" every 8 : f32
// CHECK-NEXT:   tilelang.store %[[E]], %s[i0, i1]
// CHECK-NOT:  math.exp2

// CMP: @fa_k0 vs @fa: agree

// PY:      [[X:e2_x[_0-9]*]] = s[i0, i1] * 1.4426950408889634 - red[i0] * 1.4426950408889634
// PY-NEXT: [[C:e2_c[_0-9]*]] = T.max([[X]], -126.0)
// PY-NEXT: [[J:e2_j[_0-9]*]] = T.reinterpret([[C]] + 12582912.0, "int32")
// PY-NEXT: [[F:e2_f[_0-9]*]] = [[C]] - (T.reinterpret([[J]], "float32") - 12582912.0)
// PY-NEXT: [[E:e2[_0-9]*]] = T.if_then_else(i1 // 8 % 2 == 0, T.reinterpret(T.reinterpret(0.9999289048020072 + [[F]] * (0.693276283352573 + [[F]] * (0.2426046562099921 + [[F]] * 0.05508876707445855)), "int32") + T.shift_left([[J]], 23), "float32"), T.exp2([[X]]))
// PY-NEXT: s[i0, i1] = [[E]]

// FOUR: tilelang.exp2_split %{{.*}} column "i1" every 4 : f32

// SYNC-NOT: tilelang.exp2_split

// BAD: error: cleave-emulate-exp2: every must be at least 1
