// XFAIL: *
// Known bug (cleave_ir/driver.py, cleave_ir/diagnostics.py): --parsing-diagnostics (offered by
// `cleave-opt --help`) has no effect. parse_module_text re-raises every ParseError as CleaveError,
// a DiagnosticException, which xDSLOptMain only catches under --verify-diagnostics; so cleave-opt
// prints the error on stderr and exits 1. (parse_errors.mlir uses --verify-diagnostics instead.)
// Remove the XFAIL line once this passes.
// RUN: cleave-opt %s --parsing-diagnostics | filecheck %s

// CHECK: dims must be positive, got 0
tgraph.graph @zero(%a: !tgraph.tensor<[2, 0], f16>) -> !tgraph.tensor<[2, 0], f16> {
  tgraph.output %a : !tgraph.tensor<[2, 0], f16>
}
