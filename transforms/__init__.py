"""xrelay's passes, one per file named after its CLI name (``fuse_ops.py`` is ``fuse-ops``).

``PASSES`` registers every pass explicitly, like xDSL's ``get_all_passes``: one line per pass,
its CLI name and its class as ``"module.ClassName"`` under ``xrelay.transforms``. Classes are
imported when first asked for, so the tools start fast. Each class also carries Relay's
``PassInfo`` as class variables: ``relay_name``, ``opt_level`` (or ``relay_opt_level``),
``required`` (see ``infra``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

PASSES: dict[str, str] = {
    "alias-slices": "alias_slices.AliasSlicesPass",
    "alter-op-layout": "alter_op_layout.AlterOpLayoutPass",
    "annotate-target": "annotate_target.AnnotateTargetPass",
    "annotate-used-memory": "annotate_used_memory.AnnotateUsedMemoryPass",
    "backward-fold-scale-axis": "backward_fold_scale_axis.BackwardFoldScaleAxisPass",
    "bind-params": "bind_params.BindParamsPass",
    "canonicalize-arith": "canonicalize_arith.CanonicalizeArithPass",
    "canonicalize-ops": "canonicalize_ops.CanonicalizeOpsPass",
    "canonicalize-views": "canonicalize_views.CanonicalizeViewsPass",
    "choose-scratch": "choose_scratch.ChooseScratchPass",
    "combine-parallel-batch-matmul": "combine_parallel_batch_matmul.CombineParallelBatchMatmulPass",
    "combine-parallel-conv2d": "combine_parallel_conv2d.CombineParallelConv2DPass",
    "combine-parallel-dense": "combine_parallel_dense.CombineParallelDensePass",
    "combine-split-conv2d": "combine_split_conv2d.CombineSplitConv2DPass",
    "conv2d-winograd": "conv2d_winograd.Conv2dWinogradPass",
    "convert-layout": "convert_layout.ConvertLayoutPass",
    "dead-code-elimination": "dead_code_elimination.DeadCodeEliminationPass",
    "drop-softmax-guard": "drop_softmax_guard.DropSoftmaxGuardPass",
    "dynamic-to-static": "dynamic_to_static.DynamicToStaticPass",
    "defuse-ops": "defuse_ops.DefuseOpsPass",
    "eliminate-common-subexpr": "eliminate_common_subexpr.EliminateCommonSubexprPass",
    "fake-quantization-to-integer": "fake_quantization_to_integer.FakeQuantizationToIntegerPass",
    "fold-constant": "fold_constant.FoldConstantPass",
    "fold-explicit-padding": "fold_explicit_padding.FoldExplicitPaddingPass",
    "fold-scale-axis": "fold_scale_axis.FoldScaleAxisPass",
    "forward-fold-scale-axis": "forward_fold_scale_axis.ForwardFoldScaleAxisPass",
    "fuse-ops": "fuse_ops.FuseOpsPass",
    "infer-type": "infer_type.InferTypePass",
    "inline": "inline.InlinePass",
    "lower-to-memory": "lower_to_memory.LowerToMemoryPass",
    "make-static": "make_static.MakeStaticPass",
    "merge-compiler-regions": "merge_compiler_regions.MergeCompilerRegionsPass",
    "merge-composite": "merge_composite.MergeCompositePass",
    "partition-for-engines": "partition_for_engines.PartitionForEnginesPass",
    "partition-graph": "partition_graph.PartitionGraphPass",
    "place-concat-inputs": "place_concat_inputs.PlaceConcatInputsPass",
    "plan-devices": "plan_devices.PlanDevicesPass",
    "plan-memory": "plan_memory.PlanMemoryPass",
    "qnn-canonicalize-ops": "qnn_canonicalize_ops.QnnCanonicalizeOpsPass",
    "qnn-fuse-pad": "qnn_fuse_pad.QnnFusePadPass",
    "qnn-narrow-edges": "qnn_narrow_edges.QnnNarrowEdgesPass",
    "qnn-legalize": "qnn_legalize.QnnLegalizePass",
    "remove-unused-functions": "remove_unused_functions.RemoveUnusedFunctionsPass",
    "rewrite-annotated-ops": "rewrite_annotated_ops.RewriteAnnotatedOpsPass",
    "simplify-expr": "simplify_expr.SimplifyExprPass",
    "simplify-expr-post-alter-op": "simplify_expr_post_alter_op.SimplifyExprPostAlterOpPass",
    "simplify-inference": "simplify_inference.SimplifyInferencePass",
    "sink-reshape": "sink_reshape.SinkReshapePass",
    "sink-transpose": "sink_transpose.SinkTransposePass",
    "state-scratch": "state_scratch.StateScratchPass",
    "to-a-normal-form": "to_a_normal_form.ToANormalFormPass",
    "to-basic-block-normal-form": "to_basic_block_normal_form.ToBasicBlockNormalFormPass",
    "to-graph-normal-form": "to_graph_normal_form.ToGraphNormalFormPass",
    "to-mixed-precision": "to_mixed_precision.ToMixedPrecisionPass",
    "verify-memory-plan": "verify_memory_plan.VerifyMemoryPlanPass",
}
"""Every xrelay pass: CLI name -> ``"module.ClassName"`` under ``xrelay.transforms``."""

UPSTREAM_PASSES = ("cse", "dce", "canonicalize")
"""xDSL passes that relay-opt also offers (the relay ops are side-effect free, so they apply)."""


def _loader(cli_name: str, where: str) -> Callable[[], type[ModulePass]]:
    module_name, class_name = where.rsplit(".", 1)

    def load() -> type[ModulePass]:
        module = importlib.import_module(f"xrelay.transforms.{module_name}")
        cls = getattr(module, class_name, None)
        if not (isinstance(cls, type) and issubclass(cls, ModulePass) and cls.name == cli_name):
            raise ImportError(
                f"xrelay.transforms.{module_name}.{class_name} is not a ModulePass named '{cli_name}'"
            )
        return cls

    return load


def _upstream(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from xdsl.transforms import get_all_passes as upstream

        return upstream()[name]()

    return load


def get_xrelay_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xrelay's own passes by CLI name (factories returning the class)."""
    return {cli: _loader(cli, where) for cli, where in PASSES.items()}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass relay-opt offers: xrelay's own plus ``cse``, ``dce`` and ``canonicalize``."""
    passes = get_xrelay_passes()
    for name in UPSTREAM_PASSES:
        passes.setdefault(name, _upstream(name))
    return passes
