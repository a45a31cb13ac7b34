"""``relay-import``: convert an ONNX, PyTorch (``torch.export``) or TFLite model to relay-dialect text.

    relay-import model.onnx -o model.mlir --params params.npz [--shape data=1,3,224,224]
    relay-import model.onnx -o model.mlir --freeze-params            # weights inline
    relay-import model.onnx -o model.mlir --freeze-params --params params.npz
    relay-import model.pt2 -o model.mlir --params params.npz         # torch.export.save's file
    relay-import model.tflite -o model.mlir --params params.npz

The format is chosen by the file's extension: ``.pt2`` is read by ``xrelay.frontends.torch``
(torch must be installed: the ``frontends`` extra), ``.tflite`` by ``xrelay.frontends.tflite``
(the ``tflite`` package, same extra), anything else as ONNX. A ``.pt2``
program's input shapes are the ones it was exported with (``--shape``/``--dtype`` are refused
for it).

Weights are kept out of the text whenever ``--params`` is given:

* without ``--freeze-params`` (TVM's default) they are parameters of ``@main`` after the real
  inputs, and ``--params`` receives them by name; ``relay-run --params`` binds them back.
  Since the text alone would lack the weights, ``--params`` is then required (unless the
  model has none);
* with ``--freeze-params`` they are named constants: printed as
  ``relay.constant @name : tensor<...>`` with their data in ``--params``, or inline as
  ``dense<...>`` when no ``--params`` is given.

``--shape NAME=D0,D1,...`` (repeatable) overrides an input's shape; ``?`` or ``-1`` keeps a
dim dynamic. ``--dtype`` overrides every input's dtype. ``-o -`` (the default) writes to stdout.

Every error (unreadable file, unsupported operators, a bad ``--shape``) is one line on stderr
and exit code 1, never a traceback.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.printer import Printer

from xrelay.dialects.relay import print_options
from xrelay.frontends.onnx import OnnxImportError, import_onnx
from xrelay.frontends.tflite import TFLiteImportError, import_tflite
from xrelay.frontends.torch import TorchImportError
from xrelay.tools._io import write_output

PROG = "relay-import"


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    """relay-import's command line."""
    p = argparse.ArgumentParser(
        prog=PROG, description="Convert an ONNX, PyTorch (.pt2) or TFLite model to relay-dialect MLIR text."
    )
    p.add_argument("model", metavar="MODEL", help="the model: .onnx, .pt2 (torch.export.save) or .tflite")
    p.add_argument("-o", "--output", default="-", metavar="FILE.mlir", help="where to write the module ('-': stdout)")
    p.add_argument("--params", metavar="FILE.npz", help="write the weights here instead of into the text")
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=D0,D1,...",
        help="override an input's shape ('?' or -1 for a dynamic dim); repeatable",
    )
    p.add_argument("--dtype", metavar="DTYPE", help="override every input's dtype (e.g. float32)")
    p.add_argument(
        "--freeze-params",
        action="store_true",
        help="bind the weights as named constants instead of parameters of @main",
    )
    return p


def parse_shape(text: str) -> tuple[str, list[int | None]]:
    """``NAME=1,3,224,224`` -> ("NAME", [1, 3, 224, 224]); ``?``/-1 are dynamic dims."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise _UsageError(f"--shape expects NAME=D0,D1,..., got '{text}'")
    out: list[int | None] = []
    for d in dims.split(",") if dims.strip() else []:
        d = d.strip()
        if d in ("?", "-1"):
            out.append(None)
            continue
        try:
            v = int(d)
        except ValueError:
            raise _UsageError(f"--shape {text}: '{d}' is not a dimension") from None
        if v < 0:
            raise _UsageError(f"--shape {text}: negative dimension {v}")
        out.append(v)
    return name, out


def _import(path: str, shapes: dict, dtype: str | None, freeze_params: bool):
    """The import result of ``path`` by its extension (each has ``module`` and ``params``)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".pt2":
        if shapes or dtype:
            raise _UsageError("--shape and --dtype do not apply to a .pt2 program (its shapes are the exported ones)")
        try:
            import torch  # noqa: F401 - only to say clearly when it is missing

            from xrelay.frontends.torch import import_exported_program
        except ImportError:
            raise _UsageError("reading .pt2 needs torch: pip install 'xrelay[frontends]'") from None
        return import_exported_program(path, freeze_params=freeze_params)
    if ext == ".tflite":
        if dtype:
            raise _UsageError("--dtype does not apply to a .tflite model (its inputs' dtypes are in the model)")
        try:
            import tflite  # noqa: F401 - only to say clearly when it is missing
        except ImportError:
            raise _UsageError("reading .tflite needs the tflite package: pip install 'xrelay[frontends]'") from None
        return import_tflite(path, shape_dict=shapes or None, freeze_params=freeze_params)
    return import_onnx(path, shape=shapes or None, dtype=dtype, freeze_params=freeze_params)


def execute(args: argparse.Namespace) -> int:
    shapes = dict(parse_shape(s) for s in args.shape)
    result = _import(args.model, shapes, args.dtype, args.freeze_params)
    if not args.freeze_params and result.params and not args.params:
        raise _UsageError(
            f"the model has {len(result.params)} weight(s) that become parameters of @main; "
            "give --params FILE.npz to save them, or --freeze-params to bind them as constants"
        )
    external: dict[str, np.ndarray] | None = None
    stream = io.StringIO()
    if args.freeze_params and args.params:
        external = {}
        with print_options(external=external):
            Printer(stream=stream).print_op(result.module)
    else:
        Printer(stream=stream).print_op(result.module)
    stream.write("\n")
    # The weights first, since the text refers to them; each file is written atomically, so a
    # failure leaves existing files as they were.
    if args.params:
        weights = external if external is not None else result.params
        write_output(args.params, weights, _UsageError)
    if args.output == "-":
        sys.stdout.write(stream.getvalue())
    else:
        write_output(args.output, stream.getvalue(), _UsageError)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``relay-import``; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    try:
        return execute(args)
    except (OnnxImportError, TorchImportError, TFLiteImportError, _UsageError) as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except RecursionError:  # a backstop: load_model refuses hostile nesting before this
        sys.stderr.write(f"{PROG}: error: the model is nested too deeply to process\n")
        return 1
    except Exception as e:  # a bug in the importer: still one message, unless asked for the traceback
        if os.environ.get("XRELAY_TRACEBACK"):
            raise
        sys.stderr.write(
            f"{PROG}: error: internal error: {type(e).__name__}: {e} (set XRELAY_TRACEBACK=1 for details)\n"
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
