"""TVM graph-executor JSON for a planned program, and the three-file export (graph, lib, params).

``graph_json(program)`` writes the format of TVM's ``GraphExecutorCodegen`` (see
docs/relay-semantics.md §8):

* ``nodes``: ``@main``'s parameters first (``{"op": "null", "name": ..., "inputs": []}``), then
  in program order one ``tvm_op`` node per ``memory.invoke`` (``attrs``: ``num_outputs``,
  ``num_inputs``, ``flatten_data``, ``func_name`` = the primitive function as TVM lowers it,
  ``tvmgen_default_<name>``, shared by structurally equal functions as TVM lowers them once,
  and ``hash``, 16 hex digits of the function's body (not TVM's structural hash); all strings;
  the node's name is the ``func_name`` made unique with ``_1``, ``_2``...), one ``reshape_nop``
  node (``func_name = "__nop"``) per ``memory.alias``, and a ``null`` node ``p0, p1, ...`` for
  each constant of ``@main`` where it is first used (TVM's params);
* ``arg_nodes`` (the ``null`` nodes), ``heads`` (``[node, index, 0]`` per result),
  ``node_row_ptr`` (prefix sums of the outputs per node);
* ``attrs``: per node entry ``shape``, ``dltype``, ``storage_id`` and ``device_index`` (the
  DLPack type code of the entry's device: 1, the CPU, unless the program was planned for
  devices), and ``storage_scope`` when some entry is in a memory scope other than the
  default (TVM writes it only then).

A step that runs a ``device_copy`` primitive function is written as TVM writes it: a
``tvm_op`` node named ``__copy`` with ``func_name = "__copy"``. An entry's device is its
storage's pool's ``device`` (lower-to-memory declares one pool per memory space); a graph
input kept out of the arena takes ``@main``'s parameter device, a constant the device of the
step that first reads it. Storage ids never cross devices (Relay plans each device apart).

Storage ids come from the ``storage-ids`` planner (Relay's ``GraphPlanMemory`` tokens) run on
the program's storages: one buffer per storage that holds a node entry (workspaces are not
entries), the graph inputs and constants as never-reused ``input``/``constant`` buffers; a
``memory.alias`` shares its source's id, as Relay's ``__nop`` shares its input's token.

``GraphModule.export(graph, lib, params)`` writes the JSON, the planned program as ``.mlir`` and
the params as ``.npz``; ``read_export(graph, lib, params)`` reads the three back and
``verify_export`` checks them (``xrelay.runtime.load``, in ``executor_factory``, makes a
runnable ``GraphModule`` of them).

It is run time's: a loading process writes the JSON its program gives to compare it with the
file, so the writer, the ``storage-ids`` tokens (``memory_plan.plan_storage_ids``) and the
liveness they read sit below the compiler (the build driver imports them from here).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from xrelay.dialects import make_context
from xrelay.dialects.memory import AliasOp, AllocStorageOp, AllocTensorOp, CopyOp, InvokeOp, PoolOp
from xrelay.dialects.relay import ConstantOp, byte_size, dtype_of, params_source
from xrelay.dialects.relay.device_analysis import (
    device_copy_of,
    function_devices,
    functions_by_name,
)
from xrelay.dialects.relay.devices import VirtualDeviceAttr
from xrelay.dialects.verify import verify_module
from xrelay.error import TVMError
from xrelay.runtime.digests import blake2b
from xrelay.runtime.liveness import (
    VerifyMemoryPlanError,
    entry_block,
    storage_lifetimes,
    verify_memory_plan,
)
from xrelay.runtime.memory_plan import Buffer, Pool, plan_storage_ids
from xrelay.runtime.npz import map_npz

__all__ = ["GraphJsonError", "check_export", "graph_json", "parse_program", "read_export", "verify_export"]

CPU_DEVICE = 1  # kDLCPU


class GraphJsonError(ValueError, TVMError):
    """The program cannot be written as graph JSON, or an export cannot be loaded."""


def _root_storage(v: SSAValue) -> AllocStorageOp | None:
    while True:
        owner = v.owner
        if isinstance(owner, AllocTensorOp):
            v = owner.storage
        elif isinstance(owner, AliasOp):
            v = owner.source
        elif isinstance(owner, AllocStorageOp):
            return owner
        else:
            return None


def _input_name(v: SSAValue, index: int) -> str:
    return v.name_hint if v.name_hint else f"arg{index}"


def _structure_key(fn: func.FuncOp) -> str:
    """A text equal for structurally equal functions (ops, attributes, wiring, types), with
    each constant's data as a digest of its bytes: functions with weights bound in (oneDNN's
    partitioned functions) hash without printing megabytes of literals."""
    index: dict[SSAValue, int] = {a: i for i, a in enumerate(fn.body.block.args)}
    parts = [str(fn.function_type)]
    for op in fn.body.walk():
        if isinstance(op, ConstantOp):
            data = op.value.data.data
            digest = blake2b(memoryview(data).cast("B"), digest_size=16).hexdigest()
            desc = f"constant {digest}"
        else:
            props = sorted((k, str(v)) for k, v in op.properties.items())
            attrs = sorted((k, str(v)) for k, v in op.attributes.items() if k != "sym_name")
            desc = f"{op.name} {props} {attrs}"
        operands = [index.get(v, -1) for v in op.operands]
        for r in op.results:
            index[r] = len(index)
        parts.append(f"{desc} {operands} {[str(r.type) for r in op.results]}")
    return "\n".join(parts)


def graph_json(program: ModuleOp, entry: str = "main", mod_name: str = "default") -> dict[str, Any]:
    """The graph-executor JSON object of a lowered (and usually planned) program; functions
    are named as TVM lowers them, ``tvmgen_<mod_name>_<function>``."""
    block = entry_block(program, entry)
    lifetimes, _ = storage_lifetimes(program, entry)
    funcs = functions_by_name(program)
    pool_devices = {op.pool_name: op.device for op in program.ops if isinstance(op, PoolOp) and op.device}
    planned = function_devices(funcs[entry])
    # The device of each node entry, when the program was planned for devices.
    entry_device: dict[tuple[int, int], VirtualDeviceAttr] = {}

    def storage_device(storage: AllocStorageOp | None) -> VirtualDeviceAttr | None:
        if storage is None:
            return None
        names = [a.data for a in storage.pools.data] if storage.pools is not None else []
        placement = storage.placement
        for name in ([placement[0]] if placement is not None else []) + names:
            if name in pool_devices:
                return pool_devices[name]
        return None

    nodes: list[dict[str, Any]] = []
    entries: dict[SSAValue, tuple[int, int]] = {}
    # Entry -> the key of its storage buffer, for storage ids.
    entry_key: dict[tuple[int, int], str] = {}
    buffers: list[Buffer] = []
    keys: dict[Any, str] = {}

    def buffer_for(obj: Any, size: int, start: int, end: int, kind: str) -> str:
        key = keys.get(obj)
        if key is None:
            key = keys[obj] = f"b{len(keys)}"
            buffers.append(Buffer(key, size, start, end, 1, kind))
        return key

    def add_node(node: dict[str, Any]) -> int:
        nodes.append(node)
        return len(nodes) - 1

    # TVM lowers structurally equal primitive functions once: one name and hash for all of them.
    lowered_by_body: dict[str, tuple[str, str]] = {}

    def lowered(name: str, callee: func.FuncOp | None) -> tuple[str, str]:
        if callee is None:
            body = name
        elif any(isinstance(op, ConstantOp) for op in callee.body.walk()):
            body = _structure_key(callee)  # printing bound weights would take seconds
        else:
            body = str(callee).replace(f"@{name}(", "@_(", 1)
        if body not in lowered_by_body:
            digest = blake2b(body.encode(), digest_size=8).hexdigest()
            symbol = callee.attributes.get("relay.global_symbol") if callee is not None else None
            # an external function keeps its global symbol (tvmgen_default_dnnl_main_0)
            func_name = symbol.data if isinstance(symbol, StringAttr) else f"tvmgen_{mod_name}_{name}"
            lowered_by_body[body] = (func_name, digest)
        return lowered_by_body[body]

    # Graph inputs: their arena copy (if any) is the same entry.
    copies: dict[SSAValue, SSAValue] = {}
    for op in block.ops:  # (the copies into the arena come before the first step)
        if isinstance(op, InvokeOp):
            break
        if isinstance(op, CopyOp) and op.source in block.args:
            copies[op.source] = op.dest
    for i, arg in enumerate(block.args):
        nid = add_node({"op": "null", "name": _input_name(arg, i), "inputs": []})
        entries[arg] = (nid, 0)
        dest = copies.get(arg)
        t = arg.type
        assert isinstance(t, TensorType)
        storage = _root_storage(dest) if dest is not None else None
        if dest is not None:
            entries[dest] = (nid, 0)
        if storage is not None:
            first, last = lifetimes[storage]
            entry_key[(nid, 0)] = buffer_for(storage, storage.nbytes, first, last, "input")
        else:
            entry_key[(nid, 0)] = buffer_for(arg, byte_size(t), 0, 0, "input")
        device = storage_device(storage) or (planned[0][i] if planned and i < len(planned[0]) else None)
        if device is not None:
            entry_device[(nid, 0)] = device

    used_names: dict[str, int] = {}
    n_const = 0
    step = -1

    def unique(name: str) -> str:
        k = used_names.get(name, 0)
        used_names[name] = k + 1
        return name if k == 0 else f"{name}_{k}"

    def ref(v: SSAValue) -> list[int]:
        nonlocal n_const
        e = entries.get(v)
        if e is None:
            owner = v.owner
            if not isinstance(owner, ConstantOp):
                raise GraphJsonError(f"graph JSON: a step reads a value of {owner} it cannot name")
            nid = add_node({"op": "null", "name": f"p{n_const}", "inputs": []})
            n_const += 1
            e = entries[v] = (nid, 0)
            t = v.type
            assert isinstance(t, TensorType)
            s = max(step, 0)
            entry_key[e] = buffer_for(owner, byte_size(t), s, s, "constant")
        return [e[0], e[1], 0]

    # Relay's visitor order: post-order DFS from the results, operands first.
    producer: dict[SSAValue, Any] = {}
    for op in block.ops:
        if isinstance(op, InvokeOp):
            for v in op.outs:
                producer[v] = op
        elif isinstance(op, AliasOp):
            producer[op.result] = op
    joins = _joins(block, producer, copies)
    producer.update(joins)
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        raise GraphJsonError(f"@{entry} must end with func.return")
    order: list[Any] = []
    seen: set[Any] = set()
    stack: list[tuple[Any, bool]] = [
        (producer[v], False) for v in reversed(ret.arguments) if v in producer
    ]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        stack.append((op, True))
        operands = op.inputs if isinstance(op, InvokeOp) else op.parts if isinstance(op, _Join) else [op.source]
        for v in reversed(list(operands)):
            if v in producer and producer[v] not in seen:
                stack.append((producer[v], False))
    for op in order:
        if isinstance(op, InvokeOp):
            step = op.step.value.data if op.step is not None else 0
            n_before = len(nodes)
            inputs = [ref(v) for v in op.inputs]
            name = op.callee_name
            callee = funcs.get(name)
            op_attrs = {"num_outputs": str(len(op.outs)), "num_inputs": str(len(op.inputs)), "flatten_data": "0"}
            if callee is not None and device_copy_of(callee) is not None:
                name = "__copy"  # TVM's graph executor copies between devices for this name
                op_attrs["func_name"] = name
            else:
                name, digest = lowered(name, callee)
                op_attrs["func_name"] = name
                op_attrs["hash"] = digest
            step_device = storage_device(_root_storage(op.outs[0])) if op.outs else None
            if step_device is not None:
                for const_nid in range(n_before, len(nodes)):  # constants first read here
                    entry_device[(const_nid, 0)] = step_device
            nid = add_node(
                {
                    "op": "tvm_op",
                    "name": unique(name),
                    "attrs": op_attrs,
                    "inputs": inputs,
                }
            )
            for k, v in enumerate(op.outs):
                entries[v] = (nid, k)
                storage = _root_storage(v)
                assert storage is not None
                first, last = lifetimes[storage]
                entry_key[(nid, k)] = buffer_for(
                    storage, storage.nbytes, first, last, _kind(storage)
                )
                if (device := storage_device(storage)) is not None:
                    entry_device[(nid, k)] = device
        elif isinstance(op, _Join):
            nid = add_node(
                {
                    "op": "tvm_op",
                    "name": unique("concatenate_nop"),
                    "attrs": {
                        "func_name": "__nop",
                        "flatten_data": "0",
                        "num_inputs": str(len(op.parts)),
                        "num_outputs": "1",
                    },
                    "inputs": [ref(v) for v in op.parts],
                }
            )
            entries[op.result] = (nid, 0)
            storage = _root_storage(op.result)
            assert storage is not None
            first, last = lifetimes[storage]
            entry_key[(nid, 0)] = buffer_for(storage, storage.nbytes, first, last, _kind(storage))
            if (device := storage_device(storage)) is not None:
                entry_device[(nid, 0)] = device
        elif isinstance(op, AliasOp):
            src = ref(op.source)
            nid = add_node(
                {
                    "op": "tvm_op",
                    "name": "reshape_nop",
                    "attrs": {
                        "func_name": "__nop",
                        "flatten_data": "0",
                        "num_inputs": "1",
                        "num_outputs": "1",
                    },
                    "inputs": [src],
                }
            )
            entries[op.result] = (nid, 0)
            entry_key[(nid, 0)] = entry_key[(src[0], src[1])]
            if (src[0], src[1]) in entry_device:
                entry_device[(nid, 0)] = entry_device[(src[0], src[1])]
    heads = [ref(v) for v in ret.arguments]

    # Relay's GraphPlanMemory shares storage only within a device: plan each device apart.
    buffer_device: dict[str, VirtualDeviceAttr | None] = {}
    for e, key in entry_key.items():
        buffer_device.setdefault(key, entry_device.get(e))
    groups: dict[Any, list[Buffer]] = {}
    for b in buffers:
        d = buffer_device.get(b.name)
        groups.setdefault(None if d is None else (d.device_type, d.virtual_device_id, d.memory_scope), []).append(b)
    storage_ids: dict[str, int] = {}
    for group in groups.values():
        plan = plan_storage_ids(group, [Pool("global", None, 1)])
        assert plan.storage_ids is not None
        base = len(set(storage_ids.values()))
        for name, sid in plan.storage_ids.items():
            storage_ids[name] = base + sid
    shapes, dltypes, sids, devices, scopes = [], [], [], [], []
    row_ptr = [0]
    values_of: dict[tuple[int, int], SSAValue] = {}
    for v, e in entries.items():
        values_of.setdefault(e, v)
    for nid, node in enumerate(nodes):
        n_out = int(node.get("attrs", {}).get("num_outputs", "1"))
        for k in range(n_out):
            v = values_of[(nid, k)]
            t = v.type
            assert isinstance(t, TensorType)
            shapes.append(list(t.get_shape()))
            dltypes.append(dtype_of(t.element_type))
            sids.append(storage_ids[entry_key[(nid, k)]])
            device = entry_device.get((nid, k))
            devices.append(CPU_DEVICE if device is None else device.device_type_int)
            scopes.append("global" if device is None or not device.memory_scope else device.memory_scope)
        row_ptr.append(row_ptr[-1] + n_out)
    attrs: dict[str, Any] = {
        "shape": ["list_shape", shapes],
        "storage_id": ["list_int", sids],
        "device_index": ["list_int", devices],
    }
    if any(sc != "global" for sc in scopes):
        attrs["storage_scope"] = ["list_str", scopes]
    attrs["dltype"] = ["list_str", dltypes]
    return {
        "nodes": nodes,
        "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
        "heads": heads,
        "attrs": attrs,
        "node_row_ptr": row_ptr,
    }


@dataclass(eq=False)
class _Join:
    """A tensor no step writes whole: a concatenation whose parts the steps producing them
    wrote in place (``place-concat-inputs``), or copies put there; or a slice of a tensor
    a step wrote, read in place (``alias-slices``)."""

    result: SSAValue
    parts: list[SSAValue]


def _joins(block: Any, producer: dict[SSAValue, Any], copies: dict[SSAValue, SSAValue]) -> dict[SSAValue, _Join]:
    """Each tensor that no step writes but whose bytes are the tensors steps (or mid-program
    ``memory.copy``) wrote inside it, with those parts in byte order (for a copy, its source).
    In the JSON it is a ``__nop`` node of its parts, sharing their storage id: TVM's graph
    executor has no in-place concatenation; xrelay's runs the program, not the JSON."""
    inputs_copied = {dest for dest in copies.values()}
    written: dict[SSAValue, SSAValue] = {v: v for v in producer}
    for op in block.ops:
        if isinstance(op, CopyOp) and op.dest not in inputs_copied:
            written[op.dest] = op.source
    placed: dict[Any, list[tuple[int, int, SSAValue]]] = {}
    for op in block.ops:
        if isinstance(op, AllocTensorOp):
            t = op.result.type
            assert isinstance(t, TensorType)
            placed.setdefault(op.storage, []).append((op.offset.value.data, byte_size(t), op.result))
    out: dict[SSAValue, _Join] = {}
    for tensors in placed.values():
        if len(tensors) < 2:
            continue
        for off, size, v in tensors:
            if v in written or v in inputs_copied or not v.uses:
                continue
            parts = sorted(((o, w) for o, n, w in tensors if w is not v and w in written and off <= o and o + n <= off + size),
                           key=lambda p: p[0])
            if parts:
                out[v] = _Join(v, [written[w] for _, w in parts])
                continue
            # a slice read in place (alias-slices): a view of the tensor written around it
            around = [w for o, n, w in tensors if w is not v and w in written and o <= off and off + size <= o + n]
            if around:
                out[v] = _Join(v, [written[around[0]]])
    return out


def _kind(storage: AllocStorageOp) -> str:
    kind = storage.storage_kind
    return kind if kind in ("intermediate", "output", "input") else "intermediate"


def read_export(
    graph_json_path: str | os.PathLike,
    lib_mlir_path: str | os.PathLike,
    params_npz_path: str | os.PathLike,
) -> tuple[dict[str, Any], ModuleOp]:
    """The graph JSON and the planned program (its constants bound to the params) of an export.

    ``xrelay.runtime.executor_factory.load`` makes the runnable ``GraphModule`` of them.
    """
    try:
        with open(graph_json_path, encoding="utf-8") as f:
            doc = json.load(f)
        with open(lib_mlir_path, encoding="utf-8") as f:
            text = f.read()
        params = map_npz(params_npz_path)
    except (OSError, ValueError) as e:
        raise GraphJsonError(f"cannot read the export: {e}") from None
    return doc, parse_program(text, params, str(lib_mlir_path))


def parse_program(text: str, params: dict[str, Any], source: str) -> ModuleOp:
    """The planned program of an export from its MLIR ``text`` (``source`` names it in the
    errors: a file, or an archive's member), its constants bound to ``params``, verified;
    any failure is one ``GraphJsonError`` starting with ``source``."""
    try:
        with params_source(params):
            program = Parser(make_context(), text, source).parse_module()
        verify_module(program)
    except (ParseError, VerifyException) as e:
        # Both already name the file with the op's line:column (parsed ops keep theirs).
        message = str(e)
        raise GraphJsonError(message if message.startswith(source) else f"{source}: {message}") from None
    except RecursionError:  # a backstop: the parser refuses deep nesting first
        raise GraphJsonError(f"{source}: the program is nested too deeply to process") from None
    return program


DEFAULT_MAX_POOL_BYTES = 4 << 30
"""Largest arena ``load`` allocates unless told (``max_pool_bytes``, ``XRELAY_MAX_POOL_BYTES``)."""


def max_pool_limit(max_pool_bytes: int | None = None) -> int:
    """``max_pool_bytes`` if given, else ``XRELAY_MAX_POOL_BYTES``, else 4 GiB."""
    if max_pool_bytes is None:
        env = os.environ.get("XRELAY_MAX_POOL_BYTES", "").strip()
        if not env:
            return DEFAULT_MAX_POOL_BYTES
        try:
            max_pool_bytes = int(env)
        except ValueError:
            raise GraphJsonError(
                f"XRELAY_MAX_POOL_BYTES must be a byte count, got {env!r}"
            ) from None
    if isinstance(max_pool_bytes, bool) or not isinstance(max_pool_bytes, int) or max_pool_bytes < 0:
        raise GraphJsonError(f"max_pool_bytes must be a byte count, got {max_pool_bytes!r}")
    return max_pool_bytes


def verify_export(
    doc: Any,
    program: ModuleOp,
    entry: str,
    where: str,
    max_pool_bytes: int | None = None,
) -> None:
    """What ``load`` checks before it allocates anything, each failure a ``GraphJsonError``:
    every ``memory.pool`` and their sum within ``max_pool_limit(max_pool_bytes)``; the plan
    valid (``verify-memory-plan``: no two live tensors share a byte, every tensor inside its
    pool); the graph JSON exactly the one the program gives (nodes, inputs, shapes, dltypes,
    storage ids, heads), else the first difference by its path in the JSON."""
    limit = max_pool_limit(max_pool_bytes)
    sizes = {op.pool_name: op.size.value.data for op in program.ops if isinstance(op, PoolOp) and op.size}
    for name, size in sizes.items():
        if size > limit:
            raise GraphJsonError(
                f"{where}: memory.pool @{name} needs {size} bytes, more than the limit of "
                f"{limit} (max_pool_bytes / XRELAY_MAX_POOL_BYTES)"
            )
    if sum(sizes.values()) > limit:
        raise GraphJsonError(
            f"{where}: the pools need {sum(sizes.values())} bytes together, more than the limit "
            f"of {limit} (max_pool_bytes / XRELAY_MAX_POOL_BYTES)"
        )
    try:
        verify_memory_plan(program, entry)
    except VerifyMemoryPlanError as e:
        raise GraphJsonError(f"{where}: {e}") from None
    problem = _first_difference(graph_json(program, entry), doc, "")
    if problem is not None:
        raise GraphJsonError(f"{where}: the graph JSON does not match the program: {problem}")


def _first_difference(want: Any, got: Any, path: str) -> str | None:
    """The first place where JSON value ``got`` differs from ``want``, by its path."""
    here = path or "the document"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{here} is {_short(got)}, expected an object"
        for key in want:
            if key not in got:
                return f"{here} has no '{key}'"
        for key in got:
            if key not in want:
                return f"{here} has an unexpected '{key}'"
        for key, value in want.items():
            found = _first_difference(value, got[key], f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"{here} is {_short(got)}, expected a list of {len(want)}"
        if not any(isinstance(w, dict | list) for w in want):  # a shape: report it whole
            if len(got) != len(want) or any(type(g) is not type(w) for g, w in zip(got, want)) or got != want:
                return f"{here} is {_short(got)}, the program has {_short(want)}"
            return None
        if len(got) != len(want):
            return f"{here} has {len(got)} entries, the program has {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            label = f" ('{w['name']}')" if isinstance(w, dict) and "name" in w else ""
            found = _first_difference(w, g, f"{path}[{i}]{label}")
            if found:
                return found
        return None
    if type(got) is not type(want) or got != want:
        return f"{here} is {_short(got)}, the program has {_short(want)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_export(doc: dict[str, Any], input_names: list[str], num_outputs: int, where: str) -> None:
    """Raise ``GraphJsonError`` unless ``doc`` has these inputs in this order and as many heads."""
    names = [doc["nodes"][i]["name"] for i in doc.get("arg_nodes", [])]
    if names[: len(input_names)] != input_names or len(doc.get("heads", [])) != num_outputs:
        raise GraphJsonError(
            f"{where}: inputs {names[: len(input_names)]} vs {input_names}, "
            f"{len(doc.get('heads', []))} heads vs {num_outputs} results"
        )
