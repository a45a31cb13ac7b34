"""Check that a pass keeps a module's meaning: run it before and after, compare the results.

Every pass in the project is tested twice: its IR with FileCheck, and its meaning here::

    from xrelay.testing.semantics import check_semantics

    before, after = check_semantics("simplify-inference,fold-constant", mod)

``check_semantics`` clones the module, applies the pass to the clone, verifies the result,
runs both on the same random inputs with the reference interpreter
(``xrelay.runtime.interpreter``) and fails with an ``AssertionError`` naming the output and
the size of the error when they disagree. The module passed in is left unchanged.

A comparison that cannot fail is refused (``VacuousCheck``, an ``AssertionError``): a
reference output holding NaN or infinity (NaN matches NaN), and a module with inputs whose
outputs do not change when the inputs do. Random inputs are valid where an op needs it: a
parameter used as a batch norm's ``moving_var`` is drawn from (0.5, 1.5), not the standard
normal (a negative variance makes every output NaN).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from xrelay.backend.engines import resolve_pass
from xrelay.dialects import module_op
from xrelay.dialects.verify import verify_module
from xrelay.runtime.interpreter import RunError, parameter_specs, random_inputs, run
from xrelay.transforms import get_all_passes
from xrelay.transforms.infra import Pass, as_pass, in_place

__all__ = [
    "VacuousCheck",
    "apply_pass",
    "assert_outputs_match",
    "check_reference",
    "check_semantics",
    "filecheck_cases",
    "pass_name",
    "valid_inputs",
]

PassLike = Any
"""A ModulePass, a pipeline string, an ``xrelay.transforms.infra.Pass``, a callable on
modules, or a sequence of these."""

_POSITIVE_OPERANDS = {"relay.nn.batch_norm": (4,)}
"""Operands that must be positive for the op's result to be a number (batch norm's
``moving_var``: its square root divides)."""

_ROOTS = ("relay.sqrt", "relay.rsqrt")

_OTHER_DRAW = 1_000_003
"""Added to the seed for the second draw that shows whether the outputs depend on the inputs."""


class VacuousCheck(AssertionError):
    """A comparison of runs that cannot fail: non-finite reference outputs, or outputs that
    are the same whatever the inputs."""


def valid_inputs(
    mod: Any, seed: int = 0, entry: str = "main", skip: Any = (), positive: Any = ()
) -> dict[str, np.ndarray]:
    """``random_inputs`` for ``@entry``, with every parameter an op needs positive (a batch
    norm's ``moving_var``, ``x`` in ``sqrt(x + eps)``) and those named in ``positive`` drawn
    from (0.5, 1.5) instead."""
    inputs = random_inputs(mod, seed, entry, skip=skip)
    fn = next(
        op for op in module_op(mod).ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry
    )
    names = dict(zip(fn.body.block.args, (n for n, _ in parameter_specs(mod, entry))))
    positive = {*positive, *(names[arg] for arg in fn.body.block.args if _needs_positive(arg))}
    rng = np.random.default_rng(seed)
    for name in sorted(positive & inputs.keys()):
        arr = inputs[name]
        inputs[name] = rng.uniform(0.5, 1.5, arr.shape).astype(arr.dtype)
    return inputs


def _needs_positive(arg: Any) -> bool:
    """A variance: batch norm's ``moving_var``, or ``x`` in ``sqrt(x + eps)`` / ``rsqrt(x + eps)``
    (batch norm after simplify-inference)."""
    for use in arg.uses:
        op = use.operation
        if use.index in _POSITIVE_OPERANDS.get(op.name, ()):
            return True
        if op.name == "relay.add" and any(u.operation.name in _ROOTS for r in op.results for u in r.uses):
            return True
    return False


def check_reference(outputs: Sequence[np.ndarray], what: str = "the reference") -> None:
    """Refuse reference outputs a comparison proves nothing with: NaN or infinite values."""
    for i, out in enumerate(outputs):
        arr = np.asarray(out)
        if arr.dtype.kind not in "fc" or arr.size == 0:
            continue
        bad = ~np.isfinite(arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64))
        if bad.any():
            raise VacuousCheck(
                f"{what}: output {i} has {int(bad.sum())} non-finite values of {arr.size} (NaN "
                "matches NaN, so comparing it proves nothing): give inputs or parameters it is "
                "defined on (a positive variance, a positive logarithm argument, ...)"
            )


def _same_outputs(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        np.asarray(x).shape == np.asarray(y).shape and np.array_equal(x, y, equal_nan=True)
        for x, y in zip(a, b)
    )


def filecheck_cases(path: Any) -> list[str]:
    """The cases of a FileCheck input split with ``// -----`` that hold a function (each
    pass's cases also run before and after it with ``check_semantics``)."""
    from pathlib import Path

    return [c for c in Path(path).read_text().split("// -----") if "func.func" in c]


def _clone(mod: Any) -> Any:
    """A copy of ``mod`` (ModuleOp or IRModule-like) with its own ModuleOp."""
    if isinstance(mod, ModuleOp):
        return mod.clone()
    new = copy.copy(mod)
    new.module = module_op(mod).clone()
    return new


def pass_name(p: PassLike) -> str:
    """A short name of a pass-like object for messages."""
    if isinstance(p, str):
        return repr(p)
    if isinstance(p, ModulePass):
        return p.name
    info = getattr(p, "info", None)
    if info is not None and hasattr(info, "name"):
        return str(info.name)
    if isinstance(p, Sequence):
        return "[" + ", ".join(pass_name(q) for q in p) + "]"
    return getattr(p, "__name__", None) or type(p).__name__


def apply_pass(p: PassLike, mod: Any) -> Any:
    """Apply a pass-like object to ``mod`` in place (``transforms.infra.in_place``: the passes
    rewrite ``mod`` itself, as a test that owns its module wants); return the resulting module.

    A string is an xDSL pipeline spec over ``xrelay.transforms.get_all_passes()`` (engines named
    in options resolved as relay-opt resolves them); every
    ModulePass runs through ``xrelay.transforms.infra`` (so composite passes expand and the
    current ``PassContext``'s instruments see it); an infra ``Pass`` is called; any other
    callable is called on the module and may return a new one (or None: changed in place).
    """

    if isinstance(p, str):

        pipeline = PassPipeline.parse_spec(get_all_passes(), p)
        for module_pass in pipeline.passes:
            with in_place(mod):
                mod = as_pass(resolve_pass(module_pass))(mod)  # an engine's name gets its table
        return mod
    if isinstance(p, ModulePass | Pass):
        with in_place(mod):
            return as_pass(p)(mod)
    if isinstance(p, Sequence):
        for q in p:
            mod = apply_pass(q, mod)
        return mod
    if callable(p):
        result = p(mod)
        return mod if result is None else result
    raise TypeError(
        f"expected a ModulePass, a pipeline string, a Pass, a callable or a sequence, got {p!r}"
    )


def _bind_after(
    before: ModuleOp, after: ModuleOp, values: Mapping[str, np.ndarray], entry: str
) -> dict[str, np.ndarray] | list[np.ndarray]:
    """The inputs of the transformed entry function: by name, else by position.

    A pass may drop parameters (binding weights to constants), so only the names the new
    function still takes are passed. If it renamed them, the old positional order is used
    when the signature is otherwise unchanged.
    """
    new = parameter_specs(after, entry)
    if all(name in values for name, _ in new):
        return {name: values[name] for name, _ in new}
    old = parameter_specs(before, entry)
    if [t for _, t in old] == [t for _, t in new]:
        return [values[name] for name, _ in old]
    raise AssertionError(
        f"@{entry}'s parameters changed in a way inputs cannot follow: before "
        f"({', '.join(f'{n}: {t}' for n, t in old)}), after "
        f"({', '.join(f'{n}: {t}' for n, t in new)})"
    )


def assert_outputs_match(
    before: Sequence[np.ndarray],
    after: Sequence[np.ndarray],
    *,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    what: str = "",
) -> None:
    """Assert two result lists agree: count, shapes, dtypes, values within tolerance.

    Values match when ``|after - before| <= atol + rtol * |before|``, as ``numpy.isclose``;
    NaNs match NaNs and infinities match equal infinities. Integers and bools are compared
    the same way, which for them means exactly (with the default tolerances).
    """
    prefix = f"{what}: " if what else ""
    if len(before) != len(after):
        raise AssertionError(
            f"{prefix}the number of outputs changed: {len(before)} before, {len(after)} after"
        )
    for i, (a, b) in enumerate(zip(before, after)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            raise AssertionError(f"{prefix}output {i}: shape {a.shape} before, {b.shape} after")
        if a.dtype != b.dtype:
            raise AssertionError(f"{prefix}output {i}: dtype {a.dtype} before, {b.dtype} after")
        if a.size == 0:
            continue
        wa, wb = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(wb - wa)
            close = diff <= atol + rtol * np.abs(wa)
        close |= (wa == wb) | (np.isnan(wa) & np.isnan(wb))
        if close.all():
            continue
        bad = ~close
        finite = np.isfinite(diff)
        max_abs = float(diff[bad & finite].max()) if (bad & finite).any() else float("inf")
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(finite, diff / np.maximum(np.abs(wa), np.finfo(np.float64).tiny), 0)
        max_rel = float(rel[bad].max()) if finite[bad].any() else float("inf")
        where = np.unravel_index(int(np.argmax(bad)), a.shape)
        raise AssertionError(
            f"{prefix}output {i}: {int(bad.sum())} of {a.size} values differ "
            f"(rtol={rtol}, atol={atol}); max abs error {max_abs:.4g}, max rel error "
            f"{max_rel:.4g}; first at index {tuple(int(k) for k in where)}: "
            f"before {a[where]!r}, after {b[where]!r}"
        )


def check_semantics(
    pass_or_pipeline: PassLike,
    mod: Any,
    *,
    params: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    trials: int = 1,
    entry: str = "main",
    positive: Sequence[str] = (),
    constant_outputs: str | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Assert that ``pass_or_pipeline`` keeps the meaning of ``mod``; return the outputs.

    ``mod`` is a ``ModuleOp`` or an object with ``.module``; it is cloned, and only the clone
    is transformed (see ``apply_pass`` for what a pass may be). The transformed module must
    verify. Both modules then run on the same inputs: ``params`` binds parameters by name,
    the others get random data (``valid_inputs``: standard normal floats, small integers, fair
    bools, positive batch-norm variances) from ``seed``, ``seed + 1``, ... for each of
    ``trials`` runs; parameters named in ``positive`` are drawn from (0.5, 1.5) (the domain of
    a ``log`` or ``sqrt`` they feed). Results must agree as ``assert_outputs_match`` says. The
    reference outputs must be finite and must change with the inputs (``VacuousCheck``
    otherwise), unless ``constant_outputs`` gives the reason they do not (``zeros_like``).

    Returns the (before, after) outputs of the first trial. Raises ``AssertionError`` naming
    the pass and the output at fault.
    """
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    original = module_op(mod)
    params = dict(params or {})
    runs: list[tuple[dict[str, np.ndarray], list[np.ndarray]]] = []
    for t in range(trials):
        inputs = valid_inputs(original, seed + t, entry, skip=params, positive=positive)
        runs.append((inputs, run(original, inputs, params, entry)))
        check_reference(runs[-1][1], f"before {pass_name(pass_or_pipeline)} (seed {seed + t})")
    if runs[0][0] and constant_outputs is None:
        # the outputs must depend on the inputs, or the comparison cannot fail
        if trials > 1:
            other = runs[1][1]
        else:
            other_inputs = valid_inputs(original, seed + _OTHER_DRAW, entry, skip=params, positive=positive)
            other = run(original, other_inputs, params, entry)
        if _same_outputs(runs[0][1], other):
            raise VacuousCheck(
                f"before {pass_name(pass_or_pipeline)}: the outputs are the same for two "
                f"different draws of the inputs ({', '.join(runs[0][0])}), so comparing them "
                "cannot show a wrong result: check a module whose result depends on its inputs"
            )

    name = pass_name(pass_or_pipeline)
    transformed = module_op(apply_pass(pass_or_pipeline, _clone(mod)))
    try:
        verify_module(transformed)
    except DiagnosticException as e:
        raise AssertionError(f"the module does not verify after {name}: {e}") from e

    first: tuple[list[np.ndarray], list[np.ndarray]] | None = None
    for t, (inputs, before) in enumerate(runs):
        args = _bind_after(original, transformed, {**params, **inputs}, entry)
        try:
            after = run(transformed, args, entry=entry)
        except RunError as e:
            raise AssertionError(f"running the module after {name} failed: {e}") from e
        trial = f" (trial {t}, seed {seed + t})" if trials > 1 else ""
        assert_outputs_match(before, after, rtol=rtol, atol=atol, what=f"after {name}{trial}")
        if first is None:
            first = (before, after)
    assert first is not None
    return first
