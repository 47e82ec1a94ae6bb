// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// Malformed `cleave.*` metadata: one located parse error each (xDSL's diagnostic form: a test op).

"test.op"() {stage = #cleave<stage second>} : () -> ()

// CHECK: Expected `first`, `split`, `combine`, or `part`

// -----

"test.op"() {mem = #cleave<mem local>} : () -> ()

// CHECK: Expected `shared`, `fragment`, or `global`.

// -----

"test.op"() {tiles = #cleave.tiles<out = [64, 0], reduce = 32>} : () -> ()

// CHECK: cleave.tiles: tile sizes must be positive, got 0

// -----

"test.op"() {tiles = #cleave.tiles<out = [64], reduce = 32, fused>} : () -> ()

// CHECK: Expected 'no_fusion'

// -----

"test.op"() {tiles = #cleave.tiles<reduce = 32>} : () -> ()

// CHECK: Expected 'out'

// -----

"test.op"() {e = #cleave.expr<16 + >} : () -> ()

// CHECK: expected an integer, a name or '('

// -----

"test.op"() {e = #cleave.expr<(bx floordiv 4>} : () -> ()

// CHECK: expected ')'

