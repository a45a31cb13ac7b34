"""Types for variables given none (``relay.var("w")``, ``relay.IncompleteType()``), from their uses.

Relay's type inference solves type relations by unification: a relation computes some of its
types from the others, in whichever direction the known ones allow, until nothing changes. This
module does the same for the relations that determine an operand from the rest of a call, which
is what an untyped variable needs:

* an elementwise op (``nn.relu``, ``exp``, ..., Relay's ``IdentityRel``): operand = result, so a
  variable feeding one gets the type the result must have (from the function's annotated return
  type, a typed function it is passed to, a ``let`` annotation, ...);
* ``nn.conv1d`` / ``nn.conv2d`` / ``nn.conv3d`` / ``nn.conv2d_transpose`` with ``channels`` and
  ``kernel_size``: the weight, laid out by ``kernel_layout``, from the data's channels and
  ``groups`` (Relay's ``Conv2DRel`` and its 1-D / 3-D forms);
* ``nn.deformable_conv2d``: the weight as a conv2d's, the offset ``(N, 2 * kh * kw *
  deformable_groups, out_h, out_w)`` in the data's layout (Relay's ``DeformableConv2DRel``);
* ``nn.dense`` / ``nn.matmul`` with ``units``: the weight from the data's last dimension;
* ``nn.bias_add``, ``nn.batch_norm``, ``nn.layer_norm``, ``nn.group_norm``,
  ``nn.instance_norm``, ``nn.prelu``: the per-channel vectors from the data's ``axis`` dimension;
* a call of a typed function: each argument gets its parameter's type; ``let %x = v``: ``%x``
  gets ``v``'s type (and ``v`` the annotation); an ``If``'s branches share its type;
* references: ``ref_read(%r)`` of type ``T`` makes ``%r`` a ``ref(T)``, ``ref_write(%r, %v)``
  gives each the other's (Relay's RefRead/RefWrite rules, both directions).

Broadcasting ops (``add``, ...) compute only forwards, as Relay's ``BroadcastRel``. Each round
recomputes the types forwards, then pushes expected types backwards; it stops when no variable
gains a type. A variable still without one is an error naming it. The rules read each op's
attributes as the relay dialect defines them (names, defaults, layouts).
"""

from __future__ import annotations

from typing import Any

from xrelay.dialects.relay import RelayTypeError, dtype_of, shape_of, tensor_type
from xrelay.dialects.relay.ops import UnaryOp, parse_layout
from xrelay.relay.analysis import post_order
from xrelay.relay.expr import (
    Call,
    Constructor,
    Expr,
    Function,
    FuncType,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleType,
    Var,
    _AdtValue,
    _BuiltinTensorType,
    _flat_tensor_types,
    _polymorphic,
    _substitute_py,
    _type_pattern,
    _type_vars_of,
    _unify_py,
    pattern_variables,
    py_type,
)

__all__ = ["infer_missing_types"]

_MAX_ROUNDS = 64


def _tensor(t: Any) -> bool:
    return isinstance(t, _BuiltinTensorType)


def _per_channel(data: Any, attrs: dict[str, Any], default_axis: int) -> Any:
    ds = shape_of(data)
    axis = attrs.get("axis", default_axis)
    if axis is None:
        axis = default_axis
    if not -len(ds) <= axis < len(ds):
        return None
    return tensor_type((ds[axis],), dtype_of(data))


_CONV_DEFAULTS = {1: ("NCW", "OIW"), 2: ("NCHW", "OIHW"), 3: ("NCDHW", "OIDHW")}


def _conv_weight(data: Any, attrs: dict[str, Any], transpose: bool) -> Any:
    """A convolution's weight from the data's channels and ``channels``, ``kernel_size``,
    ``groups`` and the layouts (1-, 2- and 3-D; Relay's Conv*DRel). Blocked layouts count as
    their primal axes (``NCHW16c``: C blocks times 16; ``OIHW16i16o``: O/16, I/16, ..., 16, 16)."""
    channels, kernel = attrs.get("channels"), attrs.get("kernel_size")
    rank = len(shape_of(data)) - 2
    layout = attrs.get("data_layout") or _CONV_DEFAULTS.get(max(rank, 0), ("",))[0]
    try:
        daxes = parse_layout(layout)
    except ValueError:
        return None
    rank = sum(a.isupper() for a, _ in daxes) - 2
    if channels is None or kernel is None or rank not in _CONV_DEFAULTS or len(daxes) != len(shape_of(data)):
        return None
    klayout = attrs.get("kernel_layout") or ("IOHW" if transpose else _CONV_DEFAULTS[rank][1])
    try:
        kaxes = parse_layout(klayout)
    except ValueError:
        return None
    if "C" not in layout or sum(a.isupper() for a, _ in kaxes) != rank + 2:
        return None
    in_ch = 1
    for (a, _), n in zip(daxes, shape_of(data)):
        if a in "Cc":
            if n is None:
                return None
            in_ch *= n
    groups = attrs.get("groups") or 1
    spatial = [a for a, _ in kaxes if a.isupper() and a not in "OI"]
    kernel = [kernel] * rank if isinstance(kernel, int) else list(kernel)
    if len(kernel) != len(spatial):
        return None
    dims = dict(zip(spatial, kernel))
    if transpose:  # (in, out / groups, k...)
        dims["I"], dims["O"] = in_ch, channels // groups
    else:  # (out, in / groups, k...)
        dims["O"], dims["I"] = channels, in_ch // groups
    factors = {a.upper(): f for a, f in kaxes if a.islower()}
    shape = []
    for a, f in kaxes:
        if a.islower():
            shape.append(f)
        elif dims[a] % factors.get(a, 1):
            return None
        else:
            shape.append(dims[a] // factors.get(a, 1))
    return tensor_type(shape, dtype_of(data))


def _deformable_offset(data: Any, weight: Any, attrs: dict[str, Any]) -> Any:
    """The offset of a deformable convolution from the data, the kernel size (the weight's or
    ``kernel_size``) and the attributes."""
    layout, klayout = attrs["data_layout"], attrs["kernel_layout"]
    if sorted(layout) != sorted("NCHW") or sorted(klayout) != sorted("OIHW"):
        return None
    if weight is not None:
        kh, kw = (shape_of(weight)[klayout.index(a)] for a in "HW")
    elif attrs.get("kernel_size") is not None:
        kh, kw = attrs["kernel_size"]
    else:
        return None
    ds = dict(zip(layout, shape_of(data)))
    pt, pl, pb, pr = attrs["padding"]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilation"]
    if None in (ds["H"], ds["W"], kh, kw):
        return None
    dims = {
        "N": ds["N"], "C": 2 * kh * kw * attrs["deformable_groups"],
        "H": (ds["H"] + pt + pb - dh * (kh - 1) - 1) // sh + 1, "W": (ds["W"] + pl + pr - dw * (kw - 1) - 1) // sw + 1,
    }  # fmt: skip
    return tensor_type([dims[a] for a in layout], dtype_of(data))


def _operand_rule(call: Call, expected: Any) -> list[Any]:
    """Types the operands of an op call must have, from the known ones, its attributes and the
    type its result must have (None where nothing follows)."""
    name = call.op.name
    cls = call.op.op_class
    args = [a._type for a in call.args]
    out: list[Any] = [None] * len(args)
    attrs = dict(call._raw_attrs)

    if issubclass(cls, UnaryOp) and len(args) == 1:
        if _tensor(expected):
            out[0] = expected
        return out
    data = args[0] if args else None
    if not _tensor(data):
        return out
    full = {k: (attrs.get(k) if attrs.get(k) is not None else spec.default) for k, spec in cls.ATTRS.items()}
    if name in ("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose") and len(args) == 2:
        out[1] = _conv_weight(data, full, transpose=name.endswith("transpose"))
    elif name == "nn.deformable_conv2d" and len(args) == 3:
        out[2] = _conv_weight(data, full, transpose=False)
        out[1] = _deformable_offset(data, args[2] if _tensor(args[2]) else out[2], full)
    elif name == "nn.dense" and len(args) == 2 and full.get("units") is not None:
        out[1] = tensor_type((full["units"], shape_of(data)[-1]), dtype_of(data))
    elif name == "nn.matmul" and len(args) == 2 and full.get("units") is not None:
        k = shape_of(data)[0] if full.get("transpose_a") else shape_of(data)[-1]
        shape = (full["units"], k) if full.get("transpose_b") else (k, full["units"])
        out[1] = tensor_type(shape, dtype_of(data))
    elif name == "nn.bias_add" and len(args) == 2:
        out[1] = _per_channel(data, full, 1)
    elif name == "nn.prelu" and len(args) == 2:
        out[1] = _per_channel(data, full, 1)
    elif name == "nn.batch_norm":
        vec = _per_channel(data, full, 1)
        out[1:] = [vec] * (len(args) - 1)
    elif name == "nn.layer_norm":
        vec = _per_channel(data, full, -1)
        out[1:] = [vec] * (len(args) - 1)
    elif name in ("nn.group_norm", "nn.instance_norm"):
        vec = _per_channel(data, full, 1)
        out[1:] = [vec] * (len(args) - 1)
    return out


def _retype(nodes: list[Expr], let_values: dict[int, Expr]) -> None:
    """Recompute the types forwards (children before parents) where they became computable."""
    for node in nodes:
        if node._type is not None:
            continue
        if isinstance(node, Var):
            value = let_values.get(id(node))  # visited before the variable (children order)
            if value is not None and value._type is not None:
                node._type = value._type
        elif isinstance(node, Call):
            if isinstance(node.op, Op):
                node._type = node._infer_op_call(node.op)
                if node._full_attrs is not None:
                    node.attrs = type(node.attrs)(node._full_attrs)
            else:
                node._type = node._infer_fn_call(node.op)
        elif isinstance(node, Tuple):
            types = [f._type for f in node.fields]
            if all(t is not None for t in types):
                node._type = TupleType(types)
        elif isinstance(node, TupleGetItem):
            t = node.tuple_value._type
            if isinstance(t, TupleType) and 0 <= node.index < len(t.fields):
                node._type = t.fields[node.index]
        elif isinstance(node, Let):
            if node.var._type is None and node.value._type is not None:
                node.var._type = node.value._type
            node._type = node.body._type
        elif isinstance(node, If):
            node._type = node.true_branch._type or node.false_branch._type
        elif isinstance(node, Match):
            node._type = next((c.rhs._type for c in node.clauses if c.rhs._type is not None), None)
        elif isinstance(node, RefCreate):
            if node.value._type is not None:
                node._type = RefType(node.value._type)
        elif isinstance(node, RefRead):
            if isinstance(node.ref._type, RefType):
                node._type = node.ref._type.value
        elif isinstance(node, RefWrite):
            node._type = TupleType([])
        elif isinstance(node, Function):
            body = node.body._type
            if node.ret_type is None and body is not None:
                node.ret_type = body
            if node.ret_type is not None and all(p._type is not None for p in node.params):
                node._type = FuncType([p._type for p in node.params], node.ret_type)


def _argument_types(ft: FuncType, args: Any, want: Any) -> list[Any]:
    """The parameter types of a call of ``ft``; for a function with type parameters, with the
    type variables the typed arguments (and the type the call's value must have) bind."""
    if not _polymorphic(ft):
        return list(ft.arg_types)
    subst: dict[str, Any] = {}
    for a, t in zip(args, ft.arg_types):
        if a._type is not None:
            _unify_py(t, a._type, subst)
    if want is not None:
        _unify_py(ft.ret_type, want, subst)
    return [_substitute_py(t, subst) for t in ft.arg_types]


def _field_types(ctor: Constructor, args: Any, want: Any) -> list[Any]:
    """The field types of a constructor call, with the type arguments its typed fields and the
    type its value must have (``Cons(%x, %y)`` where a ``List[nat]`` goes) tell."""
    subst: dict[str, Any] = {}
    for a, t in zip(args, ctor.inputs):
        if a._type is not None:
            _unify_py(t, a._type, subst)
    if isinstance(want, _AdtValue) and want.def_name == ctor.belong_to.name_hint:
        for v, t in zip(ctor.type_vars, want.args.data):
            subst.setdefault(v.var_name.data, t)
    return [py_type(_substitute_py(t, subst)) for t in ctor.inputs]


def _type_literal_params(fn: Function, t: FuncType) -> bool:
    """Give the untyped parameters of a function literal passed where a function of type ``t``
    goes (``@map(fn (%x) { ... }, %xs)``) the types ``t`` fixes; whether one was given."""
    progress = False
    if len(fn.params) != len(t.arg_types):
        return False
    for prm, pt in zip(fn.params, t.arg_types):
        if prm._type is None and pt is not None and not _type_vars_of(pt):
            prm._type = py_type(pt)
            progress = True
    return progress


def _expect(expected: dict[int, Any], node: Expr, t: Any) -> None:
    if t is not None and node._type is None and id(node) not in expected:
        expected[id(node)] = t


def infer_missing_types(fn: Function, where: str = "main") -> None:
    """Give every variable of ``fn`` without a type the one its uses require (in place).

    Raises ``RelayTypeError`` naming a variable whose type its uses do not determine.
    """

    nodes = list(post_order(fn))
    holes = [n for n in nodes if isinstance(n, Var) and n._type is None]
    # calls through a let-bound function literal are calls of the literal
    let_fns = {id(n.var): n.value for n in nodes if isinstance(n, Let) and isinstance(n.value, Function)}
    let_values = {id(n.var): n.value for n in nodes if isinstance(n, Let)}
    if not holes:
        return
    for _ in range(_MAX_ROUNDS):
        _retype(nodes, let_values)
        expected: dict[int, Any] = {}
        for f in (n for n in nodes if isinstance(n, Function)):
            _expect(expected, f.body, f.ret_type)
        progress = False
        for node in reversed(nodes):  # parents before children
            want = node._type if node._type is not None else expected.get(id(node))
            if isinstance(node, Call):
                if isinstance(node.op, Op):
                    for a, t in zip(node.args, _operand_rule(node, want)):
                        _expect(expected, a, t)
                elif isinstance(node.op, Constructor):
                    if node._type is None and isinstance(want, _AdtValue) and not _type_vars_of(want):
                        node._type = want  # ``Nil`` where a List[nat] goes
                        progress = True
                    for a, t in zip(node.args, _field_types(node.op, node.args, want)):
                        if isinstance(a, Function) and isinstance(t, FuncType):
                            progress |= _type_literal_params(a, t)
                        elif t is not None and not _type_vars_of(t):
                            _expect(expected, a, t)
                else:
                    ft = node.op._type
                    if isinstance(ft, FuncType) and len(ft.arg_types) == len(node.args):
                        for a, t in zip(node.args, _argument_types(ft, node.args, want)):
                            if isinstance(a, Function) and isinstance(t, FuncType):
                                progress |= _type_literal_params(a, t)
                            elif not _type_vars_of(t):
                                _expect(expected, a, t)
                    callee = let_fns.get(id(node.op), node.op)
                    if isinstance(callee, Function) and len(callee.params) == len(node.args):
                        for prm, a in zip(callee.params, node.args):  # a literal's parameters
                            if prm._type is None and a._type is not None:
                                prm._type = a._type
                                progress = True
            elif isinstance(node, Match):
                for c in node.clauses:
                    _expect(expected, c.rhs, want)
                    if node.data._type is not None:
                        untyped = [v for v in pattern_variables(c.lhs) if v._type is None]
                        _type_pattern(c.lhs, node.data._type)
                        progress |= any(v._type is not None for v in untyped)
            elif isinstance(node, Let):
                _expect(expected, node.body, want)
                _expect(expected, node.value, node.var.type_annotation or node.var._type)
                if node.var._type is None and node.value._type is not None:
                    node.var._type = node.value._type
                    progress = True
            elif isinstance(node, If):
                _expect(expected, node.true_branch, want)
                _expect(expected, node.false_branch, want)
                _expect(expected, node.cond, tensor_type((), "bool"))
            elif isinstance(node, RefRead):  # ref(T) -> T, backwards
                _expect(expected, node.ref, None if want is None else RefType(want))
            elif isinstance(node, RefCreate) and isinstance(want, RefType):
                _expect(expected, node.value, want.value)
            elif isinstance(node, RefWrite):
                held = node.ref._type.value if isinstance(node.ref._type, RefType) else None
                _expect(expected, node.value, held)
                vt = node.value._type
                _expect(expected, node.ref, None if vt is None else RefType(vt))
            elif isinstance(node, Tuple) and isinstance(want, TupleType) and len(want) == len(node.fields):
                for f, t in zip(node.fields, want.fields):
                    _expect(expected, f, t)
            elif isinstance(node, Var) and node._type is None and want is not None:
                if _flat_tensor_types(want) is None:
                    continue
                node._type = want
                progress = True
        if not progress:
            break
    _retype(nodes, let_values)
    left = [v for v in holes if v._type is None]
    if left:
        names = ", ".join("%" + v.name_hint for v in left[:8])
        if len(left) > 8:
            names += f" and {len(left) - 8} more variables"
        raise RelayTypeError(
            f"in @{where}: cannot infer the type of {names} from its uses; give it a shape "
            "(relay.var(name, shape=..., dtype=...)) or use it where its type is determined"
        )
