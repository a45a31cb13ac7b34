"""``xrelay.relay``: the Python API shaped like ``tvm.relay``.

Port a script by changing imports only: ``from xrelay import relay`` for ``from tvm import
relay``, ``xrelay.IRModule`` (or ``relay.IRModule``) for ``tvm.IRModule``::

    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    mod = relay.IRModule.from_expr(y)
    print(mod)

Expressions are typed eagerly (``expr.checked_type``); see ``xrelay.relay.expr`` for the
departures from Relay and ``xrelay.relay.module`` for how expressions become IR.
``relay.transform``, ``relay.testing``, ``relay.build_module`` and ``relay.expr_functor`` are
imported lazily.
"""

from __future__ import annotations

import importlib
import sys
import typing

from xrelay.dialects.relay import RelayTypeError
from xrelay.relay import analysis, annotation, expr, image, nn, op, vision
from xrelay.relay.expr import (
    Any,
    Call,
    Clause,
    Constant,
    Constructor,
    Expr,
    Function,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    If,
    IncompleteType,
    Let,
    Match,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TupleWrapper,
    TypeCall,
    TypeData,
    TypeVar,
    Var,
    const,
    scalar_type,
    var,
)
from xrelay.relay.module import IRModule
from xrelay.relay.op import *  # noqa: F403 - every op function, as tvm.relay exports them
from xrelay.relay.op import __all__ as _op_all
from xrelay.relay.parser import fromtext, parse, parse_expr
from xrelay.relay.scope_builder import ScopeBuilder
from xrelay.runtime.params import load_param_dict, save_param_dict

_LAZY_SUBMODULES = ("backend", "prelude", "transform", "dataflow_pattern", "testing", "build_module", "expr_functor", "qnn", "frontend")

__all__ = [
    "Any",
    "Call",
    "Constant",
    "Expr",
    "FuncType",
    "Function",
    "GlobalVar",
    "IRModule",
    "If",
    "IncompleteType",
    "Let",
    "ScopeBuilder",
    "Op",
    "RefCreate",
    "RefRead",
    "RefType",
    "RefWrite",
    "Clause",
    "Constructor",
    "GlobalTypeVar",
    "Match",
    "PatternConstructor",
    "PatternTuple",
    "PatternVar",
    "PatternWildcard",
    "TypeCall",
    "TypeData",
    "TypeVar",
    "RelayTypeError",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "Var",
    "analysis",
    "annotation",
    "image",
    "bind_params_by_name",
    "build",
    "const",
    "scalar_type",
    "create_executor",
    "expr",
    "fromtext",
    "parse",
    "parse_expr",
    "load_param_dict",
    "nn",
    "vision",
    "op",
    "save_param_dict",
    "var",
    *_op_all,
]


def bind_params_by_name(func: Function, params: dict[str, typing.Any]) -> Function:
    """``func`` with the parameters named in ``params`` replaced by named constants."""
    from xrelay.relay.build_module import bind_params_by_name as bind

    return bind(func, params)


def build(ir_mod: typing.Any, target: typing.Any = None, **kwargs: typing.Any) -> typing.Any:
    """Relay's ``relay.build``; see ``xrelay.relay.build_module.build``."""
    from xrelay.relay.build_module import build as _build

    return _build(ir_mod, target, **kwargs)


def create_executor(
    kind: str = "debug",
    mod: typing.Any = None,
    device: typing.Any = None,
    target: typing.Any = "llvm",
    params: typing.Any = None,
) -> typing.Any:
    """Relay's ``relay.create_executor``; see ``xrelay.relay.build_module.create_executor``."""
    from xrelay.relay.build_module import create_executor as _create

    return _create(kind, mod, device, target, params)


# ``relay.op`` is a module here, so ``relay.op.contrib`` (Relay's package) is aliased in
from xrelay.relay import contrib as _contrib  # noqa: E402
from xrelay.relay.contrib import dnnl as _dnnl  # noqa: E402

op.contrib = _contrib  # type: ignore[attr-defined]
# and Relay's ``relay.op.nn`` / ``relay.op.annotation`` (the same modules as ``relay.nn``, ...)
op.nn = nn  # type: ignore[attr-defined]
op.annotation = annotation  # type: ignore[attr-defined]
sys.modules["xrelay.relay.op.nn"] = nn
sys.modules["xrelay.relay.op.annotation"] = annotation
sys.modules["xrelay.relay.op.contrib"] = _contrib
sys.modules["xrelay.relay.op.contrib.dnnl"] = _dnnl
# and Relay's registration helpers: ``from tvm.relay.op import op as reg`` (reg.register_*),
# ``from tvm.relay.op import register_alter_op_layout``, and
# ``tvm.relay.transform.infer_layout_utils.InferCorrectLayoutOutput``
from xrelay.relay import op_attr as _op_attr  # noqa: E402

op.op = op  # type: ignore[attr-defined]
op.register_alter_op_layout = _op_attr.register_alter_op_layout  # type: ignore[attr-defined]
op.register_infer_correct_layout = _op_attr.register_infer_correct_layout  # type: ignore[attr-defined]
sys.modules["xrelay.relay.op.op"] = op
sys.modules["xrelay.relay.transform.infer_layout_utils"] = _op_attr


_LAZY_NAMES = {"ExprFunctor": "expr_functor", "ExprVisitor": "expr_functor", "ExprMutator": "expr_functor"}


def __getattr__(name: str) -> typing.Any:
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"xrelay.relay.{_LAZY_NAMES[name]}"), name)
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"xrelay.relay.{name}")
    raise AttributeError(f"module 'xrelay.relay' has no attribute '{name}'")
