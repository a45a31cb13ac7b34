"""ONNX's ``onnx/defs/rnn`` operators: ``RNN``, ``GRU``, ``LSTM``, unrolled over the (static)
sequence.

As Relay's frontend: each time step is dense/add/activation ops (``nn.dense`` of the step's input
and hidden state with the gate weights), the steps stacked into Y. The input projection of every
step is one ``nn.dense`` over (seq * batch) rows; a step's products of the hidden state with the
gates' weights are one ``nn.dense`` (a GRU's update and reset gates together and its hidden gate
apart, or all three when ``linear_before_reset``), split into the gates. ``sequence_lens`` masks
steps past each batch entry's length (the state is kept and Y is 0 there), which is also right
for the reverse direction: it starts at each entry's last valid step.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    Value,
)
from xrelay.frontends.onnx.registry import converter

# ---- recurrent layers: RNN, GRU, LSTM unrolled over the (static) sequence (the module docstring) ----


def _activation(im: Importer, node: Node, name: str, alpha: float | None, beta: float | None, x: Value) -> Value:
    def s(v: float) -> Value:
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


def _row(im: Importer, w: Value, d: int) -> Value:
    """``w[d]`` of a (num_directions, ...) weight."""
    part = im.emit1("strided_slice", [w], begin=[d], end=[d + 1], strides=[1], axes=[0])
    return im.reshape(part, im.shape_of(w)[1:])


@converter("RNN", "GRU", "LSTM")
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

    def act(k: int, v: Value) -> Value:
        return _activation(im, node, acts[k], alphas[k] if k < len(alphas) else None, betas[k] if k < len(betas) else None, v)

    def clipped(v: Value) -> Value:
        return v if clip is None else im.emit1("clip", [v], a_min=-float(clip), a_max=float(clip))

    lbr = bool(node.attrs.get("linear_before_reset", 0))
    flat_x = im.reshape(x, [seq * batch, width])
    ys, hs, cs = [], [], []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        off = per_dir * d
        w_d, r_d = _row(im, w, d), _row(im, r, d)
        if kind == "GRU" and not lbr:
            r_zr = im.emit1("strided_slice", [r_d], begin=[0], end=[2 * hidden], strides=[1], axes=[0])
            r_h = im.emit1("strided_slice", [r_d], begin=[2 * hidden], end=[3 * hidden], strides=[1], axes=[0])
        # every step's input projection at once: (seq * batch, gates * hidden)
        xw = im.emit1("nn.dense", [flat_x, w_d], units=gates * hidden)
        rb_parts = None
        if b is not None:
            b_d = _row(im, b, d)
            wb, rb = im.split(b_d, 2, 0)
            if kind == "GRU" and lbr:
                rb_parts = im.split(rb, 3, 0)  # the hidden gate's recurrent bias stays inside r *
                no_h = im.const(np.zeros(hidden), im.dtype_of(rb))
                wb = im.emit1("add", [wb, im.emit1("concatenate", [rb_parts[0], rb_parts[1], no_h], axis=0)])
            else:
                wb = im.emit1("add", [wb, rb])
            xw = im.emit1("add", [xw, wb])
        steps = im.split(im.reshape(xw, [seq, batch * gates * hidden]), seq, 0)
        steps = [im.reshape(s_, [batch, gates * hidden]) for s_ in steps]
        h = zeros if h0 is None else _row(im, h0, d)
        c = zeros if c0 is None else _row(im, c0, d)
        if peep is not None:
            p_i, p_o, p_f = im.split(_row(im, peep, d), 3, 0)
        out: list[Value | None] = [None] * seq
        for t in reversed(range(seq)) if reverse else range(seq):
            if kind == "RNN":
                pre = im.emit1("add", [steps[t], im.emit1("nn.dense", [h, r_d], units=hidden)])
                h_new, c_new = act(off, clipped(pre)), None
            elif kind == "LSTM":
                pre = im.emit1("add", [steps[t], im.emit1("nn.dense", [h, r_d], units=4 * hidden)])
                gi, go, gf, gc = im.split(pre, 4, 1)
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
                # the gates' products with the hidden state in one dense (all three gates'
                # when the reset gate scales the product, else the update and reset gates')
                xz, xr, xh = im.split(steps[t], 3, 1)
                if lbr:
                    p_z, p_r, p_h = im.split(im.emit1("nn.dense", [h, r_d], units=3 * hidden), 3, 1)
                else:
                    p_z, p_r = im.split(im.emit1("nn.dense", [h, r_zr], units=2 * hidden), 2, 1)
                z_t = act(off, clipped(im.emit1("add", [xz, p_z])))
                r_t = act(off, clipped(im.emit1("add", [xr, p_r])))
                if lbr:
                    if rb_parts is not None:
                        p_h = im.emit1("add", [p_h, rb_parts[2]])
                    hh = im.emit1("multiply", [r_t, p_h])
                else:
                    hh = im.emit1("nn.dense", [im.emit1("multiply", [r_t, h]), r_h], units=hidden)
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
