"""ONNX operators imported onto Relay's scans, scatters and samplers, and the recurrent layers.

As Relay's ONNX frontend (TVM v0.19) maps them:

* ``CumSum``/``CumProd`` -> ``cumsum``/``cumprod`` (``reverse`` flips the axis around the scan).
  Relay's frontend needed the axis at import; an axis given at run time does not change the
  result's type, so it is imported as one scan per axis and a ``where`` on the axis value.
* ``ScatterElements``/``Scatter`` -> ``scatter_elements``; ``ScatterND`` -> ``scatter_nd`` after
  moving the index tuples to the first axis (as ``GatherND``).
* ``Einsum`` -> ``einsum``; ``BitCast`` -> ``reinterpret``; ``ReverseSequence`` ->
  ``reverse_sequence``.
* ``GridSample`` -> ``image.grid_sample`` with the grid's coordinates moved to axis 1.
* ``TopK`` -> ``topk`` (int64 indices), ``OneHot`` -> ``one_hot`` after ONNX's negative
  indices are wrapped; K and depth must be known at import.
* ``DFT`` -> ``dft``; ``RNN``/``GRU``/``LSTM`` unrolled (below); ``SwiGLU``,
  ``RotaryEmbedding``, ``DynamicQuantizeLinear`` as compositions; ``Resize``'s ``axes`` and
  ``keep_aspect_ratio_policy`` widened for the Resize converter.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends import onnx_nd as _onnx_nd  # noqa: F401 - its Resize converter is wrapped below
from xrelay.frontends import onnx_ops2 as _onnx_ops2  # noqa: F401 - its LpPool converter is wrapped below
from xrelay.frontends.onnx import _CONVERTERS, _Importer, _Node, _op, _relay_dtype, _Val


def _flip(im: _Importer, node: _Node, x: _Val, axis: int) -> _Val:
    """``x`` reversed along ``axis`` (a strided slice with step -1)."""
    rank = im.rank(x)
    axis = axis + rank if axis < 0 else axis
    d = im.static_shape(x, node)[axis]
    # end -d-1 is "before index 0" (a plain -1 would be the last index)
    return im.emit1("strided_slice", [x], begin=[d - 1], end=[-d - 1], strides=[-1], axes=[axis])


@_op("CumSum", "CumProd")
def _cumulative(im, node):
    x, axis_in = node.inputs[0], node.input(1)
    name = "cumsum" if node.op_type == "CumSum" else "cumprod"
    exclusive = bool(node.attrs.get("exclusive", 0))

    def scan(axis: int) -> _Val:
        if node.attrs.get("reverse", 0):
            flipped = im.emit1(name, [_flip(im, node, x, axis)], axis=axis, exclusive=exclusive)
            return _flip(im, node, flipped, axis)
        return im.emit1(name, [x], axis=axis, exclusive=exclusive)

    if axis_in is None:
        return [scan(0)]
    if axis_in.known:
        return [scan(int(axis_in.const.reshape(-1)[0]))]
    # The axis is a run-time value, but the result's type does not depend on it: scan along
    # every axis and select the one asked for (an axis outside [-rank, rank) selects the last).
    rank = im.rank(x)
    if rank == 0:
        raise node.fail("the input must have rank >= 1")
    return [_select_by_axis(im, axis_in, rank, {a: scan(a) for a in range(rank)})]


def _select_by_axis(im: _Importer, axis_in: _Val, rank: int, outs: dict[int, _Val]) -> _Val:
    """``outs[axis]`` for a run-time ``axis`` (negative counts from ``rank``): a chain of
    ``where`` on the axis value; an axis matching none of them selects the last."""
    axis = im.reshape(axis_in, [])
    keys = sorted(outs)
    out = outs[keys[-1]]
    for a in reversed(keys[:-1]):
        hit = im.emit1(
            "logical_or",
            [im.emit1("equal", [axis, im.scalar(a, axis)]), im.emit1("equal", [axis, im.scalar(a - rank, axis)])],
        )
        out = im.emit1("where", [hit, outs[a], out])
    return out


_REDUCTION = {"none": "update", "add": "add", "mul": "mul", "min": "min", "max": "max"}


def _reduction(node: _Node) -> str:
    r = node.attrs.get("reduction", "none")
    if r not in _REDUCTION:
        raise node.fail(f"reduction must be one of {', '.join(_REDUCTION)}, got {r!r}")
    return _REDUCTION[r]


@_op("ScatterElements", "Scatter")
def _scatter_elements(im, node):
    data, indices, updates = node.inputs[:3]
    return im.emit(
        "scatter_elements", [data, indices, updates], axis=int(node.attrs.get("axis", 0)), reduction=_reduction(node)
    )


@_op("ScatterND")
def _scatter_nd(im, node):
    data, indices, updates = node.inputs[:3]
    r = im.rank(indices)
    moved = im.emit1("transpose", [indices], axes=[r - 1, *range(r - 1)])
    return im.emit("scatter_nd", [data, moved, updates], mode=_reduction(node))


@_op("Einsum")
def _einsum(im, node):
    return im.emit("einsum", list(node.inputs), equation=node.attrs["equation"])


@_op("BitCast")
def _bitcast(im, node):
    to = _relay_dtype(int(node.attrs["to"]), f"BitCast node '{node.name}'")
    return im.emit("reinterpret", [node.inputs[0]], dtype=to)


@_op("ReverseSequence")
def _reverse_sequence(im, node):
    x, lengths = node.inputs[:2]
    return im.emit(
        "reverse_sequence",
        [x, lengths],
        seq_axis=int(node.attrs.get("time_axis", 0)),
        batch_axis=int(node.attrs.get("batch_axis", 1)),
    )


_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic", "bicubic": "bicubic", "nearest": "nearest"}


@_op("GridSample")
def _grid_sample(im, node):
    x, grid = node.inputs[:2]
    mode = node.attrs.get("mode", "linear" if node.opset >= 20 else "bilinear")
    if mode not in _GRID_MODES:
        raise node.fail(f"mode must be one of {', '.join(_GRID_MODES)}, got {mode!r}")
    n = im.rank(x) - 2
    if n not in (2, 3):
        raise node.fail(f"only 2-D and 3-D sampling is supported (Relay's), got a {n}-D input")
    moved = im.emit1("transpose", [grid], axes=[0, n + 1, *range(1, n + 1)])
    return im.emit(
        "image.grid_sample",
        [x, moved],
        method=_GRID_MODES[mode],
        layout="NCHW" if n == 2 else "NCDHW",
        padding_mode=node.attrs.get("padding_mode", "zeros"),
        align_corners=bool(node.attrs.get("align_corners", 0)),
    )


# ---- recurrent layers: RNN, GRU, LSTM unrolled over the (static) sequence --------------------------
#
# As Relay's frontend: each time step is dense/add/activation ops (``nn.dense`` of the step's input
# and hidden state with the gate weights), the steps stacked into Y. The input projection of every
# step is one ``nn.dense`` over (seq * batch) rows. ``sequence_lens`` masks steps past each batch
# entry's length (the state is kept and Y is 0 there), which is also right for the reverse
# direction: it starts at each entry's last valid step.


def _activation(im: _Importer, node: _Node, name: str, alpha: float | None, beta: float | None, x: _Val) -> _Val:
    def s(v: float) -> _Val:
        return im.scalar(v, x)

    key = name.lower()
    if key == "sigmoid":
        return im.emit1("sigmoid", [x])
    if key == "tanh":
        return im.emit1("tanh", [x])
    if key == "relu":
        return im.emit1("nn.relu", [x])
    if key == "affine":
        return im.emit1("add", [im.emit1("multiply", [x, s(alpha)]), s(beta)])
    if key == "leakyrelu":
        return im.emit1("nn.leaky_relu", [x], alpha=0.01 if alpha is None else alpha)
    if key == "thresholdedrelu":
        a = 1.0 if alpha is None else alpha
        return im.emit1("where", [im.emit1("greater", [x, s(a)]), x, s(0.0)])
    if key == "scaledtanh":
        return im.emit1("multiply", [s(alpha), im.emit1("tanh", [im.emit1("multiply", [x, s(beta)])])])
    if key == "hardsigmoid":
        a, b = (0.2 if alpha is None else alpha), (0.5 if beta is None else beta)
        lin = im.emit1("add", [im.emit1("multiply", [x, s(a)]), s(b)])
        return im.emit1("clip", [lin], a_min=0.0, a_max=1.0)
    if key == "elu":
        a = 1.0 if alpha is None else alpha
        neg = im.emit1("multiply", [s(a), im.emit1("subtract", [im.emit1("exp", [x]), s(1.0)])])
        return im.emit1("where", [im.emit1("less", [x, s(0.0)]), neg, x])
    if key == "softsign":
        return im.emit1("divide", [x, im.emit1("add", [s(1.0), im.emit1("abs", [x])])])
    if key == "softplus":
        return im.emit1("log", [im.emit1("add", [s(1.0), im.emit1("exp", [x])])])
    raise node.fail(f"activation {name!r} is not supported")


_RNN_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_RNN_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def _split(im: _Importer, x: _Val, n: int, axis: int) -> list[_Val]:
    return [x] if n == 1 else im.emit("split", [x], indices_or_sections=n, axis=axis)


def _row(im: _Importer, w: _Val, d: int) -> _Val:
    """``w[d]`` of a (num_directions, ...) weight."""
    part = im.emit1("strided_slice", [w], begin=[d], end=[d + 1], strides=[1], axes=[0])
    return im.reshape(part, im.shape_of(w)[1:])


@_op("RNN", "GRU", "LSTM")
def _recurrent(im, node):
    kind = node.op_type
    x, w, r = node.inputs[:3]
    b, seq_lens, h0 = node.input(3), node.input(4), node.input(5)
    c0 = node.input(6) if kind == "LSTM" else None
    peep = node.input(7) if kind == "LSTM" else None
    hidden = int(node.attrs["hidden_size"]) if "hidden_size" in node.attrs else im.static_shape(r, node)[-1]
    direction = node.attrs.get("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise node.fail(f"direction must be forward, reverse or bidirectional, got {direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(node.attrs.get("layout", 0))
    if kind == "LSTM" and node.attrs.get("input_forget", 0):
        raise node.fail("input_forget=1 (coupled input and forget gates) is not supported")
    if layout:
        x = im.emit1("transpose", [x], axes=[1, 0, 2])
        h0 = None if h0 is None else im.emit1("transpose", [h0], axes=[1, 0, 2])
        c0 = None if c0 is None else im.emit1("transpose", [c0], axes=[1, 0, 2])
    seq, batch, width = im.static_shape(x, node)
    gates = _RNN_GATES[kind]
    acts = list(node.attrs.get("activations", _RNN_ACTIVATIONS[kind] * dirs))
    per_dir = len(_RNN_ACTIVATIONS[kind])
    if len(acts) != per_dir * dirs:
        raise node.fail(f"expected {per_dir * dirs} activations, got {len(acts)}")
    alphas = list(node.attrs.get("activation_alpha", []))
    betas = list(node.attrs.get("activation_beta", []))
    clip = node.attrs.get("clip")
    zeros = im.const(np.zeros((batch, hidden)), im.dtype_of(x))
    masks = None
    if seq_lens is not None:
        lens = im.reshape(im.cast_like(seq_lens, "int64"), [batch, 1])
        masks = [im.emit1("less", [im.const(np.array(t, np.int64)), lens]) for t in range(seq)]

    def act(k: int, v: _Val) -> _Val:
        return _activation(im, node, acts[k], alphas[k] if k < len(alphas) else None, betas[k] if k < len(betas) else None, v)

    def clipped(v: _Val) -> _Val:
        return v if clip is None else im.emit1("clip", [v], a_min=-float(clip), a_max=float(clip))

    flat_x = im.reshape(x, [seq * batch, width])
    ys, hs, cs = [], [], []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        off = per_dir * d
        w_d, r_d = _row(im, w, d), _row(im, r, d)
        # every step's input projection at once: (seq * batch, gates * hidden)
        xw = im.emit1("nn.dense", [flat_x, w_d], units=gates * hidden)
        rb_parts = None
        if b is not None:
            b_d = _row(im, b, d)
            wb, rb = _split(im, b_d, 2, 0)
            if kind == "GRU" and node.attrs.get("linear_before_reset", 0):
                rb_parts = _split(im, rb, 3, 0)  # the hidden gate's recurrent bias stays inside r *
                no_h = im.const(np.zeros(hidden), im.dtype_of(rb))
                wb = im.emit1("add", [wb, im.emit1("concatenate", [rb_parts[0], rb_parts[1], no_h], axis=0)])
            else:
                wb = im.emit1("add", [wb, rb])
            xw = im.emit1("add", [xw, wb])
        steps = _split(im, im.reshape(xw, [seq, batch * gates * hidden]), seq, 0)
        steps = [im.reshape(s_, [batch, gates * hidden]) for s_ in steps]
        h = zeros if h0 is None else _row(im, h0, d)
        c = zeros if c0 is None else _row(im, c0, d)
        if peep is not None:
            p_i, p_o, p_f = _split(im, _row(im, peep, d), 3, 0)
        out: list[_Val | None] = [None] * seq
        for t in reversed(range(seq)) if reverse else range(seq):
            if kind == "RNN":
                pre = im.emit1("add", [steps[t], im.emit1("nn.dense", [h, r_d], units=hidden)])
                h_new, c_new = act(off, clipped(pre)), None
            elif kind == "LSTM":
                pre = im.emit1("add", [steps[t], im.emit1("nn.dense", [h, r_d], units=4 * hidden)])
                gi, go, gf, gc = _split(im, pre, 4, 1)
                if peep is not None:
                    gi = im.emit1("add", [gi, im.emit1("multiply", [p_i, c])])
                    gf = im.emit1("add", [gf, im.emit1("multiply", [p_f, c])])
                i_t, f_t = act(off, clipped(gi)), act(off, clipped(gf))
                c_t = act(off + 1, clipped(gc))
                c_new = im.emit1("add", [im.emit1("multiply", [f_t, c]), im.emit1("multiply", [i_t, c_t])])
                if peep is not None:
                    go = im.emit1("add", [go, im.emit1("multiply", [p_o, c_new])])
                o_t = act(off, clipped(go))
                h_new = im.emit1("multiply", [o_t, act(off + 2, c_new)])
            else:  # GRU: gates z, r, h
                xz, xr, xh = _split(im, steps[t], 3, 1)
                rz_w, rr_w, rh_w = _split(im, r_d, 3, 0)
                z_t = act(off, clipped(im.emit1("add", [xz, im.emit1("nn.dense", [h, rz_w], units=hidden)])))
                r_t = act(off, clipped(im.emit1("add", [xr, im.emit1("nn.dense", [h, rr_w], units=hidden)])))
                if node.attrs.get("linear_before_reset", 0):
                    hr = im.emit1("nn.dense", [h, rh_w], units=hidden)
                    if rb_parts is not None:
                        hr = im.emit1("add", [hr, rb_parts[2]])
                    hh = im.emit1("multiply", [r_t, hr])
                else:
                    hh = im.emit1("nn.dense", [im.emit1("multiply", [r_t, h]), rh_w], units=hidden)
                h_t = act(off + 1, clipped(im.emit1("add", [xh, hh])))
                one_minus_z = im.emit1("subtract", [im.scalar(1.0, z_t), z_t])
                h_new = im.emit1("add", [im.emit1("multiply", [one_minus_z, h_t]), im.emit1("multiply", [z_t, h])])
                c_new = None
            if masks is not None:
                out[t] = im.emit1("where", [masks[t], h_new, zeros])
                h = im.emit1("where", [masks[t], h_new, h])
                if c_new is not None:
                    c = im.emit1("where", [masks[t], c_new, c])
            else:
                out[t], h = h_new, h_new
                if c_new is not None:
                    c = c_new
        ys.append(im.emit1("stack", out, axis=0))  # (seq, batch, hidden)
        hs.append(h)
        cs.append(c)
    y = im.emit1("stack", ys, axis=1)  # (seq, dirs, batch, hidden)
    y_h = im.emit1("stack", hs, axis=0)  # (dirs, batch, hidden)
    y_c = im.emit1("stack", cs, axis=0)
    if layout:
        y = im.emit1("transpose", [y], axes=[2, 0, 1, 3])
        y_h = im.emit1("transpose", [y_h], axes=[1, 0, 2])
        y_c = im.emit1("transpose", [y_c], axes=[1, 0, 2])
    return [y, y_h, y_c] if kind == "LSTM" else [y, y_h]


# ---- SwiGLU, RotaryEmbedding: compositions (newer than Relay, which had no op for them) ------------


@_op("SwiGLU")
def _swiglu(im, node):
    a, b = node.inputs[:2]
    if im.shape_of(a) != im.shape_of(b):
        raise node.fail(f"A {list(im.shape_of(a))} and B {list(im.shape_of(b))} must have one shape")
    alpha = float(node.attrs.get("alpha", 1.0))
    gate = im.emit1("sigmoid", [a if alpha == 1.0 else im.emit1("multiply", [a, im.scalar(alpha, a)])])
    return [im.emit1("multiply", [im.emit1("multiply", [a, gate]), b])]


def _last_axis_slice(im: _Importer, x: _Val, begin: int, end: int, step: int = 1) -> _Val:
    return im.emit1("strided_slice", [x], begin=[begin], end=[end], strides=[step], axes=[im.rank(x) - 1])


@_op("RotaryEmbedding")
def _rotary_embedding(im, node):
    x, cos, sin = node.inputs[:3]
    pos = node.input(3)
    shape = im.static_shape(x, node)
    if len(shape) == 4:  # (batch, heads, seq, head_size) -> (batch, seq, heads, head_size)
        x = im.emit1("transpose", [x], axes=[0, 2, 1, 3])
    elif len(shape) == 3:  # (batch, seq, hidden) -> (batch, seq, heads, head_size)
        heads = int(node.attrs.get("num_heads", 0))
        if heads <= 0 or shape[2] % heads:
            raise node.fail(f"a 3-D input needs num_heads dividing its hidden size {shape[2]}, got {heads}")
        x = im.reshape(x, [shape[0], shape[1], heads, shape[2] // heads])
    else:
        raise node.fail(f"the input must be 3-D or 4-D, got {list(shape)}")
    head = im.shape_of(x)[3]
    rot = int(node.attrs.get("rotary_embedding_dim", 0)) or head
    if rot % 2 or rot > head:
        raise node.fail(f"rotary_embedding_dim {rot} must be even and at most the head size {head}")
    if pos is not None:
        cos = im.emit1("take", [cos, pos], axis=0)
        sin = im.emit1("take", [sin, pos], axis=0)
    for c in (cos, sin):
        if im.shape_of(c)[-1] != rot // 2:
            raise node.fail(f"the caches' last axis must be rotary_embedding_dim / 2 = {rot // 2}")
    cos = im.emit1("expand_dims", [cos], axis=2)
    sin = im.emit1("expand_dims", [sin], axis=2)
    x_rot = x if rot == head else _last_axis_slice(im, x, 0, rot)
    interleaved = bool(node.attrs.get("interleaved", 0))
    if interleaved:
        x1, x2 = _last_axis_slice(im, x_rot, 0, rot, 2), _last_axis_slice(im, x_rot, 1, rot, 2)
    else:
        x1, x2 = _split(im, x_rot, 2, 3)
    real = im.emit1("subtract", [im.emit1("multiply", [cos, x1]), im.emit1("multiply", [sin, x2])])
    imag = im.emit1("add", [im.emit1("multiply", [sin, x1]), im.emit1("multiply", [cos, x2])])
    if interleaved:
        rotated = im.reshape(im.emit1("stack", [real, imag], axis=4), im.shape_of(x_rot))
    else:
        rotated = im.emit1("concatenate", [real, imag], axis=3)
    if rot != head:
        rotated = im.emit1("concatenate", [rotated, _last_axis_slice(im, x, rot, head)], axis=3)
    if len(shape) == 4:
        return [im.emit1("transpose", [rotated], axes=[0, 2, 1, 3])]
    return [im.reshape(rotated, shape)]


@_op("DynamicQuantizeLinear")
def _dynamic_quantize_linear(im, node):
    """uint8 with a scale and zero point from the data's range (extended to 0), as Relay's
    frontend; ONNX rounds halves to even, as the ``Round`` converter does."""
    from xrelay.frontends.onnx_ops2 import _round_even

    x = node.inputs[0]
    if im.dtype_of(x) != "float32":
        raise node.fail(f"the input must be float32, got {im.dtype_of(x)}")

    def round_even(v: _Val) -> _Val:
        return _round_even(im, _Node("Round", node.name, [v], {}, 1, node.opset))[0]

    zero = im.scalar(0.0, x)
    lo = im.emit1("minimum", [zero, im.emit1("min", [x])])
    hi = im.emit1("maximum", [zero, im.emit1("max", [x])])
    scale = im.emit1("divide", [im.emit1("subtract", [hi, lo]), im.scalar(255.0, x)])
    zp = im.emit1("clip", [round_even(im.emit1("negative", [im.emit1("divide", [lo, scale])]))], a_min=0.0, a_max=255.0)
    q = im.emit1("add", [round_even(im.emit1("divide", [x, scale])), zp])
    y = im.emit1("cast", [im.emit1("clip", [q], a_min=0.0, a_max=255.0)], dtype="uint8")
    return [y, scale, im.emit1("cast", [zp], dtype="uint8")]


# ---- DFT: Relay's ``dft`` (the last axis) with the signal axis swapped there ----------------------


def _dft_along(im: _Importer, node: _Node, x: _Val, axis: int, length: int | None) -> _Val:
    shape = im.static_shape(x, node)
    rank = len(shape)
    inverse, onesided = bool(node.attrs.get("inverse", 0)), bool(node.attrs.get("onesided", 0))
    n = shape[axis]
    if length is None:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise node.fail(f"dft_length must be positive, got {length}")
    if shape[-1] == 1:
        re = im.reshape(x, shape[:-1])
        imag = im.const(np.zeros(shape[:-1]), im.dtype_of(x))
    elif shape[-1] == 2:
        re, imag = (im.reshape(p, shape[:-1]) for p in _split(im, x, 2, rank - 1))
    else:
        raise node.fail(f"the last axis must be 1 (real) or 2 (complex), got {shape[-1]}")
    last = rank - 2
    perm = list(range(rank - 1))
    perm[axis], perm[last] = perm[last], perm[axis]

    def to_last(v: _Val) -> _Val:
        return v if axis == last else im.emit1("transpose", [v], axes=perm)

    re, imag = to_last(re), to_last(imag)
    if inverse and onesided:  # rebuild the full spectrum: X[N - k] = conj(X[k])
        mirror = length - n
        if mirror < 0 or n < 1:
            raise node.fail(f"a one-sided inverse of {n} bins cannot give {length} samples")
        if mirror:
            def tail(v: _Val) -> _Val:
                part = _last_axis_slice(im, v, n - 2 if length % 2 == 0 else n - 1, 0, -1)
                return _last_axis_slice(im, part, 0, mirror)

            re = im.emit1("concatenate", [re, tail(re)], axis=last)
            imag = im.emit1("concatenate", [imag, im.emit1("negative", [tail(imag)])], axis=last)
        n = length
    if n != length:  # crop or zero-pad the signal to dft_length
        if n > length:
            re, imag = _last_axis_slice(im, re, 0, length), _last_axis_slice(im, imag, 0, length)
        else:
            pads = [[0, 0]] * (rank - 2) + [[0, length - n]]
            re, imag = (im.emit1("nn.pad", [v, im.scalar(0.0, v)], pad_width=pads) for v in (re, imag))
    re, imag = im.emit("dft", [re, imag], inverse=inverse)
    if inverse and onesided:  # a real signal
        return im.emit1("expand_dims", [to_last(re)], axis=rank - 1)
    if onesided:
        re, imag = _last_axis_slice(im, re, 0, length // 2 + 1), _last_axis_slice(im, imag, 0, length // 2 + 1)
    re, imag = to_last(re), to_last(imag)
    return im.emit1("stack", [re, imag], axis=rank - 1)


@_op("DFT")
def _dft(im, node):
    x = node.inputs[0]
    length_v = im.static(node.input(1), node, "dft_length")
    length = None if length_v is None else int(length_v.reshape(-1)[0])
    rank = im.rank(x)
    if node.opset < 20:
        axis = int(node.attrs.get("axis", 1))
        candidates = [axis + rank if axis < 0 else axis]
        axis_in = None
    else:
        axis_in = node.input(2)
        if axis_in is None or axis_in.known:
            axis = -2 if axis_in is None else int(axis_in.const.reshape(-1)[0])
            candidates = [axis + rank if axis < 0 else axis]
            axis_in = None
        else:
            candidates = list(range(1, rank - 1))
    for a in candidates:
        if not 1 <= a <= rank - 2:
            raise node.fail(f"axis {a} must be a signal axis (not the batch or the complex axis)")
    outs = {a: _dft_along(im, node, x, a, length) for a in candidates}
    if axis_in is None:
        return [outs[candidates[0]]]
    # a run-time axis: every signal axis, then a where on its value (when the results agree in shape)
    shapes = {im.shape_of(v) for v in outs.values()}
    if len(shapes) != 1:
        im.static(axis_in, node, "axis")  # the result's shape depends on it: refused, naming the inputs
    return [_select_by_axis(im, axis_in, rank, outs)]


# ---- Resize's axes and keep_aspect_ratio_policy: widened to every axis for the Resize converter ----

_RESIZE_BASE = _CONVERTERS["Resize"]


@_op("Resize")
def _resize_axes(im, node):
    """``axes`` (scales/sizes/roi for some axes only) and ``keep_aspect_ratio_policy`` (one
    scale for the given axes, sizes rounded from it) rewritten to the plain form of every axis."""
    axes = node.attrs.get("axes")
    policy = node.attrs.get("keep_aspect_ratio_policy", "stretch")
    if node.opset < 18 or (axes is None and policy == "stretch"):
        return _RESIZE_BASE(im, node)
    # run-time roi/scales/sizes: im.static names the graph inputs (the ONNX backend binds them)
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise node.fail(f"unknown keep_aspect_ratio_policy {policy!r}")
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    rank = len(xs)
    axes = list(range(rank)) if axes is None else [int(a) + rank if int(a) < 0 else int(a) for a in axes]
    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < rank for a in axes):
        raise node.fail(f"axes {node.attrs.get('axes')} must be distinct axes of a rank-{rank} input")
    roi = im.static(node.input(1), node, "roi")
    scales = im.static(node.input(2), node, "scales")
    sizes = im.static(node.input(3), node, "sizes")
    inputs = list(node.inputs) + [None] * (4 - len(node.inputs))
    if roi is not None and roi.size:
        if roi.size != 2 * len(axes):
            raise node.fail(f"roi needs {2 * len(axes)} values for axes {axes}, got {roi.size}")
        full = np.array([0.0] * rank + [1.0] * rank, roi.dtype)
        for k, a in enumerate(axes):
            full[a], full[rank + a] = roi[k], roi[len(axes) + k]
        inputs[1] = im.const(full)
    if sizes is not None and sizes.size:
        if sizes.size != len(axes):
            raise node.fail(f"sizes needs {len(axes)} values for axes {axes}, got {sizes.size}")
        if policy != "stretch":
            ratios = [float(s) / xs[a] for s, a in zip(sizes, axes)]
            scale = min(ratios) if policy == "not_larger" else max(ratios)
            sizes = np.array([int(scale * xs[a] + 0.5) for a in axes], sizes.dtype)
        full = np.array(xs, sizes.dtype)
        full[axes] = sizes
        inputs[3] = im.const(full)
    elif scales is not None and scales.size:
        if scales.size != len(axes):
            raise node.fail(f"scales needs {len(axes)} values for axes {axes}, got {scales.size}")
        full = np.ones(rank, scales.dtype)
        full[axes] = scales
        inputs[2] = im.const(full)
    attrs = {k: v for k, v in node.attrs.items() if k not in ("axes", "keep_aspect_ratio_policy")}
    return _RESIZE_BASE(im, _Node(node.op_type, node.name, inputs, attrs, node.num_outputs, node.opset))


# ---- TopK, OneHot: Relay's static ops (a K or depth given at run time needs Relay's dyn.* ops) ----


@_op("TopK")
def _topk(im, node):
    x = node.inputs[0]
    if node.opset < 10:
        k = int(node.attrs["k"])
    else:
        k = int(im.static(node.inputs[1], node, "K").reshape(-1)[0])
    axis = int(node.attrs.get("axis", -1))
    rank = im.rank(x)
    d = im.shape_of(x)[axis + rank if axis < 0 else axis]
    if k < 0 or (d is not None and k > d):
        raise node.fail(f"K = {k} must be in [0, {d}]")
    if k == 0:  # Relay's k < 1 means the whole axis: an empty result is a constant
        shape = list(im.static_shape(x, node))
        shape[axis] = 0
        return [im.const(np.zeros(shape), im.dtype_of(x)), im.const(np.zeros(shape, np.int64))]
    largest = bool(node.attrs.get("largest", 1))
    return im.emit("topk", [x], k=k, axis=axis, is_ascend=not largest, dtype="int64")


@_op("OneHot")
def _one_hot(im, node):
    indices, depth_in, values = node.inputs[:3]
    depth = float(im.static(depth_in, node, "depth").reshape(-1)[0])
    if depth < 1:
        raise node.fail(f"depth must be at least 1, got {depth}")
    depth = int(depth)
    if im.dtype_of(indices) != "int64":  # ONNX casts (floats truncate)
        indices = im.emit1("cast", [indices], dtype="int64")
    # negative indices count from the end of the new axis
    neg = im.emit1("less", [indices, im.scalar(0, indices)])
    indices = im.emit1("where", [neg, im.emit1("add", [indices, im.scalar(depth, indices)]), indices])
    off, on = (im.reshape(v, []) for v in _split(im, im.reshape(values, [2]), 2, 0))
    axis = int(node.attrs.get("axis", -1))
    rank = im.rank(indices) + 1
    axis = axis + rank if axis < -1 else axis
    return im.emit("one_hot", [indices, on, off], depth=depth, axis=axis, dtype=im.dtype_of(values))


@_op("RoiAlign")
def _roi_align(im, node):
    """``vision.roi_align`` over rows ``[batch_index, x1, y1, x2, y2]``, as Relay's frontend;
    ``half_pixel`` (opset 16's default) shifts the regions by half a pixel. Relay keeps regions
    at least one pixel wide in both modes (ONNX only in ``output_half_pixel``) and its ``max``
    is the largest bilinear sample (ONNX's the largest weighted corner)."""
    x, rois, batch = node.inputs[:3]
    scale = float(node.attrs.get("spatial_scale", 1.0))
    coord = node.attrs.get("coordinate_transformation_mode", "half_pixel" if node.opset >= 16 else "output_half_pixel")
    if coord not in ("half_pixel", "output_half_pixel"):
        raise node.fail(f"unknown coordinate_transformation_mode {coord!r}")
    if coord == "half_pixel":
        rois = im.emit1("subtract", [rois, im.scalar(0.5 / scale, rois)])
    index = im.emit1("expand_dims", [im.cast_like(batch, im.dtype_of(rois))], axis=1)
    rows = im.emit1("concatenate", [index, rois], axis=1)
    return im.emit(
        "vision.roi_align",
        [x, rows],
        pooled_size=[int(node.attrs.get("output_height", 1)), int(node.attrs.get("output_width", 1))],
        spatial_scale=scale,
        sample_ratio=int(node.attrs.get("sampling_ratio", 0)),
        mode=node.attrs.get("mode", "avg"),
    )


@_op("MaxRoiPool")
def _max_roi_pool(im, node):
    """``vision.roi_pool`` (rows ``[batch_index, x1, y1, x2, y2]`` as ONNX gives them), as
    Relay's frontend."""
    x, rois = node.inputs[:2]
    pooled = [int(v) for v in node.attrs["pooled_shape"]]
    return im.emit(
        "vision.roi_pool", [x, rois], pooled_size=pooled, spatial_scale=float(node.attrs.get("spatial_scale", 1.0))
    )


@_op("MaxUnpool")
def _max_unpool(im, node):
    """Zeros with ``X`` written at the flat indices ``I`` (MaxPool's Indices): a
    ``scatter_elements`` on the flattened output, as Relay's frontend scattered."""
    x, idx = node.inputs[:2]
    xs = im.static_shape(x, node)
    kernel = list(node.attrs["kernel_shape"])
    n = len(kernel)
    strides = list(node.attrs.get("strides", [1] * n))
    pads = list(node.attrs.get("pads", [0] * (2 * n)))
    shape_v = im.static(node.input(2), node, "output_shape")
    if shape_v is not None:
        out = [int(v) for v in shape_v.reshape(-1)]
    else:
        out = list(xs[:2]) + [
            (xs[2 + i] - 1) * strides[i] - pads[i] - pads[n + i] + kernel[i] for i in range(n)
        ]
    if len(out) != len(xs) or out[:2] != list(xs[:2]):
        raise node.fail(f"output_shape {out} must keep the batch and channels of {list(xs)}")
    total = int(np.prod(out))
    flat = im.const(np.zeros(total), im.dtype_of(x))
    size = int(np.prod(xs))
    scattered = im.emit1(
        "scatter_elements", [flat, im.reshape(idx, [size]), im.reshape(x, [size])], axis=0
    )
    return [im.reshape(scattered, out)]


# ---- LpPool over 3-D inputs (the LpPool converter takes 1-D/2-D): avg_pool3d of |x|^p -------------

_LP_POOL_BASE = _CONVERTERS["LpPool"]


@_op("LpPool")
def _lp_pool_3d(im, node):
    x = node.inputs[0]
    if im.rank(x) != 5:
        return _LP_POOL_BASE(im, node)
    kernel = [int(k) for k in node.attrs["kernel_shape"]]
    if len(kernel) != 3:
        raise node.fail(f"kernel_shape {kernel} must have 3 values for a 3-D input")
    if node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise node.fail(f"auto_pad {node.attrs['auto_pad']!r} is not supported for 3-D inputs")
    pads = [int(v) for v in node.attrs.get("pads", [0] * 6)]
    if node.attrs.get("auto_pad") == "VALID":
        pads = [0] * 6
    p = float(node.attrs.get("p", 2))
    powed = im.emit1("power", [im.emit1("abs", [x]), im.scalar(p, x)])
    pooled = im.emit1(
        "nn.avg_pool3d",
        [powed],
        pool_size=kernel,
        strides=[int(v) for v in node.attrs.get("strides", [1, 1, 1])],
        dilation=[int(v) for v in node.attrs.get("dilations", [1, 1, 1])],
        padding=pads,
        ceil_mode=bool(node.attrs.get("ceil_mode", 0)),
        count_include_pad=True,
    )
    total = im.emit1("multiply", [pooled, im.scalar(float(np.prod(kernel)), x)])
    return [im.emit1("power", [total, im.scalar(1.0 / p, x)])]
