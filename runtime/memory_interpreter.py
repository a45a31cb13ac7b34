"""Run a memory-dialect program: storage as numpy bytes, steps as destination-passing kernels.

``run_memory(module, inputs, params)`` interprets ``@main`` after ``lower-to-memory`` (and
optionally ``plan-memory``) on xDSL's interpreter framework:

* **unplanned** (or ``use_plan=False``): every ``memory.alloc_storage`` is its own uint8 array;
* **planned**: every ``memory.pool`` is ONE uint8 array of its planned ``size`` and a placed
  storage is the slice ``arena[offset:offset + size]``; external storage (inputs/outputs kept
  out of the arena) is still its own array.

``memory.alloc_tensor`` views its storage's bytes as the tensor
(``storage[offset:offset + nbytes].view(dtype).reshape(shape)``), ``memory.alias`` reshapes a
view without copying, ``memory.copy`` copies, and ``memory.invoke`` runs the primitive
function's body with the reference kernels (``xrelay.kernels``), the ops that produce
the function's results writing straight into the destination views through ``out=``.

To make a wrong plan visible, the interpreter is hostile by default (``poison=True``): arenas
and fresh storage start as garbage, a workspace is overwritten with garbage before its step,
and a killed storage is overwritten at once. If two live buffers shared bytes, or a value
were read after its kill, the results would differ from the reference interpreter's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import module_op
from xrelay.dialects.memory import (
    AliasOp,
    AllocStorageOp,
    AllocTensorOp,
    CopyOp,
    InvokeOp,
    KillOp,
    PoolOp,
)
from xrelay.dialects.relay import ConstantOp, RelayOp, byte_size, dtype_of, numpy_dtype
from xrelay.dialects.relay.dtypes import too_large
from xrelay.kernels import KERNELS
from xrelay.runtime.interpreter import (
    RelayInterpreter,
    RunError,
    _is_multi_result,
    _own_outputs,
    bind_inputs,
    describe_op,
    entry_function,
)
from xrelay.runtime.parallel import blas_single_thread

__all__ = ["MemoryFunctions", "MemoryRunner", "is_planned", "run_memory"]

_GARBAGE = 0xA5  # fresh memory
_KILLED = 0xFF  # NaN for floats, -1 for ints


def _tensor_view(raw: np.ndarray, offset: int, t: TensorType) -> np.ndarray:
    dtype = numpy_dtype(dtype_of(t.element_type))
    nbytes = byte_size(t)
    return raw[offset : offset + nbytes].view(dtype).reshape(t.get_shape())


def is_planned(module: ModuleOp, entry: str = "main") -> bool:
    """Whether every non-external storage of ``@entry`` has a pool and an offset."""
    fn = entry_function(module, entry)
    storages = [op for op in fn.body.walk() if isinstance(op, AllocStorageOp)]
    arena = [s for s in storages if not s.is_external]
    return bool(arena) and all(s.placement is not None for s in arena)


@register_impls
class MemoryFunctions(InterpreterFunctions):
    """Interpreter functions of the memory dialect (the relay ones come from RelayFunctions)."""

    def __init__(self, module: ModuleOp, arenas: Mapping[str, np.ndarray] | None, poison: bool):
        self.module = module
        self.arenas = arenas
        self.poison = poison
        self._funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        self._plans: dict[Operation, Any] = {}
        self._relay: RelayInterpreter | None = None

    # Storage -------------------------------------------------------------------------------

    @impl(AllocStorageOp)
    def run_alloc_storage(
        self, interpreter: Interpreter, op: AllocStorageOp, args: PythonValues
    ) -> PythonValues:
        placement = op.placement
        if self.arenas is not None and placement is not None and not op.is_external:
            pool, offset = placement
            arena = self.arenas.get(pool)
            if arena is None:
                raise RunError(f"{describe_op(op)}: placed in pool '{pool}', which has no arena")
            if offset + op.nbytes > arena.size:
                raise RunError(
                    f"{describe_op(op)}: bytes [{offset}, {offset + op.nbytes}) lie outside "
                    f"pool '{pool}' of {arena.size} bytes"
                )
            return (arena[offset : offset + op.nbytes],)
        raw = np.empty(op.nbytes, np.uint8)
        if self.poison:
            raw.fill(_GARBAGE)
        return (raw,)

    @impl(AllocTensorOp)
    def run_alloc_tensor(
        self, interpreter: Interpreter, op: AllocTensorOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        assert isinstance(t, TensorType)
        return (_tensor_view(args[0], op.offset.value.data, t),)

    @impl(AliasOp)
    def run_alias(self, interpreter: Interpreter, op: AliasOp, args: PythonValues) -> PythonValues:
        t = op.result.type
        assert isinstance(t, TensorType)
        view = args[0].reshape(t.get_shape())
        if not np.shares_memory(view, args[0]) and args[0].size:
            raise RunError(f"{describe_op(op)}: the source is not contiguous; cannot alias it")
        return (view,)

    @impl(KillOp)
    def run_kill(self, interpreter: Interpreter, op: KillOp, args: PythonValues) -> PythonValues:
        if self.poison and isinstance(args[0], np.ndarray) and args[0].flags.writeable:
            args[0].view(np.uint8).fill(_KILLED)
        return ()

    @impl(CopyOp)
    def run_copy(self, interpreter: Interpreter, op: CopyOp, args: PythonValues) -> PythonValues:
        np.copyto(args[1], args[0])
        return ()

    @impl(PoolOp)
    def run_pool(self, interpreter: Interpreter, op: PoolOp, args: PythonValues) -> PythonValues:
        return ()

    # Steps ---------------------------------------------------------------------------------

    @impl(InvokeOp)
    def run_invoke(
        self, interpreter: Interpreter, op: InvokeOp, args: PythonValues
    ) -> PythonValues:
        n_in, n_out = len(op.inputs), len(op.outs)
        inputs, outs = args[:n_in], args[n_in : n_in + n_out]
        workspaces = args[n_in + n_out :]
        if self.poison:
            for w in workspaces:
                w.fill(_GARBAGE)
        fn = self._funcs.get(op.callee_name)
        if fn is None:
            raise RunError(f"{describe_op(op)}: no function @{op.callee_name}")
        try:
            self._run_function(fn, inputs, outs)
        except RunError as e:
            e.add_frame(describe_op(op))
            raise
        return ()

    def _relay_interpreter(self) -> RelayInterpreter:
        if self._relay is None:
            self._relay = RelayInterpreter(self.module)
        return self._relay

    def _plan(self, fn: func.FuncOp) -> Any:
        """Per function: the returned values and which op results write into which out."""
        plan = self._plans.get(fn)
        if plan is None:
            ret = fn.body.block.last_op
            assert isinstance(ret, func.ReturnOp)
            direct: dict[SSAValue, int] = {}
            for i, v in enumerate(ret.arguments):
                owner = v.owner
                if (
                    v not in direct
                    and isinstance(owner, RelayOp)
                    and not _is_multi_result(type(owner))
                ):
                    direct[v] = i
            plan = self._plans[fn] = (ret, direct)
        return plan

    def _run_function(self, fn: func.FuncOp, inputs: Sequence[Any], outs: Sequence[Any]) -> None:

        ret, direct = self._plan(fn)
        env: dict[SSAValue, Any] = dict(zip(fn.body.block.args, inputs))
        for op in fn.body.block.ops:
            if op is ret:
                break
            if isinstance(op, ConstantOp):
                env[op.result] = op.numpy()
            elif isinstance(op, RelayOp):
                kernel = KERNELS.get(op.RELAY_NAME)
                if kernel is None:
                    raise RunError(f"{describe_op(op)}: no numpy kernel implements {op.name}")
                vals = [env[v] for v in op.operands]
                index = direct.get(op.results[0]) if len(op.results) == 1 else None
                try:
                    if index is not None:
                        result = kernel(*vals, out=outs[index], **op.attrs)
                        if result is not outs[index]:
                            np.copyto(outs[index], result)
                        result = outs[index]
                    else:
                        result = kernel(*vals, **op.attrs)
                except RunError:
                    raise
                except Exception as e:
                    raise RunError(
                        f"{describe_op(op)}: {op.name} failed: {type(e).__name__}: {e}"
                    ) from e
                results = tuple(result) if _is_multi_result(type(op)) else (result,)
                env.update(zip(op.results, results))
            elif isinstance(op, func.CallOp):
                # A composite function inside a primitive one: the reference semantics.
                callee = self._funcs.get(op.callee.root_reference.data)
                if callee is None:
                    raise RunError(f"{describe_op(op)}: calls an unknown function")
                values = self._relay_interpreter().call_op(
                    callee, tuple(env[v] for v in op.arguments)
                )
                env.update(zip(op.results, values))
            else:
                raise RunError(
                    f"{describe_op(op)}: cannot run '{op.name}' inside @{fn.sym_name.data}"
                )
        for i, v in enumerate(ret.arguments):
            value = env[v]
            if direct.get(v) == i:
                continue
            if value is outs[i]:
                continue
            if np.shape(value) != outs[i].shape:
                raise RunError(
                    f"@{fn.sym_name.data} result {i} has shape {np.shape(value)}, but its "
                    f"destination has shape {outs[i].shape}"
                )
            np.copyto(outs[i], value, casting="unsafe")


class MemoryRunner:
    """Runs one lowered module repeatedly; arenas are allocated once per runner."""

    def __init__(
        self,
        mod: Any,
        entry: str = "main",
        use_plan: bool | None = None,
        poison: bool = True,
    ):
        self.module = module_op(mod)
        self.entry = entry
        self.function = entry_function(self.module, entry)
        if use_plan is None:
            use_plan = is_planned(self.module, entry)
        self.arenas: dict[str, np.ndarray] | None = None
        if use_plan:
            if not is_planned(self.module, entry):
                raise RunError("use_plan=True but the module is not planned (run plan-memory)")
            self.arenas = {}
            for op in self.module.ops:
                if isinstance(op, PoolOp):
                    if op.size is None:
                        raise RunError(f"memory.pool @{op.pool_name} has no planned size")
                    refusal = too_large(f"memory.pool @{op.pool_name}", op.size.value.data)
                    if refusal:  # before allocating it
                        raise RunError(refusal)
                    self.arenas[op.pool_name] = np.empty(op.size.value.data, np.uint8)
        self.poison = poison
        self.interpreter = RelayInterpreter(self.module)
        self.interpreter.register_implementations(MemoryFunctions(self.module, self.arenas, poison))

    def run(
        self,
        inputs: Mapping[str, Any] | Sequence[Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> list[np.ndarray]:
        """Run ``@entry`` on ``inputs``/``params`` (see ``interpreter.bind_inputs``)."""
        if self.arenas is not None and self.poison:
            for arena in self.arenas.values():
                arena.fill(_GARBAGE)
        args = bind_inputs(self.module, inputs, params, self.entry)
        outputs = list(self.interpreter.call_op(self.function, tuple(args)))
        # Results may be views of an arena that the next run overwrites: always copy.
        return [np.array(o, copy=True) for o in _own_outputs(outputs, args)]


def run_memory(
    module: Any,
    inputs: Mapping[str, Any] | Sequence[Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    entry: str = "main",
    use_plan: bool | None = None,
    poison: bool = True,
) -> list[np.ndarray]:
    """Interpret a memory-dialect ``@entry``; one array per result.

    ``use_plan`` None means: use the arenas if the module is planned. Inputs and params bind
    ``@entry``'s parameters as in ``xrelay.runtime.interpreter.run``. Errors are ``RunError``.

    BLAS runs on one thread, as in ``interpreter.run`` and the arena executor's steps
    (``blas_single_thread``): OpenBLAS's float32 products on AVX2 CPUs change in their last bits
    with its thread count, and this interpreter is the reference the executor's bits are
    compared with.
    """
    with blas_single_thread():
        return MemoryRunner(module, entry, use_plan, poison).run(inputs, params)
