"""Cleave-IR passes, in pipeline order. Every name is prefixed `cleave-`."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Lazy factories for the passes, keyed by their command-line names."""

    def canonicalize() -> type[ModulePass]:
        from cleave_ir.passes.canonicalize import CanonicalizePass

        return CanonicalizePass

    def symbolize() -> type[ModulePass]:
        from cleave_ir.passes.symbolize import SymbolizePass

        return SymbolizePass

    def decompose() -> type[ModulePass]:
        from cleave_ir.passes.decompose import DecomposePass

        return DecomposePass

    def bind() -> type[ModulePass]:
        from cleave_ir.passes.symbolize import BindSymbolsPass

        return BindSymbolsPass

    def superoptimize() -> type[ModulePass]:
        from cleave_ir.passes.superoptimize import SuperoptimizePass

        return SuperoptimizePass

    def concretize() -> type[ModulePass]:
        from cleave_ir.passes.concretize import ConcretizePass

        return ConcretizePass

    def partition_split_k() -> type[ModulePass]:
        from cleave_ir.passes.partition_split_k import PartitionSplitKPass

        return PartitionSplitKPass

    def split_rows() -> type[ModulePass]:
        from cleave_ir.passes.split_rows import SplitRowsPass

        return SplitRowsPass

    def split_projections() -> type[ModulePass]:
        from cleave_ir.passes.split_projections import SplitProjectionsPass

        return SplitProjectionsPass

    def stabilize_split_k() -> type[ModulePass]:
        from cleave_ir.passes.stabilize_split_k import StabilizeSplitKPass

        return StabilizeSplitKPass

    def schedule() -> type[ModulePass]:
        from cleave_ir.passes.schedule import SchedulePass

        return SchedulePass

    def drop_unstable() -> type[ModulePass]:
        from cleave_ir.passes.stabilize_exp import DropUnstablePass

        return DropUnstablePass

    def place_memory() -> type[ModulePass]:
        from cleave_ir.passes.place_memory import PlaceMemoryPass

        return PlaceMemoryPass

    def lower_tilelang() -> type[ModulePass]:
        from cleave_ir.passes.lower_tilelang import LowerTileLangPass

        return LowerTileLangPass

    def overlap_gemms() -> type[ModulePass]:
        from cleave_ir.passes.overlap_gemms import OverlapGemmsPass

        return OverlapGemmsPass

    def emulate_exp2() -> type[ModulePass]:
        from cleave_ir.passes.emulate_exp2 import EmulateExp2Pass

        return EmulateExp2Pass

    def whole_small_copies() -> type[ModulePass]:
        from cleave_ir.passes.whole_small_copies import WholeSmallCopiesPass

        return WholeSmallCopiesPass

    def dynamic_shapes() -> type[ModulePass]:
        from cleave_ir.passes.dynamic_shapes import DynamicShapesPass

        return DynamicShapesPass

    def fold_structural() -> type[ModulePass]:
        from cleave_ir.passes.fold_structural import FoldStructuralPass

        return FoldStructuralPass

    def split_shared_inputs() -> type[ModulePass]:
        from cleave_ir.passes.split_shared_inputs import SplitSharedInputsPass

        return SplitSharedInputsPass

    def pipeline() -> type[ModulePass]:
        from cleave_ir.passes.pipeline import PipelinePass

        return PipelinePass

    return {
        "cleave-pipeline": pipeline,
        "cleave-place-memory": place_memory,
        "cleave-dynamic-shapes": dynamic_shapes,
        "cleave-lower-tilelang": lower_tilelang,
        "cleave-overlap-gemms": overlap_gemms,
        "cleave-emulate-exp2": emulate_exp2,
        "cleave-whole-small-copies": whole_small_copies,
        "cleave-schedule": schedule,
        "cleave-drop-unstable": drop_unstable,
        "cleave-partition-split-k": partition_split_k,
        "cleave-split-rows": split_rows,
        "cleave-split-projections": split_projections,
        "cleave-stabilize-split-k": stabilize_split_k,
        "cleave-decompose": decompose,
        "cleave-canonicalize": canonicalize,
        "cleave-fold-structural": fold_structural,
        "cleave-split-shared-inputs": split_shared_inputs,
        "cleave-symbolize": symbolize,
        "cleave-concretize": concretize,
        "cleave-bind": bind,
        "cleave-superoptimize": superoptimize,
    }
